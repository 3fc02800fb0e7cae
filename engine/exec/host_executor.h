// HostExecutor: the executor verbs of executor.h as plain loops on the CPU.
//
// It runs the device pipeline in every build and every test (no nvcc, no GPU), so the pipeline's
// control flow (counts, capacities, growth and re-runs, compaction, the solver's loops and gates)
// is checked where developers and CI can run it. Two choices make it a good checker:
//  - sums are added in the CPU backend's orders (SumOrder), so the pipeline on the host gives the
//    CPU backend's bits wherever it computes the same thing (tests/test_exec_parity.cpp);
//  - new buffer storage is filled with 0xFF bytes (NaN for reals, -1 for ints), so a read of an
//    element no stage wrote shows up as a NaN or an out-of-range index instead of passing
//    silently as a zero (what compute-sanitizer's initcheck finds on the device).
// forEach runs its loop with OpenMP above kHostParallel elements (hostLoop); every functor of the
// pipeline writes only its own element (or sets flags and maxima with the atomics of executor.h), so the
// results do not depend on the thread count. recordEveryIteration makes stopped() answer false, as
// the device does: every loop iteration and every conditional stretch (setGate) is then run with
// its gates closed instead of skipped, so the tests check on the host that the device's control
// flow gives the same bits (tests/test_exec_parity.cpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/exec/host_factor.h"
#include "engine/exec/host_row_system.h"
#include "engine/fem/fem_rows_hd.h"
#include "engine/fem/tet_math_hd.h"

namespace cs {

// out[t] = svd3(F[t]) for t < n, several tets at once, bitwise svd3's (engine/fem/fem_lanes.h
// svd3Many; defined in pipeline.cpp, which g++ compiles: the lanes are GCC vector extensions).
void hostTetSvds(const Mat3* F, int n, TetSvd* out);
// femTetWarmImpulses(r[l], stored[l], lambda[l]) for l < m, several tets at once, bitwise
// (fem_lanes.h femTetWarmImpulsesLanes; defined in pipeline.cpp as hostTetSvds).
void hostTetWarmImpulses(const FemTetStepRows* r, const Real* const* stored, Real (*lambda)[kFemMaxRows], int m);

template <class T>
class HostBuffer {
public:
    T* data() { return v_.data(); }
    const T* data() const { return v_.data(); }
    size_t capacity() const { return v_.size(); }
    // At least n elements; existing ones are kept, new ones poisoned.
    void reserve(size_t n) {
        if (n <= v_.size()) return;
        const size_t old = v_.size();
        v_.resize(n);
        std::memset(static_cast<void*>(v_.data() + old), 0xFF, (n - old) * sizeof(T));
    }

private:
    std::vector<T> v_;
};

class HostExecutor {
public:
    template <class T>
    using Buffer = HostBuffer<T>;
    static constexpr bool kHasAtomicScatter = false;   // the scatter is always the sorted, deterministic one
    static constexpr int kHostParallel = 4096;
    using SparseCholesky = HostSparseCholesky;   // CHOLMOD (host_factor.h)
    using DenseCholesky = HostDenseCholesky;     // Eigen LLT
    // The solve's scatter and product by runs (host_row_system.h) instead of the generic
    // per-body and per-row stages: the same bits, the CPU solvers' speed (pipeline_solve.h).
    static constexpr bool kRowKernels = true;

    bool recordEveryIteration = false;   // stopped() answers false, as on the device

