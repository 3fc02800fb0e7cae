// Sequential impulses (SolveMethod::Pgs, engine/solver/pgs_step.h) against closed forms and the
// Newton method:
//  - free fall before contact: one symplectic Euler step per world step, z_n = z0 - g h^2 n (n + 1) / 2;
//  - a cube at rest on a plane: the split impulse takes its landing overlap out (below 1% of the
//    one-step fall g h^2), and it does not drift;
//  - a slab on a ramp sticks below tan(theta) = mu and slides above (threshold within 2%), sliding at
//    a = g (sin theta - mu cos theta), and the same distance as the Newton method's within 3%;
//  - a resting stack of five cubes holds: its drift and overlaps bounded, smaller with more sweeps;
//  - a box pendulum on a revolute joint swings at the compound pendulum's period, anchor held;
//  - the drag brings a box to its target; the Baumgarte mode (no split impulse) holds a cube too;
//  - scenes it cannot run are refused in one line; the result does not depend on the thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "engine/model_builder.h"
#include "engine/solver/pgs_step.h"
#include "engine/world.h"
#include "tests/relax_test_util.h"

using namespace cs;
using cs::test::addBox;
using cs::test::addGround;

namespace {

const Real g = Real(9.81);

WorldSettings pgsSettings() {
    WorldSettings s;
    s.solver.method = SolveMethod::Pgs;
    return s;
}

}  // namespace

TEST_CASE("pgs: free fall before contact is one symplectic Euler step per world step") {
    Model m;
    addGround(m);
    const int b = addBox(m, "box", {Real(0.5), Real(0.5), Real(0.5)}, {0, 0, 3}, 1);
    WorldSettings s = pgsSettings();
    World w(m, s);
    const int n = 60;   // 0.5 s: falls 1.23 m, still 1.27 m above the ground
    for (int i = 0; i < n; ++i) w.step();
    const Real h = s.dt;
    CHECK(w.state().pos[b].z == doctest::Approx(double(3 - g * h * h * n * (n + 1) / 2)).epsilon(1e-12));
    CHECK(w.state().linVel[b].z == doctest::Approx(double(-g * h * n)).epsilon(1e-12));
    const Real t = n * h;
    CHECK(std::fabs(w.state().pos[b].z - (3 - g * t * t / 2)) < g * t * h);
}

TEST_CASE("pgs: a cube at rest on a plane keeps its overlap below 1% of g h^2 and does not drift") {
    for (bool split : {true, false}) {
        Model m;
        addGround(m);
        const Real half = Real(0.5);
        const int b = addBox(m, "box", {half, half, half}, {0, 0, half + Real(0.001)}, 10);
        WorldSettings s = pgsSettings();
        s.solver.pgs.splitImpulse = split;
        World w(m, s);
        for (int i = 0; i < 120; ++i) w.step();
        const Vec3 at1 = w.state().pos[b];
        Real deepest = 0;
        for (int i = 0; i < 120; ++i) {
            w.step();
            deepest = std::fmax(deepest, w.maxPenetration());
        }
        const Real fall = g * s.dt * s.dt;   // how far one step of gravity moves a free body: 0.68 mm
        CAPTURE(split);
        CAPTURE(deepest);
        CHECK(deepest < Real(0.01) * fall);
        CHECK(std::fabs(half - w.state().pos[b].z) < Real(0.01) * fall);
        CHECK(std::hypot(w.state().pos[b].x, w.state().pos[b].y) < 1e-4);
        CHECK(length(w.state().pos[b] - at1) < 1e-6);
        CHECK(length(w.state().linVel[b]) < 1e-6);
        CHECK(w.failedSteps() == 0);
    }
}

