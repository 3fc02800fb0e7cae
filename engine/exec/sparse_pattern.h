// The pattern of a sparse symmetric matrix as the factorization verbs take it (executor.h,
// SparseCholesky), and the host-side work on it that both executors share: checking it, and the
// full (both triangles) CSR form that cuSOLVER's csrchol needs.
//
// The verbs take the lower triangle compressed by columns (CSC), which is also the upper
// triangle compressed by rows (CSR): colStart (n + 1), rowIndex (nnz), rows strictly increasing
// within a column and the diagonal present. Entries above the diagonal may be stored and are
// ignored (CHOLMOD's convention for a lower symmetric matrix), so that a matrix of 3 x 3 blocks
// can keep its diagonal blocks whole (engine/solver/condensed_rows.cpp does). The matrix is factored in the order it is numbered in
// (fillReducingOrder, host_factor.h, gives a numbering). Everything here runs on the host, once
// per pattern, and is checked by tests/test_factor_verb.cpp in every build: the CUDA side's
// index work is then the same tested code, and only the library calls are left to the device.
#pragma once

#include <string>
#include <vector>

namespace cs {

// True when (colStart, rowIndex) is a lower triangle as above; otherwise false with a one-line reason.
inline bool checkLowerPattern(int n, const int* colStart, const int* rowIndex, std::string* why) {
    auto fail = [&](const std::string& text) {
        if (why) *why = "sparse factorization: " + text;
        return false;
    };
    if (n <= 0) return fail("empty matrix (n = " + std::to_string(n) + ")");
    if (!colStart || !rowIndex) return fail("no pattern given");
    if (colStart[0] != 0) return fail("colStart[0] is " + std::to_string(colStart[0]) + ", not 0");
    for (int j = 0; j < n; ++j) {
        const int begin = colStart[j], end = colStart[j + 1];
        if (end < begin) return fail("colStart decreases at column " + std::to_string(j));
        bool diagonal = false;
        for (int k = begin; k < end; ++k) {
            if (rowIndex[k] < 0 || rowIndex[k] >= n || (k > begin && rowIndex[k] <= rowIndex[k - 1]))
                return fail("column " + std::to_string(j) + ": row " + std::to_string(rowIndex[k]) +
                            " out of order or outside 0.." + std::to_string(n - 1));
            diagonal = diagonal || rowIndex[k] == j;
        }
        if (!diagonal) return fail("column " + std::to_string(j) + " has no diagonal entry");
    }
    return true;
}

// The full symmetric matrix in CSR (columns sorted within each row) from the lower triangle:
// entry k of the full matrix has the value of entry source[k] of the lower triangle's values.
struct FullPattern {
    std::vector<int> rowStart, col, source;
};

inline FullPattern fullFromLower(int n, const int* colStart, const int* rowIndex) {
    FullPattern f;
    f.rowStart.assign(n + 1, 0);
    // Row r holds A(r, j) for j <= r (column j's entry at row r) and A(r, i) = A(i, r) for i > r
    // (column r's entries below the diagonal); stored entries above the diagonal are skipped.
    for (int j = 0; j < n; ++j)
        for (int k = colStart[j]; k < colStart[j + 1]; ++k) {
            if (rowIndex[k] < j) continue;
            ++f.rowStart[rowIndex[k] + 1];
            if (rowIndex[k] != j) ++f.rowStart[j + 1];
        }
    for (int r = 0; r < n; ++r) f.rowStart[r + 1] += f.rowStart[r];
    f.col.resize(f.rowStart[n]);
    f.source.resize(f.rowStart[n]);
    std::vector<int> next(f.rowStart.begin(), f.rowStart.end() - 1);
    // Columns j <= r first, in increasing j (the outer loop), then i > r in increasing i: sorted.
    for (int j = 0; j < n; ++j)
        for (int k = colStart[j]; k < colStart[j + 1]; ++k) {
            if (rowIndex[k] < j) continue;
            const int at = next[rowIndex[k]]++;
            f.col[at] = j;
            f.source[at] = k;
        }
    for (int r = 0; r < n; ++r)
        for (int k = colStart[r]; k < colStart[r + 1]; ++k) {
            if (rowIndex[k] <= r) continue;
            const int at = next[r]++;
            f.col[at] = rowIndex[k];
            f.source[at] = k;
        }
    return f;
}

}  // namespace cs
