// The compliant reference model as a contact model of the time stepper (compliant_model.cpp).
#pragma once

#include <vector>

#include "engine/contact/compliant_contact.h"
#include "engine/contact/contact_model.h"

namespace cs {

void compliantPreSolve(const ContactStageInput& in, BodyVelocities& bodies);
// After the world's integration: each integrated body goes to the integrator's end state plus
// the solve's correction (joints, drag); see compliant_model.cpp.
void compliantPostIntegrate(const ContactStageInput& in, State& state);
// No contact rows: the contacts are forces integrated in preSolve. Contacts report the impulse
// each potential contact exchanged over the step.
void storeCompliantResults(const ContactStageInput& in, std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);
// Integrator statistics of the last compliant preSolve on the calling thread.
const CompliantStats& compliantLastStepStats();

}  // namespace cs
