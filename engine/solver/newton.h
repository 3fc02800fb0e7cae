// The non-smooth Newton iteration of [NSN] Algorithm 1 over the rows of one step.
#pragma once

#include <utility>
#include <vector>

#include "engine/solver/condensed_rows.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/decoupled_rows.h"
#include "engine/solver/linear_solvers.h"
#include "engine/solver/newton_steps_hd.h"   // kFarNewtonMerit

namespace cs {

struct SolverSettings;
struct SolveStats;

// Per-body data of the step: velocities and world-frame inverse mass.
struct BodyVelocities {
    std::vector<Spatial> unconstrained;   // (bodies) u~ = u^- + h M^-1 f_ext
    std::vector<Spatial> velocity;        // (bodies) u at the current Newton iterate
    std::vector<Real> invMass;            // (bodies)
    std::vector<Mat3> invInertia;         // (bodies) world frame
};

struct NewtonScratch {
    std::vector<Real> jv, diagA, compliance, residual, merit, rhs, dlambda, lambdaStart;
    std::vector<Real> dlambdaFixed;   // the part of the step that does not scale with t (condensed_rows.h)
    std::vector<Real> checkX, checkAx;   // the condensed solve's x and A x (its residual, for the history)
    std::vector<Real> bestLambda; // the least-merit iterate (SolverSettings::keepBestIterate)
    std::vector<int> ncpSide;     // (rows) ncpRowSide at the last iteration (SolverSettings::fullStepStableSet)
    std::vector<Real> gapJv;      // (gap members) J_s u of [PEG] secondary contacts
    std::vector<Real> gapRatio;   // (gap members) rho_s, see constraint_rows.h
    std::vector<Spatial> w, minvJA, minvJB, minvJC, minvJD;
    std::vector<Real> jacobianColumns;   // (12 x rows) J by columns, RowSystemView::jacobianColumns
    std::vector<int> colourStart, colourRows;
    std::vector<int> runStart;    // rows sharing one body pair, row_system.h
    std::vector<std::pair<int, Real>> boundRows;   // force-limited rows at a bound this iteration, and the bound
    LinearSolverScratch linear;
    CoupledRows coupled;          // decoupled_rows.h
    CondensedRows condensed;      // condensed_rows.h
};

// Solves for rows.lambda and bodies.velocity. Warm impulses already in rows.lambda are the
// starting iterate (zero for a cold start, [NSN] eqs. 67-68).
void solveNewton(const SolverSettings& settings, Real h, ConstraintRows& rows, BodyVelocities& bodies,
                 NewtonScratch& scratch, SolveStats& stats);

// Greedy colouring of rows so rows of one colour share no dynamic body (Gauss-Seidel sweeps).
// serialColour (optional) receives the overflow colour, whose rows may share bodies, or -1.
void colourRows(const ConstraintRows& rows, const std::vector<Real>& invMass, std::vector<int>& colourStart,
                std::vector<int>& colourRowsOut, int* serialColour = nullptr);
// The same over plain row arrays (bodyC, bodyD: nullptr for two-body rows).
void colourRowArrays(int n, const int* bodyA, const int* bodyB, const int* bodyC, const int* bodyD,
                     const std::vector<Real>& invMass, std::vector<int>& colourStart, std::vector<int>& colourRowsOut,
                     int* serialColour = nullptr);

}  // namespace cs
