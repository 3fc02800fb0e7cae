// Sequential impulses (projected Gauss-Seidel over the contact rows, as Bullet, ODE and Box2D v2
// ship them) as SolveMethod::Pgs beside the non-smooth Newton method and the soft step.
//
// One world step h (after the broad and narrow phases):
//
//   prepare      the soft step's manifolds (relax_shared.h: the contacts of a shape pair grouped by
//                normal, at most four points each, graph-coloured, contiguous per colour), masses,
//                warm-start impulses from the last step by contact key (State::warm, factor 1);
//                the joints' rows and the drag at the step's start pose
//   velocities   v += h g, w by the implicit gyroscopic step (integrate.h)
//   warm start   the last step's impulses applied again (contacts, joints, drag)
//   iterate      PgsSettings::iterations sweeps: joints and drag (serial), then each colour's
//                manifolds (pgs_step_hd.h pgsSolveContact: normal rows with accumulated clamping,
//                friction on Coulomb's disc against the current normal impulse)
//   split        PgsSettings::splitIterations sweeps of the pseudo velocities over the overlapped
//                points (Bullet's split impulse); with splitImpulse off the overlaps are instead
//                pushed out by a bounded Baumgarte bias in the velocity rows
//   positions    x += h (v + v'), q turned by h (w + w'); v' dropped
//   store        poses, velocities, contacts, warm start (relax_shared.h relaxStore)
//
// Joints' rigid rows use a Baumgarte bias (PgsSettings::erp, Bullet's 0.2) in the velocity sweeps.
// Each sweep is an executor forEach over one colour's manifolds, so the result does not depend on
// the thread count; buffers are kept between steps. Handled and refused: as the soft step
// (relaxStepSupports in relax_shared.h): the standard model's rigid contacts, fixed, ball, revolute
// and prismatic joints, the drag; not mimic couplings, deformable bodies, other contact models.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/solver/soft_step.h"

namespace cs {

struct PgsStepScratch;   // pgs_step.cpp

// Whether sequential impulses handle this model and settings; otherwise *why is one line.
bool pgsStepSupports(const Model& model, const WorldSettings& settings, std::string* why);

// One step of length in.h, as softStep (soft_step.h): reads and writes state, lists the solved contacts.
// result.sweeps: the velocity sweeps plus the split sweeps.
void pgsStep(const SoftStepInput& in, State& state, PgsStepScratch& scratch, std::vector<Contact>& contacts,
             SoftStepResult& result);

std::shared_ptr<PgsStepScratch> makePgsStepScratch();

}  // namespace cs
