// The factorization verbs of the host executor (executor.h: SparseCholesky, DenseCholesky).
//
//   HostSparseCholesky   CHOLMOD's supernodal L L^T (Debian libsuitesparse-dev), in the order the
//                        matrix is numbered in (no reordering of its own, no postorder), so that
//                        a caller that numbers some unknowns last finds their Schur complement
//                        in the factor's trailing block (inverseTrailing)
//   HostDenseCholesky    Eigen's LLT (a small dense SPD matrix: the hard rows' Schur system)
// and fillReducingOrder, the numbering both executors factor in (CHOLMOD's CAMD: approximate
// minimum degree, optionally with a set of unknowns constrained to come last).
//
// The CUDA side (gpu/cuda_factor.cuh: cuSOLVER csrchol and potrf/potrs) has the same methods
// with the CUDA executor. Values, right-hand sides, solutions and statuses are in the executor's
// memory; the pattern given to analyse is a host array on both sides (it is built on the host,
// once per mesh or per change of the rows' bodies).
//
// CHOLMOD's headers stay in host_factor.cpp (its include path is the engine's, private).
#pragma once

#include <memory>
#include <string>

namespace cs {

class HostExecutor;

// order[k] = the unknown eliminated k-th, for the symmetric pattern (lower triangle, CSC as in
// sparse_pattern.h); lastSet (nullable): unknowns with lastSet[i] = 1 are all ordered after
// those with 0. False (with a one-line reason) if CHOLMOD fails (out of memory).
bool fillReducingOrder(int n, const int* colStart, const int* rowIndex, const int* lastSet, int* order,
                       std::string* why);

class HostSparseCholesky {
public:
    HostSparseCholesky();
    ~HostSparseCholesky();
    HostSparseCholesky(const HostSparseCholesky&) = delete;
    HostSparseCholesky& operator=(const HostSparseCholesky&) = delete;

    // The symbolic factorization of a pattern (checkLowerPattern's form; kept by copy). False with
    // a one-line reason on a malformed pattern or a CHOLMOD failure.
    bool analyse(HostExecutor& ex, int n, const int* colStart, const int* rowIndex, std::string* why);
    // The numeric factorization of values (nnz, in the pattern's order). *status = 1, or 0 when
    // the matrix is not positive definite (then solve must not be called).
    void factor(HostExecutor& ex, const double* values, int* status);
    // x = A^-1 rhs for nrhs right-hand sides (n x nrhs, column-major; x may not alias rhs).
    void solve(HostExecutor& ex, const double* rhs, double* x, int nrhs);
    // out = (A^-1) over the unknowns first .. n-1 (dense, (n - first)^2, column-major): from the
    // factor's trailing block L_TT, out = L_TT^-T L_TT^-1 (the trailing block's Schur complement
    // is L_TT L_TT^T), with no solve over the whole factor.
    void inverseTrailing(HostExecutor& ex, int first, double* out);

    int size() const;
    long long factorNonZeros() const;   // entries of L (after analyse)

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

class HostDenseCholesky {
public:
    HostDenseCholesky();
    ~HostDenseCholesky();
    HostDenseCholesky(const HostDenseCholesky&) = delete;
    HostDenseCholesky& operator=(const HostDenseCholesky&) = delete;

    // L L^T = A (n x n, column-major, lower triangle read); *status = 1, or 0 if not positive definite.
    void factor(HostExecutor& ex, int n, const double* a, int* status);
    // x = A^-1 b for nrhs right-hand sides (n x nrhs, column-major).
    void solve(HostExecutor& ex, const double* b, double* x, int nrhs);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cs