    template <class F>
    void forEach(int n, const int* count, const int* gate, const F& f) {
        if ((gate && !*gate) || gatedOff()) return;
        const int m = count ? std::min(n, *count) : n;
        hostLoop(m, m > kHostParallel, f);
    }
    template <class F>
    void serial(const int* gate, const F& f) {
        if ((!gate || *gate) && !gatedOff()) f();
    }
    template <class T, class Term>
    void sum(const int* count, const int* gate, SumOrder order, T* out, const Term& term) {
        if ((gate && !*gate) || gatedOff()) return;
        const int n = *count;
        T total{};
        for (int k = 0; k < order.blocks; ++k) {
            const int begin = int((long long)n * k / order.blocks), end = int((long long)n * (k + 1) / order.blocks);
            T block{}, run{};
            for (int i = begin; i < end; ++i) {
                if (order.segmentHead && i != begin && order.segmentHead[i]) {
                    block = block + run;
                    run = T{};
                }
                run = run + term(i);
            }
            total = total + (block + run);
        }
        *out = total;
    }
    // forEach(count, gate, f), then *out[j] = sum(count, gate, kBlockedSum, term_j) for the terms
    // given (out1 null: one), in one pass: each element's terms read what f(i) wrote there only.
    // The sums are sum()'s to the bit: fixed blocks, each from zero in index order, in block order.
    template <class F, class Term0, class Term1>
    void forEachSums(const int* count, const int* gate, const F& f, Real* out0, const Term0& term0, Real* out1,
                     const Term1& term1) {
        blockSums(count, gate, out0, out1, [&](int begin, int end, Real* acc) {
            Real run0 = 0, run1 = 0;
            for (int i = begin; i < end; ++i) {
                f(i);
                run0 = run0 + term0(i);
                if (out1) run1 = run1 + term1(i);
            }
            acc[0] = run0;
            acc[1] = run1;
        });
    }
    // pass(begin, end, acc) over the kCpuSumBlocks fixed blocks of [0, *count), gated as forEach;
    // *out0 (and *out1, unless null) = the blocks' acc[0] (acc[1]) added in block order: a vector
    // pass and its dot products written over a block of rows (the CPU solvers' own passes,
    // krylov_passes.h), summed as forEachSums.
    template <class Pass>
    void blockSums(const int* count, const int* gate, Real* out0, Real* out1, const Pass& pass) {
        if ((gate && !*gate) || gatedOff()) return;
        const int n = *count;
        Real partial[kCpuSumBlocks][2];
        hostLoop(kCpuSumBlocks, n > kHostParallel, [&](int k) {
            partial[k][0] = partial[k][1] = 0;
            pass(int((long long)n * k / kCpuSumBlocks), int((long long)n * (k + 1) / kCpuSumBlocks), partial[k]);
        });
        Real total0 = 0, total1 = 0;
        for (int k = 0; k < kCpuSumBlocks; ++k) {
            total0 = total0 + (Real(0) + partial[k][0]);
            total1 = total1 + (Real(0) + partial[k][1]);
        }
        *out0 = total0;
        if (out1) *out1 = total1;
    }
    template <class Term>
    void max(const int* count, const int* gate, Real* out, const Term& term) {
        if ((gate && !*gate) || gatedOff()) return;
        Real m = 0;
        for (int i = 0, n = *count; i < n; ++i) m = std::fmax(m, term(i));
        *out = m;
    }
    void exclusiveScan(const int* in, int* out, int n) {
        int s = 0;
        for (int i = 0; i < n; ++i) {
            const int v = in[i];
            out[i] = s;
            s += v;
        }
    }
    template <class K, class V>
    void sortPairs(const K* keysIn, const V* valuesIn, K* keysOut, V* valuesOut, int n) {
        order_.resize(n);
        std::iota(order_.begin(), order_.end(), 0);
        std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return keysIn[a] < keysIn[b]; });
        for (int i = 0; i < n; ++i) {
            keysOut[i] = keysIn[order_[i]];
            valuesOut[i] = valuesIn[order_[i]];
        }
    }
    void sortKeys(const uint64_t* in, uint64_t* out, int n) {
        std::copy(in, in + n, out);
        std::sort(out, out + n);
    }
    template <class T>
    void copy(T* to, const T* from, size_t n) {
        if (!gatedOff()) std::copy(from, from + n, to);
    }
    template <class T>
    void upload(T* to, const T* host, size_t n) { std::copy(host, host + n, to); }
    template <class T>
    void download(T* host, const T* from, size_t n) { std::copy(from, from + n, host); }
    void sync() {}

    void stamp(int k) {
        if ((int)stamps_.size() <= k) stamps_.resize(k + 1);
        stamps_[k] = std::chrono::steady_clock::now();
    }
    double seconds(int a, int b) const { return std::chrono::duration<double>(stamps_[b] - stamps_[a]).count(); }

    template <class Signature, class Fn>
    void record(const Signature&, const Fn& fn) { fn(); }
    bool stopped(const int* flag) const { return !recordEveryIteration && *flag == 0; }

    // Every tet's svd3 of gradient(t) (its F) for t < n, computed several tets at once
    // (hostTetSvds, the same bits); slot 0 or 1, valid until that slot is asked for again. Null
    // where the stretch is gated off (setGate): the forEach that reads it does not run either.
    // A tet whose F is bitwise the one either slot last held for it keeps that slot's SVD (svd3
    // is a function of F's bits alone): the energy guard's start SVDs (slot 0) are the rows', and
    // the next step's rows' (slot 0) are the guard's end SVDs (slot 1) wherever the integration
    // left the nodes at the x + h v+ the guard took, as the CPU's FemTetCache (fem_tet_cache.h)
    // does by the positions. One SVD per tet and step instead of three; kept in this executor,
    // which is the pipeline's own (PipelineWorld::ex_).
    template <class Gradient>
    const TetSvd* tetSvds(int slot, int n, const Gradient& gradient) {
        if (gatedOff()) return nullptr;
        TetSvdSlot &s = tetSlot_[slot], &o = tetSlot_[1 - slot];
        tetF_.resize(n);
        for (int t = 0; t < n; ++t) tetF_[t] = gradient(t);
        const int own = std::min(n, int(s.F.size())), other = std::min(n, int(o.F.size()));
        s.svd.resize(n);
        tetMissing_.clear();
        tetMissingF_.clear();
        for (int t = 0; t < n; ++t) {
            if (t < own && std::memcmp(&s.F[t], &tetF_[t], sizeof(Mat3)) == 0) continue;
            if (t < other && std::memcmp(&o.F[t], &tetF_[t], sizeof(Mat3)) == 0) {
                s.svd[t] = o.svd[t];
                continue;
            }
            tetMissing_.push_back(t);
            tetMissingF_.push_back(tetF_[t]);
        }
        tetMissingSvd_.resize(tetMissing_.size());
        hostTetSvds(tetMissingF_.data(), int(tetMissing_.size()), tetMissingSvd_.data());
        for (size_t k = 0; k < tetMissing_.size(); ++k) s.svd[tetMissing_[k]] = tetMissingSvd_[k];
        std::swap(s.F, tetF_);
        return s.svd.data();
    }

    // f(t0, m) for the blocks [t0, t0 + m) of at most kTetBlock tets that cover [0, n), gated as
    // forEach (what f writes is its own tets' only); with tetWarmImpulses, the FEM rows' warm
    // impulses several tets at once (pipeline_fem.h, as the CPU's buildFemRows).
    static constexpr int kTetBlock = 8;
    template <class F>
    void forEachTetBlock(int n, const F& f) {
        if (gatedOff()) return;
        const int blocks = (n + kTetBlock - 1) / kTetBlock;
        hostLoop(blocks, n > kHostParallel, [&](int k) { f(k * kTetBlock, std::min(kTetBlock, n - k * kTetBlock)); });
    }
    static void tetWarmImpulses(const FemTetStepRows* r, const Real* const* stored, Real (*lambda)[kFemMaxRows], int m) {
        hostTetWarmImpulses(r, stored, lambda, m);
    }

    // The row kernels (kRowKernels): prepareRows once the step's rows are set (recordSolveSetup:
    // *count rows, runHead their runs), then the scatter w = H^-1 J^T x over `bodies` bodies and
    // the product y = A x or b - A x with *out = y . v (v null: y . y), gated as forEach.
    void prepareRows(const int* runHead, const int* count) {
        if (!gatedOff()) rowSystem_.prepare(runHead, *count);
    }
    void scatterRows(const RowSystemView& s, int bodies, const Real* x, Spatial* w, const int* gate) {
        if ((gate && !*gate) || gatedOff()) return;
        rowSystem_.scatter(s, bodies, x, w);
    }
    void productRows(const RowSystemView& s, const Spatial* w, const Real* x, const Real* b, Real* y, const Real* v,
                     Real* out, const int* gate) {
        if ((gate && !*gate) || gatedOff()) return;
        *out = rowSystem_.product(s, w, x, b, y, v);
    }
    void setGate(const int* flag) { gate_ = flag; }

private:
    bool gatedOff() const { return gate_ && !*gate_; }

    const int* gate_ = nullptr;
    HostRowSystem rowSystem_;
    struct TetSvdSlot {
        std::vector<Mat3> F;   // the F of each tet's svd
        std::vector<TetSvd> svd;
    };
    TetSvdSlot tetSlot_[2];
    std::vector<Mat3> tetF_, tetMissingF_;
    std::vector<int> tetMissing_;
    std::vector<TetSvd> tetMissingSvd_;
    std::vector<int> order_;
    std::vector<std::chrono::steady_clock::time_point> stamps_;
};

}  // namespace cs
