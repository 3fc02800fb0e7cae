// The Schur-complement system of one Newton iteration, matrix-free.
//
// [NSN] Macklin et al. 2019, eq. 59:  [J H^-1 J^T + C] dlambda = b.
// Rows are scalar constraints acting on at most two bodies. J is stored per row as two spatial
// blocks (linear, angular) for body A and body B (index -1: no body, e.g. the static ground).
// H is the block-diagonal mass matrix (rigid bodies: 1/m and the world inverse inertia), C the
// diagonal compliance. Here dlambda is an impulse (N s) and H^-1 maps impulses to velocities,
// so every entry of A has units 1/kg (rows of rotational joints: per m^2 or per rad^2 alike).
//
// Everything here is a plain view plus CS_HD per-element functions: the CPU backend loops over
// them, the CUDA backend launches the same functions. A = J H^-1 J^T + C is applied as
//     w_b = sum_{rows i on body b} H_b^-1 J_{i,b}^T x_i       (scatter, per body)
//     y_i = J_{i,A} . w_A + J_{i,B} . w_B + C_i x_i            (gather, per row)
#pragma once

#include "engine/core/math.h"

namespace cs {

struct RowSystemView {
    int rowCount = 0;
    int bodyCount = 0;
    const int* bodyA = nullptr;        // (rows) body index or -1
    const int* bodyB = nullptr;        // (rows) body index or -1
    const Spatial* jacobianA = nullptr;  // (rows) J_{i,A}
    const Spatial* jacobianB = nullptr;  // (rows) J_{i,B}
    const Real* compliance = nullptr;  // (rows) C_ii, >= 0
    const Real* invMass = nullptr;     // (bodies) 0 for static bodies
    const Mat3* invInertia = nullptr;  // (bodies) world-frame inverse inertia, zero for static
    // Optional: H^-1 J_i^T precomputed per row (J is fixed over a step), which halves the
    // scatter's cost. nullptr: computed on the fly from invMass and invInertia.
    const Spatial* invMassJacobianA = nullptr;   // (rows) H_A^-1 J_{i,A}^T
    const Spatial* invMassJacobianB = nullptr;   // (rows) H_B^-1 J_{i,B}^T
    // Optional: [J H^-1 J^T]_ii precomputed (without C). nullptr: rowDiagonal computes it.
    const Real* jmjDiagonal = nullptr;
    // Rows sorted by colour for parallel Gauss-Seidel: rows of one colour share no body.
    // colourStart has colourCount + 1 entries into colourRows. Optional (nullptr: one sweep in
    // row order).
    int colourCount = 0;
    const int* colourStart = nullptr;
    const int* colourRows = nullptr;
    // Optional runs: rows [runStart[k], runStart[k+1]) share bodyA and bodyB (a contact's normal
    // and friction rows, all contacts of one body pair). The CPU loops then load and store each
    // body's w once per run instead of once per row (runCount + 1 entries; nullptr: no runs).
    int runCount = 0;
    const int* runStart = nullptr;
};

// Splits rows into maximal runs of consecutive rows acting on the same two bodies; runStart
// receives runCount + 1 offsets. Returns runCount.
inline int findRuns(int rowCount, const int* bodyA, const int* bodyB, int* runStart) {
    int runs = 0;
    for (int i = 0; i < rowCount; ++i)
        if (i == 0 || bodyA[i] != bodyA[i - 1] || bodyB[i] != bodyB[i - 1]) runStart[runs++] = i;
    runStart[runs] = rowCount;
    return runs;
}

// H_b^-1 applied to a spatial impulse.
CS_HD Spatial applyInvMass(const RowSystemView& s, int body, Spatial f) {
    return Spatial{s.invMass[body] * f.lin, s.invInertia[body] * f.ang};
}

// Body velocity change of one row's impulse x_i: the scatter half of A x.
CS_HD void scatterRow(const RowSystemView& s, int row, Real x, Spatial* w) {
    int a = s.bodyA[row], b = s.bodyB[row];
    if (a >= 0)
        w[a] = w[a] + x * (s.invMassJacobianA ? s.invMassJacobianA[row] : applyInvMass(s, a, s.jacobianA[row]));
    if (b >= 0)
        w[b] = w[b] + x * (s.invMassJacobianB ? s.invMassJacobianB[row] : applyInvMass(s, b, s.jacobianB[row]));
}

// (J w)_i: the gather half of A x, without the compliance term.
CS_HD Real gatherRow(const RowSystemView& s, int row, const Spatial* w) {
    Real y = 0;
    int a = s.bodyA[row], b = s.bodyB[row];
    if (a >= 0) y += dot(s.jacobianA[row], w[a]);
    if (b >= 0) y += dot(s.jacobianB[row], w[b]);
    return y;
}

// A_ii = J_i H^-1 J_i^T + C_ii: the diagonal preconditioner.
CS_HD Real rowDiagonal(const RowSystemView& s, int row) {
    if (s.jmjDiagonal) return s.jmjDiagonal[row] + s.compliance[row];
    Real d = s.compliance[row];
    int a = s.bodyA[row], b = s.bodyB[row];
    if (a >= 0) d += dot(s.jacobianA[row], applyInvMass(s, a, s.jacobianA[row]));
    if (b >= 0) d += dot(s.jacobianB[row], applyInvMass(s, b, s.jacobianB[row]));
    return d;
}

}  // namespace cs
