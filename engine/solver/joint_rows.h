// Bilateral rows: joints in the compliance form of [NSN] section 3.2, and the mouse drag.
#pragma once

#include "engine/settings.h"
#include "engine/solver/constraint_rows.h"
#include "engine/step_types.h"

namespace cs {

// Appends the rows of every joint. Joint warm impulses come from state.jointWarm when its size
// matches the row count of the previous step.
void buildJointRows(const Model& model, const State& state, Real h, ConstraintRows& rows);

// Appends three rows pulling drag.localPoint on drag.body to drag.target. Stiffness k = m_eff w^2
// per row, with m_eff the effective mass at the point along the row's axis (MuJoCo simulate's
// rule, so light and heavy bodies follow alike), damping c = 2 zeta m_eff w, and the force
// limit on the magnitude |f| <= settings.maxForce (a constant force of that size when saturated).
void buildDragRows(const Model& model, const State& state, const std::vector<Mat3>& invInertiaWorld, Real h,
                   const DragState& drag, const DragSettings& settings, ConstraintRows& rows);

// Rows buildJointRows appends for this joint (the drive's row, when there is one, is the last).
int jointRowCount(const Joint& joint);

// Hinge angle of a revolute joint about its axis, radians, in (-pi, pi].
Real revoluteAngle(const Model& model, const State& state, const Joint& joint);

}  // namespace cs
