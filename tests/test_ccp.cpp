// The cone complementarity model ([CCP], issue 21): every solver (PJ, PGS, APGD and Newton with
// each linear solver over the relaxed rows) against a dense reference, the conic QP of eq. 11
// solved by a log-barrier interior-point iteration written here; eq. 7 checked on the result;
// the relaxation's lift-off h mu |v_T| of a sliding box (none for the standard model); CCP and
// the standard model agreeing at rest.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <vector>

#include "engine/contact/ccp_cone_hd.h"
#include "engine/contact/peg_model.h"
#include "engine/model_builder.h"
#include "engine/scene/scene_loader.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/step_problem.h"
#include "engine/world.h"

using namespace cs;

namespace {

using MatX = Eigen::MatrixXd;
using VecX = Eigen::VectorXd;

void addGround(Model& m) {
    BodyDesc d;
    d.name = "ground";
    d.isStatic = true;
    d.material.friction = 1;   // mixed mu = sqrt(1 * f) for a body of friction f
    ShapeDesc s;
    s.polytope = makeBox({20, 20, 1});
    s.local.pos = {0, 0, -1};
    d.shapes.push_back(s);
    std::string err;
    REQUIRE(addBody(m, d, &err) >= 0);
}

int addBox(Model& m, Vec3 half, Vec3 pos, Real mass, Real mu, Vec3 vel = {0, 0, 0}, Vec3 spin = {0, 0, 0}) {
    BodyDesc d;
    d.name = "box" + std::to_string(m.bodyCount());
    d.mass = mass;
    d.material.friction = mu * mu;
    ShapeDesc s;
    s.polytope = makeBox(half);
    d.shapes.push_back(s);
    d.pose.pos = pos;
    d.linVel = vel;
    d.angVel = spin;
    std::string err;
    int b = addBody(m, d, &err);
    REQUIRE_MESSAGE(b >= 0, err);
    return b;
}

int addSphere(Model& m, Real r, Vec3 pos, Real mass, Real mu, Vec3 vel) {
    BodyDesc d;
    d.name = "sphere" + std::to_string(m.bodyCount());
    d.mass = mass;
    d.material.friction = mu * mu;
    ShapeDesc s;
    s.type = ShapeType::Sphere;
    s.radius = r;
    d.shapes.push_back(s);
    d.pose.pos = pos;
    d.linVel = vel;
    std::string err;
    int b = addBody(m, d, &err);
    REQUIRE_MESSAGE(b >= 0, err);
    return b;
}

// The dense problem of eq. 11 from the rows, built here from J, M^-1 and the gaps alone.
struct DenseCcp {
    MatX N;
    VecX p;
    MatX minvJt;   // (6 bodies) x rows: M^-1 J^T
    VecX uTilde;   // (6 bodies)
    std::vector<int> cone;    // first row of each contact
    std::vector<double> mu;
};

DenseCcp denseProblem(const StepProblem& sp) {
    const ConstraintRows& r = sp.rows;
    const int n = r.size(), nb = (int)sp.bodies.invMass.size();
    MatX J = MatX::Zero(n, 6 * nb), Minv = MatX::Zero(6 * nb, 6 * nb);
    DenseCcp d;
    d.uTilde = VecX::Zero(6 * nb);
    for (int b = 0; b < nb; ++b) {
        for (int k = 0; k < 3; ++k) {
            Minv(6 * b + k, 6 * b + k) = sp.bodies.invMass[b];
            for (int l = 0; l < 3; ++l) Minv(6 * b + 3 + k, 6 * b + 3 + l) = sp.bodies.invInertia[b].m[k][l];
            d.uTilde[6 * b + k] = sp.bodies.unconstrained[b].lin[k];
            d.uTilde[6 * b + 3 + k] = sp.bodies.unconstrained[b].ang[k];
        }
    }
    VecX offset = VecX::Zero(n);
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            if (r.bodyA[i] >= 0) J(i, 6 * r.bodyA[i] + k) += r.jacobianA[i].lin[k], J(i, 6 * r.bodyA[i] + 3 + k) += r.jacobianA[i].ang[k];
            if (r.bodyB[i] >= 0) J(i, 6 * r.bodyB[i] + k) += r.jacobianB[i].lin[k], J(i, 6 * r.bodyB[i] + 3 + k) += r.jacobianB[i].ang[k];
        }
        REQUIRE(r.kind[i] != int(RowKind::Bilateral));
        if (r.kind[i] == int(RowKind::Normal)) {
            offset[i] = r.bias[i] / sp.h;   // Phi / h of d_i (section 4)
            d.cone.push_back(i);
            d.mu.push_back(r.mu[i + 1]);
        }
    }
    d.minvJt = Minv * J.transpose();
    d.N = J * d.minvJt;
    d.p = J * d.uTilde + offset;
    return d;
}

