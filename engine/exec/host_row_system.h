// The host executor's kernels for the solve's two hot operations on the pipeline's rows, the
// scatter w = H^-1 J^T x and the product A x = J w + C x with its dot product (pipeline_solve.h
// recordScatter, recordProduct), written as the CPU's linear solvers run them
// (linear_solvers.cpp scatterAll by runs, gatherAll by runs over J's columns: row_columns.h).
//
// The generic stages are written for one thread per body and per row: the scatter walks each
// body's sorted entries (which need a sort of every row's body keys per step) and the gather
// reads each row's Jacobians and its bodies' w row by row. On the host the same sums are cheaper
// in row order: each run of rows on the same bodies (runHead) sums its H^-1 J^T x_i in registers
// and adds the sum to its bodies' w once; the gather loads a run's w once and computes the run's
// rows from J stored by columns, a loop the compiler vectorizes across rows. The bits are the
// generic stages' (so the CPU backend's, tests/test_exec_parity.cpp):
//  - each body's w is 0 + run sum + run sum ... in row order, each run's sum in row order, static
//    bodies (inverse mass 0) left at zero: gatherBodyImpulseRuns (step_hd.h);
//  - each row's (A x)_i is C_i x_i + J_A . w_A + J_B . w_B (+ C, D), dot = (x x + y y) + z z per
//    half: systemRowProduct; the build has -ffp-contract=off, so vector and scalar code round alike;
//  - the dot product is HostExecutor::sum's SumOrder{kCpuSumBlocks, runHead}: kCpuSumBlocks fixed
//    blocks, within a block each run (cut at the block's edges) summed from zero and added to the
//    block's sum in order, the block sums added in block order.
#pragma once

#include <algorithm>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/solver/row_columns.h"
#include "engine/solver/row_system.h"

namespace cs {

// f(i) for i < n, on OpenMP's threads when `parallel`. A serial loop does not enter a parallel
// region at all: an OpenMP region made serial by an if clause still sets up a team (a malloc, a
// free and futex calls per region), about a microsecond, which the pipeline's hundred-odd stage
// calls per step turned into most of a small scene's step (box_on_plane: 24 futex calls a step).
template <class F>
void hostLoop(int n, bool parallel, const F& f) {
    if (parallel) {
#pragma omp parallel for
        for (int i = 0; i < n; ++i) f(i);
    } else {
        for (int i = 0; i < n; ++i) f(i);
    }
}

class HostRowSystem {
public:
    // The rows [0, n) of the step's system: their runs from runHead (1 where a run starts). J's
    // columns are filled at the first product (a step that meets the tolerance at once needs none).
    void prepare(const int* runHead, int n) {
        rows_ = n;
        runStart_.clear();
        for (int i = 0; i < n; ++i)
            if (runHead[i]) runStart_.push_back(i);
        runStart_.push_back(n);
        runOf_.resize(n);
        for (int k = 0; k + 1 < (int)runStart_.size(); ++k)
            for (int i = runStart_[k]; i < runStart_[k + 1]; ++i) runOf_[i] = k;
        columnsReady_ = false;
    }

    // w = H^-1 J^T x over `bodies` bodies.
    void scatter(const RowSystemView& s, int bodies, const Real* x, Spatial* w) const {
        const Spatial zero{{0, 0, 0}, {0, 0, 0}};
        std::fill(w, w + bodies, zero);
        const int runs = (int)runStart_.size() - 1;
        for (int k = 0; k < runs; ++k) {
            const int begin = runStart_[k], end = runStart_[k + 1];
            addRunPair(s.bodyA[begin], s.bodyB[begin], s, s.invMassJacobianA, s.invMassJacobianB, begin, end, x, w);
            if (!s.bodyC) continue;   // four-body rows (FEM)
            addRunPair(s.bodyC[begin], s.bodyD[begin], s, s.invMassJacobianC, s.invMassJacobianD, begin, end, x, w);
        }
    }

