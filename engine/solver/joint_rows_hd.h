// The rows of one joint and of one mimic coupling as CS_HD functions over plain values, written
// once for the CPU (joint_rows.cpp buildJointRows, joint_coupling.cpp buildCouplingRows append
// them to ConstraintRows) and the step pipeline (engine/exec/pipeline_joints.h writes them into
// its flat rows, one thread per joint). The math and its equations are in joint_rows.cpp's and
// joint_coupling.h's headers ([NSN] section 3.2, compliance form C(q) + alpha lambda = 0):
//
//   position rows     C = e . (pB - pA),  J = [ -e, -(rA x e) | e, rB x e ]
//   angular rows      C = e . theta (theta ~ 2 vec(q_B (q_A q_rel)^-1)),  J = [ 0, -e | 0, e ]
//   hinge rows        C = e_k . (a_A x a_B), e_k a basis of the hinge's normal plane fixed in A
//   drive             C = q - target, bias = k C0/(k h + c), gamma = 1/(h (k h + c)) (damped)
//   rows              bias = C0 / h, gamma = alpha / h^2, |lambda| <= limit h when limited
//   coupling          C = q_a - ratio q_b - offset on up to four bodies (joint_coupling.h)
#pragma once

#include "engine/model.h"

namespace cs {

// A joint without its name: what its rows read (a plain struct the device can hold).
struct JointParams {
    JointType type;
    int bodyA, bodyB;              // -1: the world
    Vec3 anchorA, anchorB, axisA, axisB;
    Quat relRot;
    Real compliance, bendCompliance;
    int drive;
    Real driveTarget, driveCompliance, driveDamping, driveMaxForce, maxForce, maxTorque;
};

inline JointParams jointParams(const Joint& j) {
    return JointParams{j.type, j.bodyA, j.bodyB, j.anchorA, j.anchorB, j.axisA, j.axisB, j.relRot,
                       j.compliance, j.bendCompliance, j.drive ? 1 : 0, j.driveTarget, j.driveCompliance,
                       j.driveDamping, j.driveMaxForce, j.maxForce, j.maxTorque};
}

// A mimic coupling without its name.
struct CouplingParams {
    int jointA, jointB;
    Real ratio, offset, compliance;
};

inline CouplingParams couplingParams(const JointCoupling& k) {
    return CouplingParams{k.jointA, k.jointB, k.ratio, k.offset, k.compliance};
}

constexpr int kMaxJointRows = 6;   // a fixed joint, a driven hinge

// One bilateral row on the joint's two bodies (ConstraintRows::add's fields).
struct JointRow {
    Spatial jacobianA, jacobianB;
    Real bias, softness;
    Real maxImpulse;               // N s; 1e30: no limit (ConstraintRows::add's default)
};

struct JointRowSet {
    int count = 0;
    JointRow row[kMaxJointRows];
};

// The joint's bodies' poses (the world: origin, identity) and its lever arms in the world.
struct JointFrames {
    Vec3 xA, xB;
    Quat qA, qB;
    Vec3 rA, rB;
};

CS_HD JointFrames jointFramesOf(const JointParams& j, const Vec3* pos, const Quat* rot) {
    JointFrames f;
    f.xA = j.bodyA >= 0 ? pos[j.bodyA] : Vec3{0, 0, 0};
    f.xB = j.bodyB >= 0 ? pos[j.bodyB] : Vec3{0, 0, 0};
    f.qA = j.bodyA >= 0 ? rot[j.bodyA] : quatIdentity();
    f.qB = j.bodyB >= 0 ? rot[j.bodyB] : quatIdentity();
    f.rA = rotate(f.qA, j.anchorA);
    f.rB = rotate(f.qB, j.anchorB);
    return f;
}

CS_HD int jointRowCountOf(const JointParams& j) {
    switch (j.type) {
    case JointType::Ball: return 3;
    case JointType::Fixed: return 6;
    case JointType::Revolute: return 5 + (j.drive || j.bendCompliance >= 0 ? 1 : 0);
    case JointType::Prismatic: return 5 + (j.drive ? 1 : 0);
    }
    return 0;
}

// theta ~ 2 vec(q_e), q_e = q_B (q_A q_rel)^-1, the sign chosen so that w >= 0.
CS_HD Vec3 jointRotationError(const JointFrames& f, const JointParams& j) {
    const Quat qe = f.qB * conjugate(f.qA * j.relRot);
    const Real s = qe.w >= 0 ? Real(2) : Real(-2);
    return Vec3{s * qe.x, s * qe.y, s * qe.z};
}

// A row of physical compliance alpha: bias C0 / h, gamma alpha / h^2, |lambda| <= limit h.
CS_HD void addJointRow(JointRowSet& out, Spatial ja, Spatial jb, Real c0, Real alpha, Real h, Real limit) {
    JointRow& r = out.row[out.count++];
    r.jacobianA = ja;
    r.jacobianB = jb;
    r.bias = c0 / h;
    r.softness = alpha / (h * h);
    r.maxImpulse = limit >= 0 ? limit * h : Real(1e30);
}

// The drive's row, C0 = coordinate - target; with damping c > 0 a spring-damper of k = 1/alpha:
//   f = -k (C0 + h v) - c v  =>  bias = k C0/(k h + c), gamma = 1/(h (k h + c)).
CS_HD void addDriveRow(JointRowSet& out, const JointParams& j, Spatial ja, Spatial jb, Real c0, Real h) {
    if (!(j.driveDamping > 0) || !(j.driveCompliance > 0)) {
        addJointRow(out, ja, jb, c0, j.driveCompliance, h, j.driveMaxForce);
        return;
    }
    const Real k = 1 / j.driveCompliance, c = j.driveDamping;
    JointRow& r = out.row[out.count++];
    r.jacobianA = ja;
    r.jacobianB = jb;
    r.bias = k * c0 / (k * h + c);
    r.softness = 1 / (h * (k * h + c));
    r.maxImpulse = j.driveMaxForce >= 0 ? j.driveMaxForce * h : Real(1e30);
}

CS_HD void addPointRows(JointRowSet& out, const JointParams& j, const JointFrames& f, Real h, const Vec3* axes,
                        int count) {
    const Vec3 d = (f.xB + f.rB) - (f.xA + f.rA);
    for (int k = 0; k < count; ++k) {
        const Vec3 e = axes[k];
        addJointRow(out, Spatial{-e, -cross(f.rA, e)}, Spatial{e, cross(f.rB, e)}, dot(e, d), j.compliance, h,
                    j.maxForce);
    }
}

CS_HD void addAngularRows(JointRowSet& out, const JointParams& j, const JointFrames& f, Real h) {
    const Vec3 theta = jointRotationError(f, j);
    const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int k = 0; k < 3; ++k)
        addJointRow(out, Spatial{{0, 0, 0}, -axes[k]}, Spatial{{0, 0, 0}, axes[k]}, dot(axes[k], theta),
                    j.compliance, h, j.maxTorque);
}

