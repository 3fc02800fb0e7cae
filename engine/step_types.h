// What a step's stages share with World beyond the settings: the per-body data a step starts
// from, what the step reports (profile, solve statistics, the solved contacts) and the drag it
// applies. The stages include this, not engine/world.h.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/collision/potential_contact.h"
#include "engine/core/math.h"
#include "engine/model.h"
#include "engine/state.h"

namespace cs {

struct BodyVelocities;   // engine/solver/newton.h
// The solve's per-body data at the start of a step of length h: inverse mass and world inverse
// inertia of the active dynamic bodies (zero for static or dormant ones, active[b] == 0) and
// the unconstrained velocities u~ = u + h g. bodies.velocity is sized, not set.
void startBodyVelocities(const Model& model, const State& state, const uint8_t* active, Vec3 gravity, Real h,
                         BodyVelocities& bodies);

// Seconds spent in each stage of the last step (Box2D's b2Profile).
struct StepProfile {
    double broadPhase = 0, narrowPhase = 0, contactModel = 0, solve = 0, integrate = 0, project = 0, total = 0;
};

// What the last solve did, for the runner, the app's table and the convergence plot.
struct SolveStats {
    int newtonIterations = 0;
    int linearIterations = 0;            // summed over Newton iterations
    Real residualFinal = 0;              // ||h|| of the NCP system at exit
    int restoredBest = 0;                // 1: Newton returned its best iterate (keepBestIterate)
    std::vector<Real> newtonResidual;                // (newton iters + 1)
    std::vector<std::vector<Real>> linearResidual;   // (newton iters) x (linear iters + 1)
    std::vector<Real> ccpMerit;                      // [CCP] model: its merit (m/s) per iteration, entry 0 at the start
    int ccpFallbacks = 0;                // [CCP] Newton: iterations whose step was replaced by APGD's
    int rows = 0;                        // rows of the last solve
    int culledContacts = 0;              // contacts left out of it (SolverSettings::cullRows)
    int cullResolves = 0;                // solves repeated with every row because a left-out contact closed
    int wakeResolves = 0;                // solves repeated because a sleeping body's load changed (islands.h)
};

struct DragState {
    int body = -1;               // -1: no drag of a rigid body
    int femTri = -1;             // >= 0: a deformable body's boundary triangle is dragged instead
    Vec3 femWeights{0, 0, 0};    // barycentric weights of the grabbed point on femTri
    Vec3 localPoint{0, 0, 0};    // in the body's COM frame
    Vec3 target{0, 0, 0};        // world
    Vec3 force{0, 0, 0};         // last step's drag force on the body, N
    Real effectiveMass = 0;      // kg, at the grabbed point along the worst axis
};

struct Contact {              // a potential contact turned into constraint rows, after the solve
    PotentialContact geometry;
    Real mu;
    Real normalImpulse;       // N s
    Real tangentImpulse[2];
    Vec3 tangent[2];
    bool sliding;
    // [PEG] constraint groups (contact model PEG only; -1 / 0 otherwise): index of the U, I or X
    // constraint this feature pair belongs to, its kind ('U', 'I', 'X'), whether it is the
    // group's primary contact (the one with the impulse), and whether the group is an SM trap
    // (a member's half-space gap is negative where the group's largest gap is not: the standard
    // model would push there).
    int pegGroup = -1;
    char pegKind = 0;
    bool pegPrimary = false;
    bool pegTrap = false;
    // PLUS annotations of a contact that took part in an impact this step (engine/contact/plus_model.cpp):
    // phase 0 compressing, 1 expanding, 2 observing (last round); state 0 sliding, 1 rolling,
    // 2 impending slip; -1: no impact. impactImpulse: accumulated impulse, world frame, N s.
    int impactPhase = -1;
    int impactState = -1;
    int impactRounds = 0;
    Vec3 impactImpulse{0, 0, 0};
    Real ccpSeparation = 0;   // [CCP] model: h mu |v_T|, the end-of-step gap its relaxation opens (m)
    // Deformable bodies' contacts (engine/fem/fem_contact.h), listed after the rigid ones: a FEM
    // node (femNode, its position geometry.pointA; geometry.bodyA = shapeA = -1) against a rigid
    // part (geometry.bodyB, shapeB) or a boundary triangle of another deformable body (femTri,
    // geometry.pointB on it; bodyB = shapeB = -1). -1: a rigid contact.
    int femNode = -1;
    int femTri = -1;
};

}  // namespace cs
