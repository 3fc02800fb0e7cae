// The block-Jacobi preconditioner (engine/solver/block_preconditioner_hd.h) on contact rows of
// real scenes: the standard model's rows (buildContactRows) of the contacts a few steps of a
// library scene produced, with the bodies' world-frame inverse inertias, so that the runs are
// the scene's manifolds. Checked against a dense Eigen reference: each block's inverse against
// the inverse of A's principal submatrix, PCG and PCR with blocks against an LDLT solve of the
// whole system, and the iteration counts against the diagonal preconditioner's.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <random>
#include <string>
#include <vector>

#include "engine/contact/contact_model.h"
#include "engine/scene/scene_loader.h"
#include "engine/solver/integrate.h"
#include "engine/solver/linear_solvers.h"
#include "engine/world.h"

using namespace cs;

namespace {

using MatX = Eigen::MatrixXd;
using VecX = Eigen::VectorXd;

// The rows of one step of a scene, after `steps` steps, as a RowSystemView with its runs.
struct SceneRows {
    ConstraintRows rows;
    std::vector<Real> invMass, compliance;
    std::vector<Mat3> invInertia;
    std::vector<int> runStart;
    int runCount = 0;

    SceneRows(const std::string& scene, int steps, unsigned seed) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string error;
        REQUIRE_MESSAGE(loadScene(scene, model, settings, info, &error), error);
        settings.solver.cullRows = false;
        World world(std::move(model), settings);
        for (int i = 0; i < steps; ++i) world.step();
        std::vector<PotentialContact> potential;
        for (const Contact& c : world.contacts()) potential.push_back(c.geometry);
        REQUIRE(!potential.empty());
        const Model& m = world.model();
        const ContactStageInput in{m, world.settings, world.state(), potential, world.settings.dt};
        buildContactRows(in, rows);
        for (int b = 0; b < m.bodyCount(); ++b) {
            invMass.push_back(m.invMass[b]);
            invInertia.push_back(m.isStatic(b) ? mat3Zero() : worldInverseInertia(world.state().rot[b], m.invInertiaLocal[b]));
        }
        // C = eps + what a linearization gives: a third of the rows nearly stiff, a third soft
        // (an open contact's C_ii ~ A_ii), the rest at eps only.
        std::mt19937 rng(seed);
        RowSystemView v = view();
        for (int i = 0; i < rows.size(); ++i) {
            const Real aii = rowDiagonal(v, i);
            const Real u = Real(std::uniform_real_distribution<double>(0, 1)(rng));
            compliance[i] = Real(1e-6) + (i % 3 == 1 ? u * aii : i % 3 == 2 ? Real(1e-3) * u * aii : Real(0));
        }
        runStart.resize(rows.size() + 1);
        runCount = findRuns(rows.size(), rows.bodyA.data(), rows.bodyB.data(), runStart.data());
    }

    int size() const { return rows.size(); }

    RowSystemView view() {
        compliance.resize(rows.size(), 0);
        RowSystemView v;
        v.rowCount = rows.size();
        v.bodyCount = int(invMass.size());
        v.bodyA = rows.bodyA.data();
        v.bodyB = rows.bodyB.data();
        v.jacobianA = rows.jacobianA.data();
        v.jacobianB = rows.jacobianB.data();
        v.compliance = compliance.data();
        v.invMass = invMass.data();
        v.invInertia = invInertia.data();
        v.runCount = runCount;
        v.runStart = runCount > 0 ? runStart.data() : nullptr;
        return v;
    }

    // Dense A = J H^-1 J^T + C, column by column through the matrix-free product.
    MatX dense() {
        const int n = size();
        MatX a(n, n);
        LinearSolverScratch scratch;
        std::vector<Real> e(n, 0), y(n);
        for (int j = 0; j < n; ++j) {
            e[j] = 1;
            applySystem(view(), e.data(), y.data(), scratch);
            for (int i = 0; i < n; ++i) a(i, j) = y[i];
            e[j] = 0;
        }
        return a;
    }
};

VecX toEigen(const std::vector<Real>& v) {
    VecX out(Eigen::Index(v.size()));
    for (size_t i = 0; i < v.size(); ++i) out[Eigen::Index(i)] = double(v[i]);
    return out;
}

const char* const kScenes[] = {"heavy_stack", "card_house"};
constexpr int kSteps[] = {30, 30};

}  // namespace

TEST_CASE("block preconditioner: each block's inverse is the inverse of A's principal submatrix") {
    for (int k = 0; k < 2; ++k) {
        CAPTURE(std::string(kScenes[k]));
        SceneRows s(kScenes[k], kSteps[k], 7);
        const MatX a = s.dense();
        BlockPreconditionerScratch scratch;
        const BlockPreconditionerView m = buildBlockPreconditioner(s.view(), scratch);
        int blocks = 0, biggest = 0;
        for (int first = 0; first < s.size(); first += m.blockSize[first]) {
            const int n = m.blockSize[first];
            REQUIRE(n >= 1);
            REQUIRE(n <= kMaxBlockRows);
            ++blocks;
            biggest = std::max(biggest, n);
            MatX inv(n, n);
            for (int i = 0; i < n; ++i) {
                CHECK(m.blockFirst[first + i] == first);
                CHECK(m.blockSize[first + i] == n);
                for (int j = 0; j < n; ++j) inv(i, j) = m.inverse[size_t(first + i) * kMaxBlockRows + j];
            }
            const MatX block = a.block(first, first, n, n);
            const MatX product = inv * block;
            CHECK((product - MatX::Identity(n, n)).norm() <= 1e-8 * std::sqrt(double(n)));
        }
        // Manifolds: blocks of more than one contact, and fewer blocks than runs of three.
        CHECK(biggest > 3);
        CHECK(blocks < s.size() / 3);
        MESSAGE(std::string(kScenes[k]) << ": " << s.size() << " rows in " << blocks << " blocks, largest " << biggest);
    }
}

