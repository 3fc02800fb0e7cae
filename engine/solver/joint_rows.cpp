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
// The rows themselves are CS_HD functions shared with the step pipeline (joint_rows_hd.h).
//
// The hinge's two angular rows use two world axes perpendicular to its axis, fixed in body A:
// the basis of the local axis, turned by q_A. Rows are warm-started by index (state.jointWarm),
// so a row's direction must not jump between steps; tangentBasis of the world axis flips both
// vectors when the axis's z component changes sign (an x axis tilting by 1e-9 rad), and the warm
// impulse then pushes the wrong way (grasp_box's fingers were kicked to 7 rad/s at the lift,
// tests/test_grasp_solvers.cpp).
#include "engine/solver/joint_rows.h"

#include "engine/solver/drag_rows_hd.h"
#include "engine/solver/joint_rows_hd.h"

#include <cmath>

namespace cs {

// Joint j's rows (joint_rows_hd.h jointRowsOf) appended with their owner -(j + 2).
void buildJointRows(const Model& model, const State& state, Real h, ConstraintRows& rows) {
    for (size_t ji = 0; ji < model.joints.size(); ++ji) {
        const JointParams j = jointParams(model.joints[ji]);
        JointRowSet set;
        jointRowsOf(j, jointFramesOf(j, state.pos.data(), state.rot.data()), h, set);
        for (int k = 0; k < set.count; ++k) {
            const JointRow& r = set.row[k];
            const int row = rows.add(RowKind::Bilateral, j.bodyA, j.bodyB, r.jacobianA, r.jacobianB, r.bias, r.softness,
                                     -(int(ji) + 2));
            rows.maxImpulse[row] = r.maxImpulse;
        }
    }
}

int jointRowCount(const Joint& j) { return jointRowCountOf(jointParams(j)); }

Real revoluteAngle(const Model&, const State& state, const Joint& joint) {
    const JointParams j = jointParams(joint);
    const JointFrames f = jointFramesOf(j, state.pos.data(), state.rot.data());
    return dot(jointRotationError(f, j), rotate(f.qA, j.axisA));
}

// The rule and its derivation: drag_rows_hd.h. The limit F bounds |f|, not each axis (a per-axis
// clamp let sqrt(3) F through, issue 22): below it each spring row is clamped to b_k with
// sum b_k^2 = F^2 (the estimate plus an equal share of the slack), so the box of the clamps lies
// inside the ball |f| <= F; above it the spring is saturated, a constant force F f / |f| (limit
// surface of a force-limited spring) written as rows with a fixed impulse target, whose gamma =
// 1e5 / m_k leaves a damping of m_k / (1e5 h) (a time constant of 1e5 h, 830 s at 120 Hz); their
// bias aims past the target, so the box's linearization holds them at their clamp, decoupled
// (constraint_rows.h limitedRowAtBound).
void buildDragRows(const Model& model, const State& state, const std::vector<Mat3>& invInertiaWorld, Real h,
                   const DragState& drag, const DragSettings& settings, ConstraintRows& rows) {
    if (drag.body < 0 || model.isStatic(drag.body)) return;
    const int b = drag.body;
    DragParams p{};
    p.body = b;
    p.localPoint = drag.localPoint;
    p.target = drag.target;
    p.frequencyHz = settings.frequencyHz;
    p.dampingRatio = settings.dampingRatio;
    p.maxForce = settings.maxForce;
    DragRows r;
    rigidDragRows(p, state.pos[b], state.rot[b], state.linVel[b], state.angVel[b], model.invMass[b],
                  invInertiaWorld[b], h, r);
    for (int a = 0; a < 3; ++a) {
        const int row = rows.add(RowKind::Bilateral, b, -1, r.jacobian[a][0], r.jacobian[a][1], r.bias[a],
                                 r.softness[a], -1);
        rows.maxImpulse[row] = r.bound[a];
    }
}

}  // namespace cs
