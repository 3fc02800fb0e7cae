// The device pipeline run by the host executor against the CPU backend (World::step), on every
// library scene the pipeline covers: the same pipeline text the CUDA executor runs on a GPU
// (engine/exec/pipeline_*.h), so its control flow (counts, capacities, growth and re-runs,
// compaction, the solver's loops, gates and scalar steps) is checked in every build.
//
// Stated tolerance: the host executor adds every sum in the CPU backend's order and scatters in
// the CPU's run order, so for Jacobi, PCG and PCR the two agree bit for bit: the contact counts
// of every step and every position after 60 steps are required to be equal (difference 0).
// Gauss-Seidel colours its rows differently (parallel rounds instead of the CPU's serial greedy
// colouring): a different sweep order, checked against a bound instead. Both worlds run as
// World::step does by default: row culling (engine/contact/row_culling.h) and narrow-phase reuse
// (engine/collision/feature_cache_hd.h), both on both sides (culling of the FEM node-part contacts
// too), and in one sweep with every row. With one substep, each
// step's narrow phase is also checked against collidePairs with a FeatureCache on the same pairs:
// the same reuse decisions (counts) and the same contacts, bit for bit.
// The capacities start at 2 pairs, 2 contacts, 1 contact per pair and 1 reuse candidate, so every
// scene grows its buffers and re-runs steps.
// The library sweep is split by cost: the rigid scenes take about 1 s in all (make test); the
// scenes with FEM bodies, whose nodes are compared too, take minutes (make validate).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "engine/collision/feature_cache.h"
#include "engine/collision/narrow_phase.h"
#include "engine/solver/islands.h"
#include "tests/cube_over_floor.h"
#include "tests/parity_helpers.h"

using namespace cs;
using namespace cs::test;