// min 1/2 x.N x + p.x over the cones mu x_n >= |x_t| by the log barrier
//   t f(x) - sum_i log(mu_i^2 x_n^2 - x_u^2 - x_w^2)      (2 per cone: gap bound 2 K / t)
// with damped Newton steps kept strictly inside the cones, t up by 10 per round until the gap
// bound is below 1e-15 (in the units of f).
VecX solveBarrier(const DenseCcp& d) {
    const int n = (int)d.p.size(), K = (int)d.cone.size();
    VecX x = VecX::Zero(n);
    for (int c : d.cone) x[c] = 0.1;
    auto barrierOk = [&](const VecX& y) {
        for (int i = 0; i < K; ++i) {
            const int c = d.cone[i];
            if (!(y[c] > 0) || d.mu[i] * d.mu[i] * y[c] * y[c] - y[c + 1] * y[c + 1] - y[c + 2] * y[c + 2] <= 0) return false;
        }
        return true;
    };
    auto value = [&](const VecX& y, double t) {
        double f = t * (0.5 * y.dot(d.N * y) + d.p.dot(y));
        for (int i = 0; i < K; ++i) {
            const int c = d.cone[i];
            f -= std::log(d.mu[i] * d.mu[i] * y[c] * y[c] - y[c + 1] * y[c + 1] - y[c + 2] * y[c + 2]);
        }
        return f;
    };
    for (double t = 1; 2.0 * K / t > 1e-15; t *= 10) {
        for (int it = 0; it < 100; ++it) {
            VecX grad = t * (d.N * x + d.p);
            MatX hess = t * d.N;
            for (int i = 0; i < K; ++i) {
                const int c = d.cone[i];
                const double m2 = d.mu[i] * d.mu[i];
                const double D = m2 * x[c] * x[c] - x[c + 1] * x[c + 1] - x[c + 2] * x[c + 2];
                Eigen::Vector3d dD(2 * m2 * x[c], -2 * x[c + 1], -2 * x[c + 2]);
                Eigen::Matrix3d ddD = Eigen::Vector3d(2 * m2, -2, -2).asDiagonal();
                grad.segment<3>(c) -= dD / D;
                hess.block<3, 3>(c, c) += -ddD / D + dD * dD.transpose() / (D * D);
            }
            VecX step = -hess.ldlt().solve(grad);
            const double decrement = -grad.dot(step);
            if (decrement < 1e-20) break;
            double s = 1;
            const double f0 = value(x, t);
            while (s > 1e-20 && (!barrierOk(x + s * step) || value(x + s * step, t) > f0 - 0.25 * s * decrement)) s *= 0.5;
            x += s * step;
            if (decrement < 1e-16) break;
        }
    }
    return x;
}

StepProblem makeProblem(const Model& m, Real h) {
    WorldSettings s;
    s.dt = h;
    s.solver.contactModel = ContactModelType::CCP;
    World w(m, s);
    StepProblem sp;
    buildStepProblem(w, sp);
    return sp;
}

