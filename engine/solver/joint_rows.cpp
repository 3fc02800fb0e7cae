// Joint rows ([NSN] section 3.2, compliance form C(q) + alpha lambda = 0).
//
// Position rows (ball, and the anchor part of fixed, revolute and prismatic joints): with world
// anchors pA = xA + R_A a_A, pB = xB + R_B a_B and a world axis e,
//     C = e . (pB - pA),   J = [ -e, -(rA x e) | e, rB x e ].
// Angular rows: the error rotation q_e = q_B (q_A q_rel)^-1 has rotation vector theta ~ 2 vec(q_e)
// (sign chosen so w >= 0); each world axis e gives C = e . theta, J = [ 0, -e | 0, e ].
// A revolute joint keeps the two angular rows perpendicular to its axis: C = e_k . (a_A x a_B).
// Its free axis can carry a bending stiffness (the [NSN] beam) or a drive: C = angle - target.
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

// Bias and softness of a row with physical compliance alpha (constraint_rows.h).
void addBilateral(ConstraintRows& rows, const Joint& j, int owner, Spatial ja, Spatial jb, Real c0, Real alpha,
                  Real h) {
    rows.add(RowKind::Bilateral, j.bodyA, j.bodyB, ja, jb, c0 / h, alpha / (h * h), owner);
}

void addPointRows(ConstraintRows& rows, const Joint& j, int owner, const Frames& f, Real h, const Vec3* axes,
                  int count) {
    Vec3 d = (f.xB + f.rB) - (f.xA + f.rA);
    for (int k = 0; k < count; ++k) {
        Vec3 e = axes[k];
        addBilateral(rows, j, owner, Spatial{-e, -cross(f.rA, e)}, Spatial{e, cross(f.rB, e)}, dot(e, d),
                     j.compliance, h);
    }
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
        addBilateral(rows, j, owner, Spatial{{0, 0, 0}, -e}, Spatial{{0, 0, 0}, e}, dot(e, theta), j.compliance, h);
}

}  // namespace

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
            tangentBasis(aA, b1, b2);
            Vec3 c = cross(aA, aB);
            for (Vec3 e : {b1, b2})
                addBilateral(rows, j, owner, Spatial{{0, 0, 0}, -e}, Spatial{{0, 0, 0}, e}, dot(e, c), j.compliance, h);
            if (j.drive || j.bendCompliance >= 0) {
                Real angle = dot(rotationError(f, j), aA);
                Real target = j.drive ? j.driveTarget : Real(0);
                Real alpha = j.drive ? j.driveCompliance : j.bendCompliance;
                addBilateral(rows, j, owner, Spatial{{0, 0, 0}, -aA}, Spatial{{0, 0, 0}, aA}, angle - target, alpha, h);
            }
            break;
        }
        case JointType::Prismatic: {
            addAngularRows(rows, j, owner, f, h);
            Vec3 axis = rotate(f.qA, j.axisA);
            Vec3 b1, b2;
            tangentBasis(axis, b1, b2);
            const Vec3 perp[2] = {b1, b2};
            addPointRows(rows, j, owner, f, h, perp, 2);
            if (j.drive) {
                Vec3 d = (f.xB + f.rB) - (f.xA + f.rA);
                addBilateral(rows, j, owner, Spatial{-axis, -cross(f.rA, axis)}, Spatial{axis, cross(f.rB, axis)},
                             dot(axis, d) - j.driveTarget, j.driveCompliance, h);
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
    Real omega = Real(2 * M_PI) * settings.frequencyHz;
    const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (const Vec3& e : axes) {
        Vec3 re = cross(r, e);
        Real invEff = model.invMass[b] + dot(re, invInertiaWorld[b] * re);
        Real mEff = Real(1) / invEff;
        Real k = mEff * omega * omega, c = 2 * settings.dampingRatio * mEff * omega;
        // Implicit spring-damper: f = -k (C0 + h v) - c v  =>  bias = k C0/(k h + c),
        // gamma = 1/(h (k h + c)) (constraint_rows.h).
        int row = rows.add(RowKind::Bilateral, b, -1, Spatial{e, re}, Spatial{{0, 0, 0}, {0, 0, 0}},
                           k * dot(e, d) / (k * h + c), Real(1) / (h * (k * h + c)), -1);
        rows.maxImpulse[row] = settings.maxForce * h;
    }
}

}  // namespace cs
