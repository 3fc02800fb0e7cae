// Deformable bodies on the device pipeline, run by the host executor, against World::step.
//
// The pipeline builds the same FEM rows (femTetStepRows, femAttachmentRows: the same CS_HD
// functions) in the same places (after the contact rows, tets then attachments), solves them with
// the four-body columns in the CPU's scatter and gather orders, integrates the nodes and warm
// starts from the last substep's FEM impulses as World::step does. Stated tolerance: bit for bit
// (difference 0) for Jacobi, PCG and PCR; Gauss-Seidel colours its rows differently (parallel
// rounds, 64 colours, the rest swept serially, against the CPU's greedy 256) and is held to a
// bound. FEM boundary nodes against rigid parts (the ground, a wall, a box) run on the pipeline
// too, with buffers forced small so that they grow; FEM-FEM and self contacts are compared in
// test_femfem_exec_parity.cpp. The last case: what the pipeline still refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "tests/fem_test_util.h"
#include "tests/parity_helpers.h"

using namespace cs;
using namespace cs::femtest;
using namespace cs::test;

namespace {

// A 0.2 m x 0.1 m x 0.1 m block, its -x face pinned when `clamped` (a short cantilever sagging
// under gravity), else free, spinning about z and moving (zero gravity).
World femWorld(FemMaterialType type, bool clamped, Real damping, Real activation) {
    Model model;
    FemBodyDesc d = blockDesc({Real(0.1), Real(0.05), Real(0.05)}, 2, Real(1e5), Real(0.45), type);
    d.pose.pos = {0, 0, 1};
    d.damping = damping;
    if (clamped) d.pinned = nodesAt(d.mesh, 0, Real(-0.1));
    if (activation != 0) d.activation.assign(d.mesh.tets.size(), Real(1));
    addFem(model, d);
    WorldSettings settings;
    if (!clamped) settings.gravity = {0, 0, 0};
    World world(std::move(model), settings);
    State& s = world.state();
    if (!clamped)
        for (size_t n = 0; n < s.femPos.size(); ++n) {   // spin 3 rad/s about z through (0, 0, 1), drift 0.2 m/s
            const Vec3 r = s.femPos[n] - Vec3{0, 0, 1};
            s.femVel[n] = Vec3{Real(0.2), 0, 0} + cross(Vec3{0, 0, 3}, r);
        }
    if (activation != 0) s.femActivation[0] = activation;
    return world;
}

// A soft block dropped 1 cm onto the ground, a 0.5 kg rigid box held to its top face's nodes
// (attachments) and resting on them (FEM contacts with the box too).
World blockWithHandle() {
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
    return World(std::move(model));
}

struct FemParity : FemDifferences {
    int countMismatches = 0;  // steps whose contact counts (rigid + FEM) differ
    int mostFemContacts = 0;
    long long growth = 0;
};

FemParity compareFem(World& cpu, World& host, int steps, PipelineOptions options = {}) {
    requirePipelineSupports(host);
    solveAsPipeline(cpu);
    solveAsPipeline(host);   // the iterative solve on the pipeline too
    PipelineWorld<HostExecutor> pipeline(host, options);
    const std::vector<Vec3> start = cpu.state().femPos;
    FemParity p;
    for (int i = 0; i < steps; ++i) {
        cpu.step();
        pipeline.step();
        REQUIRE(!pipeline.lastStepFailed());
        p.countMismatches += contactCountsDiffer(cpu, pipeline);
        p.mostFemContacts = std::max(p.mostFemContacts, pipeline.femContactCount());
        p.add(cpu, host, start);
    }
    p.growth = pipeline.bufferStats().growthEvents;
    return p;
}

// FEM contacts of a library scene (or of the block with a handle) on the pipeline, with buffers
// forced small, against World::step over `steps` steps.
void checkFemContacts(const std::string& name, int steps) {
    CAPTURE(name);
    const bool built = name == "block with handle";
    World cpu = built ? blockWithHandle() : libraryWorld(name);
    World host = built ? blockWithHandle() : libraryWorld(name);
    const FemParity p = compareFem(cpu, host, steps, smallBuffers());
    MESSAGE(name << ": largest node position difference " << p.worstNode << " m, velocity " << p.worstVelocity
                 << " m/s, rigid body " << p.worstBody << " m over " << steps << " steps; node travel " << p.travel
                 << " m; up to " << p.mostFemContacts << " FEM contacts; contact-count mismatches "
                 << p.countMismatches << "; buffer growth re-runs " << p.growth);
    CHECK(p.mostFemContacts > 0);
    CHECK(p.travel > Real(1e-3));
    CHECK(p.countMismatches == 0);
    CHECK(p.worstNode == 0);
    CHECK(p.worstVelocity == 0);
    CHECK(p.worstBody == 0);
    CHECK(p.growth > 0);
}

}  // namespace

