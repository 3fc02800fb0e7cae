// CudaExecutor: the executor verbs of engine/exec/executor.h on one CUDA stream.
//
//   forEach / serial   one launch of a templated kernel over the functor (block sizes below)
//   sum / max          a fixed grid of kReduceBlocks blocks strides over [0, *count), a fixed
//                      shared-memory tree per block, then one block adds the partial results in
//                      block order: the order depends on the count only, so the result is the
//                      same bits run after run (no float atomics); not the host's bits
//   scan, sorts        cub (DeviceScan, DeviceRadixSort; the radix sort is stable)
//   setGate            every kernel reads the stretch's gate beside its own; copy becomes a kernel
//   SparseCholesky, DenseCholesky   cuSOLVER (cuda_factor.cuh)
//   record             captures the step once per signature into a CUDA graph and replays it;
//                      cub's scratch must not move inside a capture: a capture that needed more
//                      is dropped, the step runs eagerly (which grows the scratch), and the next
//                      step captures again
// Nothing here waits for the device except sync() and the size-changing reallocations.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <vector>

#include "engine/exec/executor.h"
#include "gpu/cuda_util.cuh"

namespace cs::gpu {

class CudaSparseCholesky;   // cuda_factor.cuh (included at the end)
class CudaDenseCholesky;

constexpr int kForEachBlock = 128;
constexpr int kReduceBlocks = 128;
constexpr int kReduceThreads = 256;

// gate: the verb's own; region: the executor's setGate (null: none).
template <class F>
__global__ void forEachKernel(int n, const int* count, const int* gate, const int* region, F f) {
    const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n || (gate && !*gate) || (region && !*region) || (count && i >= *count)) return;
    f(i);
}

template <class F>
__global__ void serialKernel(const int* gate, const int* region, F f) {
    if ((!gate || *gate) && (!region || *region)) f();
}

// copy() inside a gated stretch: one element per thread (forEachKernel applies the gate).
template <class T>
struct CopyItems {
    T* to;
    const T* from;
    __device__ void operator()(int i) const { to[i] = from[i]; }
};

