// PLUS impact model ([PLUS] Uchida, Sherman, Delp 2015): closed forms of figure 2 and eqs.
// 2.13-2.14, energy and momentum laws, Newton's cradle (table 2), symmetry and load spreading
// (example 2), friction cones, the sliding-to-rolling transitions of example 1, and joints.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "engine/contact/plus_examples.h"
#include "engine/contact/plus_impact.h"

using namespace cs;

namespace {

std::vector<Spatial> after(const ImpactProblem& p, const ImpactResult& r) {
    std::vector<Spatial> u = p.velocity;
    for (size_t b = 0; b < u.size(); ++b) u[b] = u[b] + r.deltaVelocity[b];
    return u;
}

PlusSettings paperSettings(Real thetaMax = Real(0.01)) {
    PlusSettings s;   // table A1
    s.captureVelocity = Real(0.01);
    s.plasticVelocity = Real(0.1);
    s.transitionVelocity = Real(0.1);
    s.maxDirectionChange = thetaMax;
    return s;
}

// First phase in which the single point of example 1 rolls (-1: it never does).
int firstRollingPhase(const ImpactResult& r) {
    for (const ImpactInterval& it : r.trace)
        if (it.state[0] == int(SlipState::Rolling)) return it.phase[0];
    return -1;
}

}  // namespace

TEST_CASE("PLUS: coefficient of restitution of figure 2") {
    const Real cap = Real(0.01), pl = Real(0.1), emin = Real(0.4);
    CHECK(plusRestitution(Real(0.005), cap, pl, emin) == 0);          // captured
    CHECK(plusRestitution(cap, cap, pl, emin) == doctest::Approx(1));
    CHECK(plusRestitution(Real(0.055), cap, pl, emin) == doctest::Approx(0.7));   // halfway: (1 + 0.4) / 2
    CHECK(plusRestitution(Real(3), cap, pl, emin) == doctest::Approx(emin));
}

TEST_CASE("PLUS: interval step lengths alpha_CP (eq. 2.13) and alpha_DC (eq. 2.14)") {
    int reason = 0;
    // v = (1, 0.05), d = (-2, 0): the closest point to the origin is at alpha = 0.5, |P| = 0.05 < 0.1.
    Real a = plusStepLength(1, Real(0.05), -2, 0, Real(0.1), Real(0.01), Real(1e-6), &reason);
    CHECK(reason == 1);
    CHECK(a == doctest::Approx(0.5));
    // v = (1, 0), d = (0, 1): direction turns; alpha_DC gives exactly theta_max.
    const Real theta = Real(0.2);
    a = plusStepLength(1, 0, 0, 1, Real(0.1), theta, Real(1e-6), &reason);
    CHECK(reason == 2);
    CHECK(std::atan2(a * 1, Real(1)) == doctest::Approx(theta));
    // A general case: the angle between v and v + alpha d equals theta_max.
    const Real vx = 2, vy = -1, dx = Real(-0.5), dy = Real(1.5);
    a = plusStepLength(vx, vy, dx, dy, Real(0.1), theta, Real(1e-6), &reason);
    REQUIRE(reason == 2);
    Real ex = vx + a * dx, ey = vy + a * dy;
    Real c = (vx * ex + vy * ey) / (std::hypot(vx, vy) * std::hypot(ex, ey));
    CHECK(std::acos(c) == doctest::Approx(theta).epsilon(1e-9));
    // No turn at all: the whole step.
    CHECK(plusStepLength(2, 0, -1, 0, Real(0.1), theta, Real(1e-6), &reason) == 1);
}

