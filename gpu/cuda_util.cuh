// CUDA plumbing of the backend: error checks and device buffers that grow.
//
// As Warp's native/cuda_util.h: every CUDA call goes through CS_CUDA, which throws with the call
// site; GpuWorld turns the exception into a fallback to the CPU with a message. The launches
// themselves are the CUDA executor's (cuda_executor.cuh), with its one table of block sizes.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace cs::gpu {

inline void check(cudaError_t err, const char* what, const char* file, int line) {
    if (err != cudaSuccess)
        throw std::runtime_error(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                                 cudaGetErrorString(err));
}
#define CS_CUDA(call) ::cs::gpu::check((call), #call, __FILE__, __LINE__)

// A device array whose capacity only grows; growing keeps the contents (the warm-start cache
// and the state's copy at the step's start survive a re-run with larger buffers).
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() {
        if (data_) cudaFree(data_);
    }

    T* data() const { return data_; }
    size_t capacity() const { return capacity_; }
    void reserve(size_t n) {
        if (n <= capacity_) return;
        T* grown = nullptr;
        CS_CUDA(cudaMalloc(&grown, n * sizeof(T)));
        if (data_) {
            CS_CUDA(cudaMemcpy(grown, data_, capacity_ * sizeof(T), cudaMemcpyDeviceToDevice));
            CS_CUDA(cudaFree(data_));
        }
        data_ = grown;
        capacity_ = n;
    }

private:
    T* data_ = nullptr;
    size_t capacity_ = 0;
};

}  // namespace cs::gpu
