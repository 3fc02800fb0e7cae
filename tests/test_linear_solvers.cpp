// Linear solvers of engine/solver/linear_solvers.h against a dense Eigen reference built from the
// same rigid-body rows: A = J H^-1 J^T + C ([NSN] eq. 59).
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "engine/solver/linear_solvers.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace cs;

namespace {

// The dense reference is always double, whatever Real is.
using MatX = Eigen::MatrixXd;
using VecX = Eigen::VectorXd;

constexpr bool kFloat = sizeof(Real) == 4;
// Relative accuracy a converged Krylov solve can be asked for in this precision.
constexpr Real kSolveTol = kFloat ? Real(1e-5) : Real(1e-10);

// Rows, bodies and an optional greedy colouring, owned; view() exposes them to the solvers.
struct TestSystem {
    int bodies = 0;
    std::vector<Real> invMass;
    std::vector<Mat3> invInertia;
    std::vector<int> bodyA, bodyB;
    std::vector<Spatial> jacA, jacB;
    std::vector<Real> compliance;
    std::vector<int> colourStart, colourRows;
    std::vector<Spatial> invMassJacA, invMassJacB;  // optional H^-1 J^T per row
    std::vector<int> runStart;                      // optional runs of rows on one body pair
    int runCount = 0;

    void findRowRuns() {
        runStart.assign(size_t(rows()) + 1, 0);
        runCount = findRuns(rows(), bodyA.data(), bodyB.data(), runStart.data());
    }

    int rows() const { return int(bodyA.size()); }

    void addRow(int a, int b, Spatial ja, Spatial jb, Real c) {
        bodyA.push_back(a);
        bodyB.push_back(b);
        jacA.push_back(ja);
        jacB.push_back(jb);
        compliance.push_back(c);
    }

    void precomputeInvMassJacobians() {
        RowSystemView v = view();
        invMassJacA.assign(size_t(rows()), Spatial{});
        invMassJacB.assign(size_t(rows()), Spatial{});
        for (int i = 0; i < rows(); ++i) {
            if (bodyA[size_t(i)] >= 0) invMassJacA[size_t(i)] = applyInvMass(v, bodyA[size_t(i)], jacA[size_t(i)]);
            if (bodyB[size_t(i)] >= 0) invMassJacB[size_t(i)] = applyInvMass(v, bodyB[size_t(i)], jacB[size_t(i)]);
        }
    }

    RowSystemView view(bool coloured = false, bool precomputed = false, bool runs = false) const {
        RowSystemView v;
        v.rowCount = rows();
        v.bodyCount = bodies;
        v.bodyA = bodyA.data();
        v.bodyB = bodyB.data();
        v.jacobianA = jacA.data();
        v.jacobianB = jacB.data();
        v.compliance = compliance.data();
        v.invMass = invMass.data();
        v.invInertia = invInertia.data();
        if (precomputed) {
            v.invMassJacobianA = invMassJacA.data();
            v.invMassJacobianB = invMassJacB.data();
        }
        if (runs) {
            v.runCount = runCount;
            v.runStart = runStart.data();
        }
        if (coloured) {
            v.colourCount = int(colourStart.size()) - 1;
            v.colourStart = colourStart.data();
            v.colourRows = colourRows.data();
        }
        return v;
    }

    // Greedy colouring: a row takes the first colour in which neither of its bodies is used.
    void colour() {
        std::vector<std::vector<int>> members;
        std::vector<std::vector<char>> used;
        for (int i = 0; i < rows(); ++i) {
            size_t c = 0;
            for (;; ++c) {
                if (c == members.size()) {
                    members.emplace_back();
                    used.emplace_back(bodies, char(0));
                }
                bool freeA = bodyA[i] < 0 || !used[c][bodyA[i]];
                bool freeB = bodyB[i] < 0 || !used[c][bodyB[i]];
                if (freeA && freeB) break;
            }
            members[c].push_back(i);
            if (bodyA[i] >= 0) used[c][bodyA[i]] = 1;
            if (bodyB[i] >= 0) used[c][bodyB[i]] = 1;
        }
        colourStart.assign(1, 0);
        colourRows.clear();
        for (auto& m : members) {
            colourRows.insert(colourRows.end(), m.begin(), m.end());
            colourStart.push_back(int(colourRows.size()));
        }
    }

