// The energy guard (engine/solver/energy_guard.h): a step that adds energy nothing in the scene
// supplied is rolled back and counted; steps that gain kinetic energy from gravity, a drive, an
// elastic impact or stored strain are not. Issue 36: heavy_stack under CCP/APGD (100 iterations)
// and under Newton with the Jacobi linear solver flew apart to 1e5-1e6 J with "failed steps 0".
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "engine/exec/host_executor.h"
#include "engine/exec/pipeline_world.h"
#include "engine/grasp/grasp_player.h"
#include "engine/model_builder.h"
#include "engine/scene/scene_loader.h"
#include "tests/fem_test_util.h"
#include "tests/scene_util.h"
#include "engine/solver/energy_guard.h"
#include "engine/solver/newton.h"

using namespace cs;

namespace {

// Gravity's potential energy, -sum m g.x over the dynamic bodies and FEM nodes (J).
double potentialEnergy(const World& w) {
    const Model& m = w.model();
    const State& s = w.state();
    double e = 0;
    for (int b = 0; b < m.bodyCount(); ++b)
        if (!m.isStatic(b)) e -= double(m.mass[b]) * double(dot(w.settings.gravity, s.pos[b]));
    for (int n = 0; n < m.femNodeCount(); ++n)
        if (m.femNodeInvMass[n] > 0) e -= double(m.femNodeMass[n]) * double(dot(w.settings.gravity, s.femPos[n]));
    return e;
}

// What a run did: failed steps, the largest kinetic energy, what gravity could have supplied by
// then (the start's kinetic energy plus the most potential energy released at any step), and
// how far the body that started highest moved.
struct Run {
    int failed = 0;
    double keMax = 0, gravitySupply = 0, topDrift = 0;
    std::string lastError;
};

template <class Stepper>
Run run(World& world, double seconds, Stepper step) {
    const Model& m = world.model();
    int top = -1;
    for (int b = 0; b < m.bodyCount(); ++b)
        if (!m.isStatic(b) && (top < 0 || m.initialPos[b].z > m.initialPos[top].z)) top = b;
    Run r;
    const double pe0 = potentialEnergy(world), ke0 = double(world.kineticEnergy());
    r.gravitySupply = ke0;
    const int steps = int(std::ceil(seconds / double(world.settings.dt) - 1e-9));
    for (int i = 0; i < steps; ++i) {
        if (step(world)) {
            ++r.failed;
            r.lastError = world.lastError();
        }
        r.keMax = std::fmax(r.keMax, double(world.kineticEnergy()));
        r.gravitySupply = std::fmax(r.gravitySupply, ke0 + pe0 - potentialEnergy(world));
    }
    if (top >= 0) r.topDrift = double(length(world.state().pos[top] - m.initialPos[top]));
    return r;
}

Run runWorld(World& world, double seconds) {
    return run(world, seconds, [](World& w) {
        w.step();
        return w.lastStepFailed();
    });
}

}  // namespace

TEST_CASE("energy guard: heavy_stack under CCP/APGD and Newton/Jacobi either stands or reports failed steps") {
    // The copies the user compared: the app's (sleeping on), "ccp/apgd" (the old "ccp/pcr" ran the
    // scene's APGD, 100 iterations) and "standard/jacobi" (Newton, 8 x 40 Jacobi iterations).
    struct Case {
        const char* name;
        ContactModelType model;
        LinearSolverType solver;
    };
    for (const Case& c : {Case{"CCP/APGD", ContactModelType::CCP, LinearSolverType::PCR},
                          Case{"Newton/Jacobi", ContactModelType::Standard, LinearSolverType::Jacobi}}) {
        CAPTURE(c.name);
        test::LoadedScene l = test::loadLibraryScene("heavy_stack");
        l.settings.sleeping = true;
        l.settings.solver.contactModel = c.model;
        l.settings.solver.ccp.solver = CcpSolverType::APGD;
        l.settings.solver.linearSolver = c.solver;
        World world(l.model, l.settings);
        const Run r = runWorld(world, 2.0);
        const bool stands = r.topDrift < 0.05;
        MESSAGE("heavy_stack " << c.name << ": " << (stands ? "stands" : "does not stand") << " (top box moved "
                               << r.topDrift << " m), failed steps " << r.failed << ", kinetic energy at most "
                               << r.keMax << " J, gravity could supply " << r.gravitySupply << " J; last: " << r.lastError);
        CHECK((stands || r.failed > 0));
        // Issue 36's acceptance: no run reports 0 failed steps while its kinetic energy passes 10x
        // what gravity could supply.
        CHECK((r.failed > 0 || r.keMax <= 10 * r.gravitySupply));
        if (r.failed > 0) CHECK(r.lastError.find("energy") != std::string::npos);
    }
}

