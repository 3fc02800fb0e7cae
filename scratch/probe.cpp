// Probe: load a scene, step, print per-step energy and shape figures.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <string>
#include "engine/fem/fem_step.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"
using namespace cs;
int main(int argc, char** argv) {
    std::string scene = argc > 1 ? argv[1] : "fem_tomato_drop";
    int steps = argc > 2 ? atoi(argv[2]) : 180;
    int every = argc > 3 ? atoi(argv[3]) : 1;
    Model m; WorldSettings s; SceneInfo info; std::string err;
    if (!loadScene(scene, m, s, info, &err)) { fprintf(stderr, "%s\n", err.c_str()); return 2; }
    if (getenv("DT")) s.dt = atof(getenv("DT"));
    if (getenv("NEWTON")) s.solver.newtonIterations = atoi(getenv("NEWTON"));
    if (getenv("ITERS")) s.solver.linearIterations = atoi(getenv("ITERS"));
    if (getenv("NOWARM")) s.solver.warmStart = false;
    if (getenv("MINMAP")) s.solver.ncp = NcpFunction::MinimumMap;
    if (getenv("SUB")) s.substeps = atoi(getenv("SUB"));
    World w(m, s);
    const Real g = -s.gravity.z;
    auto energy = [&](Real& ke, Real& pe, Real& ee) {
        const State& st = w.state();
        ke = femKineticEnergy(w.model(), st); pe = 0;
        for (int n = 0; n < w.model().femNodeCount(); ++n) pe += w.model().femNodeMass[n] * g * st.femPos[n].z;
        ee = femElasticEnergy(w.model(), st);
    };
    Real ke, pe, ee; energy(ke, pe, ee);
    const Real e0 = ke + pe + ee;
    printf("step t zmin zmax vmax KE PE EE Etot-E0 resid newton minJ\n");
    for (int k = 1; k <= steps; ++k) {
        w.step();
        const State& st = w.state();
        Real zmin = 1e9, zmax = -1e9, vmax = 0;
        for (int n = 0; n < w.model().femNodeCount(); ++n) {
            zmin = std::fmin(zmin, st.femPos[n].z); zmax = std::fmax(zmax, st.femPos[n].z);
            vmax = std::fmax(vmax, length(st.femVel[n]));
        }
        energy(ke, pe, ee);
        std::vector<Real> J, vm, ms; w.femTetFields(J, vm, ms);
        Real minJ = 1e9; for (Real v : J) minJ = std::fmin(minJ, v + 1);
        if (getenv("PERBODY") && k % every == 0) {
            for (size_t b = 0; b < w.model().femBodies.size(); ++b) {
                Real v = 0, mj = 1e9;
                for (int n = 0; n < w.model().femNodeCount(); ++n) if (w.model().femNodeBody[n] == (int)b) v = std::fmax(v, length(st.femVel[n]));
                for (int t = 0; t < w.model().femTetCount(); ++t) if (w.model().femTetBody[t] == (int)b) mj = std::fmin(mj, J[t] + 1);
                printf("   body %zu vmax %.3f minJ %.3f\n", b, v, mj);
            }
        }
        if (k % every == 0)
            printf("%d %.4f %.4f %.4f %.3f %.4f %.4f %.4f %+.4f %.2e %d %.3f\n", k, st.time, zmin, zmax, vmax, ke, pe, ee,
                   ke + pe + ee - e0, w.solveStats().residualFinal, w.solveStats().newtonIterations, minJ);
    }
}