    // Dense J H^-1 J^T (without C).
    MatX denseJMJ() const {
        MatX jac = MatX::Zero(rows(), 6 * bodies);
        MatX hinv = MatX::Zero(6 * bodies, 6 * bodies);
        for (int b = 0; b < bodies; ++b)
            for (int k = 0; k < 3; ++k) {
                hinv(6 * b + k, 6 * b + k) = invMass[b];
                for (int l = 0; l < 3; ++l) hinv(6 * b + 3 + k, 6 * b + 3 + l) = invInertia[b].m[k][l];
            }
        auto put = [&](int row, int body, const Spatial& s) {
            if (body < 0) return;
            for (int k = 0; k < 3; ++k) {
                jac(row, 6 * body + k) += s.lin[k];
                jac(row, 6 * body + 3 + k) += s.ang[k];
            }
        };
        for (int i = 0; i < rows(); ++i) {
            put(i, bodyA[i], jacA[i]);
            put(i, bodyB[i], jacB[i]);
        }
        return jac * hinv * jac.transpose();
    }
    MatX dense() const {
        MatX a = denseJMJ();
        for (int i = 0; i < rows(); ++i) a(i, i) += compliance[i];
        return a;
    }
};

Real uniform(std::mt19937& rng, Real lo, Real hi) {
    return lo + (hi - lo) * Real(std::uniform_real_distribution<double>(0, 1)(rng));
}
Vec3 randomVec(std::mt19937& rng, Real scale) {
    return Vec3{uniform(rng, -scale, scale), uniform(rng, -scale, scale), uniform(rng, -scale, scale)};
}

// Bodies with masses in [0.5, 5] kg and inertia R diag(I) R^T, principal moments in
// [0.05, 1] m kg m^2, random orientation R.
void addRandomBodies(TestSystem& s, int count, std::mt19937& rng) {
    s.bodies = count;
    for (int b = 0; b < count; ++b) {
        Real m = uniform(rng, 0.5, 5);
        Vec3 inertia{m * uniform(rng, 0.05, 1), m * uniform(rng, 0.05, 1), m * uniform(rng, 0.05, 1)};
        Mat3 rot = toMat3(quatFromAxisAngle(randomVec(rng, 1), uniform(rng, 0, 3)));
        Mat3 invDiag = mat3Diag(Vec3{1 / inertia.x, 1 / inertia.y, 1 / inertia.z});
        s.invMass.push_back(1 / m);
        Mat3 invInertia = rot * invDiag * transpose(rot);
        s.invInertia.push_back(Real(0.5) * (invInertia + transpose(invInertia)));  // exactly symmetric
    }
}

// Rows with random Jacobian blocks between random body pairs; a fraction against the world
// (-1 on either side). compliance in [0, maxCompliance], a third of them exactly 0.
TestSystem randomContactSystem(int bodies, int rows, unsigned seed, Real maxCompliance = Real(1e-3),
                               Real worldFraction = Real(0.2)) {
    std::mt19937 rng(seed);
    TestSystem s;
    addRandomBodies(s, bodies, rng);
    for (int i = 0; i < rows; ++i) {
        int a = int(rng() % unsigned(bodies));
        int b = int(rng() % unsigned(bodies - 1));
        if (b >= a) ++b;
        if (uniform(rng, 0, 1) < worldFraction) (rng() % 2 ? a : b) = -1;
        Spatial ja{randomVec(rng, 1), randomVec(rng, 0.5)};
        Spatial jb{randomVec(rng, 1), randomVec(rng, 0.5)};
        Real c = (i % 3 == 0) ? Real(0) : uniform(rng, 0, maxCompliance);
        s.addRow(a, b, ja, jb, c);
    }
    return s;
}

// Same rows, compliance raised to C_i = sum_{j != i} |(J H^-1 J^T)_ij| so that A is strictly
// diagonally dominant (A_ii = K_ii + C_i > sum_{j != i} |A_ij|): Jacobi and Gauss-Seidel converge
// geometrically there.
TestSystem diagonallyDominantSystem(int bodies, int rows, unsigned seed) {
    TestSystem s = randomContactSystem(bodies, rows, seed);
    MatX k = s.denseJMJ();
    for (int i = 0; i < s.rows(); ++i) s.compliance[i] = k.row(i).cwiseAbs().sum() - std::abs(k(i, i));
    return s;
}

// A stack of `boxes` boxes, each resting on the one below (the lowest on the world) with 8
// contacts: its 4 bottom corners twice, so 4 are exact duplicates. Every contact has a normal
// row and two tangent rows; compliance 0. A = J H^-1 J^T is singular (rank <= 6 * boxes).
TestSystem boxStack(int boxes, unsigned seed) {
    std::mt19937 rng(seed);
    TestSystem s;
    addRandomBodies(s, boxes, rng);
    const Vec3 half{0.5, 0.3, 0.4};
    const Vec3 axes[3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}};  // normal, two tangents
    for (int k = 0; k < boxes; ++k) {
        Vec3 comUpper{0, half.y * Real(2 * k + 1), 0};
        Vec3 comLower{0, half.y * Real(2 * k - 1), 0};
        for (int dup = 0; dup < 2; ++dup)
            for (int corner = 0; corner < 4; ++corner) {
                Vec3 p{(corner & 1) ? half.x : -half.x, half.y * Real(2 * k), (corner & 2) ? half.z : -half.z};
                for (const Vec3& n : axes) {
                    // Relative velocity of the upper body (B) w.r.t. the lower (A) along n.
                    Spatial jb{n, cross(p - comUpper, n)};
                    Spatial ja{-n, -cross(p - comLower, n)};
                    s.addRow(k == 0 ? -1 : k - 1, k, ja, jb, 0);
                }
            }
    }
    return s;
}

