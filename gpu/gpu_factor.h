// The CUDA executor's factorization verbs (gpu/cuda_factor.cuh) called from host code, for
// tests/test_factor_verb.cpp: host arrays in, host arrays out, the work on the device. With no
// usable GPU, or a build without CUDA, each call returns false with a one-line reason.
#pragma once

#include <string>
#include <vector>

namespace cs {

// A = the lower triangle (colStart, rowIndex, values; sparse_pattern.h's form), in its own
// numbering: status (1 factored, 0 not positive definite), then (when 1) x = A^-1 rhs for nrhs
// right-hand sides and trailing = A^-1 over the unknowns first .. n-1 (column-major).
bool gpuSparseCholeskyRun(int n, const int* colStart, const int* rowIndex, const double* values, const double* rhs,
                          int nrhs, int first, int& status, std::vector<double>& x, std::vector<double>& trailing,
                          std::string* why);
// a: n x n column-major (lower triangle read); x = a^-1 b for nrhs right-hand sides.
bool gpuDenseCholeskyRun(int n, const double* a, const double* b, int nrhs, int& status, std::vector<double>& x,
                         std::string* why);

#if !defined(CS_HAVE_CUDA) && !defined(__CUDACC__)
inline bool gpuSparseCholeskyRun(int, const int*, const int*, const double*, const double*, int, int, int&,
                                 std::vector<double>&, std::vector<double>&, std::string* why) {
    if (why) *why = "built without CUDA (no nvcc at configure time)";
    return false;
}
inline bool gpuDenseCholeskyRun(int, const double*, const double*, int, int&, std::vector<double>&, std::string* why) {
    if (why) *why = "built without CUDA (no nvcc at configure time)";
    return false;
}
#endif

}  // namespace cs
