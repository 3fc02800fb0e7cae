// Grasping with the keys (issue 36): the key presses go through GraspDriver::key, the function
// the app's GLFW key callback calls (app/gui/grasp_input.cpp: SandboxApp::graspKey), and the
// driver writes its command into the model before every step as the app's copies do.
//
// Before each step the driver commits the input since the last (GraspDriver::commit), as the
// app does before each physics job or synchronous step.
//
// A user's grasp: Q pressed at the key repeat's 30 per second down to the script's grip height,
// V, E up 0.2 m, a hold, Q back down, V, E away; each phase's keys wait until the gripper has
// stopped (the command at its goal) and 0.3 s more, as a user watching it would. Checked: the
// object rises with the wrist (its height relative to the wrist body within 5 mm of where it was
// gripped, through the lift and the hold), never goes below where it started by more than 3 mm
// (through the floor), ends back on the floor, and each finger's grip on it stays under the grip
// limit plus the object's weight shared among the fingers (a jaw's grip: its pad's normal force;
// a revolute finger's: its contacts' moment about its base joint over its lever, what its torque
// limit bounds); every pad reads "stick" through the hold, and the Grasp table's "stick" needs
// a contact with the object carrying normal force. The same presses with the command's ramps off
// (GraspLimits::none(): each press moves the wrist target 1 cm within a step and V moves the jaws'
// targets at once, as the keys did before) drop or throw grasp_box's box, so the checks can fail.
//
// Also: the ramps against their closed form (least time to a goal under speed and acceleration
// limits) and their continuity when the goal changes mid-way; a reset puts the gripper at rest
// under the user's control; taking over from the script keeps its command and rate; a pad on the
// floor reads "other", not a grip.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/grasp/grasp_driver.h"
#include "engine/grasp/grasp_player.h"
#include "engine/scene/scene_loader.h"
#include "tests/scene_util.h"

using namespace cs;