VecX toEigen(const std::vector<Real>& v) {
    return Eigen::Map<const Eigen::Matrix<Real, Eigen::Dynamic, 1>>(v.data(), Eigen::Index(v.size())).cast<double>();
}
std::vector<Real> fromEigen(const VecX& v) {
    std::vector<Real> out(static_cast<size_t>(v.size()));
    for (Eigen::Index i = 0; i < v.size(); ++i) out[size_t(i)] = Real(v[i]);
    return out;
}

std::vector<Real> randomVector(int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<Real> v(static_cast<size_t>(n));
    for (Real& x : v) x = uniform(rng, -1, 1);
    return v;
}

const LinearSolverType kAllSolvers[] = {LinearSolverType::Jacobi, LinearSolverType::GaussSeidel,
                                        LinearSolverType::PCG, LinearSolverType::PCR};

}  // namespace

TEST_CASE("linear solvers: applySystem equals the dense J H^-1 J^T + C") {
    for (unsigned seed = 1; seed <= 3; ++seed) {
        TestSystem s = randomContactSystem(7, 40, seed);
        s.colour();
        s.precomputeInvMassJacobians();
        MatX a = s.dense();
        std::vector<Real> x = randomVector(s.rows(), seed + 100), y(size_t(s.rows()));
        VecX ref = a * toEigen(x);
        LinearSolverScratch scratch;
        for (bool coloured : {false, true})
            for (bool precomputed : {false, true}) {
                applySystem(s.view(coloured, precomputed), x.data(), y.data(), scratch);
                CHECK((toEigen(y) - ref).norm() <= 100 * std::numeric_limits<Real>::epsilon() * ref.norm());
            }
        // Runs: the same rows sorted by body pair, so that consecutive rows share their bodies
        // (as a contact's normal and friction rows do); every split into runs gives A x.
        std::vector<int> order(size_t(s.rows()));
        for (int i = 0; i < s.rows(); ++i) order[size_t(i)] = i;
        std::stable_sort(order.begin(), order.end(), [&](int i, int j) {
            return std::pair(s.bodyA[size_t(i)], s.bodyB[size_t(i)]) < std::pair(s.bodyA[size_t(j)], s.bodyB[size_t(j)]);
        });
        TestSystem sorted = s;
        std::vector<Real> xs(x.size());
        for (int k = 0; k < s.rows(); ++k) {
            int i = order[size_t(k)];
            sorted.bodyA[size_t(k)] = s.bodyA[size_t(i)];
            sorted.bodyB[size_t(k)] = s.bodyB[size_t(i)];
            sorted.jacA[size_t(k)] = s.jacA[size_t(i)];
            sorted.jacB[size_t(k)] = s.jacB[size_t(i)];
            sorted.compliance[size_t(k)] = s.compliance[size_t(i)];
            xs[size_t(k)] = x[size_t(i)];
        }
        sorted.precomputeInvMassJacobians();
        sorted.findRowRuns();
        REQUIRE(sorted.runCount > 0);
        REQUIRE(sorted.runCount < sorted.rows());   // some runs hold several rows
        MatX as = sorted.dense();
        VecX refSorted = as * toEigen(xs);
        for (bool precomputed : {false, true}) {
            applySystem(sorted.view(false, precomputed, true), xs.data(), y.data(), scratch);
            CHECK((toEigen(y) - refSorted).norm() <= 100 * std::numeric_limits<Real>::epsilon() * refSorted.norm());
        }
        // The diagonal preconditioner is the dense diagonal.
        RowSystemView v = s.view();
        for (int i = 0; i < s.rows(); ++i)
            CHECK(rowDiagonal(v, i) == doctest::Approx(double(a(i, i))).epsilon(1e-5));
    }
}

