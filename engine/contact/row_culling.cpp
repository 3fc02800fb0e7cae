// Row culling's predictor and check; the bound and its derivation are in row_culling.h.
#include "engine/contact/row_culling.h"

#include <cmath>

#include "engine/settings.h"
#include "engine/step_types.h"

namespace cs {

Real cullPushoutSpeed(const std::vector<PotentialContact>& potential, const WorldSettings& settings, Real h) {
    Real deepest = 0;
    for (const PotentialContact& c : potential) deepest = std::fmax(deepest, -c.gap);
    return cullPushoutSpeedOf(deepest, settings.solver.stabilization, settings.solver.maxPushoutSpeed, h);
}

bool contactCannotClose(const PotentialContact& c, const Model& model, const State& state, Vec3 gravity,
                        Real pushoutSpeed, Real h) {
    const bool dynamicA = c.bodyA >= 0 && !model.isStatic(c.bodyA), dynamicB = c.bodyB >= 0 && !model.isStatic(c.bodyB);
    return cullContactCannotClose(c, dynamicA, dynamicB, state.pos.data(), state.linVel.data(), state.angVel.data(),
                                  gravity, pushoutSpeed, h);
}

bool culledContactsStayOpen(const RowCull& cull, const std::vector<PotentialContact>& potential,
                            const State& state, const BodyVelocities& bodies, Real h) {
    for (int ci : cull.culled)
        if (!cullContactStayedOpen(potential[ci], state.pos.data(), bodies.velocity.data(), h)) return false;
    return true;
}

bool culledSolveStands(const SolverSettings& settings, const SolveStats& stats, const RowCull& cull,
                       const std::vector<PotentialContact>& potential, const State& state,
                       const BodyVelocities& bodies, Real h) {
    if (cull.culled.empty()) return true;   // nothing left out: the solve was the full one
    return stats.residualFinal <= settings.newtonTolerance && culledContactsStayOpen(cull, potential, state, bodies, h);
}

}  // namespace cs