namespace {

struct Parity : FemDifferences {   // worstBody: m, largest |x_cpu - x_pipeline| over all bodies and steps
    int countMismatches = 0;   // steps (of the first countSteps) with different contact counts
    int firstMismatch = -1;
    long long growth = 0;
    long long femCulled = 0;   // FEM node-part contacts the pipeline left out, summed over steps
    int maxContacts = 0;       // the CPU's most contacts in a step (none: nothing to grow)
    long long culled = 0;      // contacts the pipeline left out, summed over steps (row culling)
    int resolves = 0;          // steps the pipeline solved again with every row
    int cullStatsDiffer = 0;   // steps whose culled count or re-solves differ from the CPU's
    // Narrow-phase reuse (one substep): the pipeline's against collidePairs with a FeatureCache
    long long reused = 0, rebuilt = 0;   // the pipeline's pair-steps run on candidates, with new ones
    int reuseDecisionsDiffer = 0;        // steps whose reused, rebuilt or full counts differ
    int reuseContactsDiffer = 0;         // steps whose narrow-phase output differs in any bit
};

bool sameContactBits(const PotentialContact& a, const PotentialContact& b) {
    return a.shapeA == b.shapeA && a.shapeB == b.shapeB && a.bodyA == b.bodyA && a.bodyB == b.bodyB &&
           a.featureA == b.featureA && a.featureB == b.featureB && a.type == b.type &&
           std::memcmp(&a.pointA, &b.pointA, sizeof(Vec3)) == 0 && std::memcmp(&a.pointB, &b.pointB, sizeof(Vec3)) == 0 &&
           std::memcmp(&a.normal, &b.normal, sizeof(Vec3)) == 0 && std::memcmp(&a.gap, &b.gap, sizeof(Real)) == 0;
}

// The pipeline's narrow phase of the step just run (one substep, from state `before`) against the
// CPU's collidePairs with the FeatureCache `cache` (World::substep's call) on the same pairs: the
// same decisions, pair for pair counts, and the same contacts, bit for bit.
void checkReuse(const World& host, const PipelineWorld<HostExecutor>& pipeline, const State& before,
                FeatureCache& cache, Parity& p) {
    const PipelineData<HostExecutor>& d = pipeline.data();
    const StepCounters& c = d.hostCounters;
    std::vector<ShapePair> pairs;
    for (int i = 0; i < c.pairCount; ++i) {
        const uint64_t key = d.pairKeysOut.data()[i];
        pairs.push_back(ShapePair{int(key >> 32), int(uint32_t(key))});
    }
    std::vector<PotentialContact> cpu;
    collidePairs(host.model(), before, pairs, narrowPhaseSettings(host.settings, host.settings.dt), cpu, &cache);
    p.reused += c.reusedPairs;
    p.rebuilt += c.rebuiltPairs;
    p.reuseDecisionsDiffer += c.reusedPairs != cache.reusedPairs || c.rebuiltPairs != cache.rebuiltPairs ||
                              c.fullPairs != cache.fullPairs;
    bool same = (int)cpu.size() == c.contactCount;
    for (int i = 0; same && i < c.contactCount; ++i) same = sameContactBits(cpu[i], d.contacts.data()[i]);
    p.reuseContactsDiffer += !same;
}

// Steps both worlds `steps` times; contact counts compared over the first countSteps.
// everyIteration: the host executor runs every loop iteration and every conditional stretch with
// its gates closed instead of skipping them, as the CUDA executor does (HostExecutor).
Parity compare(World& cpu, World& host, int steps, int countSteps, bool everyIteration = false) {
    PipelineWorld<HostExecutor> pipeline(host, smallBuffers());
    pipeline.executor().recordEveryIteration = everyIteration;
    const std::vector<Vec3> start = cpu.state().femPos;
    Parity p;
    FeatureCache cache;   // the CPU's reuse beside the pipeline's (checkReuse)
    const bool checksReuse = host.settings.narrowReuse && host.settings.substeps <= 1;
    for (int i = 0; i < steps; ++i) {
        cpu.step();
        const State before = host.state();
        pipeline.step();
        if (checksReuse) checkReuse(host, pipeline, before, cache, p);
        p.maxContacts = std::max(p.maxContacts, (int)cpu.contacts().size());
        if (i < countSteps && contactCountsDiffer(cpu, pipeline)) {
            if (p.firstMismatch < 0) p.firstMismatch = i;
            ++p.countMismatches;
        }
        p.culled += pipeline.solveStats().culledContacts;
        p.femCulled += pipeline.data().hostCounters.femCulled;
        p.resolves += pipeline.solveStats().cullResolves;
        p.cullStatsDiffer += pipeline.solveStats().culledContacts != cpu.solveStats().culledContacts ||
                             pipeline.solveStats().cullResolves != cpu.solveStats().cullResolves;
        p.add(cpu, host, start);
    }
    p.growth = pipeline.bufferStats().growthEvents;
    return p;
}

// Every library scene the pipeline covers, with or without FEM bodies, bit for bit (rigid bodies,
// and FEM nodes' positions and velocities), with PCG and PCR's given preconditioner; everyRow:
// row culling off on both sides.
void compareEveryScene(Preconditioner preconditioner, bool withFem, bool everyRow = false) {
    constexpr int kSteps = 60, kCountSteps = 20;
    int compared = 0;
    long long culled = 0, reused = 0;
    for (const std::string& name : listScenes()) {
        CAPTURE(name);
        World cpu = everyRow ? everyRowWorld(name) : comparableWorld(name);
        World host = everyRow ? everyRowWorld(name) : comparableWorld(name);
        if ((cpu.model().femNodeCount() > 0) != withFem) continue;
        cpu.settings.solver.preconditioner = host.settings.solver.preconditioner = preconditioner;
        std::string why;
        if (!pipelineSupports(host, &why)) {
            MESSAGE(name << ": not on the device pipeline (" << why << ")");
            continue;
        }
        const auto start = std::chrono::steady_clock::now();
        const Parity p = compare(cpu, host, kSteps, kCountSteps);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        MESSAGE(name << " (" << seconds << " s): largest position difference " << p.worstBody << " m, FEM node "
                     << p.worstNode << " m and " << p.worstVelocity << " m/s over " << kSteps
                     << " steps; contact-count mismatches in the first " << kCountSteps << " steps: "
                     << p.countMismatches << "; buffer growth re-runs: " << p.growth << "; contacts culled "
                     << p.culled << ", re-solves " << p.resolves << "; narrow-phase reuse: pair-steps reused "
                     << p.reused << ", rebuilt " << p.rebuilt);
        CHECK(p.countMismatches == 0);
        CHECK(p.cullStatsDiffer == 0);
        CHECK(p.reuseDecisionsDiffer == 0);
        CHECK(p.reuseContactsDiffer == 0);
        if (everyRow) CHECK(p.culled == 0);
        culled += p.culled;
        reused += p.reused;
        CHECK(p.worstBody == 0);
        CHECK(p.worstNode == 0);
        CHECK(p.worstVelocity == 0);
        if (withFem) CHECK(p.travel > Real(1e-3));   // the nodes moved: there was something to compare
        if (p.maxContacts > 2) CHECK(p.growth > 0);   // a jointed chain may touch nothing
        ++compared;
    }
    CHECK(compared >= (withFem ? 8 : 15));
    if (!everyRow) CHECK(culled > 0);   // culling left contacts out somewhere: it was compared
    CHECK(reused > 0);   // the pipeline ran pairs on their candidates: reuse was compared
}

}  // namespace

