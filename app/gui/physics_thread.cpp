// Physics on its own thread (issue 20): the copies step on a worker thread while the UI thread
// keeps drawing, so a scene that steps slower than real time (a 2,870-box pyramid takes
// seconds per step) runs in slow motion in a window that still answers; see sandbox_app.h.
//
// Ownership. copy.world belongs to the UI thread: every panel, the renderer and applyEvent read
// and change it, as before. A job steps copy.stepping, which the UI thread filled from
// copy.world before the launch (the whole world when the bodies changed, else the state, the
// settings and the drag), and never reads while the job runs; stepDone_ (release/acquire)
// hands it back. Adopting swaps the two worlds, keeps the UI's settings, and applies again the
// events the UI applied to the old world meanwhile (drag, release, launch, settings, reset), so
// nothing the user did is lost. Both worlds share the step's scratch buffers (World copies
// share them), which is safe because only one of them steps at a time: synchronous stepping
// (fixed steps, recording, replay, PLUS) first waits for the job (adoptSteps).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <thread>

#if defined(_OPENMP)
#include <omp.h>
#endif
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "app/gui/sandbox_app.h"

namespace cs {

namespace {

// A job steps until it has done what it was asked or, after its first step, until the UI thread
// asks for it (a frame is drawn and waits for the steps: SandboxApp::paceFrame) or this much wall
// time has passed, so the UI sees progress at least this often when steps are short.
constexpr std::chrono::milliseconds kJobBudget(40);
// A frame waits for the running job only while the last steps took less than this: the wait is
// for the step in progress to end, and steps of seconds (the 20,000-box pile) are not waited for.
constexpr double kHandoverStepMs = 25;

// The physics thread runs this many nice levels below the UI thread; its OpenMP workers, made by
// it, inherit the level. Where the steps keep every core busy (the 20,000-box pile on 2 cores)
// the UI thread and the rasterizer's threads (llvmpipe's) then take more of a core when a frame
// needs one: at equal levels the pile's frames reached 40-45 ms at a load average of 3.5.
// Linux's CFS gives a thread of nice n a weight of about 1024 / 1.25^n: 3 levels is a half.
// 5 levels (a third) cut the pile's median frame by 1 ms more, but the default scene's physics
// then fell from 0.4 to 0.06-0.3x real time at that load (its UI frame takes a core of its own).
constexpr int kPhysicsNice = 3;

// The physics thread's OpenMP team (the solver's and the narrow phase's parallel loops). The UI
// thread draws on a core of its own, and with Mesa's llvmpipe (no GPU) the rasterizer has the
// cores after the UI's and the physics's (gui_main.cpp): a team of more threads than the cores
// left to it waits at every loop's barrier for a thread that is off its core. On 2 cores the
// default team of 2 made the default pyramid's awake steps (the drag wakes it) cost 2 to 4 times
// their one-thread time: 15.6 against 7.3 CPU ms headless with another job on the machine, and
// 20-140 ms of wall time a step in the app (docs/speed.md "The drag (session 28)"). So the team
// is one thread with llvmpipe, the cores but the UI's with a GPU; OMP_NUM_THREADS, where set, wins.
int physicsTeam(bool softwareRasterizer) {
    const char* set = std::getenv("OMP_NUM_THREADS");
    if (set && *set) return 0;   // the user's
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    return softwareRasterizer ? 1 : std::max(1, cores - 1);
}

void lowerThisThreadPriority() {
    const pid_t tid = pid_t(syscall(SYS_gettid));
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, id_t(tid));
    if (errno == 0) setpriority(PRIO_PROCESS, id_t(tid), std::min(19, now + kPhysicsNice));
}

}  // namespace

bool SandboxApp::canStepInBackground() const {
    if (options_.fixedStep || video_.isOpen() || replaying_) return false;
    // A PLUS copy records its impacts on the physics thread too (World::stepContext), and the
    // replay takes them when the job is adopted; but pausing at an impact needs the step that
    // resolved it, so with the replay window pausing on impacts the copies step here.
    if (view.impact && impact.pauseOnImpact)
        for (const auto& c : copies_)
            if (c->world.settings.solver.contactModel == ContactModelType::PLUS) return false;
    return true;
}

