// Deformable bodies in the step, against closed forms and conservation laws: a cantilever against
// Euler-Bernoulli, the patch test, a free body's momenta, the energy of an undamped vibration,
// an activated element's free expansion against linear elasticity.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "tests/fem_test_util.h"

using namespace cs;
using namespace cs::femtest;

namespace {

WorldSettings quietSettings(Real dt) {
    WorldSettings s;
    s.dt = dt;
    s.solver.linearSolver = LinearSolverType::PCR;
    return s;
}

Vec3 linearMomentum(const Model& m, const State& s) {
    Vec3 p{0, 0, 0};
    for (int n = 0; n < m.femNodeCount(); ++n) p += m.femNodeMass[n] * s.femVel[n];
    return p;
}

Vec3 angularMomentum(const Model& m, const State& s) {
    Vec3 l{0, 0, 0};
    for (int n = 0; n < m.femNodeCount(); ++n) l += m.femNodeMass[n] * cross(s.femPos[n], s.femVel[n]);
    return l;
}

}  // namespace

// Euler-Bernoulli: a cantilever of length L under its weight q = rho g A per length deflects at
// the tip by q L^4 / (8 E I), I = b t^3 / 12. The static solve: one backward-Euler step from rest
// with a step h so long that the inertia term M dx / h^2 is negligible is the static problem
// linearized at the rest shape, f(x0) + K dx + M g = 0 (rows linearized at x0, fem_rows_hd.h),
// solved by the same Newton iteration and linear solver as every step (Newton damping 1: the
// bilateral rows are linear in lambda, one exact Newton step solves them).
TEST_CASE("fem physics: cantilever tip deflection against Euler-Bernoulli (static solve)") {
    // Euler-Bernoulli holds for any width b: the beam is b = t / 2 wide (2 cells) and t thick
    // (4 cells), L = 10 t long (40 cells): 320 cubes of 6 tets, 1920 tets.
    const Real L = 1, t = Real(0.1), rho = 1000, E = Real(1.5e8);
    const int cells = 40;
    Model model;
    FemBodyDesc d = blockDesc({L / 2, t / 4, t / 2}, cells, E, 0, FemMaterialType::CorotatedLinear);
    d.density = rho;
    d.pinned = nodesAt(d.mesh, 0, -L / 2);
    const std::vector<int> tip = nodesAt(d.mesh, 0, L / 2);
    addFem(model, d);
    WorldSettings s = quietSettings(100);
    s.solver.newtonIterations = 1;
    s.solver.damping = 1;
    s.solver.linearSolver = LinearSolverType::PCG;
    s.solver.linearIterations = 4000;
    s.solver.linearTolerance = Real(1e-10);
    s.solver.regularization = 0;
    World world(model, s);
    world.step();
    REQUIRE_FALSE(world.lastStepFailed());
    Real z = 0;
    for (int n : tip) z += world.state().femPos[n].z - model.femRestPos[n].z;
    const Real deflection = -z / tip.size();
    const Real g = length(s.gravity), b = t / 2, I = b * t * t * t / 12;
    const Real expected = rho * g * b * t * L * L * L * L / (8 * E * I);
    const std::vector<Real>& history = world.solveStats().linearResidual.at(0);
    MESSAGE("tip deflection " << deflection << " m, Euler-Bernoulli " << expected << " m (ratio " << deflection / expected
                              << "); " << world.solveStats().linearIterations << " PCG iterations, residual "
                              << history.front() << " -> " << history.back());
    CHECK(near(deflection, expected, Real(0.05)));
}

