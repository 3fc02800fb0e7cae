// One step's problem from a world's current state (step_problem.h).
#include "engine/step_problem.h"

#include "engine/collision/broad_phase.h"
#include "engine/collision/narrow_phase.h"
#include "engine/contact/contact_model.h"
#include "engine/world.h"

namespace cs {

void buildStepProblem(const World& world, StepProblem& out) {
    const Model& model = world.model();
    const State& state = world.state();
    const WorldSettings& settings = world.settings;
    const int nb = model.bodyCount();
    out.h = settings.dt / (settings.substeps > 0 ? settings.substeps : 1);
    std::vector<uint8_t> active(nb);
    for (int b = 0; b < nb; ++b) active[b] = world.isActive(b) ? 1 : 0;
    std::vector<Aabb> aabbs;
    std::vector<ShapePair> pairs;
    const NarrowPhaseSettings narrow = narrowPhaseSettings(settings, out.h);
    computeContactAabbs(model, state, narrow, aabbs);
    findPairs(model, aabbs, active.data(), pairs);
    collidePairs(model, state, pairs, narrow, out.potential);
    startBodyVelocities(model, state, active.data(), settings.gravity, out.h, out.bodies);
    out.bodies.velocity = out.bodies.unconstrained;
    out.rows.clear();
    ContactStageInput in{model, settings, state, out.potential, out.h};
    buildContactRows(in, out.rows);
}

}  // namespace cs
