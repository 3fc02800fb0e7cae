// The factorization verbs of the executors (engine/exec/executor.h: SparseCholesky,
// DenseCholesky), each side against a dense Eigen solve of the same matrix.
//
// The matrices are random SPD with a mesh's pattern: nodes on a 3D grid, each coupled to its
// grid neighbours by a random positive semi-definite 6 x 6 "element" (3 x 3 blocks), plus a
// positive mass on the diagonal: a few hundred DOFs, as the FEM node-space matrix K of
// engine/solver/condensed_rows.h. The nodes are numbered by fillReducingOrder with some of
// them constrained to come last (as CondensedRows orders the nodes that hard rows touch), so
// inverseTrailing is checked on that block.
// The host side (CHOLMOD, Eigen) runs in every build. The CUDA side (cuSOLVER) runs through
// gpu/gpu_factor.h on the same problems when a GPU is present, and says SKIP otherwise; its
// host-side index work (the pattern check, the full CSR and its value map) is checked here on
// the CPU in every build.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <vector>

#include "engine/exec/host_executor.h"
#include "engine/exec/sparse_pattern.h"
#include "gpu/gpu_factor.h"

using namespace cs;

namespace {

// A random SPD matrix with a grid mesh's 3 x 3 block pattern, numbered by fillReducingOrder.
struct Problem {
    int n = 0, first = 0;                 // DOFs; the trailing (constrained-last) DOFs start at first
    std::vector<int> colStart, rowIndex;  // lower triangle, CSC
    std::vector<double> values;
    Eigen::MatrixXd dense;                // the same matrix, dense (both triangles)
};

struct Mesh {
    int nodes = 0;
    std::vector<std::pair<int, int>> edges;   // node pairs (a < b) coupled by an element
    std::vector<int> order;                   // order[k] = the mesh node numbered k
    std::vector<int> rank;                    // rank[node] = its number
    int trailingNodes = 0;
};

Mesh gridMesh(int nx, int ny, int nz, int trailingNodes) {
    Mesh m;
    m.nodes = nx * ny * nz;
    auto id = [&](int x, int y, int z) { return (z * ny + y) * nx + x; };
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x)
                for (int dz = 0; dz <= 1; ++dz)
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            // half of the 26 neighbours (each pair once): a tet mesh's node graph is as dense
                            if (dz == 0 && (dy < 0 || (dy == 0 && dx <= 0))) continue;
                            const int X = x + dx, Y = y + dy, Z = z + dz;
                            if (X < 0 || Y < 0 || X >= nx || Y >= ny || Z >= nz) continue;
                            m.edges.push_back({id(x, y, z), id(X, Y, Z)});
                        }
    // The node graph's lower triangle, then its fill-reducing numbering with the top layer's first
    // trailingNodes nodes last.
    std::vector<std::vector<int>> below(m.nodes);
    for (int q = 0; q < m.nodes; ++q) below[q].push_back(q);
    for (auto [a, b] : m.edges) below[a].push_back(b);
    std::vector<int> colStart{0}, rowIndex;
    for (auto& col : below) {
        std::sort(col.begin(), col.end());
        rowIndex.insert(rowIndex.end(), col.begin(), col.end());
        colStart.push_back((int)rowIndex.size());
    }
    std::vector<int> last(m.nodes, 0);
    for (int k = 0; k < trailingNodes; ++k) last[m.nodes - 1 - k] = 1;
    m.order.resize(m.nodes);
    std::string why;
    REQUIRE_MESSAGE(fillReducingOrder(m.nodes, colStart.data(), rowIndex.data(), last.data(), m.order.data(), &why), why);
    m.rank.assign(m.nodes, -1);
    for (int k = 0; k < m.nodes; ++k) m.rank[m.order[k]] = k;
    for (int k = m.nodes - trailingNodes; k < m.nodes; ++k) REQUIRE(last[m.order[k]] == 1);   // the constraint held
    m.trailingNodes = trailingNodes;
    return m;
}

