// Dispatch of the contact-model verbs (contact_model.h) and the shared contact drawing.
#include "engine/contact/contact_model.h"

#include <cmath>

#include "engine/contact/ccp_model.h"
#include "engine/contact/compliant_model.h"
#include "engine/contact/plus_model.h"
#include "engine/contact/step_context.h"

#include "engine/contact/peg_model.h"

namespace cs {

void buildStandardRows(const ContactStageInput& in, ConstraintRows& rows);
void storeStandardResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                          std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);

bool contactModelAvailable(ContactModelType type, std::string* why) {
    switch (type) {
    case ContactModelType::Standard: return true;
    case ContactModelType::PEG: return true;
    case ContactModelType::PLUS: return true;
    case ContactModelType::Compliant: return true;
    case ContactModelType::CCP: return true;
    }
    return false;
}

std::string femContactModelNote(const Model& model, ContactModelType type) {
    if (model.femNodeCount() == 0 || (type != ContactModelType::PEG && type != ContactModelType::PLUS)) return "";
    return std::string("the ") + (type == ContactModelType::PEG ? "PEG" : "PLUS") +
           " contact model applies to rigid pairs only; deformable bodies' contacts use the standard model";
}

Contact contactFromRows(const PotentialContact& g, const ConstraintRows& rows, int i, const Spatial* u) {
    Contact c;
    c.geometry = g;
    c.mu = rows.mu[i + 1];
    c.normalImpulse = rows.lambda[i];
    c.tangentImpulse[0] = rows.lambda[i + 1];
    c.tangentImpulse[1] = rows.lambda[i + 2];
    tangentBasis(g.normal, c.tangent[0], c.tangent[1]);
    Real ft = std::sqrt(c.tangentImpulse[0] * c.tangentImpulse[0] + c.tangentImpulse[1] * c.tangentImpulse[1]);
    Real slip = 0;
    for (int k = 0; k < 2; ++k) {
        Real v = 0;
        if (g.bodyA >= 0) v += dot(rows.jacobianA[i + 1 + k], u[g.bodyA]);
        if (g.bodyB >= 0) v += dot(rows.jacobianB[i + 1 + k], u[g.bodyB]);
        slip += v * v;
    }
    c.sliding = c.normalImpulse > 0 && ft >= Real(0.99) * c.mu * c.normalImpulse && std::sqrt(slip) > Real(1e-3);
    return c;
}

// A call outside a world's step (step_problem.h, the tests) gets a step context of its own.
void contactPreSolve(const ContactStageInput& in, BodyVelocities& bodies) {
    if (!in.context) {
        StepContext own;
        ContactStageInput with = in;
        with.context = &own;
        contactPreSolve(with, bodies);
        return;
    }
    switch (in.settings.solver.contactModel) {
    case ContactModelType::PLUS: plusPreSolve(in, bodies); break;
    case ContactModelType::Compliant: compliantPreSolve(in, bodies); break;
    default: break;   // standard: no impact pass
    }
}

void buildContactRows(const ContactStageInput& in, ConstraintRows& rows) {
    if (!in.context) {
        StepContext own;
        ContactStageInput with = in;
        with.context = &own;
        buildContactRows(with, rows);
        return;
    }
    switch (in.settings.solver.contactModel) {
    case ContactModelType::PLUS: buildPlusRows(in, rows); break;
    case ContactModelType::Compliant: break;   // forces, integrated in preSolve
    case ContactModelType::PEG: buildPegRows(in, rows); break;
    case ContactModelType::CCP: buildCcpRows(in, rows); break;
    default: buildStandardRows(in, rows); break;
    }
}

void contactPostIntegrate(const ContactStageInput& in, State& state) {
    if (in.settings.solver.contactModel == ContactModelType::Compliant) compliantPostIntegrate(in, state);
}

void storeContactResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                         std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    switch (in.settings.solver.contactModel) {
    case ContactModelType::PLUS: storePlusResults(in, rows, bodies, contacts, warm); break;
    case ContactModelType::Compliant: storeCompliantResults(in, contacts, warm); break;
    case ContactModelType::PEG: storePegResults(in, rows, bodies, contacts, warm); break;
    case ContactModelType::CCP: storeCcpResults(in, rows, bodies, contacts, warm); break;
    default: storeStandardResults(in, rows, bodies, contacts, warm); break;
    }
}

void drawContactModel(ContactModelType type, const std::vector<Contact>& contacts, Real h, DebugDraw& draw) {
    const DebugDrawFlags& f = draw.flags;
    const Color point{1.0f, 0.85f, 0.1f, 1}, penetrating{1.0f, 0.1f, 0.1f, 1}, normal{0.2f, 0.6f, 1.0f, 1};
    const Color stick{0.1f, 0.9f, 0.3f, 0.35f}, slip{1.0f, 0.3f, 0.2f, 0.35f}, force{1.0f, 0.5f, 0.0f, 1};
    for (const Contact& c : contacts) {
        if (c.femNode >= 0 && !f.femContacts) continue;
        const PotentialContact& g = c.geometry;
        Vec3 p = g.pointB;   // on the supporting body
        bool pen = g.gap < -f.penetrationThreshold;
        if (f.contactPoints && draw.drawPoint)
            draw.drawPoint(p, 6.0f, (f.penetration && pen) ? penetrating : point, draw.context);
        if (f.contactNormals && draw.drawLine) {
            Real len = f.normalLength * (Real(0.2) + std::fmin(Real(1), std::fabs(c.normalImpulse)));
            draw.drawLine(p, p + len * g.normal, normal, draw.context);
        }
        if ((f.frictionCones || f.contactForces) && draw.drawLine) {
            // Impulse per step as a force is impulse/h; the app scales by forceScale.
            Vec3 total = c.normalImpulse * g.normal + c.tangentImpulse[0] * c.tangent[0] +
                         c.tangentImpulse[1] * c.tangent[1];
            if (f.frictionCones && draw.drawTriangle) {
                // Cone of half-angle atan(mu) around the normal, height fixed for readability.
                Real height = f.normalLength, radius = c.mu * height;
                const int segments = 12;
                for (int s = 0; s < segments; ++s) {
                    Real a0 = Real(2 * M_PI) * s / segments, a1 = Real(2 * M_PI) * (s + 1) / segments;
                    Vec3 q0 = p + height * g.normal + radius * (std::cos(a0) * c.tangent[0] + std::sin(a0) * c.tangent[1]);
                    Vec3 q1 = p + height * g.normal + radius * (std::cos(a1) * c.tangent[0] + std::sin(a1) * c.tangent[1]);
                    draw.drawTriangle(p, q0, q1, c.sliding ? slip : stick, draw.context);
                }
                Real ln = length(total);
                if (ln > 0) draw.drawLine(p, p + (height / fmax(ln, Real(1e-12))) * fmin(ln, Real(1)) * total, force, draw.context);
            }
            if (f.contactForces) draw.drawLine(p, p + (Real(f.forceScale) / h) * total, force, draw.context);   // N
        }
    }
    switch (type) {
    case ContactModelType::PEG: drawPegGroups(contacts, draw); break;
    case ContactModelType::PLUS: drawPlusAnnotations(contacts, draw); break;
    case ContactModelType::CCP: drawCcpSeparation(contacts, draw); break;
    default: break;
    }
}

}  // namespace cs
