// The soft step (SolveMethod::Soft, engine/solver/soft_step.h) against closed forms:
//  - free fall before contact: the substeps' symplectic Euler, z_n = z0 - g h_s^2 n (n + 1) / 2;
//  - a cube at rest on a plane sinks to the soft contact's static deflection g / omega^2
//    (soft_step_hd.h: at rest the biased solve's impulse is zero, so
//    m_n massScale biasRate s = -impulseScale lambda, lambda = m_n g h per point, i.e.
//    s = -g / omega^2; omega = 2 pi 2 f against a static body), and does not drift;
//  - a slab on a ramp sticks below tan(theta) = mu and slides above (threshold within 2%),
//    sliding at a = g (sin theta - mu cos theta);
//  - a resting stack sinks by the sum of its contacts' static deflections, then holds;
//  - a box pendulum on a ball joint swings at the compound pendulum's period;
//  - the drag brings a box to its target; scenes the soft step cannot run are refused in one line;
//  - the result does not depend on the thread count (a colour of more than 4,096 manifolds runs
//    its forEach in parallel).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "engine/model_builder.h"
#include "engine/solver/soft_step.h"
#include "engine/world.h"
#include "tests/relax_test_util.h"

using namespace cs;
using cs::test::addBox;
using cs::test::addGround;

namespace {

const Real g = Real(9.81);

WorldSettings softSettings() {
    WorldSettings s;
    s.solver.method = SolveMethod::Soft;
    return s;
}

// The soft step's static contact frequency for a world step h (soft_step.cpp: Box2D's cap at a
// quarter of the substep rate, doubled against a static body).
Real staticOmega(const WorldSettings& s) {
    const Real hs = s.dt / s.solver.soft.substeps;
    return Real(2 * M_PI) * 2 * std::fmin(s.solver.soft.contactHertz, Real(0.25) / hs);
}

}  // namespace

TEST_CASE("soft step: free fall before contact is the substeps' symplectic Euler") {
    Model m;
    addGround(m);
    const int b = addBox(m, "box", {Real(0.5), Real(0.5), Real(0.5)}, {0, 0, 3}, 1);
    WorldSettings s = softSettings();
    World w(m, s);
    const int steps = 60;   // 0.5 s: falls 1.23 m, still 1.27 m above the ground
    for (int i = 0; i < steps; ++i) w.step();
    const Real hs = s.dt / s.solver.soft.substeps;
    const int n = steps * s.solver.soft.substeps;
    const Real expected = 3 - g * hs * hs * n * (n + 1) / 2;
    CHECK(w.state().pos[b].z == doctest::Approx(double(expected)).epsilon(1e-12));
    CHECK(w.state().linVel[b].z == doctest::Approx(double(-g * hs * n)).epsilon(1e-12));
    // and within the substep's first-order error of the continuous z0 - g t^2 / 2
    const Real t = steps * s.dt;
    CHECK(std::fabs(w.state().pos[b].z - (3 - g * t * t / 2)) < g * t * hs);
}

TEST_CASE("soft step: a cube at rest on a plane sinks to g / omega^2 and does not drift") {
    Model m;
    addGround(m);
    const Real half = Real(0.5);
    // Dropped from 1 mm above the plane, so that it lands square (four corner contacts).
    const int b = addBox(m, "box", {half, half, half}, {0, 0, half + Real(0.001)}, 10);
    WorldSettings s = softSettings();
    World w(m, s);
    for (int i = 0; i < 120; ++i) w.step();
    const Vec3 at1 = w.state().pos[b];
    for (int i = 0; i < 120; ++i) w.step();
    const Real omega = staticOmega(s);
    const Real deflection = g / (omega * omega);
    CAPTURE(deflection);
    CHECK(w.maxPenetration() == doctest::Approx(double(deflection)).epsilon(0.05));
    CHECK(half - w.state().pos[b].z == doctest::Approx(double(deflection)).epsilon(0.05));
    // Landing, the four corners are solved one after another (Gauss-Seidel): the box slips
    // sideways by some micrometres before friction holds it; at rest it stays put.
    CHECK(std::hypot(w.state().pos[b].x, w.state().pos[b].y) < 1e-4);
    CHECK(length(w.state().pos[b] - at1) < 1e-9);
    CHECK(length(w.state().linVel[b]) < 1e-9);
    CHECK(w.solveStats().linearIterations == 2 * s.solver.soft.substeps + 1);   // sweeps: solve + relax, restitution
}

