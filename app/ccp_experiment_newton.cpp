// `sandbox experiment ccp-newton`: Newton over the relaxed CCP rows with each linear solver
// against APGD on the same scenes (docs/ccp.md, "Newton over the relaxed CCP").
//
//   card_house, heavy_stack, friction_ramp and arch for their duration at the scene's h, under
//   the CCP model with APGD (300 iterations, the reference) and with Newton (--newton-iters
//   iterations, default 30, of 40 linear iterations) over PCR, PCG, Jacobi and Gauss-Seidel,
//   the CCP tolerance 1e-5 m/s for all. Per run, from the CCP merit at the end of every step:
//     ccp_newton.csv   scene, solver, steps, steps at or below 2 x the tolerance, mean and largest
//                      merit (m/s), Newton steps replaced by the APGD fallback, ms per step, and
//                      the largest distance of a body's final position from the APGD run's (m)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/ccp_experiment.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace cs {

void runCcpNewton(const CcpScenesOptions& o) {
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    std::FILE* f = openExperimentCsv(o.outDir, "ccp_newton.csv",
                                     "scene,solver,steps,steps_converged,mean_merit,max_merit,fallbacks,ms_per_step,"
                                     "distance_from_apgd_m");
    struct Variant { const char* name; CcpSolverType ccp; LinearSolverType linear; };
    const Variant variants[] = {{"apgd-300", CcpSolverType::APGD, LinearSolverType::PCR},
                                {"newton-pcr", CcpSolverType::Newton, LinearSolverType::PCR},
                                {"newton-pcg", CcpSolverType::Newton, LinearSolverType::PCG},
                                {"newton-jacobi", CcpSolverType::Newton, LinearSolverType::Jacobi},
                                {"newton-gs", CcpSolverType::Newton, LinearSolverType::GaussSeidel}};
    for (const char* scene : {"card_house", "heavy_stack", "friction_ramp", "arch"}) {
        std::vector<Vec3> reference;
        for (const Variant& v : variants) {
            Model m;
            WorldSettings s;
            const double duration = loadExperimentScene(scene, m, s);
            s.solver.contactModel = ContactModelType::CCP;
            s.solver.ccp.solver = v.ccp;
            s.solver.ccp.iterations = 300;
            s.solver.ccp.tolerance = Real(1e-5);
            s.solver.linearSolver = v.linear;
            s.solver.linearIterations = 40;
            s.solver.newtonIterations = o.newtonIterations;
            World w(m, s);
            const int steps = int(std::lround((o.seconds > 0 ? o.seconds : duration) / double(s.dt)));
            double total = 0, sum = 0, worst = 0;
            int converged = 0, fallbacks = 0;
            for (int k = 0; k < steps; ++k) {
                w.step();
                total += w.profile().total;
                const double merit = double(w.solveStats().residualFinal);
                sum += merit;
                worst = std::max(worst, merit);
                converged += merit <= 2 * double(s.solver.ccp.tolerance);
                fallbacks += w.solveStats().ccpFallbacks;
            }
            if (reference.empty()) reference = w.state().pos;
            double distance = 0;
            for (int b = 0; b < m.bodyCount(); ++b) distance = std::max(distance, double(length(w.state().pos[b] - reference[b])));
            std::fprintf(f, "%s,%s,%d,%d,%.4e,%.4e,%d,%.3f,%.4e\n", scene, v.name, steps, converged, sum / steps, worst,
                         fallbacks, 1e3 * total / steps, distance);
            std::printf("%-13s %-13s %4d steps, %4d at or below 2e-5 m/s, merit mean %.3e max %.3e m/s, %5d fallbacks, "
                        "%7.2f ms/step, %.3e m from apgd-300\n",
                        scene, v.name, steps, converged, sum / steps, worst, fallbacks, 1e3 * total / steps, distance);
            std::fflush(stdout);
        }
    }
    std::fclose(f);
}

}  // namespace cs
