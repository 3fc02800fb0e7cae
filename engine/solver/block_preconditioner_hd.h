// The block-Jacobi preconditioner M = blockdiag(A_kk) of the Newton system A = J H^-1 J^T + C
// (row_system.h, [NSN] eq. 59), for PCG and PCR on every backend.
//
// Why blocks. The rows of one run act on the same bodies (a contact's normal and two friction
// rows, all contacts of one body pair: a manifold of up to four contacts, the rows of a joint or
// a tet). Within a run the rows are strongly coupled: the four normals of a box resting on a face
// span only three of its six velocities, so their 4 x 4 block is singular up to the compliance
// and the regularization eps ([NSN] section 8.4). The diagonal preconditioner leaves those
// eigenvalues at eps / A_ii (about 1e-3 for a unit box of 1000 kg) in the spectrum of M^-1 A and
// the Krylov solvers spend iterations on them; the block inverse maps each block to the identity
// and leaves only the coupling between runs (Saad 2003, section 10.1, block Jacobi).
//
// Blocks. A run is cut into blocks of at most kMaxBlockRows rows from its first row (four
// contacts of three rows; a bigger run, such as a long tet chain or a box on a table's many
// contacts, becomes several blocks, the last smaller). A block's entries are exact principal
// entries of A (the slots of a row that name the same body are coupled too, as scatter and gather
// couple them), so M is the block diagonal of A and is SPD whenever A is.
//
// Factorization, per Newton iteration (C changes with each linearization): A_kk = L D L^T
// (LDL^T without square roots); a pivot at or below kPivotFloor times its original diagonal is a
// row dependent on the block's earlier rows (or an empty row, A_ii = 0): it is dropped (its
// inverse row and column are zero, as the diagonal preconditioner's 1 / A_ii = 0 for an empty
// row), so M^-1 stays PSD. The explicit inverse is stored row by row, kMaxBlockRows entries per
// row (inverse + i * kMaxBlockRows holds row i of its block's inverse), so applying M^-1 is one
// independent short dot product per row: z_i = sum_j (A_kk^-1)_ij r_j.
//
// Measured (docs/speed.md): far fewer iterations to a tight tolerance on real contact rows, and PCG
// converges on the pyramids with it, but in the step PCR with the diagonal stays faster on every
// peer scene (a block iteration costs about twice as much, and Newton needs as many iterations);
// with the minimum map the card house blows up with blocks. So it is an option, off by default.
#pragma once

#include "engine/solver/row_system.h"

