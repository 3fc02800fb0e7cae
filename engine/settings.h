// The settings of a world and its step: what the scene file and the app's panels set.
// Every stage reads them from here (engine/contact, engine/solver, engine/fem, engine/exec), so
// none of them needs engine/world.h; World (engine/world.h) holds a WorldSettings.
#pragma once

#include "engine/collision/feature_pairs.h"
#include "engine/core/math.h"
#include "engine/solver/linear_solvers.h"

namespace cs {

enum class ContactModelType { Standard, PEG, PLUS, Compliant, CCP };
enum class NcpFunction { FischerBurmeister, MinimumMap };

// PEG's geometric relaxations ([PEG] section 4), used by the contact model when it groups
// potential contacts into U, I and X constraints (engine/contact/peg_model.cpp).
struct PegSettings {
    Real epsTheta = Real(0.1);       // applicability relaxation APPL >= -epsTheta (cosine units)
    Real feasibleAngle = Real(0.2);  // phi (rad): facet region widened by this angle ...
    Real feasibleDelta = Real(0.02); // delta (m): ... and by this distance from the facet's plane
    Real edgeEps = Real(0.02);       // eps (m): edge-edge feasibility, nearest points within this
    Real trapTolerance = Real(1e-6); // m: a secondary gap below -this while the group's max is >= 0
                                     //   counts as an SM trap (the standard model would push)
    bool vertexVertex = true;        // form the vertex-vertex X-constraints of eq. 38 (peg_model.cpp)
    Real motionScale = Real(0);      // widen delta and eps by this times the pair's reach within the
                                     //   step (|v_rel| h + ...; peg_model.cpp motionReach); 0: off
};

// The cone complementarity model's solvers ([CCP]; engine/solver/ccp_solvers.h): projected Jacobi,
// projected Gauss-Seidel, APGD, or Newton: the non-smooth Newton iteration with the linear solver
// of SolverSettings over the same relaxed rows.
enum class CcpSolverType { Jacobi, GaussSeidel, APGD, Newton };
struct CcpSettings {
    CcpSolverType solver = CcpSolverType::APGD;
    int iterations = 100;                // PJ / PGS sweeps, APGD iterations (Newton: newtonIterations)
    Real tolerance = Real(1e-5);         // m/s: stop when the CCP merit drops below this
    Real omega = 0;                      // PJ / PGS relaxation; <= 0: 1 for PGS, 1 / lambda_max(eta N) for PJ
};

// How the standard model's contacts, the joints and the drag are solved each step:
//   Newton  the non-smooth Newton method over the NCP rows ([NSN] Algorithm 1; engine/solver/newton.h)
//   Soft    Box2D v3's soft step: substeps of soft constraints relaxed by Gauss-Seidel sweeps over a
//           graph colouring (engine/solver/soft_step.h)
//   Pgs     sequential impulses (projected Gauss-Seidel with accumulated clamping, warm starting and
//           split impulse), as Bullet, ODE and Box2D v2 (engine/solver/pgs_step.h)
// All of them, in order: kSolveMethods (engine/solver/soft_step.h).
enum class SolveMethod { Newton, Soft, Pgs };

// The soft step's parameters (engine/solver/soft_step.h). Defaults are Box2D v3's b2DefaultWorldDef.
struct SoftSettings {
    int substeps = 4;                    // soft substeps per world step (per WorldSettings::substeps)
    int relaxIterations = 1;             // sweeps without bias after each substep's biased sweep
    Real contactHertz = 30;              // contact stiffness as a frequency, capped at a quarter of the
                                         //   substep rate (soft_step.h); contacts with a static body 2x
    Real contactDampingRatio = 10;
    Real jointHertz = 60;
    Real jointDampingRatio = 2;
    Real contactSpeed = 3;               // m/s: the fastest an overlap is pushed out
    Real restitutionThreshold = 1;       // m/s: approach speeds below this bounce with no restitution
};

// Sequential impulses' parameters (engine/solver/pgs_step.h). Defaults are Bullet's
// (btContactSolverInfo: 10 iterations, split impulse with erp2 0.8, erp 0.2 for the joints).
struct PgsSettings {
    int iterations = 10;                 // velocity sweeps per world step
    int splitIterations = 10;            // split-impulse (pseudo-velocity) sweeps per step (Bullet: the same count)
    bool splitImpulse = true;            // false: overlaps pushed out by a bounded Baumgarte bias in the velocity sweeps
    Real splitErp = Real(0.8);           // fraction of an overlap taken out per step by the split impulse
    Real erp = Real(0.2);                // Baumgarte factor: the joints' rows, and overlaps without split impulse
    Real slop = 0;                       // m: overlap left alone by either
    Real maxBiasSpeed = 3;               // m/s: the Baumgarte push-out at most (no split impulse)
    Real restitutionThreshold = 1;       // m/s: approach speeds below this bounce with no restitution
};

struct SolverSettings {
    SolveMethod method = SolveMethod::Newton;
    SoftSettings soft;
    PgsSettings pgs;
    Real relaxSlop = Real(0.0005);       // m, soft and pgs: each pair's contacts are listed within the gap its
                                         //   bodies can close in the step plus this (feature_pairs.h
                                         //   closingPairMargin), not within contactMargin; < 0: contactMargin
    ContactModelType contactModel = ContactModelType::Standard;
    NcpFunction ncp = NcpFunction::FischerBurmeister;
    LinearSolverType linearSolver = LinearSolverType::PCR;
    Preconditioner preconditioner = Preconditioner::Diagonal;   // PCG and PCR: diagonal, or blocks over the
                                         //   runs of rows on one body pair (block_preconditioner_hd.h)
    int newtonIterations = 8;
    int farNewtonIterations = 0;         // > newtonIterations: a step that reaches newtonIterations with its
                                         //   merit above kFarNewtonMerit goes on, up to this many (newton.cpp).
                                         //   World raises it to twice the cap for a step with sleeping on
                                         //   (islands.h says why); not a scene key; the step pipeline
                                         //   declines a world that sets it
    int linearIterations = 40;
    Real newtonTolerance = Real(1e-5);   // m/s: stop when the NCP merit ||phi|| drops below this.
                                         // Measured on the pyramid: 3e-5 or 1e-4 let the stack
                                         // creep (kinetic energy 1-4 J after 5 s instead of 4e-8)
    Real linearTolerance = Real(1e-12);  // relative, on the linear residual
    Real damping = Real(0.75);           // damped Newton step t ([NSN] section 8.1)
    Real regularization = Real(1e-6);    // epsilon identity shift ([NSN] section 8.4), 1/kg
    bool keepBestIterate = false;        // return the least-merit iterate when Newton ends at its cap
                                         //   more than twice worse (engine/solver/newton_steps_hd.h)
    Real linearForcing = 0;              // > 0: the linear tolerance per Newton iteration by
                                         //   Eisenstat-Walker, at most this (newton_steps_hd.h); 0: fixed
    Real stepCutGrowth = 0;              // > 0: a step that raises the merit more than this factor is
                                         //   halved, at most kMaxStepCuts times; 0: off
    bool fullStepStableSet = false;      // the full step t = 1 while no NCP row changed its side since the
                                         //   last iteration (constraint_rows.h ncpRowSide); false: t = damping
    Real frictionSlipWeight = 1;         // >= 1: a friction row's direction d from lambda_f - w D^T u / r (ncp.h
                                         //   linearizeFriction): a sliding contact's d turns to its slip in
                                         //   fewer iterations; 1: the proximal point of [NSN]'s r, as before
    bool warmStart = true;
    bool complementarityPreconditioner = true;   // [NSN] section 7, r = h [J M^-1 J^T]_ii
    bool decoupleRows = false;           // rows with C_ii >= A_ii / (10 kMinNcpSlope) solved on the diagonal,
                                         //   the rest by the linear solver (engine/solver/decoupled_rows.h; CPU
                                         //   only). Off: 1.6x faster on the 385-box pyramid, but the default
                                         //   pyramid's penetration grew from 1.2e-6 to 9.8e-5 m
    bool condenseCompliantRows = true;   // compliant bilateral rows on point masses (FEM elements) eliminated
                                         //   by a sparse direct solve in node space, the other rows solved
                                         //   densely (engine/solver/condensed_rows.h; CPU only). A no-op
                                         //   without such rows
    bool cullRows = true;                // standard model, CPU: contacts that cannot close within the step
                                         //   get no rows; the reduced solve stands only when it converged and
                                         //   every left-out contact stayed open, else the step is solved again
                                         //   with every row (engine/contact/row_culling.h). 2.1x faster on the
                                         //   385-box pyramid; no library scene worse (docs/speed.md)
    Real stabilization = 1;              // fraction of the gap psi/h kept in the constraint ([PEG] eq. 9)
    Real maxPushoutSpeed = 1;            // m/s: cap on the speed at which overlaps are corrected
    PegSettings peg;
    CcpSettings ccp;
};

// PLUS impact model ([PLUS] Uchida, Sherman, Delp 2015, figure 2 and table A1); scene "plus" block.
struct PlusSettings {
    Real captureVelocity = Real(0.01);      // m/s: below this approach speed the COR is 0 (fig. 2)
    Real plasticVelocity = Real(0.1);       // m/s: above this the COR is minRestitution (fig. 2)
    Real minRestitution = -1;               // e_min; < 0: the lower of the two materials' restitution
    Real transitionVelocity = Real(0.1);    // m/s: sliding-to-rolling transition (eq. 2.12, fig. 4)
    Real maxDirectionChange = Real(0.15);   // rad: theta_max per interval (eq. 2.14); table A1 uses 0.01
    Real proximityTolerance = Real(1e-3);   // m: feature pairs this close take part in an impact ([PLUS] 3a)
    Real minStepLength = Real(1e-4);        // alpha_min of eq. 2.14
    int maxIntervals = 5000;                // guards of the event handler (per impact)
    int maxRounds = 200;
    int maxIslandPoints = 32;               // proximal pairs per impact island (grown breadth-first)
};

// Compliant reference model ([PLUS] section 4, eqs. 4.1-4.2): Hertz + Hunt-Crossley + Stribeck.
struct CompliantSettings {
    Real stiffness = Real(1e7);             // E, Pa: effective plane-strain modulus of eq. 4.1
    Real dissipation = Real(0.1);           // c, s/m: Hunt-Crossley coefficient of eq. 4.2
    Real radius = Real(0.1);                // m: curvature radius used for polytope features (spheres use their own)
    Real stribeckVelocity = Real(0.01);     // m/s: slip speed at which friction reaches mu
    Real tolerance = Real(1e-5);            // error control of the Runge-Kutta-Merson integrator
    int maxSubsteps = 20000;                // per time step
};

struct WorldSettings {
    Real dt = Real(1.0 / 120.0);
    int substeps = 1;
    Vec3 gravity{0, 0, Real(-9.81)};
    Real contactMargin = Real(0.02);     // potential contacts are reported within this gap (m)
    Real speculative = 0;                // > 0: the margin and the narrow phase's relaxations grow
                                         //   by this times each pair's motion within the step
                                         //   (NarrowPhaseSettings::motionScale); 0: fixed
    bool hyperplaneFaces = false;        // the conventional detector the [PEG] paper compares
                                         //   against (NarrowPhaseSettings::hyperplane)
    Real frictionScale = 1;              // multiplies every material's mu (UI setting)
    int projectionPasses = 0;            // > 0: after each step, this many passes of the position
                                         //   projection (World::projectPositions); 0: off
    Real projectionMaxCorrection = Real(0.2);   // m: the most one pass moves an overlap apart
    int redetectPasses = 0;              // > 0 (with speculative > 0; standard and PEG models): when
                                         //   the solve moves or turns a body farther than the
                                         //   velocities the narrow phase widened for, detect again
                                         //   with the solved ones and solve again, at most this
                                         //   many times (World::widenDetection); 0: off
    bool narrowReuse = true;             // CPU narrow phase: pairs at rest test only their cached
                                         //   candidate feature pairs (engine/collision/feature_cache.h;
                                         //   same contacts, a quarter off the 2,870 pyramid's narrow
                                         //   phase, docs/speed.md); the device pipeline searches in full
    bool sleeping = false;               // islands at rest sleep (engine/solver/islands.h): standard,
                                         //   PEG and CCP models, scenes with no deformable body; off:
                                         //   every body is stepped (the comparison runs), on in the app
    bool partialWake = true;             // with sleeping: a drag wakes its body alone, and a sleeping
                                         //   body wakes when its load changes (islands.h); off: the
                                         //   drag and any touch wake the whole island
    SolverSettings solver;
    PlusSettings plus;
    CompliantSettings compliant;
};

// The narrow phase's settings for a step of length h (the world's margin and speculative scale).
NarrowPhaseSettings narrowPhaseSettings(const WorldSettings& settings, Real h);

// The mouse drag: a compliant point-to-point constraint from a point fixed on the body to a
// target in the world, solved inside the Newton iteration like any other row. Its stiffness is
// scaled by the effective mass at the grabbed point (as MuJoCo's simulate does), so light and
// heavy bodies follow alike: k = m_eff * (2 pi f)^2 with f = frequencyHz.
struct DragSettings {
    Real frequencyHz = 4;        // natural frequency of the drag spring
    Real dampingRatio = 1;       // critical damping by default
    Real maxForce = 2000;        // N; the drag impulse is clamped to maxForce * h
};

}  // namespace cs