TEST_CASE("soft step: a slab on a ramp sticks below tan(theta) = mu and slides above it") {
    // As tests/test_friction.cpp's Newton check: a 0.4 x 0.4 x 0.1 m slab of 1 kg on the ground tilted
    // by theta, mixed mu = sqrt(1 * mu^2) = mu. 1 s from rest at tan(theta) / mu = 0.98 and 1.02.
    for (Real mu : {Real(0.3), Real(0.6)}) {
        for (Real ratio : {Real(0.98), Real(1.02), Real(1.2)}) {
            const Real theta = std::atan(ratio * mu);
            Model m;
            addGround(m, theta);
            const Quat q = quatFromAxisAngle({0, 1, 0}, theta);
            const int b = addBox(m, "slab", {Real(0.2), Real(0.2), Real(0.05)}, Real(0.05) * rotate(q, {0, 0, 1}), 1,
                                 mu * mu, q);
            World w(m, softSettings());
            const Vec3 start = w.state().pos[b], down = rotate(q, {1, 0, 0});
            const int steps = 120;
            for (int i = 0; i < steps; ++i) w.step();
            const Real slide = dot(w.state().pos[b] - start, down);
            const Real t = steps * w.settings.dt;
            const Real a = std::fmax(Real(0), g * (std::sin(theta) - mu * std::cos(theta)));
            CAPTURE(mu);
            CAPTURE(ratio);
            CAPTURE(slide);
            if (ratio < 1) {
                CHECK(std::fabs(slide) < 1e-4);   // sticks (the soft contact's own give: well below 0.1 mm)
            } else {
                // slides at the closed form: a t^2 / 2 within 5% of it (at 1.02 that is 0.1% of the friction force)
                CHECK(slide == doctest::Approx(double(a * t * t / 2)).epsilon(0.05));
            }
        }
    }
}

TEST_CASE("soft step: a resting stack of five boxes sinks by its contacts' static deflections, then holds") {
    // At rest each point's soft solve gives zero impulse (header): s = -lambda / (m_n h omega^2)
    // with lambda = the point's load times h. A cube's corner has m_n = m / 4 against the ground
    // and m / 8 between two equal cubes (K = 2 (1/m + 3/m) along the normal), and the four
    // corners share the load. With k cubes above an interface: s = k g / omega_s^2 on the ground
    // (omega_s = 2 omega), 2 k g / omega^2 between cubes. The top of N cubes then sinks by
    //     N g / omega_s^2 + 2 g / omega^2 (1 + ... + N - 1) = (N / 4 + N (N - 1)) g / omega^2
    // plus the gaps the cubes were stacked with.
    Model m;
    addGround(m);
    const Real half = Real(0.5), gap = Real(1e-4);
    const int n = 5;
    int top = -1;
    for (int k = 0; k < n; ++k)
        top = addBox(m, "box" + std::to_string(k), {half, half, half}, {0, 0, half + 2 * half * k + gap * (k + 1)}, 100);
    WorldSettings s = softSettings();
    World w(m, s);
    const Vec3 start = w.state().pos[top];
    for (int i = 0; i < 360; ++i) w.step();
    const Vec3 at3 = w.state().pos[top];
    for (int i = 0; i < 120; ++i) w.step();
    const Vec3 at4 = w.state().pos[top];
    const Real omega = staticOmega(s) / 2;
    const Real sink = n * gap + (Real(n) / 4 + n * (n - 1)) * g / (omega * omega);
    CAPTURE(sink);
    CHECK(start.z - at4.z == doctest::Approx(double(sink)).epsilon(0.02));
    CHECK(std::hypot(at4.x - start.x, at4.y - start.y) < 1e-4);   // the landing's Gauss-Seidel slip
    CHECK(length(at4 - at3) < 2e-5);                               // no creep over the last second
    CHECK(length(w.state().linVel[top]) < 1e-4);
    CHECK(w.failedSteps() == 0);
}

