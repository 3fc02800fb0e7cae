// The grasp's command as the app drives it: the user's (keys, mouse, the Grasp window's sliders)
// or the script's, written into the model before every step (GraspController::apply).
//
// The user's input sets a goal (GraspCommand); the command that reaches the model moves to it
// along a ramp in the world's time, each channel (the wrist's x, y, z, its rotation vector's
// three components, each finger's grip) at most at a speed and an acceleration (GraspLimits),
// starting from where the command was and how fast it moved when the goal changed, so that its
// position and speed never jump. Why: a key press used to move the wrist target 1 cm within
// one step (1.2 m/s for one step at 120 Hz), an acceleration of over 100 m/s^2 that no grip of
// 1.2x its minimum force (2 m/s^2 of margin for grasp_box's box) holds; and V moved the jaws'
// drive targets from open to closed at once, so the force-limited drives flung the pads across
// the 3 cm gap at 2 m/s, 2 cm into the box within a step, and the push-out of that overlap
// threw the box (hundreds of N). The script moves the same way by smoothstep between keys
// (grasp_control.h); the ramps give a held object the same bounded acceleration however the
// keys are pressed or held. The grip force (the drives' force limit) is set at once: it is a
// limit, not a position.
//
// Keys (GraspDriver::key, called by the app's GLFW key callback and by the tests alike, then
// GraspDriver::commit before the next step, as the app does): the
// codes are GLFW's, which for letters are the upper-case ASCII letters ('Q' == GLFW_KEY_Q).
// W/S A/D move the goal 1 cm along the view's level ahead and right directions, Q/E down and up,
// J/L U/O Z/X turn it 5 degrees, V opens or closes.
#pragma once

#include <string>
#include <vector>

#include "engine/grasp/grasp_control.h"
#include "engine/world.h"

namespace cs {

// One channel moved to a goal in the least time with |acceleration| <= accel and |speed| <= speed,
// from a start position and velocity: accelerate (or brake to the speed limit), cruise,
// decelerate to rest at the goal. Limits <= 0 jump to the goal at the start time.
struct Ramp {
    Real start = 0;                 // s, world time of the start
    Real x0 = 0, v0 = 0;            // position and velocity at the start
    Real goal = 0;
    Real sign = 1;                  // direction of the first phase's acceleration
    Real accel = 0;                 // m/s^2 (or rad/s^2, 1/s^2)
    Real a1 = 0;                    // the first phase's acceleration along sign: +accel, or -accel
                                    //   from a start faster than the speed limit
    Real peak = 0;                  // speed at the end of the first phase (>= 0, along sign)
    Real t1 = 0, t2 = 0, t3 = 0;    // s: accelerate, cruise, decelerate
    Real d1 = 0, d2 = 0;            // distance along sign covered by the first two phases

    static Ramp plan(Real start, Real x0, Real v0, Real goal, Real speed, Real accel);
    static Ramp at(Real x) { return plan(0, x, 0, x, 0, 0); }
    Real position(Real t) const;
    Real velocity(Real t) const;
    Real endTime() const { return start + t1 + t2 + t3; }
};

// The rates of the user's command. The wrist's acceleration is a quarter of grasp_box's margin
// (2 mu N / m - g = 2.0 m/s^2 at 1.2x the minimum grip); its speed is the script's mean lowering
// speed (0.25 m in 1.5 s). The grip moves at most 0.6 of its range per second (open to closed in
// 1.8 s; the script's smoothstep takes 0.7 s): the jaws then meet the object at 0.036 m/s, and a
// 0.1 kg jaw's momentum, stopped within a 120 Hz step, adds m v / h = 0.43 N to the pad's normal
// force over the grip force (grasp_box: 8.28 N at its 7.85 N grip, tests/test_grasp_keys.cpp).
// At 1.5 per s (0.09 m/s) fetch_tomato's pads read 3.08 N at its 2 N grip, over the grip plus
// the tomato's weight share (2.74 N a pad).
struct GraspLimits {
    Real wristSpeed = Real(0.15), wristAccel = Real(0.5);   // m/s, m/s^2
    Real turnSpeed = Real(0.6), turnAccel = Real(2);        // rad/s, rad/s^2
    Real gripSpeed = Real(0.6), gripAccel = Real(6);        // per s, per s^2 (grip from 0 to 1)
    static GraspLimits none() { return GraspLimits{0, 0, 0, 0, 0, 0}; }   // every change at once
};

constexpr Real kGraspKeyStep = Real(0.01);                          // m per key press
constexpr Real kGraspKeyTurn = Real(5 * 3.14159265358979 / 180);    // rad per key press

class GraspDriver {
public:
    GraspDriver() = default;
    GraspDriver(const Model& model, GraspSpec spec, GraspLimits limits = GraspLimits{});

