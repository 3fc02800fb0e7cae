// Metrics of a headless run and their output formats (run_metrics.h). The overlap volume
// ([PEG] section 6's accuracy metric) is engine/world_metrics.h's.
#include "app/run_metrics.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>


namespace {
#if defined(__AVX512F__)
constexpr const char* kCpuIsa = "avx512";
#elif defined(__AVX2__)
constexpr const char* kCpuIsa = "avx2";
#elif defined(__AVX__)
constexpr const char* kCpuIsa = "avx";
#else
constexpr const char* kCpuIsa = "baseline";
#endif
}  // namespace

namespace cs {

namespace {

using Json = nlohmann::json;

double sortedQuantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    double pos = q * double(v.size() - 1);
    size_t i = size_t(pos);
    double f = pos - double(i);
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

double finiteOr(double x, double fallback) { return std::isfinite(x) ? x : fallback; }

}  // namespace

bool stateIsFinite(const World& world) {
    const State& s = world.state();
    auto ok = [](Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); };
    for (size_t b = 0; b < s.pos.size(); ++b) {
        const Quat& q = s.rot[b];
        if (!ok(s.pos[b]) || !ok(s.linVel[b]) || !ok(s.angVel[b]) || !std::isfinite(q.w) ||
            !std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z))
            return false;
    }
    return true;
}

namespace {

struct Stats {
    int contactsMax = 0, cullResolves = 0;
    double rowsMean = 0, contactsMean = 0, wallMean = 0, wallMedian = 0, wallP95 = 0, cpuMedian = 0, cpuP95 = 0;
    double newtonMean = 0, linearMean = 0, residualMean = 0, residualMax = 0, residualFinal = 0;
    double penetrationMax = 0, overlapFinal = 0, overlapMax = 0, keFinal = 0, keMax = 0;
};

Stats computeStats(const RunSummary& s) {
    Stats t;
    std::vector<double> wall, cpu;
    for (const StepRecord& r : s.records) {
        t.contactsMean += r.contacts;
        t.rowsMean += r.rows;
        t.cullResolves += r.cullResolves;
        t.contactsMax = std::max(t.contactsMax, r.contacts);
        wall.push_back(r.wallMs);
        cpu.push_back(r.cpuMs);
        t.newtonMean += r.newtonIterations;
        t.linearMean += r.linearIterations;
        t.residualMean += finiteOr(r.residual, 0);
        t.residualMax = std::max(t.residualMax, finiteOr(r.residual, 0));
        t.penetrationMax = std::max(t.penetrationMax, finiteOr(r.maxPenetration, 0));
        if (r.overlapVolume >= 0) t.overlapMax = std::max(t.overlapMax, r.overlapVolume);
        t.keMax = std::max(t.keMax, finiteOr(r.kineticEnergy, 0));
    }
    double n = std::max<double>(1, double(s.records.size()));
    t.contactsMean /= n;
    t.rowsMean /= n;
    t.newtonMean /= n;
    t.linearMean /= n;
    t.residualMean /= n;
    for (double w : wall) t.wallMean += w / n;
    t.wallMedian = sortedQuantile(wall, 0.5);
    t.cpuMedian = sortedQuantile(cpu, 0.5);
    t.cpuP95 = sortedQuantile(cpu, 0.95);
    t.wallP95 = sortedQuantile(wall, 0.95);
    if (!s.records.empty()) {
        t.residualFinal = finiteOr(s.records.back().residual, 0);
        t.overlapFinal = std::max(0.0, s.records.back().overlapVolume);
        t.keFinal = s.records.back().kineticEnergy;
    }
    return t;
}

}  // namespace

