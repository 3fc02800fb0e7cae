// The grasp's command as the app drives it (grasp_driver.h).
#include "engine/grasp/grasp_driver.h"

#include <algorithm>
#include <cmath>

namespace cs {

Ramp Ramp::plan(Real start, Real x0, Real v0, Real goal, Real speed, Real accel) {
    Ramp r;
    r.start = start;
    r.goal = goal;
    r.x0 = x0;
    if (!(speed > 0) || !(accel > 0)) {   // no limits: at the goal from the start
        r.x0 = goal;
        return r;
    }
    r.v0 = v0;
    r.accel = accel;
    // Accelerate towards the goal unless braking now would already stop at or past it.
    const Real e = goal - x0;
    const Real stopping = v0 * std::fabs(v0) / (2 * accel);
    r.sign = e - stopping >= 0 ? Real(1) : Real(-1);
    const Real distance = r.sign * e, u0 = r.sign * v0;   // along sign
    // Peak speed of accelerate-then-brake: (p^2 - u0^2) / 2a + p^2 / 2a = distance; at most the
    // speed limit. A start faster than the limit (taking over from a faster script) brakes to
    // it first: the first phase's acceleration is then -a.
    Real peak = std::sqrt(std::max(Real(0), (2 * accel * distance + u0 * u0) / 2));
    peak = std::min(peak, speed);
    r.peak = peak;
    r.a1 = peak >= u0 ? accel : -accel;
    r.t1 = std::fabs(peak - u0) / accel;
    r.d1 = (peak * peak - u0 * u0) / (2 * r.a1);
    const Real braking = peak * peak / (2 * accel);
    r.d2 = std::max(Real(0), distance - r.d1 - braking);
    r.t2 = peak > 0 ? r.d2 / peak : Real(0);
    r.t3 = peak / accel;
    return r;
}

Real Ramp::position(Real t) const {
    Real tau = t - start;
    if (tau <= 0) return x0;
    if (tau >= t1 + t2 + t3) return goal;
    const Real u0 = sign * v0;
    Real along;
    if (tau < t1) {
        along = u0 * tau + a1 * tau * tau / 2;
    } else if (tau < t1 + t2) {
        along = d1 + peak * (tau - t1);
    } else {
        const Real s = tau - t1 - t2;
        along = d1 + d2 + peak * s - accel * s * s / 2;
    }
    return x0 + sign * along;
}

Real Ramp::velocity(Real t) const {
    const Real tau = t - start;
    if (tau < 0) return v0;
    if (tau >= t1 + t2 + t3) return 0;
    const Real u0 = sign * v0;
    if (tau < t1) return sign * (u0 + a1 * tau);
    if (tau < t1 + t2) return sign * peak;
    return sign * (peak - accel * (tau - t1 - t2));
}

Vec3 rotationVectorOf(Quat q) {
    q = normalize(q);
    if (q.w < 0) q = Quat{-q.w, -q.x, -q.y, -q.z};   // the angle in [0, pi]
    const Vec3 v{q.x, q.y, q.z};
    const Real s = length(v);
    if (!(s > Real(1e-12))) return Vec3{0, 0, 0};
    return (2 * std::atan2(s, q.w) / s) * v;
}

GraspDriver::GraspDriver(const Model& model, GraspSpec spec, GraspLimits limits)
    : controller_(model, std::move(spec)), limits_(limits) {
    reset();
}

void GraspDriver::reset() {
    playing_ = fromScript_ = dirty_ = false;
    goal_ = controller_.restCommand();
    goal_.phase = "user";
    Channels at, still;
    at.wrist = goal_.wrist;
    at.grip.assign(controller_.spec().fingers.size(), goal_.grip);
    still.grip.assign(at.grip.size(), 0);
    plan(0, at, still);
}

GraspDriver::Channels GraspDriver::userAt(Real t, bool velocity) const {
    Channels c;
    for (int k = 0; k < 3; ++k) {
        c.wrist[k] = velocity ? wrist_[k].velocity(t) : wrist_[k].position(t);
        c.turn[k] = velocity ? turn_[k].velocity(t) : turn_[k].position(t);
    }
    for (const Ramp& r : grip_) c.grip.push_back(velocity ? r.velocity(t) : r.position(t));
    return c;
}

GraspDriver::Channels GraspDriver::scriptAt(Real t, bool velocity) const {
    auto channels = [&](Real at) {
        const GraspCommand s = controller_.scriptAt(at);
        Channels c;
        c.wrist = s.wrist;
        c.turn = rotationVectorOf(s.rotation);
        c.grip.assign(controller_.spec().fingers.size(), s.grip);
        return c;
    };
    if (!velocity) return channels(t);
    // The script's rate by a central difference (smoothstep is smooth within a segment and has
    // zero rate at its keys).
    const Real d = Real(1e-4);
    Channels a = channels(std::max(t - d, Real(0))), b = channels(t + d), v;
    const Real span = t + d - std::max(t - d, Real(0));
    v.wrist = (b.wrist - a.wrist) / span;
    v.turn = (b.turn - a.turn) / span;
    for (size_t f = 0; f < a.grip.size(); ++f) v.grip.push_back((b.grip[f] - a.grip[f]) / span);
    return v;
}

void GraspDriver::plan(Real t, const Channels& position, const Channels& velocity) {
    // The goal's rotation vector: of the two that name the same rotation near pi, the nearer.
    Vec3 turn = rotationVectorOf(goal_.rotation);
    const Real angle = length(turn);
    if (angle > 0) {
        const Vec3 other = turn - (2 * Real(3.14159265358979) / angle) * turn;
        if (length(other - position.turn) < length(turn - position.turn)) turn = other;
    }
    for (int k = 0; k < 3; ++k) {
        wrist_[k] = Ramp::plan(t, position.wrist[k], velocity.wrist[k], goal_.wrist[k], limits_.wristSpeed, limits_.wristAccel);
        turn_[k] = Ramp::plan(t, position.turn[k], velocity.turn[k], turn[k], limits_.turnSpeed, limits_.turnAccel);
    }
    const size_t fingers = controller_.spec().fingers.size();
    grip_.resize(fingers);
    for (size_t f = 0; f < fingers; ++f) {
        const Real target = f < goal_.fingerGrip.size() && goal_.fingerGrip[f] >= 0 ? goal_.fingerGrip[f] : goal_.grip;
        const Real x = f < position.grip.size() ? position.grip[f] : target;
        const Real v = f < velocity.grip.size() ? velocity.grip[f] : 0;
        grip_[f] = Ramp::plan(t, x, v, std::clamp(target, Real(0), Real(1)), limits_.gripSpeed, limits_.gripAccel);
    }
}

void GraspDriver::takeOver(Real now) {
    if (!playing_) return;
    goal_ = controller_.scriptAt(now);
    goal_.phase = "user";
    goal_.fingerGrip.clear();
    playing_ = false;
    fromScript_ = dirty_ = true;
}

void GraspDriver::setGoal(const GraspCommand& goal, Real now) {
    takeOver(now);
    goal_ = goal;
    goal_.phase = "user";
    goal_.grip = std::clamp(goal_.grip, Real(0), Real(1));
    dirty_ = true;
}

void GraspDriver::commit(Real t) {
    if (!dirty_) return;
    const Channels position = fromScript_ ? scriptAt(t, false) : userAt(t, false);
    const Channels velocity = fromScript_ ? scriptAt(t, true) : userAt(t, true);
    plan(t, position, velocity);
    fromScript_ = dirty_ = false;
}

GraspCommand GraspDriver::commandAt(Real t) const {
    if (playing_ || fromScript_) return controller_.scriptAt(t);
    GraspCommand c = goal_;
    const Channels now = userAt(t, false);
    c.wrist = now.wrist;
    c.rotation = quatFromRotationVector(now.turn);
    c.fingerGrip = now.grip;
    // The shown grip: the first finger's unless the goal sets the fingers apart.
    if (!now.grip.empty() && goal_.fingerGrip.empty()) c.grip = now.grip[0];
    return c;
}

bool GraspDriver::key(int key, Real now, Vec3 ahead, std::string* message) {
    if (!active()) return false;
    ahead = Vec3{ahead.x, ahead.y, 0};
    ahead = lengthSq(ahead) > 0 ? normalize(ahead) : Vec3{0, 1, 0};
    const Vec3 right{ahead.y, -ahead.x, 0};
    Vec3 move{0, 0, 0}, turn{0, 0, 0};
    bool toggle = false;
    switch (key) {
    case 'W': move = ahead; break;
    case 'S': move = -ahead; break;
    case 'D': move = right; break;
    case 'A': move = -right; break;
    case 'E': move = Vec3{0, 0, 1}; break;
    case 'Q': move = Vec3{0, 0, -1}; break;
    case 'J': turn = Vec3{0, 0, 1}; break;
    case 'L': turn = Vec3{0, 0, -1}; break;
    case 'U': turn = right; break;
    case 'O': turn = -right; break;
    case 'Z': turn = ahead; break;
    case 'X': turn = -ahead; break;
    case 'V': toggle = true; break;
    default: return false;
    }
    takeOver(now);
    GraspCommand c = goal_;
    if (toggle) {
        // Opens when the goal is closed or half-closed, else closes; one grip for every finger.
        c.grip = c.grip > Real(0.5) ? Real(0) : Real(1);
        c.fingerGrip.clear();
        if (message) *message = c.grip > 0 ? "closing the gripper" : "opening the gripper";
    }
    c.wrist = c.wrist + kGraspKeyStep * move;
    if (lengthSq(turn) > 0) c.rotation = normalize(quatFromAxisAngle(turn, kGraspKeyTurn) * c.rotation);
    setGoal(c, now);
    return true;
}

void GraspDriver::apply(World& world) const {
    if (!active()) return;
    controller_.apply(world.model(), commandAt(world.state().time));
}

}  // namespace cs
