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

// One resolved impact with its per-interval trace, for the app's slow-motion replay and round
// timeline ([PLUS] table 2). Configuration and time are frozen during the impact.
struct PlusImpactRecord {
    Real time = 0;                         // s, state time of the impact
    std::vector<int> bodies;               // (problem bodies) world body index
    std::vector<Vec3> bodyPosition;        // (problem bodies) centre of mass, world
    std::vector<PotentialContact> contacts;   // (points) the feature pairs (world bodies, points)
    ImpactProblem problem;                 // frames, lever arms, velocities before the impact
    ImpactResult result;                   // trace filled
};

// What PLUS keeps in a world's step context (step_context.h, World::stepContext().plus).
struct PlusStepData {
    PlusStepReport report;                   // the last preSolve's, read by storeResults of its substep
    // Recording of impacts with their traces; off by default (the trace copies every point's
    // state per interval). The records are those of the last substep that resolved an impact.
    bool recordImpacts = false;
    std::vector<PlusImpactRecord> impacts;
    long long impactSerial = 0;              // set whenever impacts are replaced, from one counter of
                                             //   the process: a larger serial is a later recording
};

// The serial of the latest recording of any world (0: none yet).
long long plusLatestImpactSerial();

}  // namespace cs
