// FEM-FEM (vertex-triangle) and FEM self contact on the device pipeline, run by the host
// executor, against World::step.
//
// The pipeline finds each boundary node's triangle by a loop over the other body's triangles with
// the CPU grid's candidate rule (pipeline_fem_femcontact.h), computes it with the same CS_HD test
// (fem_contact_hd.h), orders the contacts as fem_contact.cpp does (after the node-part contacts,
// by body pair and node) and writes the same four-body rows and warm cache. Stated tolerance: bit
// for bit (difference 0) in node positions and velocities and rigid body positions, every step,
// and equal contact counts (all, and node-triangle ones) every step, with node-triangle contacts
// present (the count's maximum > 0), so the comparison is not vacuous.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "engine/fem/tet_mesh.h"
#include "tests/fem_test_util.h"
#include "tests/parity_helpers.h"

using namespace cs;
using namespace cs::femtest;
using namespace cs::test;

namespace {

// Two soft blocks stacked on the ground, the upper one smaller, turned 20 deg about z, off centre
// and 2 mm above the lower one's top face; a 0.3 kg rigid box dropped onto it.
World stackedBlocks() {
    Model model;
    addGround(model);
    FemBodyDesc lower = blockDesc({Real(0.05), Real(0.05), Real(0.05)}, 3, Real(1e5), Real(0.45),
                                  FemMaterialType::StableNeoHookean);
    lower.name = "lower";
    lower.pose.pos = {0, 0, Real(0.0505)};
    lower.material.friction = Real(0.6);
    addFem(model, lower);
    FemBodyDesc upper = blockDesc({Real(0.035), Real(0.035), Real(0.035)}, 3, Real(5e4), Real(0.4),
                                  FemMaterialType::CorotatedLinear);
    upper.name = "upper";
    upper.pose.pos = {Real(0.012), Real(-0.008), Real(0.1375)};
    upper.pose.rot = quatFromAxisAngle({0, 0, 1}, Real(0.35));
    upper.material.friction = Real(0.4);
    addFem(model, upper);
    BodyDesc weight;
    weight.name = "weight";
    ShapeDesc shape;
    shape.polytope = makeBox({Real(0.02), Real(0.02), Real(0.02)});
    weight.shapes.push_back(shape);
    weight.mass = Real(0.3);
    weight.pose.pos = {0, 0, Real(0.2)};
    std::string error;
    REQUIRE_MESSAGE(addBody(model, weight, &error) >= 0, error);
    return World(std::move(model));
}

// A soft ball (TetGen) dropped 1 cm onto a soft block resting on the ground, sideways at 0.2 m/s.
World ballOnBlock() {
    Model model;
    addGround(model);
    FemBodyDesc block = blockDesc({Real(0.06), Real(0.06), Real(0.03)}, 3, Real(1e5), Real(0.45),
                                  FemMaterialType::CorotatedLinear);
    block.pose.pos = {0, 0, Real(0.0302)};
    addFem(model, block);
    FemBodyDesc ball;
    ball.name = "ball";
    std::string error;
    REQUIRE_MESSAGE(makeSphereTetMesh(Real(0.03), 1, 2, ball.mesh, &error), error);
    ball.youngs = Real(5e4);
    ball.type = FemMaterialType::StableNeoHookean;
    ball.pose.pos = {Real(-0.01), 0, Real(0.1)};
    ball.linVel = {Real(0.2), 0, 0};
    ball.material.friction = Real(0.8);
    addFem(model, ball);
    return World(std::move(model));
}

int cpuTriangleContacts(const World& w) {
    int n = 0;
    for (const Contact& c : w.contacts()) n += c.femTri >= 0;
    return n;
}

struct FemFemParity : FemDifferences {
    int countMismatches = 0;      // steps whose contact counts (all, or node-triangle) differ
    int mostTriContacts = 0;      // node-triangle contacts, the most in one step (CPU)
    int stepsWithTriContacts = 0;
    long long growth = 0;
};

FemFemParity compare(World& cpu, World& host, int steps, PipelineOptions options = {}) {
    requirePipelineSupports(host);
    solveAsPipeline(cpu);
    solveAsPipeline(host);   // the iterative solve on the pipeline too
    PipelineWorld<HostExecutor> pipeline(host, options);
    const std::vector<Vec3> start = cpu.state().femPos;
    FemFemParity p;
    for (int i = 0; i < steps; ++i) {
        cpu.step();
        pipeline.step();
        REQUIRE(!pipeline.lastStepFailed());
        const int tri = cpuTriangleContacts(cpu);
        p.countMismatches += contactCountsDiffer(cpu, pipeline) || pipeline.femTriContactCount() != tri;
        p.mostTriContacts = std::max(p.mostTriContacts, tri);
        p.stepsWithTriContacts += tri > 0;
        p.add(cpu, host, start);
    }
    p.growth = pipeline.bufferStats().growthEvents;
    return p;
}

struct FemFemCase {
    const char* name;
    int steps;
    LinearSolverType solver;
    int substeps;
    bool smallBuffers;   // smallBuffers(): buffers that must grow while node-triangle contacts come and go
};

void checkFemFem(const FemFemCase& k) {
    const std::string name = k.name;
    CAPTURE(name);
    auto make = [&] {
        if (name.rfind("stacked", 0) == 0) return stackedBlocks();
        if (name == "ball on block") return ballOnBlock();
        return libraryWorld(name);
    };
    World cpu = make();
    World host = make();
    for (World* w : {&cpu, &host}) {
        w->settings.solver.linearSolver = k.solver;
        w->settings.substeps = k.substeps;
    }
    const FemFemParity p = compare(cpu, host, k.steps, k.smallBuffers ? smallBuffers() : PipelineOptions{});
    MESSAGE(name << ": largest node position difference " << p.worstNode << " m, velocity " << p.worstVelocity
                 << " m/s, rigid body " << p.worstBody << " m over " << k.steps << " steps; node travel " << p.travel
                 << " m; node-triangle contacts up to " << p.mostTriContacts << " (in " << p.stepsWithTriContacts
                 << " steps); contact-count mismatches " << p.countMismatches << "; buffer growth re-runs "
                 << p.growth);
    CHECK(p.mostTriContacts > 0);
    CHECK(p.stepsWithTriContacts > k.steps / 4);
    CHECK(p.travel > Real(1e-3));
    CHECK(p.countMismatches == 0);
    CHECK(p.worstNode == 0);
    CHECK(p.worstVelocity == 0);
    CHECK(p.worstBody == 0);
    if (k.smallBuffers) CHECK(p.growth > 0);
}

}  // namespace

