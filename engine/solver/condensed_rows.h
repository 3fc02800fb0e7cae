// The compliant bilateral rows (FEM elements) eliminated by a sparse direct solve in node space.
//
// A Newton iteration solves [J W J^T + D] dlambda = r, W = H^-1 (block diagonal), D = diag of the
// rows' compliance (newton.cpp). Split the rows into S, the bilateral rows with a compliance
// D_i > 0 and no force limit whose bodies are all point masses (FEM nodes) or static, and H, all
// others (contacts, attachments, joints, the drag). With K = M + J_S^T D_S^-1 J_S over the nodes
// S touches (sparse SPD, 3 x 3 blocks; every other body keeps its own W):
//     1. y = K^-1 J_S^T D_S^-1 r_S
//     2. (J_H K~^-1 J_H^T + D_H) dlambda_H = r_H - J_H y        (K~^-1: K^-1 on K's nodes, W elsewhere)
//     3. dv = y + K~^-1 J_H^T dlambda_H
//     4. dlambda_S = D_S^-1 (r_S - J_S dv)
// which is the full system exactly (M dv = J^T dlambda, and each row's equation holds). Within a
// step the element rows are linear in u with a fixed D_S, so K is factored once per step (its
// pattern, fixed by the mesh, is analysed once) and reused by every Newton iteration.
//
// Step 2 is solved directly: its matrix G = J_H K~^-1 J_H^T is formed once per step (one K solve
// per node DOF that a hard row touches, a block of K^-1 over those DOFs) and factored densely
// (Cholesky) per Newton iteration with that iteration's D_H. Why not the chosen iterative solver:
// each of its products would cost a K solve (a pass over the whole factor) and the few hard rows
// of the FEM scenes (contacts on a body's nodes) make a dense factor cheaper than 40 of those;
// and a direct solve removes the inexactness that kept the FEM scenes at their Newton cap.
// When the hard rows are many (over 600) or touch many node DOFs (over 600), the step keeps the
// plain iterative solve on all rows (prepare returns false; condensed_rows.cpp says why 600).
//
// The damped step (newton.cpp): for a step t on the non-smooth hard rows (contacts, force-limited
// rows), every linear row (S, and the hard bilateral rows: attachments, joints) takes the value
// that keeps its own equation exact: dlambda_L(t) = a + t b from the hard system restricted to
// them, dlambda_S(t) = D_S^-1 (r_S - J_S dv(t)). So the FEM part needs one iteration whatever the
// damping, and only the contacts iterate. solve() returns that as x = fixed + t step.
//
// docs/fem_direct_solve.md has the measurements.
#pragma once

#include <memory>
#include <vector>

#include "engine/solver/constraint_rows.h"
#include "engine/solver/row_system.h"

namespace cs {

struct CondensedStats {
    int softRows = 0, hardRows = 0, dofs = 0, touchedDofs = 0;
    long long factorNonZeros = 0;
    double factorSeconds = 0, hardSeconds = 0;   // this step: K's factor, G and the touched block
};

class CondensedRows {
public:
    CondensedRows();
    ~CondensedRows();
    // Copies start empty (the factor and the pattern are caches, rebuilt on the next prepare).
    CondensedRows(const CondensedRows&);
    CondensedRows& operator=(const CondensedRows&);

    // Selects S (see above) from the rows with their step compliance `softness` (D_S; constant over
    // the step), assembles and factors K, and forms G. view: the full system with
    // invMassJacobian* (W J^T) set. False: nothing to condense, or too many hard rows; use the plain solve.
    bool prepare(const ConstraintRows& rows, const RowSystemView& view);

    bool isSoft(int row) const { return rowSoft_[row] != 0; }

    // Solves the system for the Newton step with right-hand side b and the hard rows' compliance
    // D_H = compliance[h] (the S rows' D is rows.softness, as given to prepare). The step for a
    // damping t is x = fixed + t * step (fixed is zero on non-smooth rows). Returns false when the
    // hard matrix is not positive definite (then the caller solves iteratively).
    bool solve(const RowSystemView& view, const Real* compliance, const Real* b, Real* fixed, Real* step);

    const CondensedStats& stats() const { return stats_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::vector<char> rowSoft_;
    CondensedStats stats_;
};

}  // namespace cs
