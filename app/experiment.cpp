// `sandbox experiment pour3d|pour2d`: the pouring experiment of [PEG] section 6.
//
// For every seed x step size x model variant (the same initial conditions), where a variant is
//   standard    the standard model on our feature-pair narrow phase (its feasibility and
//               applicability tests are [PEG] section 4's),
//   hyperplane  the standard model on the conventional detector the paper compares against
//               (faces as hyperplanes: WorldSettings::hyperplaneFaces),
//   peg         PEG on the feature-pair narrow phase,
// runs the scene to its duration and measures after each step the overlap among bodies
// (volume in 3D, figure 24; area = volume / prism depth in 2D, figure 21), the PEG constraint
// groups and SM traps (figure 22), solver failures (steps rolled back by the world's guard,
// Newton not converged) and explosions (a body leaving the container's neighbourhood), and
// the wall time. Writes into --out (default docs/):
//   peg_<scene>_runs.csv     one line per run
//   peg_<scene>_overlap.csv  per model and step size: quartiles of the per-step overlap over
//                            all steps of all seeds (figures 21 and 24)
//   peg_<scene>_traps.csv    per step of one PEG run (seed 1, --trap-dt): feature pairs
//                            and SM traps (figure 22)
//   peg_<scene>_steps.csv    one line per run: the overlap after every step (space separated),
//                            so that sweeps split over seeds (--seed-first) can be merged
//                            (scripts/peg_merge.py) into the same quartiles
// scripts/peg_plot.py draws the figure from these. The paper's sweep is 10 seeds x 16 step
// sizes from 0.001 s to 0.05 s; --seeds and --dts reduce it (2 shared cores).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/run_metrics.h"
#include "engine/contact/peg_model.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