// Random values on the mesh's pattern: mass * I per node, plus G^T G per element (G 3 x 6 random).
Problem randomSpd(const Mesh& mesh, unsigned seed, double massScale) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0), mass(0.5, 1.5);
    Problem p;
    p.n = 3 * mesh.nodes;
    p.first = 3 * (mesh.nodes - mesh.trailingNodes);
    p.dense.setZero(p.n, p.n);
    for (int q = 0; q < mesh.nodes; ++q)
        for (int c = 0; c < 3; ++c) p.dense(3 * q + c, 3 * q + c) += massScale * mass(rng);
    for (auto [a, b] : mesh.edges) {
        Eigen::Matrix<double, 3, 6> g;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 6; ++c) g(r, c) = u(rng);
        const Eigen::Matrix<double, 6, 6> e = g.transpose() * g;
        const int dof[2] = {3 * mesh.rank[a], 3 * mesh.rank[b]};
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) p.dense.block<3, 3>(dof[i], dof[j]) += e.block<3, 3>(3 * i, 3 * j);
    }
    // The lower triangle of the block pattern, every entry of each coupled 3 x 3 block, the
    // diagonal blocks whole (their upper entries stored and ignored, as CondensedRows stores K).
    std::vector<std::vector<int>> below(mesh.nodes);
    for (int q = 0; q < mesh.nodes; ++q) below[q].push_back(q);
    for (auto [a, b] : mesh.edges) {
        const int ra = mesh.rank[a], rb = mesh.rank[b];
        below[std::min(ra, rb)].push_back(std::max(ra, rb));
    }
    p.colStart.push_back(0);
    for (int q = 0; q < mesh.nodes; ++q) {
        auto& col = below[q];
        std::sort(col.begin(), col.end());
        for (int c = 0; c < 3; ++c) {
            for (int node : col)
                for (int r = 0; r < 3; ++r) {
                    const int row = 3 * node + r, column = 3 * q + c;
                    p.rowIndex.push_back(row);
                    p.values.push_back(p.dense(row, column));
                }
            p.colStart.push_back((int)p.rowIndex.size());
        }
    }
    return p;
}

Eigen::MatrixXd randomRhs(int n, int count, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Eigen::MatrixXd b(n, count);
    for (int j = 0; j < count; ++j)
        for (int i = 0; i < n; ++i) b(i, j) = u(rng);
    return b;
}

double relativeError(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
    return (got - want).norm() / want.norm();
}

// One side's answer on a problem: its status, the solutions and A^-1 over the trailing DOFs.
struct SparseAnswer {
    int status = -1;
    Eigen::MatrixXd x, trailing;
};

SparseAnswer hostSparse(HostSparseCholesky& chol, HostExecutor& ex, const Problem& p, const Eigen::MatrixXd& rhs) {
    SparseAnswer a;
    chol.factor(ex, p.values.data(), &a.status);
    if (a.status != 1) return a;
    a.x.resize(p.n, rhs.cols());
    chol.solve(ex, rhs.data(), a.x.data(), (int)rhs.cols());
    a.trailing.resize(p.n - p.first, p.n - p.first);
    chol.inverseTrailing(ex, p.first, a.trailing.data());
    return a;
}

