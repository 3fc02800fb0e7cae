// The headless runner (runner.h): load, override, step, measure, report.
#include "app/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <unistd.h>

#if defined(_OPENMP)
#include <omp.h>
#endif
#include <memory>

#include "app/run_metrics.h"
#include "app/thread_policy.h"
#include "engine/exec/host_executor.h"
#include "engine/exec/pipeline_world.h"
#include "engine/grasp/grasp_player.h"
#include "engine/scene/scene_grasp.h"
#include "engine/scene/scene_loader.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/solver/pgs_step.h"
#include "engine/solver/soft_step.h"
#include "gpu/gpu_backend.h"

namespace cs {

namespace {

// At most this many failed-step warnings are printed one by one; the rest are counted.
constexpr int kMaxFailureLines = 5;

class ProgressBar {
public:
    explicit ProgressBar(bool enabled) : enabled_(enabled && isatty(fileno(stderr))) {}
    void update(int done, int total) {
        if (!enabled_ || total <= 0) return;
        int percent = int(100.0 * done / total);
        if (percent == last_ && done != total) return;
        last_ = percent;
        int width = 40, fill = width * done / total;
        std::fprintf(stderr, "\r[%.*s%*s] %3d%% %d/%d", fill, "########################################",
                     width - fill, "", percent, done, total);
        if (done == total) std::fprintf(stderr, "\r%*s\r", width + 30, "");
        std::fflush(stderr);
    }

private:
    bool enabled_;
    int last_ = -1;
};

double processCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * double(t.tv_sec) + 1e-6 * double(t.tv_nsec);
}

// The dynamic body that starts highest (its centre), or -1: the top box of a stack or pyramid.
int highestBody(const World& world) {
    const Model& m = world.model();
    int top = -1;
    for (int b = 0; b < m.bodyCount(); ++b)
        if (!m.isStatic(b) && (top < 0 || m.initialPos[b].z > m.initialPos[top].z)) top = b;
    return top;
}

}  // namespace

std::string chooseBackend(const std::string& requested) {
    if (requested == "host") return "host";   // the step pipeline on the CPU: no device needed
    if (requested != "cuda") return "cpu";
    std::string why;
    if (!gpuAvailable(&why)) {
        std::fprintf(stderr, "sandbox: --backend cuda: no usable GPU (%s); running on cpu\n", why.c_str());
        return "cpu";
    }
    return "cuda";
}

int runHeadless(const RunOptions& o) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    SceneLoadOptions load;
    load.seedOffset = o.seed;
    if (!loadScene(o.scene, model, settings, info, &error, load)) {
        std::fprintf(stderr, "sandbox: %s\n", error.c_str());   // one line: loadScene escapes it
        return kExitUsage;
    }
    applyRunOptions(o, settings);
    int threads = 1;
#if defined(_OPENMP)
    if (o.threads) omp_set_num_threads(*o.threads);
    threads = omp_get_max_threads();
