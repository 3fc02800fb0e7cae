// One step's problem taken from a world, for the tests and the Lemke check (engine/step_problem.cpp).
// It sits above World, so the contact models below it need not include engine/world.h.
#pragma once

#include <vector>

#include "engine/collision/potential_contact.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/newton.h"

namespace cs {

class World;

// One step's problem, built from the world's current state exactly as World::step builds it
// (broad and narrow phase, unconstrained velocities, contact rows of the world's contact
// model; no joints or drag). For tests and the Lemke check.
struct StepProblem {
    std::vector<PotentialContact> potential;
    ConstraintRows rows;
    BodyVelocities bodies;
    Real h = 0;
};
void buildStepProblem(const World& world, StepProblem& out);

}  // namespace cs
