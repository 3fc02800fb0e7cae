// The energy guard: a step must not add energy that nothing in the scene supplied.
//
// Beside the speed guard (World::speedGuard: NaN, or a point faster than 10x the scene's speed
// scale), which a solver can pass while it throws a 32 t box metres up at a few m/s (issue 36:
// heavy_stack under CCP/APGD and under Newton/Jacobi, 1e5-1e6 J, "failed steps 0"). After the
// solve and before the integration, the step's energy is compared with what could supply it:
//
//   rise     = (T + V)(end) - (T + V)(start)
//              T the kinetic energy of the active bodies and FEM nodes (the end at u+ and the
//              orientation the integration gives), V the FEM elements' potential at x and at
//              x + h v+ (energy_guard_hd.h tetPotentialEnergy, pressure included)
//   allowed  = F (G + R) + S (|V| + T_fem)(start) + floor
//     G      = sum over bodies and nodes of m (h g.v + h^2 |g|^2), each at least 0 (gravity's
//              share of the rise at the start velocity v, taken at twice its h^2 term), plus
//              what the gyroscopic step alone adds to a body's rotation (rigidStepEnergy)
//     R      = sum over rows of |lambda_i| times the speed the row drives its constraint at
//              (rowEnergyBound): the push-out of overlaps (min(maxPushoutSpeed, stabilization
//              d / h)), joint drives and corrections, couplings, FEM attachments; a row at its
//              force limit (the mouse drag, a force-limited joint) with its work as it is
//     S (|V| + T_fem) the elements' linearization error (below; |V| over the tets, each of
//              which a pressure can make negative; T_fem the FEM nodes' T)
//     floor  = kEnergyFloor + kEnergyFloorRelative |T + V|(start): rounding
//
// The bound. Over one step T(u+) - T(u-) = [T(u~) - T(u-)] + sum_i lambda_i J_i (u+ + u~) / 2
// exactly (M (u+ - u~) = J^T lambda, the solve's momentum equation; [NSN] eq. 59). The first
// term is gravity's share (G bounds it; the gyroscopic step adds none once its Newton iteration
// converged, integrate.h, and G holds what it adds otherwise) and PLUS's impacts (coefficient
// of restitution <= 1: none). In the second, a row that holds its
// constraint dissipates (lambda J u~ <= 0 and J u+ = 0 for an inelastic contact, Coulomb friction
// opposes the slip, an ideal joint projects); what it can add is its impulse times the speed at
// which it moves its constraint: the push-out speed of an overlap, a drive's or a joint
// correction's bias. That is R, from the solved impulses. The FEM elements' rows are the gradient
// of V, so for them the rise is counted in T + V rather than bounded. A converged step stays
// within G + R: measured on the library, the largest ratio rise / (G + R) over every step of
// every scene for 2 s under the standard, PEG, PLUS and CCP models is 0.993 (a free fall, where
// G is tight by construction), and below 0.25 where FEM V counts. The factor F = 4 is that
// margin four times over; a step beyond it is a solve that did not hold its constraints:
// heavy_stack's boxes pushed apart by contacts with nothing left to push out (Newton/Jacobi),
// newtons_cradle's balls gaining 4.8 J with no gravity (CCP/APGD), hinge_chain and
// triple_pendulum swinging up to 1e4-1e5 J (CCP). Measured bad steps reach G + R = 0 with a rise
// of 1e3-1e4 J, or 10-100x G + R.
//
// FEM. The element rows are linearized at the step's start, so T + V is kept only to the
// linearization's error: fem_extension's bars at twice their length gain up to 3.6% of V per
// substep, and a block spinning freely at 3 rad/s (tests/test_fem_exec_parity.cpp) stretches
// as its nodes move along straight lines within a step, from V = 0, by a small part of its T.
// S = 0.25 of the FEM bodies' |V| + T covers both; an element blow-up (CCP's APGD on
// fem_cantilever and pneunet_finger: 0.6-100x V per step) does not fit in it.
//
// What is not guarded. The compliant model: its contacts are Hertz springs whose stored energy
// comes back on a rebound (box_on_plane gains 105 J in one step off the floor, rightly), and
// that energy is in neither T nor V here; its own Runge-Kutta-Merson error control guards it.
// A body's velocity set between steps (the app's throw, a launched body) is input, not the
// step's: the start is the state the step begins from.
//
// Over the run. A step's allowance holds gravity's share at G, which for a pyramid at rest is
// 38 J a step (the weight's impulse that the contacts then take back), so a solve that pumps a
// resting pile by a fraction of a joule a step passes every step: the 385-box pyramid under
// CCP/APGD rattles up to 36 J of kinetic energy from 0.2 J of potential energy released, in
// 2 s. So the world also keeps an account (State::energyBudget): the mechanical energy
// T + V_g + V the run can hold, V_g = -sum m g.x gravity's potential. It starts at the first
// step's T + V_g + V, and every step adds
//   - what entered between steps: the start's T + V_g + V less the last end's (a throw, a
//     launched or spawned body, a new pressure or gravity, the energy a roll-back dropped), with
//     its sign;
//   - the bilateral rows' work summed (rowWork, with what their impulses did against gravity,
//     rowGravityWork: drives, the drag, joint corrections, attachments), when positive;
//   - the contacts' work summed (the push-out of overlaps pushing bodies apart), when positive;
//   - what V gained beyond the tets' rows' work (their linearization's error), when positive.
// With nothing else, energy conservation gives T <= budget - V_g - V at every step's end. The
// most that has been, over the steps so far, is what could be kinetic now (State::energyAvailable:
// the potential energy gravity released, at its most, and what entered); a step that ends with T
// more than kEnergyRunFactor = 10 times that (issue 36's measure: kinetic energy past 10x what
// gravity could supply) is rolled back too. The contacts' work is summed before it counts: where
// contacts hold up a pile, their negative work on the weight (the h g of each step taken back)
// outweighs a push-out of a few mm/s, so the pump above is not credited, while the push-out of a
// deep overlap (two cubes pushed apart at 1 m/s, a sunken stack pushed back up) is. The bilateral
// rows' work is summed apart from it: a drag lifting a box off a resting stack is credited
// whatever the stack's contacts take.
//
// A caught step is rolled back as the speed guard's is (World::rollBack: start positions, zero
// velocities, warm starts cleared, counted in World::failedSteps, the message in lastError()),
// so a blow-up stops where it starts; the device pipeline does the same (recordEnergyGuard).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/fem/fem_tet_cache.h"
#include "engine/model.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/energy_guard_hd.h"
#include "engine/state.h"