TEST_CASE("linear solvers: each solver matches a dense solve on an SPD system") {
    // Diagonally dominant system: all four solvers converge; each is run to its own tolerance
    // and compared with LDLT.
    TestSystem dd = diagonallyDominantSystem(8, 30, 11);
    // General SPD system (fewer rows than 6 * bodies, random blocks: J has full row rank);
    // not diagonally dominant, so only the Krylov solvers are asked to converge, and
    // Gauss-Seidel (convergent on any SPD matrix) to reduce the residual 10x.
    TestSystem spd = randomContactSystem(8, 30, 12);
    for (TestSystem* s : {&dd, &spd}) {
        MatX a = s->dense();
        std::vector<Real> b = randomVector(s->rows(), 5);
        VecX ref = a.ldlt().solve(toEigen(b));
        REQUIRE((a * ref - toEigen(b)).norm() < 1e-8 * toEigen(b).norm());
        for (LinearSolverType type : kAllSolvers) {
            CAPTURE(std::string(linearSolverName(type)));
            bool krylov = type == LinearSolverType::PCG || type == LinearSolverType::PCR;
            if (s == &spd && type == LinearSolverType::Jacobi) continue;
            LinearSolverSettings settings;
            settings.maxIterations = krylov ? 200 : 5000;
            settings.tolerance = kSolveTol;
            std::vector<Real> x(size_t(s->rows()), 0);
            LinearSolverScratch scratch;
            std::vector<Real> history;
            LinearSolveResult res = solveLinear(type, s->view(), b.data(), x.data(), settings, scratch, &history);
            // History: entry 0 initial, one per iteration, the last one the reported residual,
            // and it is the true residual ||b - A x|| (up to rounding drift of the recurrences).
            REQUIRE(int(history.size()) == res.iterations + 1);
            CHECK(history.front() == res.initialResidual);
            // PCG returns its best iterate, the others their last.
            if (type == LinearSolverType::PCG)
                CHECK(res.residual == *std::min_element(history.begin(), history.end()));
            else
                CHECK(history.back() == res.residual);
            Real trueResidual = (toEigen(b) - a * toEigen(x)).norm();
            CHECK(std::abs(trueResidual - res.residual) <= (kFloat ? 1e-4 : 1e-6) * res.initialResidual);
            if (s == &spd && type == LinearSolverType::GaussSeidel) {
                CHECK(res.residual <= Real(0.1) * res.initialResidual);
                continue;
            }
            CHECK(res.iterations < settings.maxIterations);  // stopped on the tolerance
            CHECK(res.residual <= kSolveTol * toEigen(b).norm());
            // Error bound from the residual: |x - x*| <= |A^-1| |r|; the condition number of
            // these systems is below 1e4, so a 1e3 margin over the tolerance is ample.
            CHECK((toEigen(x) - ref).norm() <= 1e4 * kSolveTol * ref.norm());
        }
    }
}