bool SandboxApp::stepInBackground(int steps) {
    if (stepRunning_) {
        if (!stepDone_.load(std::memory_order_acquire)) return false;
        ProfileScope scope(profile, FramePart::Adopt);
        if (profile) profile->markAdopted();
        adoptSteps();
    }
    if (steps <= 0 || copies_.empty()) return true;
    ProfileScope scope(profile, FramePart::Launch);
    std::vector<SimCopy*> list;
    for (auto& c : copies_) {
        const World& w = c->world;
        if (!c->stepping || c->stepping->model().bodyCount() != w.model().bodyCount()) {
            c->stepping = std::make_unique<World>(w);
        } else {
            c->stepping->state() = w.state();
            c->stepping->settings = w.settings;
            c->stepping->dragSettings = w.dragSettings;
        }
        const DragState& d = w.drag();
        if (d.body >= 0) c->stepping->setDrag(d.body, d.localPoint, d.target);
        else if (d.femTri >= 0) c->stepping->setFemDrag(d.femTri, d.femWeights, d.target);
        else c->stepping->clearDrag();
        c->stepError.clear();
        c->jobFailedSteps = 0;
        list.push_back(c.get());
    }
    jobStepMs_.assign(list.size(), 0);
    jobAsked_ = steps;
    handover_.store(false, std::memory_order_relaxed);
    stepDone_.store(false, std::memory_order_relaxed);
    stepRunning_ = true;
    if (!stepThread_.joinable()) stepThread_ = std::thread([this] { physicsLoop(); });
    // The user's grasp input since the last job, planned from where this job starts (grasp_driver.h).
    grasp_.driver.commit(copies_[0]->world.state().time);
    {
        std::lock_guard<std::mutex> lock(jobMutex_);
        job_ = Job{std::move(list), steps, grasp_.driver};
        jobPending_ = true;
    }
    jobWake_.notify_one();
    return true;
}

void SandboxApp::physicsLoop() {
    pthread_setname_np(pthread_self(), "physics");   // for top -H and scripts/gui_realtime.py
    lowerThisThreadPriority();
#if defined(_OPENMP)
    if (const int team = physicsTeam(softwareRasterizer_); team > 0) omp_set_num_threads(team);   // this thread's
#endif
    using Clock = std::chrono::steady_clock;
    for (;;) {
        Job job;
        {
            std::unique_lock<std::mutex> lock(jobMutex_);
            jobWake_.wait(lock, [this] { return jobPending_ || quitPhysics_; });
            if (quitPhysics_) return;
            job = std::move(job_);
        }
        const auto start = Clock::now();
        int done = 0;
        while (done < job.steps) {
            for (size_t i = 0; i < job.copies.size(); ++i) {
                const auto t0 = Clock::now();
                World& w = *job.copies[i]->stepping;
                job.driver.apply(w);   // the grasp's command at this world's time, as the job began (grasp_ui.h)
                w.step();
                jobStepMs_[i] = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                if (w.lastStepFailed()) {
                    job.copies[i]->stepError = w.lastError();
                    job.copies[i]->jobFailedSteps++;
                }
            }
            ++done;
            if (handover_.load(std::memory_order_acquire) || Clock::now() - start > kJobBudget) break;
        }
        const auto end = Clock::now();
        jobSteps_ = done;
        jobMs_ = std::chrono::duration<double, std::milli>(end - start).count();
        jobEnd_ = end;
        physicsBusyMs_.store(physicsBusyMs_.load(std::memory_order_relaxed) + jobMs_, std::memory_order_relaxed);
        for (SimCopy* c : job.copies) c->jobPenetration = c->stepping->maxPenetration();
        {
            std::lock_guard<std::mutex> lock(jobMutex_);
            jobPending_ = false;
            stepDone_.store(true, std::memory_order_release);
        }
        jobDone_.notify_all();
    }
}

