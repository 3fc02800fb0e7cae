// The condensed solve of the compliant rows (engine/solver/condensed_rows.h has the math) over
// the executor verbs, written once: World::substep's Newton runs it through CondensedRows on the
// host executor, the step pipeline (pipeline_newton.h) on its own executor.
//
//   prepare   forEach: each row's class and each body's kind (condensed_rows_hd.h); a host copy
//             of them; the host layout (condensed_layout.h: row lists, K's numbering and
//             pattern); K = M + J_S^T D_S^-1 J_S assembled into its value slots; K factored
//             (Exec::SparseCholesky, analysed when the pattern is new); K^-1 over the touched
//             DOFs from the factor's trailing block; G = J_H K~^-1 J_H^T
//   solve     the four steps of condensed_rows.h with the dense factor (Exec::DenseCholesky) of
//             G + D_H, and the damped step's split x = fixed + t step
//
// Kept factor. Where no hard row touches K's nodes (no K^-1 block is needed), prepare keeps the
// factor of an earlier step's K instead of factoring this step's, and the solve with K refines
// against this step's K: y += K_old^-1 (f - K y) until ||f - K y|| <= kRefineTolerance ||f||
// (a direct solve reaches 1e-15 to 5e-14 there), at most kMaxRefine times, else K is factored
// then and solved directly. pneunet_finger at rest: 2.0e-6, 2.8e-9, 1.7e-14 after 0, 1, 2
// refinements, 12 factorizations in 240 steps instead of 160 (docs/fem_direct_solve.md).
//
// Host reads: the row count, the classes and bodies (prepare), the factor statuses and whether
// the linear hard rows' parts are zero (solve). So on CUDA a step that condenses cannot be a
// recorded graph: PipelineWorld runs it eagerly (pipeline_world.h). Every sum is added in the
// order of the serial loops CondensedRows had (per K entry: the mass, then the runs in order; per
// G entry: the K part, then the bodies in order), so World::substep's results are those of
// before, to the bit. The scatters into K's values and into the node right-hand sides run as
// serial stages (one thread on CUDA): a per-slot gather list would make them parallel, in the same
// order (docs/fem_direct_solve.md, What is left).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "engine/exec/condensed_layout.h"
#include "engine/exec/executor.h"
#include "engine/solver/condensed_rows.h"   // CondensedStats
#include "engine/solver/condensed_rows_hd.h"

namespace cs {

// The rows as the condensed solve reads them, all in the executor's memory.
struct CondensedInput {
    RowSystemView sys;          // the rows, with invMassJacobian* (H^-1 J^T) set
    const int* kind;            // (rows) RowKind
    const Real* softness;       // (rows) D_i of the bilateral rows (the S rows' D over the step)
    const Real* maxImpulse;     // (rows) force limit, kNoImpulseLimit for none
    const int* rowCount;        // the rows this step (sys.rowCount may be a capacity)
};

// The kept factor's refinement (header).
constexpr double kRefineTolerance = 1e-13;
constexpr int kMaxRefine = 3;

template <class Exec>
class CondensedSolve {
public:
    template <class T>
    using Buffer = typename Exec::template Buffer<T>;

    // False: nothing to condense, too many hard rows, or K not positive definite: the caller
    // solves iteratively. The class of each row (CondensedRowClass) is then in rowClass().
    bool prepare(Exec& ex, const CondensedInput& in);
    // The Newton step for right-hand side b with the hard rows' compliance D_H = compliance[h]:
    // for a damping t, x = fixed + t step (fixed zero on the non-smooth rows); rows outside S and
    // H are not written. False when the dense hard matrix is not positive definite.
    bool solve(Exec& ex, const CondensedInput& in, const Real* compliance, const Real* b, Real* fixed, Real* step);