TEST_CASE("linear solvers: warm start from the solution and the zero right-hand side stop at once") {
    TestSystem s = randomContactSystem(6, 20, 21);
    MatX a = s.dense();
    std::vector<Real> xTrue = randomVector(s.rows(), 3);
    std::vector<Real> b = fromEigen(a * toEigen(xTrue));
    VecX bv = toEigen(b);
    std::vector<Real> zero(size_t(s.rows()), 0);
    for (LinearSolverType type : kAllSolvers) {
        CAPTURE(std::string(linearSolverName(type)));
        LinearSolverSettings settings;
        settings.tolerance = Real(1e-6);
        LinearSolverScratch scratch;
        std::vector<Real> x = xTrue;
        LinearSolveResult res = solveLinear(type, s.view(), b.data(), x.data(), settings, scratch, nullptr);
        CHECK(res.iterations == 0);
        CHECK(x == xTrue);
        std::vector<Real> x0(size_t(s.rows()), 0);
        res = solveLinear(type, s.view(), zero.data(), x0.data(), settings, scratch, nullptr);
        CHECK(res.iterations == 0);
        CHECK(res.residual == 0);
    }
}

TEST_CASE("linear solvers: an empty system returns at once") {
    RowSystemView empty;  // no rows, no bodies, null arrays
    for (LinearSolverType type : kAllSolvers) {
        LinearSolverScratch scratch;
        std::vector<Real> history;
        LinearSolveResult res = solveLinear(type, empty, nullptr, nullptr, LinearSolverSettings{}, scratch, &history);
        CHECK(res.iterations == 0);
        CHECK(res.residual == 0);
        CHECK(history.size() == 1);
    }
}

TEST_CASE("linear solvers: PCG and PCR on a singular PSD system with redundant contacts") {
    // 3 stacked boxes, 8 contacts each of which 4 are duplicates: 72 rows, rank <= 18.
    TestSystem s = boxStack(3, 31);
    MatX a = s.dense();
    Eigen::SelfAdjointEigenSolver<MatX> eig(a);
    REQUIRE(eig.eigenvalues().minCoeff() < 1e-10 * eig.eigenvalues().maxCoeff());  // singular
    REQUIRE(eig.eigenvalues().minCoeff() > -1e-10 * eig.eigenvalues().maxCoeff()); // PSD
    std::vector<Real> xTrue = randomVector(s.rows(), 7);
    std::vector<Real> b = fromEigen(a * toEigen(xTrue));  // consistent right-hand side
    VecX bv = toEigen(b);
    for (LinearSolverType type : {LinearSolverType::PCG, LinearSolverType::PCR}) {
        CAPTURE(std::string(linearSolverName(type)));
        LinearSolverSettings settings;
        settings.maxIterations = 300;
        settings.tolerance = kSolveTol;
        std::vector<Real> x(size_t(s.rows()), 0);
        LinearSolverScratch scratch;
        LinearSolveResult res = solveLinear(type, s.view(), b.data(), x.data(), settings, scratch, nullptr);
        CHECK(res.residual <= kSolveTol * bv.norm());
        // A x matches b in the dense product (x itself is one of many solutions).
        CHECK((a * toEigen(x) - bv).norm() <= 10 * kSolveTol * bv.norm());
        for (Real xi : x) CHECK(std::isfinite(xi));
        // The same solve with the rows split into runs (24 rows per box pair, as the engine's
        // contact rows come), and with H^-1 J^T precomputed, as the Newton iteration calls it.
        s.findRowRuns();
        REQUIRE(s.runCount == 3);
        s.precomputeInvMassJacobians();
        std::vector<Real> xr(size_t(s.rows()), 0);
        res = solveLinear(type, s.view(false, true, true), b.data(), xr.data(), settings, scratch, nullptr);
        CHECK(res.residual <= kSolveTol * bv.norm());
        CHECK((a * toEigen(xr) - bv).norm() <= 10 * kSolveTol * bv.norm());
        // Running on past convergence (tolerance 0) must stop cleanly, not blow up.
        LinearSolverSettings longRun;
        longRun.maxIterations = 500;
        std::vector<Real> y(size_t(s.rows()), 0);
        res = solveLinear(type, s.view(), b.data(), y.data(), longRun, scratch, nullptr);
        CHECK((a * toEigen(y) - bv).norm() <= 10 * kSolveTol * bv.norm());
        for (Real yi : y) CHECK(std::isfinite(yi));
    }
}