TEST_CASE("fem exec parity: FEM nodes and element rows on the pipeline equal World::step bit for bit") {
    struct Variant {
        const char* name;
        FemMaterialType type;
        bool clamped;
        Real damping, activation;
        LinearSolverType solver;
        int substeps;
        Real tolerance;   // m; 0: bit for bit
    };
    const FemMaterialType lin = FemMaterialType::CorotatedLinear, nh = FemMaterialType::StableNeoHookean;
    const Variant variants[] = {
        {"clamped corotated, pcg", lin, true, 0, 0, LinearSolverType::PCG, 1, 0},
        {"clamped neo-Hookean, pcr", nh, true, 0, 0, LinearSolverType::PCR, 1, 0},
        {"clamped corotated, jacobi, damped", lin, true, Real(0.01), 0, LinearSolverType::Jacobi, 1, 0},
        {"free spinning neo-Hookean, pcg, 2 substeps", nh, false, 0, 0, LinearSolverType::PCG, 2, 0},
        {"free corotated, activated, pcr", lin, false, 0, Real(2e4), LinearSolverType::PCR, 1, 0},
        {"clamped corotated, gauss-seidel", lin, true, 0, 0, LinearSolverType::GaussSeidel, 1, Real(1e-9)},
    };
    for (const Variant& v : variants) {
        CAPTURE(v.name);
        World cpu = femWorld(v.type, v.clamped, v.damping, v.activation);
        World host = femWorld(v.type, v.clamped, v.damping, v.activation);
        for (World* w : {&cpu, &host}) {
            w->settings.solver.linearSolver = v.solver;
            w->settings.substeps = v.substeps;
        }
        const FemParity p = compareFem(cpu, host, 60);
        MESSAGE(std::string(v.name) << ": largest node position difference " << p.worstNode << " m, velocity " << p.worstVelocity
                       << " m/s over 60 steps; largest node travel " << p.travel << " m");
        CHECK(p.travel > Real(1e-3));   // the bodies moved: there was something to compare
        CHECK(p.worstNode <= v.tolerance);
        if (v.tolerance == 0) CHECK(p.worstVelocity == 0);
    }
}

TEST_CASE("fem exec parity: FEM contacts with rigid parts and attachments on the pipeline equal World::step") {
    checkFemContacts("fem_cantilever", 40);
    checkFemContacts("block with handle", 60);
}

TEST_CASE("fem exec parity: FEM contacts of the dropped tomato and the finger's mount" * doctest::test_suite("validate")) {
    checkFemContacts("fem_tomato_drop", 60);   // about 5 s
    checkFemContacts("pneunet_finger", 40);    // about 50 s
}

TEST_CASE("fem exec parity: a FEM world the pipeline cannot run yet is refused with its reason") {
    std::string why;
    World ramp = libraryWorld("fem_ramp");   // two FEM bodies (FEM-FEM contacts) and fem_fold (self contact): run
    CHECK_MESSAGE(pipelineSupports(ramp, &why), why);
    World fold = libraryWorld("fem_fold");
    CHECK_MESSAGE(pipelineSupports(fold, &why), why);
    World plain = femWorld(FemMaterialType::CorotatedLinear, true, 0, 0);
    plain.settings.solver.contactModel = ContactModelType::CCP;
    CHECK_FALSE(pipelineSupports(plain, &why));
    CHECK(why.find("standard contact model") != std::string::npos);
}