// Patch test: boundary nodes of an irregular mesh held at a uniform strain x = A X; the interior
// nodes, started elsewhere, must settle at A X and every tet at the same stress.
TEST_CASE("fem physics: patch test, a uniformly strained block takes a uniform stress") {
    for (FemMaterialType type : {FemMaterialType::CorotatedLinear, FemMaterialType::StableNeoHookean}) {
        Model model;
        FemBodyDesc d = blockDesc({Real(0.1), Real(0.1), Real(0.1)}, 4, Real(1e5), Real(0.3), type);
        std::mt19937 rng(7);
        std::uniform_real_distribution<Real> jitter(Real(-0.008), Real(0.008));   // cells of 0.05 m
        std::vector<int> boundary;
        for (int i = 0; i < (int)d.mesh.nodes.size(); ++i) {
            Vec3& p = d.mesh.nodes[i];
            const bool onBoundary = std::fabs(std::fabs(p.x) - 0.1) < 1e-9 || std::fabs(std::fabs(p.y) - 0.1) < 1e-9 ||
                                    std::fabs(std::fabs(p.z) - 0.1) < 1e-9;
            if (onBoundary) boundary.push_back(i);
            else p += Vec3{jitter(rng), jitter(rng), jitter(rng)};
        }
        d.pinned = boundary;
        addFem(model, d);
        WorldSettings s = quietSettings(Real(1) / 120);
        s.gravity = {0, 0, 0};
        World world(model, s);
        const Mat3 A{{{Real(1.02), Real(0.01), 0}, {0, Real(0.99), Real(0.005)}, {0, 0, Real(1.01)}}};
        for (int i = 0; i < model.femNodeCount(); ++i) {
            const bool pinned = model.femNodeInvMass[i] == 0;
            world.state().femPos[i] = pinned ? A * model.femRestPos[i] : model.femRestPos[i];
        }
        for (int step = 0; step < 600; ++step) world.step();
        MESSAGE("fastest node " << fastestFemNode(world.state().femVel) << " m/s");
        Real worst = 0;
        for (int i = 0; i < model.femNodeCount(); ++i)
            worst = std::fmax(worst, length(world.state().femPos[i] - A * model.femRestPos[i]));
        FemTetFields f;
        femTetFields(model, world.state(), f);
        Real lo = 1e30, hi = -1e30;
        for (Real v : f.vonMises) { lo = std::fmin(lo, v); hi = std::fmax(hi, v); }
        MESSAGE(std::string(type == FemMaterialType::CorotatedLinear ? "corotated" : "neo-Hookean")
                << ": largest node offset from A X " << worst << " m, von Mises " << lo << " .. " << hi << " Pa");
        CHECK(worst < 1e-6);
        CHECK(hi - lo < 1e-3 * hi);
    }
}

// Internal forces sum to zero (each row's node gradients add up to zero), so a free body keeps
// its linear momentum to round-off. Angular momentum: in both materials every row is a function of
// rotation-invariant measures (principal stretches and shears, fem_material_hd.h), so its node
// gradients carry no torque about the step-start nodes and, with x1 = x0 + h v1, angular momentum
// is kept to round-off too (fem_rows_hd.h). The block spins at 3 rad/s and is strained at random.
TEST_CASE("fem physics: a free body conserves linear and angular momentum") {
    for (FemMaterialType type : {FemMaterialType::StableNeoHookean, FemMaterialType::CorotatedLinear}) {
        Model model;
        FemBodyDesc d = blockDesc({Real(0.2), Real(0.1), Real(0.05)}, 4, Real(1e5), Real(0.4), type);
        addFem(model, d);
        WorldSettings s = quietSettings(Real(1) / 120);
        s.gravity = {0, 0, 0};
        World world(model, s);
        std::mt19937 rng(3);
        std::uniform_real_distribution<Real> u(-1, 1);
        for (int i = 0; i < model.femNodeCount(); ++i) {
            world.state().femVel[i] = Vec3{u(rng), u(rng), u(rng)} + cross(Vec3{0, 0, 3}, model.femRestPos[i]);
            world.state().femPos[i] += Real(0.01) * Vec3{u(rng), u(rng), u(rng)};
        }
        const Vec3 p0 = linearMomentum(model, world.state()), l0 = angularMomentum(model, world.state());
        for (int step = 0; step < 240; ++step) {
            world.step();
            REQUIRE_FALSE(world.lastStepFailed());
        }
        const Vec3 p1 = linearMomentum(model, world.state()), l1 = angularMomentum(model, world.state());
        const Real mass = 1000 * Real(0.4 * 0.2 * 0.1);
        const Real dp = length(p1 - p0) / mass, dl = length(l1 - l0) / length(l0);
        MESSAGE(std::string(type == FemMaterialType::CorotatedLinear ? "corotated" : "neo-Hookean") << ": |dp|/m " << dp
                << " m/s, |dL|/|L| " << dl << " after 2 s");
        CHECK(dp < 1e-12);
        CHECK(dl < 1e-12);
    }
}