TEST_CASE("linear solvers: PCR is monotone in the preconditioned residual norm") {
    // What is monotone: ||b - A x_k||_{M^-1} = sqrt(r^T diag(A)^-1 r), the norm CR with the
    // diagonal preconditioner minimizes ([NSN] fig. 11). The recorded 2-norm need not be.
    // x_k is obtained by re-running PCR with maxIterations = k (deterministic, so these are the
    // iterates of one run) and the norm is evaluated densely from the true residual. Allowed
    // slack: rounding, 1e-10 of the initial norm (1e-4 in float).
    const Real slack = kFloat ? Real(1e-4) : Real(1e-10);
    TestSystem singular = boxStack(3, 41);
    TestSystem general = randomContactSystem(8, 40, 42);
    for (TestSystem* s : {&singular, &general}) {
        MatX a = s->dense();
        VecX invDiag = a.diagonal().cwiseInverse();
        std::vector<Real> b;
        if (s == &singular) {
            b = fromEigen(a * toEigen(randomVector(s->rows(), 9)));
        } else {
            b = randomVector(s->rows(), 9);
        }
        LinearSolverScratch scratch;
        std::vector<Real> norms;
        for (int k = 0; k <= 60; ++k) {
            LinearSolverSettings settings;
            settings.maxIterations = k;
            std::vector<Real> x(size_t(s->rows()), 0);
            solveLinear(LinearSolverType::PCR, s->view(), b.data(), x.data(), settings, scratch, nullptr);
            VecX r = toEigen(b) - a * toEigen(x);
            norms.push_back(std::sqrt(r.dot(invDiag.cwiseProduct(r))));
        }
        for (size_t k = 1; k < norms.size(); ++k) {
            CAPTURE(k);
            CHECK(norms[k] <= norms[k - 1] + slack * norms[0]);
        }
        CHECK(norms.back() < Real(1e-3) * norms.front());
    }
}

