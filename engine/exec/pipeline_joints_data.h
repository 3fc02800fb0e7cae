// The bilateral rows' data of the step pipeline: joints, mimic couplings and the mouse drag
// (engine/exec/pipeline_joints.h records their rows), in the executor's memory.
//
// Row layout, World::substep's: the joints' rows (joint j's at rowStart[j], in the model's
// order), one row per coupling, then the drag's three rows when a drag is on; the contact rows
// follow at leadingRows(). The joints and the drag are sent every step (a grasp script moves
// anchors, drive targets and force limits between steps); the row layout only changes with the
// model's joints (then the buffers are sized again: uploadJoints returns true).
#pragma once

#include <vector>

#include "engine/solver/drag_rows_hd.h"
#include "engine/solver/joint_rows_hd.h"

namespace cs {

template <class Exec>
struct PipelineJoints {
    template <class T>
    using Buffer = typename Exec::template Buffer<T>;

    int joints = -1, couplings = 0;     // -1: not uploaded yet
    int jointRows = 0;                 // rows of all joints
    int rows = 0;                      // jointRows + couplings: the rows warm-started from State::jointWarm
    bool wideCouplings = false;        // a coupling on more than two bodies (the third and fourth columns)
    int dragRows = 0;                  // 3 while a drag is on (this step)
    int leadingRows() const { return rows + dragRows; }   // the contacts' first row

    Buffer<JointParams> params;        // (joints)
    Buffer<int> rowStart;              // (joints) first row of each joint
    Buffer<CouplingParams> coupling;   // (couplings)
    Buffer<Real> warm;                 // (rows) State::jointWarm
    Buffer<DragParams> drag;           // (1) the drag of this step
    Buffer<Real> dragResult;           // (4) the drag rows' impulses (N s) and effective mass (kg), last substep
    Buffer<Real> stepBound;            // (rows + 3) a leading row's bound when it is linearized there, else kNoImpulseLimit

    std::vector<JointParams> hostParams;   // staging of the per-step upload
    std::vector<CouplingParams> hostCoupling;
    std::vector<int> hostRowStart;
};

// The model's joints and couplings into the executor's memory; true when the row layout changed
// (the caller then sizes the row buffers again).
template <class Exec>
bool uploadJoints(Exec& ex, PipelineJoints<Exec>& j, const Model& model) {
    const int joints = (int)model.joints.size(), couplings = (int)model.couplings.size();
    j.hostParams.resize(joints);
    j.hostRowStart.resize(joints);
    int rows = 0;
    for (int k = 0; k < joints; ++k) {
        j.hostParams[k] = jointParams(model.joints[k]);
        j.hostRowStart[k] = rows;
        rows += jointRowCountOf(j.hostParams[k]);
    }
    j.hostCoupling.resize(couplings);
    bool wide = false;
    for (int k = 0; k < couplings; ++k) {
        const CouplingParams& c = j.hostCoupling[k] = couplingParams(model.couplings[k]);
        const JointParams &a = j.hostParams[c.jointA], &b = j.hostParams[c.jointB];
        int distinct = 0;   // couplingRowOf's columns: distinct bodies other than the world
        const int bodies[4] = {a.bodyA, a.bodyB, b.bodyA, b.bodyB};
        for (int x = 0; x < 4; ++x) {
            bool seen = bodies[x] < 0;
            for (int y = 0; y < x && !seen; ++y) seen = bodies[y] == bodies[x];
            distinct += seen ? 0 : 1;
        }
        wide = wide || distinct > 2;
    }
    const bool changed = joints != j.joints || couplings != j.couplings || rows != j.jointRows || wide != j.wideCouplings;
    j.joints = joints;
    j.couplings = couplings;
    j.jointRows = rows;
    j.rows = rows + couplings;
    j.wideCouplings = wide;
    if (changed) {
        j.params.reserve(joints > 0 ? joints : 1);
        j.rowStart.reserve(joints > 0 ? joints : 1);
        j.coupling.reserve(couplings > 0 ? couplings : 1);
        j.warm.reserve(j.rows > 0 ? j.rows : 1);
        j.drag.reserve(1);
        j.dragResult.reserve(4);
        j.stepBound.reserve(j.rows + 3);
    }
    if (joints) {
        ex.upload(j.params.data(), j.hostParams.data(), joints);
        ex.upload(j.rowStart.data(), j.hostRowStart.data(), joints);
    }
    if (couplings) ex.upload(j.coupling.data(), j.hostCoupling.data(), couplings);
    return changed;
}

}  // namespace cs
