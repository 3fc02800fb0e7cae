// The cone complementarity contact model ([CCP] eq. 5d and section 4).
//
// The same potential contacts, the same merge of duplicate feature pairs, the same three rows per
// contact (normal along n, friction along t1, t2) and the same friction mixing and scene keys as
// the standard model (standard_model.cpp): only the contact law differs. The standard model asks
// for 0 <= gamma_n _|_ Phi/h + v_n >= 0 with Coulomb friction; CCP relaxes the normal condition to
//     0 <= gamma_n  _|_  Phi/h + v_n - mu |v_T|  >= 0                              (eq. 5d)
// which with Coulomb friction is the cone complementarity problem of eq. 7, the optimality
// condition of a convex QP (eq. 11) that always has a solution. The price: a contact that pushes
// while sliding ends the step at the gap h mu |v_T| instead of 0 (section 3, the "bowling ball").
// Phi is the standard model's stabilized gap (standard_rows_hd.h stabilizedGap): an overlap is
// corrected within one step as eq. 5d asks (stabilization 1), but no faster than
// maxPushoutSpeed, the cap on the normal velocity section 3 recommends for initial overlaps.
//
// The relaxation is marked on the rows by mu on the normal row (constraint_rows.h): the CCP
// solvers read the cones from the rows, and the Newton iteration relaxes the row's gap by
// -h mu |v_T| in evalRow, so the NSN solvers can be compared with PJ, PGS and APGD on one problem.
#include <cmath>
#include <cstdio>

#include "engine/contact/ccp_cone_hd.h"
#include "engine/contact/ccp_model.h"

namespace cs {

void buildStandardRows(const ContactStageInput& in, ConstraintRows& rows);
void storeStandardResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                          std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);

void buildCcpRows(const ContactStageInput& in, ConstraintRows& rows) {
    const int first = rows.size();
    buildStandardRows(in, rows);
    for (int i = first; i < rows.size(); ++i)
        if (rows.kind[i] == int(RowKind::Normal)) rows.mu[i] = rows.mu[i + 1];
}

namespace {
Real rowVelocity(const ConstraintRows& rows, int i, const Spatial* u) {
    Real v = 0;
    if (rows.bodyA[i] >= 0) v += dot(rows.jacobianA[i], u[rows.bodyA[i]]);
    if (rows.bodyB[i] >= 0) v += dot(rows.jacobianB[i], u[rows.bodyB[i]]);
    return v;
}
}  // namespace

void storeCcpResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                     std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    storeStandardResults(in, rows, bodies, contacts, warm);
    const Spatial* u = bodies.velocity.data();
    size_t c = 0;
    for (int i = 0; i < rows.size() && c < contacts.size(); ++i) {
        if (rows.kind[i] != int(RowKind::Normal) || rows.owner[i] < 0) continue;
        Contact& contact = contacts[c++];
        if (contact.normalImpulse > 0)
            contact.ccpSeparation = relaxationSeparation(in.h, rows.mu[i], rowVelocity(rows, i + 1, u), rowVelocity(rows, i + 2, u));
    }
}

void drawCcpSeparation(const std::vector<Contact>& contacts, DebugDraw& draw) {
    if (!draw.flags.constraintGroups || !draw.drawLine) return;
    const Color lift{0.95f, 0.3f, 0.95f, 1};
    const Real perMetre = Real(draw.flags.normalLength) / Real(0.01);
    const Contact* largest = nullptr;
    for (const Contact& c : contacts) {
        if (!(c.ccpSeparation > 0)) continue;
        const Vec3 p = c.geometry.pointB;
        draw.drawLine(p, p + (perMetre * c.ccpSeparation) * c.geometry.normal, lift, draw.context);
        if (draw.drawPoint) draw.drawPoint(p + (perMetre * c.ccpSeparation) * c.geometry.normal, 4.0f, lift, draw.context);
        if (!largest || c.ccpSeparation > largest->ccpSeparation) largest = &c;
    }
    if (largest && draw.drawText) {
        char text[64];
        std::snprintf(text, sizeof text, "h mu |vT| = %.2f mm", double(largest->ccpSeparation * 1000));
        draw.drawText(largest->geometry.pointB + (perMetre * largest->ccpSeparation) * largest->geometry.normal, text,
                      lift, draw.context);
    }
}

}  // namespace cs