// Two world axes perpendicular to the joint's axis, fixed in body A (joint_rows.cpp says why a
// basis of the world axis would not do: its warm impulses flip with it).
CS_HD void bodyFixedBasis(Quat qA, Vec3 localAxis, Vec3& b1, Vec3& b2) {
    Vec3 l1, l2;
    tangentBasis(localAxis, l1, l2);
    b1 = rotate(qA, l1);
    b2 = rotate(qA, l2);
}

// Every row of joint j, in buildJointRows' order (the drive's or the bending row last).
CS_HD void jointRowsOf(const JointParams& j, const JointFrames& f, Real h, JointRowSet& out) {
    const Vec3 world[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const Vec3 zero{0, 0, 0};
    out.count = 0;
    switch (j.type) {
    case JointType::Ball: addPointRows(out, j, f, h, world, 3); break;
    case JointType::Fixed:
        addPointRows(out, j, f, h, world, 3);
        addAngularRows(out, j, f, h);
        break;
    case JointType::Revolute: {
        addPointRows(out, j, f, h, world, 3);
        const Vec3 aA = rotate(f.qA, j.axisA), aB = rotate(f.qB, j.axisB);
        Vec3 b[2];
        bodyFixedBasis(f.qA, j.axisA, b[0], b[1]);
        const Vec3 c = cross(aA, aB);
        for (int k = 0; k < 2; ++k)
            addJointRow(out, Spatial{zero, -b[k]}, Spatial{zero, b[k]}, dot(b[k], c), j.compliance, h, j.maxTorque);
        if (j.drive || j.bendCompliance >= 0) {
            const Real angle = dot(jointRotationError(f, j), aA);
            if (j.drive) addDriveRow(out, j, Spatial{zero, -aA}, Spatial{zero, aA}, angle - j.driveTarget, h);
            else addJointRow(out, Spatial{zero, -aA}, Spatial{zero, aA}, angle, j.bendCompliance, h, -1);
        }
        break;
    }
    case JointType::Prismatic: {
        addAngularRows(out, j, f, h);
        const Vec3 axis = rotate(f.qA, j.axisA);
        Vec3 perp[2];
        bodyFixedBasis(f.qA, j.axisA, perp[0], perp[1]);
        addPointRows(out, j, f, h, perp, 2);
        if (j.drive) {
            const Vec3 d = (f.xB + f.rB) - (f.xA + f.rA);
            addDriveRow(out, j, Spatial{-axis, -cross(f.rA, axis)}, Spatial{axis, cross(f.rB, axis)},
                        dot(axis, d) - j.driveTarget, h);
        }
        break;
    }
    }
}

// The free coordinate q of a revolute (its hinge angle, rad) or prismatic (m) joint.
CS_HD Real jointFreeCoordinateOf(const JointParams& j, const JointFrames& f) {
    const Vec3 axis = rotate(f.qA, j.axisA);
    if (j.type == JointType::Revolute) return dot(jointRotationError(f, j), axis);
    return dot(axis, (f.xB + f.rB) - (f.xA + f.rA));
}

// One coupling's row on up to four bodies (bodies[k] = -1: none; a body shared by the two joints
// has one column, the sum of its two).
struct CouplingRow {
    int bodies[4];
    Spatial columns[4];
    Real bias, softness;
};

// dq/dt = J_A u_A + J_B u_B of a joint's free coordinate (joint_coupling.h).
CS_HD void coordinateJacobian(const JointParams& j, const JointFrames& f, Spatial& ja, Spatial& jb) {
    const Vec3 axis = rotate(f.qA, j.axisA);
    if (j.type == JointType::Revolute) {
        ja = Spatial{{0, 0, 0}, -axis};
        jb = Spatial{{0, 0, 0}, axis};
        return;
    }
    const Vec3 d = (f.xB + f.rB) - (f.xA + f.rA);
    ja = Spatial{-axis, -cross(f.rA + d, axis)};   // (wA x e) . d = wA . (e x d)
    jb = Spatial{axis, cross(f.rB, axis)};
}

CS_HD void addCouplingColumn(int body, const Spatial& jacobian, Real weight, CouplingRow& r) {
    if (body < 0) return;
    for (int k = 0; k < 4; ++k) {
        if (r.bodies[k] == body) {
            r.columns[k] = r.columns[k] + weight * jacobian;
            return;
        }
        if (r.bodies[k] < 0) {
            r.bodies[k] = body;
            r.columns[k] = weight * jacobian;
            return;
        }
    }
}

// C = q_a - ratio q_b - offset, J = J_a - ratio J_b; bias C / h, gamma alpha / h^2.
CS_HD void couplingRowOf(const CouplingParams& k, const JointParams& a, const JointFrames& fa, const JointParams& b,
                         const JointFrames& fb, Real h, CouplingRow& r) {
    const Real error = jointFreeCoordinateOf(a, fa) - k.ratio * jointFreeCoordinateOf(b, fb) - k.offset;
    Spatial aA, aB, bA, bB;
    coordinateJacobian(a, fa, aA, aB);
    coordinateJacobian(b, fb, bA, bB);
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    for (int c = 0; c < 4; ++c) {
        r.bodies[c] = -1;
        r.columns[c] = zero;
    }
    addCouplingColumn(a.bodyA, aA, 1, r);
    addCouplingColumn(a.bodyB, aB, 1, r);
    addCouplingColumn(b.bodyA, bA, -k.ratio, r);
    addCouplingColumn(b.bodyB, bB, -k.ratio, r);
    r.bias = error / h;
    r.softness = k.compliance / (h * h);
}

}  // namespace cs