namespace cs {

namespace {

struct ExperimentOptions {
    std::string scene = "pour3d";
    int seeds = 10;
    int seedFirst = 1;            // seeds seedFirst .. seedFirst + seeds - 1
    int dtCount = 16;
    double dtMin = 0.001, dtMax = 0.05;
    double duration = -1;         // < 0: the scene's
    double trapDt = 0.01;
    double marginSpeed = 0;       // > 0: contact margin = scene margin + marginSpeed * h (m/s)
    // Speculative contacts: the narrow phase widens its margin and relaxations by each pair's
    // motion within the step (WorldSettings::speculative, both models), and PEG its feasibility
    // distances (PegSettings::motionScale). On by default: without them, from h = 0.023 s on,
    // bodies move past the fixed 2 cm margin within one step and both models overlap by ~1e-3 m^3
    // (docs/peg.md, "Large steps"). 0 restores the fixed relaxations.
    double motionScale = 1;
    double speculative = 1;
    // The time-stepping subproblem as the paper solved it: [PEG] eqs. 8-9 and 48-49 are
    // frictionless, and PATH solves each one exactly. So by default friction is off and the
    // Newton iteration runs to 1e-12 m/s (up to 60 iterations of 100 linear ones); with the
    // scenes' own 1e-5 m/s the residual alone leaves resting overlaps of about h * 1e-5 m
    // (docs/peg.md). --friction 1 --newton 8 --iters 40 --newton-tol 1e-5 gives the scenes'
    // own settings (the session-4 sweeps).
    int newton = 60, iters = 100; // > 0: Newton and linear iterations (0: the scene's)
    double friction = 0;          // >= 0: WorldSettings::frictionScale (< 0: the scene's)
    double newtonTol = 1e-12;     // > 0: SolverSettings::newtonTolerance, m/s (0: the scene's)
    // Not in the paper: passes of the world's position projection after each step (both models
    // alike; World::projectPositions), which moves apart what the linearized gap left overlapped.
    int projection = 0;
    // Not in the paper: redetection passes (World::widenDetection): the narrow phase again, widened
    // by the solved velocities, when the solve moves a body farther than it allowed for.
    int redetect = 0;
    std::string outDir = "docs";
    std::vector<std::string> models{"standard", "hyperplane", "peg"};   // variants (file header)
};

// A variant's contact model and detector; false for an unknown name.
bool variantSettings(const std::string& name, ContactModelType& model, bool& hyperplane) {
    hyperplane = name == "hyperplane";
    if (hyperplane) {
        model = ContactModelType::Standard;
        return true;
    }
    return (name == "standard" || name == "peg") && parseContactModelName(name, model);
}

struct RunResult {
    std::string model;      // the variant
    int seed;
    double dt;
    int steps = 0, failedSteps = 0, unconverged = 0;
    bool exploded = false;
    double wallSeconds = 0, solveSeconds = 0;
    std::vector<double> overlap;   // per step
    long traps = 0, contacts = 0;
};

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    double pos = q * (v.size() - 1);
    size_t i = size_t(pos);
    double f = pos - i;
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

// Prism depth for pour2d: overlap volume / depth = overlap area.
double overlapScale(const std::string& scene) { return scene == "pour2d" ? 1.0 / 0.1 : 1.0; }

// pour2d.json holds one set of 20 polygons (scripts/peg_make_pour2d.py); the other initial
// configurations of the sweep move each polygon's drop point along x by up to +-5 cm and turn
// it in its plane (about y) by a random angle, from a SplitMix64 stream of the seed.
void perturbPlanar(Model& m, uint64_t seed) {
    uint64_t state = seed * 0x9E3779B97F4A7C15ull;
    auto next = [&]() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return double((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
    };
    for (int b = 0; b < m.bodyCount(); ++b) {
        if (m.isStatic(b)) continue;
        m.initialPos[b].x += Real(0.1 * next() - 0.05);
        m.initialRot[b] = normalize(quatFromAxisAngle(Vec3{0, 1, 0}, Real(2 * M_PI * next())) * m.initialRot[b]);
    }
}

bool runOne(const ExperimentOptions& o, const std::string& variant, int seed, double dt, RunResult& r,
            std::vector<std::pair<int, int>>* trapTrace) {
    Model m;
    WorldSettings settings;
    SceneInfo info;
    std::string err;
    SceneLoadOptions lo;
    lo.seedOffset = uint64_t(seed - 1);
    if (!loadScene(o.scene, m, settings, info, &err, lo)) {
        std::fprintf(stderr, "sandbox experiment: %s\n", err.c_str());
        return false;
    }
    if (o.scene == "pour2d" && seed > 1) perturbPlanar(m, uint64_t(seed));
    settings.dt = Real(dt);
    settings.substeps = 1;
    ContactModelType model;
    variantSettings(variant, model, settings.hyperplaneFaces);
    settings.solver.contactModel = model;
    // Large steps: bodies move farther per step than the contact margin, so the narrow phase
    // misses contacts whatever the model. --margin-speed grows the margin with the step (both
    // models alike); --motion-scale widens PEG's feasibility distances with each pair's motion.
    if (o.marginSpeed > 0) settings.contactMargin += Real(o.marginSpeed * dt);
    if (o.motionScale >= 0) settings.solver.peg.motionScale = Real(o.motionScale);
    if (o.speculative >= 0) settings.speculative = Real(o.speculative);
    if (o.newton > 0) settings.solver.newtonIterations = o.newton;
    if (o.iters > 0) settings.solver.linearIterations = o.iters;
    if (o.friction >= 0) settings.frictionScale = Real(o.friction);
    if (o.newtonTol > 0) settings.solver.newtonTolerance = Real(o.newtonTol);
    settings.projectionPasses = o.projection;
    settings.redetectPasses = o.redetect;
    World w(m, settings);
    const double duration = o.duration > 0 ? o.duration : double(info.duration);
    const int steps = int(std::lround(duration / dt));
    r.model = variant;
    r.seed = seed;
    r.dt = dt;
    const double scale = overlapScale(o.scene);
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < steps; ++k) {
        w.step();
        r.steps++;
        r.solveSeconds += w.profile().total;
        if (w.lastStepFailed()) r.failedSteps++;
        // Not converged: the Newton merit stayed above 1e-3 m/s (far above the 1e-5 tolerance).
        if (w.solveStats().residualFinal > Real(1e-3)) r.unconverged++;
        if (!stateIsFinite(w)) {
            r.exploded = true;
            break;
        }
        for (int b = 0; b < w.model().bodyCount(); ++b)
            if (w.isActive(b) && length(w.state().pos[b]) > Real(20)) r.exploded = true;
        r.overlap.push_back(totalOverlapVolume(w) * scale);
        if (model == ContactModelType::PEG) {
            PegGroupCounts n = countPegGroups(w.contacts());
            r.traps += n.traps;
            r.contacts += n.featurePairs;
            if (trapTrace) trapTrace->push_back({n.featurePairs, n.traps});
        } else {
            r.contacts += (long)w.contacts().size();
        }
        if (r.exploded) break;
    }
    r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return true;
}

bool parseModels(const char* s, std::vector<std::string>& out) {
    out.clear();
    std::string list = s;
    size_t p = 0;
    while (p <= list.size()) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        ContactModelType t;
        bool hyperplane;
        if (!variantSettings(list.substr(p, q - p), t, hyperplane)) return false;
        out.push_back(list.substr(p, q - p));
        p = q + 1;
    }
    return !out.empty();
}

void usage() {
    std::fprintf(stderr,
                 "usage: sandbox experiment pour3d|pour2d [--seeds N] [--seed-first S] [--dts K] [--dt-min S] [--dt-max S]\n"
                 "         [--duration S] [--models standard,hyperplane,peg] [--trap-dt S] [--out DIR]\n"
                 "         [--margin-speed V] [--motion-scale S] [--speculative S] [--newton N] [--iters M]\n"
                 "         [--friction S] [--newton-tol T] [--projection P] [--redetect R]\n"
                 "  [PEG] section 6: N seeds x K step sizes (log-spaced, default 10 x 16 from 0.001 to 0.05 s)\n");
}

// Bad input: one line, status 2 (`sandbox experiment` alone prints the usage).
int bad(const std::string& what) {
    std::fprintf(stderr, "sandbox experiment: %s (run `sandbox experiment` for the usage)\n", what.c_str());
    return 2;
}

}  // namespace

}  // namespace cs