TEST_CASE("linear solvers: coloured Gauss-Seidel equals the sweep in colour order") {
    TestSystem s = diagonallyDominantSystem(12, 50, 51);
    s.colour();
    REQUIRE(s.colourStart.size() > 2);
    // The same rows permuted into colour order, uncoloured.
    TestSystem perm = s;
    for (int k = 0; k < s.rows(); ++k) {
        int i = s.colourRows[size_t(k)];
        perm.bodyA[size_t(k)] = s.bodyA[size_t(i)];
        perm.bodyB[size_t(k)] = s.bodyB[size_t(i)];
        perm.jacA[size_t(k)] = s.jacA[size_t(i)];
        perm.jacB[size_t(k)] = s.jacB[size_t(i)];
        perm.compliance[size_t(k)] = s.compliance[size_t(i)];
    }
    std::vector<Real> b = randomVector(s.rows(), 13), bPerm(b.size());
    for (int k = 0; k < s.rows(); ++k) bPerm[size_t(k)] = b[size_t(s.colourRows[size_t(k)])];
    LinearSolverSettings settings;
    settings.maxIterations = 7;
    LinearSolverScratch scratch;
    std::vector<Real> x(b.size(), 0), xPerm(b.size(), 0), xPlain(b.size(), 0);
    solveLinear(LinearSolverType::GaussSeidel, s.view(true), b.data(), x.data(), settings, scratch, nullptr);
    solveLinear(LinearSolverType::GaussSeidel, perm.view(), bPerm.data(), xPerm.data(), settings, scratch, nullptr);
    for (int k = 0; k < s.rows(); ++k)
        CHECK(x[size_t(s.colourRows[size_t(k)])] == doctest::Approx(double(xPerm[size_t(k)])).epsilon(1e-12));
    // Converged, coloured and plain row-order sweeps reach the same solution.
    settings.maxIterations = 5000;
    settings.tolerance = kSolveTol;
    std::fill(x.begin(), x.end(), 0);
    solveLinear(LinearSolverType::GaussSeidel, s.view(true), b.data(), x.data(), settings, scratch, nullptr);
    solveLinear(LinearSolverType::GaussSeidel, s.view(false), b.data(), xPlain.data(), settings, scratch, nullptr);
    CHECK((toEigen(x) - toEigen(xPlain)).norm() <= 1e3 * kSolveTol * toEigen(xPlain).norm());
}

TEST_CASE("linear solvers: scratch is reused without reallocation") {
    TestSystem big = randomContactSystem(10, 50, 61), small = randomContactSystem(6, 30, 62);
    std::vector<Real> b = randomVector(50, 1), x(50, 0);
    LinearSolverScratch scratch;
    LinearSolverSettings settings;
    solveLinear(LinearSolverType::PCR, big.view(), b.data(), x.data(), settings, scratch, nullptr);
    const Real* r = scratch.r.data();
    const Spatial* w = scratch.w.data();
    for (LinearSolverType type : kAllSolvers) {
        std::fill(x.begin(), x.end(), 0);
        solveLinear(type, big.view(), b.data(), x.data(), settings, scratch, nullptr);
        solveLinear(type, small.view(), b.data(), x.data(), settings, scratch, nullptr);
    }
    CHECK(scratch.r.data() == r);
    CHECK(scratch.w.data() == w);
}

TEST_CASE("linear solvers: results do not depend on the thread count") {
#if defined(_OPENMP)
    // Large enough for every parallel branch (rows > 2048, colours > 2048 rows, bodies > 2048).
    TestSystem s = randomContactSystem(30000, 12000, 71);
    s.colour();
    s.precomputeInvMassJacobians();
    std::vector<Real> b = randomVector(s.rows(), 2);
    LinearSolverSettings settings;
    settings.maxIterations = 15;
    int saved = omp_get_max_threads();
    for (bool coloured : {false, true})
        for (LinearSolverType type : kAllSolvers) {
            CAPTURE(std::string(linearSolverName(type)));
            std::vector<Real> x1(b.size(), 0), x2(b.size(), 0);
            LinearSolverScratch scratch;
            omp_set_num_threads(1);
            solveLinear(type, s.view(coloured, coloured), b.data(), x1.data(), settings, scratch, nullptr);
            omp_set_num_threads(3);
            solveLinear(type, s.view(coloured, coloured), b.data(), x2.data(), settings, scratch, nullptr);
            CHECK(x1 == x2);
        }
    omp_set_num_threads(saved);
#endif
}

TEST_CASE("linear solvers: names round-trip") {
    for (LinearSolverType type : kAllSolvers) {
        LinearSolverType parsed;
        REQUIRE(parseLinearSolver(linearSolverName(type), parsed));
        CHECK(parsed == type);
    }
    LinearSolverType parsed;
    CHECK(parseLinearSolver("gauss-seidel", parsed));
    CHECK(parsed == LinearSolverType::GaussSeidel);
    CHECK_FALSE(parseLinearSolver("cholesky", parsed));
    CHECK_FALSE(parseLinearSolver(nullptr, parsed));
}