// Three small problems: a box sliding and turning on the ground; a stack of three boxes of
// masses 1, 4, 0.5 kg whose top one slides; four spheres in a pyramid with random velocities.
std::vector<std::pair<std::string, Model>> smallProblems() {
    std::vector<std::pair<std::string, Model>> out;
    {
        Model m;
        addGround(m);
        addBox(m, {Real(0.2), Real(0.2), Real(0.05)}, {0, 0, Real(0.05)}, 1, Real(0.5), {1, Real(0.3), 0}, {0, 0, 2});
        out.emplace_back("sliding box", m);
    }
    {
        Model m;
        addGround(m);
        addBox(m, {Real(0.3), Real(0.3), Real(0.1)}, {0, 0, Real(0.1)}, 1, Real(0.6));
        addBox(m, {Real(0.25), Real(0.25), Real(0.1)}, {0, 0, Real(0.3)}, 4, Real(0.4), {Real(0.2), 0, 0});
        addBox(m, {Real(0.15), Real(0.15), Real(0.1)}, {Real(0.05), 0, Real(0.5)}, Real(0.5), Real(0.7), {-1, Real(0.5), 0});
        out.emplace_back("stack of three", m);
    }
    {
        Model m;
        addGround(m);
        const Real r = Real(0.1), s3 = std::sqrt(Real(3));
        addSphere(m, r, {0, 0, r}, 1, Real(0.5), {Real(0.3), 0, 0});
        addSphere(m, r, {2 * r, 0, r}, 2, Real(0.4), {0, Real(-0.2), 0});
        addSphere(m, r, {r, s3 * r, r}, 1, Real(0.6), {Real(-0.1), Real(0.1), 0});
        addSphere(m, r, {r, s3 * r / 3, r + 2 * r * std::sqrt(Real(2) / 3)}, Real(0.5), Real(0.5), {Real(0.5), 0, 0});
        out.emplace_back("sphere pyramid", m);
    }
    return out;
}

struct SolverCase {
    const char* name;
    CcpSolverType type;
    LinearSolverType linear;
};

}  // namespace

TEST_CASE("ccp: the friction cone projection is the Euclidean projection onto K") {
    const Real mu = Real(0.5);
    // Inside K kept, inside the polar cone to zero, otherwise the closest point of K's boundary.
    CHECK(projectFrictionCone({1, Real(0.3), Real(0.2)}, mu).x == doctest::Approx(1));
    const Vec3 polar = projectFrictionCone({-1, Real(0.2), 0}, mu);
    CHECK(length(polar) == 0);
    const Vec3 q = projectFrictionCone({Real(0.2), 1, 0}, mu);
    CHECK(q.y == doctest::Approx(mu * q.x));
    // The residual is orthogonal to the boundary ray: (x - q).(1, mu) = 0.
    CHECK((Real(0.2) - q.x) + mu * (1 - q.y) == doctest::Approx(0).epsilon(1e-12));
}

