// Four linear solvers for the Newton system A x = b of row_system.h, behind one signature
// (as MuJoCo's mj_solPGS / mj_solCG share one): Jacobi, Gauss-Seidel, PCG and PCR, each with the
// diagonal (Jacobi) preconditioner where it applies, or for PCG and PCR the block-Jacobi one over
// the runs of rows on one body pair (block_preconditioner_hd.h). [NSN] section 8.2 and figure 11.
#pragma once

#include <vector>

#include "engine/solver/block_preconditioner.h"
#include "engine/solver/row_system.h"

namespace cs {

enum class LinearSolverType { Jacobi, GaussSeidel, PCG, PCR };

struct LinearSolverSettings {
    int maxIterations = 20;
    Real tolerance = 0;           // stop when ||b - A x|| <= tolerance * ||b|| (0: run all iterations)
    Real jacobiOmega = 0;         // Jacobi relaxation; <= 0: automatic, 1 / lambda_max(D^-1 A) estimated
                                  // by power iteration (a fixed omega diverges where a row has many
                                  // neighbours)
    Preconditioner preconditioner = Preconditioner::Diagonal;   // PCG and PCR: M = diag(A) or the
                                  // blocks of A over the runs (Jacobi and Gauss-Seidel: diagonal)
};

struct LinearSolveResult {
    int iterations = 0;
    Real residual = 0;            // ||b - A x||_2 at exit
    Real initialResidual = 0;
};

// Reusable scratch so no solve allocates in steady state.
struct LinearSolverScratch {
    std::vector<Spatial> w;                   // (bodies) H^-1 J^T x
    std::vector<Real> r, z, p, q, Ap, Az, d;  // (rows) Krylov vectors and the diagonal
    BlockPreconditionerScratch block;         // the block preconditioner's layout and inverse
};

// Solves A x = b starting from the given x (zero or warm). Records ||b - A x|| after each
// iteration into residualHistory when non-null (entry 0: the initial residual).
LinearSolveResult solveLinear(LinearSolverType type, const RowSystemView& system, const Real* b,
                              Real* x, const LinearSolverSettings& settings,
                              LinearSolverScratch& scratch, std::vector<Real>* residualHistory);

// y = A x, matrix-free (scatter per row, gather per row).
void applySystem(const RowSystemView& system, const Real* x, Real* y, LinearSolverScratch& scratch);

// w = H^-1 J^T x (bodyCount entries): the body velocity change of row impulses x.
void scatterImpulses(const RowSystemView& system, const Real* x, Spatial* w);

const char* linearSolverName(LinearSolverType type);      // "jacobi", "gs", "pcg", "pcr"
bool parseLinearSolver(const char* name, LinearSolverType& out);

}  // namespace cs
