// Figures, not assertions (skipped by default; run with
//   ./build/cs_tests -tc='fem bench*' --no-skip):
// a TetGen ball of ~1k and ~10k tets resting on the ground, Newton and linear iterations per
// step and ms per step (one thread unless OMP_NUM_THREADS says otherwise; a shared machine's
// times are noisy).
#include <doctest/doctest.h>

#include <chrono>

#include "tests/fem_test_util.h"

using namespace cs;
using namespace cs::femtest;

TEST_CASE("fem bench: a ball resting on the ground" * doctest::skip()) {
    for (int resolution : {2, 7}) {
        Model model;
        addGround(model);
        FemBodyDesc d;
        d.name = "ball";
        std::string error;
        REQUIRE(makeSphereTetMesh(Real(0.2), 3, resolution, d.mesh, &error));
        d.pose.pos = {0, 0, Real(0.2)};
        d.youngs = Real(1e5);
        d.poisson = Real(0.45);
        d.damping = Real(0.01);
        d.type = FemMaterialType::StableNeoHookean;
        addFem(model, d);
        WorldSettings s;
        World world(model, s);
        const int settle = 120, measured = 60;
        for (int step = 0; step < settle; ++step) world.step();
        long newton = 0, linear = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (int step = 0; step < measured; ++step) {
            world.step();
            newton += world.solveStats().newtonIterations;
            linear += world.solveStats().linearIterations;
        }
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        int contacts = 0;
        for (const Contact& c : world.contacts()) contacts += c.femNode >= 0 ? 1 : 0;
        MESSAGE(model.femTetCount() << " tets, " << model.femNodeCount() << " nodes, " << contacts
                << " node contacts: Newton " << double(newton) / measured << " / step, linear "
                << double(linear) / measured << " / step, " << ms / measured << " ms / step (PCR, 8 x 40, h = 1/120), residual "
                << world.solveStats().residualFinal << " m/s, KE " << world.kineticEnergy() << " J");
    }
}
