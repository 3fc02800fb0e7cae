// The compliant reference model as a contact model of the time stepper.
//
// Design: a compliant contact is a force, not a constraint, and a stiff one (10 GPa gives contact
// times of microseconds), so it cannot ride on the step's Newton rows. preSolve integrates the
// bodies that touch potential contacts (and the bodies jointed to them) through the whole step
// with the error-controlled integrator of compliant_contact.cpp, and hands the velocities at
// the end of the step to the solve as the unconstrained velocities; buildRows emits no contact
// rows. The momentum exchanged is exact to the integrator's tolerance. The world then advances
// positions with the end velocities (semi-implicit Euler), which misplaces a body that bounced
// within the step by at most h times the change of velocity; the figures of docs/plus.md
// integrate through collisions directly instead (integrateCompliant).
#include "engine/contact/compliant_model.h"

#include <numeric>

namespace cs {

namespace {

struct CompliantStepData {
    std::vector<Vec3> impulse;   // (potential contacts) world, on A
    CompliantStats stats;
};
thread_local CompliantStepData tStep;

}  // namespace

const CompliantStats& compliantLastStepStats() { return tStep.stats; }

void compliantPreSolve(const ContactStageInput& in, BodyVelocities& bodies) {
    tStep = CompliantStepData{};
    const Model& model = in.model;
    const int nb = model.bodyCount();
    auto dynamic = [&](int b) { return b >= 0 && bodies.invMass[b] > 0; };
    std::vector<char> moving(nb, 0);
    bool any = false;
    for (const PotentialContact& c : in.potential) {
        if (dynamic(c.bodyA)) moving[c.bodyA] = 1;
        if (dynamic(c.bodyB)) moving[c.bodyB] = 1;
        any = any || dynamic(c.bodyA) || dynamic(c.bodyB);
    }
    if (!any) return;
    // Bodies jointed to a moving body move with it (closure over the joint graph).
    for (bool grew = true; grew;) {
        grew = false;
        for (const Joint& j : model.joints) {
            bool a = dynamic(j.bodyA), b = dynamic(j.bodyB);
            if (a && b && moving[j.bodyA] != moving[j.bodyB]) {
                moving[j.bodyA] = moving[j.bodyB] = 1;
                grew = true;
            }
        }
    }
    std::vector<CompliantContact> contacts;
    makeCompliantContacts(model, in.state, in.potential, in.settings, contacts);
    State st = in.state;
    std::vector<CompliantSample> samples;
    integrateCompliant(model, st, moving, contacts, in.settings, in.h, &tStep.stats, &samples);
    if (!samples.empty()) tStep.impulse = samples.back().impulse;
    for (int b = 0; b < nb; ++b)
        if (moving[b]) bodies.unconstrained[b] = Spatial{st.linVel[b], st.angVel[b]};
}

void storeCompliantResults(const ContactStageInput& in, std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    contacts.clear();
    warm.clear();
    for (size_t i = 0; i < in.potential.size() && i < tStep.impulse.size(); ++i) {
        const PotentialContact& g = in.potential[i];
        Contact c;
        c.geometry = g;
        c.mu = mixFriction(in.model, g.bodyA, g.bodyB, in.settings.frictionScale);
        tangentBasis(g.normal, c.tangent[0], c.tangent[1]);
        Vec3 p = tStep.impulse[i];
        c.normalImpulse = dot(p, g.normal);
        c.tangentImpulse[0] = dot(p, c.tangent[0]);
        c.tangentImpulse[1] = dot(p, c.tangent[1]);
        Real ft = std::sqrt(c.tangentImpulse[0] * c.tangentImpulse[0] + c.tangentImpulse[1] * c.tangentImpulse[1]);
        c.sliding = c.normalImpulse > 0 && ft >= Real(0.99) * c.mu * c.normalImpulse;
        if (c.normalImpulse > 0 || ft > 0) contacts.push_back(c);
    }
}

}  // namespace cs
