// `sandbox experiment relaxation`: the comparison of [NSN] figures 7, 14 and 18 between the
// non-smooth Newton method and the relaxation methods (sequential impulses, pgs_step.h; the soft
// step, soft_step.h) at matched CPU time per step. Scenes: arch, heavy_stack, the 385-box pyramid
// (bench/scenes/peer_pyramid_385.json) and hinge_chain, one thread.
//
// Matching: Newton runs first at the scene's settings and gives its mean CPU ms per step T_N. Each
// relaxation method has one cost knob (pgs: iterations, the velocity and the split sweeps alike, as
// Bullet runs both with one count; soft: substeps, Box2D's knob). Two calibration runs over the
// first second at knob k1 and 4 k1 fit t(k) = a + b k; the run uses k = (T_N - a) / b rounded, and
// when its mean misses T_N by more than 20% the fit is redone through the run's own point and the
// run repeated once. The knob is kept within [1, cap]: a scene where even k = 1 costs more than
// Newton, or k = cap less, is reported with its ratio as it is.
//
// Per step, after World::step(): the deepest overlap (World::maxPenetration), the drift (the body
// that starts highest: its distance from its start; hinge_chain: the largest gap between the two
// anchors of a joint), the step's residual (SolveStats::residualFinal: Newton's NCP merit; the
// relaxation methods' normal-row merit at the step's end, relax_shared.cpp) and the step's CPU ms.
// Writes DIR/relaxation.csv (per step), DIR/relaxation_summary.csv, and DIR/relaxation.png through
// scripts/relaxation_plot.py (python3-matplotlib).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "engine/scene/scene_loader.h"
#include "engine/solver/pgs_step.h"
#include "engine/solver/soft_step.h"
#include "engine/world.h"

namespace cs {

bool femExperimentNumber(const char* text, double lo, double hi, double& v);   // fem_experiment.cpp

namespace {

double cpuMs() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * double(t.tv_sec) + 1e-6 * double(t.tv_nsec);
}

struct StepRow {
    double time, penetration, drift, residual, cpuMs;
};

struct Run {
    std::vector<StepRow> rows;
    double meanMs = 0;
    int failedSteps = 0;
};

// The dynamic body whose centre starts highest, or -1.
int highestBody(const Model& m) {
    int top = -1;
    for (int b = 0; b < m.bodyCount(); ++b)
        if (!m.isStatic(b) && (top < 0 || m.initialPos[b].z > m.initialPos[top].z)) top = b;
    return top;
}

// The largest distance between a joint's two anchors (world), 0 with no joints.
double jointError(const World& w) {
    const Model& m = w.model();
    const State& s = w.state();
    double worst = 0;
    for (const Joint& j : m.joints) {
        const Vec3 a = j.bodyA >= 0 ? s.pos[j.bodyA] + rotate(s.rot[j.bodyA], j.anchorA) : j.anchorA;
        const Vec3 b = j.bodyB >= 0 ? s.pos[j.bodyB] + rotate(s.rot[j.bodyB], j.anchorB) : j.anchorB;
        worst = std::max(worst, double(length(a - b)));
    }
    return worst;
}

Run runFor(const Model& model, const WorldSettings& settings, int steps, bool record) {
    World w(model, settings);
    const int top = highestBody(model);
    Run r;
    double total = 0;
    for (int i = 0; i < steps; ++i) {
        const double c0 = cpuMs();
        w.step();
        const double ms = cpuMs() - c0;
        total += ms;
        if (w.lastStepFailed()) ++r.failedSteps;
        if (!record) continue;
        StepRow row;
        row.time = double(w.state().time);
        row.penetration = double(w.maxPenetration());
        row.drift = !model.joints.empty() ? jointError(w)
                    : top >= 0 ? double(length(w.state().pos[top] - model.initialPos[top])) : 0;
        row.residual = double(w.solveStats().residualFinal);
        row.cpuMs = ms;
        r.rows.push_back(row);
    }
    r.meanMs = total / steps;
    return r;
}

WorldSettings withKnob(WorldSettings s, SolveMethod method, int k) {
    s.solver.method = method;
    if (method == SolveMethod::Pgs) {
        s.solver.pgs.iterations = k;
        s.solver.pgs.splitIterations = k;
    } else if (method == SolveMethod::Soft) {
        s.solver.soft.substeps = k;
    }
    return s;
}

int knobFor(double target, double k1, double t1, double k2, double t2, int cap) {
    const double b = (t2 - t1) / (k2 - k1);
    double k = b > 0 ? k1 + (target - t1) / b : k1 * target / t1;
    if (!std::isfinite(k)) k = k1;
    return int(std::lround(std::clamp(k, 1.0, double(cap))));
}

}  // namespace