    // y = K^-1 f with this step's K: by the factor, refined where it is an earlier step's (header);
    // public for CUDA (an extended lambda's enclosing function may not be private).
    // False: K, factored afresh, is not positive definite.
    bool solveK(Exec& ex, const double* f, double* y);
    const int* rowClass() { return rowClass_.data(); }   // executor memory
    int hostRowClass(int i) const { return L_.rowClass[i]; }
    const CondensedStats& stats() const { return stats_; }

private:
    template <class T>
    static T* sized(Buffer<T>& b, size_t n) {
        b.reserve(std::max<size_t>(n, 1));
        return b.data();
    }
    template <class T>
    T* send(Exec& ex, Buffer<T>& b, const std::vector<T>& host) {
        T* p = sized(b, host.size());
        ex.upload(p, host.data(), host.size());
        return p;
    }
    int readStatus(Exec& ex) {
        int s = 0;
        ex.download(&s, status_.data(), 1);
        ex.sync();
        return s;
    }
    static bool anyNonZero(Exec& ex, const double* x, int n, std::vector<double>& host) {
        host.resize(n);
        ex.download(host.data(), x, n);
        ex.sync();
        for (double v : host)
            if (v != 0) return true;
        return false;
    }

    // Factors this step's K (values val); false only if K lost definiteness in floating point.
    bool factorThisK(Exec& ex, const double* val) {
        factorK_.factor(ex, val, sized(status_, 1));
        factored_ = stale_ = false;
        if (!readStatus(ex)) return false;
        factored_ = true;
        return true;
    }

    static double hostNorm(Exec& ex, const double* x, int n, std::vector<double>& host) {
        host.resize(n);
        ex.download(host.data(), x, n);
        ex.sync();
        double s = 0;
        for (double v : host) s += v * v;
        return std::sqrt(s);
    }

    CondensedLayout L_;
    CondensedStats stats_;
    typename Exec::SparseCholesky factorK_;
    typename Exec::DenseCholesky llt_, lltLinear_;
    bool analysed_ = false;
    bool factored_ = false;   // the factor holds some K of the analysed pattern
    bool stale_ = false;      // ... of an earlier step's K (solveK refines)
    long long factorNonZeros_ = 0;
    // Device copies: classes and bodies, the layout's lists, K, its touched inverse, G.
    Buffer<int> colStart_, rowIndex_;   // K's pattern (solveK)
    Buffer<int> rowClass_, rowBody_, bodyKind_, status_;
    Buffer<int> soft_, runStart_, runSlot_, runLength_, nodeBody_, nodeColumnLength_, diagSlot_;
    Buffer<int> hard_, linearIndex_, bodyNode_, touchedDof_, entryStart_, entries_;
    Buffer<double> invD_, values_, runLocal_, xtt_, B_, Bt_, G_;
    // Per solve.
    Buffer<double> refineR_, refineD_;
    Buffer<double> f_, y_, za_, zb_, fa_, fb_, rhsH_, lambdaH_, a_, bStep_, A_, All_, rhsL_, solutionL_;
    std::vector<double> hostCheck_;
};

template <class Exec>
bool CondensedSolve<Exec>::prepare(Exec& ex, const CondensedInput& in) {
    stats_ = CondensedStats{};
    int n = 0;
    ex.download(&n, in.rowCount, 1);
    ex.sync();
    const int nb = in.sys.bodyCount;
    const RowSystemView v = in.sys;
    const int *kind = in.kind;
    const Real *softness = in.softness, *maxImpulse = in.maxImpulse;
    int* rowClass = sized(rowClass_, n);
    int* rowBody = sized(rowBody_, 4 * (size_t)n);
    int* bodyKind = sized(bodyKind_, nb);
    ex.forEach(nb, nullptr, nullptr, [=] CS_LAMBDA(int b) { bodyKind[b] = condensedBodyKind(v, b); });
    ex.forEach(n, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        rowClass[i] = condensedRowClass(v, kind, softness, maxImpulse, bodyKind, i);
        int body[4] = {-1, -1, -1, -1};
        const Spatial* jac[4];
        condensedColumns(v, i, body, jac);
        for (int c = 0; c < 4; ++c) rowBody[4 * i + c] = body[c];
    });
    L_.rowClass.resize(n);
    L_.rowBody.resize(4 * (size_t)n);
    L_.bodyKind.resize(nb);
    ex.download(L_.rowClass.data(), rowClass, n);
    ex.download(L_.rowBody.data(), rowBody, 4 * (size_t)n);
    ex.download(L_.bodyKind.data(), bodyKind, nb);
    ex.sync();
    if (!layoutCondensedRows(L_, n, nb)) return false;
    if (L_.patternChanged) analysed_ = false;

