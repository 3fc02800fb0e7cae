// gpu_factor.h: the CUDA factorization verbs on host data (the device half of
// tests/test_factor_verb.cpp).
#include "gpu/gpu_factor.h"

#include <exception>

#include "gpu/cuda_executor.cuh"
#include "gpu/gpu_backend.h"

namespace cs {

bool gpuSparseCholeskyRun(int n, const int* colStart, const int* rowIndex, const double* values, const double* rhs,
                          int nrhs, int first, int& status, std::vector<double>& x, std::vector<double>& trailing,
                          std::string* why) {
    if (!gpuAvailable(why)) return false;
    try {
        gpu::CudaExecutor ex;
        gpu::CudaSparseCholesky chol;
        if (!chol.analyse(ex, n, colStart, rowIndex, why)) return false;
        const int nnz = colStart[n], nt = n - first;
        gpu::DeviceBuffer<double> dValues, dRhs, dX, dTrailing;
        gpu::DeviceBuffer<int> dStatus;
        dValues.reserve(nnz);
        dRhs.reserve((size_t)n * nrhs);
        dX.reserve((size_t)n * nrhs);
        dTrailing.reserve((size_t)nt * nt + 1);
        dStatus.reserve(1);
        ex.upload(dValues.data(), values, nnz);
        ex.upload(dRhs.data(), rhs, (size_t)n * nrhs);
        chol.factor(ex, dValues.data(), dStatus.data());
        ex.download(&status, dStatus.data(), 1);
        ex.sync();
        x.assign((size_t)n * nrhs, 0.0);
        trailing.assign((size_t)nt * nt, 0.0);
        if (status != 1) return true;
        chol.solve(ex, dRhs.data(), dX.data(), nrhs);
        chol.inverseTrailing(ex, first, dTrailing.data());
        ex.download(x.data(), dX.data(), x.size());
        ex.download(trailing.data(), dTrailing.data(), trailing.size());
        ex.sync();
        return true;
    } catch (const std::exception& e) {
        if (why) *why = e.what();
        return false;
    }
}

bool gpuDenseCholeskyRun(int n, const double* a, const double* b, int nrhs, int& status, std::vector<double>& x,
                         std::string* why) {
    if (!gpuAvailable(why)) return false;
    try {
        gpu::CudaExecutor ex;
        gpu::CudaDenseCholesky chol;
        gpu::DeviceBuffer<double> dA, dB, dX;
        gpu::DeviceBuffer<int> dStatus;
        dA.reserve((size_t)n * n);
        dB.reserve((size_t)n * nrhs);
        dX.reserve((size_t)n * nrhs);
        dStatus.reserve(1);
        ex.upload(dA.data(), a, (size_t)n * n);
        ex.upload(dB.data(), b, (size_t)n * nrhs);
        chol.factor(ex, n, dA.data(), dStatus.data());
        chol.solve(ex, dB.data(), dX.data(), nrhs);   // harmless on a failed factor: x is then not read
        x.assign((size_t)n * nrhs, 0.0);
        ex.download(&status, dStatus.data(), 1);
        ex.download(x.data(), dX.data(), x.size());
        ex.sync();
        return true;
    } catch (const std::exception& e) {
        if (why) *why = e.what();
        return false;
    }
}

}  // namespace cs
