// The CCP model through the device pipeline (engine/exec/, run here by the host executor, the
// same text the CUDA executor runs), against World::step with the CPU solvers
// (engine/solver/ccp_solvers.cpp):
//  - the relaxed rows (mu on the normal row, engine/exec/step_hd.h) and the Newton iteration over them
//    with its APGD fallback (pipeline_ccp_newton.h) give the same positions and take the same
//    fallbacks step after step; both run every Newton iteration (tolerances 0);
//  - projected Jacobi, projected Gauss-Seidel (coloured) and APGD (pipeline_ccp.h,
//    pipeline_ccp_solve.h) give the same positions and the same CCP merit after every iteration,
//    bit for bit: the per-row math is shared (ccp_steps_hd.h), the host executor adds every sum
//    in the CPU's order, the scatter is the same sum by runs, and the CPU sweeps PGS's blocks in
//    the pipeline's colour order.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "engine/solver/ccp_solvers.h"
#include "tests/parity_helpers.h"

using namespace cs;
using namespace cs::test;

namespace {

World ccpWorld(const std::string& name, LinearSolverType linear) {
    LibraryScene s = loadLibraryScene(name);
    SolverSettings& solver = s.settings.solver;
    solver.contactModel = ContactModelType::CCP;
    solver.ccp.solver = CcpSolverType::Newton;
    solver.ccp.tolerance = 0;
    solver.newtonTolerance = 0;
    solver.linearSolver = linear;
    return World(std::move(s.model), s.settings);
}

}  // namespace

TEST_CASE("ccp pipeline: the relaxed rows and Newton on the device pipeline equal World::step") {
    for (const char* scene : {"friction_ramp", "box_on_plane", "card_house"})
        for (LinearSolverType linear : {LinearSolverType::PCR, LinearSolverType::PCG, LinearSolverType::Jacobi}) {
            CAPTURE(scene);
            World cpu = ccpWorld(scene, linear), host = ccpWorld(scene, linear);
            requirePipelineSupports(host);
            PipelineWorld<HostExecutor> pipeline(host);
            Real worst = 0, lift = 0;
            int fallbacks = 0, fallbackMismatch = 0;
            for (int i = 0; i < 40; ++i) {
                cpu.step();
                pipeline.step();
                worst = std::max(worst, bodyPositionDifference(cpu, host));
                for (const Contact& c : cpu.contacts()) lift = std::max(lift, c.ccpSeparation);
                fallbacks += cpu.solveStats().ccpFallbacks;
                fallbackMismatch += cpu.solveStats().ccpFallbacks != pipeline.solveStats().ccpFallbacks;
            }
            MESSAGE(std::string(scene), " ", std::string(linearSolverName(linear)), ": largest position difference ", worst, " m over 40 steps",
                    ", largest CCP separation ", lift, " m, ", fallbacks, " Newton steps replaced by APGD");
            CHECK(worst == 0);
            CHECK(fallbackMismatch == 0);
            if (std::string(scene) == "card_house") CHECK(fallbacks > 0);   // the fallback ran on both backends
        }
}

TEST_CASE("ccp pipeline: PJ, PGS and APGD on the device pipeline equal the CPU solvers bit for bit") {
    const CcpSolverType solvers[] = {CcpSolverType::Jacobi, CcpSolverType::GaussSeidel, CcpSolverType::APGD};
    for (const char* scene : {"friction_ramp", "card_house", "pyramid", "table_pile"})
        for (CcpSolverType solver : solvers) {
            const std::string label = std::string(scene) + " " + ccpSolverName(solver);
            CAPTURE(label);
            World cpu = ccpWorld(scene, LinearSolverType::PCR), host = ccpWorld(scene, LinearSolverType::PCR);
            for (World* w : {&cpu, &host}) {
                w->settings.solver.ccp.solver = solver;
                w->settings.solver.ccp.iterations = 60;
                w->settings.solver.ccp.tolerance = Real(1e-6);
            }
            requirePipelineSupports(host);
            PipelineWorld<HostExecutor> pipeline(host);
            Real worst = 0, meritGap = 0;
            int iterations = 0, historyMismatch = 0, contacts = 0;
            for (int i = 0; i < 30; ++i) {
                cpu.step();
                pipeline.step();
                for (int b = 0; b < cpu.model().bodyCount(); ++b)
                    worst = std::max(worst, length(cpu.state().pos[b] - host.state().pos[b]) +
                                                length(cpu.state().linVel[b] - host.state().linVel[b]));
                const SolveStats &a = cpu.solveStats(), &b = pipeline.solveStats();
                if (a.ccpMerit != b.ccpMerit) historyMismatch++;
                meritGap = std::max(meritGap, std::fabs(a.residualFinal - b.residualFinal));
                iterations += int(a.ccpMerit.size()) - 1;
                contacts = std::max(contacts, pipeline.contactCount());
            }
            MESSAGE(label, ": ", iterations, " iterations over 30 steps, up to ", contacts,
                    " contacts; largest position + velocity difference ", worst, ", merit histories differing in ",
                    historyMismatch, " steps");
            CHECK(iterations > 30);   // the solvers ran
            CHECK(worst == 0);
            CHECK(historyMismatch == 0);
            CHECK(meritGap == 0);
        }
}