TEST_CASE("ccp: every solver agrees with a dense interior-point solution of eq. 11 and meets eq. 7") {
    const Real h = Real(1.0 / 120);
    const std::vector<SolverCase> cases = {
        {"pj", CcpSolverType::Jacobi, LinearSolverType::PCR},
        {"pgs", CcpSolverType::GaussSeidel, LinearSolverType::PCR},
        {"apgd", CcpSolverType::APGD, LinearSolverType::PCR},
        {"newton-pcr", CcpSolverType::Newton, LinearSolverType::PCR},
        {"newton-pcg", CcpSolverType::Newton, LinearSolverType::PCG},
        {"newton-gs", CcpSolverType::Newton, LinearSolverType::GaussSeidel},
        {"newton-jacobi", CcpSolverType::Newton, LinearSolverType::Jacobi},
    };
    for (auto& [label, model] : smallProblems()) {
        const StepProblem sp = makeProblem(model, h);
        const DenseCcp d = denseProblem(sp);
        REQUIRE(d.cone.size() >= 4);
        const VecX x = solveBarrier(d);
        const VecX uRef = d.uTilde + d.minvJt * x;
        const double fRef = 0.5 * x.dot(d.N * x) + d.p.dot(x);
        for (const SolverCase& c : cases) {
            CAPTURE(label);
            const std::string solverName = c.name;
            CAPTURE(solverName);
            ConstraintRows rows = sp.rows;
            BodyVelocities bodies = sp.bodies;
            SolverSettings s;
            s.contactModel = ContactModelType::CCP;
            s.ccp.solver = c.type;
            s.ccp.iterations = 50000;
            s.ccp.tolerance = Real(1e-9);
            s.linearSolver = c.linear;
            s.newtonIterations = 400;
            s.linearIterations = 200;
            CcpScratch scratch;
            SolveStats stats;
            solveCcp(s, h, rows, bodies, scratch, stats);
            // The stack has two contacts at the boundary of their cones (zero impulse where the
            // gap is exactly closing: strict complementarity fails). There PJ and PGS, and Newton
            // with the inexact Jacobi or GS linear solves, stall near 1e-6 m/s (PJ, PGS) and
            // 1e-5 m/s (Newton) with the top box's spin off by ~5e-4 rad/s, measured; APGD and
            // Newton with PCG or PCR reach 1e-9 m/s. Elsewhere every solver must converge.
            const bool stalls = label == "stack of three" && c.type != CcpSolverType::APGD &&
                                (c.type != CcpSolverType::Newton || c.linear == LinearSolverType::GaussSeidel ||
                                 c.linear == LinearSolverType::Jacobi);
            MESSAGE(label, " ", solverName, ": ", stats.ccpMerit.size() - 1, " iterations, CCP merit ",
                    stats.residualFinal, " m/s");
            // Eq. 7 per contact: gamma in K, -d in K°, gamma . d = 0.
            const CcpCheck check = checkCcp(rows, bodies, h);
            CHECK(check.contacts == (int)d.cone.size());
            // N may be singular (four corners of a face), so gamma is not unique; the velocities
            // u = u~ + M^-1 J^T gamma and the optimal value are.
            double du = 0;
            for (int b = 0; b < (int)bodies.velocity.size(); ++b)
                for (int k = 0; k < 3; ++k) {
                    du = std::max(du, std::fabs(double(bodies.velocity[b].lin[k]) - uRef[6 * b + k]));
                    du = std::max(du, std::fabs(double(bodies.velocity[b].ang[k]) - uRef[6 * b + 3 + k]));
                }
            VecX gamma(rows.size());
            for (int i = 0; i < rows.size(); ++i) gamma[i] = rows.lambda[i];
            const double f = 0.5 * gamma.dot(d.N * gamma) + d.p.dot(gamma);
            if (stalls) {
                CHECK(stats.residualFinal <= 1e-4);
                CHECK(du <= 1e-3);
                continue;
            }
            CHECK(stats.residualFinal <= 1e-9);
            CHECK(check.primal <= 1e-9);    // N s (Newton's NCP iterate may sit 1e-10 outside K)
            CHECK(check.dual <= 1e-8);      // m/s
            CHECK(check.product <= 1e-9);   // N m
            CHECK(du <= 1e-7);
            CHECK(std::fabs(f - fRef) <= 1e-8 * std::fabs(fRef));
        }
    }
}

