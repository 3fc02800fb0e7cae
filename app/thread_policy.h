// How the OpenMP threads of the engine wait between parallel loops (issue 20: threads that never hurt).
//
// The solver opens thousands of short parallel loops per step (a few per linear iteration). By
// default libgomp's idle threads spin for about 300,000 iterations at each barrier before they
// sleep. On a free machine that makes a fork cheap; on a machine where another process keeps a
// core busy, the spinning threads and the process take turns on that core, every barrier waits
// for a descheduled thread, and two threads ran the pyramid 40x slower than one (`sandbox run
// pyramid --seconds 0.25 --threads 2` with one busy process beside it: 101 s against 2.4 s).
//
// libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when it is loaded, before main runs, so
// setting them in main is too late. The executable therefore re-executes itself once with
// OMP_WAIT_POLICY=PASSIVE (idle threads sleep at once) when neither variable is set; a value the
// user set is kept. Measured on the 2-core machine with one busy process beside the run (same
// command, --threads 2): libgomp's default 101 s, a short spin (GOMP_SPINCOUNT=1000: each spin is
// a pause instruction, and a step has thousands of barriers) 36 s, passive 1.7 s, against 1.8 s
// with one thread. Results do not depend on the policy (every loop's split and order is fixed).
#pragma once

namespace cs {

// Call first thing in main: when OMP_WAIT_POLICY and GOMP_SPINCOUNT are both unset, sets
// OMP_WAIT_POLICY=PASSIVE and re-executes /proc/self/exe with the same arguments. Returns
// (without re-executing) when a variable is set, or when the exec fails (then nothing changed
// but the environment of this process).
void applyThreadWaitPolicy(char** argv);

// What the threads do at a barrier in this process, for the runner's JSON ("thread_wait"):
// "passive", "active", "spin N then sleep" or "libgomp default".
const char* threadWaitPolicy();

}  // namespace cs
