// Joint rows ([NSN] section 3.2, compliance form C(q) + alpha lambda = 0).
//
// Position rows (ball, and the anchor part of fixed, revolute and prismatic joints): with world
// anchors pA = xA + R_A a_A, pB = xB + R_B a_B and a world axis e,
//     C = e . (pB - pA),   J = [ -e, -(rA x e) | e, rB x e ].
// Angular rows: the error rotation q_e = q_B (q_A q_rel)^-1 has rotation vector theta ~ 2 vec(q_e)
// (sign chosen so w >= 0); each world axis e gives C = e . theta, J = [ 0, -e | 0, e ].
// A revolute joint keeps the two angular rows perpendicular to its axis: C = e_k . (a_A x a_B).
// Its free axis can carry a bending stiffness (the [NSN] beam) or a drive: C = angle - target.
// A drive with damping c is a spring-damper of stiffness k = 1/alpha (a scale's spring, a finger's
// servo): bias = k C0/(k h + c), gamma = 1/(h (k h + c)) (constraint_rows.h); with c = 0 this is
// the compliance form. Force limits (Joint::driveMaxForce, maxForce, maxTorque) bound a row's
// impulse, |lambda| <= limit h: a box-constrained row that the Newton iteration linearizes as
// such (constraint_rows.h, evalRow), so a saturated drive pushes with exactly its limit.
#include "engine/solver/joint_rows.h"

#include <cmath>