    // y = A x (b null) or y = b - A x, with w = H^-1 J^T x; returns y . v (v null: y . y).
    Real product(const RowSystemView& s, const Spatial* w, const Real* x, const Real* b, Real* y, const Real* v) {
        if (!s.bodyC && !columnsReady_) fillColumns(s);
        const int n = rows_;
        Real partial[kCpuSumBlocks];
        hostLoop(kCpuSumBlocks, n > 2048, [&](int k) {
            const int begin = int((long long)n * k / kCpuSumBlocks), end = int((long long)n * (k + 1) / kCpuSumBlocks);
            Real block = 0;
            for (int i = begin; i < end;) {
                const int stop = std::min(end, runStart_[runOf_[i] + 1]);
                block = block + span(s, i, stop, w, x, b, y, v);
                i = stop;
            }
            partial[k] = block;
        });
        Real total = 0;
        for (int k = 0; k < kCpuSumBlocks; ++k) total = total + partial[k];
        return total;
    }

private:
    // w_a += sum over the run's rows of x_i H^-1 J_{i,a}^T, and w_b the same, for the dynamic ones
    // only (the generic scatter's); both sums in one pass over the rows, each in row order.
    static void addRunPair(int a, int b, const RowSystemView& s, const Spatial* minvJa, const Spatial* minvJb,
                           int begin, int end, const Real* x, Spatial* w) {
        const bool toA = a >= 0 && s.invMass[a] > Real(0), toB = b >= 0 && s.invMass[b] > Real(0);
        if (!toA && !toB) return;
        Spatial runA{{0, 0, 0}, {0, 0, 0}}, runB = runA;
        if (toA && toB) {
            for (int i = begin; i < end; ++i) {
                runA = runA + x[i] * minvJa[i];
                runB = runB + x[i] * minvJb[i];
            }
        } else {
            const Spatial* minvJ = toA ? minvJa : minvJb;
            Spatial& run = toA ? runA : runB;
            for (int i = begin; i < end; ++i) run = run + x[i] * minvJ[i];
        }
        if (toA) w[a] = w[a] + runA;
        if (toB) w[b] = w[b] + runB;
    }

    void fillColumns(const RowSystemView& s) {
        columns_.resize(12 * size_t(rows_));
        fillJacobianColumns(s.jacobianA, s.jacobianB, size_t(rows_), columns_.data());
        columnsReady_ = true;
    }

    // Rows [begin, end) of one run: y_i, and the span's sum of y_i v_i from zero.
    Real span(const RowSystemView& s, int begin, int end, const Spatial* w, const Real* x, const Real* b, Real* y,
              const Real* v) const {
        if (s.bodyC) {   // four-body rows: row by row (systemRowProduct)
            Real sum = 0;
            for (int i = begin; i < end; ++i) {
                Real ax = s.compliance[i] * x[i];
                if (s.bodyA[i] >= 0) ax += dot(s.jacobianA[i], w[s.bodyA[i]]);
                if (s.bodyB[i] >= 0) ax += dot(s.jacobianB[i], w[s.bodyB[i]]);
                if (s.bodyC[i] >= 0) ax += dot(s.jacobianC[i], w[s.bodyC[i]]);
                if (s.bodyD[i] >= 0) ax += dot(s.jacobianD[i], w[s.bodyD[i]]);
                const Real yi = b ? b[i] - ax : ax;
                y[i] = yi;
                sum += yi * (v ? v[i] : yi);
            }
            return sum;
        }
        const int a = s.bodyA[begin], c = s.bodyB[begin];   // one run: the same two bodies
        const Real* col = columns_.data();
        const size_t n = rows_;
        if (b) return v ? gatherColumns<true, true>(col, n, s.compliance, begin, end, a, c, w, x, b, y, v)
                        : gatherColumns<true, false>(col, n, s.compliance, begin, end, a, c, w, x, b, y, v);
        return v ? gatherColumns<false, true>(col, n, s.compliance, begin, end, a, c, w, x, b, y, v)
                 : gatherColumns<false, false>(col, n, s.compliance, begin, end, a, c, w, x, b, y, v);
    }

    int rows_ = 0;
    std::vector<int> runStart_;   // (runs + 1) the first row of each run, then rows_
    std::vector<int> runOf_;      // (rows) the run of each row
    std::vector<Real> columns_;   // (12 rows) J_A's lin x, y, z, ang x, y, z, then J_B's, by columns
    bool columnsReady_ = false;
};

}  // namespace cs
