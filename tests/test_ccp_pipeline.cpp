// The CCP model through the device pipeline (engine/exec/, run here by the host executor, the
// same text the CUDA executor runs): the relaxed rows (mu on the normal row, gpu/step_hd.h) and
// the Newton iteration over them give, step after step, the positions World::step gives with the
// CCP model's Newton solver (engine/solver/ccp_solvers.cpp). Both run every Newton iteration
// (tolerances 0), so both take the same iterates; PJ, PGS and APGD are not on the pipeline yet,
// which pipelineSupports says in one line.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "engine/exec/host_executor.h"
#include "engine/exec/pipeline_world.h"
#include "engine/scene/scene_loader.h"

using namespace cs;

namespace {

World ccpWorld(const std::string& name, LinearSolverType linear) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    REQUIRE_MESSAGE(loadScene(name, model, settings, info, &error), error);
    settings.solver.contactModel = ContactModelType::CCP;
    settings.solver.ccp.solver = CcpSolverType::Newton;
    settings.solver.ccp.tolerance = 0;
    settings.solver.newtonTolerance = 0;
    settings.solver.linearSolver = linear;
    return World(std::move(model), settings);
}

}  // namespace

TEST_CASE("ccp pipeline: the relaxed rows and Newton on the device pipeline equal World::step") {
    for (const char* scene : {"friction_ramp", "box_on_plane", "card_house"})
        for (LinearSolverType linear : {LinearSolverType::PCR, LinearSolverType::PCG}) {
            CAPTURE(scene);
            World cpu = ccpWorld(scene, linear), host = ccpWorld(scene, linear);
            std::string why;
            REQUIRE_MESSAGE(pipelineSupports(host, &why), why);
            PipelineWorld<HostExecutor> pipeline(host);
            Real worst = 0, lift = 0;
            for (int i = 0; i < 40; ++i) {
                cpu.step();
                pipeline.step();
                for (int b = 0; b < cpu.model().bodyCount(); ++b)
                    worst = std::max(worst, length(cpu.state().pos[b] - host.state().pos[b]));
                for (const Contact& c : cpu.contacts()) lift = std::max(lift, c.ccpSeparation);
            }
            MESSAGE(std::string(scene), " ", std::string(linearSolverName(linear)), ": largest position difference ", worst, " m over 40 steps",
                    ", largest CCP separation ", lift, " m");
            CHECK(worst == 0);
        }
    World apgd = ccpWorld("box_on_plane", LinearSolverType::PCR);
    apgd.settings.solver.ccp.solver = CcpSolverType::APGD;
    std::string why;
    CHECK_FALSE(pipelineSupports(apgd, &why));
    CHECK(why.find("CCP") != std::string::npos);
}
