// Physics checked against closed forms and invariants: free fall, resting contact, the friction
// threshold tan(theta), the [NSN] heavy stack, joints, the drag, the NaN guard and determinism.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "engine/model_builder.h"
#include "engine/world.h"

using namespace cs;

namespace {

const Real g = Real(9.81);

// A static ground box whose top face is the plane z = 0, optionally tilted about the y axis.
void addGround(Model& m, Real mu, Real tiltRad = 0) {
    BodyDesc d;
    d.name = "ground";
    d.isStatic = true;
    d.material.friction = mu;
    ShapeDesc s;
    s.polytope = makeBox({20, 20, 1});
    s.local.pos = {0, 0, -1};
    d.shapes.push_back(s);
    d.pose.rot = quatFromAxisAngle({0, 1, 0}, tiltRad);
    std::string err;
    REQUIRE(addBody(m, d, &err) >= 0);
}

int addBox(Model& m, Vec3 half, Vec3 pos, Real mass, Real mu, Quat rot = quatIdentity(), const char* name = "box") {
    BodyDesc d;
    d.name = name;
    d.mass = mass;
    d.material.friction = mu;
    ShapeDesc s;
    s.polytope = makeBox(half);
    d.shapes.push_back(s);
    d.pose.pos = pos;
    d.pose.rot = rot;
    std::string err;
    int b = addBody(m, d, &err);
    REQUIRE_MESSAGE(b >= 0, err);
    return b;
}

WorldSettings settingsWith(Real dt, LinearSolverType solver = LinearSolverType::PCR) {
    WorldSettings s;
    s.dt = dt;
    s.solver.linearSolver = solver;
    s.solver.newtonIterations = 8;
    s.solver.linearIterations = 30;
    return s;
}

}  // namespace

TEST_CASE("free fall matches the closed form of symplectic Euler at several dt") {
    for (Real dt : {Real(1.0 / 60), Real(1.0 / 120), Real(1.0 / 240)}) {
        Model m;
        int b = addBox(m, {0.1, 0.1, 0.1}, {0, 0, 10}, 1, 0.5);
        World w(m, settingsWith(dt));
        w.settings.gravity = {0, 0, -g};
        const int n = int(std::lround(1.0 / dt));
        for (int i = 0; i < n; ++i) w.step();
        // v_k = -g h k, z_n = z0 - g h^2 n (n + 1) / 2 exactly for x += h v(k+1).
        Real expected = 10 - g * dt * dt * n * (n + 1) / 2;
        CHECK(w.state().pos[b].z == doctest::Approx(expected).epsilon(1e-12));
        CHECK(w.state().linVel[b].z == doctest::Approx(-g * dt * n).epsilon(1e-12));
        // And the continuous solution within the method's first-order error g h t / 2.
        Real t = dt * n;
        CHECK(std::fabs(w.state().pos[b].z - (10 - g * t * t / 2)) <= g * dt * t / 2 + 1e-9);
    }
}

TEST_CASE("a box resting on a plane for 10 s drifts less than 1e-4 m") {
    for (LinearSolverType solver : {LinearSolverType::PCR, LinearSolverType::PCG, LinearSolverType::GaussSeidel,
                                    LinearSolverType::Jacobi}) {
        Model m;
        addGround(m, 0.5);
        int b = addBox(m, {0.5, 0.5, 0.5}, {0, 0, 0.5}, 1, 0.5);
        World w(m, settingsWith(Real(1.0 / 120), solver));
        Vec3 start = w.state().pos[b];
        for (int i = 0; i < 1200; ++i) w.step();
        Real drift = length(w.state().pos[b] - start);
        INFO("solver " << linearSolverName(solver) << " drift " << drift);
        CHECK(drift < 1e-4);
        CHECK(w.contacts().size() == 4);
        CHECK(w.failedSteps() == 0);
        // The four normal impulses carry the weight: sum = m g h.
        Real sum = 0;
        for (const Contact& c : w.contacts()) sum += c.normalImpulse;
        CHECK(sum == doctest::Approx(g * w.settings.dt).epsilon(1e-3));
    }
}

TEST_CASE("friction ramp: boxes stick below tan(theta) and slide above it with a = g (sin - mu cos)") {
    const Real theta = Real(20 * M_PI / 180);   // tan(theta) = 0.364
    for (Real mu : {Real(0.25), Real(0.30), Real(0.45), Real(0.60)}) {
        Model m;
        addGround(m, 1, theta);   // mixed mu = sqrt(1 * mu_box^2) = mu_box
        Quat q = quatFromAxisAngle({0, 1, 0}, theta);
        Vec3 up = rotate(q, {0, 0, 1}), down = rotate(q, {1, 0, 0});   // downhill along the ramp
        int b = addBox(m, {0.2, 0.2, 0.2}, Real(0.2) * up, 1, mu * mu, q);
        World w(m, settingsWith(Real(1.0 / 120)));
        for (int i = 0; i < 60; ++i) w.step();   // settle 0.5 s
        Vec3 x0 = w.state().pos[b];
        Real v0 = dot(w.state().linVel[b], down);
        for (int i = 0; i < 120; ++i) w.step();  // 1 s
        Real s = dot(w.state().pos[b] - x0, down);
        Real a = g * (std::sin(theta) - mu * std::cos(theta));
        INFO("mu " << mu << " slide " << s);
        if (mu > std::tan(theta)) {
            CHECK(std::fabs(s) < 1e-3);
        } else {
            Real expected = v0 * 1 + a / 2;   // s = v0 t + a t^2 / 2 over t = 1 s
            CHECK(s == doctest::Approx(expected).epsilon(0.03));
        }
    }
}

