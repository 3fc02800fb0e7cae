// World: model + state + per-step scratch, and the one step() that orders the pipeline.
#pragma once

#include <string>
#include <vector>

#include "engine/collision/potential_contact.h"
#include "engine/debug_draw.h"
#include "engine/model.h"
#include "engine/solver/linear_solvers.h"
#include "engine/state.h"

namespace cs {

enum class ContactModelType { Standard, PEG, PLUS, Compliant };
enum class NcpFunction { FischerBurmeister, MinimumMap };

struct SolverSettings {
    ContactModelType contactModel = ContactModelType::Standard;
    NcpFunction ncp = NcpFunction::FischerBurmeister;
    LinearSolverType linearSolver = LinearSolverType::PCR;
    int newtonIterations = 6;
    int linearIterations = 20;
    Real newtonTolerance = Real(1e-9);   // stop when the NCP residual ||h|| drops below this
    Real linearTolerance = Real(1e-12);  // relative, on the linear residual
    Real damping = Real(0.75);           // damped Newton step t ([NSN] section 8.1)
    Real regularization = Real(1e-6);    // epsilon identity shift ([NSN] section 8.4), 1/kg
    bool warmStart = true;
    bool complementarityPreconditioner = true;   // [NSN] section 7, r = h [J M^-1 J^T]_ii
    Real stabilization = 1;              // fraction of the gap psi/h kept in the constraint ([PEG] eq. 9)
};

struct WorldSettings {
    Real dt = Real(1.0 / 120.0);
    int substeps = 1;
    Vec3 gravity{0, 0, Real(-9.81)};
    Real contactMargin = Real(0.02);     // potential contacts are reported within this gap (m)
    Real frictionScale = 1;              // multiplies every material's mu (UI setting)
    SolverSettings solver;
};

// Seconds spent in each stage of the last step (Box2D's b2Profile).
struct StepProfile {
    double broadPhase = 0, narrowPhase = 0, contactModel = 0, solve = 0, integrate = 0, total = 0;
};

// What the last solve did, for the runner, the app's table and the convergence plot.
struct SolveStats {
    int newtonIterations = 0;
    int linearIterations = 0;            // summed over Newton iterations
    Real residualFinal = 0;              // ||h|| of the NCP system at exit
    std::vector<Real> newtonResidual;                // (newton iters + 1)
    std::vector<std::vector<Real>> linearResidual;   // (newton iters) x (linear iters + 1)
};

struct Contact {              // a potential contact turned into constraint rows, after the solve
    PotentialContact geometry;
    Real mu;
    Real normalImpulse;       // N s
    Real tangentImpulse[2];
    Vec3 tangent[2];
    bool sliding;
};

class World {
public:
    World() = default;
    explicit World(Model model, WorldSettings settings = {});

    void reset();                 // back to the model's initial state
    void step();                  // one frame of settings.dt (settings.substeps sub-steps)

    const Model& model() const { return model_; }
    Model& model() { return model_; }
    State& state() { return state_; }
    const State& state() const { return state_; }
    WorldSettings settings;

    const StepProfile& profile() const { return profile_; }
    const SolveStats& solveStats() const { return solveStats_; }
    const std::vector<Contact>& contacts() const { return contacts_; }
    bool isActive(int body) const;   // spawned and not dormant
    Transform bodyTransform(int body) const { return {state_.pos[body], state_.rot[body]}; }
    Transform shapeTransform(int shape) const;

    // Guards at stage boundaries: the last step produced NaN or exploded and was rolled back.
    bool lastStepFailed() const { return lastStepFailed_; }
    const std::string& lastError() const { return lastError_; }
    int failedSteps() const { return failedSteps_; }

    void draw(DebugDraw& draw) const;

private:
    void substep(Real h);
    Model model_;
    State state_;
    StepProfile profile_;
    SolveStats solveStats_;
    std::vector<Contact> contacts_;
    bool lastStepFailed_ = false;
    std::string lastError_;
    int failedSteps_ = 0;
};

}  // namespace cs
