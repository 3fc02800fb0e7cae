// PCR's two vector passes, shared by the CPU's solvePCR (linear_solvers.cpp) and the host
// executor's PCR (engine/exec/pipeline_solve.h recordPCR with Exec::kRowKernels), so both run the
// same vectorized loops and add the same sums in the same order.
#pragma once

#include "engine/core/math.h"

namespace cs {

// PCR's two vector passes over rows [begin, end), their sums into acc. Written over restrict
// pointers and scalars passed by value: in the solver's lambdas, which captured them by
// reference, the compiler had to assume that a store to x might change alpha or a pointer and
// reloaded them for every row, and could not vectorize (the passes took 4 us per iteration on
// the default pyramid's 2,964 rows, a quarter of the solve). The sums are the same chains in the
// same order, so the results are the same bits.
// p = z + beta p, Ap = Az + beta Ap, q = M^-1 Ap; acc += q . Ap, q . r.
inline void pcrDirectionPass(int begin, int end, Real beta, const Real* __restrict z, const Real* __restrict az,
                             const Real* __restrict r, const Real* __restrict invDiag, Real* __restrict p,
                             Real* __restrict ap, Real* __restrict q, Real* acc) {
    Real qap = 0, qr = 0;
    for (int i = begin; i < end; ++i) {
        Real pi = z[i] + (beta != Real(0) ? beta * p[i] : Real(0));
        Real api = az[i] + (beta != Real(0) ? beta * ap[i] : Real(0));
        Real qi = invDiag[i] * api;
        p[i] = pi;
        ap[i] = api;
        q[i] = qi;
        qap += qi * api;
        qr += qi * r[i];
    }
    acc[0] = qap;
    acc[1] = qr;
}

// x += alpha p, r -= alpha Ap, z -= alpha q; acc = r . r.
inline void pcrUpdatePass(int begin, int end, Real alpha, const Real* __restrict p, const Real* __restrict ap,
                          const Real* __restrict q, Real* __restrict x, Real* __restrict r, Real* __restrict z, Real* acc) {
    Real sum = 0;
    for (int i = begin; i < end; ++i) {
        x[i] += alpha * p[i];
        Real ri = r[i] - alpha * ap[i];
        r[i] = ri;
        z[i] -= alpha * q[i];
        sum += ri * ri;
    }
    acc[0] = sum;
}

}  // namespace cs
