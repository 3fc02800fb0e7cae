// solveWithDecoupledRows (engine/solver/decoupled_rows.h) against a dense Eigen solve of the whole
// system A x = b, A = J H^-1 J^T + C ([NSN] eq. 59), on random rigid-body rows where a third of the
// rows carry the compliance of an open contact (C_ii = A_ii / kMinNcpSlope).
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <random>
#include <vector>

#include "engine/scene/scene_loader.h"
#include "engine/solver/decoupled_rows.h"
#include "engine/world.h"

using namespace cs;

namespace {

struct RandomRows {
    int bodies = 0;
    std::vector<Real> invMass;
    std::vector<Mat3> invInertia;
    std::vector<int> bodyA, bodyB;
    std::vector<Spatial> jacA, jacB, minvA, minvB;
    std::vector<Real> compliance, diag;

    RandomRows(int bodyCount, int rows, unsigned seed, bool decoupleSome) : bodies(bodyCount) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> u(-1, 1), mass(0.5, 2);
        for (int b = 0; b < bodies; ++b) {
            invMass.push_back(Real(1 / mass(rng)));
            Mat3 m = mat3Zero();
            for (int k = 0; k < 3; ++k) m.m[k][k] = Real(1 / mass(rng));
            invInertia.push_back(m);
        }
        auto vec = [&]() { return Vec3{Real(u(rng)), Real(u(rng)), Real(u(rng))}; };
        for (int i = 0; i < rows; ++i) {
            const int a = int(rng() % unsigned(bodies));
            int b = int(rng() % unsigned(bodies + 1)) - 1;   // -1: the world
            if (b == a) b = -1;
            bodyA.push_back(a);
            bodyB.push_back(b);
            jacA.push_back(Spatial{vec(), vec()});
            jacB.push_back(Spatial{vec(), vec()});
        }
        RowSystemView v = view();
        for (int i = 0; i < rows; ++i) {
            minvA.push_back(applyInvMass(v, bodyA[i], jacA[i]));
            minvB.push_back(bodyB[i] >= 0 ? applyInvMass(v, bodyB[i], jacB[i]) : Spatial{{0, 0, 0}, {0, 0, 0}});
            Real d = dot(jacA[i], minvA[i]) + (bodyB[i] >= 0 ? dot(jacB[i], minvB[i]) : Real(0));
            diag.push_back(d);
            const bool open = decoupleSome && i % 3 == 1;
            compliance.push_back(open ? d / kMinNcpSlope : Real(1e-3) * d);
        }
    }

    RowSystemView view() const {
        RowSystemView v;
        v.rowCount = (int)bodyA.size();
        v.bodyCount = bodies;
        v.bodyA = bodyA.data();
        v.bodyB = bodyB.data();
        v.jacobianA = jacA.data();
        v.jacobianB = jacB.data();
        v.compliance = compliance.data();
        v.invMass = invMass.data();
        v.invInertia = invInertia.data();
        if (!minvA.empty()) {
            v.invMassJacobianA = minvA.data();
            v.invMassJacobianB = minvB.data();
            v.jmjDiagonal = diag.data();
        }
        return v;
    }

    Eigen::MatrixXd dense() const {   // column j = A e_j through the matrix-free product
        const int n = (int)bodyA.size();
        Eigen::MatrixXd m(n, n);
        LinearSolverScratch scratch;
        std::vector<Real> e(n), col(n);
        for (int j = 0; j < n; ++j) {
            std::fill(e.begin(), e.end(), Real(0));
            e[j] = 1;
            applySystem(view(), e.data(), col.data(), scratch);
            for (int i = 0; i < n; ++i) m(i, j) = double(col[i]);
        }
        return m;
    }
};

}  // namespace