int runExperiment(int argc, char** argv) {
    using namespace cs;
    ExperimentOptions o;
    if (argc < 3) { usage(); return 2; }
    o.scene = argv[2];
    for (int i = 3; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) std::exit(bad("missing value for " + a));
            return argv[++i];
        };
        if (a == "--seeds") o.seeds = std::atoi(next());
        else if (a == "--seed-first") o.seedFirst = std::atoi(next());
        else if (a == "--dts") o.dtCount = std::atoi(next());
        else if (a == "--dt-min") o.dtMin = std::atof(next());
        else if (a == "--dt-max") o.dtMax = std::atof(next());
        else if (a == "--duration") o.duration = std::atof(next());
        else if (a == "--trap-dt") o.trapDt = std::atof(next());
        else if (a == "--margin-speed") o.marginSpeed = std::atof(next());
        else if (a == "--motion-scale") o.motionScale = std::atof(next());
        else if (a == "--speculative") o.speculative = std::atof(next());
        else if (a == "--newton") o.newton = std::atoi(next());
        else if (a == "--iters") o.iters = std::atoi(next());
        else if (a == "--friction") o.friction = std::atof(next());
        else if (a == "--newton-tol") o.newtonTol = std::atof(next());
        else if (a == "--projection") o.projection = std::atoi(next());
        else if (a == "--redetect") o.redetect = std::atoi(next());
        else if (a == "--out") o.outDir = next();
        else if (a == "--models") {
            const char* list = next();
            if (!parseModels(list, o.models))
                return bad(std::string("bad --models \"") + list + "\": a list of standard, hyperplane, peg");
        } else {
            return bad("unknown option " + a);
        }
    }
    if (o.seeds < 1 || o.seedFirst < 1 || o.dtCount < 1)
        return bad("--seeds, --seed-first and --dts must be positive integers");
    if (o.projection < 0) return bad("--projection must be 0 (off) or a number of passes");
    if (o.redetect < 0) return bad("--redetect must be 0 (off) or a number of passes");
    if (!(o.dtMin > 0) || !(o.dtMax >= o.dtMin)) return bad("need 0 < --dt-min <= --dt-max");
    // The scene is loaded and the output folder made before the sweep, so that a bad name or --out
    // fails now, not after hours.
    {
        Model m;
        WorldSettings s;
        SceneInfo info;
        std::string err;
        if (!loadScene(o.scene, m, s, info, &err)) {
            std::fprintf(stderr, "sandbox experiment: %s\n", err.c_str());
            return 2;
        }
    }
    std::error_code folderError;
    std::filesystem::create_directories(o.outDir, folderError);
    if (folderError || !std::filesystem::is_directory(o.outDir))
        return bad("cannot make the output folder \"" + o.outDir + "\"");
    std::vector<double> dts;
    for (int k = 0; k < o.dtCount; ++k)
        dts.push_back(o.dtCount == 1 ? o.dtMin : o.dtMin * std::pow(o.dtMax / o.dtMin, double(k) / (o.dtCount - 1)));
    // Trace run: the step size of the sweep nearest --trap-dt.
    double traceDt = dts[0];
    for (double d : dts)
        if (std::fabs(std::log(d / o.trapDt)) < std::fabs(std::log(traceDt / o.trapDt))) traceDt = d;

    std::vector<RunResult> runs;
    std::vector<std::pair<int, int>> trace;
    for (int seed = o.seedFirst; seed < o.seedFirst + o.seeds; ++seed) {
        for (double dt : dts) {
            for (const std::string& model : o.models) {
                RunResult r;
                bool traceThis = model == "peg" && seed == 1 && dt == traceDt;
                if (!runOne(o, model, seed, dt, r, traceThis ? &trace : nullptr)) return 2;   // scene failed to load
                std::fprintf(stderr, "%s seed %d dt %.4f %-8s steps %5d wall %6.2f s  overlap median %.3g max %.3g  "
                             "failed %d unconverged %d%s\n", o.scene.c_str(), seed, dt, model.c_str(), r.steps,
                             r.wallSeconds, quantile(r.overlap, 0.5),
                             r.overlap.empty() ? 0.0 : *std::max_element(r.overlap.begin(), r.overlap.end()),
                             r.failedSteps, r.unconverged, r.exploded ? " EXPLODED" : "");
                runs.push_back(std::move(r));
            }
        }
    }
    const std::string base = o.outDir + "/peg_" + o.scene;
    if (std::FILE* f = std::fopen((base + "_runs.csv").c_str(), "w")) {
        std::fprintf(f, "scene,model,seed,dt,steps,wall_s,solve_s,failed_steps,unconverged_steps,exploded,"
                        "overlap_q1,overlap_median,overlap_q3,overlap_max,traps,feature_pairs\n");
        for (const RunResult& r : runs)
            std::fprintf(f, "%s,%s,%d,%.6g,%d,%.4f,%.4f,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%ld,%ld\n", o.scene.c_str(),
                         r.model.c_str(), r.seed, r.dt, r.steps, r.wallSeconds, r.solveSeconds, r.failedSteps,
                         r.unconverged, int(r.exploded), quantile(r.overlap, 0.25), quantile(r.overlap, 0.5),
                         quantile(r.overlap, 0.75),
                         r.overlap.empty() ? 0.0 : *std::max_element(r.overlap.begin(), r.overlap.end()), r.traps,
                         r.contacts);
        std::fclose(f);
    } else {
        std::fprintf(stderr, "sandbox experiment: cannot write %s_runs.csv\n", base.c_str());
        return 1;
    }
    if (std::FILE* f = std::fopen((base + "_steps.csv").c_str(), "w")) {
        std::fprintf(f, "model,seed,dt,overlap_per_step\n");
        for (const RunResult& r : runs) {
            std::fprintf(f, "%s,%d,%.6g,", r.model.c_str(), r.seed, r.dt);
            for (size_t k = 0; k < r.overlap.size(); ++k) std::fprintf(f, k ? " %.6g" : "%.6g", r.overlap[k]);
            std::fprintf(f, "\n");
        }
        std::fclose(f);
    }
    if (std::FILE* f = std::fopen((base + "_overlap.csv").c_str(), "w")) {
        std::fprintf(f, "model,dt,runs,steps,q1,median,q3,max,failed_runs,failed_steps,unconverged_steps,exploded_runs,"
                        "wall_s_per_step\n");
        for (const std::string& model : o.models) {
            for (double dt : dts) {
                std::vector<double> all;
                int n = 0, failedRuns = 0, failed = 0, unconv = 0, exploded = 0;
                double wall = 0;
                long steps = 0;
                for (const RunResult& r : runs) {
                    if (r.model != model || r.dt != dt) continue;
                    all.insert(all.end(), r.overlap.begin(), r.overlap.end());
                    n++;
                    failed += r.failedSteps;
                    unconv += r.unconverged;
                    exploded += r.exploded;
                    failedRuns += (r.failedSteps > 0 || r.exploded);
                    wall += r.wallSeconds;
                    steps += r.steps;
                }
                std::fprintf(f, "%s,%.6g,%d,%ld,%.6g,%.6g,%.6g,%.6g,%d,%d,%d,%d,%.6g\n", model.c_str(), dt, n,
                             steps, quantile(all, 0.25), quantile(all, 0.5), quantile(all, 0.75),
                             all.empty() ? 0.0 : *std::max_element(all.begin(), all.end()), failedRuns, failed, unconv,
                             exploded, steps ? wall / steps : 0.0);
            }
        }
        std::fclose(f);
    }
    if (!trace.empty()) {
        if (std::FILE* f = std::fopen((base + "_traps.csv").c_str(), "w")) {
            std::fprintf(f, "step,time,feature_pairs,sm_traps\n");
            for (size_t k = 0; k < trace.size(); ++k)
                std::fprintf(f, "%zu,%.6g,%d,%d\n", k + 1, (k + 1) * traceDt, trace[k].first, trace[k].second);
            std::fclose(f);
        }
    }
    std::fprintf(stderr, "wrote %s_{runs,overlap,steps,traps}.csv\n", base.c_str());
    return 0;
}