namespace {

const Real g = Real(9.81);

// One key grasp's plan: presses per phase. `down` Q presses to the grip height from rest, `up` E
// presses of the lift, the hold's length.
struct KeyPlan {
    const char* scene;
    int down = 0;
    int up = 20;
    Real hold = 5;
};

struct KeyRun {
    bool failedStep = false;
    Real leastRise = 1e30;          // m, the object's least height above its start over the run
    Real followError = 0;           // m, largest change of (object z - wrist z) from the grip through the hold
    Real liftRise = 0;              // m, the object's rise from the grip to the hold's end
    Real wristRise = 0;             // m, the wrist body's over the same
    Real endRise = 0;               // m, the object's height above its start at the end
    std::vector<Real> padMost;      // N, per finger, the largest grip on the object from the close to the
                                    //   opening: a jaw's normal force, a revolute finger's moment / lever
    Real normalMost = 0;            // N, the largest pad normal force (stated)
    Real padMostAt = 0;             // s, when the largest grip was reached
    int padMostPhase = 0;
    Real limit = 0;                 // N, grip force + the object's weight / fingers
    bool stickWithoutContact = false;   // some pad read sticking() with no loaded contact on the object
    int holdSteps = 0, holdSticking = 0;   // hold steps, and those in which every pad read "stick"
    int holdSlidingSteps = 0;       // pad-steps of the hold with a contact the solve calls sliding (stated)
    Real holdSlipSpeed = 0;         // m/s, the pads' largest mean slip speed in the hold (stated)
    Real seconds = 0;
    bool done = false;              // every phase ran within 60 s
};

// A revolute finger's grip, as the drive sees it: the moment of its pads' contact forces on the
// object about its base joint's axis, over its lever (N). The drive's torque limit is grip force
// x lever, so this is what the grip limit bounds; the normal force itself is larger where the
// object touches the finger nearer the joint than the lever (hand_ball_fem's ball, 8-9 cm out
// on a 0.1 m lever, pressed 3.4 N at a 3 N grip).
Real fingerGripFromMoment(const World& world, const GraspSpec& spec, const FingerSpec& finger) {
    const Model& m = world.model();
    const State& s = world.state();
    const Joint& j = m.joints[finger.joints[0]];
    const Quat qA = j.bodyA >= 0 ? s.rot[j.bodyA] : quatIdentity();
    const Vec3 xA = j.bodyA >= 0 ? s.pos[j.bodyA] : Vec3{0, 0, 0};
    const Vec3 anchor = xA + rotate(qA, j.anchorA), axis = rotate(qA, j.axisA);
    const Real h = world.settings.dt / Real(world.settings.substeps > 0 ? world.settings.substeps : 1);
    auto isPad = [&](int b) { return b >= 0 && std::find(finger.pads.begin(), finger.pads.end(), b) != finger.pads.end(); };
    Real moment = 0;
    for (const Contact& c : world.contacts()) {
        const PotentialContact& gc = c.geometry;
        if (!(c.normalImpulse > 0)) continue;
        const bool onObject = c.femNode >= 0 ? spec.objectFem >= 0 && m.femNodeBody[c.femNode] == spec.objectFem
                                             : (gc.bodyA == spec.object || gc.bodyB == spec.object);
        const bool onA = isPad(gc.bodyA), onB = isPad(gc.bodyB);
        if (!onObject || onA == onB) continue;
        const Vec3 onBodyA = c.normalImpulse * gc.normal + c.tangentImpulse[0] * c.tangent[0] + c.tangentImpulse[1] * c.tangent[1];
        const Vec3 f = (onA ? onBodyA : -onBodyA) / h;
        const Vec3 p = onA ? gc.pointA : gc.pointB;
        moment += dot(cross(p - anchor, f), axis);
    }
    return std::fabs(moment) / finger.lever;
}

Real objectMass(const Model& m, const GraspSpec& spec) {
    if (spec.object >= 0) return m.mass[spec.object];
    Real mass = 0;
    for (int i = 0; i < m.femNodeCount(); ++i)
        if (m.femNodeBody[i] == spec.objectFem) mass += m.femNodeMass[i];
    return mass;
}

KeyRun runKeys(const KeyPlan& plan, GraspLimits limits = GraspLimits{}) {
    auto [model, settings, info] = test::loadLibraryScene(plan.scene);
    const GraspSpec spec = info.grasp;
    REQUIRE((spec.object >= 0 || spec.objectFem >= 0));
    World world(model, settings);
    GraspDriver driver(world.model(), spec, limits);
    const int wrist = world.model().joints[spec.wristJoint].bodyB;
    const Vec3 ahead{0, 1, 0};   // the camera's level ahead direction: Q, E and V do not use it
    const size_t fingers = spec.fingers.size();

    KeyRun r;
    r.padMost.assign(fingers, 0);
    r.limit = spec.gripForce + objectMass(world.model(), spec) * g / Real(fingers);
    const Real start = graspObjectPosition(world, spec, true).z;
    enum Phase { Lower, Close, Lift, Hold, SetDown, Open, Away, Done };
    const char keys[] = {'Q', 'V', 'E', 0, 'Q', 'V', 'E'};
    const int counts[] = {plan.down, 1, plan.up, 0, plan.up, 1, 5};
    int phase = Lower, pressed = 0;
    Real nextPress = Real(0.2), arrived = -1, holdEnd = 0;
    Real offset = 0, objectAtGrip = 0, wristAtGrip = 0;
    bool closed = false;
    while (phase != Done && world.state().time < 60) {
        const Real t = world.state().time;
        const Vec3 objectNow = graspObjectPosition(world, spec, false);
        // The key presses of this phase, 30 per second; then wait for the gripper to stop.
        if (phase != Hold && pressed < counts[phase] && t >= nextPress) {
            REQUIRE(driver.key(keys[phase], t, ahead));
            ++pressed;
            nextPress = t + Real(1) / 30;
        }
        const GraspCommand now = driver.commandAt(t), goal = driver.goal();
        const bool stopped = length(now.wrist - goal.wrist) < Real(1e-9) &&
                             std::fabs(now.fingerGrip[0] - goal.grip) < Real(1e-9);
        if (phase == Hold) {
            if (t >= holdEnd) {
                r.liftRise = objectNow.z - objectAtGrip;
                r.wristRise = world.state().pos[wrist].z - wristAtGrip;
                phase = SetDown;
                pressed = 0;
                nextPress = t;
            }
        } else if (pressed == counts[phase] && stopped) {
            if (arrived < 0) arrived = t;
            if (t >= arrived + Real(0.3)) {   // a user's pause once the gripper has stopped
                arrived = -1;
                pressed = 0;
                nextPress = t;
                if (phase == Close) {
                    closed = true;
                    offset = objectNow.z - world.state().pos[wrist].z;
                    objectAtGrip = objectNow.z;
                    wristAtGrip = world.state().pos[wrist].z;
                }
                if (phase == Lift) holdEnd = t + plan.hold;
                phase = phase + 1;
            }
        }

        driver.commit(world.state().time);   // as the app does before a job or a step
        driver.apply(world);
        world.step();
        if (world.lastStepFailed()) {   // the app goes on after a failed step, and so does the user
            if (!r.failedStep) MESSAGE(plan.scene << ": step failed at t = " << world.state().time << ": " << world.lastError());
            r.failedStep = true;
        }
        const Vec3 object = graspObjectPosition(world, spec, false);
        r.leastRise = std::min(r.leastRise, object.z - start);
        if ((phase == Lift || phase == Hold) && closed)
            r.followError = std::max(r.followError, std::fabs(object.z - world.state().pos[wrist].z - offset));
        // From the V that closes to the V that opens.
        const bool gripping = (phase == Close && pressed > 0) || (phase > Close && phase < Open) ||
                              (phase == Open && pressed == 0);
        bool allStick = true;
        for (size_t f = 0; f < fingers; ++f) {
            const PadReading p = padReading(world, spec.fingers[f].pads, spec.object, spec.objectFem);
            if (p.sticking() && !(p.contacts > 0 && p.normalForce > 0)) r.stickWithoutContact = true;
            allStick = allStick && p.sticking();
            if (gripping) {
                // A jaw's grip is its normal force; a revolute finger's, its moment over its lever.
                const FingerSpec& finger = spec.fingers[f];
                const Real grip = finger.lever > 0 ? fingerGripFromMoment(world, spec, finger) : p.normalForce;
                if (grip > r.padMost[f]) {
                    r.padMost[f] = grip;
                    r.padMostAt = world.state().time;
                    r.padMostPhase = phase;
                }
                r.normalMost = std::max(r.normalMost, p.normalForce);
            }
        }
        if (phase == Hold) {
            r.holdSteps++;
            r.holdSticking += allStick ? 1 : 0;
            for (size_t f = 0; f < fingers; ++f) {
                const PadReading p = padReading(world, spec.fingers[f].pads, spec.object, spec.objectFem);
                r.holdSlidingSteps += p.sliding > 0 ? 1 : 0;
                r.holdSlipSpeed = std::max(r.holdSlipSpeed, p.meanSlipSpeed);
            }
        }
    }
    r.seconds = world.state().time;
    r.endRise = graspObjectPosition(world, spec, false).z - start;
    std::string pads;
    for (Real p : r.padMost) pads += std::to_string(double(p)) + " ";
    MESSAGE(plan.scene << (limits.wristSpeed > 0 ? "" : " (no ramps)") << ": " << r.seconds << " s; rise "
            << r.liftRise << " m with the wrist's " << r.wristRise << " m; follow error " << r.followError * 1000
            << " mm; least rise " << r.leastRise * 1000 << " mm; end rise " << r.endRise * 1000
            << " mm; fingers' most grip " << pads << "N (limit " << r.limit << " N; most pad normal force "
            << r.normalMost << " N, the most at t = " << r.padMostAt << " s in phase " << r.padMostPhase
            << "); hold: pad-steps with a sliding contact " << r.holdSlidingSteps << ", mean slip speed up to "
            << r.holdSlipSpeed * 1000 << " mm/s; hold steps sticking "
            << r.holdSticking << " / " << r.holdSteps);
    r.done = phase == Done;
    return r;
}

void checkHeld(const KeyRun& r, const KeyPlan& plan) {
    CHECK(r.done);
    CHECK(!r.failedStep);
    CHECK(r.wristRise == doctest::Approx(plan.up * double(kGraspKeyStep)).epsilon(0.02));
    CHECK(std::fabs(r.liftRise - r.wristRise) < Real(0.005));   // the object rises with the wrist
    CHECK(r.followError < Real(0.005));
    CHECK(r.leastRise > Real(-0.003));                         // never through the floor
    CHECK(std::fabs(r.endRise) < Real(0.005));                  // set down where it was
    for (Real p : r.padMost) CHECK(p <= r.limit);
    CHECK(!r.stickWithoutContact);
    CHECK(r.holdSticking == r.holdSteps);
}

}  // namespace