    const GraspController& controller() const { return controller_; }
    const GraspLimits& limits() const { return limits_; }
    bool active() const { return controller_.active(); }
    bool playing() const { return playing_; }

    // The scene's start (t = 0): the user's command at rest (wrist at rest, open, the spec's
    // grip force), the script stopped.
    void reset();
    // Plays the script from the world's time (the caller resets the worlds first).
    void play() {
        playing_ = true;
        fromScript_ = dirty_ = false;
    }

    // The user's input changes the goal at once and the ramps towards it at the next commit(t).
    // `now` is the caller's idea of the time: taking over from the script, the goal starts from
    // the script's command then.
    //
    // Why apart: the app steps its copies in jobs on a physics thread (app/gui/physics_thread.cpp)
    // that carry a copy of the driver, and a key press comes while one runs, its end time unknown.
    // Planned at the UI's time (the job's start), the new ramp differed from the one the job
    // stepped by up to a dt^2 at the next job's start: at 13 frames a second (77 ms jobs) a
    // 2.8 mm, 0.08 m/s jump of the wrist target within a step, 9 m/s^2, and the real-time window
    // dropped the box that the fixed-step test held. The app commits at the time the next job or
    // synchronous step starts from, so the command's position and speed stay continuous.
    //
    // The user takes over where the script's command is, moving as fast as it moved.
    void takeOver(Real now);
    // What the user set (the keys', the mouse's and the sliders' target).
    const GraspCommand& goal() const { return goal_; }
    // The user's new goal (takes over from the script first).
    void setGoal(const GraspCommand& goal, Real now);
    // A key press; `ahead` is the view's level ahead direction (W/S, U/O, Z/X). Returns false for a
    // key that is not the grasp's; `message` gets a status line for V.
    bool key(int key, Real now, Vec3 ahead, std::string* message = nullptr);
    // Plans the ramps from the command's position and rate at time t towards the goal, if the
    // goal changed since the last commit (the app: before each job or synchronous step, at the
    // copies' time).
    void commit(Real t);

    // The command at time t: the script's while it plays (or until the take-over is committed),
    // else the user's ramps towards the committed goal.
    GraspCommand commandAt(Real t) const;
    // Writes the command at the world's time into its model (before a step).
    void apply(World& world) const;

private:
    // The ramped channels: the wrist, its rotation vector, each finger's grip.
    struct Channels {
        Vec3 wrist{0, 0, 0}, turn{0, 0, 0};
        std::vector<Real> grip;
    };
    Channels userAt(Real t, bool velocity) const;
    Channels scriptAt(Real t, bool velocity) const;
    void plan(Real t, const Channels& position, const Channels& velocity);

    GraspController controller_;
    GraspLimits limits_;
    bool playing_ = false;
    bool fromScript_ = false;                // taken over, not yet committed: the ramps start from the script
    bool dirty_ = false;                     // the goal changed since the last commit
    GraspCommand goal_;
    Ramp wrist_[3], turn_[3];
    std::vector<Ramp> grip_;                 // per finger
};

// A unit quaternion's rotation vector (rad), the inverse of quatFromRotationVector; the angle in [0, pi].
Vec3 rotationVectorOf(Quat q);

}  // namespace cs
