// Grasping (engine/grasp/): drive force limits, the wrist's force-limited mocap joint, the spring
// scale, and the scripted grasp of grasp_box checked against the closed-form minimum grip
// N = m g / (2 mu): at 1.2x the box is held 0.2 m up for 5 s with less than 1 mm of slip, at
// 0.8x it slips out; the scale reads the box's mass within 1%; the pads' deepest overlap with
// the box is stated.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "engine/grasp/grasp_player.h"
#include "engine/model_builder.h"
#include "engine/scene/scene_grasp.h"
#include "engine/scene/scene_loader.h"
#include "tests/scene_util.h"
#include "engine/solver/joint_rows.h"

using namespace cs;

namespace {

const Real g = Real(9.81);

// Plays a scene's script to its duration (or `seconds`); returns the player's metrics.
// The scene's own solver settings unless `solver` or `contact` is given.
GraspMetrics play(const char* scene, Real force, const LinearSolverType* solver = nullptr,
                  const ContactModelType* contact = nullptr, Real seconds = -1) {
    test::LoadedScene l = test::loadLibraryScene(scene);
    if (solver) l.settings.solver.linearSolver = *solver;
    if (contact) l.settings.solver.contactModel = *contact;
    World world(l.model, l.settings);
    GraspPlayer player(world.model(), l.info.grasp, force);
    const Real duration = seconds > 0 ? seconds : l.info.duration;
    const int steps = int(std::ceil(duration / l.settings.dt));
    for (int i = 0; i < steps; ++i) {
        player.beforeStep(world);
        world.step();
        player.afterStep(world);
        REQUIRE_MESSAGE(!world.lastStepFailed(), world.lastError());
    }
    MESSAGE(std::string(scene) << " at " << force << " N: " << player.text());
    return player.metrics();
}

Real minimumGrip(Real mass, Real mu) { return mass * g / (2 * mu); }   // 2 mu N = m g

int addBox(Model& m, const char* name, Vec3 half, Vec3 pos, Real mass, Real mu, bool isStatic = false) {
    BodyDesc d;
    d.name = name;
    d.isStatic = isStatic;
    d.mass = isStatic ? 0 : mass;
    d.material.friction = mu;
    ShapeDesc s;
    s.polytope = makeBox(half);
    d.shapes.push_back(s);
    d.pose.pos = pos;
    std::string err;
    const int b = addBody(m, d, &err);
    REQUIRE_MESSAGE(b >= 0, err);
    return b;
}

}  // namespace

TEST_CASE("grasp: a saturated drive pushes with exactly its force limit") {
    // A 0.1 kg slider on a prismatic joint, its drive target 5 cm inside a static wall: without
    // a limit the stiff drive presses with ~ k x = 1e5 N/m x 0.05 m; with the limit F the
    // contact carries F (Newton's third law on the slider at rest).
    const LinearSolverType solvers[] = {LinearSolverType::Jacobi, LinearSolverType::GaussSeidel,
                                        LinearSolverType::PCG, LinearSolverType::PCR};
    for (LinearSolverType solver : solvers)
    for (Real limit : {Real(2), Real(7.85), Real(40)}) {
        CAPTURE(int(solver));
        Model m;
        WorldSettings s;
        s.gravity = {0, 0, 0};
        s.solver.linearSolver = solver;
        addBox(m, "wall", {0.05, 0.2, 0.2}, {0.2, 0, 0}, 0, 0.5, true);
        const int slider = addBox(m, "slider", {0.05, 0.05, 0.05}, {0, 0, 0}, 0.1, 0.5);
        Joint j;
        j.type = JointType::Prismatic;
        j.bodyA = -1;
        j.bodyB = slider;
        j.drive = true;
        j.driveTarget = Real(0.15);   // the wall stops the slider at 0.1
        j.driveCompliance = Real(1e-5);
        j.driveMaxForce = limit;
        std::string err;
        const int joint = addJoint(m, j, {0, 0, 0}, {1, 0, 0}, &err);
        REQUIRE(joint >= 0);
        World world(m, s);
        world.model().joints[joint].driveTarget = Real(0.15);
        for (int i = 0; i < 240; ++i) world.step();
        const PadReading pad = padReading(world, {slider});
        CHECK(jointDriveForce(world, joint) == doctest::Approx(double(limit)).epsilon(1e-6));
        CHECK(pad.normalForce == doctest::Approx(double(limit)).epsilon(1e-4));
        CHECK(std::fabs(world.state().pos[slider].x - Real(0.1)) < Real(1e-3));
    }
}

TEST_CASE("grasp: jointRowCount matches the rows buildJointRows appends") {
    test::LoadedScene l = test::loadLibraryScene("grasp_box");
    World world(l.model, l.settings);
    world.step();
    int total = 0;
    for (const Joint& j : world.model().joints) total += jointRowCount(j);
    total += (int)world.model().couplings.size();   // the jaws' mimic row (joint_coupling.h)
    CHECK((int)world.state().jointWarm.size() == total);
    CHECK(jointFirstRow(world, 0) == 0);
}

TEST_CASE("grasp: the spring scale reads a resting box's mass within 1%") {
    // grasp_box's scale (k = 1e4 N/m, 0.5 kg platform) with a 1 kg box set on it; no script.
    test::LoadedScene l = test::loadLibraryScene("grasp_box");
    World world(l.model, l.settings);
    const int box = world.findBody("box");
    world.state().pos[box] = {0, 0.45, Real(0.07 + 0.06 + 0.001)};
    for (int i = 0; i < 360; ++i) world.step();
    const ScaleReading r = scaleReading(world, l.info.grasp.scaleJoint);
    MESSAGE("scale: deflection " << r.deflection << " m, force " << r.force << " N, reading " << r.kilograms << " kg");
    CHECK(r.kilograms == doctest::Approx(1.0).epsilon(0.01));
}

