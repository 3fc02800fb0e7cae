// World::step: the pipeline, top to bottom, and the only place its stages are ordered.
//
//   broad phase     shape AABBs (grown by the contact margin) -> candidate shape pairs
//   narrow phase    shape pairs -> potential contacts (feature pairs with signed gaps)
//   contact model   potential contacts -> constraint rows (plus joints and the drag)
//   solve           non-smooth Newton over the rows ([NSN] Algorithm 1)
//                   optional: the four stages again, the detection widened by the solved motion
//                   (WorldSettings::redetectPasses, World::widenDetection)
//   integrate       positions and orientations from the solved velocities ([NSN] eq. 63);
//                   a model that integrated bodies itself (compliant) then sets their end state
//   project         optional: moves overlapping bodies apart without changing velocities
//                   (WorldSettings::projectionPasses, World::projectPositions)
//
// Each stage is timed into StepProfile. Guards after the solve (as MuJoCo's mj_checkVel) catch
// NaN and explosions (speedGuard) and energy that nothing in the scene supplied
// (engine/solver/energy_guard.h), restore the last good state and report it; stepping goes on.
#include "engine/world.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/collision/broad_phase.h"
#include "engine/collision/distance.h"
#include "engine/collision/feature_cache.h"
#include "engine/collision/narrow_phase.h"
#include "engine/contact/contact_model.h"
#include "engine/contact/row_culling.h"
#include "engine/fem/fem_contact.h"
#include "engine/fem/fem_drag.h"
#include "engine/fem/fem_step.h"
#include "engine/model_builder.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/solver/energy_guard.h"
#include "engine/solver/integrate.h"
#include "engine/solver/islands.h"
#include "engine/solver/joint_coupling.h"
#include "engine/solver/joint_rows.h"
#include "engine/solver/newton.h"
#include "engine/solver/pgs_step.h"
#include "engine/solver/soft_step.h"
#include "engine/solver/speed_guard_hd.h"

namespace cs {

struct World::Scratch {
    std::vector<uint8_t> active;          // (bodies) spawned and awake: stepped
    std::vector<uint8_t> present;         // (bodies) spawned: in the broad phase
    std::vector<uint8_t> jointed;         // (bodies) 1: in a joint (the speed guard's scale does not apply)
    std::vector<Aabb> aabbs;              // (shapes)
    std::vector<ShapePair> pairs;
    std::vector<PotentialContact> projectContacts;   // the projection's narrow phase
    State detect;                         // the redetection's state: start poses, widened velocities
    SolveStats projectStats;
    ConstraintRows rows;
    BodyVelocities bodies;
    NewtonScratch newton;
    CcpScratch ccp;                       // [CCP] model's solvers
    FemContactScratch femContacts;        // the FEM contacts of the step (engine/fem/fem_contact.h)
    std::vector<Mat3> femRotation;        // (tets) polar rotations of the step's FEM rows (warm start)
    FemTetCache femTets;                 // each tet's SVD and potential at the last step's end (fem_tet_cache.h)
    RowCull cull;                         // contacts left out of the rows (engine/contact/row_culling.h)
    FeatureCache features;                // the narrow phase's candidates (WorldSettings::narrowReuse)
    std::vector<WarmImpulse> sleepWarm;   // sleeping islands' impulses, kept across the store
    State lastGood;                       // the soft step's roll-back state (copied into, no allocation once sized)
};

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool isFinite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
bool isFinite(Quat q) { return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z); }

}  // namespace

NarrowPhaseSettings narrowPhaseSettings(const WorldSettings& settings, Real h) {
    NarrowPhaseSettings n;
    n.margin = settings.contactMargin;
    n.motionScale = settings.speculative;
    n.dt = h;
    n.gravity = length(settings.gravity);
    n.hyperplane = settings.hyperplaneFaces;
    return n;
}

void startBodyVelocities(const Model& model, const State& state, const uint8_t* active, Vec3 gravity, Real h,
                         BodyVelocities& bv) {
    const int nb = model.bodyCount();
    bv.invMass.resize(nb);
    bv.invInertia.resize(nb);
    bv.unconstrained.resize(nb);
    bv.velocity.resize(nb);
    for (int b = 0; b < nb; ++b) {
        bool dynamic = active[b] && !model.isStatic(b);
        bv.invMass[b] = dynamic ? model.invMass[b] : Real(0);
        bv.invInertia[b] = dynamic ? worldInverseInertia(state.rot[b], model.invInertiaLocal[b]) : mat3Zero();
        bv.unconstrained[b] = dynamic ? unconstrainedVelocity(state.linVel[b], state.angVel[b], state.rot[b],
                                                              model.invInertiaLocal[b], gravity, h)
                                      : Spatial{{0, 0, 0}, {0, 0, 0}};
    }
}

World::World(Model model, WorldSettings s) : settings(s), model_(std::move(model)) {
    sceneModel_ = std::make_shared<const Model>(model_);
    reset();
}

