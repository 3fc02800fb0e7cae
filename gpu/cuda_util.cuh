// CUDA plumbing of the backend: error checks, the one table of block sizes, the one launch
// helper, device buffers that grow, and a deterministic reduction.
//
// As Warp's native/cuda_util.h and PhysX's PxgSolverKernelIndices.h: every launch goes through
// launchKernel (which checks the launch, and in debug builds outside graph capture waits for it
// and checks again), and every block size comes from kBlockSize.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/math.h"

namespace cs::gpu {

// Throws with the call site: the backend reports failures as exceptions that GpuWorld turns
// into a fallback to the CPU with a message.
inline void check(cudaError_t err, const char* what, const char* file, int line) {
    if (err != cudaSuccess)
        throw std::runtime_error(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                                 cudaGetErrorString(err));
}
#define CS_CUDA(call) ::cs::gpu::check((call), #call, __FILE__, __LINE__)

// The one table of block sizes, by kind of launch.
enum class Launch { Body, Shape, Pair, Contact, Row, Serial };
constexpr int kBlockSize[] = {
    128,   // Body: light per-body work
    64,    // Shape: a loop over the polytope's vertices, edges and faces
    64,    // Pair: the narrow phase, register heavy (PotentialContact sinks)
    128,   // Contact
    256,   // Row: the solver's per-row passes, memory bound
    1,     // Serial: one thread (scalar recurrences of the solvers, counters)
};

inline bool& captureActive() {   // set while a CUDA graph is captured: no synchronization then
    static bool active = false;
    return active;
}

// Launches kernel over n threads (n <= 0: nothing) with the block size of kind.
template <class Kernel, class... Args>
void launchKernel(const char* name, Launch kind, int n, cudaStream_t stream, Kernel kernel, Args... args) {
    if (n <= 0) return;
    const int block = kBlockSize[int(kind)];
    const int grid = (n + block - 1) / block;
    kernel<<<grid, block, 0, stream>>>(args...);
    check(cudaGetLastError(), name, __FILE__, __LINE__);
#if !defined(NDEBUG)
    if (!captureActive()) check(cudaStreamSynchronize(stream), name, __FILE__, __LINE__);
#endif
}

// Thread index for the 1-D launches of launchKernel.
__device__ inline int threadIndex() { return int(blockIdx.x * blockDim.x + threadIdx.x); }

// A device array with a capacity that only grows (contents are not kept when it grows:
// every buffer that grows is rewritten by the step that needs it).
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { if (data_) cudaFree(data_); }

