// Row culling: the standard model's potential contacts that cannot close within the step are
// left out of the row list, with their friction rows, and a check after the solve proves that
// each one stayed open (SolverSettings::cullRows, scene key "cull_rows"; docs/speed.md).
//
// Why it pays: at rest in the peer pyramids most rows belong to open contacts (the 1 mm side
// gaps); the Newton linearization already decouples them, but the linear solver still gathers
// and scatters them every iteration, and that memory traffic is most of the step (docs/speed.md).
//
// The condition. A contact of gap g > 0 keeps psi = g in its normal row (standard_rows_hd.h,
// stabilizedGap), whose complementarity is 0 <= lambda_n _|_ g/h + J u+ >= 0 ([PEG] eq. 9). The
// contact is inactive at the end of the step exactly when lambda_n = 0 is consistent, i.e. when
// the closing speed along n at the end, -J u+, stays at or below g/h.
//
// The predictor (a priori, per contact). With lever arms rA = pA - xA, rB = pB - xB and |n| = 1,
//   J u = n . (vA + wA x rA - vB - wB x rB),  so  |J u| <= |vA - vB| + |wA| |rA| + |wB| |rB|
// at the step's start (Cauchy-Schwarz). Within the step the velocities change by h g (the
// unconstrained velocity u~ = u + h g) and by the other rows' impulses. h g cancels between two
// falling bodies but not when one of them is held up, so the bound adds h |g|. Impulses that
// push overlaps apart move a body at up to v_push = min(maxPushoutSpeed, stabilization d / h),
// d the deepest overlap among the step's contacts (stabilizedGap). So the closing speed is
// bounded by
//   S = |vA - vB| + |wA| |rA| + |wB| |rB| + h |g| + v_push
// and a contact with g > h S + kCullMargin is left out. S does not bound what a collision
// elsewhere passes on within the step (a body struck by another takes on speed; a lever
// multiplies it), so the predictor alone is not a proof. The check below is.
//
// The check (a posteriori, exact). The solve without the left-out rows gives u+ and lambda with
// M (u+ - u~) = J^T lambda over the kept rows. Give every left-out row lambda = 0: the momentum
// equation is unchanged (a row with zero impulse adds nothing to J^T lambda), every kept row's
// complementarity is unchanged, friction rows satisfy |lambda_t| <= mu lambda_n = 0, and each
// left-out normal row's holds iff g/h + J u+ >= 0. So when the check passes for every left-out
// contact, the reduced solution is a solution of the full system with every row (to the same
// Newton tolerance); when it fails for any, World::substep solves the step again with every row.
//
// The gate (unconverged solves). The argument says more: the reduced iterate, extended by zero
// impulses, has the full system's merit ||phi|| equal to the reduced one (each left-out row's
// phi(0, g/h + J u+) is 0). So an unconverged reduced solve is no worse than an unconverged full
// one, but it is a different iterate, and where Newton stops at its cap the trajectory depends
// on which iterate it stopped at. table_pile (eight compound tables, Newton at its cap of 8 from
// step 42) blows up with every row too when nudged: --newton 12 gives 0.18 m of penetration and
// 2e5 J of kinetic energy, --iters 30 0.16 m; with culling it blew up at the defaults (0.12 m,
// 3.9e4 J) while the every-row run happened not to, and from step 136 on, where it blew up, no
// contact was left out at all (docs/speed.md). So culling must not change what an unconverged
// step returns: a reduced solve stands only when it converged (merit at most the Newton
// tolerance), else the step is solved again with every row; and culling is tried only after a
// step whose solve converged (State::lastSolveConverged), so a scene that runs at the cap pays
// for one solve per step, not two. Then a step's result differs from the every-row solve only
// where both solve the full system to the Newton tolerance.
#pragma once

#include <vector>

#include "engine/collision/potential_contact.h"
#include "engine/contact/row_culling_hd.h"
#include "engine/model.h"
#include "engine/solver/newton.h"
#include "engine/state.h"

namespace cs {

struct WorldSettings;
struct SolverSettings;
struct SolveStats;

struct RowCull {
    std::vector<int> culled;   // indices into the potential contacts, ascending
    Real pushoutSpeed = 0;     // v_push of the step (m/s)
};

// v_push of the step: min(maxPushoutSpeed, stabilization * deepest overlap / h).
Real cullPushoutSpeed(const std::vector<PotentialContact>& potential, const WorldSettings& settings, Real h);

// True when contact c cannot close within the step by the predictor above (g > h S + kCullMargin).
bool contactCannotClose(const PotentialContact& c, const Model& model, const State& state, Vec3 gravity,
                        Real pushoutSpeed, Real h);

// The check: every left-out contact has g/h + J u+ >= 0 at the solved velocities.
bool culledContactsStayOpen(const RowCull& cull, const std::vector<PotentialContact>& potential,
                            const State& state, const BodyVelocities& bodies, Real h);

// The reduced solve stands: nothing was left out (it was the full solve), or it converged
// (stats.residualFinal <= the Newton tolerance) and every left-out contact stayed open.
// Otherwise the step is solved again with every row.
bool culledSolveStands(const SolverSettings& settings, const SolveStats& stats, const RowCull& cull,
                       const std::vector<PotentialContact>& potential, const State& state,
                       const BodyVelocities& bodies, Real h);

}  // namespace cs