void SandboxApp::waitForJob() {
    std::unique_lock<std::mutex> lock(jobMutex_);
    jobDone_.wait(lock, [this] { return stepDone_.load(std::memory_order_acquire); });
}

void SandboxApp::stopPhysicsThread() {
    if (!stepThread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(jobMutex_);
        quitPhysics_ = true;
    }
    jobWake_.notify_one();
    stepThread_.join();
}

SandboxApp::~SandboxApp() {
    finishStepJob();
    stopPhysicsThread();
}

void SandboxApp::adoptSteps() {
    if (!stepRunning_) return;
    waitForJob();
    stepRunning_ = false;
    for (size_t i = 0; i < copies_.size(); ++i) {
        SimCopy& c = *copies_[i];
        std::swap(c.world, *c.stepping);
        c.world.settings = c.stepping->settings;          // the UI's, changed or not meanwhile
        c.world.dragSettings = c.stepping->dragSettings;
        c.stepMs = jobStepMs_[i];
        c.failedSteps += c.jobFailedSteps;
        // The job's last impact (the copies stepped in lockstep, as stepCopies does).
        if (c.world.settings.solver.contactModel == ContactModelType::PLUS) {
            impact.capture(c.world.stepContext().plus, int(i), tick_ + jobSteps_);
            impact.justCaptured = false;   // no pause: that needs the step itself (canStepInBackground)
        }
        if (!c.stepError.empty()) {
            status = c.label + ": " + c.stepError;
            c.lastFailure = c.stepError;
        }
    }
    reapplying_ = true;
    for (const SessionEvent& e : pendingEvents_) applyEvent(e, false);
    reapplying_ = false;
    pendingEvents_.clear();
    tick_ += jobSteps_;
    // Steps the job was asked for and left (the frame took it first) are asked for again: behind
    // real time for a frame is made up in the next; the accumulator's cap (advance) keeps the lag
    // under kMaxLag, past which the scene runs in slow motion.
    accumulator_ += (jobAsked_ - jobSteps_) * copies_[0]->world.settings.dt;
    session_.steps = tick_;
    stepWallMs_ = jobMs_ / std::max(1, jobSteps_);
    updateStatistics();
    noteSimTime(jobEnd_);
}

void SandboxApp::finishStepJob() {
    if (!stepRunning_) return;
    waitForJob();
    stepRunning_ = false;
    pendingEvents_.clear();
    for (auto& c : copies_) c->jobPenetration = -1;   // the job's worlds are dropped
}

void SandboxApp::paceFrame(std::chrono::steady_clock::time_point frameStart) {
    using Clock = std::chrono::steady_clock;
    if (options_.fixedStep || video_.isOpen() || replaying_) return;   // as fast as frames go
    const auto ms = [](double m) {
        return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(m));
    };
    const auto paceStart = Clock::now();
    if (options_.maxFps > 0) std::this_thread::sleep_until(frameStart + ms(1e3 / options_.maxFps));
    // The frame is drawn: the running job ends after its step in progress, and the next frame
    // takes it and starts the next at once (a job that ran on past the frame was taken by the
    // frame after, and the physics thread waited for that one meanwhile).
    if (stepRunning_ && stepWallMs_ < kHandoverStepMs) {
        handover_.store(true, std::memory_order_release);
        std::unique_lock<std::mutex> lock(jobMutex_);
        jobDone_.wait_for(lock, ms(2 * stepWallMs_ + 5), [this] { return stepDone_.load(std::memory_order_acquire); });
    }
    lastPaceMs_ = std::chrono::duration<double, std::milli>(Clock::now() - paceStart).count();
}

void SandboxApp::noteSimTime(std::chrono::steady_clock::time_point when) {
    if (copies_.empty()) return;
    if (paused) realTime_.clear();   // the wall time of a pause is not the physics thread's
    else realTime_.add(when, double(copies_[0]->world.state().time));
}

double SandboxApp::realTimeFactor() const { return realTime_.factor(std::chrono::steady_clock::now()); }

}  // namespace cs
