// The grasp's commands from the mouse, the keys and the script, and the sensors read after each
// step; see grasp_ui.h.
#include <algorithm>
#include <cmath>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "app/gui/sandbox_app.h"
#include "engine/grasp/grasp_player.h"

namespace cs {

namespace {

Vec3 toVec3(glm::vec3 v) { return Vec3{Real(v.x), Real(v.y), Real(v.z)}; }

void pushHistory(std::vector<float>& h, float v) {
    if ((int)h.size() >= kHistory) h.erase(h.begin());
    h.push_back(v);
}

// GraspDriver::key takes GLFW's key codes, which for letters are the upper-case ASCII letters.
static_assert(GLFW_KEY_A == 'A' && GLFW_KEY_Q == 'Q' && GLFW_KEY_V == 'V' && GLFW_KEY_Z == 'Z');

constexpr Real kWheelStep = Real(0.02);               // m per wheel notch

}  // namespace

void SandboxApp::graspLoad() {
    grasp_ = GraspUi{};
    if (!sceneInfo_.grasp.present()) return;
    GraspSpec spec = sceneInfo_.grasp;
    if (options_.gripForce > 0) {   // --grip-force, as the runner's: one force for every key
        spec.gripForce = Real(options_.gripForce);
        for (GraspKey& k : spec.script) k.force = -1;
    }
    grasp_.driver = GraspDriver(sceneModel_, std::move(spec));
    grasp_.forceMax = std::max(20.f, float(4 * grasp_.driver.controller().spec().gripForce));
}

void SandboxApp::graspReset() {
    // A reset of the worlds: a playing script starts again (Play script resets, and a job's
    // adoption applies that reset again); else the gripper is at rest.
    grasp_.copies.clear();
    if (!grasp_.active()) return;
    if (!grasp_.driver.playing()) grasp_.driver.reset();
    // The command at t = 0 into the models now: a world adopted from a job kept the job's drive
    // targets, and the event detector read the script's closed grip there, then a "release".
    for (auto& c : copies_) grasp_.driver.apply(c->world);
}

void SandboxApp::graspStop() {
    // R and the Reset button: the gripper at rest under the user's control. They used to replay a
    // playing script, and the keys then took over from wherever it had got to (near the floor).
    if (grasp_.active()) grasp_.driver.reset();
}

void SandboxApp::graspPlay() {
    if (!grasp_.active() || grasp_.driver.controller().spec().script.empty()) {
        status = "this scene has no grasp script";
        return;
    }
    SessionEvent e;
    e.type = SessionEventType::Reset;
    applyEvent(e, true);
    grasp_.driver.play();
    status = "playing the grasp script";
}

Real SandboxApp::graspTime() const { return copies_.empty() ? Real(0) : copies_[0]->world.state().time; }

void SandboxApp::setGraspGoal(const GraspCommand& c) {
    grasp_.driver.setGoal(c, graspTime());   // the user takes over where the script was
}

GraspCommand SandboxApp::graspCommandNow() const { return grasp_.driver.commandAt(graspTime()); }

GraspCommand SandboxApp::graspShown() const {
    return grasp_.driver.playing() ? graspCommandNow() : grasp_.driver.goal();
}

void SandboxApp::graspSense() {
    if (!grasp_.active()) return;
    const GraspSpec& spec = grasp_.driver.controller().spec();
    const size_t fingers = spec.fingers.size();
    grasp_.copies.resize(copies_.size());
    for (size_t i = 0; i < copies_.size(); ++i) {
        const World& w = copies_[i]->world;
        GraspReadings& r = grasp_.copies[i];
        r.drive.assign(fingers, 0);
        r.pads.assign(fingers, PadReading{});
        r.historyGrip.resize(fingers);
        r.historyNormal.resize(fingers);
        r.historySlip.resize(fingers);
        for (size_t f = 0; f < fingers; ++f) {
            const FingerSpec& finger = spec.fingers[f];
            const Real g = std::fabs(jointDriveForce(w, finger.joints[0]));
            r.drive[f] = finger.lever > 0 ? g / finger.lever : g;
            r.pads[f] = padReading(w, finger.pads, spec.object, spec.objectFem);
            pushHistory(r.historyGrip[f], float(r.drive[f]));
            pushHistory(r.historyNormal[f], float(r.pads[f].normalForce));
            pushHistory(r.historySlip[f], r.pads[f].contacts > 0 && !r.pads[f].sticking() ? 1.f : 0.f);
        }
        if (spec.scaleJoint >= 0) {
            r.scale = scaleReading(w, spec.scaleJoint);
            r.scaleSettled = w.state().time > 0;
            pushHistory(r.historyScale, float(r.scale.kilograms * 1000));
        }
        if ((spec.object >= 0 && spec.object < w.model().bodyCount()) || spec.objectFem >= 0)
            r.objectRise = graspObjectPosition(w, spec, false).z - graspObjectPosition(w, spec, true).z;
        // Grasp events (grasp_events.h) into the session log, stamped with this step.
        std::vector<GraspEvent> found;
        r.events.update(w, spec, found);
        for (const GraspEvent& g : found) {
            SessionEvent e;
            e.step = tick_;
            e.type = SessionEventType::Grasp;
            e.copy = int(i);
            e.grasp = g.name;
            e.time = g.time;
            e.detail = g.detail;
            session_.events.push_back(e);
            status = copies_[i]->label + ": " + g.name + " at t = " + std::to_string(double(g.time)).substr(0, 6) + " s";
        }
    }
}

bool SandboxApp::graspOwnsBody(int body) const {
    if (!grasp_.active() || body < 0 || copies_.empty()) return false;
    const GraspSpec& spec = grasp_.driver.controller().spec();
    const Model& m = copies_[0]->world.model();
    if (spec.wristJoint >= 0 && m.joints[spec.wristJoint].bodyB == body) return true;
    for (const FingerSpec& f : spec.fingers) {
        if (std::find(f.pads.begin(), f.pads.end(), body) != f.pads.end()) return true;
        for (int j : f.joints)
            if (m.joints[j].bodyB == body) return true;
    }
    return false;
}

bool SandboxApp::graspMouseDown(int body, Vec3 hit, bool shift) {
    if (!graspOwnsBody(body)) return false;
    grasp_.driver.takeOver(graspTime());
    const GraspCommand now = grasp_.driver.goal();
    grasp_.grabPoint = hit;
    grasp_.wristStart = now.wrist;
    grasp_.rotationStart = now.rotation;
    grasp_.mouseStart = glm::vec2(float(mouseX_), float(mouseY_));
    grasp_.depth = 0;
    grasp_.rotating = shift;
    mouseMode_ = MouseMode::Wrist;
    status = shift ? "turning the wrist (shift-drag)" : "moving the wrist (drag; wheel: depth; shift: turn)";
    return true;
}

void SandboxApp::graspMouseMoved() {
    if (mouseMode_ != MouseMode::Wrist || viewports_.empty()) return;
    const Viewport& vp = viewports_[std::min<size_t>(dragViewport_, viewports_.size() - 1)];
    glm::vec3 f = camera.forward();
    GraspCommand c = grasp_.driver.goal();
    if (grasp_.rotating) {
        // As the body drag's shift mode: horizontal motion about the camera's up, vertical about its right.
        glm::vec3 right = glm::normalize(glm::cross(f, glm::vec3(0, 0, 1)));
        glm::vec3 up = glm::cross(right, f);
        glm::vec2 d = glm::vec2(float(mouseX_), float(mouseY_)) - grasp_.mouseStart;
        Quat q = quatFromAxisAngle(toVec3(up), Real(d.x * 0.01f)) * quatFromAxisAngle(toVec3(right), Real(d.y * 0.01f));
        c.rotation = normalize(q * grasp_.rotationStart);
    } else {
        // The cursor ray against the plane through the grabbed point facing the camera.
        Ray ray = camera.pixelRay(float(mouseX_), float(mouseY_), fbHeight_, vp);
        float denom = glm::dot(ray.direction, f);
        if (std::fabs(denom) < 1e-6f) return;
        glm::vec3 g(float(grasp_.grabPoint.x), float(grasp_.grabPoint.y), float(grasp_.grabPoint.z));
        float t = glm::dot(g - ray.origin, f) / denom;
        if (t <= 0) return;
        c.wrist = grasp_.wristStart + (toVec3(ray.origin + t * ray.direction) - grasp_.grabPoint) + grasp_.depth * toVec3(f);
    }
    setGraspGoal(c);
}

bool SandboxApp::graspScroll(double dy) {
    if (mouseMode_ != MouseMode::Wrist) return false;
    // Wheel up pushes the wrist away from the camera, along the view.
    const Real step = Real(dy) * kWheelStep;
    grasp_.depth += step;
    GraspCommand c = grasp_.driver.goal();
    c.wrist = c.wrist + step * toVec3(camera.forward());
    setGraspGoal(c);
    return true;
}

bool SandboxApp::graspKey(int key) {
    // The same function as the tests' (tests/test_grasp_keys.cpp): the goal moves by a key's step
    // and the command ramps to it from the next job's or step's start (GraspDriver::commit).
    if (!grasp_.active()) return false;
    const glm::vec3 f = camera.forward();
    std::string message;
    if (!grasp_.driver.key(key, graspTime(), Vec3{Real(f.x), Real(f.y), 0}, &message)) return false;
    if (!message.empty()) status = message;
    return true;
}

}  // namespace cs
