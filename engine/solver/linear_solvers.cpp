// Jacobi, Gauss-Seidel, PCG and PCR on the matrix-free Schur complement A = J H^-1 J^T + C of
// row_system.h ([NSN] eq. 59), behind solveLinear's one signature ([NSN] section 8.2, fig. 11).
//
// Threading and determinism. Every per-row and per-body loop is an OpenMP loop that only runs
// in parallel above kParallelRows elements (below that the fork costs more than the work).
// Results never depend on the thread count:
//  - per-row loops (gather, vector updates) write disjoint entries;
//  - dot products sum fixed blocks (the split depends on n only) and then add the partial sums
//    in block order, instead of OpenMP reductions whose combining order is unspecified;
//  - the scatter w_b = sum_i H_b^-1 J_{i,b}^T x_i would race if run per row in parallel (two
//    rows on one body). With a colouring (rows of one colour share no body) it runs colour by
//    colour, each colour in parallel, so every w_b is summed in colour order; without one it
//    runs serially in row order. No float atomics anywhere.
// Scratch vectors only grow, so a solve in steady state allocates nothing (residualHistory is
// the caller's: it is cleared and appended to, which allocates only beyond its capacity).
#include "engine/solver/linear_solvers.h"

#include "engine/solver/krylov_passes.h"
#include "engine/solver/krylov_steps_hd.h"
#include "engine/solver/row_columns.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace cs {
namespace {

constexpr int kParallelRows = 2048;  // smallest loop worth an OpenMP fork
constexpr int kBlocks = 64;          // fixed partition of every reduction (determinism)

template <class T>
void ensureSize(std::vector<T>& v, int n) {
    if (v.size() < size_t(n)) v.resize(size_t(n));
}

// Runs body(begin, end, sums) over kBlocks fixed blocks of [0, n), in parallel when n is large,
// and returns in total[] the blocks' N partial sums added in block order. The split depends on
// n only, so the bits do not depend on the thread count. Loops that also reduce go through
// here, fused with the reduction: each vector is read once per pass.
template <int N, class Body>
void blockedSums(int n, Real (&total)[N], Body body) {
    Real partial[kBlocks][N];
#pragma omp parallel for if (n > kParallelRows)
    for (int k = 0; k < kBlocks; ++k) {
        for (int j = 0; j < N; ++j) partial[k][j] = 0;
        body(int((long long)n * k / kBlocks), int((long long)n * (k + 1) / kBlocks), partial[k]);
    }
    for (int j = 0; j < N; ++j) {
        total[j] = 0;
        for (int k = 0; k < kBlocks; ++k) total[j] += partial[k][j];
    }
}

Real dotProduct(const Real* a, const Real* b, int n) {
    Real sum[1];
    blockedSums(n, sum, [&](int begin, int end, Real* acc) {
        Real sum = 0;
        for (int i = begin; i < end; ++i) sum += a[i] * b[i];
        acc[0] = sum;
    });
    return sum[0];
}

// A colouring must list every row exactly once (colourRows a permutation of 0..rowCount-1):
// rows left out would be missing from the scatter and from the Gauss-Seidel sweep.
bool hasColours(const RowSystemView& s) {
    return s.colourCount > 0 && s.colourStart != nullptr && s.colourRows != nullptr;
}

bool hasRuns(const RowSystemView& s) { return s.runCount > 0 && s.runStart != nullptr; }

// Sum over rows [begin, end) of one run of H^-1 J_i^T x_i for the run's two bodies, kept in
// registers: w is then read and written once per run rather than once per row (row by row,
// each update waits for the previous store to the same body).
void scatterRun(const RowSystemView& s, int begin, int end, const Real* x, Spatial* w) {
    const int a = s.bodyA[begin], b = s.bodyB[begin];
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    Spatial sa = zero, sb = zero;
    if (s.invMassJacobianA && s.invMassJacobianB) {
        for (int i = begin; i < end; ++i) {
            sa = sa + x[i] * s.invMassJacobianA[i];
            sb = sb + x[i] * s.invMassJacobianB[i];
        }
    } else {
        for (int i = begin; i < end; ++i) {
            if (a >= 0) sa = sa + x[i] * applyInvMass(s, a, s.jacobianA[i]);
            if (b >= 0) sb = sb + x[i] * applyInvMass(s, b, s.jacobianB[i]);
        }
    }
    if (a >= 0) w[a] = w[a] + sa;
    if (b >= 0) w[b] = w[b] + sb;
    if (!s.bodyC) return;
    const int c = s.bodyC[begin], d = s.bodyD[begin];
    if (c < 0 && d < 0) return;
    Spatial sc = zero, sd = zero;
    for (int i = begin; i < end; ++i) {
        if (c >= 0) sc = sc + x[i] * (s.invMassJacobianC ? s.invMassJacobianC[i] : applyInvMass(s, c, s.jacobianC[i]));
        if (d >= 0) sd = sd + x[i] * (s.invMassJacobianD ? s.invMassJacobianD[i] : applyInvMass(s, d, s.jacobianD[i]));
    }
    if (c >= 0) w[c] = w[c] + sc;
    if (d >= 0) w[d] = w[d] + sd;
}

// w = H^-1 J^T x (the scatter half of A x, row_system.h).
void scatterAll(const RowSystemView& s, const Real* x, Spatial* w) {
    const int bodies = s.bodyCount;
#pragma omp parallel for if (bodies > kParallelRows)
    for (int b = 0; b < bodies; ++b) w[b] = Spatial{{0, 0, 0}, {0, 0, 0}};
    if (hasColours(s)) {
        for (int c = 0; c < s.colourCount; ++c) {
            const int begin = s.colourStart[c], end = s.colourStart[c + 1];
#pragma omp parallel for if (end - begin > kParallelRows && c != s.serialColour)
            for (int k = begin; k < end; ++k) {
                int row = s.colourRows[k];
                scatterRow(s, row, x[row], w);
            }
        }
    } else if (hasRuns(s)) {
        for (int k = 0; k < s.runCount; ++k) scatterRun(s, s.runStart[k], s.runStart[k + 1], x, w);
    } else {
        for (int i = 0; i < s.rowCount; ++i) scatterRow(s, i, x[i], w);
    }
}

// y_i = J_i w + C_i x_i (or b_i minus that) over rows [begin, end) that act on bodies a and b,
// whose w is loaded once; returns the block's y . v (y . y without v).
template <bool HasB, bool HasV>
Real gatherSpan(const RowSystemView& s, int begin, int end, int a, int b, const Spatial* w, const Real* x,
                const Real* rhs, Real* y, const Real* v) {
    Real sum = 0;
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    const Spatial wa = a >= 0 ? w[a] : zero, wb = b >= 0 ? w[b] : zero;
    const int c = s.bodyC ? s.bodyC[begin] : -1, d = s.bodyC ? s.bodyD[begin] : -1;
    const Spatial wc = c >= 0 ? w[c] : zero, wd = d >= 0 ? w[d] : zero;
    // Local restrict pointers: through s, every store to y might have changed the view's
    // pointers, which were reloaded for every row.
    const Real* __restrict compliance = s.compliance;
    const Spatial* __restrict ja = s.jacobianA;
    const Spatial* __restrict jb = s.jacobianB;
    const Spatial* __restrict jc = s.jacobianC;
    const Spatial* __restrict jd = s.jacobianD;
    Real* __restrict out = y;
    for (int i = begin; i < end; ++i) {
        Real ax = compliance[i] * x[i];
        if (a >= 0) ax += dot(ja[i], wa);
        if (b >= 0) ax += dot(jb[i], wb);
        if (c >= 0) ax += dot(jc[i], wc);
        if (d >= 0) ax += dot(jd[i], wd);
        Real yi = HasB ? rhs[i] - ax : ax;
        out[i] = yi;
        sum += yi * (HasV ? v[i] : yi);
    }
    return sum;
}

template <bool HasB, bool HasV>
Real gatherBlock(const RowSystemView& s, int begin, int end, const Spatial* w, const Real* x, const Real* rhs,
                 Real* y, const Real* v) {
    Real sum = 0;
    if (!hasRuns(s)) {
        for (int i = begin; i < end; ++i)
            sum += gatherSpan<HasB, HasV>(s, i, i + 1, s.bodyA[i], s.bodyB[i], w, x, rhs, y, v);
        return sum;
    }
    // The run holding row `begin`, then run by run (a run may straddle the block's edges).
    int k = int(std::upper_bound(s.runStart, s.runStart + s.runCount + 1, begin) - s.runStart) - 1;
    const bool columns = s.jacobianColumns && !s.bodyC;
    for (int i = begin; i < end; ++k) {
        const int stop = std::min(end, s.runStart[k + 1]);
        sum += columns ? gatherColumns<HasB, HasV>(s.jacobianColumns, size_t(s.rowCount), s.compliance, i, stop,
                                                   s.bodyA[i], s.bodyB[i], w, x, rhs, y, v)   // row_columns.h
                       : gatherSpan<HasB, HasV>(s, i, stop, s.bodyA[i], s.bodyB[i], w, x, rhs, y, v);
        i = stop;
    }
    return sum;
}

// The gather half: y = J w + C x, or with b given y = b - (J w + C x). Returns y . v, or
// y . y when v is null (the residual's squared norm, or p^T A p).
Real gatherAll(const RowSystemView& s, const Spatial* w, const Real* x, const Real* b, Real* y,
               const Real* v) {
    Real sum[1];
    blockedSums(s.rowCount, sum, [&](int begin, int end, Real* acc) {
        acc[0] = b ? (v ? gatherBlock<true, true>(s, begin, end, w, x, b, y, v)
                        : gatherBlock<true, false>(s, begin, end, w, x, b, y, v))
                   : (v ? gatherBlock<false, true>(s, begin, end, w, x, b, y, v)
                        : gatherBlock<false, false>(s, begin, end, w, x, b, y, v));
    });
    return sum[0];
}

// r = b, returning b . b (the residual of x = 0).
Real gatherZero(const RowSystemView& s, const Real* b, Real* r) {
    Real sum[1];
    blockedSums(s.rowCount, sum, [&](int begin, int end, Real* acc) {
        Real total = 0;
        for (int i = begin; i < end; ++i) {
            r[i] = b[i];
            total += b[i] * b[i];
        }
        acc[0] = total;
    });
    return sum[0];
}

// ||b - A x||^2 into r (w is left as H^-1 J^T x).
Real computeResidual(const RowSystemView& s, const Real* b, const Real* x, Real* r, Spatial* w) {
    // A zero start (every Newton iteration's) needs no product: r = b. The check costs one
    // pass over x, the product two over the rows' Jacobians.
    bool zero = true;
    for (int i = 0; i < s.rowCount && zero; ++i) zero = x[i] == Real(0);
    if (zero) {
        for (int body = 0; body < s.bodyCount; ++body) w[body] = Spatial{{0, 0, 0}, {0, 0, 0}};
        return gatherZero(s, b, r);
    }
    scatterAll(s, x, w);
    return gatherAll(s, w, x, b, r, nullptr);
}

// invDiag_i = 1 / A_ii, or 0 for an empty row (A_ii = 0 means the whole row and column of the
// PSD matrix A vanish: that unknown is left as it is).
void inverseDiagonal(const RowSystemView& s, Real* invDiag) {
    const int n = s.rowCount;
#pragma omp parallel for if (n > kParallelRows)
    for (int i = 0; i < n; ++i) {
        Real d = rowDiagonal(s, i);
        invDiag[i] = d > Real(0) ? Real(1) / d : Real(0);
    }
}

// Residual bookkeeping shared by the four solvers.
struct Monitor {
    Real target = 0;  // stop when ||r|| <= target (tolerance * ||b||); < 0: never
    std::vector<Real>* history = nullptr;
    LinearSolveResult result;