TEST_CASE("block preconditioner: PCG and PCR match a dense solve; iterations against the diagonal's") {
    for (int k = 0; k < 2; ++k) {
        CAPTURE(std::string(kScenes[k]));
        SceneRows s(kScenes[k], kSteps[k], 11);
        const MatX a = s.dense();
        std::mt19937 rng(3);
        std::vector<Real> b(s.size());
        for (Real& v : b) v = Real(std::uniform_real_distribution<double>(-1, 1)(rng));
        const VecX ref = a.ldlt().solve(toEigen(b));
        REQUIRE((a * ref - toEigen(b)).norm() < 1e-8 * toEigen(b).norm());
        for (LinearSolverType type : {LinearSolverType::PCG, LinearSolverType::PCR}) {
            CAPTURE(std::string(linearSolverName(type)));
            int iterations[2];
            for (Preconditioner p : {Preconditioner::Diagonal, Preconditioner::Block}) {
                CAPTURE(std::string(preconditionerName(p)));
                LinearSolverSettings settings;
                settings.maxIterations = 5000;
                settings.tolerance = Real(1e-8);
                settings.preconditioner = p;
                std::vector<Real> x(s.size(), 0);
                LinearSolverScratch scratch;
                const LinearSolveResult res = solveLinear(type, s.view(), b.data(), x.data(), settings, scratch, nullptr);
                const double trueResidual = (toEigen(b) - a * toEigen(x)).norm();
                CHECK(res.iterations < settings.maxIterations);
                CHECK(trueResidual <= 1e-7 * toEigen(b).norm());
                // |x - x*| <= |A^-1| |r|: A's smallest eigenvalue is at least eps = 1e-6 1/kg.
                CHECK((toEigen(x) - ref).norm() <= 1e6 * trueResidual + 1e-9 * ref.norm());
                iterations[p == Preconditioner::Block] = res.iterations;
            }
            MESSAGE(std::string(kScenes[k]) << " " << std::string(linearSolverName(type)) << ": " << s.size() << " rows, iterations diagonal "
                                << iterations[0] << ", block " << iterations[1]);
            // Measured: heavy_stack PCG 261 -> 42, PCR 288 -> 48; card_house PCG 2656 -> 1538, but PCR
            // 4057 -> 4887 (its 1e-8 tail is longer with blocks), which is reported, not required.
            if (k == 0) CHECK(3 * iterations[1] < iterations[0]);
            else if (type == LinearSolverType::PCG) CHECK(iterations[1] < iterations[0]);
        }
    }
}

TEST_CASE("block preconditioner: the scene key, the names, and Jacobi and Gauss-Seidel ignore it") {
    Preconditioner p;
    CHECK(parsePreconditioner("block", p));
    CHECK(p == Preconditioner::Block);
    CHECK(parsePreconditioner("diagonal", p));
    CHECK(p == Preconditioner::Diagonal);
    CHECK_FALSE(parsePreconditioner("ilu", p));
    CHECK(std::string(preconditionerName(Preconditioner::Block)) == "block");
    for (const char* value : {"block", "diagonal", "ilu"}) {
        const std::string text = std::string(R"({"format": 1, "settings": {"linear_preconditioner": ")") + value +
                                 R"("}, "bodies": [{"generator": "ground"}]})";
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string error;
        const bool ok = loadSceneFromText(text, "test", ".", model, settings, info, &error);
        CAPTURE(error);
        CHECK(ok == (std::string(value) != "ilu"));
        if (ok) CHECK(settings.solver.preconditioner == (std::string(value) == "block" ? Preconditioner::Block : Preconditioner::Diagonal));
        else CHECK(error.find("diagonal or block") != std::string::npos);
    }
    SceneRows s("heavy_stack", 30, 5);
    std::vector<Real> b(s.size(), 1);
    for (LinearSolverType type : {LinearSolverType::Jacobi, LinearSolverType::GaussSeidel}) {
        std::vector<Real> x[2];
        for (int k = 0; k < 2; ++k) {
            LinearSolverSettings settings;
            settings.maxIterations = 10;
            settings.preconditioner = k ? Preconditioner::Block : Preconditioner::Diagonal;
            x[k].assign(s.size(), 0);
            LinearSolverScratch scratch;
            solveLinear(type, s.view(), b.data(), x[k].data(), settings, scratch, nullptr);
        }
        CHECK(x[0] == x[1]);
    }
}