    const int nodes = L_.nodes, dofs = L_.dofs(), runs = L_.runs(), nh = (int)L_.hard.size();
    const int nt = L_.touchedDofs(), first = nodes - L_.touched;
    const int *soft = send(ex, soft_, L_.soft), *runStart = send(ex, runStart_, L_.runStart);
    const int *runSlot = send(ex, runSlot_, L_.runSlot), *runLength = send(ex, runLength_, L_.runLength);
    const int *nodeBody = send(ex, nodeBody_, L_.nodeBody);
    const int *nodeColumnLength = send(ex, nodeColumnLength_, L_.nodeColumnLength);
    const int *diagSlot = send(ex, diagSlot_, L_.diagSlot), *hard = send(ex, hard_, L_.hard);
    send(ex, linearIndex_, L_.linearIndex);
    const int *bodyNode = send(ex, bodyNode_, L_.bodyNode), *touchedDof = send(ex, touchedDof_, L_.touchedDof);
    const int *entryStart = send(ex, entryStart_, L_.entryStart), *entries = send(ex, entries_, L_.entries);

    // ---- K = M + J_S^T D_S^-1 J_S ----
    auto t0 = std::chrono::steady_clock::now();
    double* invD = sized(invD_, n);
    const int* cls = rowClass;
    ex.forEach(n, nullptr, nullptr,
               [=] CS_LAMBDA(int i) { invD[i] = cls[i] == kCondensedSoft ? 1.0 / double(softness[i]) : 0.0; });
    const int nnz = L_.colStart[dofs];
    double* val = sized(values_, nnz);
    ex.forEach(nnz, nullptr, nullptr, [=] CS_LAMBDA(int k) { val[k] = 0; });
    ex.forEach(nodes, nullptr, nullptr, [=] CS_LAMBDA(int q) {
        const double mass = 1.0 / double(v.invMass[nodeBody[q]]);
        const int len = nodeColumnLength[q];
        for (int c = 0; c < 3; ++c) val[diagSlot[q] + c * len + c] += mass;
    });
    // Each run's 12 x 12 sum of w g g^T over its rows (in row order), then into K's slots: per slot
    // the mass, then the runs in order. On the host one pass, each block scattered as it is
    // summed; elsewhere the blocks in parallel, then their scatter.
    auto scatterRun = [=] CS_LAMBDA(int r, const double* m) {
        for (int c1 = 0; c1 < 4; ++c1)
            for (int c2 = 0; c2 < 4; ++c2) {
                const int slot = runSlot[16 * r + 4 * c1 + c2];
                if (slot < 0) continue;
                const int len = runLength[16 * r + 4 * c1 + c2];
                for (int cc = 0; cc < 3; ++cc)
                    for (int rr = 0; rr < 3; ++rr) val[slot + cc * len + rr] += m[12 * (3 * c1 + rr) + 3 * c2 + cc];
            }
    };
    if constexpr (Exec::kRowKernels) {
        ex.serial(nullptr, [=] CS_LAMBDA() {
            double m[144];
            for (int r = 0; r < runs; ++r) {
                condensedRunBlock(v, soft, runStart[r], runStart[r + 1], invD, m);
                scatterRun(r, m);
            }
        });
    } else {
        double* local = sized(runLocal_, 144 * (size_t)runs);
        ex.forEach(runs, nullptr, nullptr, [=] CS_LAMBDA(int r) {
            condensedRunBlock(v, soft, runStart[r], runStart[r + 1], invD, local + 144 * r);
        });
        ex.serial(nullptr, [=] CS_LAMBDA() {
            for (int r = 0; r < runs; ++r) scatterRun(r, local + 144 * r);
        });
    }
    if (!analysed_) {
        if (!factorK_.analyse(ex, dofs, L_.colStart.data(), L_.rowIndex.data(), nullptr)) return false;
        analysed_ = true;
        factored_ = false;
        send(ex, colStart_, L_.colStart);
        send(ex, rowIndex_, L_.rowIndex);
        factorNonZeros_ = factorK_.factorNonZeros();
    }
    if (factored_ && nt == 0) {
        stale_ = true;   // the kept factor (header)
    } else {
        if (!factorThisK(ex, val)) return false;
    }
    stats_.factorSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stats_.softRows = (int)L_.soft.size();
    stats_.hardRows = nh;
    stats_.dofs = dofs;
    stats_.touchedDofs = nt;
    stats_.factorNonZeros = factorNonZeros_;