TEST_CASE("ccp: a sliding box gains h mu |v_T| of normal separation per step; the standard model none") {
    for (Real h : {Real(1.0 / 60), Real(1.0 / 240)})
        for (Real mu : {Real(0.25), Real(0.5)})
            for (Real v0 : {Real(0.5), Real(2)})
                for (ContactModelType type : {ContactModelType::CCP, ContactModelType::Standard}) {
                    Model m;
                    addGround(m);
                    const int b = addBox(m, {Real(0.2), Real(0.2), Real(0.05)}, {0, 0, Real(0.05)}, 1, mu, {v0, 0, 0});
                    WorldSettings s;
                    s.dt = h;
                    s.solver.contactModel = type;
                    s.solver.ccp.solver = CcpSolverType::GaussSeidel;
                    s.solver.ccp.iterations = 5000;
                    s.solver.ccp.tolerance = Real(1e-10);
                    s.solver.newtonTolerance = Real(1e-10);
                    s.solver.newtonIterations = 50;
                    World w(m, s);
                    w.step();
                    const Real lift = w.state().pos[b].z - Real(0.05);
                    const Real vT = std::hypot(w.state().linVel[b].x, w.state().linVel[b].y);
                    const Real expected = type == ContactModelType::CCP ? h * mu * vT : Real(0);
                    CAPTURE(h);
                    CAPTURE(mu);
                    CAPTURE(v0);
                    const std::string model = contactModelName(type);
                    CAPTURE(model);
                    CHECK(vT > Real(0.4) * v0);   // still sliding
                    CHECK(std::fabs(lift - expected) <= Real(1e-6) * expected + Real(1e-9));
                    if (type == ContactModelType::CCP) {
                        Real drawn = 0;
                        for (const Contact& c : w.contacts()) drawn = std::max(drawn, c.ccpSeparation);
                        CHECK(drawn == doctest::Approx(expected).epsilon(1e-6));
                    }
                }
}

TEST_CASE("ccp: at rest the CCP and standard models agree") {
    // A stack of three boxes (1, 4, 0.5 kg) settling from touching: after 2 s both models hold
    // it at the same place, every contact still, with the weight carried by the ground.
    Model m;
    addGround(m);
    addBox(m, {Real(0.3), Real(0.3), Real(0.1)}, {0, 0, Real(0.1)}, 1, Real(0.6));
    addBox(m, {Real(0.25), Real(0.25), Real(0.1)}, {0, 0, Real(0.3)}, 4, Real(0.4));
    addBox(m, {Real(0.15), Real(0.15), Real(0.1)}, {Real(0.05), 0, Real(0.5)}, Real(0.5), Real(0.7));
    std::vector<Vec3> end[2];
    for (int k = 0; k < 2; ++k) {
        WorldSettings s;
        s.solver.contactModel = k == 0 ? ContactModelType::CCP : ContactModelType::Standard;
        World w(m, s);
        for (int i = 0; i < 240; ++i) w.step();
        end[k] = w.state().pos;
        CHECK(w.kineticEnergy() < 1e-8);
        Real ground = 0, separation = 0;
        for (const Contact& c : w.contacts()) {
            if (c.geometry.bodyB == 0 || c.geometry.bodyA == 0) ground += c.normalImpulse;
            separation = std::max(separation, c.ccpSeparation);
        }
        CHECK(ground == doctest::Approx(Real(5.5) * Real(9.81) * s.dt).epsilon(1e-4));
        CHECK(separation < 1e-7);   // h mu |v_T| with |v_T| within the solvers' 1e-5 m/s tolerance
    }
    for (int b = 1; b < 4; ++b) CHECK(length(end[0][b] - end[1][b]) < 1e-5);
}

TEST_CASE("ccp: APGD on the scaled problem holds heavy_stack's cold first step within 700 iterations") {
    // The 4096:1 stack's first step from zero impulses. APGD with one step 1/L for every contact
    // needed ~1000 iterations to 1e-5 m/s (the contacts between the heavy boxes, N_kk ~ 3e-4 1/kg
    // against ~0.5 between the light ones, barely moved; 9.3e-5 m/s after 700), measured; on the
    // problem scaled by the blocks' s_k it needs 451.
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    REQUIRE_MESSAGE(loadScene("heavy_stack", model, settings, info, &error), error);
    settings.solver.contactModel = ContactModelType::CCP;
    World w(model, settings);
    StepProblem sp;
    buildStepProblem(w, sp);
    SolverSettings s = settings.solver;
    s.ccp.solver = CcpSolverType::APGD;
    s.ccp.iterations = 700;
    s.ccp.tolerance = Real(1e-5);
    CcpScratch scratch;
    SolveStats stats;
    solveCcp(s, settings.dt, sp.rows, sp.bodies, scratch, stats);
    MESSAGE("heavy_stack first step: APGD ", stats.ccpMerit.size() - 1, " iterations, CCP merit ", stats.residualFinal, " m/s");
    CHECK(stats.residualFinal <= 1e-5);
    Real sink = 0;   // every box's end-of-step speed
    for (const Spatial& u : sp.bodies.velocity) sink = std::max(sink, length(u.lin));
    CHECK(sink < 1e-5);
}

