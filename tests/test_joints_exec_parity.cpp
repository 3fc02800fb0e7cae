// Joints, mimic couplings and the mouse drag on the device pipeline, run by the host executor,
// against World::step (issue 18's deformable grasp and issue 19's gripper on the GPU path).
//
// The pipeline builds the same rows (engine/solver/joint_rows_hd.h, drag_rows_hd.h: the CS_HD
// functions World::step calls too) in the same places (the first rows of the substep, then the
// contacts, the FEM rows and the FEM contacts), warm-starts them from the last substep's
// impulses, and solves them with the force limits as evalRow's box rows. Stated tolerance: bit
// for bit (difference 0) in the positions, orientations, FEM nodes and State::jointWarm (the
// grasp sensors read joint forces from it) after every step, with the scenes' own linear solvers
// (PCG, PCR, Jacobi; Gauss-Seidel colours differently and is held to a bound in
// test_exec_parity.cpp). The grasp scenes play their scripts, so drive targets, force limits and
// the wrist's anchor move between steps.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "engine/grasp/grasp_player.h"
#include "tests/parity_helpers.h"

using namespace cs;
using namespace cs::test;

namespace {

// Largest difference of the two worlds' states (m, or the quaternion's, impulse's, drag force's
// and effective mass's units); a different jointWarm length counts as infinite.
Real stateDifference(const World& a, const World& b) {
    Real worst = jointWarmDifference(a, b);
    for (Real d : {bodyPositionDifference(a, b), bodyRotationDifference(a, b), femPositionDifference(a, b), dragDifference(a, b)})
        worst = std::fmax(worst, d);
    return worst;
}

struct Parity {
    Real worst = 0;       // over every step
    int firstDifferent = -1;
    int jointRows = 0;    // of the last step
    int failed = 0;       // steps either world rolled back
    Real dragForce = 0;   // N, |DragState::force| of the CPU world after the last step
};

// Steps a CPU world and a pipeline world `steps` times from the same scene, the grasp script
// (when the scene has one) driving both; `setup` runs on both worlds before the first step.
template <class Setup>
Parity compareScene(const std::string& name, int steps, Setup setup) {
    LibraryScene s = loadComparableScene(name);
    World cpu(s.model, s.settings), host(s.model, s.settings);
    setup(cpu);
    setup(host);
    const bool grasp = !s.info.grasp.fingers.empty();
    GraspPlayer cpuPlayer(cpu.model(), s.info.grasp, -1), hostPlayer(host.model(), s.info.grasp, -1);
    requirePipelineSupports(host);
    PipelineWorld<HostExecutor> pipeline(host, smallBuffers());   // the buffers grow and steps re-run
    Parity p;
    for (int i = 0; i < steps; ++i) {
        if (grasp) {
            cpuPlayer.beforeStep(cpu);
            hostPlayer.beforeStep(host);
        }
        cpu.step();
        pipeline.step();
        if (grasp) {
            cpuPlayer.afterStep(cpu);
            hostPlayer.afterStep(host);
        }
        p.failed += (cpu.lastStepFailed() ? 1 : 0) + (pipeline.lastStepFailed() ? 1 : 0);
        const Real d = stateDifference(cpu, host);
        if (d > 0 && p.firstDifferent < 0) p.firstDifferent = i;
        p.worst = std::fmax(p.worst, d);
    }
    p.jointRows = (int)cpu.state().jointWarm.size();
    p.dragForce = length(cpu.drag().force);
    MESSAGE(name << ": " << steps << " steps, " << p.jointRows << " joint and coupling rows, largest state difference "
                 << p.worst << " (first at step " << p.firstDifferent << "), " << pipeline.bufferStats().growthEvents
                 << " buffer growth re-runs");
    return p;
}

void noSetup(World&) {}

}  // namespace

TEST_CASE("joints exec parity: hinge chain and triple pendulum, bit for bit") {
    for (const char* name : {"hinge_chain", "triple_pendulum"}) {
        CAPTURE(name);
        const Parity p = compareScene(name, 240, noSetup);
        CHECK(p.jointRows > 0);
        CHECK(p.failed == 0);
        CHECK(p.worst == 0);
    }
}

TEST_CASE("joints exec parity: the grippers (drives with force limits, mimic coupling, wrist) play their scripts") {
    // grasp_box and fetch_tomato: approach, close (the jaws' force limits bind) and lift by 3.2 s.
    for (const char* name : {"grasp_box", "fetch_tomato"}) {
        CAPTURE(name);
        const Parity p = compareScene(name, 400, noSetup);
        CHECK(p.jointRows > 0);
        CHECK(p.failed == 0);
        CHECK(p.worst == 0);
    }
}

TEST_CASE("joints exec parity: fetch_tomato_fem, the gripper closing on the FEM tomato") {
    const Parity p = compareScene("fetch_tomato_fem", 260, noSetup);   // to 2.2 s: the pads on the tomato
    CHECK(p.jointRows > 0);
    CHECK(p.failed == 0);
    CHECK(p.worst == 0);
}

TEST_CASE("joints exec parity: the mouse drag of a rigid link of the hinge chain") {
    const Parity p = compareScene("hinge_chain", 120, [&](World& w) {
        int b = 0;
        while (w.model().isStatic(b)) ++b;
        w.setDrag(b, Vec3{Real(0.02), 0, 0}, w.state().pos[b] + Vec3{Real(0.3), Real(0.1), Real(0.4)});
    });
    CHECK(p.failed == 0);
    CHECK(p.worst == 0);
    CHECK(p.dragForce > 1);   // the drag pulls
}

TEST_CASE("joints exec parity: the drag's force limit saturated, rigid and deformable (FEM drag)") {
    // 10 N against a target 0.5 m away: the drag pushes with exactly its limit (the saturated rows).
    const Parity rigid = compareScene("hinge_chain", 60, [](World& w) {
        int b = 0;
        while (w.model().isStatic(b)) ++b;
        w.dragSettings.maxForce = 10;
        w.setDrag(b, Vec3{Real(0.02), 0, 0}, w.state().pos[b] + Vec3{Real(0.5), 0, 0});
    });
    CHECK(rigid.failed == 0);
    CHECK(rigid.worst == 0);
    // The limit (saturated), within the fixed-target rows' damping (gamma = 1e5 / m: 2e-5 here).
    CHECK(rigid.dragForce == doctest::Approx(10).epsilon(1e-4));
    CHECK(rigid.dragForce <= 10);
    for (const Real limit : {Real(2000), Real(5)}) {   // the spring rows, then the saturated ones
        CAPTURE(limit);
        const Parity p = compareScene("fem_cantilever", 90, [&](World& w) {
            w.dragSettings.maxForce = limit;
            const int tri = (int)w.model().femTris.size() / 2;
            w.setFemDrag(tri, Vec3{Real(0.2), Real(0.3), Real(0.5)}, Vec3{Real(0.2), Real(0.1), Real(1.2)});
        });
        CHECK(p.failed == 0);
        CHECK(p.worst == 0);
        CHECK(p.dragForce > 1);   // the drag pulls
        CHECK(p.dragForce <= limit * (1 + 1e-9));
        if (limit < 10) CHECK(p.dragForce == doctest::Approx(double(limit)).epsilon(1e-4));
    }
}