std::string summaryJson(const RunSummary& s) {
    Stats t = computeStats(s);
    double n = std::max<double>(1, double(s.records.size()));
    const StepProfile& p = s.profileSum;
    Json j;
    j["scene"] = s.scene;
    j["method"] = s.method;
    j["contact"] = s.contact;
    j["solver"] = s.solver;
    j["ncp"] = s.ncp;
    j["backend"] = s.backend;
    j["executor"] = s.executor;
    j["precision"] = s.precision;
    j["cpu_isa"] = kCpuIsa;   // what the C++ code was compiled for (CMake option CS_NATIVE_ARCH)
    j["dt"] = s.dt;
    j["substeps"] = s.substeps;
    j["steps"] = s.steps;
    j["bodies"] = s.bodies;
    j["fem_tets"] = s.femTets;
    j["fem_nodes"] = s.femNodes;
    j["seed"] = s.seed;
    j["threads"] = s.threads;
    j["thread_wait"] = s.threadWait;
    j["top_drift_m"] = s.topDrift;
    j["sleeping_bodies_final"] = s.sleepingFinal;
    j["contacts"] = {{"mean", t.contactsMean}, {"max", t.contactsMax}};
    j["rows_mean"] = t.rowsMean;
    j["cull_resolves"] = t.cullResolves;
    j["wall_ms_per_step"] = {{"mean", t.wallMean}, {"median", t.wallMedian}, {"p95", t.wallP95}};
    j["cpu_ms_per_step_median"] = t.cpuMedian;
    j["cpu_ms_per_step_p95"] = t.cpuP95;
    j["newton_iters_mean"] = t.newtonMean;
    j["linear_iters_mean"] = t.linearMean;
    j["residual_final"] = {{"mean", t.residualMean}, {"max", t.residualMax}, {"last", t.residualFinal}};
    j["max_penetration_m"] = t.penetrationMax;
    j["overlap_volume_m3"] = {{"final", t.overlapFinal}, {"max", t.overlapMax}};
    j["overlap_volume_available"] = s.overlapAvailable;
    j["kinetic_energy_final_j"] = std::isfinite(t.keFinal) ? Json(t.keFinal) : Json(nullptr);
    j["kinetic_energy_max_j"] = t.keMax;   // over the steps (finite ones)
    j["nan"] = s.nan;
    j["failed_steps"] = s.failedSteps;
    j["stopped_at_step"] = s.stoppedAtStep;
    j["profile_ms"] = {{"broad_phase", 1e3 * p.broadPhase / n}, {"narrow_phase", 1e3 * p.narrowPhase / n},
                       {"contact_model", 1e3 * p.contactModel / n}, {"solve", 1e3 * p.solve / n},
                       {"integrate", 1e3 * p.integrate / n}, {"total", 1e3 * p.total / n}};
    if (!s.graspJson.empty()) j["grasp"] = Json::parse(s.graspJson);
    return j.dump();
}