TEST_CASE("exec parity: the device pipeline on the host executor equals the CPU backend on every rigid library scene") {
    compareEveryScene(Preconditioner::Diagonal, false);
}

TEST_CASE("exec parity: the same with the block preconditioner (block_preconditioner_hd.h)") {
    compareEveryScene(Preconditioner::Block, false);
}

// With every row, the solve that culling replaces on most steps is compared on every step.
TEST_CASE("exec parity: every rigid library scene with row culling off") {
    compareEveryScene(Preconditioner::Diagonal, false, true);
}

// Row culling's second solve (recordStep: a left-out contact closed, or the reduced solve did not
// converge) and the device's control flow: the host executor running every gated iteration and
// stretch as the CUDA executor records them, bit for bit. The three boxes of test_row_culling.cpp
// (two at rest 1 mm apart, a third striking the first at 5 m/s: the check fails and the step is
// solved again), the peer pyramid (1 mm side gaps: contacts left out every step), the card house,
// and fem_tomato_drop (FEM node-part contacts left out, then solved again when they close).
TEST_CASE("exec parity: row culling's second solve, and every gated stretch recorded as on the device") {
    auto box = [](Real x, Vec3 v) {
        BodyDesc b;
        b.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({0.5, 0.5, 0.5}), 0});
        b.pose.pos = {x, 0, 0.5};
        b.linVel = v;
        return b;
    };
    Model strike;
    std::string err;
    BodyDesc ground;
    ground.isStatic = true;
    ground.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({20, 20, 0.5}), 0});
    ground.pose.pos = {0, 0, -0.5};
    REQUIRE(addBody(strike, ground, &err) >= 0);
    for (const BodyDesc& b : {box(0, {0, 0, 0}), box(1.001, {0, 0, 0}), box(-1.005, {5, 0, 0})})
        REQUIRE(addBody(strike, b, &err) >= 0);
    for (bool everyIteration : {false, true}) {
        CAPTURE(everyIteration);
        {
            World cpu(strike, WorldSettings{}), host(strike, WorldSettings{});
            const Parity p = compare(cpu, host, 10, 10, everyIteration);
            MESSAGE("strike: largest position difference " << p.worstBody << " m; culled " << p.culled
                                                         << ", re-solves " << p.resolves);
            CHECK(p.resolves > 0);
            CHECK(p.worstBody == 0);
            CHECK(p.countMismatches == 0);
            CHECK(p.cullStatsDiffer == 0);
        }
        for (const std::string scene : {std::string(CS_SOURCE_DIR) + "/bench/scenes/peer_pyramid_55.json",
                                        std::string("card_house")}) {
            CAPTURE(scene);
            World cpu = comparableWorld(scene), host = comparableWorld(scene);
            const Parity p = compare(cpu, host, 40, 40, everyIteration);
            MESSAGE(scene << ": largest position difference " << p.worstBody << " m; culled " << p.culled
                          << ", re-solves " << p.resolves);
            if (scene.find("peer_pyramid") != std::string::npos) CHECK(p.culled > 0);
            CHECK(p.worstBody == 0);
            CHECK(p.countMismatches == 0);
            CHECK(p.cullStatsDiffer == 0);
            CHECK(p.reused > 0);
            CHECK(p.reuseDecisionsDiffer == 0);
            CHECK(p.reuseContactsDiffer == 0);
        }
        {   // FEM node-part contacts culled too (recordFemCull): the tomato falls onto the ground, its
            // left-out node contacts close near step 35 and the step is solved again with every row
            LibraryScene s;   // as the scene file sets it: with the condensed FEM solve, on both sides
            std::string error;
            REQUIRE_MESSAGE(loadScene("fem_tomato_drop", s.model, s.settings, s.info, &error), error);
            World cpu(s.model, s.settings), host(s.model, s.settings);
            const Parity p = compare(cpu, host, 40, 40, everyIteration);
            MESSAGE("fem_tomato_drop: largest position difference " << p.worstBody << " m, FEM node " << p.worstNode
                                                                    << " m; culled " << p.culled << " (FEM "
                                                                    << p.femCulled << "), re-solves " << p.resolves);
            CHECK(p.femCulled > 0);
            CHECK(p.resolves > 0);
            CHECK(p.worstBody == 0);
            CHECK(p.worstNode == 0);
            CHECK(p.worstVelocity == 0);
            CHECK(p.countMismatches == 0);
            CHECK(p.cullStatsDiffer == 0);
        }
    }
}