    T* data() const { return data_; }
    void swap(DeviceBuffer& o) {
        std::swap(data_, o.data_);
        std::swap(capacity_, o.capacity_);
    }
    size_t capacity() const { return capacity_; }
    // At least n elements; true when it had to reallocate.
    bool reserve(size_t n) {
        if (n <= capacity_) return false;
        if (data_) CS_CUDA(cudaFree(data_));
        data_ = nullptr;
        CS_CUDA(cudaMalloc(&data_, n * sizeof(T)));
        capacity_ = n;
        return true;
    }
    void upload(const std::vector<T>& v, cudaStream_t stream) {
        reserve(v.size() > 0 ? v.size() : 1);
        if (!v.empty()) CS_CUDA(cudaMemcpyAsync(data_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
    }
    void upload(const T* v, size_t n, cudaStream_t stream) {
        reserve(n > 0 ? n : 1);
        if (n) CS_CUDA(cudaMemcpyAsync(data_, v, n * sizeof(T), cudaMemcpyHostToDevice, stream));
    }
    void download(T* out, size_t n, cudaStream_t stream) const {
        if (n) CS_CUDA(cudaMemcpyAsync(out, data_, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    }

private:
    T* data_ = nullptr;
    size_t capacity_ = 0;
};

// ---- deterministic reductions ---------------------------------------------------------------
//
// A fixed grid of kReduceBlocks blocks strides over [0, n); each block sums in shared memory in a
// fixed tree; one block then adds the partial sums in block order. The summation order depends
// on n only: the result is the same bits run after run (no float atomics).
constexpr int kReduceBlocks = 128;
constexpr int kReduceThreads = 256;

enum class ReduceOp { Dot, Max };

template <ReduceOp Op>
__device__ inline Real reduceCombine(Real a, Real b) {
    if constexpr (Op == ReduceOp::Dot) return a + b;
    else return a > b ? a : b;
}

template <ReduceOp Op>
__device__ inline Real blockReduce(Real v, Real* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = kReduceThreads / 2; s > 0; s >>= 1) {
        if (int(threadIdx.x) < s) shared[threadIdx.x] = reduceCombine<Op>(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    Real total = shared[0];
    __syncthreads();   // shared is reused by the caller's next reduction
    return total;
}

template <ReduceOp Op>
__device__ inline Real reduceTerm(const Real* x, const Real* y, int i) {
    if constexpr (Op == ReduceOp::Dot) return x[i] * (y ? y[i] : x[i]);
    else return x[i];
}

// Partial results of two reductions at once (x1 null: only the first). Dot: sum of x y (y null:
// x x); Max: max of x with 0 as the identity.
template <ReduceOp Op>
__global__ void reducePartialKernel(const Real* x0, const Real* y0, const Real* x1, const Real* y1,
                                    const int* count, const int* active, Real* partial) {
    __shared__ Real shared[kReduceThreads];
    if (active && !*active) return;
    const int n = *count;
    Real acc0 = 0, acc1 = 0;
    for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += int(gridDim.x * blockDim.x)) {
        acc0 = reduceCombine<Op>(acc0, reduceTerm<Op>(x0, y0, i));
        if (x1) acc1 = reduceCombine<Op>(acc1, reduceTerm<Op>(x1, y1, i));
    }
    Real t0 = blockReduce<Op>(acc0, shared);
    Real t1 = x1 ? blockReduce<Op>(acc1, shared) : Real(0);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = t0;
        partial[kReduceBlocks + blockIdx.x] = t1;
    }
}

template <ReduceOp Op>
__global__ void reduceFinalKernel(const Real* partial, const int* active, Real* out0, Real* out1) {
    __shared__ Real shared[kReduceThreads];
    if (active && !*active) return;
    const bool in = int(threadIdx.x) < kReduceBlocks;
    Real t0 = blockReduce<Op>(in ? partial[threadIdx.x] : Real(0), shared);
    Real t1 = out1 ? blockReduce<Op>(in ? partial[kReduceBlocks + threadIdx.x] : Real(0), shared) : Real(0);
    if (threadIdx.x == 0) {
        *out0 = t0;
        if (out1) *out1 = t1;
    }
}

// *out0 = x0 . y0 and *out1 = x1 . y1 (or the maxima of x0, x1) over i < *count, skipped when
// *active == 0 (active may be null; x1 and out1 may be null). partial: 2 kReduceBlocks reals.
template <ReduceOp Op = ReduceOp::Dot>
void deviceReduce(const Real* x0, const Real* y0, Real* out0, const Real* x1, const Real* y1, Real* out1,
                  const int* count, const int* active, Real* partial, cudaStream_t stream) {
    static_assert(kReduceBlocks <= kReduceThreads, "the final pass reads one partial per thread");
    reducePartialKernel<Op><<<kReduceBlocks, kReduceThreads, 0, stream>>>(x0, y0, x1, y1, count, active, partial);
    check(cudaGetLastError(), "reducePartialKernel", __FILE__, __LINE__);
    reduceFinalKernel<Op><<<1, kReduceThreads, 0, stream>>>(partial, active, out0, out1);
    check(cudaGetLastError(), "reduceFinalKernel", __FILE__, __LINE__);
}

}  // namespace cs::gpu
