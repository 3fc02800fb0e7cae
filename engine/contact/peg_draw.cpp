// PEG's debug layer: the constraint groups of the last step ([PEG] sections 3 and 5.2).
//
// Drawn through the engine's DebugDraw callbacks (each contact model draws
// its own constraints), when flags.constraintGroups is set:
//   - every feature pair of a group as a short segment along its normal, coloured by the
//     group's kind: U grey-blue, I cyan, X magenta;
//   - the primary contact (the one with the impulse) as a large point with a ring, the
//     secondaries as small points joined to it;
//   - SM traps (a secondary half-space violated where the group's largest gap is not: where the
//     standard model would over-constrain) in red, with the label "SM trap".
#include <cmath>

#include "engine/contact/peg_model.h"

namespace cs {

void drawPegGroups(const std::vector<Contact>& contacts, DebugDraw& draw) {
    if (!draw.flags.constraintGroups || !draw.drawLine) return;
    const Color kindU{0.55f, 0.65f, 0.8f, 1}, kindI{0.1f, 0.9f, 0.95f, 1}, kindX{0.95f, 0.2f, 0.9f, 1};
    const Color trap{1.0f, 0.15f, 0.15f, 1};
    const Real len = Real(draw.flags.normalLength) * Real(0.5);
    for (size_t i = 0; i < contacts.size(); ++i) {
        const Contact& c = contacts[i];
        if (c.pegGroup < 0 || !c.pegPrimary) continue;
        Color col = c.pegKind == 'I' ? kindI : c.pegKind == 'X' ? kindX : kindU;
        if (c.pegTrap) col = trap;
        const Vec3 p = c.geometry.pointB;
        // Primary: a ring around the point, in the plane of the contact.
        Vec3 t1, t2;
        tangentBasis(c.geometry.normal, t1, t2);
        const Real radius = Real(0.25) * len;
        const int segments = 10;
        for (int s = 0; s < segments; ++s) {
            Real a0 = Real(2 * M_PI) * s / segments, a1 = Real(2 * M_PI) * (s + 1) / segments;
            draw.drawLine(p + radius * (std::cos(a0) * t1 + std::sin(a0) * t2),
                          p + radius * (std::cos(a1) * t1 + std::sin(a1) * t2), col, draw.context);
        }
        draw.drawLine(p, p + len * c.geometry.normal, col, draw.context);
        if (draw.drawPoint) draw.drawPoint(p, 9.0f, col, draw.context);
        // Secondaries follow their primary in the contact list.
        for (size_t j = i + 1; j < contacts.size() && contacts[j].pegGroup == c.pegGroup; ++j) {
            const PotentialContact& s = contacts[j].geometry;
            Color sc = col;
            sc.a = 0.7f;
            draw.drawLine(s.pointB, s.pointB + len * s.normal, sc, draw.context);
            draw.drawLine(p, s.pointB, sc, draw.context);
            if (draw.drawPoint) draw.drawPoint(s.pointB, 4.0f, sc, draw.context);
        }
        if (c.pegTrap && draw.drawText) draw.drawText(p + len * c.geometry.normal, "SM trap", trap, draw.context);
    }
}

}  // namespace cs
