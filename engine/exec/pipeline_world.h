// PipelineWorld<Exec>: World::step through the step pipeline (pipeline_step.h) on an executor.
//
//   World world = ...;
//   PipelineWorld<HostExecutor> pipeline(world);   // or CudaExecutor (GpuWorld does this)
//   pipeline.step();                               // instead of world.step(); world.state() is updated
//
// The world's model and state are uploaded when the host changed them (the first step, a reset,
// a new body: call sync() after other edits); positions, orientations, velocities and time come
// back after every step, the warm-start cache stays in the executor's memory. Per step: the
// counters of the step's start go up, the step is recorded (replayed as a graph on CUDA), the
// counters and the state come down, one synchronization. If a count outgrew its buffer, the
// buffers grow and the step runs again from the copy of its start state.
#pragma once

#include <algorithm>
#include <vector>

#include "engine/exec/pipeline_step.h"
#include "engine/fem/fem_drag.h"
#include "engine/solver/islands.h"

namespace cs {

template <class Exec>
class PipelineWorld {
public:
    explicit PipelineWorld(World& world, PipelineOptions options = {}) : world_(world), options_(options) {}

    void step();
    void sync() { uploaded_ = false; }

    const StepProfile& profile() const { return profile_; }
    const SolveStats& solveStats() const { return stats_; }
    int contactCount() const {   // standard contacts of the last substep (with those row culling left out)
        return d_.hostCounters.keptContacts + d_.hostCounters.culledContacts - d_.hostCounters.femCulled;
    }
    int femContactCount() const { return d_.hostCounters.femContacts; }   // FEM contacts with rows (node-part and node-triangle), the same
    int femTriContactCount() const { return d_.hostCounters.femTriContacts; }   // of them FEM-FEM and self contacts
    Real maxPenetration() const { return d_.hostCounters.maxPenetration; }   // m, max of -gap over them
    const PipelineBufferStats& bufferStats() const { return buffers_; }
    bool lastStepFailed() const { return d_.hostCounters.failedSteps > 0; }
    Exec& executor() { return ex_; }
    const PipelineData<Exec>& data() const { return d_; }

private:
    void upload();
    void uploadBilateral();
    void grow();
    std::vector<double> signature(bool sorted) const;
    void prepareSleepStep();
    void uploadSleep();
    void downloadSleep();