TEST_CASE("decoupled rows: the split solve agrees with a dense solve of all rows, for every linear solver") {
    constexpr bool kFloat = sizeof(Real) == 4;
    const RandomRows rows(12, 60, 7, true);
    const int n = (int)rows.bodyA.size();
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<Real> b(n);
    Eigen::VectorXd bd(n);
    for (int i = 0; i < n; ++i) {
        // An open contact's right-hand side is C_ii times an impulse (its Newton step drives the
        // impulse to zero); the coupled rows' is a velocity error.
        b[i] = Real(u(rng)) * (i % 3 == 1 ? rows.compliance[i] : Real(1));
        bd[i] = double(b[i]);
    }
    const Eigen::VectorXd exact = rows.dense().colPivHouseholderQr().solve(bd);
    for (LinearSolverType type : {LinearSolverType::Jacobi, LinearSolverType::GaussSeidel, LinearSolverType::PCG,
                                  LinearSolverType::PCR}) {
        CAPTURE(linearSolverName(type));
        LinearSolverSettings settings;
        settings.maxIterations = type == LinearSolverType::Jacobi ? 4000 : 400;
        settings.tolerance = kFloat ? Real(1e-6) : Real(1e-13);
        LinearSolverScratch scratch;
        CoupledRows coupled;
        std::vector<Real> x(n, Real(0));
        solveWithDecoupledRows(type, rows.view(), b.data(), x.data(), settings, rows.invMass, scratch, coupled,
                               nullptr);
        CHECK(coupled.decoupled == n / 3);
        double worst = 0, scale = exact.cwiseAbs().maxCoeff();
        for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(x[i]) - exact[i]));
        MESSAGE(linearSolverName(type) << ": largest |x - x_dense| " << worst << " of max |x| " << scale);
        CHECK(worst <= (kFloat ? 1e-2 : 1e-6) * scale);   // of order kMinNcpSlope times the condition of A_KK
    }
}

TEST_CASE("decoupled rows: with none decoupled the solve is the plain one, bit for bit") {
    const RandomRows rows(12, 60, 11, false);
    const int n = (int)rows.bodyA.size();
    std::vector<Real> b(n);
    for (int i = 0; i < n; ++i) b[i] = Real(0.01) * Real(i % 7) - Real(0.03);
    LinearSolverSettings settings;
    settings.maxIterations = 25;
    LinearSolverScratch s1, s2;
    CoupledRows coupled;
    std::vector<Real> x1(n, Real(0)), x2(n, Real(0));
    solveLinear(LinearSolverType::PCR, rows.view(), b.data(), x1.data(), settings, s1, nullptr);
    solveWithDecoupledRows(LinearSolverType::PCR, rows.view(), b.data(), x2.data(), settings, rows.invMass, s2, coupled,
                           nullptr);
    CHECK(coupled.decoupled == 0);
    CHECK(x1 == x2);
}

// With decoupled rows on, the issue-20 figures that matter physically: the 55-box peer pyramid
// (1 mm side gaps: 59% of its rows decoupled at rest) stays within 1e-5 m of penetration and its
// top box within 1e-6 m over 2.5 s; the 4096:1 heavy stack stands (top drift under 1 mm in 10 s).
TEST_CASE("decoupled rows: the peer pyramid and the heavy stack stand") {
    struct Case {
        std::string path;
        int steps;
        double maxPenetration, maxDrift;
    };
    const Case cases[] = {{std::string(CS_SOURCE_DIR) + "/bench/scenes/peer_pyramid_55.json", 300, 1e-5, 1e-6},
                          {"heavy_stack", 1200, 1e-4, 1e-3}};
    for (const Case& c : cases) {
        CAPTURE(c.path);
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string error;
        REQUIRE_MESSAGE(loadScene(c.path, model, settings, info, &error), error);
        settings.solver.decoupleRows = true;
        World world(std::move(model), settings);
        int top = 0;
        for (int b = 0; b < world.model().bodyCount(); ++b)
            if (world.model().initialPos[b].z > world.model().initialPos[top].z) top = b;
        for (int i = 0; i < c.steps; ++i) world.step();
        const double drift = length(world.state().pos[top] - world.model().initialPos[top]);
        MESSAGE(c.path << ": penetration " << world.maxPenetration() << " m, top drift " << drift << " m");
        CHECK(world.failedSteps() == 0);
        CHECK(world.maxPenetration() < c.maxPenetration);
        CHECK(drift < c.maxDrift);
    }
}
