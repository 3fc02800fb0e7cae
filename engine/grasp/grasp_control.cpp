// The grasp's controls (grasp_control.h).
#include "engine/grasp/grasp_control.h"

#include <algorithm>
#include <cmath>

namespace cs {

Quat quatFromRotationVector(Vec3 v) {
    const Real angle = length(v);
    return angle > Real(1e-12) ? quatFromAxisAngle(v / angle, angle) : quatIdentity();
}

Quat quatSlerp(Quat a, Quat b, Real s) {
    Real c = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
    if (c < 0) {   // the shorter arc
        b = Quat{-b.w, -b.x, -b.y, -b.z};
        c = -c;
    }
    Real wa = 1 - s, wb = s;
    if (c < Real(0.9995)) {
        const Real theta = std::acos(c), sn = std::sin(theta);
        wa = std::sin((1 - s) * theta) / sn;
        wb = std::sin(s * theta) / sn;
    }
    return normalize(Quat{wa * a.w + wb * b.w, wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z});
}

GraspController::GraspController(const Model& model, GraspSpec spec) : spec_(std::move(spec)) {
    if (spec_.wristJoint >= 0) {
        const Joint& j = model.joints[spec_.wristJoint];
        restWrist_ = j.anchorA;   // world frame: body_a is the world
        restRot_ = j.relRot;
    }
}

GraspCommand GraspController::restCommand() const {
    GraspCommand c;
    c.wrist = restWrist_;
    c.force = spec_.gripForce;
    c.phase = "rest";
    return c;
}

GraspCommand GraspController::scriptAt(Real t) const {
    if (spec_.script.empty()) return restCommand();
    const std::vector<GraspKey>& keys = spec_.script;
    size_t i = 0;
    while (i + 1 < keys.size() && keys[i + 1].time <= t) ++i;
    const GraspKey& a = keys[i];
    const GraspKey& b = i + 1 < keys.size() ? keys[i + 1] : a;
    const Real span = b.time - a.time;
    const Real x = span > 0 ? std::clamp((t - a.time) / span, Real(0), Real(1)) : Real(0);
    // Smoothstep 3x^2 - 2x^3: the target starts and stops each segment at zero speed. A linear
    // ramp would change the wrist's velocity within one step, an acceleration of v / h (12 m/s^2
    // for 0.1 m/s at 120 Hz) that a grip at 1.2x its minimum force (2 m/s^2 of margin) drops.
    const Real s = x * x * (3 - 2 * x);
    auto force = [&](const GraspKey& k) { return k.force >= 0 ? k.force : spec_.gripForce; };
    GraspCommand c;
    c.wrist = a.wrist + s * (b.wrist - a.wrist);
    c.rotation = quatSlerp(quatFromRotationVector(a.rotation), quatFromRotationVector(b.rotation), s);
    c.grip = a.grip + s * (b.grip - a.grip);
    c.force = force(a) + s * (force(b) - force(a));
    c.phase = a.phase;
    return c;
}

Real GraspController::fingerTarget(int finger, int joint, Real grip) const {
    const FingerSpec& f = spec_.fingers[finger];
    return f.open[joint] + grip * (f.closed[joint] - f.open[joint]);
}

void GraspController::apply(Model& model, const GraspCommand& c) const {
    if (spec_.wristJoint >= 0) {
        Joint& j = model.joints[spec_.wristJoint];
        j.anchorA = c.wrist;
        j.relRot = normalize(c.rotation * restRot_);   // turned in the world frame
    }
    for (size_t f = 0; f < spec_.fingers.size(); ++f) {
        const FingerSpec& finger = spec_.fingers[f];
        const Real grip = f < c.fingerGrip.size() && c.fingerGrip[f] >= 0 ? c.fingerGrip[f] : c.grip;
        const Real limit = finger.lever > 0 ? c.force * finger.lever : c.force;
        for (size_t k = 0; k < finger.joints.size(); ++k) {
            Joint& j = model.joints[finger.joints[k]];
            j.driveTarget = fingerTarget(int(f), int(k), std::clamp(grip, Real(0), Real(1)));
            j.driveMaxForce = std::max(limit, Real(0));
        }
    }
}

}  // namespace cs
