// `sandbox bench-gpu`: ms per step by stage against body count, CPU and GPU in the same run.
//
//   sandbox bench-gpu [--bodies 100,1000,10000,50000] [--steps 10] [--warmup 3] [--newton N]
//                     [--iters M] [--cpu-max 10000] [--csv FILE] [--deterministic]
//
// Two scenes of boxes (0.5 m cubes on a ground box, standard model, the library's default
// solver settings): "pyramid" (the pyramid generator, base b with b (b + 1) / 2 >= bodies) and
// "pile" (a grid of boxes 2 cm apart that falls onto the ground and onto itself). Each row is
// the mean over `steps` steps after `warmup` steps of World::step (cpu), of the device pipeline
// on the host executor (pipeline-host: engine/exec/, the same text the GPU runs) or of
// GpuWorld::step (cuda), split by stage as StepProfile reports it (filled by name); the precision is this build's (configure
// with -DCS_REAL_FLOAT=ON for the float rows). With no GPU the cuda rows are skipped with one
// line saying why, and the CPU rows are still measured. Host code only (compiled by nvcc
// because gpu/ holds the backend).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/exec/host_executor.h"
#include "engine/exec/pipeline_world.h"
#include "engine/scene/scene_loader.h"
#include "gpu/gpu_backend.h"

namespace cs {
namespace {

std::string benchSceneJson(const std::string& kind, int bodies) {
    std::ostringstream js;
    js << R"({"format": 1, "name": "bench_)" << kind << R"(", "bodies": [{"generator": "ground", "half_extents": [200, 200, 0.5]}, )";
    if (kind == "pyramid") {
        int base = 1;
        while (base * (base + 1) / 2 < bodies) ++base;
        js << R"({"generator": "pyramid", "name": "box", "base": )" << base
           << R"(, "half_extents": [0.25, 0.25, 0.25], "density": 1000, "material": {"friction": 0.6}})";
    } else {
        const int side = std::max(1, int(std::cbrt(double(bodies))));
        const int layers = (bodies + side * side - 1) / (side * side);
        js << R"({"generator": "grid", "counts": [)" << side << ", " << side << ", " << layers
           << R"(], "spacing": [0.55, 0.55, 0.52], "body": {"name": "box", "shape": {"type": "box", "half_extents": [0.25, 0.25, 0.25]}, )"
           << R"("position": [)" << -0.275 * (side - 1) << ", " << -0.275 * (side - 1)
           << R"(, 0.27], "density": 1000, "material": {"friction": 0.6}}})";
    }
    js << "]}";
    return js.str();
}

struct BenchRow {
    std::string scene, backend;
    int bodies = 0;
    double contacts = 0, newton = 0, linear = 0;
    long long growthEvents = 0;   // device buffers grown (the step ran again)
    StepProfile ms;   // milliseconds per step (not seconds)
};

void addProfile(StepProfile& sum, const StepProfile& p, double scale) {
    sum.broadPhase += p.broadPhase * scale;
    sum.narrowPhase += p.narrowPhase * scale;
    sum.contactModel += p.contactModel * scale;
    sum.solve += p.solve * scale;
    sum.integrate += p.integrate * scale;
    sum.total += p.total * scale;
}

// Steps a fresh world of the scene on the backend; false (with a line) when it cannot.
enum class Backend { Cpu, PipelineHost, Cuda };
const char* backendName(Backend b) { return b == Backend::Cpu ? "cpu" : b == Backend::PipelineHost ? "pipeline-host" : "cuda"; }

bool measure(const std::string& kind, int bodies, Backend backend, int steps, int warmup, bool deterministic, int newton,
             int iters, BenchRow& row) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    if (!loadSceneFromText(benchSceneJson(kind, bodies), "bench-gpu", ".", model, settings, info, &error)) {
        std::fprintf(stderr, "bench-gpu: %s\n", error.c_str());
        return false;
    }
    row.scene = kind;
    row.backend = backendName(backend);
    if (newton > 0) settings.solver.newtonIterations = newton;
    if (iters > 0) settings.solver.linearIterations = iters;
    row.bodies = model.bodyCount() - 1;   // boxes, without the ground
    World world(std::move(model), settings);
    GpuSettings gs;
    gs.deterministic = deterministic;
    std::unique_ptr<GpuWorld> gpu = backend == Backend::Cuda ? std::make_unique<GpuWorld>(world, gs) : nullptr;
    std::unique_ptr<PipelineWorld<HostExecutor>> host =
        backend == Backend::PipelineHost ? std::make_unique<PipelineWorld<HostExecutor>>(world) : nullptr;
    const double scale = 1e3 / steps;
    for (int i = 0; i < warmup + steps; ++i) {
        if (gpu) gpu->step();
        else if (host) host->step();
        else world.step();
        if (gpu && !gpu->onGpu()) {
            std::printf("bench-gpu: %s %d: no GPU row (%s)\n", kind.c_str(), row.bodies, gpu->fallbackReason().c_str());
            return false;
        }
        if (i < warmup) continue;
        addProfile(row.ms, gpu ? gpu->profile() : host ? host->profile() : world.profile(), scale);
        row.contacts += double(gpu ? gpu->contactCount() : host ? host->contactCount() : (int)world.contacts().size()) / steps;
        const SolveStats& st = gpu ? gpu->solveStats() : host ? host->solveStats() : world.solveStats();
        row.newton += double(st.newtonIterations) / steps;
        row.linear += double(st.linearIterations) / steps;
    }
    if (gpu) row.growthEvents = gpu->bufferStats().growthEvents;
    if (host) row.growthEvents = host->bufferStats().growthEvents;
    return true;
}

std::vector<int> parseList(const char* s) {
    std::vector<int> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) out.push_back(std::max(1, std::atoi(item.c_str())));
    return out;
}

}  // namespace

