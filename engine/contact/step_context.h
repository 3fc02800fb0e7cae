// The per-world step context: what one stage of a step leaves for a later stage of the same step
// (PEG's synthetic pairs from buildRows to storeResults, the compliant model's integrated end
// state from preSolve to postIntegrate, PLUS's report from preSolve to storeResults) and what a
// step leaves for its caller (PLUS's recorded impacts). World owns one (World::stepContext) and
// hands it to the contact stages in ContactStageInput::context. It replaces thread_locals, so a
// world steps alike on any thread, and two worlds on one thread keep their data apart.
#pragma once

#include <vector>

#include "engine/collision/potential_contact.h"
#include "engine/contact/compliant_model.h"
#include "engine/contact/plus_model.h"

namespace cs {

struct PegStepData {
    // Edge-edge pairs PEG forms itself for X-constraints where the narrow phase has none,
    // indexed after the step's potential contacts (peg_model.cpp): rebuilt by buildRows, read by
    // storeResults of the same step.
    std::vector<PotentialContact> synthetic;
};

struct StepContext {
    PegStepData peg;
    CompliantStepData compliant;
    PlusStepData plus;
};

}  // namespace cs
