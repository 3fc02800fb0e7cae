// PLUS as a contact model of the time stepper (plus_model.cpp): the impact pass before the
// solve, the standard rows for persistent contact, the per-point annotations and their drawing.
#pragma once

#include <vector>

#include "engine/contact/contact_model.h"
#include "engine/contact/plus_impact.h"

namespace cs {

struct PlusPointReport {
    PotentialContact potential;
    int phase = 0, state = 0, rounds = 0;
    Vec3 impulse{0, 0, 0};             // world frame, N s
};

// What the impact pass of the last substep did (cost per impact and per step).
struct PlusStepReport {
    int impacts = 0;                   // islands resolved
    int rounds = 0, intervals = 0;     // summed over impacts
    int pointCount = 0, bilateralRows = 0;
    double seconds = 0;                // wall time of the whole pass (detection included)
    std::vector<PlusPointReport> points;
};

void plusPreSolve(const ContactStageInput& in, BodyVelocities& bodies);
void buildPlusRows(const ContactStageInput& in, ConstraintRows& rows);
void storePlusResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                      std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);
void drawPlusAnnotations(const std::vector<Contact>& contacts, DebugDraw& draw);

// The report of the last PLUS preSolve run on the calling thread.
const PlusStepReport& plusLastStepReport();

}  // namespace cs