TEST_CASE("grasp: a blocked wrist pushes with bounded force instead of passing through the table") {
    // The wrist's target is taken 0.2 m below the ground (at 0.7 m/s): the mocap joint's rows saturate at
    // 200 N per axis, so the ground pushes back with at most 200 N + the gripper's weight.
    test::LoadedScene l = test::loadLibraryScene("grasp_box");
    World world(l.model, l.settings);
    GraspController control(world.model(), l.info.grasp);
    const GraspCommand rest = control.restCommand();
    const Vec3 below{-0.3, 0, -0.2};   // beside the box, into the floor, reached in 1 s
    const int wrist = world.findBody("wrist");
    std::vector<int> gripper = {wrist, world.findBody("finger_l"), world.findBody("finger_r")};
    Real most = 0, least = 1e30, deepest = 0;
    for (int i = 0; i < 480; ++i) {
        GraspCommand c = rest;
        const Real s = std::min(Real(1), Real(i) / 120);
        c.wrist = rest.wrist + s * (below - rest.wrist);
        control.apply(world.model(), c);
        world.step();
        deepest = std::max(deepest, world.maxPenetration());
        if (i < 360) continue;   // after the landing: the resting push
        const Real up = padReading(world, gripper).force.z;
        most = std::max(most, up);
        least = std::min(least, up);
    }
    const Real weight = Real(0.7) * g;
    MESSAGE("ground force on the blocked gripper at rest: " << least << " .. " << most << " N (200 N + "
            << weight << " N of weight); deepest overlap " << deepest << " m");
    CHECK(most <= 200 + weight + Real(0.5));
    CHECK(least >= 200 + weight - Real(0.5));
    CHECK(world.state().pos[wrist].z > 0);
    CHECK(deepest < Real(0.005));
}

TEST_CASE("grasp: grasp_box holds at 1.2x the minimum grip and drops the box at 0.8x") {
    const Real fmin = minimumGrip(1, Real(0.75));   // 6.54 N
    const GraspMetrics hold = play("grasp_box", Real(1.2) * fmin);
    CHECK(hold.holdDuration >= Real(4.99));
    CHECK(hold.holdSlip >= 0);
    CHECK(hold.holdSlip < Real(1e-3));
    // The wrist's target rises 0.2 m; the wrist sags by its joint's compliance times the load,
    // 1e-4 m/N x 1.7 kg x g = 1.7 mm.
    CHECK(hold.holdMinRise > Real(0.2 - 0.0025));
    CHECK(hold.scaleKg == doctest::Approx(1.0).epsilon(0.01));
    for (Real f : hold.gripForceHold) CHECK(f == doctest::Approx(double(1.2 * fmin)).epsilon(1e-3));
    MESSAGE("max pad-box penetration at 1.2x: " << hold.padPenetration * 1e3 << " mm");
    CHECK(hold.padPenetration < Real(1e-3));

    const GraspMetrics drop = play("grasp_box", Real(0.8) * fmin, nullptr, nullptr, Real(9.7));
    CHECK(drop.maxRise < Real(0.05));    // the pads slide up the box: it never leaves the ground
    CHECK(drop.holdRise < Real(0.01));
}

TEST_CASE("grasp: script files and the grasp block reject bad input with one line") {
    GraspSpec spec;
    std::string err;
    CHECK(!loadGraspScript("/nonexistent/script.json", spec, &err));
    CHECK(err.find('\n') == std::string::npos);
    const std::string path =
        (std::filesystem::temp_directory_path() / ("cs_test_grasp_script_" + std::to_string(getpid()) + ".json")).string();
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    std::fputs(R"({"script": [{"t": 1, "wrist": [0, 0, 1]}, {"t": 0.5, "wrist": [0, 0, 1]}]})", f);
    std::fclose(f);
    CHECK(!loadGraspScript(path, spec, &err));
    CHECK(err.find("/script/1/t") != std::string::npos);
    f = std::fopen(path.c_str(), "w");
    std::fputs(R"({"script": [{"t": 0, "wrist": [0, 0, 1], "grip": 1, "phase": "x"}]})", f);
    std::fclose(f);
    CHECK(loadGraspScript(path, spec, &err));
    REQUIRE(spec.script.size() == 1);
    CHECK(spec.script[0].grip == 1);
}

TEST_CASE("grasp: fetch_tomato, hand_ball and grasp_mesh lift, hold and place their objects") {
    struct Case { const char* scene; Real mass; bool scale; };
    for (const Case& c : {Case{"fetch_tomato", Real(0.15), true}, Case{"hand_ball", Real(0.1), false},
                          Case{"grasp_mesh", Real(0.4), true}}) {
        CAPTURE(c.scene);
        const GraspMetrics m = play(c.scene, -1);
        CHECK(m.holdMinRise > Real(0.18));       // the wrist's target rises 0.2 m
        CHECK(m.holdSlip >= 0);
        CHECK(m.holdSlip < Real(1e-3));
        CHECK(m.padPenetration < Real(1e-3));
        if (c.scale) CHECK(m.scaleKg == doctest::Approx(double(c.mass)).epsilon(0.01));
    }
}
