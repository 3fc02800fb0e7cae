// The bilateral rows on the step pipeline: joints, mimic couplings and the mouse drag (rigid or
// deformable), World::substep's buildJointRows, buildCouplingRows, buildDragRows and
// buildFemDragRows over the executor verbs. The rows are the same CS_HD functions
// (engine/solver/joint_rows_hd.h jointRowsOf, couplingRowOf; drag_rows_hd.h rigidDragRows,
// femDragRows), in the same places (the first rows of the substep, before the contacts):
//
//   rows     one thread per joint at its fixed row offset, one per coupling, then the drag's
//            three rows; joint and coupling rows warm-started from the last substep's impulses
//            (State::jointWarm) when the row count matched, the drag's from its last impulses
//   store    after integration: the joint rows' impulses for the next substep, the drag's
//            impulses and its effective mass for the host (World's DragState::force); after a
//            roll back no warm start (World::rollBack clears State::jointWarm)
// Each stage records nothing when there are no joints, couplings or drag.
#pragma once

#include "engine/exec/pipeline_data.h"

namespace cs {

template <class Exec>
void recordJointRows(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    PipelineJoints<Exec>& j = d.joints;
    if (j.leadingRows() == 0) return;
    StepCounters* c = d.counters.data();
    const FlatRows rows{d.kind.data(), d.rowBodyA.data(), d.rowBodyB.data(), d.jacobianA.data(), d.jacobianB.data(),
                        d.bias.data(), d.softness.data(), d.mu.data(), d.normalRow.data(), d.maxImpulse.data(),
                        d.lambda.data(), d.owner.data()};
    int *bodyC = d.fem.wide() ? d.fem.bodyC.data() : nullptr, *bodyD = d.fem.bodyD.data();
    Spatial *jacobianC = d.fem.jacobianC.data(), *jacobianD = d.fem.jacobianD.data();
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    const Vec3* pos = d.pos.data();
    const Quat* rot = d.rot.data();
    const JointParams* params = j.params.data();
    const int* rowStart = j.rowStart.data();
    const Real* warm = j.warm.data();
    const bool warmStart = ws.solver.warmStart;
    ex.forEach(j.joints, nullptr, nullptr, [=] CS_LAMBDA(int k) {
        const JointParams& p = params[k];
        JointRowSet set;
        jointRowsOf(p, jointFramesOf(p, pos, rot), h, set);
        for (int r = 0; r < set.count; ++r) {
            const int i = rowStart[k] + r;
            const JointRow& row = set.row[r];
            writeBilateralRow(rows, i, p.bodyA, p.bodyB, row.jacobianA, row.jacobianB, row.bias, row.softness,
                              row.maxImpulse, warmStart && c->jointWarm ? warm[i] : Real(0), -(k + 2));
            if (!bodyC) continue;
            bodyC[i] = bodyD[i] = -1;
            jacobianC[i] = jacobianD[i] = zero;
        }
    });

    const CouplingParams* coupling = j.coupling.data();
    const int jointRows = j.jointRows, joints = j.joints;
    ex.forEach(j.couplings, nullptr, nullptr, [=] CS_LAMBDA(int k) {
        const CouplingParams& q = coupling[k];
        const JointParams &a = params[q.jointA], &b = params[q.jointB];
        CouplingRow r;
        couplingRowOf(q, a, jointFramesOf(a, pos, rot), b, jointFramesOf(b, pos, rot), h, r);
        const int i = jointRows + k;
        writeBilateralRow(rows, i, r.bodies[0], r.bodies[1], r.columns[0], r.columns[1], r.bias, r.softness,
                          Real(1e30), warmStart && c->jointWarm ? warm[i] : Real(0), -(joints + k + 2));
        if (!bodyC) return;
        bodyC[i] = r.bodies[2];
        bodyD[i] = r.bodies[3];
        jacobianC[i] = r.columns[2];
        jacobianD[i] = r.columns[3];
    });

    if (j.dragRows == 0) return;
    const DragParams* drag = j.drag.data();
    const int first = j.rows, nb = d.bodies;
    const FlatModelView m = d.model;
    const Vec3 *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const Vec3 *nodePos = d.fem.pos.data(), *nodeVel = d.fem.vel.data();
    const Mat3* invInertia = d.bodyInvInertia.data();
    const Real* last = j.dragResult.data();   // the last substep's drag impulses: the warm start (World::substep)
    ex.serial(nullptr, [=] CS_LAMBDA() {
        const DragParams& p = *drag;
        DragRows r;
        const int b = p.body;
        if (b >= 0) {
            rigidDragRows(p, pos[b], rot[b], linVel[b], angVel[b], m.invMass[b], invInertia[b], h, r);
        } else {
            const Vec3 x[3] = {nodePos[p.nodes[0] - nb], nodePos[p.nodes[1] - nb], nodePos[p.nodes[2] - nb]};
            const Vec3 v[3] = {nodeVel[p.nodes[0] - nb], nodeVel[p.nodes[1] - nb], nodeVel[p.nodes[2] - nb]};
            femDragRows(p, x, v, h, r);
        }
        for (int a = 0; a < 3; ++a) {
            const int i = first + a;
            const Real warm = !warmStart ? Real(0) : last[a] < -r.bound[a] ? -r.bound[a] : (r.bound[a] < last[a] ? r.bound[a] : last[a]);
            writeBilateralRow(rows, i, b >= 0 ? b : p.nodes[0], b >= 0 ? -1 : p.nodes[1], r.jacobian[a][0],
                              r.jacobian[a][1], r.bias[a], r.softness[a], r.bound[a], warm, -1);
            if (!bodyC) continue;
            bodyC[i] = b >= 0 ? -1 : p.nodes[2];
            bodyD[i] = -1;
            jacobianC[i] = r.jacobian[a][2];
            jacobianD[i] = zero;
        }
    });
}

// The Newton step t of this iteration (newton.cpp stepToBounds): the damping, cut where a
// force-limited row (|lambda| <= L) that starts inside its box would leave it, so that the step
// stays a Newton step of the rows linearized as bilateral. Only the leading rows (joint drives and
// limits, the drag) carry limits; in row order, as the CPU. Also which of them are linearized at
// a bound (limitedRowAtBound, at the iterate in e): they go to it whatever t (newton.cpp boundRows).
template <class Exec>
void recordStepToBounds(Exec& ex, PipelineData<Exec>& d, const RowEvalView& e, Real damping, bool fullStepStable,
                        const int* gate) {
    StepCounters* c = d.counters.data();
    const int rows = d.joints.leadingRows();
    const Real *limit = d.maxImpulse.data(), *start = d.lambda.data(), *step = d.dlambda.data();
    Real* stepBound = d.joints.stepBound.data();
    ex.serial(gate, [=] CS_LAMBDA() {
        Real t = fullStepStable && !c->ncpSideChanged ? Real(1) : damping;
        for (int i = 0; i < rows; ++i) {
            Real bound;
            stepBound[i] = limitedRowAtBound(e, i, bound) ? bound : kNoImpulseLimit;
            if (!(limit[i] < kNoImpulseLimit)) continue;
            const Real x = start[i], dx = step[i];
            if (!(x > -limit[i] && x < limit[i])) continue;
            if (x + t * dx > limit[i]) t = (limit[i] - x) / dx;
            else if (x + t * dx < -limit[i]) t = (-limit[i] - x) / dx;
        }
        c->newtonStep = t;
    });
}

// After integration (which left c->bad as the guard found it): the next substep's warm start,
// the drag's impulses and its effective mass (World::substep's: 1 / max_a [J H^-1 J^T]_aa for
// a rigid body; the host's femDragEffectiveMass for a deformable one).
template <class Exec>
void recordJointStore(Exec& ex, PipelineData<Exec>& d) {
    PipelineJoints<Exec>& j = d.joints;
    if (j.leadingRows() == 0) return;
    StepCounters* c = d.counters.data();
    const Real* lambda = d.lambda.data();
    Real* warm = j.warm.data();
    ex.forEach(j.rows, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        if (!c->bad) warm[i] = lambda[i];
    });
    const int first = j.rows, dragRows = j.dragRows;
    const DragParams* drag = j.drag.data();
    Real* result = j.dragResult.data();
    const Spatial* jacobian = d.jacobianA.data();
    const Real* invMass = d.bodyInvMass.data();
    const Mat3* invInertia = d.bodyInvInertia.data();
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->jointWarm = c->bad ? 0 : 1;
        if (c->bad || dragRows == 0) return;
        const int b = drag->body;
        Real maxDiag = 0;
        for (int a = 0; a < 3; ++a) {
            result[a] = lambda[first + a];
            if (b < 0) continue;
            const Spatial& ja = jacobian[first + a];
            maxDiag = fmax(maxDiag, invMass[b] * lengthSq(ja.lin) + dot(ja.ang, invInertia[b] * ja.ang));
        }
        result[3] = b < 0 ? drag->effectiveMass : maxDiag > 0 ? Real(1) / maxDiag : Real(0);
    });
}

}  // namespace cs
