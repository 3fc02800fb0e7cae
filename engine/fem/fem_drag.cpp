// The mouse drag on a deformable body (fem_drag.h).
#include "engine/fem/fem_drag.h"

#include <cmath>

#include "engine/fem/fem_step.h"

namespace cs {

Vec3 femDragPoint(const Model& model, const State& state, const DragState& drag, Vec3* velocity) {
    const auto& tri = model.femTris[drag.femTri];
    Vec3 p{0, 0, 0}, v{0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        p += drag.femWeights[i] * state.femPos[tri[i]];
        v += drag.femWeights[i] * state.femVel[tri[i]];
    }
    if (velocity) *velocity = v;
    return p;
}

Real femDragEffectiveMass(const Model& model, const DragState& drag) {
    Real invEff = 0;
    for (int i = 0; i < 3; ++i)
        invEff += drag.femWeights[i] * drag.femWeights[i] * model.femNodeInvMass[model.femTris[drag.femTri][i]];
    return invEff > 0 ? Real(1) / invEff : Real(0);
}

Real femDragSpringMass(const Model& model, const DragState& drag) {
    const FemBodyInfo& body = model.femBodies[model.femNodeBody[model.femTris[drag.femTri][0]]];
    Real mass = 0;
    for (int i = body.firstNode; i < body.firstNode + body.nodeCount; ++i)
        if (model.femNodeInvMass[i] > 0) mass += model.femNodeMass[i];
    return mass;
}

// As buildDragRows (drag_rows_hd.h femDragRows): below the limit the spring rows, each clamped so
// the clamps' box lies in the ball |f| <= F; above it a constant force F f / |f|.
void buildFemDragRows(const Model& model, const State& state, Real h, const DragState& drag,
                      const DragSettings& settings, ConstraintRows& rows) {
    if (drag.femTri < 0) return;
    const DragParams p = femDragParams(model, drag, settings);
    if (!(p.effectiveMass > 0)) return;
    const auto& tri = model.femTris[drag.femTri];
    const Vec3 x[3] = {state.femPos[tri[0]], state.femPos[tri[1]], state.femPos[tri[2]]};
    const Vec3 v[3] = {state.femVel[tri[0]], state.femVel[tri[1]], state.femVel[tri[2]]};
    DragRows r;
    femDragRows(p, x, v, h, r);
    for (int a = 0; a < 3; ++a) {
        const int row = rows.add(RowKind::Bilateral, p.nodes[0], p.nodes[1], r.jacobian[a][0], r.jacobian[a][1],
                                 r.bias[a], r.softness[a], -1);
        rows.setExtraBodies(row, p.nodes[2], -1, r.jacobian[a][2], Spatial{{0, 0, 0}, {0, 0, 0}});
        rows.maxImpulse[row] = r.bound[a];
    }
}

DragParams femDragParams(const Model& model, const DragState& drag, const DragSettings& settings) {
    DragParams p{};
    p.body = -1;
    const auto& tri = model.femTris[drag.femTri];
    for (int i = 0; i < 3; ++i) p.nodes[i] = femNodeBodyIndex(model.bodyCount(), tri[i]);
    p.weights = drag.femWeights;
    p.target = drag.target;
    p.frequencyHz = settings.frequencyHz;
    p.dampingRatio = settings.dampingRatio;
    p.maxForce = settings.maxForce;
    p.springMass = femDragSpringMass(model, drag);
    p.effectiveMass = femDragEffectiveMass(model, drag);
    return p;
}

}  // namespace cs
