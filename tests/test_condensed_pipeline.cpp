// The condensed solve of the FEM rows in the step pipeline (engine/exec/condensed_solve.h, called
// by pipeline_newton.h recordSolve), run by the host executor:
//  - against World::step with the condensed solve on (CondensedRows: the same executor code on
//    the CPU's rows), on fem_cantilever and on a small block with attachments and contacts;
//  - the pipeline's own rows (its buffers: four-body columns, the capacity past the row count
//    poisoned) through the solve against a dense solve of [J H^-1 J^T + D].
// Stated tolerance of the parity: 0, bit for bit. Why it can be: the pipeline builds the CPU's rows
// to the bit (test_fem_exec_parity.cpp), both run CondensedSolve<HostExecutor>, whose sums all
// have a fixed order, and the pipeline's damped step is newton.cpp's (lambda_k + fixed + t step).
// Row culling and narrow-phase reuse are off on the CPU (the pipeline takes neither shortcut).
// The CUDA side compiles with this code (gpu/gpu_world.cu instantiates it); its parity is left to
// a machine with a GPU.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>

#include "tests/fem_test_util.h"
#include "tests/parity_helpers.h"

using namespace cs;
using namespace cs::femtest;
using namespace cs::test;

namespace {

// A soft block dropped 1 cm onto the ground, a 0.5 kg rigid box held to its top face's nodes
// (attachments: hard linear rows) and resting on them (contacts with the ground and the box).
Model blockWithHandleModel() {
    Model model;
    addGround(model, Real(0.6));
    BodyDesc handle;
    handle.name = "handle";
    ShapeDesc shape;
    shape.polytope = makeBox({Real(0.04), Real(0.04), Real(0.01)});
    handle.shapes.push_back(shape);
    handle.mass = Real(0.5);
    handle.pose.pos = {0, 0, Real(0.121)};
    std::string error;
    const int body = addBody(model, handle, &error);
    REQUIRE_MESSAGE(body >= 0, error);
    FemBodyDesc d = blockDesc({Real(0.05), Real(0.05), Real(0.05)}, 2, Real(1e5), Real(0.45), FemMaterialType::StableNeoHookean);
    d.pose.pos = {0, 0, Real(0.06)};
    d.material.friction = Real(0.5);
    for (int n : nodesAt(d.mesh, 2, Real(0.05))) d.attached.push_back({n, body});
    addFem(model, d);
    return model;
}

// Both sides condense; neither culls rows nor reuses narrow phases.
void condenseBoth(WorldSettings& s) {
    s.solver.condenseCompliantRows = true;
    s.solver.cullRows = false;
    s.narrowReuse = false;
}

struct CondensedParity : FemDifferences {
    int iterationMismatches = 0;   // steps whose Newton iteration counts differ
    int directSteps = 0;           // pipeline steps that iterated with one direct solve per iteration
    int iteratedSteps = 0;
    int mostFemContacts = 0;
};

CondensedParity compareCondensed(World& cpu, World& host, int steps, PipelineOptions options = {}) {
    requirePipelineSupports(host);
    PipelineWorld<HostExecutor> pipeline(host, options);
    const std::vector<Vec3> start = cpu.state().femPos;
    CondensedParity p;
    for (int i = 0; i < steps; ++i) {
        cpu.step();
        pipeline.step();
        REQUIRE(!pipeline.lastStepFailed());
        const SolveStats &a = cpu.solveStats(), &b = pipeline.solveStats();
        p.iterationMismatches += a.newtonIterations != b.newtonIterations;
        if (b.newtonIterations > 0) {
            ++p.iteratedSteps;
            p.directSteps += b.linearIterations == b.newtonIterations && a.linearIterations == a.newtonIterations;
        }
        p.mostFemContacts = std::max(p.mostFemContacts, pipeline.femContactCount());
        p.add(cpu, host, start);
    }
    return p;
}

// [J H^-1 J^T + diag(compliance)] of a view's first n rows (the four columns, H^-1 J^T precomputed).
Eigen::MatrixXd denseSystem(const RowSystemView& v, int n, const std::vector<double>& compliance) {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i) {
        int bi[4], bj[4];
        const Spatial *ji[4], *jj[4];
        const int ci = condensedColumns(v, i, bi, ji);
        for (int j = 0; j < n; ++j) {
            const int cj = condensedColumns(v, j, bj, jj);
            for (int a = 0; a < ci; ++a)
                for (int b = 0; b < cj; ++b)
                    if (bi[a] >= 0 && bi[a] == bj[b] && v.invMass[bi[a]] > 0)
                        A(i, j) += double(dot(*ji[a], condensedInvMassColumn(v, j, b)));
        }
        A(i, i) += compliance[i];
    }
    return A;
}

}  // namespace

