// The factorization verbs of the CUDA executor (engine/exec/executor.h: SparseCholesky,
// DenseCholesky), over cuSOLVER from the CUDA toolkit.
//
//   CudaSparseCholesky   cusolverSp's low-level csrchol (csrcholAnalysis / Factor / Solve): a
//                        Cholesky of a full CSR matrix in its own numbering, as the host's
//                        CHOLMOD factors in the numbering given (fillReducingOrder). The verbs
//                        take the lower triangle; its full CSR form and the map from the full
//                        entries to the lower ones are built on the host at analyse
//                        (sparse_pattern.h fullFromLower, tested in every build), and each
//                        factor gathers the values through that map in one kernel.
//   CudaDenseCholesky    cusolverDn potrf / potrs on the lower triangle.
// cuDSS would replace csrchol (cuSOLVER marks it deprecated in its favour); it is not installed
// with this toolkit, hence DISABLE_CUSOLVER_DEPRECATED.
//
// Waits: csrchol reports a zero pivot to the host only (csrcholZeroPivot), so the sparse factor
// waits for the device once; the dense one does not (potrf's info stays on the device and a
// kernel turns it into the status). csrcholSolve takes one right-hand side: several are solved
// one after the other, and inverseTrailing solves one unit vector per trailing unknown (the host
// reads the trailing block of CHOLMOD's factor instead; csrchol does not expose its factor).
#pragma once

#define DISABLE_CUSOLVER_DEPRECATED
#include <cusolverDn.h>
#include <cusolverSp.h>
#include <cusolverSp_LOWLEVEL_PREVIEW.h>
#include <cusparse.h>

#include <stdexcept>
#include <string>

#include "engine/exec/sparse_pattern.h"
#include "gpu/cuda_executor.cuh"

namespace cs::gpu {

inline void checkSolver(int status, const char* what, const char* file, int line) {
    if (status != 0)
        throw std::runtime_error(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": status " +
                                 std::to_string(status));
}
// cusolverStatus_t and cusparseStatus_t: 0 is success in both.
#define CS_SOLVER(call) ::cs::gpu::checkSolver(int(call), #call, __FILE__, __LINE__)

class CudaSparseCholesky {
public:
    CudaSparseCholesky() = default;
    ~CudaSparseCholesky() {
        if (info_) cusolverSpDestroyCsrcholInfo(info_);
        if (descr_) cusparseDestroyMatDescr(descr_);
        if (handle_) cusolverSpDestroy(handle_);
    }
    CudaSparseCholesky(const CudaSparseCholesky&) = delete;
    CudaSparseCholesky& operator=(const CudaSparseCholesky&) = delete;

    bool analyse(CudaExecutor& ex, int n, const int* colStart, const int* rowIndex, std::string* why) {
        n_ = 0;
        if (!checkLowerPattern(n, colStart, rowIndex, why)) return false;
        const FullPattern full = fullFromLower(n, colStart, rowIndex);
        nnz_ = (int)full.col.size();
        rowStart_.reserve(n + 1);
        col_.reserve(nnz_);
        source_.reserve(nnz_);
        values_.reserve(nnz_);
        ex.upload(rowStart_.data(), full.rowStart.data(), n + 1);
        ex.upload(col_.data(), full.col.data(), nnz_);
        ex.upload(source_.data(), full.source.data(), nnz_);
        ex.sync();   // the uploads read host vectors that end with this call
        if (!handle_) {
            CS_SOLVER(cusolverSpCreate(&handle_));
            CS_SOLVER(cusparseCreateMatDescr(&descr_));
            CS_SOLVER(cusparseSetMatType(descr_, CUSPARSE_MATRIX_TYPE_GENERAL));
            CS_SOLVER(cusparseSetMatIndexBase(descr_, CUSPARSE_INDEX_BASE_ZERO));
        }
        CS_SOLVER(cusolverSpSetStream(handle_, ex.stream()));
        if (info_) CS_SOLVER(cusolverSpDestroyCsrcholInfo(info_));
        CS_SOLVER(cusolverSpCreateCsrcholInfo(&info_));
        CS_SOLVER(cusolverSpXcsrcholAnalysis(handle_, n, nnz_, descr_, rowStart_.data(), col_.data(), info_));
        size_t internalBytes = 0, workBytes = 0;
        CS_SOLVER(cusolverSpDcsrcholBufferInfo(handle_, n, nnz_, descr_, values_.data(), rowStart_.data(), col_.data(),
                                               info_, &internalBytes, &workBytes));
        work_.reserve(workBytes);
        unit_.reserve(n);
        column_.reserve(n);
        n_ = n;
        return true;
    }