TEST_CASE("grasp keys: the ramp reaches its goal in the least time its limits allow, continuous through changes") {
    // From rest over D with speed v and acceleration a: T = D / v + v / a when D >= v^2 / a
    // (accelerate, cruise, brake), else 2 sqrt(D / a).
    const Real v = Real(0.15), a = Real(0.5);
    CHECK(Ramp::plan(0, 0, 0, Real(0.25), v, a).endTime() == doctest::Approx(0.25 / 0.15 + 0.15 / 0.5));
    CHECK(Ramp::plan(0, 0, 0, Real(0.01), v, a).endTime() == doctest::Approx(2 * std::sqrt(0.01 / 0.5)));
    CHECK(Ramp::plan(0, 0, 0, Real(0.01), v, a).position(1) == doctest::Approx(0.01));
    // A new goal every 1/30 s (key repeat), then the opposite way mid-flight: the velocity never
    // changes by more than a per step, never exceeds v, the position never jumps, and it stops at the goal.
    Ramp r = Ramp::plan(0, 0, 0, 0, v, a);
    Real goal = 0, x = 0, vel = 0, worstAccel = 0, fastest = 0, worstJump = 0;
    const Real h = Real(1) / 1200;
    for (int i = 0; i <= 12000; ++i) {
        const Real t = i * h;
        if (i % 40 == 0 && t < 1) goal += Real(0.01);         // 30 presses up
        if (i == 1400) goal -= Real(0.2);                      // then a far goal back down while moving
        if (i % 40 == 0 && t < 1.3) r = Ramp::plan(t, r.position(t), r.velocity(t), goal, v, a);
        const Real xn = r.position(t), vn = r.velocity(t);
        if (i > 0) {
            worstAccel = std::max(worstAccel, std::fabs(vn - vel) / h);
            worstJump = std::max(worstJump, std::fabs(xn - x) - std::max(std::fabs(vn), std::fabs(vel)) * h);
        }
        fastest = std::max(fastest, std::fabs(vn));
        x = xn;
        vel = vn;
    }
    CHECK(worstAccel <= a * Real(1.001));
    CHECK(fastest <= v * Real(1.000001));
    CHECK(worstJump < Real(1e-6));
    CHECK(x == doctest::Approx(double(goal)));
    CHECK(vel == 0);
    // Faster than the limit at the start (taken over from a faster script): it brakes to the limit
    // at a (0.2 s, 0.04 m), cruises, brakes to rest (0.3 s, 0.0225 m): 0.2 + 0.9375 / 0.15 + 0.3 s.
    const Ramp fast = Ramp::plan(0, 0, Real(0.25), 1, v, a);
    CHECK(fast.velocity(0) == doctest::Approx(0.25));
    CHECK(fast.velocity(Real(0.1)) == doctest::Approx(0.2));
    CHECK(fast.velocity(1) == doctest::Approx(0.15));
    CHECK(fast.endTime() == doctest::Approx(0.2 + 0.9375 / 0.15 + 0.3));
    CHECK(fast.position(fast.endTime() - Real(1e-9)) == doctest::Approx(1.0));
    // No limits: at the goal at once (the keys' old behaviour).
    CHECK(Ramp::plan(0, 0, 0, Real(0.01), 0, 0).position(0) == doctest::Approx(0.01));
}