// The dense reference: Eigen's LLT of the full matrix.
void checkAgainstDense(const char* side, const Problem& p, const Eigen::MatrixXd& rhs, const SparseAnswer& a) {
    CAPTURE(side);
    REQUIRE(a.status == 1);
    const Eigen::LLT<Eigen::MatrixXd> llt(p.dense);
    REQUIRE(llt.info() == Eigen::Success);
    const Eigen::MatrixXd x = llt.solve(rhs);
    const int nt = p.n - p.first;
    const Eigen::MatrixXd inverse = llt.solve(Eigen::MatrixXd::Identity(p.n, p.n));
    const double ex = relativeError(a.x, x), et = relativeError(a.trailing, inverse.bottomRightCorner(nt, nt));
    MESSAGE(side << ": " << p.n << " DOFs, " << p.values.size() << " lower entries, " << rhs.cols()
                 << " right-hand sides: relative error " << ex << " (solve), " << et << " (A^-1 over the last " << nt
                 << " DOFs)");
    CHECK(ex < 1e-11);
    CHECK(et < 1e-11);
    // And the residual of the verb's own solution, independent of the reference's rounding.
    CHECK((p.dense * a.x - rhs).norm() / rhs.norm() < 1e-11);
}

}  // namespace

TEST_CASE("sparse pattern: checks and the full CSR form the CUDA side factors") {
    const Mesh mesh = gridMesh(4, 3, 3, 4);
    const Problem p = randomSpd(mesh, 7, 1.0);
    std::string why;
    CHECK(checkLowerPattern(p.n, p.colStart.data(), p.rowIndex.data(), &why));
    // The full CSR through its value map is the dense matrix, entry for entry, bits and all.
    const FullPattern full = fullFromLower(p.n, p.colStart.data(), p.rowIndex.data());
    int lower = 0;   // stored entries on or below the diagonal
    for (int j = 0; j < p.n; ++j)
        for (int k = p.colStart[j]; k < p.colStart[j + 1]; ++k) lower += p.rowIndex[k] >= j;
    REQUIRE(lower < (int)p.values.size());   // the diagonal blocks' upper entries are stored too
    REQUIRE(full.rowStart.back() == 2 * lower - p.n);
    Eigen::MatrixXd rebuilt = Eigen::MatrixXd::Zero(p.n, p.n);
    for (int r = 0; r < p.n; ++r)
        for (int k = full.rowStart[r]; k < full.rowStart[r + 1]; ++k) {
            if (k > full.rowStart[r]) REQUIRE(full.col[k] > full.col[k - 1]);   // sorted within the row
            rebuilt(r, full.col[k]) = p.values[full.source[k]];
        }
    CHECK(rebuilt == p.dense);

    // Malformed patterns: a one-line reason each.
    std::vector<int> upper = p.rowIndex;   // column 5 = 3 * 1 + 2 holds rows 3, 4, 5 first: no 5
    REQUIRE(upper[p.colStart[5] + 2] == 5);
    upper[p.colStart[5] + 2] = upper[p.colStart[5] + 1];
    CHECK_FALSE(checkLowerPattern(p.n, p.colStart.data(), upper.data(), &why));
    CHECK(why.find("column 5") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
    std::vector<int> past = p.rowIndex;
    past[p.colStart[1] - 1] = p.n;   // a row past n
    CHECK_FALSE(checkLowerPattern(p.n, p.colStart.data(), past.data(), &why));
    CHECK_FALSE(checkLowerPattern(0, p.colStart.data(), p.rowIndex.data(), &why));
    HostExecutor ex;
    HostSparseCholesky chol;
    CHECK_FALSE(chol.analyse(ex, p.n, p.colStart.data(), upper.data(), &why));
    CHECK(why.rfind("sparse factorization:", 0) == 0);
}

TEST_CASE("sparse factorization verb, host (CHOLMOD): solves, refactors, and refuses a matrix that is not SPD") {
    const Mesh mesh = gridMesh(6, 5, 4, 10);   // 120 nodes, 360 DOFs, the last 30 DOFs trailing
    const Problem p = randomSpd(mesh, 1, 1.0);
    const Eigen::MatrixXd rhs = randomRhs(p.n, 4, 2);
    HostExecutor ex;
    HostSparseCholesky chol;
    std::string why;
    REQUIRE_MESSAGE(chol.analyse(ex, p.n, p.colStart.data(), p.rowIndex.data(), &why), why);
    CHECK(chol.factorNonZeros() >= (long long)p.values.size());
    checkAgainstDense("host", p, rhs, hostSparse(chol, ex, p, rhs));

    // New values on the same pattern (heavier masses, other elements): no new analysis.
    const Problem q = randomSpd(mesh, 3, 50.0);
    checkAgainstDense("host, refactored", q, rhs, hostSparse(chol, ex, q, rhs));

    // Not positive definite (one large negative mass): status 0, and the next SPD matrix factors again.
    Problem bad = q;
    bad.values[bad.colStart[6]] = -1e3;   // column 6 = 3 * 2 + 0 starts at its diagonal
    int status = -1;
    chol.factor(ex, bad.values.data(), &status);
    CHECK(status == 0);
    checkAgainstDense("host, after a refused matrix", p, rhs, hostSparse(chol, ex, p, rhs));
}

TEST_CASE("dense factorization verb, host (Eigen LLT), against a pivoted LU solve") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const int n = 40;
    Eigen::MatrixXd g(n, n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) g(i, j) = u(rng);
    const Eigen::MatrixXd a = g * g.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
    const Eigen::MatrixXd b = randomRhs(n, 3, 5);
    const Eigen::MatrixXd reference = a.partialPivLu().solve(b);
    HostExecutor ex;
    HostDenseCholesky chol;
    int status = -1;
    chol.factor(ex, n, a.data(), &status);
    REQUIRE(status == 1);
    Eigen::MatrixXd x(n, 3);
    chol.solve(ex, b.data(), x.data(), 3);
    CHECK(relativeError(x, reference) < 1e-10);
    Eigen::VectorXd x1(n);
    chol.solve(ex, b.col(1).eval().data(), x1.data(), 1);
    CHECK(relativeError(x1, reference.col(1)) < 1e-10);
    Eigen::MatrixXd indefinite = a;
    indefinite(7, 7) = -1.0;
    chol.factor(ex, n, indefinite.data(), &status);
    CHECK(status == 0);

    std::vector<double> gpuX;
    std::string why;
    if (!gpuDenseCholeskyRun(n, a.data(), b.data(), 3, status, gpuX, &why)) {
        MESSAGE("SKIP dense factorization verb on CUDA: " << why);
        return;
    }
    REQUIRE(status == 1);
    CHECK(relativeError(Eigen::Map<Eigen::MatrixXd>(gpuX.data(), n, 3), reference) < 1e-10);
    REQUIRE(gpuDenseCholeskyRun(n, indefinite.data(), b.data(), 3, status, gpuX, &why));
    CHECK(status == 0);
}

