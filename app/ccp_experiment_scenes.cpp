// `sandbox experiment ccp-liftoff` and `ccp-scenes` (app/ccp_experiment.cpp has the pile).
//
//   ccp-liftoff  a 0.4 x 0.4 x 0.1 m slab of 1 kg sliding at 1 m/s on the ground, from touching,
//                for h = 1/480 ... 1/30 s and mu = 0.1 ... 1, under CCP (PGS to 1e-10 m/s) and
//                the standard model (Newton to 1e-10 m/s): the lift of the first step against
//                the relaxation's h mu |v_T| ([CCP] section 3), and the highest lift over 0.5 s.
//                  ccp_liftoff.csv   model, h, mu, first-step lift, h mu |v_T|, max lift
//   ccp-scenes   heavy_stack, arch, card_house and friction_ramp under the standard model, PEG
//                and CCP with APGD, PGS and Newton (PCR), each with the scene's settings:
//                  ccp_scenes.csv    per run: ms per step, final kinetic energy, deepest
//                                    penetration (every 10 steps), largest body displacement,
//                                    mean final residual, largest CCP separation
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/ccp_experiment.h"
#include "engine/model_builder.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

namespace cs {

namespace {

Model slabOnGround(Real mu) {
    Model m;
    std::string err;
    BodyDesc g;
    g.name = "ground";
    g.isStatic = true;
    g.material.friction = 1;   // mixed mu = sqrt(1 * mu^2) = mu
    ShapeDesc gs;
    gs.polytope = makeBox({50, 50, 1});
    gs.local.pos = {0, 0, -1};
    g.shapes.push_back(gs);
    addBody(m, g, &err);
    BodyDesc d;
    d.name = "slab";
    d.mass = 1;
    d.material.friction = mu * mu;
    ShapeDesc s;
    s.polytope = makeBox({Real(0.2), Real(0.2), Real(0.05)});
    d.shapes.push_back(s);
    d.pose.pos = {0, 0, Real(0.05)};
    d.linVel = {1, 0, 0};
    addBody(m, d, &err);
    return m;
}

}  // namespace

std::FILE* openExperimentCsv(const std::string& dir, const char* name, const char* header) {
    std::FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "sandbox experiment: cannot write %s/%s\n", dir.c_str(), name);
        std::exit(2);
    }
    std::fprintf(f, "%s\n", header);
    return f;
}

double loadExperimentScene(const char* scene, Model& model, WorldSettings& settings) {
    SceneInfo info;
    std::string err;
    if (!loadScene(scene, model, settings, info, &err)) {
        std::fprintf(stderr, "sandbox experiment: %s\n", err.c_str());
        std::exit(2);
    }
    return double(info.duration);
}

void runLiftoff(const CcpScenesOptions& o) {
    std::FILE* f = openExperimentCsv(o.outDir, "ccp_liftoff.csv", "model,h,mu,first_lift_m,predicted_m,max_lift_m");
    for (int model = 0; model < 2; ++model)
        for (double h : {1.0 / 480, 1.0 / 240, 1.0 / 120, 1.0 / 60, 1.0 / 30})
            for (double mu : {0.1, 0.25, 0.5, 1.0}) {
                WorldSettings s;
                s.dt = Real(h);
                s.solver.contactModel = model == 0 ? ContactModelType::CCP : ContactModelType::Standard;
                s.solver.ccp.solver = CcpSolverType::GaussSeidel;
                s.solver.ccp.iterations = 2000;
                s.solver.ccp.tolerance = Real(1e-10);
                s.solver.newtonIterations = 50;
                s.solver.newtonTolerance = Real(1e-10);
                World w(slabOnGround(Real(mu)), s);
                w.step();
                const double first = w.state().pos[1].z - 0.05;
                const double predicted = model == 0 ? h * mu * std::hypot(double(w.state().linVel[1].x), double(w.state().linVel[1].y)) : 0;
                double highest = first;
                for (int k = 1; k < int(std::lround(0.5 / h)); ++k) {
                    w.step();
                    highest = std::max(highest, double(w.state().pos[1].z) - 0.05);
                }
                std::fprintf(f, "%s,%.6f,%.2f,%.6e,%.6e,%.6e\n", model == 0 ? "ccp" : "standard", h, mu, first, predicted, highest);
                std::printf("liftoff %-8s h %.5f mu %.2f: first step %.3e m (h mu |v_T| %.3e), highest %.3e m\n",
                            model == 0 ? "ccp" : "standard", h, mu, first, predicted, highest);
            }
    std::fclose(f);
}

void runCcpScenes(const CcpScenesOptions& o) {
    std::FILE* f = openExperimentCsv(o.outDir, "ccp_scenes.csv",
                           "scene,variant,steps,ms_per_step,final_kinetic_J,max_penetration_m,max_displacement_m,"
                           "mean_residual,max_ccp_separation_m,failed_steps");
    struct Variant { const char* name; ContactModelType model; CcpSolverType ccp; int iterations; };
    const Variant variants[] = {{"standard", ContactModelType::Standard, CcpSolverType::APGD, 100},
                                {"peg", ContactModelType::PEG, CcpSolverType::APGD, 100},
                                {"ccp-apgd", ContactModelType::CCP, CcpSolverType::APGD, 100},
                                {"ccp-apgd-300", ContactModelType::CCP, CcpSolverType::APGD, 300},
                                {"ccp-pgs", ContactModelType::CCP, CcpSolverType::GaussSeidel, 100},
                                {"ccp-pj", ContactModelType::CCP, CcpSolverType::Jacobi, 100},
                                {"ccp-newton", ContactModelType::CCP, CcpSolverType::Newton, 100}};
    for (const char* scene : {"heavy_stack", "arch", "card_house", "friction_ramp"})
        for (const Variant& v : variants) {
            Model m;
            WorldSettings s;
            const double duration = loadExperimentScene(scene, m, s);
            s.solver.contactModel = v.model;
            s.solver.ccp.solver = v.ccp;
            s.solver.ccp.iterations = v.iterations;
            World w(m, s);
            const int steps = int(std::lround((o.seconds > 0 ? o.seconds : duration) / double(s.dt)));
            double total = 0, residual = 0, penetration = 0, separation = 0;
            for (int k = 0; k < steps; ++k) {
                w.step();
                total += w.profile().total;
                residual += double(w.solveStats().residualFinal);
                for (const Contact& c : w.contacts()) separation = std::max(separation, double(c.ccpSeparation));
                if (k % 10 == 9 || k == steps - 1) penetration = std::max(penetration, double(w.maxPenetration()));
            }
            double moved = 0;
            for (int b = 0; b < m.bodyCount(); ++b)
                if (!m.isStatic(b)) moved = std::max(moved, double(length(w.state().pos[b] - m.initialPos[b])));
            std::fprintf(f, "%s,%s,%d,%.3f,%.6e,%.6e,%.6e,%.6e,%.6e,%d\n", scene, v.name, steps, 1e3 * total / steps,
                         double(w.kineticEnergy()), penetration, moved, residual / steps, separation, w.failedSteps());
            std::printf("%-13s %-10s %4d steps %8.2f ms/step  KE %.3e J  penetration %.3e m  moved %.3e m  residual %.3e  "
                        "separation %.3e m\n",
                        scene, v.name, steps, 1e3 * total / steps, double(w.kineticEnergy()), penetration, moved, residual / steps,
                        separation);
            std::fflush(stdout);
        }
    std::fclose(f);
}

}  // namespace cs