TEST_CASE("grasp keys: a rotation vector and its quaternion round trip") {
    for (const Vec3 v : {Vec3{0.3, -0.2, 0.1}, Vec3{0, 0, 3.0}, Vec3{0, 0, 0}, Vec3{1e-7, 0, 0}}) {
        const Vec3 back = rotationVectorOf(quatFromRotationVector(v));
        CHECK(length(back - v) < Real(1e-9));
    }
}

TEST_CASE("grasp keys: reset puts the gripper at rest under the user's control; taking over keeps the script's motion") {
    auto [model, settings, info] = test::loadLibraryScene("grasp_box");
    GraspDriver driver(model, info.grasp);
    const GraspCommand rest = driver.controller().restCommand();
    driver.play();
    // Mid-lowering (t = 0.75 s: the script's fastest), the user presses Q: the command at that
    // moment is the script's, its rate the script's, and the goal 1 cm below the script's target.
    const Real t = Real(0.75), d = Real(1e-3);
    const GraspCommand script = driver.controller().scriptAt(t);
    const Real scriptRate = (driver.controller().scriptAt(t + d).wrist.z - driver.controller().scriptAt(t - d).wrist.z) / (2 * d);
    REQUIRE(driver.key('Q', t, Vec3{0, 1, 0}));
    CHECK(!driver.playing());
    CHECK(length(driver.commandAt(t).wrist - script.wrist) < Real(1e-9));   // the script's until committed
    driver.commit(t);
    CHECK(length(driver.commandAt(t).wrist - script.wrist) < Real(1e-9));
    const Real rate = (driver.commandAt(t + d).wrist.z - driver.commandAt(t).wrist.z) / d;
    CHECK(rate == doctest::Approx(double(scriptRate)).epsilon(0.01));   // 0.25 m/s, braked to the limit 0.15 m/s at 0.5 m/s^2
    CHECK(driver.goal().wrist.z == doctest::Approx(double(script.wrist.z - kGraspKeyStep)));
    // R: the gripper's command and goal at rest, the script stopped, nothing moving.
    driver.play();
    driver.reset();
    CHECK(!driver.playing());
    CHECK(length(driver.commandAt(0).wrist - rest.wrist) < Real(1e-12));
    CHECK(length(driver.commandAt(5).wrist - rest.wrist) < Real(1e-12));
    CHECK(driver.goal().grip == 0);
    CHECK(!driver.key('R', 0, Vec3{0, 1, 0}));   // not the grasp's key: the app resets
}

