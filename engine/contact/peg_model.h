// The PEG contact model ([PEG] Williams, Lu, Trinkle 2016): polytope exact geometry.
//
// The verbs of contact_model.h for ContactModelType::PEG, plus helpers the tests and the
// experiment use to look at one step's problem.
#pragma once

#include <vector>

#include "engine/contact/contact_model.h"

namespace cs {

void buildPegRows(const ContactStageInput& in, ConstraintRows& rows);
void storePegResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                     std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);
void drawPegGroups(const std::vector<Contact>& contacts, DebugDraw& draw);

// Counts over the contacts of one step (World::contacts() after a PEG step).
struct PegGroupCounts {
    int unilateral = 0, inter = 0, cross = 0;   // U, I and X constraints
    int traps = 0;                              // groups flagged as SM traps
    int featurePairs = 0;                       // feature pairs in all groups
};
PegGroupCounts countPegGroups(const std::vector<Contact>& contacts);

}  // namespace cs