TEST_CASE("PLUS: Newton's cradle transfers the velocity in five rounds (table 2)") {
    PlusExample ex = cradleExample(5, 2, 1);
    ImpactResult r = solvePlusImpact(ex.problem, paperSettings(), true);
    std::vector<Spatial> u = after(ex.problem, r);
    for (int b = 0; b < 4; ++b) CHECK(u[b].lin.x == doctest::Approx(0).epsilon(1e-9));
    CHECK(u[4].lin.x == doctest::Approx(-2).epsilon(1e-9));
    Real p0 = 0, p1 = 0;
    for (size_t b = 0; b < u.size(); ++b) {
        p0 += ex.problem.velocity[b].lin.x;
        p1 += u[b].lin.x;
    }
    CHECK(p1 == doctest::Approx(p0));
    CHECK(impactKineticEnergy(ex.problem, u) == doctest::Approx(impactKineticEnergy(ex.problem, ex.problem.velocity)));
    // Table 2: pair k compresses in round k and expands in round k + 1, observing otherwise.
    REQUIRE(r.rounds == 5);
    REQUIRE(r.trace.size() == 5);   // one interval per round (frictionless: no sliding limits)
    for (int round = 0; round < 5; ++round)
        for (int k = 0; k < 4; ++k) {
            int expect = round == k ? int(ImpactPhase::Compressing)
                         : round == k + 1 ? int(ImpactPhase::Expanding) : int(ImpactPhase::Observing);
            CHECK(r.trace[round].phase[k] == expect);
        }
}

TEST_CASE("PLUS: an impact never adds energy (COR <= 1), cones hold, no point approaches") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> U(-1, 1), P(0, 1);
    for (int trial = 0; trial < 40; ++trial) {
        Quat q = normalize(Quat{Real(U(rng)), Real(U(rng)), Real(U(rng)), Real(U(rng))});
        if (trial % 4 == 0) q = quatIdentity();   // four simultaneous points
        Vec3 v{Real(4 * U(rng)), Real(4 * U(rng)), Real(-0.5 - 8 * P(rng))};
        Real mu = Real(0.6 * P(rng)), e = Real(P(rng));
        PlusExample ex = brickExample(q, v, mu, e, Real(1e-6));
        ex.problem.velocity[0].ang = Vec3{Real(3 * U(rng)), Real(3 * U(rng)), Real(3 * U(rng))};
        PlusSettings s = paperSettings(Real(0.05));
        ImpactResult r = solvePlusImpact(ex.problem, s, true);
        CAPTURE(trial);
        CHECK(r.converged);
        Real e0 = impactKineticEnergy(ex.problem, ex.problem.velocity);
        Real e1 = impactKineticEnergy(ex.problem, after(ex.problem, r));
        CHECK(e1 <= e0 * (1 + 1e-9));
        for (size_t k = 0; k < ex.problem.points.size(); ++k) {
            const Vec3& pi = r.impulse[k];
            CHECK(pi.z >= -1e-9);
            CHECK(std::hypot(pi.x, pi.y) <= mu * pi.z * (1 + 1e-7) + 1e-9);
            CHECK(r.velocityEnd[k].z >= -1e-7);
        }
        // Each interval's own impulse lies in its cone (not only the sum).
        std::vector<Vec3> prev(ex.problem.points.size(), Vec3{0, 0, 0});
        for (const ImpactInterval& it : r.trace)
            for (size_t k = 0; k < prev.size(); ++k) {
                Vec3 d = it.impulse[k] - prev[k];
                CHECK(std::hypot(d.x, d.y) <= mu * d.z * (1 + 1e-7) + 1e-9);
                prev[k] = it.impulse[k];
            }
    }
}

