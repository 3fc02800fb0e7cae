#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <string>
#include "engine/fem/fem_step.h"
#include "engine/fem/fem_material_hd.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"
using namespace cs;
int main(int argc, char** argv) {
    std::string scene = argc > 1 ? argv[1] : "fem_extension";
    int steps = argc > 2 ? atoi(argv[2]) : 120;
    Model m; WorldSettings s; SceneInfo info; std::string err;
    if (!loadScene(scene, m, s, info, &err)) { fprintf(stderr, "%s\n", err.c_str()); return 2; }
    World w(m, s);
    for (int k = 1; k <= steps; ++k) {
        w.step();
        const Model& md = w.model(); const State& st = w.state();
        Real worst = 1e9, worstShear = 1e9; Vec3 ws{0,0,0}; Vec3 wc{0,0,0}; Real vmax = 0;
        for (int n = 0; n < md.femNodeCount(); ++n) if (md.femBodies[md.femNodeBody[n]].material.type == FemMaterialType::StableNeoHookean) vmax = std::fmax(vmax, length(st.femVel[n]));
        for (int t = 0; t < md.femTetCount(); ++t) {
            const FemMaterial& mat = md.femBodies[md.femTetBody[t]].material;
            if (mat.type != FemMaterialType::StableNeoHookean) continue;
            const auto& tet = md.femTets[t];
            Mat3 F = deformationGradient(md.femTetRest[t], st.femPos[tet[0]], st.femPos[tet[1]], st.femPos[tet[2]], st.femPos[tet[3]]);
            Mat3 U, V, N, Q; Vec3 sv, g, lam; svd3(F, U, sv, V);
            neoHookeanStretchDerivatives(mat, sv, 0, g, N); symmetricEigen(N, lam, Q);
            Real lmin = std::fmin(lam.x, std::fmin(lam.y, lam.z)) / (mat.mu / 2);
            if (lmin < worst) { worst = lmin; ws = sv; wc = 0.25*(md.femRestPos[tet[0]]+md.femRestPos[tet[1]]+md.femRestPos[tet[2]]+md.femRestPos[tet[3]]); }
            Real C1, D1, al; neoHookeanConstants(mat, C1, D1, al);
            const Real J = sv.x*sv.y*sv.z;
            for (int kk = 0; kk < 3; ++kk) worstShear = std::fmin(worstShear, (2*C1 - 2*D1*(J-al)*sv[kk]) / C1);
        }
        if (k % (getenv("EVERY") ? atoi(getenv("EVERY")) : 5) == 0 && k >= (getenv("FROM") ? atoi(getenv("FROM")) : 0)) printf("%d vmax %.3f at %.3f %.3f %.3f resid %.2e  min eig/C1 %.2f at s %.3f %.3f %.3f   min shear k/C1 %.2f\n", k, vmax, wc.x, wc.y, wc.z, w.solveStats().residualFinal, worst, ws.x, ws.y, ws.z, worstShear);
    }
}