// Figures for the report, not assertions (run with: cs_tests -ts="*" -tc="*bench*" --no-skip).
TEST_CASE("linear solvers: bench" * doctest::skip()) {
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    TestSystem s = randomContactSystem(2000, 10000, 81);
    s.precomputeInvMassJacobians();
    std::vector<Real> b = randomVector(s.rows(), 3), x(b.size(), 0);
    LinearSolverScratch scratch;
    for (bool precomputed : {false, true})
    for (LinearSolverType type : kAllSolvers) {
        LinearSolverSettings settings;
        settings.maxIterations = 200;
        std::fill(x.begin(), x.end(), 0);
        solveLinear(type, s.view(false, precomputed), b.data(), x.data(), settings, scratch, nullptr);  // warm-up
        std::fill(x.begin(), x.end(), 0);
        // Wall time, and CPU time of this thread (less disturbed on a shared machine).
        timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        auto t0 = std::chrono::steady_clock::now();
        LinearSolveResult res = solveLinear(type, s.view(false, precomputed), b.data(), x.data(), settings, scratch, nullptr);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        double cpuMs = 1e3 * double(c1.tv_sec - c0.tv_sec) + 1e-6 * double(c1.tv_nsec - c0.tv_nsec);
        std::printf("%-7s 10000 rows / 2000 bodies, %s, 1 thread, H^-1 J^T %s: %.4f ms/iteration wall, "
                    "%.4f cpu (%d iterations)\n",
                    linearSolverName(type), kPrecisionName, precomputed ? "stored " : "on the fly", ms / res.iterations,
                    cpuMs / res.iterations, res.iterations);
    }
    TestSystem dd = diagonallyDominantSystem(8, 30, 11), spd = randomContactSystem(8, 30, 12);
    for (TestSystem* t : {&dd, &spd})
        for (LinearSolverType type : kAllSolvers) {
            LinearSolverSettings settings;
            settings.maxIterations = 100000;
            settings.tolerance = Real(1e-6);
            std::vector<Real> bb = randomVector(t->rows(), 5), xx(bb.size(), 0);
            LinearSolveResult res = solveLinear(type, t->view(), bb.data(), xx.data(), settings, scratch, nullptr);
            double ratio = double(res.residual / res.initialResidual);
            if (ratio <= 1e-6)
                std::printf("%s system: %-7s %6d iterations to 1e-6 (residual ratio %.2e)\n",
                            t == &dd ? "diag-dominant" : "general SPD", linearSolverName(type), res.iterations, ratio);
            else
                std::printf("%s system: %-7s does not converge (residual ratio %.2e after %d iterations)\n",
                            t == &dd ? "diag-dominant" : "general SPD", linearSolverName(type), ratio, res.iterations);
        }
}

TEST_CASE("Jacobi's automatic relaxation converges where a fixed omega = 0.6 diverges") {
    TestSystem spd = randomContactSystem(8, 30, 12);
    MatX a = spd.dense();
    std::vector<Real> b = randomVector(spd.rows(), 5);
    for (Real omega : {Real(0.6), Real(0)}) {
        LinearSolverSettings settings;
        settings.maxIterations = 3000;
        settings.jacobiOmega = omega;
        std::vector<Real> x(size_t(spd.rows()), 0);
        LinearSolverScratch scratch;
        LinearSolveResult res = solveLinear(LinearSolverType::Jacobi, spd.view(), b.data(), x.data(), settings,
                                            scratch, nullptr);
        Real trueResidual = (toEigen(b) - a * toEigen(x)).norm();
        CAPTURE(omega);
        if (omega > 0) CHECK(!(trueResidual < res.initialResidual));   // diverges (or stops on non-finite)
        else CHECK(trueResidual < Real(0.1) * res.initialResidual);
    }
}