TEST_CASE("exec parity: every library scene with FEM bodies, nodes too" * doctest::test_suite("validate")) {
    compareEveryScene(Preconditioner::Diagonal, true);
}

TEST_CASE("exec parity: every library scene with FEM bodies, with the block preconditioner" * doctest::test_suite("validate")) {
    compareEveryScene(Preconditioner::Block, true);
}

TEST_CASE("exec parity: every linear solver and NCP function, substeps, on the pyramid and the card house") {
    struct Variant {
        const char* name;
        LinearSolverType solver;
        NcpFunction ncp;
        int substeps;
        Real tolerance;   // m; 0: bit for bit
        int iterations;
        Preconditioner preconditioner = Preconditioner::Diagonal;
    };
    const Variant variants[] = {
        {"jacobi", LinearSolverType::Jacobi, NcpFunction::FischerBurmeister, 1, 0, 40},
        {"pcg", LinearSolverType::PCG, NcpFunction::FischerBurmeister, 1, 0, 40},
        {"pcr/min-map", LinearSolverType::PCR, NcpFunction::MinimumMap, 1, 0, 40},
        {"pcr/2 substeps", LinearSolverType::PCR, NcpFunction::FischerBurmeister, 2, 0, 40},
        {"gs", LinearSolverType::GaussSeidel, NcpFunction::FischerBurmeister, 1, Real(2e-3), 40},
        {"pcg/block", LinearSolverType::PCG, NcpFunction::FischerBurmeister, 1, 0, 40, Preconditioner::Block},
        {"pcr/block/2 substeps", LinearSolverType::PCR, NcpFunction::FischerBurmeister, 2, 0, 40, Preconditioner::Block},
    };
    for (const char* scene : {"pyramid", "card_house"}) {
        for (const Variant& v : variants) {
            CAPTURE(scene);
            CAPTURE(v.name);
            World cpu = comparableWorld(scene), host = comparableWorld(scene);
            for (World* w : {&cpu, &host}) {
                w->settings.solver.linearSolver = v.solver;
                w->settings.solver.ncp = v.ncp;
                w->settings.substeps = v.substeps;
                w->settings.solver.linearIterations = v.iterations;
                w->settings.solver.preconditioner = v.preconditioner;
            }
            const Parity p = compare(cpu, host, 40, 20);
            MESSAGE(std::string(scene) << " " << std::string(v.name) << ": largest position difference " << p.worstBody
                          << " m over 40 steps; contact-count mismatches: " << p.countMismatches);
            CHECK(p.countMismatches == 0);
            CHECK(p.worstBody <= v.tolerance);
        }
    }
}


