// The soft step: Box2D v3's solver (Catto, "Solver2D", 2024; box2d src/solver.c and
// contact_solver.c) in 3D, as SolveMethod::Soft beside the non-smooth Newton method.
//
// One world step h (after the broad and narrow phases, which run once per step) is
//
//   prepare      potential contacts -> manifolds: the contacts of one shape pair grouped by
//                normal and reduced to at most four points (the deepest, the farthest from it,
//                then the points that span the largest area), fixed anchors, masses, warm-start
//                impulses from the last step (State::warm, by contact key);
//                graph colouring: no two manifolds of one colour share a moving body
//   substeps     n times, h_s = h / n (SoftSettings::substeps):
//                  integrate velocities   v += h_s g, w by the implicit gyroscopic step (integrate.h)
//                  joints                 their rows at the substep's pose
//                  warm start             the accumulated impulses applied again
//                  solve                  one sweep with the soft bias (soft_step_hd.h)
//                  integrate positions    dp += h_s v, dq turned by h_s w
//                  relax                  relaxIterations sweeps without bias
//   restitution  one sweep, points that approached faster than the threshold
//   store        poses x0 + dp, dq q0 and velocities into the state, impulses into the warm start
//
// The separation of every point is updated from its bodies' dp and dq within the step; the
// narrow phase is not rerun (soft_step_hd.h). Each sweep is an executor forEach over one colour's
// blocks of kSoftLanes manifolds, solved lane by lane in SIMD with the scalar law's arithmetic
// (soft_wide.h; engine/exec/executor.h, the host executor runs it here), the colours in order, the
// overflow colour (manifolds that found no free colour) in one serial pass with the scalar law:
// the result does not depend on the thread count. The manifolds are laid out by colour, contiguous, and every buffer
// is kept between steps (no allocation once the largest step has been seen).
//
// Handled: the standard contact model's rigid contacts, the mouse drag of a rigid body, and
// fixed, ball, revolute and prismatic joints with their drives, compliances and force limits
// (the Newton path's rows, soft_step_hd.h SoftJoint; solved serially, not coloured yet).
// Not yet (relaxStepSupports, relax_shared.h; sequential impulses, pgs_step.h, handle the same):
// mimic couplings, deformable bodies, the other contact models, sleeping
// (softStepSupports says which; the runner refuses the scene, the world runs the Newton method
// and says so once).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/settings.h"
#include "engine/step_types.h"

namespace cs {

struct SoftStepScratch;   // soft_step.cpp

struct SoftStepInput {
    const Model& model;
    const WorldSettings& settings;
    const std::vector<PotentialContact>& potential;
    const uint8_t* active;        // (bodies) spawned and awake
    Real h;                       // the world (sub)step
    const DragState& drag;
    const DragSettings& dragSettings;
    Vec3 dragWarm;                // the drag's impulse over the last step (N s): its warm start
};

struct SoftStepResult {
    int manifolds = 0;
    int points = 0;
    int colours = 0;              // colours used, the overflow not counted
    int overflow = 0;             // manifolds in the overflow colour
    int sweeps = 0;               // contact sweeps in the step (solve + relax over the substeps, + restitution)
    Real residual = 0;            // m/s: ||min(s, h lambda / m_n)|| / h over the points at the step's end
    Vec3 dragImpulse{0, 0, 0};    // the drag's impulse over the step (N s)
    Real dragEffectiveMass = 0;   // kg, along the lightest axis at the grabbed point
};

// Whether the soft step handles this model and settings; otherwise *why is one line.
bool softStepSupports(const Model& model, const WorldSettings& settings, std::string* why);

// One step of length in.h: reads and writes state (poses, velocities, State::warm), lists the
// solved contacts in `contacts` (each manifold point, impulses over the step).
void softStep(const SoftStepInput& in, State& state, SoftStepScratch& scratch, std::vector<Contact>& contacts,
              SoftStepResult& result);

std::shared_ptr<SoftStepScratch> makeSoftStepScratch();

// Every SolveMethod, in the order a method picker lists them.
constexpr SolveMethod kSolveMethods[] = {SolveMethod::Newton, SolveMethod::Pgs, SolveMethod::Soft};
constexpr int kSolveMethodCount = int(sizeof(kSolveMethods) / sizeof(kSolveMethods[0]));

const char* solveMethodName(SolveMethod method);                   // "newton", "pgs", "soft"
bool parseSolveMethodName(const std::string& name, SolveMethod& out);

}  // namespace cs
