// The per-row and per-body decisions of the condensed solve (condensed_rows.h), shared by the host
// and the device (engine/exec/condensed_solve.h runs them in forEach).
#pragma once

#include "engine/solver/constraint_rows.h"
#include "engine/solver/row_system.h"

// A loop of independent lanes that g++ does not vectorize on its own (it unrolls a short one and
// keeps it scalar): vectorized on the host, each lane's operations and bits unchanged.
#if defined(__CUDA_ARCH__)
#define CS_HOST_SIMD
#else
#define CS_HOST_SIMD _Pragma("omp simd")
#endif

namespace cs {

// A row's part in the condensed solve: S (soft, condensed into K) or H (hard, in the dense
// system), and of H the linear rows (bilateral, no force limit: attachments, joints) whose
// values follow the damped step exactly (condensed_rows.h).
enum CondensedRowClass : int { kCondensedHard = 0, kCondensedHardLinear = 1, kCondensedSoft = 2 };
// A body's kind: static (no column in K or W), a point mass (an FEM node: a K node when a soft
// row touches it), rigid (its own W).
enum CondensedBodyKind : int { kCondensedStatic = 0, kCondensedPoint = 1, kCondensedRigid = 2 };

CS_HD int condensedBodyKind(const RowSystemView& v, int b) {
    if (!(v.invMass[b] > 0)) return kCondensedStatic;
    const Mat3& m = v.invInertia[b];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            if (m.m[r][c] != 0) return kCondensedRigid;
    return kCondensedPoint;
}

// The bodies and linear Jacobians of row i's (up to) four columns; returns their count.
CS_HD int condensedColumns(const RowSystemView& v, int i, int body[4], const Spatial* jac[4]) {
    body[0] = v.bodyA[i];
    body[1] = v.bodyB[i];
    jac[0] = &v.jacobianA[i];
    jac[1] = &v.jacobianB[i];
    if (!v.bodyC) return 2;
    body[2] = v.bodyC[i];
    body[3] = v.bodyD[i];
    jac[2] = &v.jacobianC[i];
    jac[3] = &v.jacobianD[i];
    return 4;
}

// The 12 x 12 block sum over soft rows soft[s0..s1) (one run: the same four bodies) of
// w_i g_i g_i^T, w_i = invD[i], g_i row i's linear Jacobians (zero past its columns), summed in
// row order into m (144, row-major). Every term is added, also where g_i[a] is zero (the loop over
// b then runs in vector lanes): such a term is +-0 for finite g, and adding +-0 leaves the sum's
// bits (it starts at +0, so it is never -0): the same bits as skipping it.
CS_HD void condensedRunBlock(const RowSystemView& v, const int* soft, int s0, int s1, const double* invD, double* m) {
    for (int k = 0; k < 144; ++k) m[k] = 0;
    for (int s = s0; s < s1; ++s) {
        const int i = soft[s];
        int body[4];
        const Spatial* jac[4];
        const int cols = condensedColumns(v, i, body, jac);
        double g[12] = {};
        for (int c = 0; c < cols; ++c)
            for (int k = 0; k < 3; ++k) g[3 * c + k] = double(jac[c]->lin[k]);
        const double w = invD[i];
        for (int a = 0; a < 12; ++a) {
            const double ga = w * g[a];
            CS_HOST_SIMD
            for (int b = 0; b < 12; ++b) m[12 * a + b] += ga * g[b];
        }
    }
}

// col = sum over row i's node columns of J_i's entries times the matching columns of X (X: n x q
// by columns, column q the touched DOF touchedDof[node] + k; bodyNode: K node of a body or -1):
// X J_i^T restricted to the touched DOFs, with n entries. The condensed solve's G = J_T X_TT J_T^T
// is two of these (condensed_solve.h).
CS_HD void touchedRowTimes(const RowSystemView& v, int i, const int* bodyNode, const int* touchedDof, const double* X,
                           int n, double* col) {
    for (int r = 0; r < n; ++r) col[r] = 0;
    int body[4];
    const Spatial* jac[4];
    const int cols = condensedColumns(v, i, body, jac);
    for (int c = 0; c < cols; ++c) {
        if (body[c] < 0 || bodyNode[body[c]] < 0) continue;
        const int tq = touchedDof[bodyNode[body[c]]];
        for (int k = 0; k < 3; ++k) {
            const double g = double(jac[c]->lin[k]);
            if (g == 0) continue;
            const double* x = X + (size_t)n * (tq + k);
            for (int r = 0; r < n; ++r) col[r] += g * x[r];
        }
    }
}

// H^-1 J^T of row i's column `slot` (the view's invMassJacobian* must be set).
CS_HD const Spatial& condensedInvMassColumn(const RowSystemView& v, int i, int slot) {
    switch (slot) {
    case 0: return v.invMassJacobianA[i];
    case 1: return v.invMassJacobianB[i];
    case 2: return v.invMassJacobianC[i];
    default: return v.invMassJacobianD[i];
    }
}

// S: a bilateral row with a compliance D_i > 0 and no force limit whose bodies are all point
// masses or static, at least one a point mass (bodyKind: condensedBodyKind of every body).
CS_HD int condensedRowClass(const RowSystemView& v, const int* kind, const Real* softness, const Real* maxImpulse,
                            const int* bodyKind, int i) {
    const bool bilateral = kind[i] == int(RowKind::Bilateral);
    const bool limited = maxImpulse[i] < kNoImpulseLimit;
    if (!bilateral || !(softness[i] > 0) || limited)
        return bilateral && !limited ? kCondensedHardLinear : kCondensedHard;
    int body[4];
    const Spatial* jac[4];
    const int cols = condensedColumns(v, i, body, jac);
    bool rigid = false, point = false;
    for (int c = 0; c < cols; ++c) {
        if (body[c] < 0) continue;
        const int k = bodyKind[body[c]];
        rigid = rigid || k == kCondensedRigid;
        point = point || k == kCondensedPoint;
    }
    return !rigid && point ? kCondensedSoft : kCondensedHardLinear;
}

}  // namespace cs