    // ---- the hard rows: K^-1 over the node DOFs they touch, and G ----
    t0 = std::chrono::steady_clock::now();
    // The touched nodes are K's last: with K = L L^T in that order, the trailing block of the
    // factor is their Schur complement S = L_TT L_TT^T, and K^-1 over them is S^-1 =
    // L_TT^-T L_TT^-1 (dense, 3 x touched square): no solve over the whole factor per DOF
    // (the verb's inverseTrailing).
    double* xtt = sized(xtt_, (size_t)nt * nt);
    if (nt > 0) factorK_.inverseTrailing(ex, 3 * first, xtt);
    double *B = sized(B_, (size_t)nt * nh), *Bt = sized(Bt_, (size_t)nt * nh), *G = sized(G_, (size_t)nh * nh);
    // Through K: G_ij = u_i^T X_TT u_j, u_i the row's Jacobian on the touched DOFs. B = X_TT U by
    // columns; G by columns (= rows, G symmetric) from B's rows, through B^T so that both are read
    // and written contiguously.
    ex.forEach(nh, nullptr, nullptr, [=] CS_LAMBDA(int j) {
        touchedRowTimes(v, hard[j], bodyNode, touchedDof, xtt, nt, B + (size_t)nt * j);
    });
    ex.forEach(nt * nh, nullptr, nullptr, [=] CS_LAMBDA(int e) {   // Bt(j, r) = B(r, j)
        const int j = e % nh, r = e / nh;
        Bt[e] = B[(size_t)nt * j + r];
    });
    ex.forEach(nh, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        touchedRowTimes(v, hard[i], bodyNode, touchedDof, Bt, nh, G + (size_t)nh * i);
    });
    // Through W on every other dynamic body: G_ij += J_ib W_b J_jb^T, by body in increasing order
    // (row i's G(i, .), written by its own thread).
    ex.forEach(nh, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        int body[4];
        const Spatial* jac[4];
        const int cols = condensedColumns(v, hard[i], body, jac);
        int own[4], count = 0;   // row i's distinct bodies with entries, increasing
        for (int c = 0; c < cols; ++c) {
            const int b = body[c];
            if (b < 0 || entryStart[b] == entryStart[b + 1]) continue;
            bool seen = false;
            for (int k = 0; k < count; ++k) seen = seen || own[k] == b;
            if (seen) continue;
            int at = count++;
            for (; at > 0 && own[at - 1] > b; --at) own[at] = own[at - 1];
            own[at] = b;
        }
        for (int k = 0; k < count; ++k) {
            const int lo = entryStart[own[k]], hi = entryStart[own[k] + 1];
            for (int e = lo; e < hi; ++e) {
                if (entries[2 * e] != i) continue;
                const Spatial& Ji = *jac[entries[2 * e + 1]];
                for (int f = lo; f < hi; ++f) {
                    const int j = entries[2 * f];
                    G[i + (size_t)nh * j] += double(dot(Ji, condensedInvMassColumn(v, hard[j], entries[2 * f + 1])));
                }
            }
        }
    });
    ex.sync();   // the timing below waits for the work
    stats_.hardSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return true;
}