TEST_CASE("heavy stack (mass ratio 4096:1) stands for 10 s with PCR") {
    Model m;
    addGround(m, 0.5);
    int top = -1;
    Real z = 0, mass = 8;
    for (int i = 0; i < 5; ++i) {
        top = addBox(m, {0.5, 0.5, 0.5}, {0, 0, z + Real(0.5)}, mass, 0.5);
        z += 1;
        mass *= 8;
    }
    CHECK(m.mass[top] == doctest::Approx(32768));
    World w(m, settingsWith(Real(1.0 / 120)));
    w.settings.solver.newtonIterations = 8;
    w.settings.solver.linearIterations = 40;
    Vec3 start = w.state().pos[top];
    for (int i = 0; i < 1200; ++i) w.step();
    Real drift = length(w.state().pos[top] - start);
    INFO("top drift " << drift);
    CHECK(drift < 0.01);
    CHECK(w.failedSteps() == 0);
}

TEST_CASE("ball-joint pendulum: small-angle period matches 2 pi sqrt(L/g) within 2%") {
    Model m;
    BodyDesc d;
    d.name = "bob";
    d.mass = 1;
    ShapeDesc s;
    s.type = ShapeType::Sphere;
    s.radius = 0.01;   // nearly a point mass: I = 2/5 m r^2 is negligible against m L^2
    d.shapes.push_back(s);
    const Real L = 1, angle = Real(0.05);
    d.pose.pos = {L * std::sin(angle), 0, 2 - L * std::cos(angle)};
    std::string err;
    int b = addBody(m, d, &err);
    Joint j;
    j.type = JointType::Ball;
    j.bodyA = -1;
    j.bodyB = b;
    REQUIRE(addJoint(m, j, {0, 0, 2}, {0, 0, 1}, &err) >= 0);
    World w(m, settingsWith(Real(1.0 / 480)));
    // Time between successive upward zero crossings of x.
    Real prevX = w.state().pos[b].x, firstCross = -1, period = -1;
    for (int i = 0; i < 480 * 5 && period < 0; ++i) {
        w.step();
        Real x = w.state().pos[b].x;
        if (prevX < 0 && x >= 0) {
            Real t = w.state().time - w.settings.dt * x / (x - prevX);
            if (firstCross < 0) firstCross = t;
            else period = t - firstCross;
        }
        prevX = x;
    }
    REQUIRE(period > 0);
    CHECK(period == doctest::Approx(2 * M_PI * std::sqrt(L / g)).epsilon(0.02));
    // The joint holds the length.
    CHECK(length(w.state().pos[b] - Vec3{0, 0, 2}) == doctest::Approx(L).epsilon(1e-3));
}

TEST_CASE("drag pulls light and heavy bodies toward the cursor alike") {
    for (Real mass : {Real(0.1), Real(1000)}) {
        Model m;
        int b = addBox(m, {0.2, 0.2, 0.2}, {0, 0, 1}, mass, 0.5);
        World w(m, settingsWith(Real(1.0 / 120)));
        w.settings.gravity = {0, 0, 0};
        w.dragSettings.maxForce = Real(1e9);
        Vec3 target{1, 0, 1};
        w.setDrag(b, {0, 0, 0}, target);
        for (int i = 0; i < 120; ++i) w.step();
        INFO("mass " << mass);
        CHECK(length(w.state().pos[b] - target) < 0.05);
        CHECK(w.drag().effectiveMass == doctest::Approx(mass).epsilon(1e-6));
    }
}

TEST_CASE("an exploding step is caught, rolled back and reported; stepping goes on") {
    Model m;
    addGround(m, 0.5);
    int b = addBox(m, {0.5, 0.5, 0.5}, {0, 0, 0.5}, 1, 0.5);
    m.initialLinVel[b] = {Real(1e7), 0, 0};   // beyond any physical speed: the guard must fire
    World w(m, settingsWith(Real(1.0 / 120)));
    w.step();
    CHECK(w.lastStepFailed());
    CHECK(w.failedSteps() == 1);
    CHECK(w.lastError().find("box") != std::string::npos);
    CHECK(std::isfinite(w.state().pos[b].x));
    w.step();
    CHECK_FALSE(w.lastStepFailed());
}

TEST_CASE("determinism: the same scene run twice gives a bit-identical state") {
    auto run = [] {
        Model m;
        addGround(m, 0.6);
        for (int i = 0; i < 6; ++i)
            addBox(m, {0.2, 0.3, 0.25}, {Real(0.1) * i, Real(0.05) * i, Real(0.3 + 0.7 * i)}, 1 + i, 0.6,
                   quatFromAxisAngle({1, 1, 0}, Real(0.3) * i));
        World w(m, settingsWith(Real(1.0 / 120)));
        for (int i = 0; i < 240; ++i) w.step();
        uint64_t hash = 1469598103934665603ull;   // FNV-1a over the raw bytes of the state
        auto mix = [&](const void* p, size_t n) {
            const unsigned char* c = (const unsigned char*)p;
            for (size_t i = 0; i < n; ++i) hash = (hash ^ c[i]) * 1099511628211ull;
        };
        mix(w.state().pos.data(), w.state().pos.size() * sizeof(Vec3));
        mix(w.state().rot.data(), w.state().rot.size() * sizeof(Quat));
        mix(w.state().linVel.data(), w.state().linVel.size() * sizeof(Vec3));
        return hash;
    };
    uint64_t a = run(), b = run();
    CHECK(a == b);
}