TEST_CASE("grasp keys: keys pressed while a physics job runs keep the wrist target's speed continuous") {
    // The app's real-time pattern (app/gui/physics_thread.cpp): a job of 9 steps (13 frames a
    // second at 120 Hz) steps with a copy of the driver taken at its launch; the keys come during
    // it, at the UI's time (the job's start); the next launch commits them at its own start. The
    // target's acceleration, by second differences of the positions the jobs applied, stays
    // within the limit: no jump at a job's seam.
    auto [model, settings, info] = test::loadLibraryScene("grasp_box");
    GraspDriver ui(model, info.grasp);
    const Real h = settings.dt;
    std::vector<Real> z;
    int step = 0, presses = 0;
    for (int job = 0; job < 60; ++job) {
        const Real start = step * h;
        ui.commit(start);
        const GraspDriver running = ui;   // the job's copy
        for (int k = 0; k < 9; ++k, ++step) {
            z.push_back(running.commandAt(step * h).wrist.z);
            if (k == 4 && presses < 20) {   // mid-job, at the UI's time
                REQUIRE(ui.key('E', start, Vec3{0, 1, 0}));
                ++presses;
            }
        }
    }
    Real worst = 0;
    for (size_t i = 1; i + 1 < z.size(); ++i) worst = std::max(worst, std::fabs(z[i + 1] - 2 * z[i] + z[i - 1]) / (h * h));
    MESSAGE("largest wrist target acceleration across 60 jobs: " << worst << " m/s^2");
    CHECK(z.back() == doctest::Approx(0.45 + 20 * 0.01));
    CHECK(worst <= ui.limits().wristAccel * Real(1.01));
}