TEST_CASE("femfem exec parity: FEM-FEM contacts on the pipeline equal World::step bit for bit") {
    checkFemFem({"stacked blocks", 200, LinearSolverType::PCG, 1, true});
    checkFemFem({"stacked blocks, pcr, 2 substeps", 100, LinearSolverType::PCR, 2, false});
    checkFemFem({"ball on block", 200, LinearSolverType::PCG, 1, false});
}

TEST_CASE("femfem exec parity: fem_fold's self contacts over 300 steps, bit for bit" * doctest::test_suite("validate")) {
    checkFemFem({"fem_fold", 300, LinearSolverType::PCG, 1, true});
}

// A node equally deep below two triangles of another body takes the later one (the CPU's
// `gap < bestGap` skip: an equal gap replaces the best). Built so that the tie is exact: a slab
// 2/64 m thick (top and bottom faces at z = +-1/64, one cell) and a small block whose four bottom
// nodes lie on the slab's mid-plane at dyadic coordinates, so the barycentric weights, closest
// points and gaps (-1/64 to both faces) are exact in binary; the top and bottom triangles' normals
// are opposite, so which one is taken decides the step. No gravity.
TEST_CASE("femfem exec parity: a node tied between two triangles takes the later one, as on the CPU") {
    auto make = [] {
        Model model;
        FemBodyDesc slab = blockDesc({Real(0.5), Real(0.5), Real(1) / 64}, 1, Real(1e5), Real(0.45),
                                     FemMaterialType::CorotatedLinear);
        slab.name = "slab";
        addFem(model, slab);
        FemBodyDesc cube = blockDesc({Real(0.0625), Real(0.0625), Real(0.0625)}, 1, Real(1e5), Real(0.45),
                                     FemMaterialType::CorotatedLinear);
        cube.name = "cube";
        cube.pose.pos = {Real(0.3125), Real(-0.0625), Real(0.0625)};   // bottom face at z = 0 exactly
        addFem(model, cube);
        WorldSettings settings;
        settings.gravity = {0, 0, 0};
        return World(std::move(model), settings);
    };
    World cpu = make(), host = make();
    const std::vector<Vec3> x0 = cpu.state().femPos;   // the first step's positions
    requirePipelineSupports(host);
    solveAsPipeline(cpu);
    solveAsPipeline(host);   // the iterative solve on the pipeline too
    PipelineWorld<HostExecutor> pipeline(host);
    int ties = 0;          // the first step's contacts whose node has two triangles at the same gap
    Real worst = 0;        // m/s, largest node velocity difference
    for (int i = 0; i < 5; ++i) {
        cpu.step();
        pipeline.step();
        worst = std::max(worst, femVelocityDifference(cpu, host));
        if (i > 0) continue;
        const Model& m = cpu.model();
        for (const Contact& c : cpu.contacts()) {
            if (c.femTri < 0) continue;
            const FemBodyInfo& b = m.femBodies[m.femNodeBody[m.femTris[c.femTri][0]]];
            int same = 0;
            for (int t = b.firstTri; t < b.firstTri + b.triCount; ++t) {
                const auto& tri = m.femTris[t];
                FemTriangleContact q{};
                same += femNodeTriangleContact(x0[c.femNode], x0[tri[0]], x0[tri[1]], x0[tri[2]],
                                               cpu.settings.contactMargin, -kHuge, q) &&
                        q.gap == c.geometry.gap;
            }
            ties += same > 1;
        }
    }
    MESSAGE("nodes tied between two triangles in the first step: " << ties << "; largest node velocity difference "
                                                                  << worst << " m/s over 5 steps");
    CHECK(ties == 4);   // the cube's four bottom nodes
    CHECK(worst == 0);
}