// Undamped: a stretched free block vibrates (Y = 1e4 Pa: the axial mode at about 3 Hz). The
// time discretization is backward Euler ([NSN] eq. 45), which takes energy out of every mode
// (per step by 1 / (1 + (omega h)^2) for a harmonic oscillator) and never puts energy in. The
// band: E(t) <= E(0) (1 + 1e-9) at every step, and non-increasing step to step; the loss over
// 10 s is reported.
TEST_CASE("fem physics: undamped vibration, total energy over 10 s") {
    Model model;
    FemBodyDesc d = blockDesc({Real(0.2), Real(0.05), Real(0.05)}, 4, Real(1e4), Real(0.3), FemMaterialType::StableNeoHookean);
    addFem(model, d);
    WorldSettings s = quietSettings(Real(1) / 120);
    s.gravity = {0, 0, 0};
    World world(model, s);
    for (int i = 0; i < model.femNodeCount(); ++i) world.state().femPos[i].x *= Real(1.1);
    auto energy = [&]() { return world.kineticEnergy() + femElasticEnergy(model, world.state()); };
    const Real e0 = energy();
    Real highest = e0, last = e0, worstRise = 0;
    for (int step = 0; step < 1200; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
        const Real e = energy();
        worstRise = std::fmax(worstRise, (e - last) / e0);
        last = e;
        highest = std::fmax(highest, last);
        if (step % 240 == 239)
            MESSAGE("t=" << (step + 1) / 120 << " s: E/E0 = " << last / e0 << " (kinetic " << world.kineticEnergy()
                         << " J, elastic " << femElasticEnergy(model, world.state()) << " J; E0 " << e0 << " J)");
    }
    MESSAGE("largest rise between two steps: " << worstRise << " E0");
    CHECK(highest <= e0 * (1 + 1e-9));
    CHECK(worstRise < 1e-9);
    CHECK(last >= 0);
}

// Activation: a free element under an internal pressure a settles at tr(eps) = a / K, the
// linear-elastic answer (fem_material_hd.h); here a 1000 Pa pressure in a Y = 1e5 Pa cube.
TEST_CASE("fem physics: an activated free block expands by a / K") {
    for (FemMaterialType type : {FemMaterialType::CorotatedLinear, FemMaterialType::StableNeoHookean}) {
        Model model;
        FemBodyDesc d = blockDesc({Real(0.05), Real(0.05), Real(0.05)}, 2, Real(1e5), Real(0.3), type);
        d.activation.assign(d.mesh.tets.size(), 1);
        d.damping = Real(0.02);
        addFem(model, d);
        WorldSettings s = quietSettings(Real(1) / 120);
        s.gravity = {0, 0, 0};
        World world(model, s);
        const Real a = 1000;
        world.state().femActivation[0] = a;
        const Real v0 = totalVolume(model, world.state());
        for (int step = 0; step < 600; ++step) world.step();
        const Real strain = totalVolume(model, world.state()) / v0 - 1;
        const Real K = Real(1e5) / (3 * (1 - 2 * Real(0.3)));
        MESSAGE(std::string(type == FemMaterialType::CorotatedLinear ? "corotated" : "neo-Hookean") << ": J - 1 = " << strain
                << ", a / K = " << a / K);
        CHECK(near(strain, a / K, Real(0.03)));
    }
}