void writeSummaryText(const RunSummary& s, std::FILE* out) {
    Stats t = computeStats(s);
    double n = std::max<double>(1, double(s.records.size()));
    const StepProfile& p = s.profileSum;
    std::fprintf(out, "scene %s: %d bodies, %d steps of %.4g s (%d substeps), %s method, %s contact, %s solver, %s NCP, %s/%s, stepped by %s\n",
                 s.scene.c_str(), s.bodies, s.steps, s.dt, s.substeps, s.method.c_str(), s.contact.c_str(), s.solver.c_str(),
                 s.ncp.c_str(), s.backend.c_str(), s.precision.c_str(),
                 s.executor == "cpu" ? "World::step (cpu)" : (s.executor + " executor").c_str());
    std::fprintf(out, "  contacts        mean %.1f, max %d\n", t.contactsMean, t.contactsMax);
    std::fprintf(out, "  wall time       %.3f ms/step mean, %.3f median, %.3f p95 (CPU %.3f median)\n", t.wallMean, t.wallMedian,
                 t.wallP95, t.cpuMedian);
    std::fprintf(out, "  stages          broad %.3f, narrow %.3f, contact model %.3f, solve %.3f, integrate %.3f ms/step\n",
                 1e3 * p.broadPhase / n, 1e3 * p.narrowPhase / n, 1e3 * p.contactModel / n, 1e3 * p.solve / n,
                 1e3 * p.integrate / n);
    std::fprintf(out, "  iterations      newton %.2f, linear %.1f per step (mean)\n", t.newtonMean, t.linearMean);
    std::fprintf(out, "  NCP residual    last %.3g, mean %.3g, max %.3g\n", t.residualFinal, t.residualMean, t.residualMax);
    // The minimum map's known limit (tests/test_grasp_mimic.cpp, README "Grasping"): redundant
    // rigid contacts at different depths make its Newton systems inconsistent but for eps.
    if (s.ncp == "min" && t.residualMax > 1)
        std::fprintf(out, "  note            a step ended with a Newton residual of %.3g m/s; under the minimum map, "
                          "redundant contacts predicted at different depths can make the Newton system inconsistent "
                          "(impulses ~ 1/eps, tests/test_grasp_mimic.cpp); --ncp fb avoids that\n", t.residualMax);
    std::fprintf(out, "  penetration     max %.3g m\n", t.penetrationMax);
    std::fprintf(out, "  top body drift  %.3g m\n", s.topDrift);
    std::fprintf(out, "  asleep at end   %d bodies\n", s.sleepingFinal);
    if (s.overlapAvailable)
        std::fprintf(out, "  overlap volume  final %.3g m^3, max %.3g m^3\n", t.overlapFinal, t.overlapMax);
    std::fprintf(out, "  kinetic energy  final %.6g J, max %.6g J\n", t.keFinal, t.keMax);
    std::fprintf(out, "  failed steps    %d%s\n", s.failedSteps, s.nan ? "  (NaN in the state)" : "");
    if (s.stoppedAtStep >= 0) std::fprintf(out, "  stopped at step %d (the failure repeated)\n", s.stoppedAtStep);
}

bool writeTraceCsv(const RunSummary& s, const std::string& path, std::string* error) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        if (error) *error = "cannot write trace file " + path;
        return false;
    }
    std::fprintf(f, "step,time,contacts,newton_iters,linear_iters,residual,max_penetration,overlap_volume,"
                    "kinetic_energy,wall_ms,failed,cpu_ms,awake_bodies,wake_resolves,drag_error\n");
    for (const StepRecord& r : s.records)
        std::fprintf(f, "%d,%.9g,%d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.6g,%d,%.6g,%d,%d,%.6g\n", r.step, r.time, r.contacts,
                     r.newtonIterations, r.linearIterations, r.residual, r.maxPenetration,
                     std::max(0.0, r.overlapVolume), r.kineticEnergy, r.wallMs, int(r.failed), r.cpuMs, r.awakeBodies,
                     r.wakeResolves, r.dragError);
    bool ok = std::fclose(f) == 0;
    if (!ok && error) *error = "cannot write trace file " + path;
    return ok;
}

bool writeStateJson(const World& world, const std::string& path, std::string* error) {
    const Model& m = world.model();
    const State& st = world.state();
    Json bodies = Json::array();
    auto v3 = [](Vec3 v) { return Json::array({v.x, v.y, v.z}); };
    for (int b = 0; b < m.bodyCount(); ++b) {
        const Quat& q = st.rot[b];
        bodies.push_back({{"name", m.bodyName[b]}, {"static", m.isStatic(b)}, {"active", world.isActive(b)},
                          {"position", v3(st.pos[b])}, {"quat", Json::array({q.w, q.x, q.y, q.z})},
                          {"velocity", v3(st.linVel[b])}, {"angular_velocity", v3(st.angVel[b])}});
    }
    Json j = {{"time", st.time}, {"bodies", bodies}};
    std::ofstream out(path);
    out << j.dump(1) << "\n";
    if (!out) {
        if (error) *error = "cannot write state file " + path;
        return false;
    }
    return true;
}

}  // namespace cs