TEST_CASE("PLUS: flat brick (example 2) keeps its symmetry and spreads load") {
    PlusExample ex = brickExample(brickExample2Orientation(), Vec3{-2, 0, Real(-8.84)}, Real(0.2), Real(0.414));
    REQUIRE(ex.problem.points.size() == 4);
    ImpactResult r = solvePlusImpact(ex.problem, paperSettings(), true);
    const Real tol = Real(1e-9);
    for (int k = 0; k < 4; ++k) {
        // The mirror image of point k across the plane of motion y = 0.
        int m = -1;
        for (int j = 0; j < 4; ++j)
            if (std::fabs(ex.pointWorld[j].x - ex.pointWorld[k].x) < 1e-9 &&
                std::fabs(ex.pointWorld[j].y + ex.pointWorld[k].y) < 1e-9)
                m = j;
        REQUIRE(m >= 0);
        REQUIRE(m != k);
        const Vec3 &a = r.impulse[k], &b = r.impulse[m];
        CHECK(a.x == doctest::Approx(b.x).epsilon(tol));
        CHECK(a.y == doctest::Approx(-b.y).epsilon(tol));
        CHECK(a.z == doctest::Approx(b.z).epsilon(tol));
    }
    // No lateral drift or yaw: the y impulses cancel and the brick keeps moving in its plane.
    std::vector<Spatial> u = after(ex.problem, r);
    CHECK(std::fabs(u[0].lin.y) < 1e-9);
    CHECK(std::fabs(u[0].ang.x) < 1e-9);
    CHECK(std::fabs(u[0].ang.z) < 1e-9);

    // Frictionless and straight down: the four points share the load equally (minimum norm),
    // total pi_z = m v (1 + e).
    PlusExample down = brickExample(brickExample2Orientation(), Vec3{0, 0, -3}, 0, Real(0.5));
    ImpactResult rd = solvePlusImpact(down.problem, paperSettings(), false);
    for (int k = 0; k < 4; ++k) CHECK(rd.impulse[k].z == doctest::Approx(2 * 3 * 1.5 / 4).epsilon(1e-9));
    CHECK(after(down.problem, rd)[0].lin.z == doctest::Approx(1.5));
}

TEST_CASE("PLUS: example 1 rolls in the phases the paper reports (figure 8)") {
    const Real mus[3] = {Real(0.125), Real(0.225), Real(0.325)}, emins[3] = {Real(0.392), Real(0.387), Real(0.373)};
    int phases[3];
    for (int i = 0; i < 3; ++i) {
        PlusExample ex = brickExample(brickExample1Orientation(), Vec3{-5, 0, Real(-5.74)}, mus[i], emins[i]);
        REQUIRE(ex.problem.points.size() == 1);
        ImpactResult r = solvePlusImpact(ex.problem, paperSettings(), true);
        phases[i] = firstRollingPhase(r);
        // The sliding direction turns: more than one interval in the first sliding phase.
        CHECK(r.intervals > 10);
        // Rolling at the end means no tangential velocity left (eq. 2.7).
        if (phases[i] >= 0) CHECK(std::hypot(r.velocityEnd[0].x, r.velocityEnd[0].y) < 1e-9);
    }
    CHECK(phases[0] == -1);                               // slides throughout
    CHECK(phases[1] == int(ImpactPhase::Expanding));      // rolls in expansion
    CHECK(phases[2] == int(ImpactPhase::Compressing));    // rolls in compression
}