int gpuBenchCommand(int argc, char** argv) {
    std::vector<int> sizes = {100, 1000, 5000, 10000, 50000};
    int steps = 10, warmup = 3, cpuMax = 10000, newton = 0, iters = 0;
    bool deterministic = false;
    std::string csv;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--bodies" && hasValue) sizes = parseList(argv[++i]);
        else if (a == "--steps" && hasValue) steps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--warmup" && hasValue) warmup = std::max(0, std::atoi(argv[++i]));
        else if (a == "--newton" && hasValue) newton = std::max(1, std::atoi(argv[++i]));
        else if (a == "--iters" && hasValue) iters = std::max(1, std::atoi(argv[++i]));
        else if (a == "--cpu-max" && hasValue) cpuMax = std::atoi(argv[++i]);
        else if (a == "--csv" && hasValue) csv = argv[++i];
        else if (a == "--deterministic") deterministic = true;
        else {
            std::fprintf(stderr, "bench-gpu: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    std::string why;
    const bool haveGpu = gpuAvailable(&why);
    if (!haveGpu) std::printf("bench-gpu: no GPU (%s): cuda rows skipped, cpu and pipeline-host rows only\n", why.c_str());

    std::vector<BenchRow> rows;
    std::printf("| scene | bodies | backend | precision | contacts | Newton | linear | total ms | broad | narrow | contact | solve | integrate |\n");
    std::printf("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const char* kind : {"pyramid", "pile"}) {
        for (int n : sizes) {
            for (Backend b : {Backend::Cpu, Backend::PipelineHost, Backend::Cuda}) {
                if (b == Backend::Cuda && !haveGpu) continue;
                if (b != Backend::Cuda && n > cpuMax) continue;
                BenchRow r;
                if (!measure(kind, n, b, steps, warmup, deterministic, newton, iters, r)) continue;
                std::printf("| %s | %d | %s | %s | %.0f | %.1f | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
                            r.scene.c_str(), r.bodies, r.backend.c_str(), kPrecisionName, r.contacts, r.newton,
                            r.linear, r.ms.total, r.ms.broadPhase, r.ms.narrowPhase, r.ms.contactModel, r.ms.solve,
                            r.ms.integrate);
                std::fflush(stdout);
                rows.push_back(r);
            }
        }
    }
    if (!csv.empty()) {
        FILE* f = std::fopen(csv.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "bench-gpu: cannot write %s\n", csv.c_str());
            return 3;
        }
        std::fprintf(f, "scene,bodies,backend,precision,deterministic,contacts,newton,linear,total_ms,broad_ms,narrow_ms,"
                        "contact_ms,solve_ms,integrate_ms,growth_events\n");
        for (const BenchRow& r : rows)
            std::fprintf(f, "%s,%d,%s,%s,%d,%.1f,%.2f,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%lld\n", r.scene.c_str(),
                         r.bodies, r.backend.c_str(), kPrecisionName, int(deterministic), r.contacts, r.newton,
                         r.linear, r.ms.total, r.ms.broadPhase, r.ms.narrowPhase, r.ms.contactModel, r.ms.solve,
                         r.ms.integrate, r.growthEvents);
        std::fclose(f);
    }
    return 0;
}

}  // namespace cs
