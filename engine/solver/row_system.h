// The Schur-complement system of one Newton iteration, matrix-free.
//
// [NSN] Macklin et al. 2019, eq. 59:  [J H^-1 J^T + C] dlambda = b.
// Rows are scalar constraints acting on two bodies, or on up to four (FEM elements and
// vertex-triangle contacts: optional columns C and D; nullptr when no row has them). J is stored
// per row as one spatial block (linear, angular) per body (index -1: no body, e.g. the static
// ground). FEM nodes are bodies too, point masses: inverse mass 1/m, inverse inertia zero.
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
    // Optional third and fourth bodies (all nullptr for two-body systems): as A and B.
    const int* bodyC = nullptr;
    const int* bodyD = nullptr;
    const Spatial* jacobianC = nullptr;
    const Spatial* jacobianD = nullptr;
    const Spatial* invMassJacobianC = nullptr;
    const Spatial* invMassJacobianD = nullptr;
    // Optional, two-body systems only: J by columns (12 x rows: J_A's lin x, y, z, ang x, y, z,
    // then J_B's; column k at jacobianColumns[k * rowCount]), which lets the CPU gather run over
    // a run's rows with vector arithmetic across rows. nullptr: the gather reads jacobianA/B.
    const Real* jacobianColumns = nullptr;
    // Optional: [J H^-1 J^T]_ii precomputed (without C). nullptr: rowDiagonal computes it.
    const Real* jmjDiagonal = nullptr;
    // Rows sorted by colour for parallel Gauss-Seidel: rows of one colour share no body.
    // colourStart has colourCount + 1 entries into colourRows. Optional (nullptr: one sweep in
    // row order).
    int colourCount = 0;
    const int* colourStart = nullptr;
    const int* colourRows = nullptr;
    int serialColour = -1;             // a colour whose rows may share bodies (the colouring's
                                       // overflow): swept serially; -1: none
    // Optional runs: rows [runStart[k], runStart[k+1]) share all their bodies (a contact's normal
    // and friction rows, all contacts of one body pair, the rows of one tet). The CPU loops then load and store each
    // body's w once per run instead of once per row (runCount + 1 entries; nullptr: no runs).
    int runCount = 0;
    const int* runStart = nullptr;
};

// Splits rows into maximal runs of consecutive rows acting on the same bodies; runStart
// receives runCount + 1 offsets. Returns runCount. bodyC, bodyD: optional (nullptr).
inline int findRuns(int rowCount, const int* bodyA, const int* bodyB, int* runStart, const int* bodyC = nullptr,
                    const int* bodyD = nullptr) {
    int runs = 0;
    for (int i = 0; i < rowCount; ++i)
        if (i == 0 || bodyA[i] != bodyA[i - 1] || bodyB[i] != bodyB[i - 1] ||
            (bodyC && (bodyC[i] != bodyC[i - 1] || bodyD[i] != bodyD[i - 1])))
            runStart[runs++] = i;
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
    if (!s.bodyC) return;
    int c = s.bodyC[row], d = s.bodyD[row];
    if (c >= 0)
        w[c] = w[c] + x * (s.invMassJacobianC ? s.invMassJacobianC[row] : applyInvMass(s, c, s.jacobianC[row]));
    if (d >= 0)
        w[d] = w[d] + x * (s.invMassJacobianD ? s.invMassJacobianD[row] : applyInvMass(s, d, s.jacobianD[row]));
}

// (J w)_i: the gather half of A x, without the compliance term.
CS_HD Real gatherRow(const RowSystemView& s, int row, const Spatial* w) {
    Real y = 0;
    int a = s.bodyA[row], b = s.bodyB[row];
    if (a >= 0) y += dot(s.jacobianA[row], w[a]);
    if (b >= 0) y += dot(s.jacobianB[row], w[b]);
    if (s.bodyC) {
        int c = s.bodyC[row], d = s.bodyD[row];
        if (c >= 0) y += dot(s.jacobianC[row], w[c]);
        if (d >= 0) y += dot(s.jacobianD[row], w[d]);
    }
    return y;
}

// A_ii = J_i H^-1 J_i^T + C_ii: the diagonal preconditioner.
CS_HD Real rowDiagonal(const RowSystemView& s, int row) {
    if (s.jmjDiagonal) return s.jmjDiagonal[row] + s.compliance[row];
    Real d = s.compliance[row];
    int a = s.bodyA[row], b = s.bodyB[row];
    if (a >= 0) d += dot(s.jacobianA[row], applyInvMass(s, a, s.jacobianA[row]));
    if (b >= 0) d += dot(s.jacobianB[row], applyInvMass(s, b, s.jacobianB[row]));
    if (s.bodyC) {
        int c = s.bodyC[row], e = s.bodyD[row];
        if (c >= 0) d += dot(s.jacobianC[row], applyInvMass(s, c, s.jacobianC[row]));
        if (e >= 0) d += dot(s.jacobianD[row], applyInvMass(s, e, s.jacobianD[row]));
    }
    return d;
}

}  // namespace cs
