// What the step pipeline covers, and its host instantiation (compiled into cs_engine, so every
// build and every test has the device pipeline on the CPU).
#include <algorithm>

#include "engine/exec/host_executor.h"
#include "engine/exec/pipeline_world.h"
#include "engine/fem/fem_lanes.h"

namespace cs {

bool pipelineSupports(const World& world, std::string* why) {
    const char* reason = nullptr;
    const SolverSettings& solver = world.settings.solver;
    if (solver.method == SolveMethod::Soft)
        reason = "the device pipeline has no soft step yet (method soft runs on the host)";
    else if (solver.contactModel != ContactModelType::Standard && solver.contactModel != ContactModelType::CCP)
        reason = "the device pipeline implements the standard and CCP contact models only";
    else if (solver.contactModel == ContactModelType::CCP &&
             (!world.model().joints.empty() || world.drag().body >= 0 || world.drag().femTri >= 0))
        reason = "the device pipeline runs joints and the mouse drag with the standard contact model only";
    else if (!world.model().femBodies.empty() && solver.contactModel != ContactModelType::Standard)
        reason = "the device pipeline runs deformable (FEM) bodies with the standard contact model only";
    else if (world.settings.speculative > 0 && world.settings.redetectPasses > 0 &&
             solver.contactModel == ContactModelType::Standard)
        reason = "the device pipeline has no redetection yet (settings.redetectPasses)";
    else if (world.settings.projectionPasses > 0)
        reason = "the device pipeline has no position projection yet (settings.projectionPasses)";
    else if (sleepingApplies(world.model(), world.settings) && world.settings.partialWake &&
             (world.drag().body >= 0 ||
              std::any_of(world.state().wokeAlone.begin(), world.state().wokeAlone.end(), [](uint8_t a) { return a != 0; })))
        reason = "the device pipeline has no partial waking yet (sleeping with a drag, settings.partialWake)";
    if (reason && why) *why = reason;
    return reason == nullptr;
}

void hostTetSvds(const Mat3* F, int n, TetSvd* out) { svd3Many(F, n, out); }

void hostTetWarmImpulses(const FemTetStepRows* r, const Real* const* stored, Real (*lambda)[kFemMaxRows], int m) {
    for (int l = 0; l < m; l += svd3lanes::kLanes)
        femTetWarmImpulsesLanes(r + l, stored + l, lambda + l, std::min(svd3lanes::kLanes, m - l));
}

template class PipelineWorld<HostExecutor>;

}  // namespace cs
