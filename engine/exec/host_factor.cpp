// The host executor's factorization verbs over CHOLMOD and Eigen (host_factor.h).
#include "engine/exec/host_factor.h"

#include <cholmod.h>
#include <dlfcn.h>

#include <Eigen/Dense>
#include <algorithm>
#include <limits>
#include <vector>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "engine/exec/host_executor.h"
#include "engine/exec/sparse_pattern.h"

namespace cs {

namespace {

// CHOLMOD 3 (Debian 12) runs parts of its supernodal factorization on 4 OpenMP threads whatever
// the caller asks (num_threads(CHOLMOD_OMP_NUM_THREADS) in the library): measured on
// pneunet_finger's K, 17-21 ms of process CPU per factorization against 3.6-3.9 ms serial. The
// target is one core, so the calls into CHOLMOD run with nested parallelism off (max active levels
// 0 makes every parallel region in them run on the calling thread; the setting is the calling
// thread's and is restored after).
class SerialOpenMp {
public:
#if defined(_OPENMP)
    SerialOpenMp() : saved_(omp_get_max_active_levels()) { omp_set_max_active_levels(0); }
    ~SerialOpenMp() { omp_set_max_active_levels(saved_); }

private:
    int saved_;
#endif
};

// The supernodal factorization's dense kernels are the BLAS (install-deps.sh installs OpenBLAS's
// serial build). A threaded OpenBLAS, where installed instead, is set to one thread: the target
// is one core. Looked up at run time, since which BLAS libblas.so.3 is is the system's choice.
void singleThreadedBlas() {
    static const bool done = [] {
        using SetThreads = void (*)(int);
        if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
        return true;
    }();
    (void)done;
}

// CHOLMOD's workspace and settings: the matrix is numbered in its elimination order already
// (fillReducingOrder): keep it, no postorder, which keeps the unknowns numbered last last;
// supernodal always (one way to read the trailing block).
struct CholmodCommon {
    cholmod_common c;
    CholmodCommon() {
        cholmod_start(&c);
        c.print = 0;   // failures are reported through the verbs' statuses and reasons
        c.nmethods = 1;
        c.method[0].ordering = CHOLMOD_NATURAL;
        c.postorder = 0;
        c.supernodal = CHOLMOD_SUPERNODAL;
    }
    ~CholmodCommon() { cholmod_finish(&c); }
    CholmodCommon(const CholmodCommon&) = delete;
    CholmodCommon& operator=(const CholmodCommon&) = delete;
};

// CHOLMOD's view of a compressed lower triangle (no copy): its values, or its pattern alone.
cholmod_sparse lowerView(int n, int* colStart, int* rowIndex, const double* values) {
    cholmod_sparse v{};
    v.nrow = v.ncol = (size_t)n;
    v.nzmax = (size_t)colStart[n];
    v.p = colStart;
    v.i = rowIndex;
    v.x = const_cast<double*>(values);   // CHOLMOD reads A, never writes it
    v.stype = -1;
    v.itype = CHOLMOD_INT;
    v.xtype = values ? CHOLMOD_REAL : CHOLMOD_PATTERN;
    v.dtype = CHOLMOD_DOUBLE;
    v.sorted = 1;
    v.packed = 1;
    return v;
}

}  // namespace

bool fillReducingOrder(int n, const int* colStart, const int* rowIndex, const int* lastSet, int* order,
                       std::string* why) {
    if (!checkLowerPattern(n, colStart, rowIndex, why)) return false;
    CholmodCommon cholmod;
    std::vector<int> p(colStart, colStart + n + 1), i(rowIndex, rowIndex + colStart[n]);
    cholmod_sparse g = lowerView(n, p.data(), i.data(), nullptr);
    std::vector<int> set;
    if (lastSet) set.assign(lastSet, lastSet + n);
    SerialOpenMp serial;
    if (!cholmod_camd(&g, nullptr, 0, lastSet ? set.data() : nullptr, order, &cholmod.c)) {
        if (why) *why = "sparse factorization: CHOLMOD's ordering failed (status " + std::to_string(cholmod.c.status) + ")";
        return false;
    }
    return true;
}

// ---- sparse ----

struct HostSparseCholesky::Impl {
    CholmodCommon cholmod;
    int n = 0;
    std::vector<int> colStart, rowIndex;
    const double* values = nullptr;    // the last factor's values (for nothing but the view)
    cholmod_factor* factor = nullptr;  // supernodal L L^T, analysed once per pattern
    cholmod_dense* solveX = nullptr;   // cholmod_solve2's result and workspaces, reused
    cholmod_dense* solveY = nullptr;
    cholmod_dense* solveE = nullptr;
    long long factorNonZeros = 0;
    Eigen::MatrixXd Ltt, inv;          // inverseTrailing's copy of the trailing block, and its inverse

