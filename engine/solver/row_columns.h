// J stored by columns for the CPU's gather (host only: the loops are written for the compiler to
// vectorize across rows). Used by the CPU's linear solvers (RowSystemView::jacobianColumns, filled
// in newton.cpp) and by the host executor (engine/exec/host_row_system.h), so both compute the
// product A x = J w + C x the same way, to the same bits.
//
// Layout, two-body rows only: 12 columns of n rows, J_A's lin x, y, z, ang x, y, z, then J_B's;
// column k at columns[k * n].
#pragma once

#include <cstddef>

#include "engine/core/math.h"

namespace cs {

inline void fillJacobianColumns(const Spatial* jacobianA, const Spatial* jacobianB, size_t n, Real* columns) {
    for (size_t i = 0; i < n; ++i) {
        const Spatial* j[2] = {&jacobianA[i], &jacobianB[i]};
        for (int side = 0; side < 2; ++side) {
            const Real values[6] = {j[side]->lin.x, j[side]->lin.y, j[side]->lin.z,
                                    j[side]->ang.x, j[side]->ang.y, j[side]->ang.z};
            for (int k = 0; k < 6; ++k) columns[(6 * side + k) * n + i] = values[k];
        }
    }
}

// y_i = C_i x_i + J_{i,A} . wa + J_{i,B} . wb (or rhs_i minus that) over rows [begin, end) of one
// run on the same two bodies, then the span's y . v (y . y without v) from zero. The products and
// sums are a row-by-row gather's, in its order (dot = (x x + y y) + z z per half, as core/math.h),
// so the same bits; y is computed for all the span's rows first, a loop without a carried
// dependency that the compiler vectorizes across rows, then summed. (Read row by row from
// jacobianA/B, a row's 24 products and sums took 9-10 cycles on the default pyramid.)
template <bool UseA, bool UseB, bool HasB, bool HasV>
Real gatherSpanColumns(const Real* __restrict columns, size_t n, const Real* __restrict compliance, int begin,
                       int end, const Spatial& wa, const Spatial& wb, const Real* __restrict x,
                       const Real* __restrict rhs, Real* __restrict y, const Real* __restrict v) {
    const Real* __restrict ja = columns;
    const Real* __restrict jb = columns + 6 * n;
    const Real a0 = wa.lin.x, a1 = wa.lin.y, a2 = wa.lin.z, a3 = wa.ang.x, a4 = wa.ang.y, a5 = wa.ang.z;
    const Real b0 = wb.lin.x, b1 = wb.lin.y, b2 = wb.lin.z, b3 = wb.ang.x, b4 = wb.ang.y, b5 = wb.ang.z;
    for (int i = begin; i < end; ++i) {
        Real ax = compliance[i] * x[i];
        if (UseA)
            ax += (ja[i] * a0 + ja[n + i] * a1 + ja[2 * n + i] * a2) +
                  (ja[3 * n + i] * a3 + ja[4 * n + i] * a4 + ja[5 * n + i] * a5);
        if (UseB)
            ax += (jb[i] * b0 + jb[n + i] * b1 + jb[2 * n + i] * b2) +
                  (jb[3 * n + i] * b3 + jb[4 * n + i] * b4 + jb[5 * n + i] * b5);
        y[i] = HasB ? rhs[i] - ax : ax;
    }
    Real sum = 0;
    for (int i = begin; i < end; ++i) sum += y[i] * (HasV ? v[i] : y[i]);
    return sum;
}

// gatherSpanColumns for a run on bodies a and b (-1: none), their w loaded once.
template <bool HasB, bool HasV>
Real gatherColumns(const Real* columns, size_t n, const Real* compliance, int begin, int end, int a, int b,
                   const Spatial* w, const Real* x, const Real* rhs, Real* y, const Real* v) {
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    const Spatial wa = a >= 0 ? w[a] : zero, wb = b >= 0 ? w[b] : zero;
    if (a >= 0 && b >= 0)
        return gatherSpanColumns<true, true, HasB, HasV>(columns, n, compliance, begin, end, wa, wb, x, rhs, y, v);
    if (a >= 0)
        return gatherSpanColumns<true, false, HasB, HasV>(columns, n, compliance, begin, end, wa, wb, x, rhs, y, v);
    if (b >= 0)
        return gatherSpanColumns<false, true, HasB, HasV>(columns, n, compliance, begin, end, wa, wb, x, rhs, y, v);
    return gatherSpanColumns<false, false, HasB, HasV>(columns, n, compliance, begin, end, wa, wb, x, rhs, y, v);
}

}  // namespace cs