// Speculative contacts (settings.speculative > 0): the pipeline grows each shape's box by its reach
// and each pair's relaxations by the pair's motion with the CPU's formulas (feature_pairs.h
// partMotionReach, widenedPairSettings). First a 0.2 m cube falling 12 m/s at h = 0.03 s, 0.36 m per
// step: beyond the fixed 2 cm margin, so without the widening it passes through the floor
// (test_speculative.cpp); then two library scenes where bodies fall and tip.
TEST_CASE("exec parity: speculative contacts, bit for bit, and the falling cube lands on the pipeline") {
    const Model m = cubeOverFloor({{0, 0, 0.3}, quatIdentity()}, {0, 0, -12}, {0, 0, 0});
    for (Real spec : {Real(0), Real(1)}) {
        CAPTURE(spec);
        WorldSettings s;
        s.dt = Real(0.03);
        s.speculative = spec;
        World cpu(m, s), host(m, s);
        requirePipelineSupports(host);
        const Parity p = compare(cpu, host, 2, 2);
        const Real z = host.state().pos[1].z;
        MESSAGE("falling cube, speculative " << spec << ": pipeline cube z " << z << " m after 2 steps; largest position "
                << "difference " << p.worstBody << " m; contact-count mismatches " << p.countMismatches);
        CHECK(p.countMismatches == 0);
        CHECK(p.worstBody == 0);
        if (spec > 0) CHECK(std::fabs(z - Real(0.1)) < Real(1e-5));   // resting on the floor
        else CHECK(z < Real(0));                                      // passed through it
    }
    for (const char* scene : {"card_house", "table_pile"}) {
        CAPTURE(scene);
        World cpu = comparableWorld(scene), host = comparableWorld(scene);
        cpu.settings.speculative = host.settings.speculative = 1;
        requirePipelineSupports(host);
        const Parity p = compare(cpu, host, 60, 60);
        MESSAGE(scene << ", speculative 1: largest position difference " << p.worstBody
                      << " m over 60 steps; contact-count mismatches: " << p.countMismatches);
        CHECK(p.countMismatches == 0);
        CHECK(p.worstBody == 0);
    }
}

