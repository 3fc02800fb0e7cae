// The mouse drag on a deformable body: a point of a boundary triangle (barycentric weights w over
// its three nodes, p = sum_i w_i x_i) pulled to a target, with the rigid drag's rule
// (joint_rows.h buildDragRows): per world axis a spring-damper of stiffness m_eff w^2 and
// damping 2 zeta m_eff w, m_eff = 1 / sum_i w_i^2 / m_i the effective mass at the point, and the
// force limit |f| <= settings.maxForce. Rows on the three nodes (J = [w_0 e | w_1 e | w_2 e]).
#pragma once

#include "engine/model.h"
#include "engine/solver/constraint_rows.h"
#include "engine/state.h"
#include "engine/world.h"

namespace cs {

// The dragged point and its velocity.
Vec3 femDragPoint(const Model& model, const State& state, const DragState& drag, Vec3* velocity = nullptr);

// Appends the three drag rows when drag.femTri >= 0.
void buildFemDragRows(const Model& model, const State& state, Real h, const DragState& drag,
                      const DragSettings& settings, ConstraintRows& rows);

// 1 / max_a [J H^-1 J^T]_aa of the drag rows: the effective mass at the point (kg).
Real femDragEffectiveMass(const Model& model, const DragState& drag);

}  // namespace cs
