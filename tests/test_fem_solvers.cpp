// The FEM rows (elements on four bodies, attachments to a rigid body, node contacts) solved by
// each of the four linear solvers, against a dense Eigen solve of the same A = J H^-1 J^T + C.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include "engine/collision/narrow_phase.h"
#include "engine/fem/fem_contact.h"
#include "tests/dense_rows.h"
#include "tests/fem_test_util.h"

using namespace cs;
using namespace cs::femtest;

TEST_CASE("fem solvers: Jacobi, Gauss-Seidel, PCG and PCR agree with a dense solve on FEM rows") {
    Model model;
    addGround(model);
    BodyDesc base;
    base.name = "base";
    ShapeDesc shape;
    shape.polytope = makeBox({Real(0.05), Real(0.05), Real(0.05)});
    base.shapes.push_back(shape);
    base.pose.pos = {Real(-0.2), 0, Real(0.1)};
    std::string error;
    REQUIRE(addBody(model, base, &error) == 1);
    FemBodyDesc d = blockDesc({Real(0.1), Real(0.05), Real(0.05)}, 2, Real(2e3), Real(0.3), FemMaterialType::StableNeoHookean);
    d.pose.pos = {0, 0, Real(0.045)};   // the bottom nodes 5 mm into the ground: contacts
    d.attached = {{0, 1}, {1, 1}};
    addFem(model, d);
    WorldSettings settings;
    World world(model, settings);
    State& state = world.state();
    for (int n = 0; n < model.femNodeCount(); ++n) state.femPos[n] += Real(0.004) * Vec3{std::sin(Real(n)), std::cos(Real(3 * n)), 0};

    const Real h = settings.dt;
    std::vector<uint8_t> active(model.bodyCount(), 1);
    BodyVelocities bodies;
    startBodyVelocities(model, state, active.data(), settings.gravity, h, bodies);
    appendFemNodes(model, state, settings.gravity, h, bodies);
    ConstraintRows rows;
    std::vector<Mat3> rotations;
    buildFemRows(model, state, h, false, rows, rotations);
    std::vector<Aabb> boxes;
    computeContactAabbs(model, state, narrowPhaseSettings(settings, h), boxes);
    FemContactScratch contactScratch;
    buildFemContactRows(model, settings, state, boxes, h, contactScratch, rows);
    REQUIRE(rows.wideRows > 0);
    REQUIRE(!contactScratch.contacts.empty());
    const int n = rows.size(), nb = (int)bodies.invMass.size();
    // The compliance of a Newton iteration: the rows' softness (elements, attachments) and, for
    // the contact rows, a positive value as the NCP linearization gives (constraint_rows.h).
    std::vector<Real> compliance(n);
    for (int i = 0; i < n; ++i) compliance[i] = rows.softness[i] + (rows.kind[i] == int(RowKind::Bilateral) ? 1e-6 : 1e-2);

    RowSystemView view;
    view.rowCount = n;
    view.bodyCount = nb;
    view.bodyA = rows.bodyA.data();
    view.bodyB = rows.bodyB.data();
    view.bodyC = rows.bodyC.data();
    view.bodyD = rows.bodyD.data();
    view.jacobianA = rows.jacobianA.data();
    view.jacobianB = rows.jacobianB.data();
    view.jacobianC = rows.jacobianC.data();
    view.jacobianD = rows.jacobianD.data();
    view.compliance = compliance.data();
    view.invMass = bodies.invMass.data();
    view.invInertia = bodies.invInertia.data();
    std::vector<int> runStart(n + 1);
    view.runCount = findRuns(n, rows.bodyA.data(), rows.bodyB.data(), runStart.data(), view.bodyC, view.bodyD);
    view.runStart = runStart.data();

    const Eigen::MatrixXd A = test::denseRowMatrix(rows, bodies, compliance.data());
    Eigen::VectorXd b(n);
    for (int i = 0; i < n; ++i) b[i] = std::sin(Real(0.7) * i) + rows.bias[i];
    const Eigen::VectorXd reference = A.ldlt().solve(b);
    REQUIRE((A * reference - b).norm() < 1e-9 * b.norm());

    std::vector<int> colourStart, colourOrder;
    colourRows(rows, bodies.invMass, colourStart, colourOrder, &view.serialColour);
    struct Case { LinearSolverType type; int iterations; Real tolerance; };
    for (const Case& c : {Case{LinearSolverType::PCR, 2000, 1e-8}, Case{LinearSolverType::PCG, 2000, 1e-8},
                          Case{LinearSolverType::GaussSeidel, 20000, 1e-6}, Case{LinearSolverType::Jacobi, 100000, 1e-4}}) {
        RowSystemView v = view;
        if (c.type == LinearSolverType::GaussSeidel) {
            v.colourCount = (int)colourStart.size() - 1;
            v.colourStart = colourStart.data();
            v.colourRows = colourOrder.data();
        }
        LinearSolverSettings ls;
        ls.maxIterations = c.iterations;
        ls.tolerance = Real(1e-13);
        LinearSolverScratch scratch;
        std::vector<Real> x(n, 0);
        const LinearSolveResult r = solveLinear(c.type, v, b.data(), x.data(), ls, scratch, nullptr);
        Real err = 0;
        for (int i = 0; i < n; ++i) err = std::fmax(err, std::fabs(x[i] - reference[i]));
        MESSAGE(linearSolverName(c.type) << ": " << n << " rows (" << rows.wideRows << " on four bodies), "
                                         << r.iterations << " iterations, max |x - x_dense| = " << err
                                         << " (|x_dense|_inf " << reference.lpNorm<Eigen::Infinity>() << ")");
        CHECK(err < c.tolerance * reference.lpNorm<Eigen::Infinity>());
    }
}