    void factor(CudaExecutor& ex, const double* values, int* status) {
        double* full = values_.data();
        const int* source = source_.data();
        ex.forEach(nnz_, nullptr, nullptr, [=] CS_LAMBDA(int k) { full[k] = values[source[k]]; });
        CS_SOLVER(cusolverSpDcsrcholFactor(handle_, n_, nnz_, descr_, full, rowStart_.data(), col_.data(), info_,
                                           work_.data()));
        // A pivot at or below zero: not positive definite (the host learns it here, and says it
        // through the status in the device's memory like the other executor).
        int position = -1;
        CS_SOLVER(cusolverSpDcsrcholZeroPivot(handle_, info_, 0.0, &position));
        const int ok = position < 0 ? 1 : 0;
        ex.serial(nullptr, [=] CS_LAMBDA() { *status = ok; });
    }

    void solve(CudaExecutor&, const double* rhs, double* x, int nrhs) {
        for (int c = 0; c < nrhs; ++c)
            CS_SOLVER(cusolverSpDcsrcholSolve(handle_, n_, rhs + (size_t)c * n_, x + (size_t)c * n_, info_, work_.data()));
    }

    void inverseTrailing(CudaExecutor& ex, int first, double* out) {
        const int n = n_, nt = n - first;
        double *unit = unit_.data(), *column = column_.data();
        for (int j = 0; j < nt; ++j) {
            const int at = first + j;
            ex.forEach(n, nullptr, nullptr, [=] CS_LAMBDA(int i) { unit[i] = i == at ? 1.0 : 0.0; });
            solve(ex, unit, column, 1);
            double* to = out + (size_t)j * nt;
            ex.forEach(nt, nullptr, nullptr, [=] CS_LAMBDA(int i) { to[i] = column[first + i]; });
        }
    }

    int size() const { return n_; }
    long long factorNonZeros() const { return -1; }   // csrchol keeps its factor to itself: unknown

private:
    cusolverSpHandle_t handle_ = nullptr;
    cusparseMatDescr_t descr_ = nullptr;
    csrcholInfo_t info_ = nullptr;
    int n_ = 0, nnz_ = 0;
    DeviceBuffer<int> rowStart_, col_, source_;
    DeviceBuffer<double> values_, unit_, column_;
    DeviceBuffer<char> work_;
};

class CudaDenseCholesky {
public:
    CudaDenseCholesky() = default;
    ~CudaDenseCholesky() {
        if (handle_) cusolverDnDestroy(handle_);
    }
    CudaDenseCholesky(const CudaDenseCholesky&) = delete;
    CudaDenseCholesky& operator=(const CudaDenseCholesky&) = delete;

    void factor(CudaExecutor& ex, int n, const double* a, int* status) {
        if (!handle_) CS_SOLVER(cusolverDnCreate(&handle_));
        CS_SOLVER(cusolverDnSetStream(handle_, ex.stream()));
        n_ = n;
        factor_.reserve((size_t)n * n);
        info_.reserve(1);
        ex.copy(factor_.data(), a, (size_t)n * n);   // potrf works in place; a stays the caller's
        int bytes = 0;
        CS_SOLVER(cusolverDnDpotrf_bufferSize(handle_, CUBLAS_FILL_MODE_LOWER, n, factor_.data(), n, &bytes));
        work_.reserve(bytes > 0 ? bytes : 1);
        CS_SOLVER(cusolverDnDpotrf(handle_, CUBLAS_FILL_MODE_LOWER, n, factor_.data(), n, work_.data(), bytes,
                                   info_.data()));
        const int* info = info_.data();
        ex.serial(nullptr, [=] CS_LAMBDA() { *status = *info == 0 ? 1 : 0; });
    }

    void solve(CudaExecutor& ex, const double* b, double* x, int nrhs) {
        ex.copy(x, b, (size_t)n_ * nrhs);   // potrs overwrites its right-hand sides
        CS_SOLVER(cusolverDnDpotrs(handle_, CUBLAS_FILL_MODE_LOWER, n_, nrhs, factor_.data(), n_, x, n_, info_.data()));
    }

private:
    cusolverDnHandle_t handle_ = nullptr;
    int n_ = 0;
    DeviceBuffer<double> factor_, work_;
    DeviceBuffer<int> info_;
};

}  // namespace cs::gpu