    Monitor(const LinearSolverSettings& settings, Real bNorm, std::vector<Real>* h) : history(h) {
        target = linearTarget(settings.tolerance, bNorm);
        if (history) history->clear();
    }
    void start(Real r) {
        result.initialResidual = result.residual = r;
        if (history) history->push_back(r);
    }
    void step(Real r) {
        ++result.iterations;
        result.residual = r;
        if (history) history->push_back(r);
    }
    // An exactly zero residual ends every solver, even with tolerance 0; so does a non-finite
    // one (a diverging Jacobi with too large an omega): x is then returned as it is.
    bool done() const { return linearDone(result.residual, target); }
};

// Damped Jacobi: x += omega D^-1 (b - A x). Converges iff omega < 2 / lambda_max(D^-1 A).
// Since |A_ij| <= sqrt(A_ii A_jj) (A is PSD), Gershgorin gives lambda_max <= 1 + k, k the most
// rows sharing a body with one row; omega = 0.6 is thus safe for k <= 2 only, and denser
// systems need a smaller omega (a random 10,000-row, 2,000-body system diverges at 0.6; the
// solver then stops on the non-finite residual).
void solveJacobi(const RowSystemView& s, const Real* b, Real* x, const LinearSolverSettings& st,
                 LinearSolverScratch& sc, Monitor& m) {
    const int n = s.rowCount;
    Real *r = sc.r.data(), *invDiag = sc.d.data();
    inverseDiagonal(s, invDiag);
    m.start(std::sqrt(computeResidual(s, b, x, r, sc.w.data())));
    Real omega = st.jacobiOmega;
    if (!(omega > 0)) {
        // Automatic relaxation. Damped Jacobi converges iff omega < 2 / lambda_max(D^-1 A); a fixed
        // omega diverges on rows with many neighbours (the arch, the pyramid). A few power
        // iterations estimate lambda_max from below; omega = 1 / estimate keeps omega lambda_max
        // below 2 unless the estimate is off by more than a factor 2 (8 iterations from the ones
        // vector on contact systems: within a few percent, measured on the library scenes).
        Real* v = sc.z.data();
        Real* av = sc.q.data();
        for (int i = 0; i < n; ++i) v[i] = 1;
        Real lambda = 1;
        for (int k = 0; k < 8; ++k) {
            scatterAll(s, v, sc.w.data());
            gatherAll(s, sc.w.data(), v, nullptr, av, nullptr);
            Real norm = 0;
            for (int i = 0; i < n; ++i) {
                av[i] *= invDiag[i];
                norm = std::fmax(norm, std::fabs(av[i]));
            }
            if (!(norm > 0)) break;
            lambda = norm;   // infinity-norm ratio, v normalized to max |v_i| = 1
            for (int i = 0; i < n; ++i) v[i] = av[i] / norm;
        }
        omega = Real(1) / lambda;
    }
    for (int it = 0; it < st.maxIterations && !m.done(); ++it) {
#pragma omp parallel for if (n > kParallelRows)
        for (int i = 0; i < n; ++i) x[i] += omega * invDiag[i] * r[i];
        m.step(std::sqrt(computeResidual(s, b, x, r, sc.w.data())));
    }
}

// One Gauss-Seidel row update with w = H^-1 J^T x kept current:
//     dx_i = (b_i - J_i w - C_i x_i) / A_ii,  x_i += dx_i,  w += H^-1 J_i^T dx_i.
inline void gaussSeidelRow(const RowSystemView& s, int i, const Real* b, Real* x,
                           const Real* invDiag, Spatial* w) {
    Real dx = (b[i] - gatherRow(s, i, w) - s.compliance[i] * x[i]) * invDiag[i];
    x[i] += dx;
    scatterRow(s, i, dx, w);
}

// Gauss-Seidel, matrix-free. With a colouring the sweep goes colour by colour and each colour
// in parallel (its rows touch disjoint bodies, so the row updates commute): this is the exact
// sequential sweep in colourRows order. Without one, a plain sweep in row order.
void solveGaussSeidel(const RowSystemView& s, const Real* b, Real* x,
                      const LinearSolverSettings& st, LinearSolverScratch& sc, Monitor& m) {
    const int n = s.rowCount;
    Real *r = sc.r.data(), *invDiag = sc.d.data();
    Spatial* w = sc.w.data();
    inverseDiagonal(s, invDiag);
    m.start(std::sqrt(computeResidual(s, b, x, r, w)));
    for (int it = 0; it < st.maxIterations && !m.done(); ++it) {
        if (hasColours(s)) {
            for (int c = 0; c < s.colourCount; ++c) {
                const int begin = s.colourStart[c], end = s.colourStart[c + 1];
#pragma omp parallel for if (end - begin > kParallelRows && c != s.serialColour)
                for (int k = begin; k < end; ++k) gaussSeidelRow(s, s.colourRows[k], b, x, invDiag, w);
            }
        } else {
            for (int i = 0; i < n; ++i) gaussSeidelRow(s, i, b, x, invDiag, w);
        }
        // w is current after the sweep (up to the rounding of its updates): the residual needs
        // only the gather.
        m.step(std::sqrt(gatherAll(s, w, x, b, r, nullptr)));
    }
}

// Preconditioned conjugate gradient, M = diag(A) or the block diagonal of A over the runs
// (block_preconditioner_hd.h; Saad 2003, algorithm 9.1).
// CG's residual is not monotone ([NSN] 8.2), and on a singular system rounding leaves a part of
// r outside range(A) once the rest has converged: the iteration then drifts along the null space
// and the residual grows without bound (seen on redundant box contacts: 1e-15 relative, then 1e3
// within 100 iterations). So PCG keeps the best iterate in scratch.q, stops once the residual
// exceeds kPcgGrowth times the best one, and returns the best iterate (result.residual is its
// residual; the history keeps every iterate's). The scalar steps are krylov_steps_hd.h's.

void solvePCG(const RowSystemView& s, const Real* b, Real* x, const LinearSolverSettings& st,
              LinearSolverScratch& sc, Monitor& m, const BlockPreconditionerView* block) {
    const int n = s.rowCount;
    Real *r = sc.r.data(), *z = sc.z.data(), *p = sc.p.data(), *ap = sc.Ap.data();
    Real *invDiag = sc.d.data(), *best = sc.q.data();
    Spatial* w = sc.w.data();
    inverseDiagonal(s, invDiag);
    m.start(std::sqrt(computeResidual(s, b, x, r, w)));
    Real rz[1];
    blockedSums(n, rz, [&](int begin, int end, Real* acc) {
        Real sum = 0;
        for (int i = begin; i < end; ++i) {
            Real zi = block ? applyBlockRow(*block, i, r) : invDiag[i] * r[i];
            p[i] = z[i] = zi;
            best[i] = x[i];
            sum += r[i] * zi;
        }
        acc[0] = sum;
    });
    Real bestResidual = m.result.residual;
    for (int it = 0; it < st.maxIterations && !m.done(); ++it) {
        scatterAll(s, p, w);
        Real pap = gatherAll(s, w, p, nullptr, ap, p);
        // p^T A p = 0 with r != 0 cannot happen for a consistent PSD system in exact arithmetic;
        // numerically it means r is at rounding level: stop (also on NaN).
        Real alpha;
        if (!pcgStepLength(pap, rz[0], alpha)) break;
        Real sums[2];  // r.r, r.z
        if (block) {   // z = M^-1 r needs every r_j of the row's block: a pass of its own
            Real rr[1], rz[1];
            blockedSums(n, rr, [&](int begin, int end, Real* acc) {
                Real sum = 0;
                for (int i = begin; i < end; ++i) {
                    x[i] += alpha * p[i];
                    r[i] -= alpha * ap[i];
                    sum += r[i] * r[i];
                }
                acc[0] = sum;
            });
            blockedSums(n, rz, [&](int begin, int end, Real* acc) {
                Real sum = 0;
                for (int i = begin; i < end; ++i) {
                    z[i] = applyBlockRow(*block, i, r);
                    sum += r[i] * z[i];
                }
                acc[0] = sum;
            });
            sums[0] = rr[0];
            sums[1] = rz[0];
        } else blockedSums(n, sums, [&](int begin, int end, Real* acc) {
            Real rr = 0, rz = 0;
            for (int i = begin; i < end; ++i) {
                x[i] += alpha * p[i];
                Real ri = r[i] - alpha * ap[i];
                Real zi = invDiag[i] * ri;
                r[i] = ri;
                z[i] = zi;
                rr += ri * ri;
                rz += ri * zi;
            }
            acc[0] = rr;
            acc[1] = rz;
        });
        m.step(std::sqrt(sums[0]));
        const int better = pcgTrackBest(m.result.residual, bestResidual);
        if (better < 0) break;
        if (better > 0) {
#pragma omp parallel for if (n > kParallelRows)
            for (int i = 0; i < n; ++i) best[i] = x[i];
        }
        const Real beta = sums[1] / rz[0];
        rz[0] = sums[1];
#pragma omp parallel for if (n > kParallelRows)
        for (int i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
    }
    if (bestResidual < m.result.residual) {
#pragma omp parallel for if (n > kParallelRows)
        for (int i = 0; i < n; ++i) x[i] = best[i];
        m.result.residual = bestResidual;
    }
}

// Preconditioned conjugate residual with the left preconditioner M = diag(A), or M = the block
// diagonal of A over the runs (block_preconditioner_hd.h; then q . Ap = Ap^T M^-1 Ap >= 0 holds
// up to rounding, and the same guards stop the solve where it does not): CR
// (Saad 2003, section 6.8) on M^-1 A x = M^-1 b in the M inner product. Each iteration
// minimizes the preconditioned residual norm ||r||_{M^-1} = sqrt(r^T M^-1 r) over the Krylov
// space ([NSN] eq. 69), so that norm never increases; the 2-norm recorded in the history need
// not be monotone. Vectors: z = M^-1 r, Az = A z, Ap = A p, q = M^-1 A p.
//
// Robustness on singular PSD systems with a consistent b (redundant contacts, [NSN] 8.2):
//  - the step is the exact line minimizer along p, alpha = (q . r) / (q . Ap), of
//    ||r - alpha Ap||_{M^-1}^2 = ||r||^2 - 2 alpha q.r + alpha^2 q.Ap. In exact arithmetic it
//    equals Saad's (z . Az) / (q . Ap); written this way the preconditioned norm cannot grow
//    even when rounding has spoilt the conjugacy of p;
//  - q . Ap = sum_i Ap_i^2 / A_ii >= 0 exactly; it is zero only for Ap = 0 (p in the null
//    space): nothing more can be gained along p, so the solve stops with x as it is; it also
//    stops once the predicted decrease (q.r)^2 / (q.Ap) is below rounding of ||r||_{M^-1}^2;
//  - beta = (z.Az)_new / (z.Az)_old needs both positive; otherwise (rounding noise once the
//    residual is at machine level) p restarts from z (beta = 0).
// Passes per iteration: scatter and gather of z (fused with z . Az), one update of p, Ap and q
// (fused with q . Ap and q . r), one update of x, r and z (fused with r . r).
void solvePCR(const RowSystemView& s, const Real* b, Real* x, const LinearSolverSettings& st,
              LinearSolverScratch& sc, Monitor& m, const BlockPreconditionerView* block) {
    const int n = s.rowCount;
    Real *r = sc.r.data(), *z = sc.z.data(), *p = sc.p.data(), *q = sc.q.data();
    Real *ap = sc.Ap.data(), *az = sc.Az.data(), *invDiag = sc.d.data();
    Spatial* w = sc.w.data();
    inverseDiagonal(s, invDiag);
    m.start(std::sqrt(computeResidual(s, b, x, r, w)));
    if (m.done()) return;
    Real normSq[1];  // ||r||_{M^-1}^2 = z . r, then updated by the predicted decrease
    blockedSums(n, normSq, [&](int begin, int end, Real* acc) {
        Real sum = 0;
        for (int i = begin; i < end; ++i) {
            z[i] = block ? applyBlockRow(*block, i, r) : invDiag[i] * r[i];
            sum += z[i] * r[i];
        }
        acc[0] = sum;
    });
    scatterAll(s, z, w);
    Real rho = gatherAll(s, w, z, nullptr, az, z);  // z . Az
    Real beta = 0;
    for (int it = 0; it < st.maxIterations && !m.done(); ++it) {
        // p = z + beta p, Ap = Az + beta Ap (the first pass: p = z, Ap = Az), q = M^-1 Ap.
        Real dots[2];  // q . Ap, q . r
        if (block) {   // q = M^-1 Ap needs every Ap_j of the row's block: a pass of its own
            const Real keep = it == 0 ? Real(0) : beta;
#pragma omp parallel for if (n > kParallelRows)
            for (int i = 0; i < n; ++i) {
                p[i] = z[i] + (keep != Real(0) ? keep * p[i] : Real(0));
                ap[i] = az[i] + (keep != Real(0) ? keep * ap[i] : Real(0));
            }
            blockedSums(n, dots, [&](int begin, int end, Real* acc) {
                Real qap = 0, qr = 0;
                for (int i = begin; i < end; ++i) {
                    q[i] = applyBlockRow(*block, i, ap);
                    qap += q[i] * ap[i];
                    qr += q[i] * r[i];
                }
                acc[0] = qap;
                acc[1] = qr;
            });
        } else {
            // beta = 0 on the first pass, and p, Ap are not yet initialized (0 * NaN = NaN).
            const Real keep = it == 0 ? Real(0) : beta;
            blockedSums(n, dots, [=](int begin, int end, Real* acc) {
                pcrDirectionPass(begin, end, keep, z, az, r, invDiag, p, ap, q, acc);
            });
        }
        // The step lowers ||r||_{M^-1}^2 by qr^2 / qap. Once that is below rounding of the norm
        // itself (p lies numerically in the null space, or r is at machine level) nothing more
        // can be gained: stop instead of iterating on noise.
        Real alpha;
        if (!pcrStepLength(dots[0], dots[1], normSq[0], alpha)) break;
        Real rr[1];
        blockedSums(n, rr, [=](int begin, int end, Real* acc) {
            pcrUpdatePass(begin, end, alpha, p, ap, q, x, r, z, acc);
        });
        m.step(std::sqrt(rr[0]));
        if (m.done() || it + 1 == st.maxIterations) break;  // skip the unused A z
        scatterAll(s, z, w);
        Real rhoNext = gatherAll(s, w, z, nullptr, az, z);
        beta = pcrBeta(rho, rhoNext);
        rho = rhoNext;
    }
}

bool equalsIgnoreCase(const char* a, const char* b) {
    for (; *a && *b; ++a, ++b)
        if (std::tolower((unsigned char)*a) != std::tolower((unsigned char)*b)) return false;
    return *a == *b;
}

}  // namespace

void applySystem(const RowSystemView& system, const Real* x, Real* y, LinearSolverScratch& scratch) {
    ensureSize(scratch.w, system.bodyCount);
    scatterAll(system, x, scratch.w.data());
    gatherAll(system, scratch.w.data(), x, nullptr, y, nullptr);
}

void scatterImpulses(const RowSystemView& system, const Real* x, Spatial* w) { scatterAll(system, x, w); }

LinearSolveResult solveLinear(LinearSolverType type, const RowSystemView& system, const Real* b,
                              Real* x, const LinearSolverSettings& settings,
                              LinearSolverScratch& scratch, std::vector<Real>* residualHistory) {
    const int n = system.rowCount;
    ensureSize(scratch.w, system.bodyCount);
    for (std::vector<Real>* v : {&scratch.r, &scratch.z, &scratch.p, &scratch.q, &scratch.Ap,
                                 &scratch.Az, &scratch.d})
        ensureSize(*v, n);
    Monitor monitor(settings, std::sqrt(dotProduct(b, b, n)), residualHistory);
    const bool krylov = type == LinearSolverType::PCG || type == LinearSolverType::PCR;
    BlockPreconditionerView blockView;
    const BlockPreconditionerView* block = nullptr;
    if (krylov && settings.preconditioner == Preconditioner::Block && n > 0) {
        blockView = buildBlockPreconditioner(system, scratch.block);
        block = &blockView;
    }
    switch (type) {
        case LinearSolverType::Jacobi: solveJacobi(system, b, x, settings, scratch, monitor); break;
        case LinearSolverType::GaussSeidel: solveGaussSeidel(system, b, x, settings, scratch, monitor); break;
        case LinearSolverType::PCG: solvePCG(system, b, x, settings, scratch, monitor, block); break;
        case LinearSolverType::PCR: solvePCR(system, b, x, settings, scratch, monitor, block); break;
    }
    return monitor.result;
}

const char* linearSolverName(LinearSolverType type) {
    switch (type) {
        case LinearSolverType::Jacobi: return "jacobi";
        case LinearSolverType::GaussSeidel: return "gs";
        case LinearSolverType::PCG: return "pcg";
        case LinearSolverType::PCR: return "pcr";
    }
    return "unknown";
}

bool parseLinearSolver(const char* name, LinearSolverType& out) {
    if (!name) return false;
    struct Entry { const char* name; LinearSolverType type; };
    static const Entry kEntries[] = {{"jacobi", LinearSolverType::Jacobi},
                                     {"gs", LinearSolverType::GaussSeidel},
                                     {"gauss-seidel", LinearSolverType::GaussSeidel},
                                     {"pcg", LinearSolverType::PCG},
                                     {"pcr", LinearSolverType::PCR}};
    for (const Entry& e : kEntries)
        if (equalsIgnoreCase(name, e.name)) {
            out = e.type;
            return true;
        }
    return false;
}

}  // namespace cs