namespace cs {

constexpr int kMaxBlockRows = 12;             // four contacts of three rows
constexpr Real kPivotFloor = Real(1e-12);     // relative pivot below which a row is dropped

enum class Preconditioner { Diagonal, Block };

// Row layout of the blocks: each row's block's first row and size.
struct BlockPreconditionerView {
    const int* blockFirst = nullptr;   // (rows)
    const int* blockSize = nullptr;    // (rows)
    Real* inverse = nullptr;           // (rows x kMaxBlockRows) row i of its block's A_kk^-1
};

// The block of row i in the run [runFirst, runEnd): cut into kMaxBlockRows pieces from runFirst.
CS_HD void blockOfRow(int runFirst, int runEnd, int i, int& first, int& size) {
    first = runFirst + (i - runFirst) / kMaxBlockRows * kMaxBlockRows;
    const int left = runEnd - first;
    size = left < kMaxBlockRows ? left : kMaxBlockRows;
}

// Body of slot k (0..3: A, B, C, D) of row i, and its J and H^-1 J^T.
CS_HD int slotBody(const RowSystemView& s, int i, int k) {
    if (k == 0) return s.bodyA[i];
    if (k == 1) return s.bodyB[i];
    if (!s.bodyC) return -1;
    return k == 2 ? s.bodyC[i] : s.bodyD[i];
}

CS_HD Spatial slotJacobian(const RowSystemView& s, int i, int k) {
    return k == 0 ? s.jacobianA[i] : k == 1 ? s.jacobianB[i] : k == 2 ? s.jacobianC[i] : s.jacobianD[i];
}

CS_HD Spatial slotInvMassJacobian(const RowSystemView& s, int i, int k) {
    const Spatial* pre = k == 0 ? s.invMassJacobianA : k == 1 ? s.invMassJacobianB
                       : k == 2 ? s.invMassJacobianC : s.invMassJacobianD;
    return pre ? pre[i] : applyInvMass(s, slotBody(s, i, k), slotJacobian(s, i, k));
}

// A_kk of the block [first, first + n) (rows of one run: same bodies in every slot), then its
// LDL^T and the explicit inverse into m.inverse.
//     A_jl = sum over slots p, q with body_p = body_q of J_{j,p} . H^-1 J_{l,q}^T  + C_j [j = l]
CS_HD void factorBlock(const RowSystemView& s, int first, int n, Real* inverse) {
    Real a[kMaxBlockRows][kMaxBlockRows];
    // Slot pairs on one body (p = q always; p != q only where a row names a body twice).
    int pairP[16], pairQ[16], pairs = 0;
    for (int p = 0; p < 4; ++p)
        for (int q = 0; q < 4; ++q) {
            const int bp = slotBody(s, first, p);
            if (bp >= 0 && bp == slotBody(s, first, q)) {
                pairP[pairs] = p;
                pairQ[pairs] = q;
                ++pairs;
            }
        }
    for (int j = 0; j < n; ++j)
        for (int l = 0; l <= j; ++l) {
            Real v = j == l ? s.compliance[first + j] : Real(0);
            for (int k = 0; k < pairs; ++k)
                v += dot(slotJacobian(s, first + j, pairP[k]), slotInvMassJacobian(s, first + l, pairQ[k]));
            a[j][l] = v;
        }
    // A = L D L^T in place: a[j][l] (l < j) becomes L_jl, the diagonal D_j; invD 0: dropped row.
    Real invD[kMaxBlockRows];
    for (int j = 0; j < n; ++j) {
        const Real original = a[j][j];
        Real d = original;
        for (int k = 0; k < j; ++k) d -= a[j][k] * a[j][k] * a[k][k];
        const bool keep = original > Real(0) && d > kPivotFloor * original;
        a[j][j] = keep ? d : Real(0);
        invD[j] = keep ? Real(1) / d : Real(0);
        for (int i = j + 1; i < n; ++i) {
            Real v = a[i][j];
            for (int k = 0; k < j; ++k) v -= a[i][k] * a[j][k] * a[k][k];
            a[i][j] = v * invD[j];
        }
    }
    // Column c of A_kk^-1 = L^-T D^-1 L^-1 e_c (stored as row c: the inverse is symmetric).
    for (int c = 0; c < n; ++c) {
        Real y[kMaxBlockRows];
        for (int i = 0; i < n; ++i) {
            Real v = i == c ? Real(1) : Real(0);
            for (int k = 0; k < i; ++k) v -= a[i][k] * y[k];
            y[i] = v;
        }
        for (int i = 0; i < n; ++i) y[i] *= invD[i];
        for (int i = n - 1; i >= 0; --i) {
            Real v = y[i];
            for (int k = i + 1; k < n; ++k) v -= a[k][i] * y[k];
            y[i] = v;
        }
        Real* row = inverse + size_t(first + c) * kMaxBlockRows;
        for (int i = 0; i < n; ++i) row[i] = y[i];
    }
}

// z_i = (M^-1 r)_i = sum_j (A_kk^-1)_ij r_j over row i's block.
CS_HD Real applyBlockRow(const BlockPreconditionerView& m, int i, const Real* r) {
    const int first = m.blockFirst[i], n = m.blockSize[i];
    const Real* row = m.inverse + size_t(i) * kMaxBlockRows;
    Real z = 0;
    for (int j = 0; j < n; ++j) z += row[j] * r[first + j];
    return z;
}

}  // namespace cs