TEST_CASE("soft step: the drag brings a box to its target") {
    Model m;
    const int b = addBox(m, "box", {Real(0.5), Real(0.5), Real(0.5)}, {0, 0, 1}, 2);
    WorldSettings s = softSettings();
    s.gravity = {0, 0, 0};
    World w(m, s);
    w.setDrag(b, {0, 0, 0}, {Real(0.5), 0, 1});
    for (int i = 0; i < 360; ++i) w.step();   // 3 s of a 4 Hz critically damped spring
    CHECK(length(w.state().pos[b] - Vec3{Real(0.5), 0, 1}) < 1e-3);
    CHECK(length(w.state().linVel[b]) < 1e-3);
    CHECK(w.drag().effectiveMass == doctest::Approx(2.0));   // at the centre of mass: the body's mass
}

TEST_CASE("soft step: a box pendulum on a ball or a revolute joint swings at the compound pendulum's period") {
    for (JointType type : {JointType::Ball, JointType::Revolute}) {
        // A 0.1 x 0.1 x 1 m box hung from its top end, released at theta0 = 0.1 rad:
        // T = 2 pi sqrt(I_p / (m g d)) (1 + theta0^2 / 16), I_p = m (0.1^2 + 1^2) / 12 + m d^2, d = 0.5 m.
        Model m;
        const Vec3 pivot{0, 0, 2};
        const Real d = Real(0.5), theta0 = Real(0.1);
        const Quat q = quatFromAxisAngle({1, 0, 0}, theta0);
        const int b = addBox(m, "bob", {Real(0.05), Real(0.05), d}, pivot + rotate(q, {0, 0, -d}), 3, Real(0.5), q);
        Joint j;
        j.type = type;   // the hinge's axis is x, the swing's
        j.bodyA = -1;
        j.bodyB = b;
        std::string err;
        REQUIRE_MESSAGE(addJoint(m, j, pivot, {1, 0, 0}, &err) >= 0, err);
        World w(m, softSettings());
        const Real ip = (Real(0.01) + 1) / 12 + d * d;   // per kg
        const Real period = Real(2 * M_PI) * std::sqrt(ip / (g * d)) * (1 + theta0 * theta0 / 16);
        Real last = w.state().pos[b].y, lastTime = 0, first = -1, latest = -1, anchorError = 0;
        int crossings = 0;
        for (int i = 1; i <= 840; ++i) {   // 7 s: four periods
            w.step();
            const Real y = w.state().pos[b].y, t = i * w.settings.dt;
            if (last < 0 && y >= 0) {   // upward zero crossing, interpolated
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
        CAPTURE(int(type));
        CHECK(measured == doctest::Approx(double(period)).epsilon(0.01));
        CHECK(anchorError < 1e-3);
    }
}

TEST_CASE("soft step: scenes it does not handle are refused in one line") {
    Model m;
    addGround(m);
    m.couplings.push_back(JointCoupling{});
    std::string why;
    CHECK_FALSE(softStepSupports(m, softSettings(), &why));
    CHECK(why.find("coupling") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
    WorldSettings peg = softSettings();
    peg.solver.contactModel = ContactModelType::PEG;
    Model plain;
    addGround(plain);
    CHECK_FALSE(softStepSupports(plain, peg, &why));
    CHECK(why.find("standard") != std::string::npos);
    CHECK(softStepSupports(plain, softSettings(), &why));
    SolveMethod method;
    CHECK(parseSolveMethodName("soft", method));
    CHECK(method == SolveMethod::Soft);
    CHECK_FALSE(parseSolveMethodName("jacobi", method));
}

TEST_CASE("soft step: the same bits with 1, 2 and 3 threads") {
#if defined(_OPENMP)
    // 65 x 65 small boxes dropped on the ground, tilted: 4,225 manifolds against the
    // ground in one colour (the ground takes none), above the host executor's parallel threshold.
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
        World w(m, softSettings());
        for (int i = 0; i < 8; ++i) w.step();
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
    // and the boxes did land: their contacts carried them
    CHECK(std::fabs(ends[0].linVel[1].z) < 0.5);
#endif
}
