// The cone complementarity contact model ([CCP] Tasora and Anitescu 2011, as restated by Negrut
// et al.): the verbs of contact_model.h for ContactModelType::CCP. Rows and solvers are described
// in ccp_model.cpp and engine/solver/ccp_solvers.h; the per-contact math is ccp_cone_hd.h.
#pragma once

#include <vector>

#include "engine/contact/contact_model.h"

namespace cs {

void buildCcpRows(const ContactStageInput& in, ConstraintRows& rows);
void storeCcpResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                     std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);
// The spurious normal separation h mu |v_T| of each pushing contact: a segment along the normal,
// flags.normalLength long per centimetre, and the largest one labelled in millimetres.
void drawCcpSeparation(const std::vector<Contact>& contacts, DebugDraw& draw);

}  // namespace cs