TEST_CASE("pgs: a slab on a ramp sticks below tan(theta) = mu, slides above it as the closed form and as Newton") {
    // As tests/test_soft_step.cpp: a 0.4 x 0.4 x 0.1 m slab of 1 kg on the ground tilted by theta,
    // mixed mu = sqrt(1 * mu^2) = mu. 1 s from rest at tan(theta) / mu = 0.98, 1.02 and 1.2.
    for (Real mu : {Real(0.3), Real(0.6)}) {
        for (Real ratio : {Real(0.98), Real(1.02), Real(1.2)}) {
            const Real theta = std::atan(ratio * mu);
            Model m;
            addGround(m, theta);
            const Quat q = quatFromAxisAngle({0, 1, 0}, theta);
            const int b = addBox(m, "slab", {Real(0.2), Real(0.2), Real(0.05)}, Real(0.05) * rotate(q, {0, 0, 1}), 1,
                                 mu * mu, q);
            const Vec3 down = rotate(q, {1, 0, 0});
            const int steps = 120;
            Real slide[2];
            for (int k = 0; k < 2; ++k) {
                WorldSettings s = pgsSettings();
                if (k == 1) s.solver.method = SolveMethod::Newton;
                World w(m, s);
                const Vec3 start = w.state().pos[b];
                for (int i = 0; i < steps; ++i) w.step();
                slide[k] = dot(w.state().pos[b] - start, down);
            }
            const Real t = steps * WorldSettings{}.dt;
            const Real a = std::fmax(Real(0), g * (std::sin(theta) - mu * std::cos(theta)));
            CAPTURE(mu);
            CAPTURE(ratio);
            CAPTURE(slide[0]);
            CAPTURE(slide[1]);
            if (ratio < 1) {
                CHECK(std::fabs(slide[0]) < 1e-4);
                CHECK(std::fabs(slide[1]) < 1e-4);
            } else {
                CHECK(slide[0] == doctest::Approx(double(a * t * t / 2)).epsilon(0.05));
                CHECK(slide[0] == doctest::Approx(double(slide[1])).epsilon(0.03));
            }
        }
    }
}

TEST_CASE("pgs: a resting stack of five boxes holds, its top's drift bounded and shrinking with the iterations") {
    // Five 100 kg cubes. Sequential impulses do not converge on a stack in 10 sweeps: the corners'
    // normal impulses stay uneven and the stack leans and creeps sideways (measured: about 9 mm in
    // 4 s at 10 sweeps, under 0.5 mm at 50). Bounds: the drift over the last second, the deepest
    // overlap (split impulse) and the top's sideways travel, each falling as the sweeps rise.
    struct Case {
        int iterations;
        Real sideways, creep, deepest;   // m: bounds over 4 s, over the last second, overlap
    };
    for (Case k : {Case{10, Real(0.02), Real(3e-3), Real(3e-4)}, Case{50, Real(1e-3), Real(5e-5), Real(1e-5)}}) {
        Model m;
        addGround(m);
        const Real half = Real(0.5), gap = Real(1e-4);
        const int n = 5;
        int top = -1;
        for (int i = 0; i < n; ++i)
            top = addBox(m, "box" + std::to_string(i), {half, half, half}, {0, 0, half + 2 * half * i + gap * (i + 1)}, 100);
        WorldSettings s = pgsSettings();
        s.solver.pgs.iterations = s.solver.pgs.splitIterations = k.iterations;
        World w(m, s);
        const Vec3 start = w.state().pos[top];
        for (int i = 0; i < 360; ++i) w.step();
        const Vec3 at3 = w.state().pos[top];
        Real deepest = 0;
        for (int i = 0; i < 120; ++i) {
            w.step();
            deepest = std::fmax(deepest, w.maxPenetration());
        }
        const Vec3 at4 = w.state().pos[top];
        const Real sideways = std::hypot(at4.x - start.x, at4.y - start.y);
        CAPTURE(k.iterations);
        CAPTURE(deepest);
        CAPTURE(sideways);
        CAPTURE(length(at4 - at3));
        CAPTURE(start.z - at4.z);
        CHECK(std::fabs(start.z - at4.z) < n * gap + deepest * n + sideways);   // sits on its cubes: no sinking through
        CHECK(deepest < k.deepest);
        CHECK(sideways < k.sideways);
        CHECK(length(at4 - at3) < k.creep);
        CHECK(w.failedSteps() == 0);
    }
}

