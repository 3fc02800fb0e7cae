// Grasp sensing (grasp_sensors.h).
#include "engine/grasp/grasp_sensors.h"

#include <algorithm>
#include <cmath>

#include "engine/solver/joint_rows.h"

namespace cs {

namespace {

Real stepLength(const World& world) {
    return world.settings.dt / Real(world.settings.substeps > 0 ? world.settings.substeps : 1);
}

// Velocity of the point p of body b (zero for the world or a static body).
Vec3 pointVelocity(const World& world, int b, Vec3 p) {
    if (b < 0 || world.model().isStatic(b)) return Vec3{0, 0, 0};
    const State& s = world.state();
    return s.linVel[b] + cross(s.angVel[b], p - s.pos[b]);
}

}  // namespace

int jointFirstRow(const World& world, int joint) {
    const Model& m = world.model();
    int row = 0, total = 0;
    for (int j = 0; j < (int)m.joints.size(); ++j) {
        if (j == joint) row = total;
        total += jointRowCount(m.joints[j]);
    }
    total += (int)m.couplings.size();   // one row each, after the joints' (joint_coupling.h)
    return (int)world.state().jointWarm.size() == total ? row : -1;
}

Real jointCoordinate(const World& world, int joint) {
    const Joint& j = world.model().joints[joint];
    const State& s = world.state();
    if (j.type == JointType::Revolute) return revoluteAngle(world.model(), s, j);
    const Vec3 xA = j.bodyA >= 0 ? s.pos[j.bodyA] : Vec3{0, 0, 0};
    const Quat qA = j.bodyA >= 0 ? s.rot[j.bodyA] : quatIdentity();
    const Vec3 xB = j.bodyB >= 0 ? s.pos[j.bodyB] : Vec3{0, 0, 0};
    const Quat qB = j.bodyB >= 0 ? s.rot[j.bodyB] : quatIdentity();
    const Vec3 d = (xB + rotate(qB, j.anchorB)) - (xA + rotate(qA, j.anchorA));
    return dot(rotate(qA, j.axisA), d);
}

Real jointDriveForce(const World& world, int joint) {
    const Joint& j = world.model().joints[joint];
    const int first = jointFirstRow(world, joint);
    if (!j.drive || first < 0) return 0;
    // The drive row is the joint's last (joint_rows.cpp); its Jacobian on B is +axis, so
    // lambda > 0 pushes B along +axis.
    return world.state().jointWarm[first + jointRowCount(j) - 1] / stepLength(world);
}

PadReading padReading(const World& world, const std::vector<int>& pads, int objectBody, int objectFem) {
    PadReading r;
    const Model& m = world.model();
    const Real h = stepLength(world);
    const bool anything = objectBody < 0 && objectFem < 0;
    auto isPad = [&](int b) { return b >= 0 && std::find(pads.begin(), pads.end(), b) != pads.end(); };
    std::vector<std::pair<int, Real>> others;   // rigid body, normal force on it
    for (const Contact& c : world.contacts()) {
        const PotentialContact& g = c.geometry;
        const bool onA = isPad(g.bodyA), onB = isPad(g.bodyB);
        if (onA == onB || !(c.normalImpulse > 0)) continue;   // not a pad's, or between two pads
        // What the pad touches: a deformable body's node (pointA's side) or the rigid body opposite.
        const int otherRigid = c.femNode >= 0 ? -1 : onA ? g.bodyB : g.bodyA;
        const bool object = anything || (c.femNode >= 0 ? objectFem >= 0 && m.femNodeBody[c.femNode] == objectFem
                                                        : objectBody >= 0 && otherRigid == objectBody);
        if (!object) {
            r.otherNormalForce += c.normalImpulse / h;
            r.otherContacts++;
            if (otherRigid >= 0) {
                auto it = std::find_if(others.begin(), others.end(), [&](const auto& o) { return o.first == otherRigid; });
                if (it == others.end()) others.push_back({otherRigid, c.normalImpulse / h});
                else it->second += c.normalImpulse / h;
            }
            continue;
        }
        // The impulse on A is n lambda_n + t_k lambda_tk (normal from B towards A); B gets its opposite.
        const Vec3 onBodyA = c.normalImpulse * g.normal + c.tangentImpulse[0] * c.tangent[0] +
                             c.tangentImpulse[1] * c.tangent[1];
        r.force += (onA ? onBodyA : -onBodyA) / h;
        r.normalForce += c.normalImpulse / h;
        r.frictionForce += std::sqrt(c.tangentImpulse[0] * c.tangentImpulse[0] +
                                     c.tangentImpulse[1] * c.tangentImpulse[1]) / h;
        r.contacts++;
        r.sliding += c.sliding ? 1 : 0;
        r.slidingNormal += c.sliding ? c.normalImpulse / h : Real(0);
        const Vec3 p = Real(0.5) * (g.pointA + g.pointB);
        Vec3 v = pointVelocity(world, g.bodyA, p) - pointVelocity(world, g.bodyB, p);
        if (c.femNode >= 0) v = world.state().femVel[c.femNode] - pointVelocity(world, g.bodyB, p);
        v -= dot(v, g.normal) * g.normal;
        r.slipSpeed = std::max(r.slipSpeed, length(v));
        r.meanSlipSpeed += c.normalImpulse / h * length(v);   // over normalForce below
    }
    if (r.normalForce > 0) r.meanSlipSpeed /= r.normalForce;
    Real most = 0;
    for (const auto& o : others)
        if (o.second > most) {
            most = o.second;
            r.otherBody = o.first;
        }
    return r;
}

ScaleReading scaleReading(const World& world, int joint) {
    ScaleReading r;
    const Model& m = world.model();
    const Joint& j = m.joints[joint];
    if (!j.drive || !(j.driveCompliance > 0)) return r;
    r.deflection = j.driveTarget - jointCoordinate(world, joint);
    r.force = r.deflection / j.driveCompliance;   // k (target - s), along the axis on B
    const Vec3 g = world.settings.gravity;
    const Real g2 = lengthSq(g);
    if (!(g2 > 0)) return r;
    const Quat qA = j.bodyA >= 0 ? world.state().rot[j.bodyA] : quatIdentity();
    const Vec3 up = rotate(qA, j.axisA);
    // Spring force against gravity, over |g|: the weight it carries, less the platform's own.
    const Real platform = j.bodyB >= 0 ? m.mass[j.bodyB] : Real(0);
    r.kilograms = r.force * dot(up, -g) / g2 - platform;
    return r;
}

}  // namespace cs
