// Mimic couplings of two joints (joint_coupling.h).
#include "engine/solver/joint_coupling.h"

#include "engine/solver/joint_rows_hd.h"

namespace cs {

Real jointFreeCoordinate(const Model&, const State& state, const Joint& joint) {
    const JointParams j = jointParams(joint);
    return jointFreeCoordinateOf(j, jointFramesOf(j, state.pos.data(), state.rot.data()));
}

// One row per coupling (joint_rows_hd.h couplingRowOf). Owner: the coupling, numbered after the
// joints' owners -(joint + 2).
void buildCouplingRows(const Model& model, const State& state, Real h, ConstraintRows& rows) {
    for (size_t c = 0; c < model.couplings.size(); ++c) {
        const CouplingParams k = couplingParams(model.couplings[c]);
        const JointParams a = jointParams(model.joints[size_t(k.jointA)]);
        const JointParams b = jointParams(model.joints[size_t(k.jointB)]);
        CouplingRow r;
        couplingRowOf(k, a, jointFramesOf(a, state.pos.data(), state.rot.data()), b,
                      jointFramesOf(b, state.pos.data(), state.rot.data()), h, r);
        const int owner = -(int(model.joints.size() + c) + 2);
        const int row = rows.add(RowKind::Bilateral, r.bodies[0], r.bodies[1], r.columns[0], r.columns[1], r.bias,
                                 r.softness, owner);
        if (r.bodies[2] >= 0 || r.bodies[3] >= 0)
            rows.setExtraBodies(row, r.bodies[2], r.bodies[3], r.columns[2], r.columns[3]);
    }
}

}  // namespace cs