TEST_CASE("energy guard: the device pipeline (host executor) guards heavy_stack under Newton/Jacobi as World::step does") {
    test::LoadedScene l = test::loadLibraryScene("heavy_stack");
    l.settings.solver.linearSolver = LinearSolverType::Jacobi;
    World cpu(l.model, l.settings), host(l.model, l.settings);
    PipelineWorld<HostExecutor> pipeline(host);
    const Run a = runWorld(cpu, 2.0);
    const Run b = run(host, 2.0, [&](World&) {
        pipeline.step();
        return pipeline.lastStepFailed();
    });
    MESSAGE("World::step: " << a.failed << " failed steps, top box moved " << a.topDrift << " m; pipeline: "
                            << b.failed << " failed steps, top box moved " << b.topDrift << " m");
    CHECK(a.failed > 0);
    CHECK(b.failed > 0);
    CHECK((b.topDrift < 0.05 || b.keMax <= 10 * b.gravitySupply));
}

TEST_CASE("energy guard: scenes that gain kinetic energy legitimately report no failed step") {
    // Gravity (a box thrown onto a plane, a swinging chain), elastic impacts with no gravity
    // (newtons_cradle's COR 1, under the standard model and PLUS's impulses), a brick's PLUS
    // impact and a drive (grasp_box's gripper closing and lifting by its script).
    // (The brick only loses energy over its impacts: there the check is that none is flagged.)
    struct Case {
        const char* scene;
        ContactModelType model;
        double seconds;
        double keptAtLeast;   // the largest kinetic energy over the start's at least this
    };
    for (const Case& c : {Case{"box_on_plane", ContactModelType::Standard, 1.0, 1.1},
                          Case{"hinge_chain", ContactModelType::Standard, 1.0, 1.1},
                          Case{"newtons_cradle", ContactModelType::Standard, 2.0, 0.99},
                          Case{"newtons_cradle", ContactModelType::PLUS, 2.0, 0.99},
                          Case{"brick_impact", ContactModelType::PLUS, 1.0, 0}}) {
        CAPTURE(c.scene);
        CAPTURE(int(c.model));
        test::LoadedScene l = test::loadLibraryScene(c.scene);
        l.settings.solver.contactModel = c.model;
        World world(l.model, l.settings);
        const double ke0 = double(world.kineticEnergy());
        const Run r = runWorld(world, c.seconds);
        MESSAGE(c.scene << " (" << contactModelName(c.model) << "): kinetic energy " << ke0 << " J at the start, "
                        << r.keMax << " J at most, failed steps " << r.failed);
        CHECK(r.failed == 0);
        CHECK(r.keMax >= c.keptAtLeast * ke0);
        if (ke0 == 0) CHECK(r.keMax > 1);   // box_on_plane's box and hinge_chain start at rest
    }
    test::LoadedScene l = test::loadLibraryScene("grasp_box");
    REQUIRE(l.info.grasp.present());
    World world(l.model, l.settings);
    GraspPlayer player(world.model(), l.info.grasp);
    const Run r = run(world, double(l.info.duration), [&](World& w) {
        player.beforeStep(w);
        w.step();
        player.afterStep(w);
        return w.lastStepFailed();
    });
    MESSAGE("grasp_box with its script: kinetic energy at most " << r.keMax << " J, failed steps " << r.failed << "; "
                                                                 << player.text());
    CHECK(r.failed == 0);
    CHECK(r.keMax > 1e-3);
}