    World& world_;
    PipelineOptions options_;
    Exec ex_;
    PipelineData<Exec> d_;
    bool uploaded_ = false;
    Real time_ = 0, lastTime_ = -1;
    int warmCount_ = 0;
    int femWarm_ = 0;              // the executor holds last step's FEM row impulses
    int femContactWarm_ = 0;       // entries of the FEM contacts' warm cache
    std::vector<Real> jointWarm_;  // State::jointWarm at the step's start (sent on every try)
    int reuseSide_ = 0;            // narrow-phase reuse: the side holding the last substep's entries,
    int reusePairs_ = 0;           // and how many (0: none; an upload drops them)
    long long generation_ = 0;     // buffers moved (upload, growth): a recorded graph is stale
    StepProfile profile_;
    SolveStats stats_;
    PipelineBufferStats buffers_;
    WorldSettings settings_;       // the step's settings: the world's, with sleeping's far Newton cap
};

template <class Exec>
void PipelineWorld<Exec>::upload() {
    const Model& model = world_.model();
    const State& state = world_.state();
    if (d_.bodies != model.bodyCount() || d_.fem.nodes != model.femNodeCount()) {
        uploadModel(ex_, d_, model, options_);
        ++generation_;
    }
    const size_t n = model.bodyCount();
    ex_.upload(d_.pos.data(), state.pos.data(), n);
    ex_.upload(d_.rot.data(), state.rot.data(), n);
    ex_.upload(d_.linVel.data(), state.linVel.data(), n);
    ex_.upload(d_.angVel.data(), state.angVel.data(), n);
    reusePairs_ = 0;   // the host moved things: no narrow-phase reuse entries (World::reset clears its cache too)
    warmCount_ = world_.settings.solver.warmStart ? (int)state.warm.size() : 0;
    if (warmCount_ > d_.contactCapacity) {
        reserveContacts(d_, d_.pairCapacity, d_.pairSlots, warmCount_);
        ++generation_;
    }
    if (warmCount_) ex_.upload(d_.warm.data(), state.warm.data(), warmCount_);
    const size_t nodes = d_.fem.nodes;
    if (nodes) {
        ex_.upload(d_.fem.pos.data(), state.femPos.data(), nodes);
        ex_.upload(d_.fem.vel.data(), state.femVel.data(), nodes);
    }
    femWarm_ = d_.fem.rows > 0 && (int)state.femWarm.size() == d_.fem.warmSize ? 1 : 0;   // buildFemRows' test
    if (femWarm_) ex_.upload(d_.fem.warm.data(), state.femWarm.data(), d_.fem.warmSize);
    femContactWarm_ = world_.settings.solver.warmStart && d_.fem.anyContacts() ? (int)state.femContactWarm.size() : 0;
    if (femContactWarm_ > d_.fem.contactCapacity) {
        reserveFemContacts(d_.fem, femContactWarm_);
        reserveContacts(d_, d_.pairCapacity, d_.pairSlots, d_.contactCapacity);   // the rows they need
        ++generation_;
    }
    if (femContactWarm_) ex_.upload(d_.fem.contactWarm.data(), state.femContactWarm.data(), femContactWarm_);
    time_ = state.time;
    uploaded_ = true;
}

// The joints, couplings and the drag of this step (a script moves them between steps): sent every
// step; the buffers sized again when the row layout changed. A drag of a body that is not active
// is dropped, as World::substep drops it.
template <class Exec>
void PipelineWorld<Exec>::uploadBilateral() {
    PipelineJoints<Exec>& j = d_.joints;
    if (uploadJoints(ex_, j, world_.model())) {
        d_.fem.wideJoints = j.wideCouplings;
        reserveContacts(d_, d_.pairCapacity, d_.pairSlots, d_.contactCapacity);
        ++generation_;
    }
    const Model& model = world_.model();
    const DragState& drag = world_.drag();
    if (drag.body >= 0 && !world_.isActive(drag.body)) world_.clearDrag();
    DragParams p{};
    p.body = -1;
    j.dragRows = 0;
    if (drag.body >= 0 && !model.isStatic(drag.body)) {
        p.body = drag.body;
        p.localPoint = drag.localPoint;
        p.target = drag.target;
        p.frequencyHz = world_.dragSettings.frequencyHz;
        p.dampingRatio = world_.dragSettings.dampingRatio;
        p.maxForce = world_.dragSettings.maxForce;
        j.dragRows = 3;
    } else if (drag.femTri >= 0) {
        p = femDragParams(model, drag, world_.dragSettings);
        j.dragRows = p.effectiveMass > 0 ? 3 : 0;
    }
    if (j.dragRows == 0) return;
    const Real h = world_.settings.dt / (world_.settings.substeps > 0 ? world_.settings.substeps : 1);
    const Real result[4] = {drag.force.x * h, drag.force.y * h, drag.force.z * h, drag.effectiveMass};
    ex_.upload(j.drag.data(), &p, 1);
    ex_.upload(j.dragResult.data(), result, 4);   // kept when every substep rolls back
}

// Every buffer that overflowed, to twice what the step needed (slots: what the fullest pair needed).
template <class Exec>
void PipelineWorld<Exec>::grow() {
    const StepCounters& c = d_.hostCounters;
    const int pairs = c.neededPairs > d_.pairCapacity ? 2 * c.neededPairs : d_.pairCapacity;
    const int slots = std::max(d_.pairSlots, c.neededSlots);
    const int contacts = c.neededContacts > d_.contactCapacity ? 2 * c.neededContacts : d_.contactCapacity;
    if (c.neededFemContacts > d_.fem.contactCapacity) reserveFemContacts(d_.fem, 2 * c.neededFemContacts);
    if (c.neededCandidates > d_.candidateCapacity) reserveCandidates(d_, 2 * c.neededCandidates);
    reserveContacts(d_, pairs, slots, contacts);
    ++generation_;
    ++buffers_.growthEvents;
}

// Everything a recorded step depends on: a graph recorded with other values is not replayed.
template <class Exec>
std::vector<double> PipelineWorld<Exec>::signature(bool sorted) const {
    const WorldSettings& w = settings_;
    const SolverSettings& s = w.solver;
    return {double(generation_), double(d_.joints.rows), double(d_.joints.dragRows), double(d_.pairCapacity),
            double(d_.pairSlots), double(d_.contactCapacity), double(d_.candidateCapacity), double(w.narrowReuse),
            double(d_.bodies), double(d_.shapes), double(d_.fem.nodes), double(d_.fem.rows), double(d_.fem.contactCapacity), double(sorted), double(w.substeps), double(w.dt),
            double(w.gravity.x), double(w.gravity.y), double(w.gravity.z), double(w.contactMargin),
            double(w.hyperplaneFaces), double(w.frictionScale), double(w.speculative), double(int(s.ncp)),
            double(int(s.linearSolver)), double(s.newtonIterations), double(s.linearIterations),
            double(s.newtonTolerance), double(s.linearTolerance), double(s.damping), double(s.regularization),
            double(s.warmStart), double(s.complementarityPreconditioner), double(s.stabilization),
            double(s.maxPushoutSpeed), double(int(s.contactModel)), double(int(s.ccp.solver)),
            double(s.ccp.iterations), double(s.ccp.tolerance), double(s.ccp.omega),
            double(s.farNewtonIterations), double(d_.sleep.on), double(d_.sleep.keepWarm), double(d_.sleep.couplingEdgeCount)};
}

// Sleeping (engine/solver/islands.h, pipeline_islands.h), as World::substep begins: the sleep
// arrays sized to the model and the islands of changed joint drives woken (prepareSleep, on the
// host), the buffers sized, and with sleeping the far Newton cap of World::substep in the step's
// settings. The sleep state at the step's start is kept for a step run again.
template <class Exec>
void PipelineWorld<Exec>::prepareSleepStep() {
    settings_ = world_.settings;
    PipelineSleep<Exec>& sl = d_.sleep;
    State& state = world_.state();
    const Model& model = world_.model();
    sl.on = sleepingApplies(world_.model(), world_.settings);
    sl.keepWarm = options_.sleepingWarm;
    prepareSleep(model, state, sl.on);
    if (!sl.on) return;
    SolverSettings& solver = settings_.solver;
    if (solver.contactModel != ContactModelType::CCP)
        solver.farNewtonIterations = std::max(solver.farNewtonIterations, kFarNewtonFactor * solver.newtonIterations);
    if (reserveSleep(sl, model, d_.contactCapacity)) ++generation_;
    std::vector<int> driven(std::max(model.bodyCount(), 1), 0);
    for (const Joint& j : model.joints)
        for (int b : {j.bodyA, j.bodyB})
            if (j.drive && b >= 0) driven[b] = 1;
    ex_.upload(sl.driven.data(), driven.data(), driven.size());
    // A coupling's rows tie the bodies of its two joints (updateSleep joins the first with the others).
    std::vector<int> edges;
    for (const JointCoupling& k : model.couplings) {
        int body[4] = {-1, -1, -1, -1};
        for (int side = 0; side < 2; ++side) {
            const int j = side == 0 ? k.jointA : k.jointB;
            if (j < 0 || j >= (int)model.joints.size()) continue;
            body[2 * side] = model.joints[j].bodyA;
            body[2 * side + 1] = model.joints[j].bodyB;
        }
        const int first = body[0] >= 0 ? body[0] : body[1];
        for (int b = 1; b < 4; ++b) edges.insert(edges.end(), {first, body[b]});
    }
    if (sl.couplingEdges.capacity() < std::max<size_t>(edges.size(), 1)) {
        sl.couplingEdges.reserve(std::max<size_t>(edges.size(), 1));
        ++generation_;
    }
    if (!edges.empty()) ex_.upload(sl.couplingEdges.data(), edges.data(), edges.size());
    sl.couplingEdgeCount = int(edges.size() / 2);
    sl.hostTime = state.sleepTime;
    sl.hostIsland = state.sleepIsland;
    sl.hostAlone = state.wokeAlone;
}

// The sleep state of the step's start and the island stages' counters, up (every try).
template <class Exec>
void PipelineWorld<Exec>::uploadSleep() {
    PipelineSleep<Exec>& sl = d_.sleep;
    const size_t n = d_.bodies;
    ex_.upload(sl.sleepTime.data(), sl.hostTime.data(), n);
    ex_.upload(sl.island.data(), sl.hostIsland.data(), n);
    ex_.upload(sl.wokeAlone.data(), sl.hostAlone.data(), n);
    SleepCounters start{};
    start.keepAwake = world_.drag().body;
    start.partial = world_.settings.partialWake ? 1 : 0;
    ex_.upload(sl.counters.data(), &start, 1);
}

template <class Exec>
void PipelineWorld<Exec>::downloadSleep() {
    PipelineSleep<Exec>& sl = d_.sleep;
    State& state = world_.state();
    const size_t n = d_.bodies;
    ex_.download(state.sleepTime.data(), sl.sleepTime.data(), n);
    ex_.download(state.sleepIsland.data(), sl.island.data(), n);
    ex_.download(state.wokeAlone.data(), sl.wokeAlone.data(), n);
}

template <class Exec>
void PipelineWorld<Exec>::step() {
    State& state = world_.state();
    if (!uploaded_ || d_.bodies != world_.model().bodyCount() || d_.fem.nodes != world_.model().femNodeCount() ||
        state.time != lastTime_)
        upload();
    const int n = d_.bodies, nodes = d_.fem.nodes;
    prepareSleepStep();
    if (d_.fem.femBodies) ex_.upload(d_.fem.activation.data(), state.femActivation.data(), d_.fem.femBodies);
    uploadBilateral();
    const int jointRows = d_.joints.rows;
    const int jointWarm = jointRows > 0 && (int)state.jointWarm.size() == jointRows ? 1 : 0;   // World::substep's test
    jointWarm_.assign(state.jointWarm.begin(), state.jointWarm.end());
    const bool sorted = options_.deterministic || !Exec::kHasAtomicScatter;
    const bool ccp = ccpFirstOrder(world_.settings.solver), ccpNewton = ccpNewtonSolve(world_.settings.solver);
    const int history = ccp ? ccpHistoryLength(world_.settings.solver.ccp) : 0;
    const int historyCapacity = ccpNewton ? ccpFallbackHistoryLength(world_.settings.solver) : history;
    if ((ccp || ccpNewton) && d_.ccpHistory.capacity() < size_t(historyCapacity)) {
        d_.ccpHistory.reserve(historyCapacity);
        ++generation_;
    }
    CcpControl ccpControl{};
    // The drag rows' warm start as the step begins (uploadBilateral), for a step run again: the
    // run that overflowed left its own impulses in dragResult (and in the drag's feedback).
    const DragState& dragNow = world_.drag();
    const Real hSub = world_.settings.dt / (world_.settings.substeps > 0 ? world_.settings.substeps : 1);
    const Real dragAtStart[4] = {dragNow.force.x * hSub, dragNow.force.y * hSub, dragNow.force.z * hSub,
                                 dragNow.effectiveMass};
    // What the drag's force limit adds to the speed guard's scale in one substep (World::speedGuard).
    Real dragSpeed = 0;
    if (dragNow.body >= 0) dragSpeed = world_.dragSettings.maxForce * hSub * world_.model().invMass[dragNow.body];
    if (dragNow.femTri >= 0) {
        const Real mEff = femDragEffectiveMass(world_.model(), dragNow);
        if (mEff > 0) dragSpeed = world_.dragSettings.maxForce * hSub / mEff;
    }
    ex_.copy(d_.startPos.data(), d_.pos.data(), n);
    ex_.copy(d_.startRot.data(), d_.rot.data(), n);
    ex_.copy(d_.startLinVel.data(), d_.linVel.data(), n);
    ex_.copy(d_.startAngVel.data(), d_.angVel.data(), n);
    ex_.copy(d_.warmAtStart.data(), d_.warm.data(), warmCount_);
    ex_.copy(d_.fem.startPos.data(), d_.fem.pos.data(), nodes);
    ex_.copy(d_.fem.startVel.data(), d_.fem.vel.data(), nodes);
    ex_.copy(d_.fem.warmAtStart.data(), d_.fem.warm.data(), femWarm_ ? d_.fem.warmSize : 0);
    ex_.copy(d_.fem.contactWarmAtStart.data(), d_.fem.contactWarm.data(), femContactWarm_);
    for (int attempt = 0;; ++attempt) {
        StepCounters start{};
        start.time = time_;
        start.bodies = n;
        start.shapes = d_.shapes;
        start.femNodes = nodes;
        start.femTets = d_.fem.tets;
        start.warmCount = warmCount_;
        start.femWarm = femWarm_;
        start.femContactWarm = femContactWarm_;
        start.jointWarm = jointWarm;
        start.lastConverged = state.lastSolveConverged ? 1 : 0;
        start.dragSpeed = dragSpeed;
        // The reuse entries of the step's start, unless a try that overflowed ran a second substep,
        // which wrote over them (the pipeline keeps two sides): then none, the same contacts.
        start.reuseSide = reuseSide_;
        start.reusePairs = attempt == 0 || world_.settings.substeps <= 1 ? reusePairs_ : 0;
        ex_.upload(d_.counters.data(), &start, 1);
        if (jointWarm) ex_.upload(d_.joints.warm.data(), jointWarm_.data(), jointRows);
        // A step whose Newton condenses the FEM rows reads sizes on the host between its stages
        // (condensed_solve.h): it runs eagerly, not as a recorded graph.
        const bool eager = !ccp && !ccpNewton && pipelineCondenses(d_, world_.settings.solver);
        if (d_.sleep.on) uploadSleep();
        if (eager) recordStep(ex_, d_, settings_, sorted);
        else ex_.record(signature(sorted), [&] { recordStep(ex_, d_, settings_, sorted); });
        ex_.download(&d_.hostCounters, d_.counters.data(), 1);
        ex_.download(state.pos.data(), d_.pos.data(), n);
        ex_.download(state.rot.data(), d_.rot.data(), n);
        ex_.download(state.linVel.data(), d_.linVel.data(), n);
        ex_.download(state.angVel.data(), d_.angVel.data(), n);
        ex_.download(state.femPos.data(), d_.fem.pos.data(), nodes);
        ex_.download(state.femVel.data(), d_.fem.vel.data(), nodes);
        if (ccp || ccpNewton) ex_.download(&ccpControl, d_.ccp.data(), 1);
        state.jointWarm.resize(jointRows);
        ex_.download(state.jointWarm.data(), d_.joints.warm.data(), jointRows);
        Real dragResult[4] = {0, 0, 0, 0};
        if (d_.joints.dragRows) ex_.download(dragResult, d_.joints.dragResult.data(), 4);
        if (ccp) {
            stats_.ccpMerit.resize(history);
            ex_.download(stats_.ccpMerit.data(), d_.ccpHistory.data(), history);
        }
        if (d_.sleep.on) downloadSleep();
        ex_.sync();   // the one synchronization of the step
        if (!d_.hostCounters.jointWarm) state.jointWarm.clear();   // rolled back (World::rollBack)
        if (d_.joints.dragRows) {
            const Real h = world_.settings.dt / (world_.settings.substeps > 0 ? world_.settings.substeps : 1);
            world_.setDragFeedback(Vec3{dragResult[0], dragResult[1], dragResult[2]} / h, dragResult[3]);
        }
        if (!d_.hostCounters.overflow) break;
        grow();   // and run the step again from its start
        if (d_.sleep.on && reserveSleep(d_.sleep, world_.model(), d_.contactCapacity)) ++generation_;
        if (d_.joints.dragRows) ex_.upload(d_.joints.dragResult.data(), dragAtStart, 4);
        ex_.copy(d_.pos.data(), d_.startPos.data(), n);
        ex_.copy(d_.rot.data(), d_.startRot.data(), n);
        ex_.copy(d_.linVel.data(), d_.startLinVel.data(), n);
        ex_.copy(d_.angVel.data(), d_.startAngVel.data(), n);
        ex_.copy(d_.warm.data(), d_.warmAtStart.data(), warmCount_);
        ex_.copy(d_.fem.pos.data(), d_.fem.startPos.data(), nodes);
        ex_.copy(d_.fem.vel.data(), d_.fem.startVel.data(), nodes);
        ex_.copy(d_.fem.warm.data(), d_.fem.warmAtStart.data(), femWarm_ ? d_.fem.warmSize : 0);
        ex_.copy(d_.fem.contactWarm.data(), d_.fem.contactWarmAtStart.data(), femContactWarm_);
    }
    const StepCounters& c = d_.hostCounters;
    state.time = time_ = lastTime_ = c.time;
    state.lastSolveConverged = c.lastConverged != 0;
    reuseSide_ = c.reuseSide;
    reusePairs_ = c.reusePairs;
    state.warm.clear();   // the cache lives in the executor's memory (sync() uploads the host's)
    warmCount_ = c.warmCount;
    femWarm_ = c.femWarm;
    femContactWarm_ = c.femContactWarm;
    state.femWarm.clear();   // as the contacts' cache: in the executor's memory
    state.femContactWarm.clear();

    const int substeps = world_.settings.substeps > 0 ? world_.settings.substeps : 1;
    profile_ = StepProfile{};
    for (int s = 0; s < substeps; ++s) {   // by name: StepProfile has gained fields before
        profile_.broadPhase += ex_.seconds(5 * s, 5 * s + 1);
        profile_.narrowPhase += ex_.seconds(5 * s + 1, 5 * s + 2);
        profile_.contactModel += ex_.seconds(5 * s + 2, 5 * s + 3);
        profile_.solve += ex_.seconds(5 * s + 3, 5 * s + 4);
        profile_.integrate += ex_.seconds(5 * s + 4, 5 * s + 5);
    }
    profile_.total = ex_.seconds(0, 5 * substeps);
    stats_.newtonIterations = c.newtonIterations;
    stats_.linearIterations = c.linearIterations;
    stats_.residualFinal = c.merit;
    stats_.restoredBest = ccp ? 0 : c.restoredBest;
    stats_.rows = c.rowCount;
    stats_.culledContacts = c.culledContacts;
    stats_.cullResolves = c.cullResolves;
    const int newtonHistory = c.rowCount > 0 && !ccp ? std::min(c.newtonIterations + 1 + c.restoredCap, kMaxNewtonHistory) : 0;
    stats_.newtonResidual.assign(c.newtonResidual, c.newtonResidual + newtonHistory);
    stats_.ccpMerit.resize(ccp && c.rowCount > 0 ? ccpControl.iterations + 1 : 0);   // the last substep's
    stats_.ccpFallbacks = ccpNewton && c.rowCount > 0 ? ccpControl.fallbacks : 0;
    stats_.linearResidual.clear();
    buffers_.pairs = c.pairCount;
    buffers_.contacts = c.contactCount;
    buffers_.rows = c.rowCount;
    buffers_.pairCapacity = d_.pairCapacity;
    buffers_.contactCapacity = d_.contactCapacity;
    buffers_.rowCapacity = d_.rowCapacity;
    buffers_.pairContactCapacity = d_.pairSlots;
}

}  // namespace cs