TEST_CASE("pgs: a box pendulum on a revolute joint swings at the compound pendulum's period") {
    // As tests/test_soft_step.cpp: T = 2 pi sqrt(I_p / (m g d)) (1 + theta0^2 / 16).
    Model m;
    const Vec3 pivot{0, 0, 2};
    const Real d = Real(0.5), theta0 = Real(0.1);
    const Quat q = quatFromAxisAngle({1, 0, 0}, theta0);
    const int b = addBox(m, "bob", {Real(0.05), Real(0.05), d}, pivot + rotate(q, {0, 0, -d}), 3, Real(0.5), q);
    Joint j;
    j.type = JointType::Revolute;
    j.bodyA = -1;
    j.bodyB = b;
    std::string err;
    REQUIRE_MESSAGE(addJoint(m, j, pivot, {1, 0, 0}, &err) >= 0, err);
    World w(m, pgsSettings());
    const Real ip = (Real(0.01) + 1) / 12 + d * d;
    const Real period = Real(2 * M_PI) * std::sqrt(ip / (g * d)) * (1 + theta0 * theta0 / 16);
    Real last = w.state().pos[b].y, lastTime = 0, first = -1, latest = -1, anchorError = 0;
    int crossings = 0;
    for (int i = 1; i <= 840; ++i) {
        w.step();
        const Real y = w.state().pos[b].y, t = i * w.settings.dt;
        if (last < 0 && y >= 0) {
            const Real at = lastTime + (t - lastTime) * (-last) / (y - last);
            if (first < 0) first = at;
            latest = at;
            ++crossings;
        }
        last = y;
        lastTime = t;
        const Vec3 end = w.state().pos[b] + rotate(w.state().rot[b], w.model().joints[0].anchorB);
        anchorError = std::fmax(anchorError, length(end - pivot));
    }
    REQUIRE(crossings >= 3);
    const Real measured = (latest - first) / (crossings - 1);
    CAPTURE(period);
    CAPTURE(anchorError);
    CHECK(measured == doctest::Approx(double(period)).epsilon(0.01));
    CHECK(anchorError < 1e-3);
}

TEST_CASE("pgs: the drag brings a box to its target") {
    Model m;
    const int b = addBox(m, "box", {Real(0.5), Real(0.5), Real(0.5)}, {0, 0, 1}, 2);
    WorldSettings s = pgsSettings();
    s.gravity = {0, 0, 0};
    World w(m, s);
    w.setDrag(b, {0, 0, 0}, {Real(0.5), 0, 1});
    for (int i = 0; i < 360; ++i) w.step();
    CHECK(length(w.state().pos[b] - Vec3{Real(0.5), 0, 1}) < 1e-3);
    CHECK(length(w.state().linVel[b]) < 1e-3);
}

TEST_CASE("pgs: scenes it does not handle are refused in one line; the method's name") {
    Model m;
    addGround(m);
    m.couplings.push_back(JointCoupling{});
    std::string why;
    CHECK_FALSE(pgsStepSupports(m, pgsSettings(), &why));
    CHECK(why.find("--method pgs") != std::string::npos);
    CHECK(why.find("coupling") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
    SolveMethod method;
    REQUIRE(parseSolveMethodName("pgs", method));
    CHECK(method == SolveMethod::Pgs);
    for (SolveMethod k : kSolveMethods) {   // every method's name reads back as itself
        REQUIRE(parseSolveMethodName(solveMethodName(k), method));
        CHECK(method == k);
    }
    CHECK(kSolveMethodCount == 3);
}

TEST_CASE("pgs: the same bits with 1, 2 and 3 threads") {
#if defined(_OPENMP)
    // 65 x 65 boxes on the ground: one colour of 4,225 manifolds, above the host executor's
    // parallel threshold (as tests/test_soft_step.cpp).
    Model m;
    addGround(m);
    const int side = 65;
    for (int i = 0; i < side; ++i)
        for (int k = 0; k < side; ++k) {
            const Real tilt = Real(0.02) * Real((i * 7 + k * 13) % 11 - 5);
            addBox(m, "b", {Real(0.1), Real(0.1), Real(0.1)}, {Real(0.3) * i, Real(0.3) * k, Real(0.12)}, 1, Real(0.5),
                   quatFromAxisAngle(normalize(Vec3{1, Real(0.5), 0}), tilt));
        }
    const int saved = omp_get_max_threads();
    std::vector<State> ends;
    for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        World w(m, pgsSettings());
        for (int i = 0; i < 4; ++i) w.step();
        ends.push_back(w.state());
    }
    omp_set_num_threads(saved);
    bool same = true;
    for (size_t t = 1; t < ends.size(); ++t)
        for (size_t b = 0; b < ends[0].pos.size(); ++b)
            same = same && std::memcmp(&ends[t].pos[b], &ends[0].pos[b], sizeof(Vec3)) == 0 &&
                   std::memcmp(&ends[t].rot[b], &ends[0].rot[b], sizeof(Quat)) == 0 &&
                   std::memcmp(&ends[t].linVel[b], &ends[0].linVel[b], sizeof(Vec3)) == 0;
    CHECK(same);
    CHECK(std::fabs(ends[0].linVel[1].z) < 0.5);
#endif
}