void World::reset() {
    if (sceneModel_ && model_.bodyCount() != sceneModel_->bodyCount()) model_ = *sceneModel_;   // drop launched bodies
    const int n = model_.bodyCount();
    state_ = State{};
    state_.pos = model_.initialPos;
    state_.rot = model_.initialRot;
    state_.linVel = model_.initialLinVel;
    state_.angVel = model_.initialAngVel;
    state_.pos.resize(n);
    state_.rot.resize(n, quatIdentity());
    state_.linVel.resize(n, Vec3{0, 0, 0});
    state_.angVel.resize(n, Vec3{0, 0, 0});
    state_.femPos = model_.femInitialPos;
    state_.femVel = model_.femInitialVel;
    state_.femActivation.assign(model_.femBodies.size(), 0);
    contacts_.clear();
    sleepingContacts_.clear();
    potential_.clear();
    drag_ = DragState{};
    lastStepFailed_ = false;
    stopped_ = false;
    lastError_.clear();
    failedSteps_ = 0;
    if (!scratch_) scratch_ = std::make_shared<Scratch>();
    scratch_->features.clear();
}

bool World::isActive(int body) const { return state_.time + Real(1e-9) >= model_.bodySpawnTime[body]; }

bool World::isAsleep(int body) const { return cs::isAsleep(state_, body); }

int World::sleepingBodies() const {
    int n = 0;
    for (int b = 0; b < model_.bodyCount(); ++b) n += cs::isAsleep(state_, b) ? 1 : 0;
    return n;
}

void World::wakeAll() { cs::wakeAll(state_); }

// Sleeping needs bodies the step integrates itself and no deformable body (FEM nodes never
// sleep, and a rigid body may rest on one): the standard, PEG and CCP models.
void World::keepSleepingContacts(bool sleeping) {
    if (!sleeping) {
        sleepingContacts_.clear();
        return;
    }
    // A pair sleeps when each of its bodies is static or asleep, and one of them is not static.
    auto asleep = [&](const Contact& c) {
        const int a = c.geometry.bodyA, b = c.geometry.bodyB;
        const bool restA = model_.isStatic(a) || cs::isAsleep(state_, a), restB = model_.isStatic(b) || cs::isAsleep(state_, b);
        return restA && restB && !(model_.isStatic(a) && model_.isStatic(b));
    };
    std::erase_if(sleepingContacts_, [&](const Contact& c) { return !asleep(c); });
    // The pairs of islands that fell asleep in this step (from the next step on they are not detected).
    for (const Contact& c : contacts_)
        if (asleep(c)) sleepingContacts_.push_back(c);
}

bool World::sleepingApplies() const { return cs::sleepingApplies(model_, settings); }   // islands.h

Transform World::shapeTransform(int shape) const { return shapeWorldTransform(model_, state_, shape); }

void World::step() {
    const int substeps = settings.substeps > 0 ? settings.substeps : 1;
    if (stopped_) {   // world.h: a failure that repeated at every retake
        lastStepFailed_ = false;
        profile_ = StepProfile{};
        state_.time += settings.dt;
        return;
    }
    // After a failed step the state is the roll-back's; if this step fails too, it would fail
    // again at every step from here (world.h). Only then is the start kept (a copy of the state).
    const bool afterFailure = lastStepFailed_;
    const State start = afterFailure ? state_ : State{};
    const int before = failedSteps_;
    stepSubsteps(substeps);
    if (!(afterFailure && lastStepFailed_)) return;
    const std::string first = lastError_;
    const int failed = failedSteps_;
    int retakes = 0;
    while (lastStepFailed_ && retakes < kRepeatRetries) {
        ++retakes;
        state_ = start;
        stepSubsteps(substeps << retakes);
    }
    failedSteps_ = lastStepFailed_ ? failed : before;   // the retakes' roll-backs are this step's first try's
    if (lastStepFailed_) {
        stopped_ = true;
        lastError_ = first + "; it failed again from the rolled-back state at rest, and at " +
                     std::to_string(substeps << 1) + " and " + std::to_string(substeps << kRepeatRetries) +
                     " substeps: the world is stopped (reset to run it again)";
    } else {
        lastError_ = first + "; retaken at " + std::to_string(substeps << retakes) + " substeps, which held";
    }
}

void World::stepSubsteps(int substeps) {
    auto t0 = Clock::now();
    StepProfile total;
    const Real h = settings.dt / substeps;
    lastStepFailed_ = false;
    dragWarm_ = drag_.force * h;   // as the pipeline uploads it (pipeline_world.h)
    for (int s = 0; s < substeps; ++s) {
        substep(h);
        total.broadPhase += profile_.broadPhase;
        total.narrowPhase += profile_.narrowPhase;
        total.contactModel += profile_.contactModel;
        total.solve += profile_.solve;
        total.integrate += profile_.integrate;
        total.project += profile_.project;
    }
    total.total = secondsSince(t0);
    profile_ = total;
}