TEST_CASE("grasp keys: a pad pressed on the floor reads 'other', not a grip") {
    // grasp_box with the box moved away; the wrist goal 6 cm below the grip height: the pads press
    // on the ground with the wrist joint's force, and nothing of it is the box's.
    auto [model, settings, info] = test::loadLibraryScene("grasp_box");
    model.initialPos[info.grasp.object] = Vec3{0.6, -0.6, 0.0605};
    World world(model, settings);
    GraspDriver driver(world.model(), info.grasp);
    GraspCommand goal = driver.goal();
    goal.wrist.z = Real(0.14);
    goal.grip = 1;
    driver.setGoal(goal, 0);
    driver.commit(0);
    for (int i = 0; i < 480; ++i) {
        driver.apply(world);
        world.step();
    }
    for (const FingerSpec& f : info.grasp.fingers) {
        const PadReading p = padReading(world, f.pads, info.grasp.object, -1);
        const PadReading all = padReading(world, f.pads);
        CAPTURE(p.otherNormalForce);
        CHECK(p.contacts == 0);
        CHECK(!p.sticking());
        CHECK(p.otherContacts > 0);
        CHECK(p.otherNormalForce > 10);
        CHECK(world.model().bodyName[p.otherBody] == "ground");
        CHECK(all.normalForce == doctest::Approx(double(p.otherNormalForce)));   // without an object: the same contacts
    }
}

TEST_CASE("grasp keys: grasp_box is lowered, gripped, lifted 0.2 m, held 5 s and set down with the keys") {
    const KeyPlan plan{"grasp_box", 25, 20, 5};   // rest 0.45 m, the script grips at 0.20 m
    checkHeld(runKeys(plan), plan);
}

TEST_CASE("grasp keys: without the ramps the same key presses drop or throw grasp_box's box") {
    const KeyPlan plan{"grasp_box", 25, 20, 5};
    const KeyRun r = runKeys(plan, GraspLimits::none());
    const Real most = *std::max_element(r.padMost.begin(), r.padMost.end());
    CHECK((r.liftRise < Real(0.1) || most > 5 * r.limit || r.leastRise < Real(-0.003)));
}

TEST_CASE("grasp keys: fetch_tomato's gripper and hand_ball's hand grasp, lift, hold and set down with the keys") {
    const KeyPlan tomato{"fetch_tomato", 26, 20, 5};   // rest 0.45 m; 0.19 m (the script's 0.175 pressed the floor)
    checkHeld(runKeys(tomato), tomato);
    const KeyPlan ball{"hand_ball", 20, 20, 5};       // rest 0.355 m, the script grips at 0.155 m
    checkHeld(runKeys(ball), ball);
}

// The FEM objects: a whole key grasp with a 5 s hold is about 1,700 steps of 5 ms (condensed FEM
// solve, docs/fem_direct_solve.md), still too long for the fast tier, hence the validate tier.
TEST_CASE("grasp keys: hand_ball_fem's hand grips, lifts, holds and sets down the FEM ball with the keys" * doctest::test_suite("validate")) {
    const KeyPlan plan{"hand_ball_fem", 20, 20, 5};   // rest 0.355 m, the script grips at 0.155 m
    checkHeld(runKeys(plan), plan);
}

TEST_CASE("grasp keys: fetch_tomato_fem's gripper grips, lifts, holds and sets down the FEM tomato with the keys" * doctest::test_suite("validate")) {
    const KeyPlan plan{"fetch_tomato_fem", 26, 20, 5};   // rest 0.45 m; 0.19 m, 5 mm above the script's 0.185
    checkHeld(runKeys(plan), plan);
}