template <class Exec>
bool CondensedSolve<Exec>::solve(Exec& ex, const CondensedInput& in, const Real* compliance, const Real* b,
                                 Real* fixed, Real* step) {
    const RowSystemView v = in.sys;
    const int dofs = L_.dofs(), nh = (int)L_.hard.size(), ns = (int)L_.soft.size(), nt = L_.touchedDofs();
    const int linear = (int)L_.linearIndex.size();
    const int *soft = soft_.data(), *hard = hard_.data(), *bodyNode = bodyNode_.data();
    const int* linearIndex = linearIndex_.data();
    const double* invD = invD_.data();
    // J_i x over row i's K nodes (x over K's DOFs).
    auto gatherK = [=] CS_LAMBDA(int i, const double* x) {
        int body[4];
        const Spatial* jac[4];
        const int cols = condensedColumns(v, i, body, jac);
        double y = 0;
        for (int c = 0; c < cols; ++c) {
            if (body[c] < 0 || bodyNode[body[c]] < 0) continue;
            const int q = 3 * bodyNode[body[c]];
            for (int k = 0; k < 3; ++k) y += double(jac[c]->lin[k]) * x[q + k];
        }
        return y;
    };
    // x += J_i^T s over row i's K nodes.
    auto scatterK = [=] CS_LAMBDA(int i, double s, double* x) {
        int body[4];
        const Spatial* jac[4];
        const int cols = condensedColumns(v, i, body, jac);
        for (int c = 0; c < cols; ++c) {
            if (body[c] < 0 || bodyNode[body[c]] < 0) continue;
            const int q = 3 * bodyNode[body[c]];
            for (int k = 0; k < 3; ++k) x[q + k] += double(jac[c]->lin[k]) * s;
        }
    };
    // 1. y = K^-1 J_S^T D_S^-1 r_S
    double *f = sized(f_, dofs), *y = sized(y_, dofs), *za = sized(za_, dofs), *zb = sized(zb_, dofs);
    ex.forEach(dofs, nullptr, nullptr, [=] CS_LAMBDA(int k) { f[k] = 0; });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        for (int s = 0; s < ns; ++s) scatterK(soft[s], double(b[soft[s]]) * invD[soft[s]], f);
    });
    if (!solveK(ex, f, y)) return false;
    // 2. (G + D_H) dlambda_H = r_H - J_H y
    ex.forEach(dofs, nullptr, nullptr, [=] CS_LAMBDA(int k) { za[k] = zb[k] = 0; });
    if (nh > 0) {
        double *rhsH = sized(rhsH_, nh), *lambdaH = sized(lambdaH_, nh), *A = sized(A_, (size_t)nh * nh);
        double *a = sized(a_, nh), *bStep = sized(bStep_, nh);
        const double* G = G_.data();
        ex.forEach(nh, nullptr, nullptr, [=] CS_LAMBDA(int j) { rhsH[j] = double(b[hard[j]]) - gatherK(hard[j], y); });
        ex.forEach(nh * nh, nullptr, nullptr, [=] CS_LAMBDA(int e) { A[e] = G[e]; });
        ex.forEach(nh, nullptr, nullptr,
                   [=] CS_LAMBDA(int j) { A[j + (size_t)nh * j] += double(compliance[hard[j]]); });
        llt_.factor(ex, nh, A, status_.data());
        if (!readStatus(ex)) return false;
        llt_.solve(ex, rhsH, lambdaH, 1);
        // The damped step: the non-smooth hard rows (contacts, force-limited rows) move by
        // t dlambda; the linear ones (attachments, joints) take the values that solve their own
        // equations given that, a + t b: a = A_LL^-1 rhs_L, b = dlambda_L - a. So, as for S, only
        // the non-smooth rows feel the damping.
        ex.forEach(nh, nullptr, nullptr, [=] CS_LAMBDA(int j) {
            a[j] = linear == nh ? lambdaH[j] : 0.0;
            bStep[j] = linear == nh ? 0.0 : lambdaH[j];
        });
        if (linear > 0 && linear < nh) {
            double *All = sized(All_, (size_t)linear * linear), *rhsL = sized(rhsL_, linear);
            double* solutionL = sized(solutionL_, linear);
            ex.forEach(linear * linear, nullptr, nullptr, [=] CS_LAMBDA(int e) {
                const int p = e % linear, q = e / linear;
                All[e] = A[linearIndex[p] + (size_t)nh * linearIndex[q]];
            });
            ex.forEach(linear, nullptr, nullptr, [=] CS_LAMBDA(int p) { rhsL[p] = rhsH[linearIndex[p]]; });
            lltLinear_.factor(ex, linear, All, status_.data());
            if (!readStatus(ex)) return false;
            lltLinear_.solve(ex, rhsL, solutionL, 1);
            ex.forEach(linear, nullptr, nullptr, [=] CS_LAMBDA(int p) {
                const int j = linearIndex[p];
                a[j] = solutionL[p];
                bStep[j] = lambdaH[j] - solutionL[p];
            });
        }
        // 3. z = K^-1 J_H^T dlambda_H over K's DOFs (one solve with the factor each for a and b)
        if (nt > 0) {
            double *fa = sized(fa_, dofs), *fb = sized(fb_, dofs);
            ex.forEach(dofs, nullptr, nullptr, [=] CS_LAMBDA(int k) { fa[k] = fb[k] = 0; });
            ex.serial(nullptr, [=] CS_LAMBDA() {
                for (int j = 0; j < nh; ++j) {
                    scatterK(hard[j], a[j], fa);
                    scatterK(hard[j], bStep[j], fb);
                }
            });
            if (anyNonZero(ex, a, nh, hostCheck_)) factorK_.solve(ex, fa, za, 1);
            if (anyNonZero(ex, bStep, nh, hostCheck_)) factorK_.solve(ex, fb, zb, 1);
        }
        ex.forEach(nh, nullptr, nullptr, [=] CS_LAMBDA(int j) {
            fixed[hard[j]] = Real(a[j]);
            step[hard[j]] = Real(bStep[j]);
        });
    }
    // 4. dlambda_S(t) = D_S^-1 (r_S - J_S (y + z_a)) - t D_S^-1 J_S z_b
    ex.forEach(dofs, nullptr, nullptr, [=] CS_LAMBDA(int k) { y[k] += za[k]; });
    ex.forEach(ns, nullptr, nullptr, [=] CS_LAMBDA(int s) {
        const int i = soft[s];
        fixed[i] = Real((double(b[i]) - gatherK(i, y)) * invD[i]);
        step[i] = Real(-gatherK(i, zb) * invD[i]);
    });
    return true;
}