void World::substep(Real h) {
    if (settings.solver.method == SolveMethod::Soft || settings.solver.method == SolveMethod::Pgs) {
        std::string why;
        if (settings.solver.method == SolveMethod::Soft ? softStepSupports(model_, settings, &why)
                                                        : pgsStepSupports(model_, settings, &why)) {
            softSubstep(h);
            return;
        }
        if (!softNoted_) {   // not silently: the scene runs, under the method that handles it
            std::fprintf(stderr, "note: %s; stepping with the Newton method instead\n", why.c_str());
            softNoted_ = true;
        }
    }
    Scratch& s = *scratch_;
    const int nb = model_.bodyCount();
    const State lastGood = state_;
    profile_ = StepProfile{};
    s.active.resize(nb);
    for (int b = 0; b < nb; ++b) s.active[b] = isActive(b) ? 1 : 0;
    s.present = s.active;
    const bool sleeping = sleepingApplies();
    prepareSleep(model_, state_, sleeping);
    s.jointed.assign(nb, 0);
    for (const Joint& j : model_.joints)
        for (int b : {j.bodyA, j.bodyB})
            if (b >= 0 && b < nb) s.jointed[b] = 1;
    const NarrowPhaseSettings narrow = narrowPhaseSettings(settings, h);
    const ContactModelType modelType = settings.solver.contactModel;
    const int redetectPasses = (modelType == ContactModelType::Standard || modelType == ContactModelType::PEG) &&
                                       narrow.motionScale > 0 ? settings.redetectPasses : 0;

    // The detection (broad and narrow phase, and PEG's own relaxations) reads velocities from
    // `detect`, the start state until a redetection widens them (widenDetection).
    const State* detect = &state_;
    BodyVelocities& bv = s.bodies;
    int jointRowCount = 0, dragRow = 0, dragRowCount = 0, femRow = 0, femRowCount = 0;
    if (!femModelNoted_) {
        const std::string note = femContactModelNote(model_, modelType);
        if (!note.empty()) {
            std::fprintf(stderr, "note: %s\n", note.c_str());
            femModelNoted_ = true;
        }
    }
    bool cull = settings.solver.cullRows && modelType == ContactModelType::Standard && state_.lastSolveConverged;
    int cullResolves = 0, wakeResolves = 0;
    for (int pass = 0;; ++pass) {
        // ---- broad phase ----
        auto t = Clock::now();
        findShapePairs(*detect, narrow);
        profile_.broadPhase += secondsSince(t);

        // ---- narrow phase ----
        t = Clock::now();
        potential_.clear();
        collidePairs(model_, *detect, s.pairs, narrow, potential_, settings.narrowReuse ? &s.features : nullptr);
        profile_.narrowPhase += secondsSince(t);

        // ---- contact model: contacts, joints and the drag to rows ----
        t = Clock::now();
        startBodyVelocities(model_, state_, s.active.data(), settings.gravity, h, bv);
        ContactStageInput rowsIn{model_, settings, *detect, potential_, h, cull ? &s.cull : nullptr, &stepContext_};
        contactPreSolve(rowsIn, bv);
        appendFemNodes(model_, state_, settings.gravity, h, bv);
        s.rows.clear();
        buildJointRows(model_, state_, h, s.rows);
        buildCouplingRows(model_, state_, h, s.rows);
        jointRowCount = s.rows.size();
        if (settings.solver.warmStart && (int)state_.jointWarm.size() == jointRowCount)
            for (int i = 0; i < jointRowCount; ++i) s.rows.lambda[i] = state_.jointWarm[i];
        if (drag_.body >= 0 && !isActive(drag_.body)) drag_.body = -1;
        dragRow = s.rows.size();
        buildDragRows(model_, state_, bv.invInertia, h, drag_, dragSettings, s.rows);
        buildFemDragRows(model_, state_, h, drag_, dragSettings, s.rows);
        // The drag's rows start from the last substep's impulses (dragWarm_, zero when a drag
        // begins), as the joints' do: from zero, the damped Newton step took the cap of 8
        // iterations to bring them within the tolerance, every step of a drag.
        dragRowCount = s.rows.size() - dragRow;
        if (settings.solver.warmStart && dragRowCount == 3)
            for (int k = 0; k < 3; ++k)
                s.rows.lambda[dragRow + k] =
                    std::clamp(dragWarm_[k], -s.rows.maxImpulse[dragRow + k], s.rows.maxImpulse[dragRow + k]);
        buildContactRows(rowsIn, s.rows);
        femRow = s.rows.size();
        femRowCount = buildFemRows(model_, state_, h, settings.solver.warmStart, s.rows, s.femRotation, &s.femTets);
        buildFemContactRows(model_, settings, state_, s.aabbs, h, s.femContacts, s.rows, cull ? &s.cull : nullptr);
        profile_.contactModel += secondsSince(t);

        // ---- solve ----
        t = Clock::now();
        if (modelType == ContactModelType::CCP) solveCcp(settings.solver, h, s.rows, bv, s.ccp, solveStats_);
        else if (sleeping) {   // the far cap (islands.h "Settling after a disturbance")
            SolverSettings solver = settings.solver;
            solver.farNewtonIterations = std::max(solver.farNewtonIterations, kFarNewtonFactor * solver.newtonIterations);
            solveNewton(solver, h, s.rows, bv, s.newton, solveStats_);
        } else solveNewton(settings.solver, h, s.rows, bv, s.newton, solveStats_);
        profile_.solve += secondsSince(t);
        if (cull && !(culledSolveStands(settings.solver, solveStats_, s.cull, potential_, *detect, bv, h) &&
                      (s.femContacts.culled.empty() ||
                       (solveStats_.residualFinal <= settings.solver.newtonTolerance &&
                        femCulledContactsStayOpen(s.femContacts, model_, state_, bv, h))))) {
            cull = false;   // unconverged, or a left-out contact would have closed: again with every row
            ++cullResolves;
            --pass;
            continue;
        }
        // Partial waking (islands.h): a sleeping body whose load from its awake neighbours changed
        // wakes, and the step is solved again with it; past kMaxWakeResolves, whole islands wake.
        if (sleeping && settings.partialWake &&
            wakeDisturbed(model_, state_, s.rows, s.active.data(), length(settings.gravity), h,
                          wakeResolves >= kMaxWakeResolves) > 0) {
            ++wakeResolves;
            --pass;
            continue;
        }
        solveStats_.rows = s.rows.size();
        solveStats_.wakeResolves = wakeResolves;
        solveStats_.culledContacts = cull ? (int)(s.cull.culled.size() + s.femContacts.culled.size()) : 0;
        solveStats_.cullResolves = cullResolves;

        if (pass >= redetectPasses || !widenDetection(narrow, pass == 0)) break;
        detect = &s.detect;
    }
    state_.lastSolveConverged = solveStats_.residualFinal <= settings.solver.newtonTolerance;
    ContactStageInput in{model_, settings, state_, potential_, h, cull ? &s.cull : nullptr, &stepContext_};

    // ---- integrate ----
    auto t = Clock::now();
    // The energy guard (energy_guard.h): the step's energy against what could supply it, from the
    // start state and the solved impulses and velocities, and the run's account (the budget after
    // this step, checked at its end). It applies after the speed guard, whose NaN and speed
    // reports come first. Not under the compliant model (energy_guard.h says why).
    const bool guardEnergy = modelType != ContactModelType::Compliant;
    StepEnergy energy;
    Real budget = 0, available = 0, startEnergy = 0;
    if (guardEnergy) {
        energy = stepEnergy(model_, state_, s.active.data(), bv, s.rows, femRow, kFemMaxRows * model_.femTetCount(),
                            settings.gravity, h, &s.femTets);
        const Real kinetic = kineticEnergy();
        startEnergy = kinetic + gravityPotential(model_, state_, settings.gravity) + energy.fem;
        budget = energyBudget(state_, startEnergy, energy.supplied);
        available = state_.energyCounted ? state_.energyAvailable : kinetic;
    }
    const SpeedGuard guard = speedGuard(h);
    int bad = -1;
    Real badSpeed = 0;
    for (int b = 0; b < nb && bad < 0; ++b) {
        if (!s.active[b] || model_.isStatic(b)) continue;
        const Spatial& u = bv.velocity[b];
        const Real speed = bodyPointSpeed(u.lin, u.ang, bodyReach(b));
        if (speedBeyond(speed, guard.limit(s.jointed[b]))) {   // also NaN
            bad = b;
            badSpeed = speed;
            break;
        }
        const Vec3 rate = rotationRate(u.ang, state_.angVel[b], state_.rot[b], model_.invInertiaLocal[b], h);
        state_.linVel[b] = u.lin;
        state_.angVel[b] = u.ang;
        integrateBody(state_.pos[b], state_.rot[b], u.lin, rate, h);
        if (!isFinite(state_.pos[b]) || !isFinite(state_.rot[b])) bad = b;
    }
    // FEM nodes: x+ = x + h v+ ([NSN] eq. 63 with G = 1, section 9.3).
    int badNode = -1;
    for (int n = 0; n < model_.femNodeCount() && bad < 0; ++n) {
        const Vec3 v = bv.velocity[nb + n].lin;
        if (speedBeyond(length(v), guard.sceneLimit)) {
            badNode = n;
            badSpeed = length(v);
            break;
        }
        state_.femVel[n] = v;
        state_.femPos[n] += h * v;
        if (!isFinite(state_.femPos[n])) badNode = n;
    }
    if (bad >= 0 || badNode >= 0 || !energy.explained()) {
        rollBack(lastGood, h, bad >= 0 || badNode >= 0 ? speedFailure(bad, badSpeed, guard, badNode) : energyFailure(energy));
        profile_.integrate = secondsSince(t);
        profile_.project = 0;
        return;
    }
    contactPostIntegrate(in, state_);
    if (guardEnergy) {
        const Real kinetic = kineticEnergy();
        const Real potential = gravityPotential(model_, state_, settings.gravity) + energy.femEnd;
        available = std::fmax(available, budget - potential);
        if (!runEnergyExplained(kinetic, available, startEnergy)) {
            rollBack(lastGood, h, runEnergyFailure(kinetic, available));
            profile_.integrate = secondsSince(t);
            profile_.project = 0;
            return;
        }
        state_.energyCounted = true;
        state_.energyBudget = budget;
        state_.energyAtEnd = kinetic + potential;
        state_.energyAvailable = available;
    }
    if (sleeping) keepSleepingWarm(model_, state_, state_.warm, s.sleepWarm);
    storeContactResults(in, s.rows, bv, contacts_, state_.warm);
    if (sleeping) mergeSleepingWarm(s.sleepWarm, state_.warm);
    if (sleeping) updateSleep(model_, state_, s.rows, s.pairs, s.active.data(), drag_.body, h, settings.partialWake);
    keepSleepingContacts(sleeping);
    state_.jointWarm.assign(s.rows.lambda.begin(), s.rows.lambda.begin() + jointRowCount);
    storeFemWarm(model_, s.rows, femRow, femRowCount, s.femRotation, state_.femWarm);
    storeFemContacts(s.femContacts, s.rows, bv, contacts_, state_.femContactWarm);
    if (dragRowCount == 3)
        for (int k = 0; k < 3; ++k) dragWarm_[k] = s.rows.lambda[dragRow + k];
    if (drag_.body >= 0) {
        for (int k = 0; k < 3; ++k) drag_.force[k] = s.rows.lambda[dragRow + k] / h;
        // Effective mass along the lightest of the three drag axes: 1 / max_k [J H^-1 J^T]_kk.
        Real maxDiag = 0;
        for (int k = 0; k < 3; ++k) {
            const Spatial& j = s.rows.jacobianA[dragRow + k];
            maxDiag = std::fmax(maxDiag, bv.invMass[drag_.body] * lengthSq(j.lin) + dot(j.ang, bv.invInertia[drag_.body] * j.ang));
        }
        drag_.effectiveMass = maxDiag > 0 ? Real(1) / maxDiag : Real(0);
    } else if (drag_.femTri >= 0 && femDragEffectiveMass(model_, drag_) > 0) {
        for (int k = 0; k < 3; ++k) drag_.force[k] = s.rows.lambda[dragRow + k] / h;
        drag_.effectiveMass = femDragEffectiveMass(model_, drag_);
    }
    profile_.integrate = secondsSince(t);

    // ---- project ----
    t = Clock::now();
    if (settings.projectionPasses > 0 && settings.solver.contactModel != ContactModelType::Compliant)
        projectPositions();
    profile_.project = secondsSince(t);
    state_.time += h;
}