    ~Impl() {
        cholmod_free_factor(&factor, &cholmod.c);
        cholmod_free_dense(&solveX, &cholmod.c);
        cholmod_free_dense(&solveY, &cholmod.c);
        cholmod_free_dense(&solveE, &cholmod.c);
    }
};

HostSparseCholesky::HostSparseCholesky() : impl_(std::make_unique<Impl>()) {}
HostSparseCholesky::~HostSparseCholesky() = default;
int HostSparseCholesky::size() const { return impl_->n; }
long long HostSparseCholesky::factorNonZeros() const { return impl_->factorNonZeros; }

bool HostSparseCholesky::analyse(HostExecutor&, int n, const int* colStart, const int* rowIndex, std::string* why) {
    Impl& m = *impl_;
    cholmod_free_factor(&m.factor, &m.cholmod.c);
    m.n = 0;
    if (!checkLowerPattern(n, colStart, rowIndex, why)) return false;
    m.colStart.assign(colStart, colStart + n + 1);
    m.rowIndex.assign(rowIndex, rowIndex + colStart[n]);
    singleThreadedBlas();
    SerialOpenMp serial;
    cholmod_sparse a = lowerView(n, m.colStart.data(), m.rowIndex.data(), nullptr);
    m.factor = cholmod_analyze(&a, &m.cholmod.c);
    if (!m.factor) {
        if (why) *why = "sparse factorization: CHOLMOD's analysis failed (status " + std::to_string(m.cholmod.c.status) + ")";
        return false;
    }
    m.n = n;
    m.factorNonZeros = (long long)m.cholmod.c.lnz;
    return true;
}

void HostSparseCholesky::factor(HostExecutor&, const double* values, int* status) {
    Impl& m = *impl_;
    *status = 0;
    if (!m.factor) return;
    singleThreadedBlas();
    SerialOpenMp serial;
    cholmod_sparse a = lowerView(m.n, m.colStart.data(), m.rowIndex.data(), values);
    // CHOLMOD returns true on a matrix that is not positive definite, with status NOT_POSDEF.
    *status = cholmod_factorize(&a, m.factor, &m.cholmod.c) && m.cholmod.c.status == CHOLMOD_OK ? 1 : 0;
}

void HostSparseCholesky::solve(HostExecutor&, const double* rhs, double* x, int nrhs) {
    Impl& m = *impl_;
    cholmod_dense b{};
    b.nrow = b.d = (size_t)m.n;
    b.ncol = (size_t)nrhs;
    b.nzmax = b.nrow * b.ncol;
    b.x = const_cast<double*>(rhs);   // read only
    b.xtype = CHOLMOD_REAL;
    b.dtype = CHOLMOD_DOUBLE;
    SerialOpenMp serial;
    if (!cholmod_solve2(CHOLMOD_A, m.factor, &b, nullptr, &m.solveX, nullptr, &m.solveY, &m.solveE, &m.cholmod.c)) {
        // Only out of memory: NaN, as a failed factor's use would give (the caller's checks see it).
        std::fill(x, x + (size_t)m.n * nrhs, std::numeric_limits<double>::quiet_NaN());
        return;
    }
    const double* from = static_cast<const double*>(m.solveX->x);
    std::copy(from, from + (size_t)m.n * nrhs, x);
}

void HostSparseCholesky::inverseTrailing(HostExecutor&, int first, double* out) {
    Impl& m = *impl_;
    const int nt = m.n - first;
    if (nt <= 0) return;
    // Supernode s holds columns super[s] .. super[s+1]-1 as a dense column-major block of
    // pi[s+1] - pi[s] rows (their indices at Ls + pi[s]) starting at Lx + px[s]; a column
    // past first has rows past first only (lower triangle).
    const cholmod_factor& L = *m.factor;
    const int* super = static_cast<const int*>(L.super);
    const int* pi = static_cast<const int*>(L.pi);
    const int* px = static_cast<const int*>(L.px);
    const int* ls = static_cast<const int*>(L.s);
    const double* lx = static_cast<const double*>(L.x);
    m.Ltt.setZero(nt, nt);
    for (size_t sn = 0; sn < L.nsuper; ++sn) {
        const int k1 = super[sn], k2 = super[sn + 1], rows = pi[sn + 1] - pi[sn];
        if (k2 <= first) continue;
        for (int col = std::max(k1, first); col < k2; ++col) {
            const int j = col - k1;   // within the supernode; its diagonal is at row j
            for (int r = j; r < rows; ++r) m.Ltt(ls[pi[sn] + r] - first, col - first) = lx[px[sn] + r + (size_t)j * rows];
        }
    }
    Eigen::Map<Eigen::MatrixXd> x(out, nt, nt);
    m.inv.setIdentity(nt, nt);
    m.Ltt.triangularView<Eigen::Lower>().solveInPlace(m.inv);   // L_TT^-1
    x.noalias() = m.inv.transpose() * m.inv.triangularView<Eigen::Lower>();   // L^-T L^-1
}

// ---- dense ----

struct HostDenseCholesky::Impl {
    Eigen::LLT<Eigen::MatrixXd> llt;
    int n = 0;
};

HostDenseCholesky::HostDenseCholesky() : impl_(std::make_unique<Impl>()) {}
HostDenseCholesky::~HostDenseCholesky() = default;

void HostDenseCholesky::factor(HostExecutor&, int n, const double* a, int* status) {
    Impl& m = *impl_;
    m.n = n;
    m.llt.compute(Eigen::Map<const Eigen::MatrixXd>(a, n, n));
    *status = m.llt.info() == Eigen::Success ? 1 : 0;
}

void HostDenseCholesky::solve(HostExecutor&, const double* b, double* x, int nrhs) {
    Impl& m = *impl_;
    // One right-hand side through a vector: Eigen's triangular solves take another path (another
    // order of sums) for a matrix of one column than for a vector.
    if (nrhs == 1) Eigen::Map<Eigen::VectorXd>(x, m.n) = m.llt.solve(Eigen::Map<const Eigen::VectorXd>(b, m.n));
    else Eigen::Map<Eigen::MatrixXd>(x, m.n, nrhs) = m.llt.solve(Eigen::Map<const Eigen::MatrixXd>(b, m.n, nrhs));
}

}  // namespace cs
