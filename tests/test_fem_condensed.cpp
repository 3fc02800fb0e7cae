// The FEM element rows condensed into a sparse node-space factor (engine/solver/condensed_rows.h):
// one Newton system against a dense solve of J H^-1 J^T + D, whole steps against the iterative
// solve run to convergence, and Newton's single iteration on a contact-free FEM scene.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include "engine/collision/narrow_phase.h"
#include "engine/fem/fem_contact.h"
#include "engine/solver/condensed_rows.h"
#include "tests/dense_rows.h"
#include "tests/fem_test_util.h"

using namespace cs;
using namespace cs::femtest;

namespace {

// One step's rows of a deformable block (optionally attached to a rigid base and pressed 5 mm into
// the ground, so hard rows are present) and the system view the Newton loop gives the solver.
struct Rows {
    Model model;
    WorldSettings settings;
    std::unique_ptr<World> world;
    BodyVelocities bodies;
    ConstraintRows rows;
    std::vector<Real> compliance;
    std::vector<Spatial> minvJ[4];
    RowSystemView view;

    explicit Rows(bool hard) {
        addGround(model);
        if (hard) {
            BodyDesc base;
            base.name = "base";
            ShapeDesc shape;
            shape.polytope = makeBox({Real(0.05), Real(0.05), Real(0.05)});
            base.shapes.push_back(shape);
            base.pose.pos = {Real(-0.2), 0, Real(0.1)};
            std::string error;
            REQUIRE(addBody(model, base, &error) == 1);
        }
        FemBodyDesc d = blockDesc({Real(0.1), Real(0.05), Real(0.05)}, 2, Real(2e3), Real(0.3),
                                  FemMaterialType::StableNeoHookean);
        d.pose.pos = {0, 0, hard ? Real(0.045) : Real(0.5)};
        if (hard) d.attached = {{0, 1}, {1, 1}};
        else d.pinned = {0};   // a static column in the element rows
        addFem(model, d);
        world = std::make_unique<World>(model, settings);
        State& state = world->state();
        for (int n = 0; n < model.femNodeCount(); ++n)
            state.femPos[n] += Real(0.004) * Vec3{std::sin(Real(n)), std::cos(Real(3 * n)), 0};
        const Real h = settings.dt;
        std::vector<uint8_t> active(model.bodyCount(), 1);
        startBodyVelocities(model, state, active.data(), settings.gravity, h, bodies);
        appendFemNodes(model, state, settings.gravity, h, bodies);
        std::vector<Mat3> rotations;
        buildFemRows(model, state, h, false, rows, rotations);
        std::vector<Aabb> boxes;
        computeContactAabbs(model, state, narrowPhaseSettings(settings, h), boxes);
        FemContactScratch contactScratch;
        buildFemContactRows(model, settings, state, boxes, h, contactScratch, rows);
        REQUIRE(rows.wideRows > 0);
        REQUIRE(contactScratch.contacts.empty() != hard);
        const int n = rows.size();
        // A Newton iteration's compliance: the elements' softness; the hard rows a positive value
        // of the kind the NCP linearization and the regularization give (constraint_rows.h).
        compliance.resize(n);
        for (int i = 0; i < n; ++i)
            compliance[i] = rows.softness[i] > 0 ? rows.softness[i]
                                                 : (rows.kind[i] == int(RowKind::Bilateral) ? Real(1e-6) : Real(1e-2));
        view.rowCount = n;
        view.bodyCount = (int)bodies.invMass.size();
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
        const int* body[4] = {view.bodyA, view.bodyB, view.bodyC, view.bodyD};
        const Spatial* jac[4] = {view.jacobianA, view.jacobianB, view.jacobianC, view.jacobianD};
        for (int c = 0; c < 4; ++c) {
            minvJ[c].resize(n);
            for (int i = 0; i < n; ++i)
                minvJ[c][i] = body[c][i] >= 0 ? applyInvMass(view, body[c][i], jac[c][i]) : Spatial{{0, 0, 0}, {0, 0, 0}};
        }
        view.invMassJacobianA = minvJ[0].data();
        view.invMassJacobianB = minvJ[1].data();
        view.invMassJacobianC = minvJ[2].data();
        view.invMassJacobianD = minvJ[3].data();
    }