// The soft step (engine/solver/soft_step.h) or sequential impulses (pgs_step.h) in place of the
// contact model, solve and integrate stages: it integrates the bodies itself, over its own substeps. The detection is the same
// (broad and narrow phase once per step); the speed guard applies after it as after the Newton
// solve. No energy guard (its account is built from the Newton rows: the run's account restarts
// when the Newton method runs again) and no sleeping.
void World::softSubstep(Real h) {
    Scratch& s = *scratch_;
    const int nb = model_.bodyCount();
    s.lastGood = state_;
    const State& lastGood = s.lastGood;
    profile_ = StepProfile{};
    s.active.resize(nb);
    for (int b = 0; b < nb; ++b) s.active[b] = isActive(b) ? 1 : 0;
    s.present = s.active;
    s.jointed.assign(nb, 0);
    for (const Joint& j : model_.joints)
        for (int b : {j.bodyA, j.bodyB})
            if (b >= 0 && b < nb) s.jointed[b] = 1;
    prepareSleep(model_, state_, false);
    NarrowPhaseSettings narrow = narrowPhaseSettings(settings, h);
    narrow.closingSlop = settings.solver.relaxSlop;
    narrow.boxClip = settings.solver.method == SolveMethod::Soft && narrow.closingSlop >= 0;

    auto t = Clock::now();
    findShapePairs(state_, narrow);
    profile_.broadPhase = secondsSince(t);
    t = Clock::now();
    potential_.clear();
    collidePairs(model_, state_, s.pairs, narrow, potential_, settings.narrowReuse ? &s.features : nullptr);
    profile_.narrowPhase = secondsSince(t);

    t = Clock::now();
    if (drag_.body >= 0 && !isActive(drag_.body)) drag_.body = -1;
    const SpeedGuard guard = speedGuard(h);
    SoftStepResult r;
    const SoftStepInput input{model_, settings, potential_, s.active.data(), h, drag_, dragSettings, dragWarm_};
    if (settings.solver.method == SolveMethod::Pgs) {
        if (!pgsScratch_) pgsScratch_ = makePgsStepScratch();
        pgsStep(input, state_, *pgsScratch_, contacts_, r);
    } else {
        if (!softScratch_) softScratch_ = makeSoftStepScratch();
        softStep(input, state_, *softScratch_, contacts_, r);
    }
    profile_.solve = secondsSince(t);
    solveStats_.newtonIterations = 0;
    solveStats_.linearIterations = r.sweeps;
    solveStats_.residualFinal = r.residual;
    solveStats_.restoredBest = 0;
    solveStats_.newtonResidual.clear();
    solveStats_.linearResidual.clear();
    solveStats_.rows = 3 * r.points;
    solveStats_.culledContacts = 0;
    solveStats_.cullResolves = 0;
    state_.lastSolveConverged = true;
    state_.energyCounted = false;

    t = Clock::now();
    for (int b = 0; b < nb; ++b) {
        if (!s.active[b] || model_.isStatic(b)) continue;
        const Real speed = bodyPointSpeed(state_.linVel[b], state_.angVel[b], bodyReach(b));
        if (speedBeyond(speed, guard.limit(s.jointed[b])) || !isFinite(state_.pos[b]) || !isFinite(state_.rot[b])) {
            const std::string cause = speedFailure(b, speed, guard, -1);
            rollBack(lastGood, h, cause);
            profile_.integrate = secondsSince(t);
            return;
        }
    }
    dragWarm_ = r.dragImpulse;
    if (drag_.body >= 0) setDragFeedback(r.dragImpulse / h, r.dragEffectiveMass);
    profile_.integrate = secondsSince(t);

    t = Clock::now();
    if (settings.projectionPasses > 0) projectPositions();
    profile_.project = secondsSince(t);
    state_.time += h;
}

