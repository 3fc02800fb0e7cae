// Shared set-up of the executor parity tests: World::step (the CPU backend) against the device
// pipeline run by the host executor (PipelineWorld<HostExecutor>), in test_exec_parity.cpp,
// test_fem_exec_parity.cpp, test_femfem_exec_parity.cpp, test_joints_exec_parity.cpp,
// test_ccp_pipeline.cpp and test_newton_safeguard.cpp.
//
// Loading: a library scene as its file gives it, "comparable": as World::step runs it by default
// (row culling and narrow-phase reuse on; culling off where the scene has FEM bodies, whose
// contacts the pipeline does not cull), or "every row": culling off on both sides. Buffers:
// smallBuffers() starts the pipeline at 2 pairs, 2 contacts, 1 contact per pair and 1 narrow-phase
// reuse candidate, so every scene with contacts grows its buffers and re-runs steps.
// Differences: the largest difference over bodies or nodes of one quantity between two worlds
// stepped from the same start (0 when they agree bit for bit); each test takes the maximum over
// its steps and states its own tolerance.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "engine/exec/host_executor.h"
#include "engine/exec/pipeline_world.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

namespace cs::test {

struct LibraryScene {
    Model model;
    WorldSettings settings;
    SceneInfo info;
};

// The condensed FEM solve (engine/exec/condensed_solve.h), which both run, is turned off on both
// sides by the tests that compare the iterative solve (called on the CPU's world and on the
// pipeline's); test_condensed_pipeline.cpp compares the condensed one. Row culling stays as the
// scene sets it: both cull the rigid and the FEM node-part contacts (pipeline_fem_contact.h).
inline void solveAsPipeline(World& cpu) { cpu.settings.solver.condenseCompliantRows = false; }

// A library scene (or a scene file) as its file gives it, but for the condensed FEM solve (off, so
// that the parity tests compare the iterative solve: solveAsPipeline); fails the test if it does not load.
inline LibraryScene loadLibraryScene(const std::string& name) {
    LibraryScene s;
    std::string error;
    REQUIRE_MESSAGE(loadScene(name, s.model, s.settings, s.info, &error), error);
    s.settings.solver.condenseCompliantRows = false;
    return s;
}

// The same as World::step runs it by default (row culling, of FEM contacts too, and narrow-phase
// reuse, on both sides), but for the condensed FEM solve (loadLibraryScene).
inline LibraryScene loadComparableScene(const std::string& name) { return loadLibraryScene(name); }

// Row culling off: every contact gets rows on both sides (the solve culling replaces).
inline LibraryScene loadEveryRowScene(const std::string& name) {
    LibraryScene s = loadLibraryScene(name);
    s.settings.solver.cullRows = false;
    return s;
}

inline World libraryWorld(const std::string& name) {
    LibraryScene s = loadLibraryScene(name);
    return World(std::move(s.model), s.settings);
}

inline World comparableWorld(const std::string& name) {
    LibraryScene s = loadComparableScene(name);
    return World(std::move(s.model), s.settings);
}

inline World everyRowWorld(const std::string& name) {
    LibraryScene s = loadEveryRowScene(name);
    return World(std::move(s.model), s.settings);
}

// Capacities small enough that every scene with contacts grows its buffers and re-runs steps.
inline PipelineOptions smallBuffers() {
    PipelineOptions o;
    o.initialPairs = 2;
    o.initialContacts = 2;
    o.initialSlots = 1;
    o.initialCandidates = 1;
    return o;
}

// Fails the test, with the reason, when the pipeline cannot run `world`.
inline void requirePipelineSupports(const World& world) {
    std::string why;
    REQUIRE_MESSAGE(pipelineSupports(world, &why), why);
}

// The last step's contact count (rigid and FEM) differs between the CPU and the pipeline.
inline bool contactCountsDiffer(const World& cpu, const PipelineWorld<HostExecutor>& pipeline) {
    return pipeline.contactCount() + pipeline.femContactCount() != (int)cpu.contacts().size();
}

// The larger of a running maximum and one difference, a NaN difference counting as infinite
// (std::max and fmax drop a NaN, so a run that went NaN on one side would compare as equal).
inline Real worse(Real worst, Real d) { return std::isnan(d) ? Real(INFINITY) : std::max(worst, d); }

// m, largest |x_a - x_b| over the rigid bodies.
inline Real bodyPositionDifference(const World& a, const World& b) {
    Real worst = 0;
    for (int i = 0; i < a.model().bodyCount(); ++i)
        worst = worse(worst, length(a.state().pos[i] - b.state().pos[i]));
    return worst;
}

// Largest |q_a - q_b| (the quaternions' 4-vector difference) over the rigid bodies.
inline Real bodyRotationDifference(const World& a, const World& b) {
    Real worst = 0;
    for (int i = 0; i < a.model().bodyCount(); ++i) {
        const Quat &x = a.state().rot[i], &y = b.state().rot[i];
        const Quat d{x.w - y.w, x.x - y.x, x.y - y.y, x.z - y.z};
        worst = worse(worst, std::sqrt(d.w * d.w + d.x * d.x + d.y * d.y + d.z * d.z));
    }
    return worst;
}

// m, largest |x_a - x_b| over the FEM nodes.
inline Real femPositionDifference(const World& a, const World& b) {
    Real worst = 0;
    for (size_t n = 0; n < a.state().femPos.size(); ++n)
        worst = worse(worst, length(a.state().femPos[n] - b.state().femPos[n]));
    return worst;
}

// m/s, largest |v_a - v_b| over the FEM nodes.
inline Real femVelocityDifference(const World& a, const World& b) {
    Real worst = 0;
    for (size_t n = 0; n < a.state().femVel.size(); ++n)
        worst = worse(worst, length(a.state().femVel[n] - b.state().femVel[n]));
    return worst;
}

// m, the largest FEM node displacement from `start` (the motion a comparison covered).
inline Real femTravel(const World& w, const std::vector<Vec3>& start) {
    Real worst = 0;
    for (size_t n = 0; n < start.size(); ++n) worst = std::max(worst, length(w.state().femPos[n] - start[n]));
    return worst;
}

// The FEM parity tests' running maxima over the steps of a CPU run and its pipeline twin.
struct FemDifferences {
    Real worstNode = 0;       // m, largest |x_cpu - x_pipeline| over nodes and steps
    Real worstVelocity = 0;   // m/s, the same for node velocities
    Real worstBody = 0;       // m, rigid bodies' positions
    Real travel = 0;          // m, the largest node displacement of the CPU run (the motion compared)
    void add(const World& cpu, const World& host, const std::vector<Vec3>& start) {
        worstBody = std::max(worstBody, bodyPositionDifference(cpu, host));
        worstNode = std::max(worstNode, femPositionDifference(cpu, host));
        worstVelocity = std::max(worstVelocity, femVelocityDifference(cpu, host));
        travel = std::max(travel, femTravel(cpu, start));
    }
};

// Largest |impulse_a - impulse_b| of State::jointWarm (joint and coupling rows); a different
// length counts as infinite.
inline Real jointWarmDifference(const World& a, const World& b) {
    const std::vector<Real> &x = a.state().jointWarm, &y = b.state().jointWarm;
    if (x.size() != y.size()) return Real(INFINITY);
    Real worst = 0;
    for (size_t i = 0; i < x.size(); ++i) worst = worse(worst, std::fabs(x[i] - y[i]));
    return worst;
}

// The mouse drag's reported force (N) and effective mass (kg): the larger difference.
inline Real dragDifference(const World& a, const World& b) {
    return worse(worse(0, length(a.drag().force - b.drag().force)), std::fabs(a.drag().effectiveMass - b.drag().effectiveMass));
}

}  // namespace cs::test
