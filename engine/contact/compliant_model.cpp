// The compliant reference model as a contact model of the time stepper.
//
// Design: a compliant contact is a force, not a constraint, and a stiff one (10 GPa gives contact
// times of microseconds), so it cannot ride on the step's Newton rows. preSolve integrates the
// bodies that touch potential contacts (and the bodies jointed to them) through the whole step
// with the error-controlled integrator of compliant_contact.cpp, and hands the velocities at
// the end of the step to the solve as the unconstrained velocities; buildRows emits no contact
// rows, so the solve changes them only through joint and drag rows (du).
//
// The end pose is the integrator's, not the world's x+ = x + h u+. Moving the bodies with the
// end velocities while the integrator had moved them along the true trajectory is an
// inconsistent split step on stiff springs (semi-implicit Euler on a spring is stable only for
// h w < 2; a 125 kg cube on four Hertz corners at E = 1e7 Pa has w ~ 90 rad/s, h w ~ 0.8 at
// h = 1/120 s, and more between a light box and a heavy one): measured, a resting stack of three
// 125 kg cubes gained up to 2.4 J in one step and the pyramid collapsed, its mechanical energy
// 7.9 kJ above the start after 1.5 s (tests/test_compliant.cpp, docs/plus.md). postIntegrate
// therefore sets each integrated body to the integrator's end state plus the solve's correction:
// x = x_end + h du, v = v_end + du (the same for the orientation and angular velocity). The
// contact-model stage's postIntegrate verb does this: World::substep calls it right after its
// integration, and not after a rolled-back step.
#include "engine/contact/compliant_model.h"

#include <numeric>

#include "engine/contact/step_context.h"
#include "engine/solver/integrate.h"

namespace cs {

void compliantPreSolve(const ContactStageInput& in, BodyVelocities& bodies) {
    CompliantStepData& step = in.context->compliant;
    step = CompliantStepData{};
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
    integrateCompliant(model, st, moving, contacts, in.settings, in.h, &step.stats, &samples);
    if (!samples.empty()) step.impulse = samples.back().impulse;
    for (int b = 0; b < nb; ++b)
        if (moving[b]) {
            bodies.unconstrained[b] = Spatial{st.linVel[b], st.angVel[b]};
            step.bodies.push_back(b);
            step.pos.push_back(st.pos[b]);
            step.rot.push_back(st.rot[b]);
            step.linVel.push_back(st.linVel[b]);
            step.angVel.push_back(st.angVel[b]);
        }
}

void compliantPostIntegrate(const ContactStageInput& in, State& state) {
    const CompliantStepData& step = in.context->compliant;
    // The world moved the bodies with x + h u+ (u+ = v_end + du): put them at the integrator's
    // end pose instead, carrying the solve's du (see the file's header).
    for (size_t k = 0; k < step.bodies.size(); ++k) {
        const int b = step.bodies[k];
        const Vec3 dv = state.linVel[b] - step.linVel[k], dw = state.angVel[b] - step.angVel[k];
        state.pos[b] = step.pos[k];
        state.rot[b] = step.rot[k];
        integrateBody(state.pos[b], state.rot[b], dv, dw, in.h);
        state.linVel[b] = step.linVel[k] + dv;
        state.angVel[b] = step.angVel[k] + dw;
    }
}

void storeCompliantResults(const ContactStageInput& in, std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    const CompliantStepData& step = in.context->compliant;
    contacts.clear();
    warm.clear();
    for (size_t i = 0; i < in.potential.size() && i < step.impulse.size(); ++i) {
        const PotentialContact& g = in.potential[i];
        Contact c;
        c.geometry = g;
        c.mu = mixFriction(in.model, g.bodyA, g.bodyB, in.settings.frictionScale);
        tangentBasis(g.normal, c.tangent[0], c.tangent[1]);
        Vec3 p = step.impulse[i];
        c.normalImpulse = dot(p, g.normal);
        c.tangentImpulse[0] = dot(p, c.tangent[0]);
        c.tangentImpulse[1] = dot(p, c.tangent[1]);
        Real ft = std::sqrt(c.tangentImpulse[0] * c.tangentImpulse[0] + c.tangentImpulse[1] * c.tangentImpulse[1]);
        c.sliding = c.normalImpulse > 0 && ft >= Real(0.99) * c.mu * c.normalImpulse;
        if (c.normalImpulse > 0 || ft > 0) contacts.push_back(c);
    }
}

}  // namespace cs