// The far Newton cap (SolverSettings::farNewtonIterations, newton_steps_hd.h newtonGoesOnFar), at
// kFarNewtonFactor times the cap as World sets it with sleeping: a step that reaches the cap with
// its merit above kFarNewtonMerit goes on, and when the iterations past the cap run away
// (farNewtonRunAway) the step ends on the cap's iterate (pipeline_newton.h recordCapRestore).
// Sleeping itself off (the pipeline has none yet). table_pile (tables landing on each other's
// edges) and the default pyramid with box_90 dragged off-centre (the drag reproducer of
// docs/speed.md, from t = 0.5 s), both executors too: bit for bit, with the same iteration count and
// merit history in every step; the steps that went past the cap and those that ended on the cap's
// iterate are counted and required, so both paths are compared.
TEST_CASE("exec parity: the far Newton cap, bit for bit, on table_pile and a dragged pyramid") {
    struct Case {
        const char* scene;
        int steps;
        bool drag;
    };
    int pastCapAll = 0, restoredAll = 0;
    for (const Case& k : {Case{"table_pile", 240, false}, Case{"pyramid", 120, true}}) {
        CAPTURE(k.scene);
        World cpu = comparableWorld(k.scene), host = comparableWorld(k.scene);
        for (World* w : {&cpu, &host}) {
            w->settings.sleeping = false;
            w->settings.solver.farNewtonIterations = kFarNewtonFactor * w->settings.solver.newtonIterations;
        }
        requirePipelineSupports(host);
        const int cap = host.settings.solver.newtonIterations;
        int dragBody = -1;
        if (k.drag) {
            const std::vector<std::string>& names = cpu.model().bodyName;
            dragBody = int(std::find(names.begin(), names.end(), "box_90") - names.begin());
            REQUIRE(dragBody < (int)names.size());
        }
        const Vec3 dragPoint{Real(0.068), Real(-0.168), Real(0.25)};
        Vec3 dragFrom{0, 0, 0};
        PipelineWorld<HostExecutor> pipeline(host, smallBuffers());
        int pastCap = 0, restored = 0, statsDiffer = 0;
        Real worst = 0;
        for (int i = 0; i < k.steps; ++i) {
            if (dragBody >= 0 && i >= 30) {   // --drag box_90:2,0.5,0@0.5 over 1 s
                if (i == 30) dragFrom = cpu.state().pos[dragBody] + rotate(cpu.state().rot[dragBody], dragPoint);
                const Real f = std::min(Real(i - 30) / Real(60), Real(1));
                for (World* w : {&cpu, &host}) w->setDrag(dragBody, dragPoint, dragFrom + f * Vec3{2, Real(0.5), 0});
            }
            cpu.step();
            pipeline.step();
            const SolveStats &a = cpu.solveStats(), &b = pipeline.solveStats();
            pastCap += a.newtonIterations > cap;
            restored += (int)a.newtonResidual.size() > a.newtonIterations + 1;
            statsDiffer += a.newtonIterations != b.newtonIterations || a.newtonResidual != b.newtonResidual ||
                           a.residualFinal != b.residualFinal;
            worst = std::max({worst, bodyPositionDifference(cpu, host), bodyRotationDifference(cpu, host)});
        }
        MESSAGE(k.scene << ": " << pastCap << " of " << k.steps << " steps past the cap of " << cap << ", " << restored
                        << " ended on the cap's iterate; largest difference " << worst << ", steps whose Newton "
                        << "statistics differ " << statsDiffer);
        CHECK(pastCap > 0);
        CHECK(worst == 0);
        CHECK(statsDiffer == 0);
        pastCapAll += pastCap;
        restoredAll += restored;
    }
    CHECK(restoredAll > 0);
}