// A point's speed bound for a body: |v| + |w| reach.
Real World::bodyReach(int b) const { return cs::bodyReach(model_, b); }

// The scene's speed scale at the start of a step of length h and the limits it sets: the guard
// shared with the step pipeline (engine/solver/speed_guard_hd.h says why).
World::SpeedGuard World::speedGuard(Real h) const {
    const Scratch& s = *scratch_;
    Real fastest = 0;
    for (int b = 0; b < model_.bodyCount(); ++b)
        if (s.active[b] && !model_.isStatic(b))
            fastest = std::fmax(fastest, bodyPointSpeed(state_.linVel[b], state_.angVel[b], bodyReach(b)));
    fastest = std::fmax(fastest, fastestFemNode(state_.femVel));
    Real scale = speedScaleOf(fastest, length(settings.gravity), h, settings.solver.maxPushoutSpeed);
    if (drag_.body >= 0) scale += dragSettings.maxForce * h * model_.invMass[drag_.body];
    if (drag_.femTri >= 0) {
        const Real mEff = femDragEffectiveMass(model_, drag_);
        if (mEff > 0) scale += dragSettings.maxForce * h / mEff;
    }
    SpeedGuard g;
    g.scale = scale;
    g.sceneLimit = sceneSpeedLimit(scale);
    g.maxSpeed = kMaxSpeed;
    return g;
}

