// World: model + state + per-step scratch, and the one step() that orders the pipeline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/collision/broad_phase.h"
#include "engine/collision/feature_pairs.h"
#include "engine/collision/potential_contact.h"
#include "engine/contact/step_context.h"
#include "engine/debug_draw.h"
#include "engine/model.h"
#include "engine/settings.h"
#include "engine/solver/linear_solvers.h"
#include "engine/state.h"
#include "engine/step_types.h"

namespace cs {

struct BodyDesc;   // engine/model_builder.h
struct SoftStepScratch;   // engine/solver/relax_shared.h
struct PgsStepScratch;    // engine/solver/pgs_step.cpp

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
    const std::vector<PotentialContact>& potentialContacts() const { return potential_; }
    Real kineticEnergy() const;      // J, active dynamic bodies and FEM nodes
    Real maxPenetration() const;     // m, deepest overlap of any two parts at the current poses (0 if none)
    // Pairs of parts touching or overlapping now (no margin; not those of one body, both static,
    // dormant or joined), the set the overlap metrics run over.
    void overlappingPairs(std::vector<ShapePair>& out) const;
    Real shapeDistance(int shapeA, int shapeB) const;   // m, exact; negative when overlapping
    bool isActive(int body) const;   // spawned and not dormant
    bool isAsleep(int body) const;   // in a sleeping island (WorldSettings::sleeping)
    int sleepingBodies() const;
    void wakeAll();                  // every island awake (the app calls it after an edit)
    Transform bodyTransform(int body) const { return {state_.pos[body], state_.rot[body]}; }
    Transform shapeTransform(int shape) const;

    // Guards at stage boundaries: the last step produced NaN, exploded (a speed beyond the scene's
    // scale) or added kinetic energy that nothing in the scene supplied (energy_guard.h), and was
    // rolled back.
    bool lastStepFailed() const { return lastStepFailed_; }
    const std::string& lastError() const { return lastError_; }
    int failedSteps() const { return failedSteps_; }

    void draw(DebugDraw& draw) const;

    // ---- interaction (the app and session replay use these) ----
    void setDrag(int body, Vec3 localPoint, Vec3 target);  // start or move a drag
    // Drag the point sum_i w_i x_i of FEM boundary triangle `tri` (model.femTris) to target
    // (engine/fem/fem_drag.h); weights are clamped to the triangle and renormalized.
    void setFemDrag(int tri, Vec3 weights, Vec3 target);
    void clearDrag();
    // Per-tet volumetric strain, von Mises stress and largest stretch at the current state
    // (engine/fem/fem_rows_hd.h femStrainFields), the app's strain colours.
    void femTetFields(std::vector<Real>& volumetricStrain, std::vector<Real>& vonMises,
                      std::vector<Real>& maxStretch) const;
    const DragState& drag() const { return drag_; }
    // What the contact stages of the last step left (engine/contact/step_context.h), and where
    // the caller switches PLUS's impact recording on (stepContext().plus.recordImpacts): per
    // world, so a world records on whichever thread steps it.
    StepContext& stepContext() { return stepContext_; }
    const StepContext& stepContext() const { return stepContext_; }
    // The last step's drag force (N) and effective mass (kg) when another stepper ran it
    // (engine/exec/pipeline_world.h); World::step sets them itself.
    void setDragFeedback(Vec3 force, Real effectiveMass) {
        drag_.force = force;
        drag_.effectiveMass = effectiveMass;
    }
    DragSettings dragSettings;
    // Adds a body between steps (a launched box or sphere); returns its index or -1 with error.
    int addBody(const BodyDesc& desc, std::string* error);
    // Ray cast against all shapes but those of static see-through bodies (glass walls, opacity < 1,
    // which the user picks through): returns the body hit first (or -1) and the hit point.
    int rayCast(Vec3 origin, Vec3 direction, Vec3* hitPoint) const;
    // Index of the body with this name, or -1.
    int findBody(const std::string& name) const;

private:
    struct SpeedGuard {              // the guard's limits for one step (world.cpp speedGuard)
        Real scale = 0;              // m/s: the scene's speed scale
        Real sceneLimit = 0;         // m/s: bodies in no joint
        Real maxSpeed = 0;           // m/s: every body
        Real limit(bool jointed) const { return jointed ? maxSpeed : sceneLimit; }
    };
    void substep(Real h);
    void softSubstep(Real h);        // SolveMethod::Soft and Pgs (engine/solver/soft_step.h, pgs_step.h)
    SpeedGuard speedGuard(Real h) const;
    Real bodyReach(int body) const;
    // What the speed guard caught: body `body` (or, body < 0, FEM node `node`) at `speed`.
    std::string speedFailure(int body, Real speed, const SpeedGuard& guard, int node) const;
    // Back to lastGood with every velocity zero; `cause` says what the guard caught.
    void rollBack(const State& lastGood, Real h, const std::string& cause);
    void findShapePairs(const State& at, const NarrowPhaseSettings& narrow);   // broad phase into the scratch
    bool widenDetection(const NarrowPhaseSettings& narrow, bool fromStart);   // the redetection's test
    void projectPositions();                                  // the optional last stage
    bool sleepingApplies() const;                             // settings.sleeping, where supported
    Model model_;
    State state_;
    StepProfile profile_;
    SolveStats solveStats_;
    std::vector<Contact> contacts_;
    // The last solved contacts of islands now asleep, for the view only (forces on a resting arch):
    // a sleeping pair is not detected or solved, so it is not in contacts_. Dropped when it wakes.
    std::vector<Contact> sleepingContacts_;
    void keepSleepingContacts(bool sleeping);
    std::vector<PotentialContact> potential_;
    StepContext stepContext_;        // the contact stages' data within a step (ContactStageInput::context)
    struct Scratch;                  // per-step buffers (world.cpp), reused between steps
    std::shared_ptr<Scratch> scratch_;
    std::shared_ptr<const Model> sceneModel_;   // the model as loaded, restored by reset()
    bool lastStepFailed_ = false;
    bool femModelNoted_ = false;     // the PEG/PLUS-with-FEM note was printed
    bool softNoted_ = false;         // the note that the soft step does not handle the scene was printed
    std::shared_ptr<SoftStepScratch> softScratch_;   // the soft step's buffers (engine/solver/relax_shared.h)
    std::shared_ptr<PgsStepScratch> pgsScratch_;     // sequential impulses' buffers (engine/solver/pgs_step.cpp)
    std::string lastError_;
    int failedSteps_ = 0;
    DragState drag_;
    Vec3 dragWarm_{0, 0, 0};         // the drag rows' warm start (N s): drag_.force h as a step begins, then each substep's impulses
};

}  // namespace cs
