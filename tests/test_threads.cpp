// Threads that never hurt (issue 20): a world steps to the same bits with 1, 2 and 3 threads,
// and the sandbox's idle OpenMP threads sleep instead of spinning (app/thread_policy.h), so two
// threads beside a busy process cost about the CPU time of one.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "engine/scene/scene_loader.h"
#include "engine/world.h"

using namespace cs;

namespace {

World loadLibraryWorld(const std::string& name) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    REQUIRE_MESSAGE(loadScene(name, model, settings, info, &error), error);
    return World(std::move(model), settings);
}

bool sameBits(Real a, Real b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// CPU seconds (user + system) of the finished children of this process so far.
double childrenCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Runs a shell command and returns its stdout and, in *cpu, the CPU seconds it took.
std::string runTimed(const std::string& cmd, double* cpu) {
    const double before = childrenCpuSeconds();
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    *cpu = childrenCpuSeconds() - before;
    return out;
}

}  // namespace

// The pyramid has 2,964 rows and over 256 shape pairs: the narrow phase and every solver loop
// run in parallel above one thread (narrow_phase.cpp, linear_solvers.cpp thresholds).
TEST_CASE("threads: the pyramid steps to the same bits with 1, 2 and 3 threads") {
#if defined(_OPENMP)
    const int saved = omp_get_max_threads();
    std::vector<World> worlds;
    worlds.reserve(3);
    for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        worlds.push_back(loadLibraryWorld("pyramid"));
        for (int i = 0; i < 40; ++i) worlds.back().step();
    }
    omp_set_num_threads(saved);
    const World& one = worlds[0];
    REQUIRE(one.contacts().size() > 900);
    for (size_t w = 1; w < worlds.size(); ++w) {
        CAPTURE(w + 1);
        const State& s = worlds[w].state();
        bool same = worlds[w].contacts().size() == one.contacts().size();
        for (int b = 0; b < one.model().bodyCount(); ++b) {
            const Vec3 p = s.pos[b], q = one.state().pos[b];
            const Quat r = s.rot[b], t = one.state().rot[b];
            same = same && sameBits(p.x, q.x) && sameBits(p.y, q.y) && sameBits(p.z, q.z) && sameBits(r.w, t.w) &&
                   sameBits(r.x, t.x) && sameBits(r.y, t.y) && sameBits(r.z, t.z);
        }
        CHECK(same);
    }
#endif
}

TEST_CASE("threads: the sandbox's idle threads sleep; a user's OMP_WAIT_POLICY is kept") {
    const std::string exe = std::string("'") + CS_SANDBOX_EXE + "'";
    double cpu = 0;
    std::string out = runTimed("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT " + exe + " run box_on_plane --steps 1 --json", &cpu);
    CHECK(out.find("\"thread_wait\":\"passive\"") != std::string::npos);
    out = runTimed("env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active " + exe + " run box_on_plane --steps 1 --json", &cpu);
    CHECK(out.find("\"thread_wait\":\"active\"") != std::string::npos);
}

// With libgomp's default wait (idle threads spin ~300,000 times at each of the step's thousands
// of barriers), two threads beside a busy process took 18.8 s of CPU where one took 0.28 s
// (pyramid, 30 steps). Sleeping threads cost the futex calls only.
TEST_CASE("threads: two threads beside a busy process cost about the CPU time of one") {
    const pid_t busy = fork();
    REQUIRE(busy >= 0);
    if (busy == 0) {
        for (volatile unsigned long i = 0;; i = i + 1) {}
    }
    const std::string cmd = "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT '" + std::string(CS_SANDBOX_EXE) +
                            "' run pyramid --steps 12 --json --overlap-every 0 --threads ";
    double one = 0, two = 0;
    runTimed(cmd + "1", &one);
    runTimed(cmd + "2", &two);
    kill(busy, SIGKILL);
    waitpid(busy, nullptr, 0);
    MESSAGE("CPU seconds beside a busy process: 1 thread " << one << ", 2 threads " << two);
    CHECK(two < 2 * one + 0.5);
}