// What the speed guard caught, from the state the step left (before the roll-back).
std::string World::speedFailure(int body, Real speed, const SpeedGuard& guard, int node) const {
    const Scratch& s = *scratch_;
    char what[160];
    const bool finite = body >= 0 ? isFinite(state_.pos[body]) && isFinite(state_.rot[body]) : isFinite(state_.femPos[node]);
    if (!std::isfinite(speed) || !finite)
        std::snprintf(what, sizeof what, "has a NaN or infinite velocity or pose");
    else if (speed >= guard.maxSpeed || (body >= 0 && s.jointed[body]))
        std::snprintf(what, sizeof what, "moves at %.3g m/s, above the %.3g m/s limit", speed, guard.maxSpeed);
    else
        std::snprintf(what, sizeof what, "moves at %.3g m/s, above %g x the scene's %.3g m/s speed scale", speed,
                      double(kSpeedScaleFactor), guard.scale);
    char who[160];
    if (body >= 0) std::snprintf(who, sizeof who, "body '%s'", model_.bodyName[body].c_str());
    else std::snprintf(who, sizeof who, "deformable body '%s' node %d",
                       model_.femBodies[model_.femNodeBody[node]].name.c_str(), node);
    return std::string(who) + " " + what;
}

// Guard at the stage boundary: positions back to the step's start, every velocity to zero (a
// repeat of the same velocities would repeat the failure), warm starts dropped, time advanced so
// that stepping goes on. The message says what was caught and what was lost.
void World::rollBack(const State& lastGood, Real h, const std::string& cause) {
    state_ = lastGood;
    const Real energy = kineticEnergy();
    int moving = 0;
    for (int b = 0; b < model_.bodyCount(); ++b) {
        moving += lengthSq(state_.linVel[b]) + lengthSq(state_.angVel[b]) > 0 ? 1 : 0;
        state_.angVel[b] = state_.linVel[b] = Vec3{0, 0, 0};
    }
    int movingNodes = 0;
    for (Vec3& v : state_.femVel) {
        movingNodes += lengthSq(v) > 0 ? 1 : 0;
        v = Vec3{0, 0, 0};
    }
    state_.warm.clear();
    state_.jointWarm.clear();
    state_.femWarm.clear();
    state_.femContactWarm.clear();
    char nodes[64] = "";
    if (movingNodes > 0) std::snprintf(nodes, sizeof nodes, " and %d FEM nodes", movingNodes);
    char buffer[640];
    std::snprintf(buffer, sizeof buffer,
                  "step at t=%.6g s: %s; rolled back: the step's start positions kept, the velocities of "
                  "%d moving bodies%s set to zero (%.3g J of kinetic energy dropped), warm starts cleared",
                  double(state_.time), cause.c_str(), moving, nodes, double(energy));
    lastError_ = buffer;
    state_.time += h;
    lastStepFailed_ = true;
    ++failedSteps_;
}

void World::findShapePairs(const State& at, const NarrowPhaseSettings& narrow) {
    Scratch& s = *scratch_;
    computeContactAabbs(model_, at, narrow, s.aabbs);
    findPairs(model_, s.aabbs, s.present.data(), s.pairs);
    // sleeping: wakes what awake bodies touch (partial waking: not those woken alone), drops the rest
    wakeTouchedIslands(model_, state_, s.pairs, settings.partialWake);
    for (int b = 0; b < model_.bodyCount(); ++b) s.active[b] = s.present[b] && !cs::isAsleep(state_, b) ? 1 : 0;
    if (!model_.joints.empty()) {   // bodies joined by a joint do not collide with each other
        auto jointed = [&](int a, int b) {
            for (const Joint& j : model_.joints)
                if ((j.bodyA == a && j.bodyB == b) || (j.bodyA == b && j.bodyB == a)) return true;
            return false;
        };
        std::erase_if(s.pairs, [&](const ShapePair& p) {
            return jointed(model_.shapeBody[p.shapeA], model_.shapeBody[p.shapeB]);
        });
    }
}

