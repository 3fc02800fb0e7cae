// The executor interface: the few verbs the step pipeline (engine/exec/pipeline_*.h) is written
// over, so that one text of the step runs on the CPU (HostExecutor, host_executor.h, in every
// build and every test) and on the device (CudaExecutor, gpu/cuda_executor.cuh).
//
// As Kokkos' parallel_for / parallel_reduce / parallel_scan over an execution space, or Thrust's
// host and device policies. An executor Exec provides:
//
//   Exec::Buffer<T>            storage of the "device": std::vector-like on the host, cudaMalloc'd
//                              on CUDA. data(), capacity(), reserve(n) (grows, keeps contents).
//   forEach(n, count, gate, f) f(i) for i < min(n, *count) (count null: n), nothing when
//                              gate && !*gate. count and gate live in the executor's memory, so
//                              the bounds and the gates are read where the work runs: the host
//                              never waits for the device to learn a count.
//   serial(gate, f)            f() once, on one thread of the device (the scalar recurrences).
//   sum(count, gate, order, out, term)   *out = sum over i < *count of term(i).
//   max(count, gate, out, term)          *out = fmax over i < *count of term(i), identity 0.
//   exclusiveScan(in, out, n)  int prefix sums over n entries.
//   sortPairs(kin, vin, kout, vout, n) / sortKeys(kin, kout, n)   stable sort by key.
//   copy / upload / download / sync     moves of plain data; sync waits for all of it.
//   stamp(k), seconds(a, b)    stage timestamps and the time between two of them (after sync).
//   record(signature, fn)      runs fn, which only enqueues work: the host calls it, CUDA
//                              captures it once per signature into a graph and replays it.
//   stopped(flag)              true when the host can see that *flag == 0, so a loop whose
//                              remaining iterations are all gated off can end early (host); the
//                              device answers false and records every iteration (gated kernels
//                              return at once).
//   setGate(flag)              a gate on a whole stretch of stages (null: none): until the next
//                              setGate, forEach, serial, sum, max and copy do nothing where
//                              *flag == 0 (read where the work runs, as every gate). Scans and
//                              sorts run regardless: pure functions of buffers that the gated
//                              work left as they were, they write what they wrote before. So a
//                              stage text written without gates can be recorded as the
//                              conditional part of a step (row culling's second solve,
//                              pipeline_step.h), and `if (!ex.stopped(flag))` around it lets the
//                              host skip it.
//   Exec::SparseCholesky       a sparse SPD factorization, A = L L^T in A's own numbering:
//                              analyse(ex, n, colStart, rowIndex, why) once per pattern (the lower
//                              triangle compressed by columns, host arrays, sparse_pattern.h;
//                              fillReducingOrder numbers it), factor(ex, values, status) per new
//                              values, solve(ex, rhs, x, nrhs), inverseTrailing(ex, first, out)
//                              (A^-1 over the unknowns numbered from first on, dense).
//                              Host: CHOLMOD supernodal (host_factor.h); CUDA: cuSOLVER csrchol.
//   Exec::DenseCholesky        a small dense SPD factorization: factor(ex, n, a, status),
//                              solve(ex, b, x, nrhs). Host: Eigen LLT; CUDA: cuSOLVER potrf/potrs.
//                              Values, right-hand sides, solutions and the status (1: factored,
//                              0: not positive definite) are in the executor's memory, as
//                              always; the factorizations compute in double whatever Real is.
//                              They run outside record(): on CUDA, analyse and the sparse
//                              factor's zero-pivot check wait for the device.
//                              tests/test_factor_verb.cpp checks both sides against a dense solve.
//
// Functors are lambdas marked CS_LAMBDA, capturing plain pointers and views by value (never
// `this` or a host object), so the same lambda runs in a CUDA kernel.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine/core/math.h"

#if defined(__CUDACC__)
#define CS_LAMBDA __host__ __device__
#else
#define CS_LAMBDA
#endif

namespace cs {

// The order in which the host executor adds a sum (the CUDA executor sums in its own fixed tree,
// deterministic too, but not these bits). These are the orders of the CPU backend
// (linear_solvers.cpp blockedSums: kCpuSumBlocks fixed blocks of [0, n), each summed in index
// order, then the block sums in block order; within a block the gather sums each run of rows on
// one body pair first, gatherSpan), so that the pipeline on the host gives the CPU's bits.
constexpr int kCpuSumBlocks = 64;
struct SumOrder {
    int blocks = kCpuSumBlocks;        // 1: one plain sum in index order (newton.cpp's norm2)
    const int* segmentHead = nullptr;  // (rows) 1 where a run starts: runs are summed first
};
constexpr SumOrder kSerialSum{1, nullptr};
constexpr SumOrder kBlockedSum{kCpuSumBlocks, nullptr};

// A flag or an integer maximum set from many threads of a forEach (order-independent results).
CS_HD void atomicSetFlag(int* flag) {
#if defined(__CUDA_ARCH__)
    atomicExch(flag, 1);
#else
    __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
#endif
}

CS_HD void atomicMaxInt(int* to, int value) {
#if defined(__CUDA_ARCH__)
    atomicMax(to, value);
#else
    int seen = __atomic_load_n(to, __ATOMIC_RELAXED);
    while (seen < value && !__atomic_compare_exchange_n(to, &seen, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
#endif
}

// *to += value from many threads; returns the value before (a bump allocation's offset).
CS_HD int atomicAddInt(int* to, int value) {
#if defined(__CUDA_ARCH__)
    return atomicAdd(to, value);
#else
    return __atomic_fetch_add(to, value, __ATOMIC_RELAXED);
#endif
}

// w += v from many threads (the fast scatter of the CUDA executor; its sums vary in the last bits
// from run to run, which the deterministic scatter avoids).
CS_HD void atomicAddReal(Real* to, Real v) {
#if defined(__CUDA_ARCH__)
    atomicAdd(to, v);
#else
    std::atomic_ref<Real>(*to).fetch_add(v, std::memory_order_relaxed);
#endif
}

CS_HD void atomicAddSpatial(Spatial* to, const Spatial& v) {
    atomicAddReal(&to->lin.x, v.lin.x); atomicAddReal(&to->lin.y, v.lin.y); atomicAddReal(&to->lin.z, v.lin.z);
    atomicAddReal(&to->ang.x, v.ang.x); atomicAddReal(&to->ang.y, v.ang.y); atomicAddReal(&to->ang.z, v.ang.z);
}

}  // namespace cs
