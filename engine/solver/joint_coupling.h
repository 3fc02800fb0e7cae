// Mimic (gear) couplings of two joints' free coordinates: one bilateral row per coupling,
//     C = q_a - ratio q_b - offset,
// on the bodies of both joints (three when they share a body, as a gripper's two jaws share the
// wrist; up to four), in the compliance form of [NSN] section 3.2. The row is appended after the
// joints' rows, so it is warm-started with them (state.jointWarm).
//
// The coordinate of a prismatic joint is q = e . d, e = R_A e_A the slide axis, d = pB - pA the
// anchors' separation; its rate, with e turning with body A,
//     dq/dt = e . (vB + wB x rB - vA - wA x rA) + (wA x e) . d,
// gives J_A = [-e, -(rA + d) x e], J_B = [e, rB x e]. A revolute joint's q is its hinge angle with
// J_A = [0, -a], J_B = [0, a] (a the world hinge axis). The coupling's row is J_a - ratio J_b,
// columns of a shared body summed.
#pragma once

#include "engine/model.h"
#include "engine/solver/constraint_rows.h"
#include "engine/state.h"

namespace cs {

// q of a prismatic (m) or revolute (rad) joint.
Real jointFreeCoordinate(const Model& model, const State& state, const Joint& joint);

// Appends one row per model.couplings entry.
void buildCouplingRows(const Model& model, const State& state, Real h, ConstraintRows& rows);

}  // namespace cs