// The speculative narrow phase widens each pair's margin, face regions and applicability by the
// motion its start velocities give within the step (pairSettings). A body that lands on one
// vertex at a large step has no spin at the start, so only that vertex is listed; the solve's
// impulse then turns it by up to a radian and swings its other vertices through the floor
// unlisted (docs/peg.md: pour3d at 38.5 and 50 ms). So after the solve, each body's detection
// velocities (s.detect, the start poses) take the solved linear or angular velocity where it is
// the larger, and the step is detected and solved again when some body now moves farther than
// the detection allowed for: a point of it by more than the base margin, or a turn by more than
// 0.05 rad. The widening only grows within a step; the gaps and Jacobians stay those of the
// start poses, so the rows are the same time-stepper's, over a longer list of feature pairs.
bool World::widenDetection(const NarrowPhaseSettings& narrow, bool fromStart) {
    Scratch& s = *scratch_;
    if (fromStart) s.detect = state_;
    const Real scale = narrow.motionScale * narrow.dt;
    const Real kTurnSlack = Real(0.05);   // rad
    bool wider = false;
    for (int b = 0; b < model_.bodyCount(); ++b) {
        if (!s.active[b] || model_.isStatic(b)) continue;
        const Spatial& u = s.bodies.velocity[b];
        Vec3& v = s.detect.linVel[b];
        Vec3& w = s.detect.angVel[b];
        const Real dv = length(u.lin) - length(v), dw = length(u.ang) - length(w);
        const int first = model_.bodyFirstShape[b];   // the first part's reach arm (pairSettings: each part's)
        const Real arm = partArm(model_.shapeLocal[first], model_.shapeRadius[first]);
        if (dv > 0) v = u.lin;
        if (dw > 0) w = u.ang;
        if (scale * dv > narrow.margin || scale * dw > kTurnSlack || scale * dw * arm > narrow.margin) wider = true;
    }
    return wider;
}

// The time-stepper's constraint is the gap linearized at the start of the step, psi + h J u
// ([PEG] eqs. 8-9, [NSN] eq. 63). A face that turns by theta within the step also moves its
// plane by a second-order term (theta^2/2 times the plane's distance from the centre of mass)
// that this leaves out, so spinning bodies end a step slightly overlapped even when every
// constraint of the solve holds (docs/peg.md, "Where PEG's remaining error comes from").
// Each pass here (as Box2D's position solver, or Bullet's split impulse) runs the broad and
// narrow phases again at the end positions and solves the same contact model's problem for a
// displacement instead of a velocity: step length 1, zero start velocity, no gravity, no
// friction, no warm start, the full gap kept,
//     0 <= lambda  _|_  psi(q) + J dq >= 0,   dq = M^-1 J^T lambda,
// i.e. the mass-weighted smallest move that separates the pairs the model constrains (PEG's U,
// I and X groups for PEG, every listed plane for the standard model). Velocities are not
// touched, so the projection adds no kinetic energy. Bodies in a joint stay put (joint rows
// carry drives, whose targets a projection would snap to). The solver's settings apply as they
// are, the Newton tolerance read in metres (sandbox experiment: 1e-12 m).
void World::projectPositions() {
    Scratch& s = *scratch_;
    WorldSettings ps = settings;
    ps.speculative = 0;                  // the end configuration at rest: fixed margin and tests
    ps.frictionScale = 0;
    ps.solver.peg.motionScale = 0;
    ps.solver.warmStart = false;
    ps.solver.stabilization = 1;
    ps.solver.maxPushoutSpeed = settings.projectionMaxCorrection;   // times the step length 1 s
    const NarrowPhaseSettings narrow = narrowPhaseSettings(ps, 1);
    const int nb = model_.bodyCount();
    for (int pass = 0; pass < settings.projectionPasses; ++pass) {
        findShapePairs(state_, narrow);
        s.projectContacts.clear();
        collidePairs(model_, state_, s.pairs, narrow, s.projectContacts);
        BodyVelocities& bv = s.bodies;
        startBodyVelocities(model_, state_, s.active.data(), Vec3{0, 0, 0}, 1, bv);
        for (Spatial& u : bv.unconstrained) u = Spatial{{0, 0, 0}, {0, 0, 0}};
        for (const Joint& j : model_.joints)
            for (int b : {j.bodyA, j.bodyB})
                if (b >= 0) {
                    bv.invMass[b] = 0;
                    bv.invInertia[b] = mat3Zero();
                }
        ContactStageInput in{model_, ps, state_, s.projectContacts, 1, nullptr, &stepContext_};
        s.rows.clear();
        buildContactRows(in, s.rows);
        bool overlap = false;
        for (int i = 0; i < s.rows.size() && !overlap; ++i)
            overlap = (s.rows.kind[i] == int(RowKind::Normal) || s.rows.kind[i] == int(RowKind::Group)) &&
                      s.rows.bias[i] < 0;
        if (!overlap) break;
        solveNewton(ps.solver, 1, s.rows, bv, s.newton, s.projectStats);
        for (int b = 0; b < nb; ++b) {
            if (!s.active[b] || model_.isStatic(b)) continue;
            integrateBody(state_.pos[b], state_.rot[b], bv.velocity[b].lin, bv.velocity[b].ang, 1);
        }
    }
}

Real World::kineticEnergy() const {
    Real e = 0;
    for (int b = 0; b < model_.bodyCount(); ++b) {
        if (model_.isStatic(b) || !isActive(b)) continue;
        Vec3 w = rotateInv(state_.rot[b], state_.angVel[b]);
        e += Real(0.5) * model_.mass[b] * lengthSq(state_.linVel[b]) + Real(0.5) * dot(w, model_.inertiaLocal[b] * w);
    }
    return e + femKineticEnergy(model_, state_);
}

