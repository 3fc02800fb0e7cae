// Scene loading, the lockstep copies, their statistics, and session events; see sandbox_app.h.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sys/stat.h>

#include "app/gui/sandbox_app.h"
#include "engine/contact/contact_model.h"
#include "engine/fem/fem_pick.h"
#include "engine/world_metrics.h"
#include "engine/model_builder.h"

namespace cs {

namespace {

long long fileTime(const std::string& path) {
    struct stat st;
    if (path.empty() || stat(path.c_str(), &st) != 0) return 0;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

void pushHistory(std::vector<float>& h, float v) {
    if ((int)h.size() >= kHistory) h.erase(h.begin());
    h.push_back(v);
}

bool sameVec(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

bool sameSettings(const WorldSettings& a, const WorldSettings& b) {
    const SolverSettings &p = a.solver, &q = b.solver;
    return a.dt == b.dt && a.substeps == b.substeps && sameVec(a.gravity, b.gravity) &&
           a.contactMargin == b.contactMargin && a.frictionScale == b.frictionScale &&
           a.speculative == b.speculative && a.hyperplaneFaces == b.hyperplaneFaces &&
           a.projectionPasses == b.projectionPasses && a.redetectPasses == b.redetectPasses &&
           a.sleeping == b.sleeping &&
           p.contactModel == q.contactModel && p.ncp == q.ncp && p.linearSolver == q.linearSolver &&
           p.newtonIterations == q.newtonIterations && p.linearIterations == q.linearIterations &&
           p.newtonTolerance == q.newtonTolerance && p.linearTolerance == q.linearTolerance &&
           p.damping == q.damping && p.regularization == q.regularization && p.warmStart == q.warmStart &&
           p.complementarityPreconditioner == q.complementarityPreconditioner && p.stabilization == q.stabilization &&
           p.ccp.solver == q.ccp.solver && p.ccp.iterations == q.ccp.iterations && p.method == q.method;
}

// A session records the settings the panels change (session.cpp settingsJson). The others (the
// PLUS, compliant and PEG blocks, the push-out speed, the projection's cap) have no widget, so a
// replay keeps the scene's. Read from a session file they were the engine's defaults, and a
// replay of brick_impact with PLUS (or heavy_stack with the compliant model) ended elsewhere than
// the live run (scripts/record_test.sh).
void keepSceneOnlySettings(WorldSettings& s, const WorldSettings& scene) {
    s.plus = scene.plus;
    s.compliant = scene.compliant;
    s.solver.peg = scene.solver.peg;
    s.solver.soft = scene.solver.soft;   // the soft step's substeps and stiffness: no widget
    s.solver.maxPushoutSpeed = scene.solver.maxPushoutSpeed;
    s.projectionMaxCorrection = scene.projectionMaxCorrection;
}

}  // namespace

bool SandboxApp::loadScene(const std::string& nameOrPath, std::string* error) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    if (!cs::loadScene(nameOrPath, model, settings, info, error)) return false;
    const bool reload = nameOrPath == sceneName_;   // the file changed on disk: the view stays
    settings.sleeping = true;   // the app lets islands at rest sleep (the runner and the tests do not)
    sceneModel_ = std::move(model);
    sceneSettings_ = settings;
    sceneInfo_ = info;
    sceneName_ = nameOrPath;
    sceneFileTime_ = fileTime(info.path);
    selectedBody = selectedFemBody = -1;
    mouseMode_ = MouseMode::None;
    sceneRenderer_.resetModel();
    progressiveView_.reset();
    // The scene's camera: eye and target give the orbit angles and distance.
    glm::vec3 eye(info.cameraEye.x, info.cameraEye.y, info.cameraEye.z);
    glm::vec3 target(info.cameraTarget.x, info.cameraTarget.y, info.cameraTarget.z);
    glm::vec3 d = eye - target;
    camera.target = target;
    camera.distance = std::max(0.1f, glm::length(d));
    camera.yaw = std::atan2(d.y, d.x);
    camera.pitch = std::asin(std::clamp(d.z / camera.distance, -1.f, 1.f));
    camera.fovY = glm::radians(float(info.cameraFovDeg));
    camera.followBody = camera.followFem = -1;
    camera.floorZ = floorHeight(sceneModel_);
    // Overlay sizes from the scene: forces by the mean body weight, cones by the part size.
    overlayScale_ = overlayScale(sceneModel_, settings.gravity);
    view.draw.forceScale = overlayScale_.forceScale;
    view.draw.normalLength = overlayScale_.normalLength;
    graspLoad();
    if (!reload) femViewDefaults();
    return true;
}

void SandboxApp::setCopies(const std::vector<CopySpec>& specs) {
    finishStepJob();   // the physics thread steps the copies about to go
    copies_.clear();
    for (size_t i = 0; i < std::max<size_t>(1, specs.size()); ++i) {
        auto c = std::make_unique<SimCopy>();
        WorldSettings s = sceneSettings_;
        options_.overrides.apply(s);
        if (!specs.empty()) specs[i].apply(s);
        std::string why;
        if (!contactModelAvailable(s.solver.contactModel, &why)) {
            status = why + "; using standard";
            s.solver.contactModel = ContactModelType::Standard;
        }
        c->spec = CopySpec::of(s);
        c->label = copyLabel(s);
        c->world = World(sceneModel_, s);
        // PLUS keeps its impacts' traces for the replay window (impact_replay.h), on whichever
        // thread steps the world (World::stepContext).
        c->world.stepContext().plus.recordImpacts = true;
        copies_.push_back(std::move(c));
    }
    applyFemDeform();
    loggedSettings_.clear();
    for (auto& c : copies_) loggedSettings_.push_back(c->world.settings);
    // A new session starts with the copies.
    session_ = Session{};
    session_.scene = sceneName_;
    for (auto& c : copies_) {
        session_.copies.push_back(c->label);
        session_.settings.push_back(c->world.settings);
    }
    tick_ = 0;
    resetTick_ = 0;
    accumulator_ = 0;
    freshCopies_ = true;   // the next frame's wall time (the scene's load in it) is not owed
    impact.clear();
    graspReset();
    updateStatistics();
}

void SandboxApp::resetCopies() {
    for (auto& c : copies_) {
        c->world.reset();
        c->plottedSolve = SolveStats{};
        c->plottedSolveStep = -1;
        c->historyStepMs.clear();
        c->historyPenetration.clear();
        c->historyEnergy.clear();
        c->failedSteps = 0;
        c->lastFailure.clear();
    }
    applyFemDeform();
    sceneRenderer_.resetModel();
    impact.clear();
    resetTick_ = tick_;   // the panel's step counter restarts with t (the session log keeps tick_)
    if (selectedBody >= sceneModel_.bodyCount()) selectedBody = -1;
    if (dragging()) mouseMode_ = MouseMode::None;
    graspReset();
    updateStatistics();
}

void SandboxApp::stepCopies() {
    // Replayed events due before this step.
    while (replaying_ && replayNext_ < replay_.events.size() && replay_.events[replayNext_].step <= tick_)
        applyEvent(replay_.events[replayNext_++], true);
    auto t0 = std::chrono::steady_clock::now();
    if (!copies_.empty()) grasp_.driver.commit(copies_[0]->world.state().time);   // the input since the last step
    for (size_t i = 0; i < copies_.size(); ++i) {
        SimCopy* c = copies_[i].get();
        auto s0 = std::chrono::steady_clock::now();
        grasp_.driver.apply(c->world);   // the grasp's command, between steps (grasp_ui.h)
        c->world.step();
        c->stepMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s0).count();
        if (c->world.settings.solver.contactModel == ContactModelType::PLUS)
            impact.capture(c->world.stepContext().plus, int(i), tick_);
        if (c->world.lastStepFailed()) {
            status = c->label + ": " + c->world.lastError();
            c->lastFailure = c->world.lastError();
            ++c->failedSteps;
        }
    }
    stepWallMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++tick_;
    session_.steps = tick_;
    updateStatistics();
}

void SandboxApp::updateStatistics() {
    if (copies_.empty()) return;
    const World& first = copies_[0]->world;
    for (auto& cp : copies_) {
        SimCopy& c = *cp;
        // Exact overlap volumes cost a half-space intersection per pair: only for the table.
        c.overlapVolume = copies_.size() > 1 ? Real(totalOverlapVolume(c.world)) : Real(0);
        // The plotted solve: the one with the most Newton iterations over the last 120 steps.
        // (the CCP model's PJ / PGS / APGD count their iterations in ccpMerit)
        auto solveLength = [](const SolveStats& st) { return st.newtonIterations + std::max(int(st.ccpMerit.size()) - 1, 0); };
        int iterations = solveLength(c.world.solveStats());
        if (iterations > 0 && (iterations >= solveLength(c.plottedSolve) || tick_ - c.plottedSolveStep > 120)) {
            c.plottedSolve = c.world.solveStats();
            c.plottedSolveStep = tick_;
        }
        pushHistory(c.historyStepMs, float(c.stepMs));
        pushHistory(c.historyPenetration, float((c.jobPenetration >= 0 ? c.jobPenetration : c.world.maxPenetration()) * 1000));
        c.jobPenetration = -1;
        pushHistory(c.historyEnergy, float(c.world.kineticEnergy()));
        // Divergence of each body from the first copy (same body indices in every copy).
        int n = std::min(c.world.model().bodyCount(), first.model().bodyCount());
        c.divergence.assign(n, 0);
        c.maxDivergence = 0;
        c.maxDivergenceBody = -1;
        for (int b = 0; b < n; ++b) {
            c.divergence[b] = length(c.world.state().pos[b] - first.state().pos[b]);
            if (c.divergence[b] > c.maxDivergence) {
                c.maxDivergence = c.divergence[b];
                c.maxDivergenceBody = b;
            }
        }
    }
    graspSense();
}

bool SandboxApp::checkSceneFileChanged() {
    long long t = fileTime(sceneInfo_.path);
    if (t == 0 || t == sceneFileTime_) return false;
    sceneFileTime_ = t;
    std::vector<CopySpec> specs;
    std::vector<SolverSettings> solvers;
    for (auto& c : copies_) {
        specs.push_back(c->spec);
        solvers.push_back(c->world.settings.solver);
    }
    std::string error;
    if (!loadScene(sceneName_, &error)) {
        status = "reload failed: " + error;
        return false;
    }
    setCopies(copies_.size() > 1 ? specs : std::vector<CopySpec>{});
    for (size_t i = 0; i < copies_.size() && i < solvers.size(); ++i) copies_[i]->world.settings.solver = solvers[i];
    status = "reloaded " + sceneInfo_.path;
    return true;
}

void SandboxApp::applyEvent(const SessionEvent& event, bool log) {
    if (stepRunning_ && !reapplying_) pendingEvents_.push_back(event);   // again on the stepped worlds
    SessionEvent e = event;
    switch (e.type) {
    case SessionEventType::Drag:
        for (auto& c : copies_) {
            if (e.femTri >= 0) c->world.setFemDrag(e.femTri, e.femWeights, e.target);
            else c->world.setDrag(e.body, e.local, e.target);
        }
        break;
    case SessionEventType::Release:
        for (auto& c : copies_) {
            c->world.clearDrag();
            // The throw: the body leaves with the cursor's velocity.
            if (lengthSq(e.velocity) > 0 && e.body >= 0 && e.body < c->world.model().bodyCount())
                c->world.state().linVel[e.body] = e.velocity;
            if (lengthSq(e.velocity) > 0 && e.femTri >= 0) throwFemBody(c->world, e.femTri, e.velocity);
        }
        break;
    case SessionEventType::Launch: {
        BodyDesc d;
        d.name = "launched";
        ShapeDesc shape;
        if (e.sphere) {
            shape.type = ShapeType::Sphere;
            shape.radius = e.size;
            d.color = {0.95f, 0.75f, 0.25f};
        } else {
            shape.polytope = makeBox({e.size, e.size, e.size});
            d.color = {0.30f, 0.75f, 0.95f};
        }
        d.shapes.push_back(shape);
        d.density = e.density;
        d.pose.pos = e.position;
        d.linVel = e.velocity;
        for (auto& c : copies_) {
            std::string error;
            if (c->world.addBody(d, &error) < 0) status = "launch failed: " + error;
        }
        break;
    }
    case SessionEventType::Settings: {
        for (int i = 0; i < copyCount(); ++i) {
            if (e.copy != i && !(replaying_ && !options_.compare.empty())) continue;
            WorldSettings s = e.settings;
            if (replaying_) {
                // Replaying under another model or solver: the command line wins.
                options_.overrides.apply(s);
                if (!options_.compare.empty()) copies_[i]->spec.apply(s);
            }
            copies_[i]->world.settings = s;
            copies_[i]->world.wakeAll();   // gravity, friction, the step: a sleeping island may no longer rest
            loggedSettings_[i] = s;
        }
        break;
    }
    case SessionEventType::Reset: resetCopies(); break;
    case SessionEventType::Grasp: return;   // a record of what was detected, not an input
    case SessionEventType::Pressure:
        for (auto& c : copies_) {
            std::vector<Real>& activation = c->world.state().femActivation;
            if (e.body >= 0 && e.body < int(activation.size())) activation[e.body] = e.pressure;
        }
        break;
    }
    if (!log) return;
    e.step = tick_;
    // Drag targets and a held pressure slider change every frame: keep one such event per step.
    const SessionEvent* last = session_.events.empty() ? nullptr : &session_.events.back();
    if (last && last->step == tick_ && last->type == e.type &&
        (e.type == SessionEventType::Drag || (e.type == SessionEventType::Pressure && last->body == e.body)))
        session_.events.back() = e;
    else
        session_.events.push_back(e);
}

void SandboxApp::logSettingsChanges() {
    for (int i = 0; i < copyCount(); ++i) {
        WorldSettings& s = copies_[i]->world.settings;
        clampSettings(s);
        if (sameSettings(s, loggedSettings_[i])) continue;
        copies_[i]->spec = CopySpec::of(s);
        copies_[i]->label = copyLabel(s);
        SessionEvent e;
        e.type = SessionEventType::Settings;
        e.copy = i;
        e.settings = s;
        applyEvent(e, true);
    }
}

void SandboxApp::clampSettings(WorldSettings& s) const {
    s.dt = std::clamp(s.dt, Real(1e-4), Real(0.05));
    s.substeps = std::clamp(s.substeps, 1, 64);
    s.solver.newtonIterations = std::clamp(s.solver.newtonIterations, 1, 200);
    s.solver.linearIterations = std::clamp(s.solver.linearIterations, 1, 500);
    s.frictionScale = std::clamp(s.frictionScale, Real(0), Real(10));
}

bool SandboxApp::startReplay(const std::string& path, std::string* error) {
    Session s;
    if (!readSession(path, s, error)) return false;
    if (!loadScene(s.scene, error)) return false;
    for (WorldSettings& w : s.settings) keepSceneOnlySettings(w, sceneSettings_);
    for (SessionEvent& e : s.events)
        if (e.type == SessionEventType::Settings) keepSceneOnlySettings(e.settings, sceneSettings_);
    std::vector<CopySpec> specs = options_.compare;
    setCopies(specs);
    for (int i = 0; i < copyCount(); ++i) {
        WorldSettings base = s.settings[std::min<size_t>(i, s.settings.size() - 1)];
        options_.overrides.apply(base);
        if (!options_.compare.empty()) copies_[i]->spec.apply(base);
        copies_[i]->world.settings = base;
        copies_[i]->spec = CopySpec::of(base);
        copies_[i]->label = copyLabel(base);
        loggedSettings_[i] = base;
        session_.settings[i] = base;
        session_.copies[i] = copies_[i]->label;
    }
    replay_ = s;
    replayNext_ = 0;
    replaying_ = true;
    status = "replaying " + path + " (" + std::to_string(s.events.size()) + " events, " +
             std::to_string(s.steps) + " steps)";
    return true;
}

bool SandboxApp::saveSession(const std::string& path, std::string* error) const {
    return writeSession(path, session_, error);
}

}  // namespace cs