template <class Exec>
bool CondensedSolve<Exec>::solveK(Exec& ex, const double* f, double* y) {
    factorK_.solve(ex, f, y, 1);
    if (!stale_) return true;
    const int dofs = L_.dofs();
    double *r = sized(refineR_, dofs), *d = sized(refineD_, dofs);
    const double* val = values_.data();
    const int *colStart = colStart_.data(), *rowIndex = rowIndex_.data();
    // r = f - K y over K's stored lower triangle (its diagonal 3 x 3 blocks are stored whole).
    auto residual = [=] CS_LAMBDA() {
        for (int i = 0; i < dofs; ++i) r[i] = f[i];
        for (int j = 0; j < dofs; ++j)
            for (int e = colStart[j]; e < colStart[j + 1]; ++e) {
                const int i = rowIndex[e];
                if (i < j) continue;
                r[i] -= val[e] * y[j];
                if (i != j) r[j] -= val[e] * y[i];
            }
    };
    const double fNorm = hostNorm(ex, f, dofs, hostCheck_);
    for (int k = 0;; ++k) {
        ex.serial(nullptr, residual);
        if (hostNorm(ex, r, dofs, hostCheck_) <= kRefineTolerance * fNorm) return true;
        if (k == kMaxRefine) break;
        factorK_.solve(ex, r, d, 1);
        ex.forEach(dofs, nullptr, nullptr, [=] CS_LAMBDA(int i) { y[i] += d[i]; });
    }
    // Not converged: this step's K, factored.
    if (!factorThisK(ex, val)) return false;
    factorK_.solve(ex, f, y, 1);
    return true;
}

}  // namespace cs