#endif

    RunSummary s;
    s.backend = chooseBackend(o.backend);
    s.scene = info.name;
    s.method = solveMethodName(settings.solver.method);
    if (settings.solver.method == SolveMethod::Soft || settings.solver.method == SolveMethod::Pgs) {
        std::string why;
        if (settings.solver.method == SolveMethod::Soft ? !softStepSupports(model, settings, &why)
                                                        : !pgsStepSupports(model, settings, &why)) {
            std::fprintf(stderr, "sandbox: %s\n", why.c_str());
            return kExitUsage;
        }
    }
    s.contact = contactModelName(settings.solver.contactModel);
    s.solver = solverTypeName(settings.solver.linearSolver);
    if (settings.solver.contactModel == ContactModelType::CCP)   // [CCP]: its own solver, Newton with the linear one
        s.solver = settings.solver.ccp.solver == CcpSolverType::Newton ? "newton-" + s.solver
                                                                       : std::string(ccpSolverName(settings.solver.ccp.solver));
    s.ncp = ncpFunctionName(settings.solver.ncp);
    s.precision = kPrecisionName;
    s.dt = double(settings.dt);
    s.substeps = settings.substeps;
    s.bodies = model.bodyCount();
    s.femTets = model.femTetCount();
    s.femNodes = model.femNodeCount();
    s.seed = o.seed;
    s.threads = threads;
    s.threadWait = threadWaitPolicy();
    double seconds = o.seconds ? *o.seconds : double(info.duration);
    double steps = o.steps ? double(*o.steps) : std::max(1.0, std::ceil(seconds / s.dt - 1e-9));
    if (steps > 1e8) {
        std::fprintf(stderr, "sandbox: %.3g steps is too many (at most 1e8)\n", steps);
        return kExitUsage;
    }
    s.steps = int(steps);

    World world(std::move(model), settings);
    const int top = highestBody(world);
    std::unique_ptr<GraspPlayer> grasp;   // --script: the grasp script drives the wrist and fingers
    if (o.script) {
        if (!info.grasp.present() || !(info.grasp.script.size() || !o.scriptFile.empty())) {
            std::fprintf(stderr, "sandbox: --script: scene \"%s\" has no grasp script\n", info.name.c_str());
            return kExitUsage;
        }
        if (!o.scriptFile.empty() && !loadGraspScript(o.scriptFile, info.grasp, &error)) {
            std::fprintf(stderr, "sandbox: %s\n", error.c_str());
            return kExitUsage;
        }
        grasp = std::make_unique<GraspPlayer>(world.model(), info.grasp, Real(o.gripForce.value_or(-1)));
    }
    std::unique_ptr<GpuWorld> gpu;   // --backend cuda: the device steps the world (gpu/gpu_backend.h)
    std::string why;
    if (s.backend == "cuda" && !gpuSupports(world, &why)) {
        std::fprintf(stderr, "sandbox: --backend cuda: %s; running on cpu\n", why.c_str());
        s.backend = "cpu";
    }
    if (s.backend == "cuda") gpu = std::make_unique<GpuWorld>(world);
    // --backend host: the step pipeline (engine/exec) run by the host executor, as the tests run it.
    std::unique_ptr<PipelineWorld<HostExecutor>> pipe;
    if (s.backend == "host" && !pipelineSupports(world, &why)) {
        std::fprintf(stderr, "sandbox: --backend host: %s; running on cpu\n", why.c_str());
        s.backend = "cpu";
    }
    if (s.backend == "host") pipe = std::make_unique<PipelineWorld<HostExecutor>>(world);
    int dragBody = -1;   // --drag: the body, grabbed at dragPoint when the run reaches o.dragStart
    Vec3 dragFrom{0, 0, 0};
    const Vec3 dragPoint{Real(o.dragPoint[0]), Real(o.dragPoint[1]), Real(o.dragPoint[2])};
    if (!o.dragBody.empty()) {
        const std::vector<std::string>& names = world.model().bodyName;
        const auto it = std::find(names.begin(), names.end(), o.dragBody);
        dragBody = it == names.end() ? -1 : int(it - names.begin());
        if (dragBody < 0 || world.model().isStatic(dragBody)) {
            std::fprintf(stderr, "sandbox: --drag: scene \"%s\" has no dynamic body \"%s\"\n", info.name.c_str(),
                         escapeControl(o.dragBody).c_str());
            return kExitUsage;
        }
        if (gpu || pipe) {
            std::fprintf(stderr, "sandbox: --drag: the CPU backend only\n");
            return kExitUsage;
        }
    }
    ProgressBar progress(o.progress);
    bool overlapEveryStep = !o.trace.empty();
    int failureLines = 0;
    for (int i = 0; i < s.steps; ++i) {
        const double c0 = processCpuMs();
        auto t0 = std::chrono::steady_clock::now();
        if (grasp) grasp->beforeStep(world);
        const double now = double(world.state().time);
        const bool released = o.dragRelease >= 0 && now >= o.dragRelease - 1e-9;
        if (dragBody >= 0 && now >= o.dragStart - 1e-9 && !released) {
            if (world.drag().body != dragBody) dragFrom = world.state().pos[dragBody] + rotate(world.state().rot[dragBody], dragPoint);
            const Real f = Real(std::min((now - o.dragStart) / o.dragOver, 1.0));
            world.setDrag(dragBody, dragPoint,
                          dragFrom + f * Vec3{Real(o.dragMove[0]), Real(o.dragMove[1]), Real(o.dragMove[2])});
        } else if (dragBody >= 0 && released && world.drag().body == dragBody) {
            world.clearDrag();
        }
        if (gpu) gpu->step();
        else if (pipe) pipe->step();
        else world.step();
        if (grasp) grasp->afterStep(world);
        auto t1 = std::chrono::steady_clock::now();
        const double c1 = processCpuMs();
        StepRecord r;
        r.step = i + 1;
        r.wallMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
        r.cpuMs = c1 - c0;
        r.time = double(world.state().time);
        r.contacts = gpu    ? gpu->contactCount()
                     : pipe ? pipe->contactCount() + pipe->femContactCount()   // as World::contacts(): FEM's too
                            : int(world.contacts().size());
        const SolveStats& st = gpu ? gpu->solveStats() : pipe ? pipe->solveStats() : world.solveStats();
        r.newtonIterations = st.newtonIterations;
        r.rows = st.rows;
        r.cullResolves = st.cullResolves;
        r.linearIterations = st.linearIterations;
        r.residual = double(st.residualFinal);
        // The pipeline's state is the world's after its step: the same exact measure as the CPU's.
        r.maxPenetration = double(gpu ? gpu->maxPenetration() : world.maxPenetration());
        r.kineticEnergy = double(world.kineticEnergy());
        r.failed = gpu ? gpu->lastStepFailed() : pipe ? pipe->lastStepFailed() : world.lastStepFailed();
        r.wakeResolves = st.wakeResolves;
        for (int b = 0; b < world.model().bodyCount(); ++b)
            r.awakeBodies += !world.model().isStatic(b) && !world.isAsleep(b) ? 1 : 0;
        if (dragBody >= 0 && world.drag().body == dragBody)   // the grabbed point's distance from the target
            r.dragError = double(length(world.state().pos[dragBody] + rotate(world.state().rot[dragBody], dragPoint) -
                                        world.drag().target));
        bool last = i + 1 == s.steps;
        if (overlapEveryStep || last || (o.overlapStride > 0 && r.step % o.overlapStride == 0))
            r.overlapVolume = totalOverlapVolume(world);
        const StepProfile& p = gpu ? gpu->profile() : pipe ? pipe->profile() : world.profile();
        s.profileSum.broadPhase += p.broadPhase;
        s.profileSum.narrowPhase += p.narrowPhase;
        s.profileSum.contactModel += p.contactModel;
        s.profileSum.solve += p.solve;
        s.profileSum.integrate += p.integrate;
        s.profileSum.total += p.total;
        if (r.failed && !gpu && !pipe && world.stopped()) {   // said once, whatever the warnings' count
            s.failedSteps++;
            s.stoppedAtStep = r.step;
            std::fprintf(stderr, "%ssandbox: error: step %d: %s\n", isatty(fileno(stderr)) && o.progress ? "\n" : "",
                         r.step, world.lastError().c_str());
        } else if (r.failed) {
            s.failedSteps++;
            if (failureLines++ < kMaxFailureLines)
                std::fprintf(stderr, "%ssandbox: warning: step %d failed and was rolled back: %s\n",
                             isatty(fileno(stderr)) && o.progress ? "\n" : "", r.step, world.lastError().c_str());
        }
        if (!stateIsFinite(world)) s.nan = true;
        s.records.push_back(r);
        progress.update(i + 1, s.steps);
    }
    if (top >= 0) s.topDrift = double(length(world.state().pos[top] - world.model().initialPos[top]));
    s.sleepingFinal = world.sleepingBodies();
    s.executor = gpu ? (gpu->onGpu() ? "cuda" : "cpu") : pipe ? "host" : "cpu";   // what ran the last step
    if (gpu) {   // device buffers that grew (each time the step ran again; nothing was dropped)
        const GpuBufferStats& b = gpu->bufferStats();
        std::fprintf(stderr, "sandbox: cuda %s: %s; buffers grew %lld times (capacity %d pairs, %d contacts, %d rows)\n",
                     gpu->deviceName(), gpu->onGpu() ? "stepped on the GPU" : gpu->fallbackReason().c_str(),
                     b.growthEvents, b.pairCapacity, b.contactCapacity, b.rowCapacity);
    }
    if (failureLines > kMaxFailureLines)
        std::fprintf(stderr, "sandbox: warning: %d failed steps in all\n", s.failedSteps);

    int status = s.nan && !stateIsFinite(world) ? 1 : 0;
    std::string err;
    if (!o.trace.empty() && !writeTraceCsv(s, o.trace, &err)) {
        std::fprintf(stderr, "sandbox: %s\n", escapeControl(err).c_str());
        status = 3;
    }
    if (!o.stateOut.empty() && !writeStateJson(world, o.stateOut, &err)) {
        std::fprintf(stderr, "sandbox: %s\n", escapeControl(err).c_str());
        status = 3;
    }
    if (grasp) {
        s.graspJson = grasp->json();
        s.graspText = grasp->text();
    }
    if (o.json) {
        std::printf("%s\n", summaryJson(s).c_str());
    } else {
        writeSummaryText(s, stdout);
        std::fputs(s.graspText.c_str(), stdout);
        if (status == 1) std::printf("  the final state is not finite\n");
    }
    std::fflush(stdout);
    return status;
}

int runCommand(int argc, char** argv, int first) {
    RunOptions o;
    std::string error;
    if (!parseRunOptions(argc, argv, first, o, &error)) {
        std::fprintf(stderr, "sandbox run: %s\n", escapeControl(error).c_str());
        return kExitUsage;
    }
    return runHeadless(o);
}

int listCommand() {
    std::vector<std::string> names = listScenes();
    if (names.empty()) {
        std::fprintf(stderr, "sandbox: the scene library %s is empty\n", sceneLibraryDir().c_str());
        return 1;
    }
    size_t width = 0;
    for (const std::string& n : names) width = std::max(width, n.size());
    for (const std::string& n : names) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string error;
        if (loadScene(n, model, settings, info, &error))
            std::printf("%-*s  %s (%d bodies)\n", int(width), n.c_str(), info.description.c_str(), model.bodyCount());
        else
            std::printf("%-*s  (does not load: %s)\n", int(width), n.c_str(), error.c_str());
    }
    return 0;
}

}  // namespace cs