TEST_CASE("sparse factorization verb, CUDA (cuSOLVER csrchol), against the dense solve") {
    const Mesh mesh = gridMesh(6, 5, 4, 10);
    const Problem p = randomSpd(mesh, 1, 1.0);
    const Eigen::MatrixXd rhs = randomRhs(p.n, 4, 2);
    auto run = [&](const Problem& m, SparseAnswer& a, std::string* why) {
        std::vector<double> x, trailing;
        if (!gpuSparseCholeskyRun(m.n, m.colStart.data(), m.rowIndex.data(), m.values.data(), rhs.data(),
                                  (int)rhs.cols(), m.first, a.status, x, trailing, why))
            return false;
        const int nt = m.n - m.first;
        a.x = Eigen::Map<Eigen::MatrixXd>(x.data(), m.n, rhs.cols());
        a.trailing = Eigen::Map<Eigen::MatrixXd>(trailing.data(), nt, nt);
        return true;
    };
    SparseAnswer a;
    std::string why;
    if (!run(p, a, &why)) {
        MESSAGE("SKIP sparse factorization verb on CUDA: " << why);
        return;
    }
    checkAgainstDense("cuda", p, rhs, a);
    Problem bad = p;
    bad.values[bad.colStart[6]] = -1e3;
    REQUIRE_MESSAGE(run(bad, a, &why), why);
    CHECK(a.status == 0);
}
