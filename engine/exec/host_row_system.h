// The host executor's kernels for the solve's two hot operations on the pipeline's rows, the
// scatter w = H^-1 J^T x and the product A x = J w + C x with its dot product (pipeline_solve.h
// recordScatter, recordProduct), written as the CPU's linear solvers run them
// (linear_solvers.cpp scatterAll by runs, gatherAll by runs over J's columns).
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
#include "engine/solver/row_system.h"

namespace cs {

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
            addRun(s.bodyA[begin], s, s.invMassJacobianA, begin, end, x, w);
            addRun(s.bodyB[begin], s, s.invMassJacobianB, begin, end, x, w);
            if (!s.bodyC) continue;   // four-body rows (FEM)
            addRun(s.bodyC[begin], s, s.invMassJacobianC, begin, end, x, w);
            addRun(s.bodyD[begin], s, s.invMassJacobianD, begin, end, x, w);
        }
    }

    // y = A x (b null) or y = b - A x, with w = H^-1 J^T x; returns y . v (v null: y . y).
    Real product(const RowSystemView& s, const Spatial* w, const Real* x, const Real* b, Real* y, const Real* v) {
        if (!s.bodyC && !columnsReady_) fillColumns(s);
        const int n = rows_;
        Real partial[kCpuSumBlocks];
#pragma omp parallel for if (n > 2048)
        for (int k = 0; k < kCpuSumBlocks; ++k) {
            const int begin = int((long long)n * k / kCpuSumBlocks), end = int((long long)n * (k + 1) / kCpuSumBlocks);
            Real block = 0;
            for (int i = begin; i < end;) {
                const int stop = std::min(end, runStart_[runOf_[i] + 1]);
                block = block + span(s, i, stop, w, x, b, y, v);
                i = stop;
            }
            partial[k] = block;
        }
        Real total = 0;
        for (int k = 0; k < kCpuSumBlocks; ++k) total = total + partial[k];
        return total;
    }

private:
    // w_body += sum over the run's rows of x_i H^-1 J_i^T (a dynamic body only).
    static void addRun(int body, const RowSystemView& s, const Spatial* minvJ, int begin, int end, const Real* x,
                       Spatial* w) {
        if (body < 0 || !(s.invMass[body] > Real(0))) return;   // the generic scatter's dynamic bodies
        Spatial run{{0, 0, 0}, {0, 0, 0}};
        for (int i = begin; i < end; ++i) run = run + x[i] * minvJ[i];
        w[body] = w[body] + run;
    }

    void fillColumns(const RowSystemView& s) {
        const size_t n = rows_;
        columns_.resize(12 * n);
        Real* col = columns_.data();
        for (size_t i = 0; i < n; ++i) {
            const Spatial* j[2] = {&s.jacobianA[i], &s.jacobianB[i]};
            for (int side = 0; side < 2; ++side) {
                const Real values[6] = {j[side]->lin.x, j[side]->lin.y, j[side]->lin.z,
                                        j[side]->ang.x, j[side]->ang.y, j[side]->ang.z};
                for (int k = 0; k < 6; ++k) col[(6 * side + k) * n + i] = values[k];
            }
        }
        columnsReady_ = true;
    }

    // Rows [begin, end) of one run: y_i, and the span's sum of y_i v_i from zero.
    Real span(const RowSystemView& s, int begin, int end, const Spatial* w, const Real* x, const Real* b, Real* y,
              const Real* v) const {
        const Spatial zero{{0, 0, 0}, {0, 0, 0}};
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
        const int a = s.bodyA[begin], c = s.bodyB[begin];
        const Spatial wa = a >= 0 ? w[a] : zero, wb = c >= 0 ? w[c] : zero;
        if (b) {
            if (v) return columnSpan<true, true>(s, a >= 0, c >= 0, begin, end, wa, wb, x, b, y, v);
            return columnSpan<true, false>(s, a >= 0, c >= 0, begin, end, wa, wb, x, b, y, v);
        }
        if (v) return columnSpan<false, true>(s, a >= 0, c >= 0, begin, end, wa, wb, x, b, y, v);
        return columnSpan<false, false>(s, a >= 0, c >= 0, begin, end, wa, wb, x, b, y, v);
    }

    template <bool HasB, bool HasV>
    Real columnSpan(const RowSystemView& s, bool useA, bool useB, int begin, int end, const Spatial& wa,
                    const Spatial& wb, const Real* x, const Real* b, Real* y, const Real* v) const {
        if (useA && useB) return columns<true, true, HasB, HasV>(s, begin, end, wa, wb, x, b, y, v);
        if (useA) return columns<true, false, HasB, HasV>(s, begin, end, wa, wb, x, b, y, v);
        if (useB) return columns<false, true, HasB, HasV>(s, begin, end, wa, wb, x, b, y, v);
        return columns<false, false, HasB, HasV>(s, begin, end, wa, wb, x, b, y, v);
    }

    // y over the span's rows first (no carried dependency: vectorized across rows), then the sum.
    template <bool UseA, bool UseB, bool HasB, bool HasV>
    Real columns(const RowSystemView& s, int begin, int end, const Spatial& wa, const Spatial& wb,
                 const Real* __restrict x, const Real* __restrict b, Real* __restrict y,
                 const Real* __restrict v) const {
        const size_t n = rows_;
        const Real* __restrict c = s.compliance;
        const Real* __restrict ja = columns_.data();
        const Real* __restrict jb = columns_.data() + 6 * n;
        const Real a0 = wa.lin.x, a1 = wa.lin.y, a2 = wa.lin.z, a3 = wa.ang.x, a4 = wa.ang.y, a5 = wa.ang.z;
        const Real b0 = wb.lin.x, b1 = wb.lin.y, b2 = wb.lin.z, b3 = wb.ang.x, b4 = wb.ang.y, b5 = wb.ang.z;
        for (int i = begin; i < end; ++i) {
            Real ax = c[i] * x[i];
            if (UseA)
                ax += (ja[i] * a0 + ja[n + i] * a1 + ja[2 * n + i] * a2) +
                      (ja[3 * n + i] * a3 + ja[4 * n + i] * a4 + ja[5 * n + i] * a5);
            if (UseB)
                ax += (jb[i] * b0 + jb[n + i] * b1 + jb[2 * n + i] * b2) +
                      (jb[3 * n + i] * b3 + jb[4 * n + i] * b4 + jb[5 * n + i] * b5);
            y[i] = HasB ? b[i] - ax : ax;
        }
        Real sum = 0;
        for (int i = begin; i < end; ++i) sum += y[i] * (HasV ? v[i] : y[i]);
        return sum;
    }

    int rows_ = 0;
    std::vector<int> runStart_;   // (runs + 1) the first row of each run, then rows_
    std::vector<int> runOf_;      // (rows) the run of each row
    std::vector<Real> columns_;   // (12 rows) J_A's lin x, y, z, ang x, y, z, then J_B's, by columns
    bool columnsReady_ = false;
};

}  // namespace cs