namespace cs {

struct BodyVelocities;   // engine/solver/newton.h

// One step's energy and what could supply it (J), as the header defines them.
struct StepEnergy {
    Real start = 0;       // (T + V) at the start
    Real rise = 0;        // (T + V)(end) - (T + V)(start)
    Real gravity = 0;     // G
    Real constraints = 0; // R
    Real fem = 0;         // V at the start
    Real femScale = 0;    // the tets' |V| summed and the FEM nodes' T, at the start
    Real femEnd = 0;      // V at the end
    Real supplied = 0;    // the account's credit: the bilateral rows' and the contacts' work
                          //   (rowWork), each when positive, and V's gain beyond the tets' rows'
    Real allowed() const { return energyAllowed(start, gravity, constraints, femScale); }
    // False when the step added more than could be supplied (a NaN rise counts as explained:
    // NaN is the speed guard's to report).
    bool explained() const { return !(rise > allowed()); }
};

// The step from `state` (the start) to bodies.velocity (u+) with rows' impulses: T over the
// dynamic bodies with active[b] and the unpinned FEM nodes, V over the tets, R over the rows but
// the FEM tets' rows [femTetRow, femTetRow + femTetRows) (whose energy is V's). cache (optional):
// the tets' end potentials, read for the start and written for the next step.
StepEnergy stepEnergy(const Model& model, const State& state, const uint8_t* active, const BodyVelocities& bodies,
                      const ConstraintRows& rows, int femTetRow, int femTetRows, Vec3 gravity, Real h,
                      FemTetCache* cache = nullptr);

// V_g = -sum m g.x over the dynamic bodies and unpinned FEM nodes (J).
Real gravityPotential(const Model& model, const State& state, Vec3 gravity);

// The account over the run (header): the budget after a step that starts at (T + V_g + V)
// `start` and supplies `supplied`, from the state's account (the first step: start). The step
// stands when its end's kinetic energy is within kEnergyRunFactor times `available` (the most
// of budget - V_g - V at any step's end so far), or the floor.
Real energyBudget(const State& state, Real start, Real supplied);
bool runEnergyExplained(Real kinetic, Real available, Real start);
std::string runEnergyFailure(Real kinetic, Real available);

// "kinetic energy rose 1.2e+05 J in one step, more than gravity, the push-out, drives and the
// drag could supply (3.1e+02 J)": the guard's one-line cause (World::rollBack adds what was lost).
std::string energyFailure(const StepEnergy& e);

}  // namespace cs