TEST_CASE("condensed pipeline: fem_cantilever on the pipeline equals World::step with the condensed solve") {
    LibraryScene s;
    std::string error;
    REQUIRE_MESSAGE(loadScene("fem_cantilever", s.model, s.settings, s.info, &error), error);
    condenseBoth(s.settings);
    World cpu(s.model, s.settings), host(s.model, s.settings);
    const int steps = 30;
    const CondensedParity p = compareCondensed(cpu, host, steps);
    MESSAGE("fem_cantilever: largest node position difference " << p.worstNode << " m, velocity " << p.worstVelocity
            << " m/s over " << steps << " steps; node travel " << p.travel << " m; Newton iteration mismatches "
            << p.iterationMismatches << "; steps solved directly " << p.directSteps << " of " << p.iteratedSteps);
    CHECK(p.travel > Real(1e-3));   // the beam sagged: there was something to compare
    CHECK(p.iteratedSteps > 0);
    CHECK(p.directSteps == p.iteratedSteps);   // one direct solve per Newton iteration on both sides
    CHECK(p.iterationMismatches == 0);
    CHECK(p.worstNode == 0);
    CHECK(p.worstVelocity == 0);
}

TEST_CASE("condensed pipeline: a block with attachments and contacts equals World::step with the condensed solve") {
    WorldSettings settings;
    condenseBoth(settings);
    const Model model = blockWithHandleModel();
    World cpu(model, settings), host(model, settings);
    const int steps = 40;
    const CondensedParity p = compareCondensed(cpu, host, steps, smallBuffers());
    MESSAGE("block with handle: largest node position difference " << p.worstNode << " m, velocity " << p.worstVelocity
            << " m/s, rigid body " << p.worstBody << " m over " << steps << " steps; node travel " << p.travel
            << " m; up to " << p.mostFemContacts << " FEM contacts; Newton iteration mismatches "
            << p.iterationMismatches << "; steps solved directly " << p.directSteps << " of " << p.iteratedSteps);
    CHECK(p.travel > Real(1e-3));
    CHECK(p.mostFemContacts > 0);   // contacts (hard, non-smooth rows) besides the attachments (hard, linear)
    CHECK(p.iteratedSteps > 0);
    CHECK(p.directSteps == p.iteratedSteps);
    CHECK(p.iterationMismatches == 0);
    CHECK(p.worstNode == 0);
    CHECK(p.worstVelocity == 0);
    CHECK(p.worstBody == 0);
}