    Eigen::MatrixXd dense() const { return test::denseRowMatrix(rows, bodies, compliance.data()); }
};

}  // namespace

TEST_CASE("fem condensed: one Newton system against a dense solve, with and without hard rows") {
    for (bool hard : {false, true}) {
        Rows s(hard);
        const int n = s.rows.size();
        const Eigen::MatrixXd A = s.dense();
        Eigen::VectorXd b(n);
        for (int i = 0; i < n; ++i) b[i] = std::sin(Real(0.7) * i) + s.rows.bias[i];
        const Eigen::VectorXd reference = A.ldlt().solve(b);
        REQUIRE((A * reference - b).norm() < 1e-9 * b.norm());

        CondensedRows condensed;
        REQUIRE(condensed.prepare(s.rows, s.view));
        const CondensedStats& st = condensed.stats();
        CHECK(st.softRows == kFemMaxRows * s.model.femTetCount());
        CHECK(st.softRows + st.hardRows == n);
        CHECK((st.hardRows > 0) == hard);
        std::vector<Real> bb(b.data(), b.data() + n), fixed(n), step(n);
        REQUIRE(condensed.solve(s.view, s.compliance.data(), bb.data(), fixed.data(), step.data()));
        Eigen::VectorXd x(n);
        for (int i = 0; i < n; ++i) x[i] = fixed[i] + step[i];
        const double error = (x - reference).norm() / reference.norm();
        MESSAGE((hard ? "with" : "without") << " hard rows: " << st.softRows << " soft, " << st.hardRows << " hard rows, "
                                            << st.dofs << " node DOFs, " << st.touchedDofs << " touched; |x - x_dense| / |x_dense| = "
                                            << error);
        CHECK(error < 1e-9);
        // A damped step t: the non-smooth hard rows (contacts) move by t dlambda; every linear row
        // (the elements, the attachments) so that its own equation holds exactly: (A x(t) - b)_i = 0.
        const double t = 0.4;
        Eigen::VectorXd xt(n);
        for (int i = 0; i < n; ++i) xt[i] = fixed[i] + t * step[i];
        const Eigen::VectorXd r = A * xt - b;
        double linearResidual = 0, contactMove = 0;
        int linearRows = 0, contactRows = 0;
        for (int i = 0; i < n; ++i) {
            if (s.rows.kind[i] == int(RowKind::Bilateral)) {
                linearResidual = std::fmax(linearResidual, std::fabs(r[i]));
                ++linearRows;
            } else {
                contactMove = std::fmax(contactMove, std::fabs(xt[i] - t * reference[i]));
                ++contactRows;
            }
        }
        CHECK(linearRows > 0);
        CHECK((contactRows > 0) == hard);
        CHECK(linearResidual < 1e-9 * b.lpNorm<Eigen::Infinity>());
        CHECK(contactMove < 1e-9 * reference.lpNorm<Eigen::Infinity>());
        // The pattern is reused on the next prepare (same rows): the same answer.
        REQUIRE(condensed.prepare(s.rows, s.view));
        std::vector<Real> fixed2(n), step2(n);
        REQUIRE(condensed.solve(s.view, s.compliance.data(), bb.data(), fixed2.data(), step2.data()));
        for (int i = 0; i < n; ++i) CHECK(fixed2[i] + step2[i] == doctest::Approx(x[i]).epsilon(1e-12));
    }
}

namespace {

// A beam pinned at one end, sagging under gravity: element rows only (no contact, no attachment).
Model beamModel(std::vector<int>* tip) {
    Model model;
    FemBodyDesc d;
    d.name = "beam";
    d.mesh = makeBeamTetMesh(Real(0.4), Real(0.03), Real(0.03), 12, 2);
    d.youngs = Real(2e5);
    d.poisson = Real(0.3);
    d.density = 1000;
    d.pinned = nodesAt(d.mesh, 0, Real(-0.2));
    if (tip) *tip = nodesAt(d.mesh, 0, Real(0.2));
    addFem(model, d);
    return model;
}

// A block dropped 2 cm onto the ground: element rows and node contacts.
Model dropModel() {
    Model model;
    addGround(model);
    FemBodyDesc d = blockDesc({Real(0.05), Real(0.05), Real(0.05)}, 2, Real(5e4), Real(0.3),
                              FemMaterialType::StableNeoHookean);
    d.pose.pos = {0, 0, Real(0.07)};
    addFem(model, d);
    return model;
}

}  // namespace

