// The compliant reference model as a contact model of the time stepper (compliant_model.cpp).
#pragma once

#include <vector>

#include "engine/contact/compliant_contact.h"
#include "engine/contact/contact_model.h"

namespace cs {

// What preSolve leaves for postIntegrate and storeResults of the same step (StepContext::compliant).
struct CompliantStepData {
    std::vector<Vec3> impulse;   // (potential contacts) world, on A
    CompliantStats stats;        // the integrator's, for the last preSolve
    std::vector<int> bodies;     // integrated bodies
    std::vector<Vec3> pos, linVel, angVel;   // (bodies) the integrator's end state
    std::vector<Quat> rot;
};

void compliantPreSolve(const ContactStageInput& in, BodyVelocities& bodies);
// After the world's integration: each integrated body goes to the integrator's end state plus
// the solve's correction (joints, drag); see compliant_model.cpp.
void compliantPostIntegrate(const ContactStageInput& in, State& state);
// No contact rows: the contacts are forces integrated in preSolve. Contacts report the impulse
// each potential contact exchanged over the step.
void storeCompliantResults(const ContactStageInput& in, std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);

}  // namespace cs