TEST_CASE("condensed pipeline: the pipeline's rows through the condensed solve against a dense solve") {
    WorldSettings settings;
    condenseBoth(settings);
    World world(blockWithHandleModel(), settings);
    PipelineWorld<HostExecutor> pipeline(world);
    for (int i = 0; i < 10; ++i) pipeline.step();   // resting on the ground: contacts and attachments
    REQUIRE(pipeline.femContactCount() > 0);
    const PipelineData<HostExecutor>& d = pipeline.data();
    const int n = d.counters.data()->rowCount;
    REQUIRE(n > 0);
    REQUIRE(n < d.rowCapacity);   // rows past the count are in the buffers too (poisoned or stale)
    RowSystemView v{};
    v.rowCount = d.rowCapacity;
    v.bodyCount = d.solverBodies;
    v.bodyA = d.rowBodyA.data();
    v.bodyB = d.rowBodyB.data();
    v.bodyC = d.fem.bodyC.data();
    v.bodyD = d.fem.bodyD.data();
    v.jacobianA = d.jacobianA.data();
    v.jacobianB = d.jacobianB.data();
    v.jacobianC = d.fem.jacobianC.data();
    v.jacobianD = d.fem.jacobianD.data();
    v.invMass = d.bodyInvMass.data();
    v.invInertia = d.bodyInvInertia.data();
    v.invMassJacobianA = d.minvJA.data();
    v.invMassJacobianB = d.minvJB.data();
    v.invMassJacobianC = d.fem.minvJC.data();
    v.invMassJacobianD = d.fem.minvJD.data();
    const CondensedInput in{v, d.kind.data(), d.softness.data(), d.maxImpulse.data(), &d.counters.data()->rowCount};

    HostExecutor ex;
    CondensedSolve<HostExecutor> solve;
    REQUIRE(solve.prepare(ex, in));
    const CondensedStats& st = solve.stats();
    CHECK(st.softRows > 0);
    CHECK(st.hardRows > 0);
    CHECK(st.touchedDofs > 0);
    // A Newton iteration's compliance: D_S = softness on the condensed rows (what the solve takes
    // for them), on the others a positive value of the kind the linearization gives.
    std::vector<double> compliance(n);
    std::vector<Real> c(n), b(n), fixed(n, 0), step(n, 0);
    const Real* softness = d.softness.data();
    const int* kind = d.kind.data();
    int linear = 0, nonsmooth = 0;
    for (int i = 0; i < n; ++i) {
        const int cls = solve.hostRowClass(i);
        c[i] = cls == kCondensedSoft ? softness[i] : (kind[i] == int(RowKind::Bilateral) ? Real(1e-6) : Real(1e-2));
        compliance[i] = double(c[i]);
        b[i] = std::sin(Real(0.7) * i) + d.bias.data()[i];
        linear += cls == kCondensedHardLinear;
        nonsmooth += cls == kCondensedHard;
    }
    CHECK(linear > 0);      // the attachments
    CHECK(nonsmooth > 0);   // the contacts
    REQUIRE(solve.solve(ex, in, c.data(), b.data(), fixed.data(), step.data()));
    const Eigen::MatrixXd A = denseSystem(v, n, compliance);
    Eigen::VectorXd rhs(n), x(n);
    for (int i = 0; i < n; ++i) {
        rhs[i] = double(b[i]);
        x[i] = double(fixed[i]) + double(step[i]);
    }
    const Eigen::VectorXd reference = A.ldlt().solve(rhs);
    REQUIRE((A * reference - rhs).norm() < 1e-9 * rhs.norm());
    const double error = (x - reference).norm() / reference.norm();
    MESSAGE(n << " rows (" << st.softRows << " condensed, " << st.hardRows << " hard: " << linear << " linear, "
              << nonsmooth << " contact rows), " << st.dofs << " node DOFs, " << st.touchedDofs
              << " touched; |x - x_dense| / |x_dense| = " << error);
    CHECK(error < 1e-9);
    // The damped step t: every linear row (elements, attachments) keeps its own equation exact.
    const double t = 0.4;
    Eigen::VectorXd xt(n);
    for (int i = 0; i < n; ++i) xt[i] = double(fixed[i]) + t * double(step[i]);
    const Eigen::VectorXd r = A * xt - rhs;
    double linearResidual = 0;
    for (int i = 0; i < n; ++i)
        if (solve.hostRowClass(i) != kCondensedHard) linearResidual = std::fmax(linearResidual, std::fabs(r[i]));
    CHECK(linearResidual < 1e-9 * rhs.lpNorm<Eigen::Infinity>());
}