struct SumCombine {
    template <class T>
    __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxCombine {
    __device__ Real operator()(Real a, Real b) const { return fmax(a, b); }
};

template <class T, class Combine>
__device__ T blockCombine(T v, T* shared, Combine op) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = kReduceThreads / 2; s > 0; s >>= 1) {
        if (int(threadIdx.x) < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    return shared[0];
}

template <class T, class Combine, class Term>
__global__ void reducePartialKernel(const int* count, const int* gate, const int* region, Term term, Combine op,
                                    T* partial) {
    __shared__ T shared[kReduceThreads];
    if ((gate && !*gate) || (region && !*region)) return;
    const int n = *count;
    T acc{};
    for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += int(gridDim.x * blockDim.x))
        acc = op(acc, term(i));
    const T total = blockCombine(acc, shared, op);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

template <class T, class Combine>
__global__ void reduceFinalKernel(const int* gate, const int* region, const T* partial, Combine op, T* out) {
    __shared__ T shared[kReduceThreads];
    if ((gate && !*gate) || (region && !*region)) return;
    const T total = blockCombine(int(threadIdx.x) < kReduceBlocks ? partial[threadIdx.x] : T{}, shared, op);
    if (threadIdx.x == 0) *out = total;
}

class CudaExecutor {
public:
    template <class T>
    using Buffer = DeviceBuffer<T>;
    static constexpr bool kHasAtomicScatter = true;
    static constexpr bool kRowKernels = false;   // the generic scatter and product (pipeline_solve.h)
    using SparseCholesky = CudaSparseCholesky;   // cuSOLVER csrchol (cuda_factor.cuh)
    using DenseCholesky = CudaDenseCholesky;     // cuSOLVER potrf / potrs

    CudaExecutor() {
        CS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        partial_.reserve(kReduceBlocks * 4);   // room for kReduceBlocks Vec3 partial sums, never moved
    }
    ~CudaExecutor() {
        if (graph_) cudaGraphExecDestroy(graph_);
        for (cudaEvent_t e : events_) cudaEventDestroy(e);
        if (stream_) cudaStreamDestroy(stream_);
    }
    CudaExecutor(const CudaExecutor&) = delete;
    CudaExecutor& operator=(const CudaExecutor&) = delete;
    cudaStream_t stream() const { return stream_; }

    template <class F>
    void forEach(int n, const int* count, const int* gate, const F& f) {
        if (n <= 0) return;
        forEachKernel<<<(n + kForEachBlock - 1) / kForEachBlock, kForEachBlock, 0, stream_>>>(n, count, gate, region_, f);
        CS_CUDA(cudaGetLastError());
    }
    template <class F>
    void serial(const int* gate, const F& f) {
        serialKernel<<<1, 1, 0, stream_>>>(gate, region_, f);
        CS_CUDA(cudaGetLastError());
    }
    template <class T, class Term>
    void sum(const int* count, const int* gate, SumOrder, T* out, const Term& term) {
        reduce<T>(count, gate, out, term, SumCombine{});
    }
    template <class Term>
    void max(const int* count, const int* gate, Real* out, const Term& term) {
        reduce<Real>(count, gate, out, term, MaxCombine{});
    }
    void exclusiveScan(const int* in, int* out, int n) {
        if (n <= 0) return;
        size_t bytes = 0;
        CS_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, stream_));
        CS_CUDA(cub::DeviceScan::ExclusiveSum(scratch(bytes), bytes, in, out, n, stream_));
    }
    template <class K, class V>
    void sortPairs(const K* keysIn, const V* valuesIn, K* keysOut, V* valuesOut, int n) {
        if (n <= 0) return;
        size_t bytes = 0;
        CS_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keysIn, keysOut, valuesIn, valuesOut, n, 0,
                                                int(sizeof(K) * 8), stream_));
        CS_CUDA(cub::DeviceRadixSort::SortPairs(scratch(bytes), bytes, keysIn, keysOut, valuesIn, valuesOut, n, 0,
                                                int(sizeof(K) * 8), stream_));
    }
    void sortKeys(const uint64_t* in, uint64_t* out, int n) {
        if (n <= 0) return;
        size_t bytes = 0;
        CS_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, in, out, n, 0, 64, stream_));
        CS_CUDA(cub::DeviceRadixSort::SortKeys(scratch(bytes), bytes, in, out, n, 0, 64, stream_));
    }
    template <class T>
    void copy(T* to, const T* from, size_t n) {
        if (region_) forEach(int(n), nullptr, nullptr, CopyItems<T>{to, from});   // gated: a kernel
        else if (n) CS_CUDA(cudaMemcpyAsync(to, from, n * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
    }
    template <class T>
    void upload(T* to, const T* host, size_t n) {
        if (n) CS_CUDA(cudaMemcpyAsync(to, host, n * sizeof(T), cudaMemcpyHostToDevice, stream_));
    }
    template <class T>
    void download(T* host, const T* from, size_t n) {
        if (n) CS_CUDA(cudaMemcpyAsync(host, from, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    }
    void sync() { CS_CUDA(cudaStreamSynchronize(stream_)); }

    // Timestamps: events (recorded as graph nodes inside a capture).
    void stamp(int k) {
        while ((int)events_.size() <= k) {
            cudaEvent_t e;
            CS_CUDA(cudaEventCreate(&e));
            events_.push_back(e);
        }
        if (capturing_) CS_CUDA(cudaEventRecordWithFlags(events_[k], stream_, cudaEventRecordExternal));
        else CS_CUDA(cudaEventRecord(events_[k], stream_));
    }
    double seconds(int a, int b) const {
        float ms = 0;
        CS_CUDA(cudaEventElapsedTime(&ms, events_[a], events_[b]));
        return ms * 1e-3;
    }

    template <class Signature, class Fn>
    void record(const Signature& signature, const Fn& fn) {
        if (graph_ && signature == signature_) {
            CS_CUDA(cudaGraphLaunch(graph_, stream_));
            return;
        }
        if (graph_) CS_CUDA(cudaGraphExecDestroy(graph_));
        graph_ = nullptr;
        cudaGraph_t graph = nullptr;
        capturing_ = true;
        spoiled_ = false;
        CS_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        try {
            fn();
        } catch (...) {
            cudaStreamEndCapture(stream_, &graph);
            if (graph) cudaGraphDestroy(graph);
            capturing_ = false;
            throw;
        }
        CS_CUDA(cudaStreamEndCapture(stream_, &graph));
        capturing_ = false;
        if (spoiled_) {   // the scratch had to grow: run eagerly now, capture on the next step
            cudaGraphDestroy(graph);
            fn();
            return;
        }
        CS_CUDA(cudaGraphInstantiate(&graph_, graph, 0));
        cudaGraphDestroy(graph);
        signature_ = signature;
        CS_CUDA(cudaGraphLaunch(graph_, stream_));
    }
    bool stopped(const int*) const { return false; }
    void setGate(const int* flag) { region_ = flag; }

private:
    template <class T, class Term, class Combine>
    void reduce(const int* count, const int* gate, T* out, const Term& term, Combine op) {
        static_assert(kReduceBlocks <= kReduceThreads, "the final pass reads one partial per thread");
        static_assert(sizeof(T) <= 4 * sizeof(double), "partial_ holds kReduceBlocks of T");
        T* partial = reinterpret_cast<T*>(partial_.data());
        reducePartialKernel<T><<<kReduceBlocks, kReduceThreads, 0, stream_>>>(count, gate, region_, term, op, partial);
        CS_CUDA(cudaGetLastError());
        reduceFinalKernel<T><<<1, kReduceThreads, 0, stream_>>>(gate, region_, (const T*)partial, op, out);
        CS_CUDA(cudaGetLastError());
    }
    void* scratch(size_t bytes) {
        if (bytes > scratch_.capacity()) {
            if (capturing_) spoiled_ = true;   // no allocation inside a capture
            else scratch_.reserve(bytes);
        }
        return scratch_.data();
    }

    cudaStream_t stream_ = nullptr;
    DeviceBuffer<char> scratch_;
    DeviceBuffer<double> partial_;
    std::vector<cudaEvent_t> events_;
    cudaGraphExec_t graph_ = nullptr;
    std::vector<double> signature_;
    bool capturing_ = false, spoiled_ = false;
    const int* region_ = nullptr;   // setGate
};

}  // namespace cs::gpu

#include "gpu/cuda_factor.cuh"