TEST_CASE("PLUS: a jointed body (eq. 2.1b) keeps its joint velocity constraint through the impact") {
    // One brick pinned by a ball joint at a world point above its COM, one vertex hitting the ground.
    PlusExample ex = brickExample(brickExample1Orientation(), Vec3{-3, 0, -2}, Real(0.3), Real(0.5));
    const Vec3 x = ex.state.pos[0];
    const Vec3 pin = x + Vec3{Real(0.2), 0, Real(0.5)};
    const Vec3 r = pin - x;
    // Start with a velocity field that respects the pin: u = w x (x - pin) with w = (0, 3, 1).
    Vec3 w{0, 3, 1};
    if (dot(cross(w, ex.problem.points[0].rA - r), Vec3{0, 0, 1}) > 0) w = -w;   // the vertex approaches
    ex.problem.velocity[0] = Spatial{cross(w, -r), w};
    for (Vec3 e : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}}) {
        ImpactBilateral b;
        b.bodyA = 0;
        b.jacobianA = Spatial{e, cross(r, e)};   // e . (v + w x r) = 0
        ex.problem.bilateral.push_back(b);
    }
    Real vz = dot(ex.problem.velocity[0].lin + cross(ex.problem.velocity[0].ang, ex.problem.points[0].rA), Vec3{0, 0, 1});
    REQUIRE(vz < 0);
    ImpactResult res = solvePlusImpact(ex.problem, paperSettings(Real(0.05)), false);
    std::vector<Spatial> u = after(ex.problem, res);
    Vec3 pinVel = u[0].lin + cross(u[0].ang, r);
    CHECK(length(pinVel) < 1e-9);
    CHECK(res.velocityEnd[0].z >= -1e-9);
    CHECK(res.impulse[0].z > 0);
    CHECK(impactKineticEnergy(ex.problem, u) <= impactKineticEnergy(ex.problem, ex.problem.velocity) * (1 + 1e-9));
}

TEST_CASE("PLUS: the reduced interval solve equals table 1's whole system (minimum-norm impulse)") {
    // Each interval solves for the free unknowns only (plus_impact.cpp, solveReduced); the
    // reference solves the whole (3 points + bilateral)-square system of table 1. Random bricks
    // with spin (sliding, rolling, impending slip, several points within a wide tolerance, some
    // observing), a pinned brick (bilateral rows) and the cradle (observers, expansion).
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> U(-1, 1), P(0, 1);
    std::vector<ImpactProblem> problems;
    for (int trial = 0; trial < 30; ++trial) {
        Quat q = normalize(Quat{Real(U(rng)), Real(U(rng)), Real(U(rng)), Real(U(rng))});
        if (trial % 3 == 0) q = brickExample2Orientation();
        Vec3 v{Real(3 * U(rng)), Real(3 * U(rng)), Real(-0.5 - 6 * P(rng))};
        PlusExample ex = brickExample(q, v, Real(0.8 * P(rng)), Real(P(rng)), Real(0.05));
        ex.problem.velocity[0].ang = Vec3{Real(4 * U(rng)), Real(4 * U(rng)), Real(4 * U(rng))};
        if (trial % 5 == 1) {   // pinned: three bilateral rows
            const Vec3 r{Real(0.1), 0, Real(0.5)};
            for (Vec3 e : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}}) {
                ImpactBilateral b;
                b.bodyA = 0;
                b.jacobianA = Spatial{e, cross(r, e)};
                ex.problem.bilateral.push_back(b);
            }
            ex.problem.velocity[0].lin = cross(ex.problem.velocity[0].ang, -r);
        }
        problems.push_back(ex.problem);
    }
    problems.push_back(cradleExample(5, 2, 1).problem);
    problems.push_back(cradleExample(7, 3, Real(0.6)).problem);
    int compared = 0, withObservers = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
        const ImpactProblem& p = problems[i];
        const PlusSettings s = paperSettings(Real(0.05));
        const ImpactResult full = solvePlusImpact(p, s, true, true), reduced = solvePlusImpact(p, s, true, false);
        CAPTURE(i);
        REQUIRE(full.converged);
        CHECK(reduced.rounds == full.rounds);
        CHECK(reduced.intervals == full.intervals);
        Real scale = 0;
        for (const Vec3& pi : full.impulse) scale = std::max(scale, length(pi));
        for (size_t k = 0; k < p.points.size(); ++k) CHECK(length(reduced.impulse[k] - full.impulse[k]) <= 1e-9 * (1 + scale));
        bool observer = false;
        for (const ImpactInterval& it : full.trace)
            for (int ph : it.phase) observer = observer || ph == int(ImpactPhase::Observing);
        withObservers += observer;
        ++compared;
    }
    CHECK(compared == 32);
    CHECK(withObservers >= 5);   // the reduction has something to drop
}
