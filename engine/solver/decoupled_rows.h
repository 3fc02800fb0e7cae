// Rows the Newton linearization has decoupled, solved on the diagonal; the rest by the linear solver.
//
// [NSN] eq. 59 is [J H^-1 J^T + C] dlambda = b with C the rows' compliance. A contact that is open
// (an NCP slope dA clamped at kMinNcpSlope) or a friction row with no normal force gets
// C_ii >= A_ii / kMinNcpSlope (constraint_rows.h evalRow): it is decoupled by construction, its
// Newton step being dlambda_i = b_i / (A_ii + C_ii) up to a relative error
//     |sum_j A_ij dlambda_j| / C_ii <= sum_j sqrt(A_ii A_jj) |dlambda_j| / C_ii,
// i.e. of order kMinNcpSlope. In a resting pyramid these are 59% of the rows (side contacts with
// their 1 mm gaps and their friction rows), each costing the Krylov loop its share of every
// scatter and gather. So the rows split in two blocks D (decoupled) and K (coupled):
//     dlambda_D = (diag(A_DD) + C_D)^-1 b_D                         (one division per row)
//     [A_KK + C_K] dlambda_K = b_K - A_KD dlambda_D                 (the linear solver, on K only)
//     dlambda_D = (b_D - A_DK dlambda_K - (A_DD - diag) dlambda_D) / (A_ii + C_ii)   (again, all known)
// a symmetric block Gauss-Seidel sweep D, K, D. K is copied into contiguous arrays (Jacobians,
// H^-1 J^T, bodies, runs, colours) once per Newton iteration, so the solver's inner loops stream
// only the coupled rows. The closing D pass matters: with the first one only (errors of 1e-7 N s
// on open contacts, whose impulse then stays exactly 0 instead of taking the small value the
// coupled solve gives it) the 55-box pyramid ended 50x deeper (7.7e-6 m against 1.6e-7 m).
//
// Measured (sandbox run, 300 steps, one thread; docs/speed.md): the 385-box pyramid 1.6x faster
// (24.3 -> 15.1 CPU ms per step), Newton iterations 1.4 -> 2.0, penetration 4.2e-7 -> 2.2e-5 m;
// the default pyramid, which runs at its Newton cap, went from 1.2e-6 to 9.8e-5 m. So it is off
// by default (SolverSettings::decoupleRows, scene setting "decouple_rows").
//
// With no decoupled row the solve is the plain one on all rows, bit for bit. The device pipeline
// (engine/exec/pipeline_newton.h) solves all rows (SolverSettings::decoupleRows is CPU-only).
#pragma once

#include <vector>

#include "engine/solver/constraint_rows.h"
#include "engine/solver/linear_solvers.h"

namespace cs {

// C_ii / A_ii at or above which a row counts as decoupled: a tenth of the ratio evalRow gives
// an open contact or an unloaded friction row (1e7 in double, 1e3 in float).
constexpr Real kDecoupledRatio = Real(0.1) / kMinNcpSlope;

// The coupled block K in contiguous arrays (scratch; grows only).
struct CoupledRows {
    std::vector<int> row;                                   // (K) index into the full system
    std::vector<int> bodyA, bodyB, bodyC, bodyD;            // (K)
    std::vector<Spatial> jacobianA, jacobianB, jacobianC, jacobianD;
    std::vector<Spatial> minvJA, minvJB, minvJC, minvJD;    // H^-1 J^T per column
    std::vector<Real> compliance, diag, rhs, x;             // (K)
    std::vector<int> runStart, colourStart, colourRows;
    std::vector<Spatial> w;                                 // (bodies) H^-1 J_D^T dlambda_D
    int decoupled = 0;                                      // |D| of the last solve
};

// Solves A x = b (x from zero) by the sweep D, K, D above. full must carry invMassJacobian* and jmjDiagonal;
// invMass (bodies) colours K for Gauss-Seidel. The result is the linear solver's on K (zero
// iterations when K is empty).
LinearSolveResult solveWithDecoupledRows(LinearSolverType type, const RowSystemView& full, const Real* b, Real* x,
                                         const LinearSolverSettings& settings, const std::vector<Real>& invMass,
                                         LinearSolverScratch& scratch, CoupledRows& k, std::vector<Real>* history);

}  // namespace cs
