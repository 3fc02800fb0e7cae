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

void buildFemDragRows(const Model& model, const State& state, Real h, const DragState& drag,
                      const DragSettings& settings, ConstraintRows& rows) {
    if (drag.femTri < 0) return;
    const Real mEff = femDragEffectiveMass(model, drag);
    if (!(mEff > 0)) return;
    Vec3 v;
    const Vec3 d = femDragPoint(model, state, drag, &v) - drag.target;
    const Real omega = Real(2 * M_PI) * settings.frequencyHz;
    // The same along every axis (the point has no rotation): one k and c.
    const Real springMass = femDragSpringMass(model, drag);
    const Real k = springMass * omega * omega, c = 2 * settings.dampingRatio * springMass * omega;
    const Vec3 f = -(k * d + (k * h + c) * v);   // the implicit spring-damper's force estimate
    const Real limit = settings.maxForce, norm = length(f);
    const bool saturated = norm > limit;
    const auto& tri = model.femTris[drag.femTri];
    const int nb = model.bodyCount();
    for (int a = 0; a < 3; ++a) {
        Vec3 e{0, 0, 0};
        e[a] = 1;
        // As buildDragRows: below the limit the spring rows, each clamped so the clamps' box
        // lies in the ball |f| <= F; above it a constant force F f / |f| (a fixed impulse target).
        Real bias, gamma, bound;
        if (saturated) {
            const Real target = h * limit * f[a] / norm;
            gamma = Real(1e5) / mEff;
            bias = -gamma * target;
            bound = std::fabs(target);
        } else {
            bias = k * d[a] / (k * h + c);
            gamma = Real(1) / (h * (k * h + c));
            bound = h * std::sqrt(f[a] * f[a] + (limit * limit - norm * norm) / 3);
        }
        const Spatial zero{{0, 0, 0}, {0, 0, 0}};
        const int row = rows.add(RowKind::Bilateral, femNodeBodyIndex(nb, tri[0]), femNodeBodyIndex(nb, tri[1]),
                                 Spatial{drag.femWeights[0] * e, {0, 0, 0}}, Spatial{drag.femWeights[1] * e, {0, 0, 0}},
                                 bias, gamma, -1);
        rows.setExtraBodies(row, femNodeBodyIndex(nb, tri[2]), -1, Spatial{drag.femWeights[2] * e, {0, 0, 0}}, zero);
        rows.maxImpulse[row] = bound;
    }
}

}  // namespace cs