namespace cs {

namespace {

struct Frames {
    Vec3 xA, xB;      // body COMs (world origin for the world)
    Quat qA, qB;
    Vec3 rA, rB;      // lever arms to the anchors, world
};

Frames jointFrames(const Model& model, const State& state, const Joint& j) {
    Frames f;
    f.xA = j.bodyA >= 0 ? state.pos[j.bodyA] : Vec3{0, 0, 0};
    f.xB = j.bodyB >= 0 ? state.pos[j.bodyB] : Vec3{0, 0, 0};
    f.qA = j.bodyA >= 0 ? state.rot[j.bodyA] : quatIdentity();
    f.qB = j.bodyB >= 0 ? state.rot[j.bodyB] : quatIdentity();
    f.rA = rotate(f.qA, j.anchorA);
    f.rB = rotate(f.qB, j.anchorB);
    return f;
}

// Bias and softness of a row with physical compliance alpha (constraint_rows.h), and its force
// limit (N or N m; < 0: none) as an impulse bound.
void addBilateral(ConstraintRows& rows, const Joint& j, int owner, Spatial ja, Spatial jb, Real c0, Real alpha,
                  Real h, Real limit = -1) {
    const int row = rows.add(RowKind::Bilateral, j.bodyA, j.bodyB, ja, jb, c0 / h, alpha / (h * h), owner);
    if (limit >= 0) rows.maxImpulse[row] = limit * h;
}

// The drive row: C0 = coordinate - target. With damping c > 0 a spring-damper of k = 1/alpha:
//   f = -k (C0 + h v) - c v  =>  bias = k C0/(k h + c), gamma = 1/(h (k h + c)).
void addDriveRow(ConstraintRows& rows, const Joint& j, int owner, Spatial ja, Spatial jb, Real c0, Real h) {
    if (!(j.driveDamping > 0) || !(j.driveCompliance > 0)) {
        addBilateral(rows, j, owner, ja, jb, c0, j.driveCompliance, h, j.driveMaxForce);
        return;
    }
    const Real k = 1 / j.driveCompliance, c = j.driveDamping;
    const int row = rows.add(RowKind::Bilateral, j.bodyA, j.bodyB, ja, jb, k * c0 / (k * h + c),
                             1 / (h * (k * h + c)), owner);
    if (j.driveMaxForce >= 0) rows.maxImpulse[row] = j.driveMaxForce * h;
}

void addPointRows(ConstraintRows& rows, const Joint& j, int owner, const Frames& f, Real h, const Vec3* axes,
                  int count) {
    Vec3 d = (f.xB + f.rB) - (f.xA + f.rA);
    for (int k = 0; k < count; ++k) {
        Vec3 e = axes[k];
        addBilateral(rows, j, owner, Spatial{-e, -cross(f.rA, e)}, Spatial{e, cross(f.rB, e)}, dot(e, d),
                     j.compliance, h, j.maxForce);
    }
}

// Two world axes perpendicular to a joint's axis, fixed in body A: the basis of the local axis,
// turned by q_A. Rows are warm-started by index (state.jointWarm), so a row's direction must not
// jump between steps; tangentBasis of the world axis flips both vectors when the axis's z
// component changes sign (an x axis tilting by 1e-9 rad), and the warm impulse then pushes the
// wrong way (grasp_box's fingers were kicked to 7 rad/s at the lift, tests/test_grasp_solvers.cpp).
void bodyFixedBasis(Quat qA, Vec3 localAxis, Vec3& b1, Vec3& b2) {
    Vec3 l1, l2;
    tangentBasis(localAxis, l1, l2);
    b1 = rotate(qA, l1);
    b2 = rotate(qA, l2);
}

Vec3 rotationError(const Frames& f, const Joint& j) {
    Quat qe = f.qB * conjugate(f.qA * j.relRot);
    Real s = qe.w >= 0 ? Real(2) : Real(-2);
    return Vec3{s * qe.x, s * qe.y, s * qe.z};
}

void addAngularRows(ConstraintRows& rows, const Joint& j, int owner, const Frames& f, Real h) {
    Vec3 theta = rotationError(f, j);
    const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (const Vec3& e : axes)
        addBilateral(rows, j, owner, Spatial{{0, 0, 0}, -e}, Spatial{{0, 0, 0}, e}, dot(e, theta), j.compliance, h,
                     j.maxTorque);
}

}  // namespace

int jointRowCount(const Joint& j) {
    switch (j.type) {
    case JointType::Ball: return 3;
    case JointType::Fixed: return 6;
    case JointType::Revolute: return 5 + (j.drive || j.bendCompliance >= 0 ? 1 : 0);
    case JointType::Prismatic: return 5 + (j.drive ? 1 : 0);
    }
    return 0;
}

Real revoluteAngle(const Model& model, const State& state, const Joint& j) {
    Frames f = jointFrames(model, state, j);
    Vec3 axis = rotate(f.qA, j.axisA);
    Vec3 theta = rotationError(f, j);
    return dot(theta, axis);
}

void buildJointRows(const Model& model, const State& state, Real h, ConstraintRows& rows) {
    const Vec3 world[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (size_t ji = 0; ji < model.joints.size(); ++ji) {
        const Joint& j = model.joints[ji];
        const int owner = -(int(ji) + 2);
        Frames f = jointFrames(model, state, j);
        switch (j.type) {
        case JointType::Ball: addPointRows(rows, j, owner, f, h, world, 3); break;
        case JointType::Fixed:
            addPointRows(rows, j, owner, f, h, world, 3);
            addAngularRows(rows, j, owner, f, h);
            break;
        case JointType::Revolute: {
            addPointRows(rows, j, owner, f, h, world, 3);
            Vec3 aA = rotate(f.qA, j.axisA), aB = rotate(f.qB, j.axisB);
            Vec3 b1, b2;
            bodyFixedBasis(f.qA, j.axisA, b1, b2);
            Vec3 c = cross(aA, aB);
            for (Vec3 e : {b1, b2})
                addBilateral(rows, j, owner, Spatial{{0, 0, 0}, -e}, Spatial{{0, 0, 0}, e}, dot(e, c), j.compliance, h,
                             j.maxTorque);
            if (j.drive || j.bendCompliance >= 0) {
                Real angle = dot(rotationError(f, j), aA);
                if (j.drive)
                    addDriveRow(rows, j, owner, Spatial{{0, 0, 0}, -aA}, Spatial{{0, 0, 0}, aA}, angle - j.driveTarget, h);
                else
                    addBilateral(rows, j, owner, Spatial{{0, 0, 0}, -aA}, Spatial{{0, 0, 0}, aA}, angle,
                                 j.bendCompliance, h);
            }
            break;
        }
        case JointType::Prismatic: {
            addAngularRows(rows, j, owner, f, h);
            Vec3 axis = rotate(f.qA, j.axisA);
            Vec3 b1, b2;
            bodyFixedBasis(f.qA, j.axisA, b1, b2);
            const Vec3 perp[2] = {b1, b2};
            addPointRows(rows, j, owner, f, h, perp, 2);
            if (j.drive) {
                Vec3 d = (f.xB + f.rB) - (f.xA + f.rA);
                addDriveRow(rows, j, owner, Spatial{-axis, -cross(f.rA, axis)}, Spatial{axis, cross(f.rB, axis)},
                            dot(axis, d) - j.driveTarget, h);
            }
            break;
        }
        }
    }
}

void buildDragRows(const Model& model, const State& state, const std::vector<Mat3>& invInertiaWorld, Real h,
                   const DragState& drag, const DragSettings& settings, ConstraintRows& rows) {
    if (drag.body < 0 || model.isStatic(drag.body)) return;
    const int b = drag.body;
    Vec3 r = rotate(state.rot[b], drag.localPoint);
    Vec3 d = state.pos[b] + r - drag.target;
    Vec3 v = state.linVel[b] + cross(state.angVel[b], r);   // the grabbed point's velocity
    Real omega = Real(2 * M_PI) * settings.frequencyHz;
    const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    // Per world axis e_k: effective mass m_k, stiffness k_k = m_k w^2, damping c_k = 2 zeta m_k w,
    // and the force the implicit spring-damper would exert if the point kept its velocity:
    //   f_k = -(k_k d_k + (k_k h + c_k) v_k).
    Real invEff[3], k[3], c[3];
    Vec3 f{0, 0, 0};
    for (int a = 0; a < 3; ++a) {
        Vec3 re = cross(r, axes[a]);
        invEff[a] = model.invMass[b] + dot(re, invInertiaWorld[b] * re);
        k[a] = omega * omega / invEff[a];
        c[a] = 2 * settings.dampingRatio * omega / invEff[a];
        f[a] = -(k[a] * d[a] + (k[a] * h + c[a]) * v[a]);
    }
    // The limit F bounds |f|, not each axis (a per-axis clamp let sqrt(3) F through, issue 22).
    // Below it, the spring rows, each clamped to b_k with sum b_k^2 = F^2, so the box of the
    // clamps lies inside the ball |f| <= F: b_k^2 = f_k^2 + (F^2 - |f|^2) / 3 (the estimate
    // plus an equal share of the slack). Above it the spring is saturated: a constant force
    // F f / |f| (limit surface of a force-limited spring), written as rows with a fixed impulse
    // target lambda_k = h F f_k / |f|: h_i = J u + bias + gamma lambda with bias = -gamma lambda_k
    // gives lambda = lambda_k - J u / gamma, and gamma = 1e5 / m_k leaves a damping of
    // m_k / (1e5 h) (a time constant of 1e5 h, 830 s at 120 Hz). Its clamp |lambda_k| keeps
    // |f| <= F exactly. Rows that ask for no more than their clamp keep the Newton
    // iteration consistent (a clamp that binds is not in its linearization).
    const Real limit = settings.maxForce, norm = length(f);
    const bool saturated = norm > limit;
    for (int a = 0; a < 3; ++a) {
        Vec3 re = cross(r, axes[a]);
        Real bias, gamma, bound;
        if (saturated) {
            Real target = h * limit * f[a] / norm;
            gamma = Real(1e5) * invEff[a];
            bias = -gamma * target;
            bound = std::fabs(target);
        } else {
            // Implicit spring-damper: f = -k (C0 + h v) - c v  =>  bias = k C0/(k h + c),
            // gamma = 1/(h (k h + c)) (constraint_rows.h).
            bias = k[a] * d[a] / (k[a] * h + c[a]);
            gamma = Real(1) / (h * (k[a] * h + c[a]));
            bound = h * std::sqrt(f[a] * f[a] + (limit * limit - norm * norm) / 3);
        }
        int row = rows.add(RowKind::Bilateral, b, -1, Spatial{axes[a], re}, Spatial{{0, 0, 0}, {0, 0, 0}}, bias, gamma, -1);
        rows.maxImpulse[row] = bound;
    }
}

}  // namespace cs