TEST_CASE("energy guard: the bound on constructed steps (a velocity kick by hand is caught, gravity and a drive are not)") {
    // A 1 kg box at rest in the air: one step of h = 1/120 s with the solve's result set by hand.
    Model model;
    BodyDesc box;
    box.name = "box";
    box.mass = 1;
    ShapeDesc shape;
    shape.polytope = makeBox({Real(0.1), Real(0.1), Real(0.1)});
    box.shapes.push_back(shape);
    box.pose.pos = Vec3{0, 0, 1};
    std::string error;
    REQUIRE(addBody(model, box, &error) == 0);
    World world(model);
    const State& state = world.state();
    const Vec3 g = world.settings.gravity;
    const Real h = world.settings.dt;
    const uint8_t active[1] = {1};
    BodyVelocities bodies;
    bodies.velocity.assign(1, Spatial{h * g, {0, 0, 0}});
    bodies.unconstrained = bodies.velocity;   // u~ = u- + h g
    ConstraintRows rows;

    // Free fall: 1/2 (g h)^2 = 3.3e-3 J, within G = (g h)^2.
    const StepEnergy fall = stepEnergy(model, state, active, bodies, rows, 0, 0, g, h);
    CAPTURE(fall.rise);
    CAPTURE(fall.allowed());
    CHECK(fall.rise == doctest::Approx(0.5 * double(lengthSq(h * g))));
    CHECK(fall.explained());

    // The same step with the body kicked up at 3 m/s by hand: 4.5 J that nothing supplied.
    bodies.velocity[0].lin = Vec3{0, 0, 3};
    const StepEnergy kick = stepEnergy(model, state, active, bodies, rows, 0, 0, g, h);
    CAPTURE(kick.rise);
    CAPTURE(kick.allowed());
    CHECK(kick.rise == doctest::Approx(4.5));
    CHECK_FALSE(kick.explained());
    CHECK(energyFailure(kick).find("kinetic energy rose 4.5 J in one step") != std::string::npos);

    // The same kick given by a drive row that moves its constraint at 3 m/s with an impulse of
    // 3 N s: what the drive could supply (9 J) covers it.
    rows.add(RowKind::Bilateral, 0, -1, Spatial{{0, 0, -1}, {0, 0, 0}}, Spatial{{0, 0, 0}, {0, 0, 0}}, Real(3), 0, -2);
    rows.lambda[0] = Real(-3);
    const StepEnergy driven = stepEnergy(model, state, active, bodies, rows, 0, 0, g, h);
    CAPTURE(driven.constraints);
    CHECK(driven.constraints == doctest::Approx(9));
    CHECK(driven.explained());

    // Through World::step: the kick given between steps is the step's start (the app's throw),
    // not the step's doing; the step from it is not flagged.
    world.state().linVel[0] = Vec3{0, 0, 3};
    world.step();
    CHECK_FALSE(world.lastStepFailed());
    CHECK(world.failedSteps() == 0);
}

TEST_CASE("energy guard: the tets' potentials kept from the last step's end give bitwise the same energies") {
    // A pressurized, sheared FEM block moving: stepEnergy with the cache against without it, over
    // steps that start where the last ended (the lookup), and after a pressure change, a node
    // moved by hand and a material edit (each must be computed afresh, not read stale).
    Model model;
    FemBodyDesc d = femtest::blockDesc({Real(0.05), Real(0.05), Real(0.05)}, 2, Real(5e4), Real(0.3),
                                       FemMaterialType::CorotatedLinear);
    d.activation.assign(d.mesh.tets.size(), Real(1));
    femtest::addFem(model, d);
    World world(model);
    State state = world.state();
    const Model& m = world.model();
    const int nb = m.bodyCount(), nodes = m.femNodeCount();
    const Real h = world.settings.dt;
    const Vec3 g = world.settings.gravity;
    std::vector<uint8_t> active(nb, 1);
    BodyVelocities bodies;
    bodies.velocity.assign(nb + nodes, Spatial{{0, 0, 0}, {0, 0, 0}});
    for (int n = 0; n < nodes; ++n) {
        const Vec3 x = state.femPos[n];
        state.femPos[n] += Vec3{Real(0.2) * x.z, 0, Real(0.05) * x.x};   // a shear and a stretch
        bodies.velocity[nb + n].lin = Vec3{Real(0.3) * x.y, Real(-0.2) * x.z, Real(0.1)};
    }
    bodies.unconstrained = bodies.velocity;
    state.femActivation.assign(state.femActivation.size(), Real(300));
    ConstraintRows rows;
    FemTetCache cache;
    auto same = [](const StepEnergy& a, const StepEnergy& b) {
        CHECK(a.start == b.start);
        CHECK(a.rise == b.rise);
        CHECK(a.fem == b.fem);
        CHECK(a.femScale == b.femScale);
        CHECK(a.femEnd == b.femEnd);
    };
    auto advance = [&]() {   // the integration's x += h v+, and a new velocity
        for (int n = 0; n < nodes; ++n) {
            state.femPos[n] += h * bodies.velocity[nb + n].lin;
            bodies.velocity[nb + n].lin = bodies.velocity[nb + n].lin * Real(0.9) + Vec3{0, Real(0.01), 0};
        }
        bodies.unconstrained = bodies.velocity;
    };
    for (int step = 0; step < 6; ++step) {
        CAPTURE(step);
        if (step == 3) state.femActivation[0] = Real(800);               // a new pressure
        if (step == 4) state.femPos[0] += Vec3{Real(1e-3), 0, 0};       // a node moved by hand
        if (step == 5) world.model().femBodies[0].material.mu *= 2;     // an edited material
        const StepEnergy plain = stepEnergy(m, state, active.data(), bodies, rows, 0, 0, g, h);
        const StepEnergy cached = stepEnergy(m, state, active.data(), bodies, rows, 0, 0, g, h, &cache);
        CHECK(plain.fem != 0);
        same(plain, cached);
        advance();
    }
}
