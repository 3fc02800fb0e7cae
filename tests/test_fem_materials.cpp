// The two materials in the step under large compression: volume kept by the stable neo-Hookean
// material, lost by the corotated linear one ([NSN] section 9.2.2 and figure 13), and no element
// inverted under a 90% squeeze.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/fem_test_util.h"

using namespace cs;
using namespace cs::femtest;

namespace {

// A cube whose bottom and top faces are held (bonded platens) at z = -H/2 and z = -H/2 + ratio H,
// the interior started at the affine squeeze and left to settle. Returns the world.
World squeezedCube(FemMaterialType type, Real poisson, Real ratio, Model& model) {
    const Real half = Real(0.05);
    FemBodyDesc d = blockDesc({half, half, half}, 4, Real(1e5), poisson, type);
    d.damping = Real(0.02);
    std::vector<int> bottom = nodesAt(d.mesh, 2, -half), top = nodesAt(d.mesh, 2, half);
    d.pinned = bottom;
    d.pinned.insert(d.pinned.end(), top.begin(), top.end());
    addFem(model, d);
    WorldSettings s;
    s.gravity = {0, 0, 0};
    World world(model, s);
    for (int n = 0; n < model.femNodeCount(); ++n) {
        Vec3& p = world.state().femPos[n];
        p.z = -half + ratio * (p.z + half);
    }
    return world;
}

}  // namespace

TEST_CASE("fem materials: 50% compression at nu = 0.495, stable neo-Hookean keeps the volume, linear loses it") {
    Real change[2];
    for (int k = 0; k < 2; ++k) {
        const FemMaterialType type = k == 0 ? FemMaterialType::StableNeoHookean : FemMaterialType::CorotatedLinear;
        Model model;
        World world = squeezedCube(type, Real(0.495), Real(0.5), model);
        const Real v0 = Real(0.1 * 0.1 * 0.1);
        for (int step = 0; step < 360; ++step) {
            world.step();
            REQUIRE_FALSE(world.lastStepFailed());
        }
        change[k] = totalVolume(model, world.state()) / v0 - 1;
        MESSAGE(std::string(k == 0 ? "stable neo-Hookean" : "corotated linear") << ": volume change " << 100 * change[k]
                << "% (the affine squeeze: -50%), fastest node " << fastestFemNode(world.state().femVel) << " m/s");
    }
    CHECK(std::fabs(change[0]) < 0.01);
    CHECK(std::fabs(change[1]) > 0.05);
}

TEST_CASE("fem materials: no inverted element under a 90% squeeze (stable neo-Hookean)") {
    Model model;
    World world = squeezedCube(FemMaterialType::StableNeoHookean, Real(0.45), Real(0.1), model);
    Real smallest = 1e30;
    for (int step = 0; step < 360; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
        if (step % 10 != 9) continue;
        std::vector<Real> j, vm, stretch;
        world.femTetFields(j, vm, stretch);
        for (Real v : j) smallest = std::fmin(smallest, v + 1);
    }
    MESSAGE("smallest J over the squeeze: " << smallest);
    CHECK(smallest > 0);
}