TEST_CASE("ccp: PGS colours reused across set-ups and the packed sweep equal a fresh colouring and the plain sweep") {
    // CcpProblem keeps its colouring while the blocks' bodies repeat, and sweeps copies of the
    // rows in colour order. A problem set up on one scene's rows, then another's, then the first
    // again with a body made static must colour as a fresh problem does; and one sweep must give
    // the bits of ccpGaussSeidelBlock run over the rows in place, block by block in colour order.
    auto problemOf = [](const char* scene, StepProblem& sp) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string error;
        REQUIRE_MESSAGE(loadScene(scene, model, settings, info, &error), error);
        settings.solver.contactModel = ContactModelType::CCP;
        World w(model, settings);
        for (int i = 0; i < 5; ++i) w.step();
        buildStepProblem(w, sp);
        return settings.dt;
    };
    StepProblem pyramid, pile;
    const Real h = problemOf("pyramid", pyramid);
    problemOf("table_pile", pile);
    CcpProblem reused;
    auto sameAsFresh = [&](const StepProblem& sp, const char* label) {
        CAPTURE(std::string(label));
        reused.setup(sp.rows, sp.bodies, h, true);
        CcpProblem fresh;
        fresh.setup(sp.rows, sp.bodies, h, true);
        REQUIRE(fresh.blockCount() > 10);
        CHECK(reused.colourOrder == fresh.colourOrder);
        CHECK(reused.colourStart == fresh.colourStart);
    };
    sameAsFresh(pyramid, "pyramid");
    sameAsFresh(pile, "table_pile after the pyramid");
    sameAsFresh(pile, "table_pile again (colours kept)");
    StepProblem pinned = pyramid;
    int box = -1;   // the first dynamic body, made static
    for (int b = 0; b < (int)pinned.bodies.invMass.size() && box < 0; ++b)
        if (pinned.bodies.invMass[b] > 0) box = b;
    REQUIRE(box >= 0);
    pinned.bodies.invMass[box] = 0;
    sameAsFresh(pyramid, "pyramid after the pile");
    sameAsFresh(pinned, "pyramid with a body made static");

    // One sweep from the warm impulses, packed against in place.
    CcpProblem p;
    p.setup(pyramid.rows, pyramid.bodies, h, true);
    std::vector<Real> xPacked = pyramid.rows.lambda, xPlain = pyramid.rows.lambda;
    std::vector<Spatial> uPacked = pyramid.bodies.velocity, uPlain = pyramid.bodies.velocity;
    p.gaussSeidelSweep(1, xPacked.data(), uPacked.data());
    for (int b : p.colourOrder)
        ccpGaussSeidelBlock(p.view(), p.offset.data(), p.blockFirst[b], p.blockKind[b], 1 / p.blockScale[b], p.mu[b],
                            p.limit[b], xPlain.data(), uPlain.data());
    CHECK(xPacked != pyramid.rows.lambda);   // the sweep moved the impulses
    CHECK(xPacked == xPlain);
    bool sameVelocity = true;
    for (size_t b = 0; b < uPlain.size(); ++b)
        sameVelocity = sameVelocity && length(uPacked[b].lin - uPlain[b].lin) == 0 && length(uPacked[b].ang - uPlain[b].ang) == 0;
    CHECK(sameVelocity);
}