int runRelaxationExperiment(int argc, char** argv) {
    const char* me = "sandbox experiment relaxation";
    std::string out = "docs";
    double seconds = 2;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        double v = 0;
        if (a == "--out" && value) {
            out = value;
        } else if (a == "--seconds") {
            if (!value || !femExperimentNumber(value, 0.1, 60, v)) {
                std::fprintf(stderr, "%s: --seconds needs a duration from 0.1 to 60 s\n", me);
                return 2;
            }
            seconds = v;
        } else {
            std::fprintf(stderr, "%s: unknown argument \"%s\" (--out DIR, --seconds T)\n", me, a.c_str());
            return 2;
        }
        ++i;
    }
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    const std::string source = CS_SOURCE_DIR;
    const std::vector<std::string> scenes = {"arch", "heavy_stack", source + "/bench/scenes/peer_pyramid_385.json",
                                             "hinge_chain"};
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    const std::string csvPath = out + "/relaxation.csv", sumPath = out + "/relaxation_summary.csv";
    FILE* csv = std::fopen(csvPath.c_str(), "w");
    FILE* sum = csv ? std::fopen(sumPath.c_str(), "w") : nullptr;
    if (!csv || !sum) {
        if (csv) std::fclose(csv);
        std::fprintf(stderr, "%s: cannot write %s\n", me, csv ? sumPath.c_str() : csvPath.c_str());
        return 2;
    }
    std::fprintf(csv, "scene,method,knob,step,time_s,max_penetration_m,drift_m,residual_m_s,cpu_ms\n");
    std::fprintf(sum, "scene,method,knob,cpu_ms_per_step_mean,ratio_to_newton,max_penetration_m,final_penetration_m,"
                      "final_drift_m,max_drift_m,final_residual_m_s,failed_steps,drift_kind\n");
    for (const std::string& scene : scenes) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string error;
        if (!loadScene(scene, model, settings, info, &error)) {
            std::fprintf(stderr, "%s: %s\n", me, error.c_str());
            std::fclose(csv);
            std::fclose(sum);
            return 2;
        }
        std::string why;
        if (!pgsStepSupports(model, settings, &why) || !softStepSupports(model, settings, &why)) {
            std::fprintf(stderr, "%s: %s: %s\n", me, info.name.c_str(), why.c_str());
            std::fclose(csv);
            std::fclose(sum);
            return 2;
        }
        const int steps = std::max(1, int(std::lround(seconds / double(settings.dt))));
        const int calibration = std::min(steps, std::max(1, int(std::lround(1.0 / double(settings.dt)))));
        const char* driftKind = model.joints.empty() ? "top body displacement" : "largest joint anchor gap";
        double newtonMs = 0;
        for (SolveMethod method : {SolveMethod::Newton, SolveMethod::Pgs, SolveMethod::Soft}) {
            int knob = 0;
            Run run;
            if (method == SolveMethod::Newton) {
                run = runFor(model, withKnob(settings, method, 0), steps, true);
                newtonMs = run.meanMs;
            } else {
                const int k1 = method == SolveMethod::Pgs ? 10 : 4, k2 = 4 * k1;
                const int cap = method == SolveMethod::Pgs ? 5000 : 500;
                const double t1 = runFor(model, withKnob(settings, method, k1), calibration, false).meanMs;
                const double t2 = runFor(model, withKnob(settings, method, k2), calibration, false).meanMs;
                knob = knobFor(newtonMs, k1, t1, k2, t2, cap);
                run = runFor(model, withKnob(settings, method, knob), steps, true);
                const double ratio = run.meanMs / newtonMs;
                if (ratio < 0.8 || ratio > 1.25) {
                    const int again = knobFor(newtonMs, k2, t2, knob, run.meanMs, cap);
                    if (again != knob) {
                        knob = again;
                        run = runFor(model, withKnob(settings, method, knob), steps, true);
                    }
                }
            }
            const char* name = solveMethodName(method);
            double maxPen = 0, maxDrift = 0;
            for (size_t i = 0; i < run.rows.size(); ++i) {
                const StepRow& r = run.rows[i];
                maxPen = std::max(maxPen, r.penetration);
                maxDrift = std::max(maxDrift, r.drift);
                std::fprintf(csv, "%s,%s,%d,%zu,%.6f,%.6e,%.6e,%.6e,%.4f\n", info.name.c_str(), name, knob, i + 1, r.time,
                             r.penetration, r.drift, r.residual, r.cpuMs);
            }
            const StepRow& last = run.rows.back();
            std::fprintf(sum, "%s,%s,%d,%.4f,%.3f,%.4e,%.4e,%.4e,%.4e,%.4e,%d,%s\n", info.name.c_str(), name, knob,
                         run.meanMs, run.meanMs / newtonMs, maxPen, last.penetration, last.drift, maxDrift, last.residual,
                         run.failedSteps, driftKind);
            std::fflush(csv);
            std::fflush(sum);
            std::printf("%-16s %-6s knob %5d: %8.3f CPU ms/step (%.2f x Newton), max penetration %.3e m, final drift "
                        "%.3e m (%s), final residual %.2e, %d failed steps\n",
                        info.name.c_str(), name, knob, run.meanMs, run.meanMs / newtonMs, maxPen, last.drift, driftKind,
                        last.residual, run.failedSteps);
            std::fflush(stdout);
        }
    }
    std::fclose(csv);
    std::fclose(sum);
    std::printf("wrote %s and %s\n", csvPath.c_str(), sumPath.c_str());
    const std::string script = source + "/scripts/relaxation_plot.py";
    const std::string command = "/usr/bin/python3 '" + script + "' '" + out + "'";
    if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "%s: the plot failed (%s); the CSVs are written\n", me, command.c_str());
        return 1;
    }
    return 0;
}

}  // namespace cs