// Pairs of parts that touch or overlap at the current poses: the broad phase with no margin,
// filtered as the step's (same body, both static, dormant, joined by a joint). Every overlap is
// in this list whether or not the narrow phase listed a contact for it, so the metrics built on
// it (maxPenetration here, the runner's and the app's overlap volume) see a collapsed stack.
void World::overlappingPairs(std::vector<ShapePair>& out) const {
    const int nb = model_.bodyCount();
    std::vector<uint8_t> active(nb);
    for (int b = 0; b < nb; ++b) active[b] = isActive(b) ? 1 : 0;
    std::vector<Aabb> aabbs;
    computeShapeAabbs(model_, state_, 0, aabbs);
    findPairs(model_, aabbs, active.data(), out);
    if (model_.joints.empty()) return;
    std::erase_if(out, [&](const ShapePair& p) {
        const int a = model_.shapeBody[p.shapeA], b = model_.shapeBody[p.shapeB];
        for (const Joint& j : model_.joints)
            if ((j.bodyA == a && j.bodyB == b) || (j.bodyA == b && j.bodyB == a)) return true;
        return false;
    });
}

// Exact signed distance of two parts at the current poses (distance.h); negative: minus the
// penetration depth.
Real World::shapeDistance(int shapeA, int shapeB) const {
    const Transform xa = shapeTransform(shapeA), xb = shapeTransform(shapeB);
    const bool sa = model_.shapeType[shapeA] == ShapeType::Sphere, sb = model_.shapeType[shapeB] == ShapeType::Sphere;
    const Real ra = model_.shapeRadius[shapeA], rb = model_.shapeRadius[shapeB];
    if (sa && sb) return signedDistance(xa.pos, ra, xb.pos, rb);
    if (sa) return signedDistance(xa.pos, ra, model_.polytopes[model_.shapePolytope[shapeB]], xb);
    if (sb) return signedDistance(xb.pos, rb, model_.polytopes[model_.shapePolytope[shapeA]], xa);
    return signedDistance(model_.polytopes[model_.shapePolytope[shapeA]], xa,
                          model_.polytopes[model_.shapePolytope[shapeB]], xb);
}

// The deepest overlap over every overlapping pair of parts (overlappingPairs), by the exact
// signed distance. A feature pair's own gap is not a penetration depth (an edge-edge pair
// measures along e_a x e_b, which can be negative while another axis separates the parts), and
// the contact list misses pairs overlapping deeper than the margin.
Real World::maxPenetration() const {
    std::vector<ShapePair> pairs;
    overlappingPairs(pairs);
    Real deepest = 0;
    for (const ShapePair& p : pairs) deepest = std::fmax(deepest, -shapeDistance(p.shapeA, p.shapeB));
    return deepest;
}

void World::setDrag(int body, Vec3 localPoint, Vec3 target) {
    if (body < 0 || body >= model_.bodyCount() || model_.isStatic(body)) {
        clearDrag();
        return;
    }
    if (drag_.body != body) drag_.force = Vec3{0, 0, 0};
    drag_.femTri = -1;
    drag_.body = body;
    if (settings.partialWake) cs::wakeAlone(state_, body);   // its island sleeps on while its loads hold
    else cs::wakeIsland(state_, body);
    drag_.localPoint = localPoint;
    drag_.target = target;
}

void World::clearDrag() { drag_ = DragState{}; }

void World::setFemDrag(int tri, Vec3 weights, Vec3 target) {
    if (tri < 0 || tri >= (int)model_.femTris.size()) {
        clearDrag();
        return;
    }
    Vec3 w{std::fmax(weights.x, Real(0)), std::fmax(weights.y, Real(0)), std::fmax(weights.z, Real(0))};
    const Real sum = w.x + w.y + w.z;
    w = sum > 0 ? w / sum : Vec3{Real(1) / 3, Real(1) / 3, Real(1) / 3};
    if (drag_.femTri != tri) drag_.force = Vec3{0, 0, 0};
    drag_.body = -1;
    drag_.femTri = tri;
    drag_.femWeights = w;
    drag_.target = target;
}

void World::femTetFields(std::vector<Real>& volumetricStrain, std::vector<Real>& vonMises,
                         std::vector<Real>& maxStretch) const {
    FemTetFields f;
    cs::femTetFields(model_, state_, f);
    volumetricStrain = std::move(f.volumetricStrain);
    vonMises = std::move(f.vonMises);
    maxStretch = std::move(f.maxStretch);
}

int World::addBody(const BodyDesc& desc, std::string* error) {
    BodyDesc d = desc;
    d.spawnTime = 0;
    int b = cs::addBody(model_, d, error);
    if (b < 0) return -1;
    state_.pos.push_back(model_.initialPos[b]);
    state_.rot.push_back(model_.initialRot[b]);
    state_.linVel.push_back(model_.initialLinVel[b]);
    state_.angVel.push_back(model_.initialAngVel[b]);
    return b;
}

int World::findBody(const std::string& name) const {
    for (int b = 0; b < model_.bodyCount(); ++b)
        if (model_.bodyName[b] == name) return b;
    return -1;
}

}  // namespace cs