TEST_CASE("fem condensed: Newton takes one iteration on a contact-free FEM scene") {
    std::vector<int> tip;
    Model model = beamModel(&tip);
    WorldSettings s;   // the defaults: damping 0.75, Newton tolerance 1e-5 m/s
    REQUIRE(s.solver.condenseCompliantRows);
    World world(model, s);
    for (int step = 0; step < 60; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
        const SolveStats& st = world.solveStats();
        INFO("step " << step << ": residual " << st.residualFinal);
        CHECK(st.newtonIterations == 1);
        CHECK(st.residualFinal < s.solver.newtonTolerance);
    }
    Real sag = 0;
    for (int n : tip) sag += model.femRestPos[n].z - world.state().femPos[n].z;
    sag /= Real(tip.size());
    MESSAGE("tip sag after 0.5 s: " << sag << " m");
    CHECK(sag > Real(0.005));   // it did bend
}

// The condensed step against the iterative one run to convergence (PCG to a relative 1e-13,
// Newton to 1e-9 m/s, full steps). Both solve the same equations, so they differ by what their
// tolerances leave: a velocity error of order 1e-9 m/s per step moves a node by ~1e-11 m per step
// and the beam (a linear problem per step) keeps no memory that amplifies it beyond its own
// oscillation; the bound 1e-8 m over 0.5 s is a hundred times that. The drop (contacts, a
// non-smooth problem) is held to 1e-6 m: a contact whose impulse is within the tolerance of zero
// may open in one run and not in the other.
TEST_CASE("fem condensed: steps agree with the iterative solve run to convergence") {
    struct Case { const char* name; Model model; Real bound; };
    std::vector<int> tip;
    Case cases[] = {{"beam", beamModel(&tip), Real(1e-8)}, {"drop", dropModel(), Real(1e-6)}};
    for (Case& c : cases) {
        WorldSettings a;
        a.solver.newtonTolerance = Real(1e-9);
        a.solver.newtonIterations = 40;
        a.solver.damping = 1;
        WorldSettings b = a;
        b.solver.condenseCompliantRows = false;
        b.solver.linearSolver = LinearSolverType::PCG;
        b.solver.linearIterations = 5000;
        b.solver.linearTolerance = Real(1e-13);
        World condensed(c.model, a), iterative(c.model, b);
        Real worst = 0, travel = 0;
        int condensedIters = 0, iterativeIters = 0;
        const int steps = 60;
        for (int step = 0; step < steps; ++step) {
            condensed.step();
            iterative.step();
            REQUIRE_FALSE(condensed.lastStepFailed());
            REQUIRE_FALSE(iterative.lastStepFailed());
            condensedIters += condensed.solveStats().newtonIterations;
            iterativeIters += iterative.solveStats().newtonIterations;
            // Converged wherever the iterative run converged (the drop's impact, steps 7-11, has
            // both at the Newton cap on the contacts, with the same residuals).
            CHECK(condensed.solveStats().residualFinal <=
                  std::fmax(a.solver.newtonTolerance, Real(1.01) * iterative.solveStats().residualFinal));
            for (int n = 0; n < c.model.femNodeCount(); ++n)
                worst = std::fmax(worst, length(condensed.state().femPos[n] - iterative.state().femPos[n]));
        }
        for (int n = 0; n < c.model.femNodeCount(); ++n)
            travel = std::fmax(travel, length(condensed.state().femPos[n] - c.model.femRestPos[n]));
        MESSAGE(c.name << ": largest node distance between the runs " << worst << " m over " << steps
                       << " steps (largest node travel " << travel << " m); Newton iterations " << condensedIters
                       << " condensed, " << iterativeIters << " iterative; iterative final residual "
                       << iterative.solveStats().residualFinal);
        CHECK(worst < c.bound);
        CHECK(condensedIters <= iterativeIters);
    }
}
