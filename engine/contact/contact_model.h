// The contact-model stage: potential contacts in, constraint rows out.
//
// Every contact model exposes the same verbs (as Box2D joints share
// prepare/warm-start/solve/draw):
//   preSolve    optional impact pass that changes body velocities before the time step's
//               solve ([PLUS] section 3: frozen time, Poisson phases); standard: nothing.
//   buildRows   potential contacts -> rows of constraint_rows.h. The standard model makes one
//               unilateral row plus two friction rows per potential contact. PEG groups several
//               potential contacts into U, I and X constraints with slack rows ([PEG] 3-5).
//   storeResults rows' impulses -> World::contacts() and the warm-start cache.
//   draw        the model's own debug layer (PEG constraint groups, PLUS impact phases).
// Dispatch is a switch on ContactModelType, never a virtual call.
#pragma once

#include <string>
#include <vector>

#include "engine/collision/potential_contact.h"
#include "engine/debug_draw.h"
#include "engine/settings.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/newton.h"
#include "engine/step_types.h"

namespace cs {

struct RowCull;       // engine/contact/row_culling.h
struct StepContext;   // engine/contact/step_context.h

struct ContactStageInput {
    const Model& model;
    const WorldSettings& settings;
    const State& state;
    const std::vector<PotentialContact>& potential;
    Real h;
    RowCull* cull = nullptr;   // standard model: leave out contacts that cannot close (row_culling.h)
    // The world's step context (step_context.h): PEG, PLUS and the compliant model keep there what
    // a later stage of the same step reads. Null: contactPreSolve and buildContactRows use one of
    // their own for the call (a problem built outside a world's step, step_problem.h);
    // contactPostIntegrate and storeContactResults need the one their step's preSolve and
    // buildRows were given.
    StepContext* context = nullptr;
};

// True when the model is implemented in this build; otherwise *why says which issue adds it.
bool contactModelAvailable(ContactModelType type, std::string* why);
// Names of models, NCP functions and solvers: engine/scene/scene_loader.h.

// PEG and PLUS build rows for rigid pairs only; a model with deformable bodies run under them
// has its node contacts made by the standard model (fem_contact.h). The note saying so (the
// world prints it once, the app shows it), or "" where it does not apply.
std::string femContactModelNote(const Model& model, ContactModelType type);

void contactPreSolve(const ContactStageInput& in, BodyVelocities& bodies);
void buildContactRows(const ContactStageInput& in, ConstraintRows& rows);
// After the world integrated the solved velocities: a model that integrated bodies itself (the
// compliant model) puts them at its own end state. No-op for the others.
void contactPostIntegrate(const ContactStageInput& in, State& state);
void storeContactResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                         std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);
void drawContactModel(ContactModelType type, const std::vector<Contact>& contacts, Real h, DebugDraw& draw);

// The Contact reported for the normal (or group) row i followed by its two friction rows:
// impulses, tangents, and whether it slides (friction on the cone's boundary and the point
// slipping). u: the solved body velocities. Shared by every model that uses these rows.
Contact contactFromRows(const PotentialContact& g, const ConstraintRows& rows, int i, const Spatial* u);

// Coulomb coefficient of a pair: the geometric mean of the two materials' (Box2D's mixing rule),
// times the world's friction scale.
Real mixFriction(const Model& model, int bodyA, int bodyB, Real scale);

}  // namespace cs