// Islands and sleeping on the pipeline (engine/exec/pipeline_islands.h) against World::step with
// sleeping on (partial waking on, as by default; no drag, so no body is woken alone): the library
// scenes that fall asleep, and a stack that falls asleep and is woken by a box spawned above it.
// Each step: every position, orientation and velocity, and the sleep state (State::sleepIsland,
// sleepTime, wokeAlone) equal bit for bit, and the Newton statistics; the run must put bodies to
// sleep and, on the stack, wake them again.
TEST_CASE("exec parity: islands and sleeping, bit for bit: falling asleep, waking on touch") {
    auto stack = [] {   // three 100 kg boxes on the ground; a fourth appears above them at t = 2 s
        Model m;
        std::string err;
        BodyDesc ground;
        ground.isStatic = true;
        ground.material.friction = Real(0.5);
        ground.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({20, 20, 1}), 0});
        ground.pose.pos = {0, 0, -1};
        REQUIRE(addBody(m, ground, &err) >= 0);
        BodyDesc box;
        box.mass = 100;
        box.material.friction = Real(0.5);
        box.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({0.5, 0.5, 0.5}), 0});
        for (int k = 0; k < 3; ++k) {
            box.pose.pos = {0, 0, Real(0.5) + k};
            REQUIRE(addBody(m, box, &err) >= 0);
        }
        box.pose.pos = {Real(0.3), 0, Real(5)};
        box.spawnTime = 2;
        REQUIRE(addBody(m, box, &err) >= 0);
        return m;
    };
    struct Case {
        std::string name;
        int steps;
        bool mustWake;
        bool everyIteration;   // every gated pass recorded and run with its gate closed, as on a device
    };
    for (const Case& k : {Case{"stack", 0, true, false}, Case{"stack", 0, true, true}, Case{"pyramid", 90, false, false},
                          Case{"card_house", 120, false, false}, Case{"table_pile", 480, false, false}}) {
        CAPTURE(k.name);
        CAPTURE(k.everyIteration);
        World cpu = k.name == "stack" ? World(stack(), WorldSettings{}) : comparableWorld(k.name);
        World host = k.name == "stack" ? World(stack(), WorldSettings{}) : comparableWorld(k.name);
        cpu.settings.sleeping = host.settings.sleeping = true;
        requirePipelineSupports(host);
        PipelineWorld<HostExecutor> pipeline(host, smallBuffers());
        pipeline.executor().recordEveryIteration = k.everyIteration;
        int mostAsleep = 0, wakes = 0, sleepDiffers = 0, statsDiffer = 0;
        Real worst = 0;
        const int steps = k.name == "stack" ? int(std::lround(Real(3) / cpu.settings.dt)) : k.steps;   // 3 s
        for (int i = 0; i < steps; ++i) {
            const int before = cpu.sleepingBodies();
            cpu.step();
            pipeline.step();
            mostAsleep = std::max(mostAsleep, cpu.sleepingBodies());
            wakes += cpu.sleepingBodies() < before;
            const State &a = cpu.state(), &b = host.state();
            sleepDiffers += a.sleepIsland != b.sleepIsland || a.sleepTime != b.sleepTime || a.wokeAlone != b.wokeAlone;
            const SolveStats &sa = cpu.solveStats(), &sb = pipeline.solveStats();
            statsDiffer += sa.newtonIterations != sb.newtonIterations || sa.residualFinal != sb.residualFinal;
            worst = std::max({worst, bodyPositionDifference(cpu, host), bodyRotationDifference(cpu, host)});
            for (int body = 0; body < cpu.model().bodyCount(); ++body)
                worst = std::max({worst, length(a.linVel[body] - b.linVel[body]), length(a.angVel[body] - b.angVel[body])});
        }
        MESSAGE(k.name << ": at most " << mostAsleep << " of " << cpu.model().bodyCount() << " bodies asleep, "
                       << wakes << " steps woke some; largest difference " << worst << ", steps whose sleep state "
                       << "differs " << sleepDiffers << ", whose Newton statistics differ " << statsDiffer
                       << "; buffer growths " << pipeline.bufferStats().growthEvents);
        CHECK(mostAsleep > 0);
        if (k.mustWake) CHECK(wakes > 0);
        CHECK(worst == 0);
        CHECK(sleepDiffers == 0);
        CHECK(statsDiffer == 0);
        CHECK(pipeline.bufferStats().growthEvents > 0);
    }
    {   // The check can fail: without the sleeping islands' kept warm impulses (recordKeepSleepingWarm
        // skipped) the woken stack starts its solve cold, and the runs part.
        World cpu(stack(), WorldSettings{}), host(stack(), WorldSettings{});
        cpu.settings.sleeping = host.settings.sleeping = true;
        PipelineOptions options = smallBuffers();
        options.sleepingWarm = false;
        PipelineWorld<HostExecutor> pipeline(host, options);
        Real worst = 0;
        for (int i = 0; i < int(std::lround(Real(3) / cpu.settings.dt)); ++i) {
            cpu.step();
            pipeline.step();
            worst = std::max(worst, bodyPositionDifference(cpu, host));
        }
        MESSAGE("stack, the sleeping warm impulses not kept: largest position difference " << worst);
        CHECK(worst > 0);
    }
}
