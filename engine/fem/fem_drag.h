// The mouse drag on a deformable body: a point of a boundary triangle (barycentric weights w over
// its three nodes, p = sum_i w_i x_i) pulled to a target, with the rigid drag's rule
// (joint_rows.h buildDragRows): per world axis a spring-damper of stiffness M w^2 and damping
// 2 zeta M w, and the force limit |f| <= settings.maxForce. Rows on the three nodes
// (J = [w_0 e | w_1 e | w_2 e]).
//
// The mass scale M is the mass of the body's free nodes, the mass a rigid body would have at the
// point, not the point's own effective mass m_eff = 1 / sum_i w_i^2 / m_i (a few grams on a fine
// mesh): with m_eff the spring of a 480-tet cantilever (1.25 kg, Y = 10 MPa, tip stiffness
// 3 E I / L^3 = 125 N/m) was 6 N/m at 4 Hz, and the tip moved 1.5 mm towards a cursor 15 cm
// above it. With M the body follows the cursor as a rigid body of its mass would, the skin near
// the point stretching on the way; the rows stay implicit (compliance 1 / (h (k h + c))), so a
// stiff spring on light nodes is stable, and the force limit bounds what the point can take.
#pragma once

#include "engine/model.h"
#include "engine/settings.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/drag_rows_hd.h"
#include "engine/state.h"
#include "engine/step_types.h"

namespace cs {

// The dragged point and its velocity.
Vec3 femDragPoint(const Model& model, const State& state, const DragState& drag, Vec3* velocity = nullptr);

// Appends the three drag rows when drag.femTri >= 0.
void buildFemDragRows(const Model& model, const State& state, Real h, const DragState& drag,
                      const DragSettings& settings, ConstraintRows& rows);

// 1 / max_a [J H^-1 J^T]_aa of the drag rows: the effective mass at the point (kg).
Real femDragEffectiveMass(const Model& model, const DragState& drag);

// The drag of femTri as the row functions take it (drag_rows_hd.h), nodes as solver bodies.
DragParams femDragParams(const Model& model, const DragState& drag, const DragSettings& settings);

// The spring's mass scale M: the free nodes' mass of the body the dragged triangle belongs to (kg).
Real femDragSpringMass(const Model& model, const DragState& drag);

}  // namespace cs
