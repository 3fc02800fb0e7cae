// Mouse, keys, picking, the drag, launches and camera control; see sandbox_app.h.
//
// The drag follows MuJoCo's simulate: the body is grabbed where the cursor ray hits it, and the
// target moves in the plane through the grabbed point facing the camera. The engine solves the
// drag as a compliant point-to-point constraint whose stiffness scales with the effective mass
// at the grabbed point (World::setDrag), so light and heavy bodies follow alike. Shift-drag turns
// the grabbed point about the centre of mass instead (the body rotates). Releasing while the
// cursor moves throws the body with the cursor's velocity.
//
// Deformable bodies are picked on their deformed boundary triangles (engine/fem/fem_pick.h), the
// nearer of the rigid and the FEM hit winning; the grabbed point is the hit itself, kept as its
// barycentric weights on the triangle's three nodes (World::setFemDrag), so it moves with the
// surface as it deforms. A FEM body has no rotation to turn: shift-drag drags it as a plain drag.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>

#include "app/gui/sandbox_app.h"
#include "engine/fem/fem_drag.h"
#include "engine/fem/fem_pick.h"

namespace cs {

namespace {
Vec3 toVec3(glm::vec3 v) { return Vec3{Real(v.x), Real(v.y), Real(v.z)}; }
glm::vec3 toGlm(Vec3 v) { return glm::vec3(float(v.x), float(v.y), float(v.z)); }
}  // namespace

int SandboxApp::viewportAt(double x, double y) const {
    double gy = fbHeight_ - y;
    for (size_t i = 0; i < viewports_.size(); ++i) {
        const Viewport& v = viewports_[i];
        if (x >= v.x && x < v.x + v.width && gy >= v.y && gy < v.y + v.height) return (int)i;
    }
    return -1;
}

void SandboxApp::mouseButton(int button, bool down, bool shift) {
    bool uiCaptures = !scriptedInput && ImGui::GetCurrentContext() && ImGui::GetIO().WantCaptureMouse;
    if (down) {
        if (uiCaptures || mouseMode_ != MouseMode::None) return;
        int v = viewportAt(mouseX_, mouseY_);
        if (v < 0 || v >= copyCount()) return;
        dragViewport_ = v;
        if (button == GLFW_MOUSE_BUTTON_RIGHT || button == GLFW_MOUSE_BUTTON_MIDDLE) {
            mouseMode_ = MouseMode::Pan;
            return;
        }
        if (button != GLFW_MOUSE_BUTTON_LEFT) return;
        Ray ray = camera.pixelRay(float(mouseX_), float(mouseY_), fbHeight_, viewports_[v]);
        World& world = copies_[v]->world;
        const PickHit pick = pickNearest(world, toVec3(ray.origin), toVec3(ray.direction));
        const int body = pick.body;
        const Vec3 hit = pick.point;
        selectedBody = body;
        // A click on a deformable body selects it (the Selected-body window, C to follow it) and
        // gives the Deformables panel's pressure slider to it.
        const Model& model = world.model();
        selectedFemBody = pick.fem.tri >= 0 ? model.femNodeBody[model.femTris[pick.fem.tri][0]] : -1;
        if (selectedFemBody >= 0) selectedFem = selectedFemBody;
        dragFemTri_ = -1;
        if (graspMouseDown(body, hit, shift)) return;   // the gripper: its wrist target (grasp_input.cpp)
        // A drag of a deformable body's surface point or of a rigid body's: the drag plane and
        // target start at the grabbed point, and the drag event (who is grabbed) is applied.
        auto startDrag = [&](SessionEvent e, MouseMode mode) {
            dragPlanePoint_ = hit;
            dragTarget_ = hit;
            dragTrail_.clear();
            mouseMode_ = mode;
            e.type = SessionEventType::Drag;
            e.target = hit;
            applyEvent(e, true);
        };
        SessionEvent e;
        if (pick.fem.tri >= 0) {
            dragFemTri_ = e.femTri = pick.fem.tri;
            dragFemWeights_ = e.femWeights = pick.fem.weights;
            startDrag(e, MouseMode::Drag);
            return;
        }
        if (body < 0 || world.model().isStatic(body)) {
            mouseMode_ = MouseMode::Orbit;
            return;
        }
        const State& s = world.state();
        dragLocal_ = rotateInv(s.rot[body], hit - s.pos[body]);
        rotateLever_ = hit - s.pos[body];
        rotateStartMouse_ = glm::vec2(float(mouseX_), float(mouseY_));
        e.body = body;
        e.local = dragLocal_;
        startDrag(e, shift ? MouseMode::Rotate : MouseMode::Drag);
        return;
    }
    if (dragging()) {
        // Throw velocity: the cursor target's velocity over the last 0.1 s of simulated time.
        SessionEvent e;
        e.type = SessionEventType::Release;
        e.body = selectedBody;
        e.femTri = dragFemTri_;
        if (dragTrail_.size() >= 2) {
            auto last = dragTrail_.back();
            auto first = dragTrail_.front();
            for (auto& p : dragTrail_)
                if (last.first - p.first <= 0.1) { first = p; break; }
            double dt = last.first - first.first;
            Vec3 v = dt > 1e-3 ? (last.second - first.second) / Real(dt) : Vec3{0, 0, 0};
            if (length(v) > Real(0.5)) e.velocity = v;
        }
        applyEvent(e, true);
    }
    mouseMode_ = MouseMode::None;
    dragFemTri_ = -1;
}

void SandboxApp::updateDragTarget() {
    if (!dragging() || (selectedBody < 0 && dragFemTri_ < 0) || copies_.empty()) return;
    const Viewport& vp = viewports_[std::min<size_t>(dragViewport_, viewports_.size() - 1)];
    if (mouseMode_ == MouseMode::Drag) {
        // Cursor ray against the plane through the grabbed point, facing the camera.
        Ray ray = camera.pixelRay(float(mouseX_), float(mouseY_), fbHeight_, vp);
        glm::vec3 n = camera.forward();
        float denom = glm::dot(ray.direction, n);
        if (std::fabs(denom) < 1e-6f) return;
        float t = glm::dot(toGlm(dragPlanePoint_) - ray.origin, n) / denom;
        if (t <= 0) return;
        dragTarget_ = toVec3(ray.origin + t * ray.direction);
    } else {
        // Shift-drag: the grabbed point turns about the centre of mass; horizontal motion turns
        // about the camera's up axis, vertical motion about its right axis.
        glm::vec3 f = camera.forward();
        glm::vec3 right = glm::normalize(glm::cross(f, glm::vec3(0, 0, 1)));
        glm::vec3 up = glm::cross(right, f);
        glm::vec2 d = glm::vec2(float(mouseX_), float(mouseY_)) - rotateStartMouse_;
        Quat q = quatFromAxisAngle(toVec3(up), Real(d.x * 0.01f)) * quatFromAxisAngle(toVec3(right), Real(d.y * 0.01f));
        Vec3 com = copies_[dragViewport_]->world.state().pos[selectedBody];
        dragTarget_ = com + rotate(q, rotateLever_);
    }
    SessionEvent e;
    e.type = SessionEventType::Drag;
    e.body = selectedBody;
    e.local = dragLocal_;
    e.femTri = dragFemTri_;
    e.femWeights = dragFemWeights_;
    e.target = dragTarget_;
    applyEvent(e, true);
}

void SandboxApp::cursorMoved(double x, double y) {
    double dx = x - mouseX_, dy = y - mouseY_;
    mouseX_ = x;
    mouseY_ = y;
    switch (mouseMode_) {
    case MouseMode::Orbit: camera.orbit(float(dx), float(dy)); break;
    case MouseMode::Pan:
        if (!viewports_.empty()) camera.pan(float(dx), float(dy), viewports_[0]);
        break;
    case MouseMode::Drag:
    case MouseMode::Rotate: updateDragTarget(); break;
    case MouseMode::Wrist: graspMouseMoved(); break;
    case MouseMode::None: break;
    }
}

void SandboxApp::scrolled(double dy) {
    if (!scriptedInput && ImGui::GetCurrentContext() && ImGui::GetIO().WantCaptureMouse) return;
    if (graspScroll(dy)) return;
    const int v = viewportAt(mouseX_, mouseY_);
    if (v < 0 || v >= copyCount()) {
        camera.zoom(float(dy));
        return;
    }
    // Towards the point under the cursor: what the cursor ray hits first (a body, the ground),
    // else the ray's point at the target's depth (the plane through the target facing the camera).
    const Ray ray = camera.pixelRay(float(mouseX_), float(mouseY_), fbHeight_, viewports_[v]);
    const PickHit pick = pickNearest(copies_[v]->world, toVec3(ray.origin), toVec3(ray.direction));
    glm::vec3 point = camera.target;
    const glm::vec3 f = camera.forward();
    if (pick.body >= 0 || pick.fem.tri >= 0) point = toGlm(pick.point);
    else if (glm::dot(ray.direction, f) > 1e-6f)
        point = ray.origin + glm::dot(camera.target - ray.origin, f) / glm::dot(ray.direction, f) * ray.direction;
    camera.zoomToward(float(dy), point);
}

void SandboxApp::launch(bool sphere) {
    SessionEvent e;
    e.type = SessionEventType::Launch;
    e.sphere = sphere;
    glm::vec3 f = camera.forward();
    e.position = toVec3(camera.eye() + f * 0.6f);
    e.velocity = toVec3(f * 12.f);
    e.size = Real(0.15);
    applyEvent(e, true);
    status = sphere ? "launched a sphere" : "launched a box";
}

void SandboxApp::frameAll() {
    if (copies_.empty()) return;
    const World& w = copies_[0]->world;
    const Model& m = w.model();
    // The moving bodies: the dynamic rigid bodies and every deformable body's nodes; not the
    // static ones (the ground's plane or slab would frame the horizon, a tomato a dot on it).
    glm::vec3 lo(1e30f), hi(-1e30f);
    bool any = false;
    for (const Vec3& x : w.state().femPos) {
        lo = glm::min(lo, toGlm(x));
        hi = glm::max(hi, toGlm(x));
        any = true;
    }
    for (int b = 0; b < m.bodyCount(); ++b) {
        if (m.isStatic(b) || !w.isActive(b)) continue;
        float r = 0;
        for (int k = 0; k < m.bodyShapeCount[b]; ++k) {
            int s = m.bodyFirstShape[b] + k;
            r = std::max(r, float(length(m.shapeLocal[s].pos) + m.shapeRadius[s]));
        }
        glm::vec3 p = toGlm(w.state().pos[b]);
        lo = glm::min(lo, p - r);
        hi = glm::max(hi, p + r);
        any = true;
    }
    if (!any) {
        lo = glm::vec3(-2, -2, 0);
        hi = glm::vec3(2, 2, 1);
    }
    camera.frame(lo, hi);
    if (camera.followBody >= 0 || camera.followFem >= 0) status = "follow off";
    camera.followBody = camera.followFem = -1;
}

void SandboxApp::toggleFollow() {
    const bool following = camera.followBody >= 0 || camera.followFem >= 0;
    camera.followBody = camera.followFem = -1;
    if (!following && selectedFemBody >= 0) camera.followFem = selectedFemBody;
    else if (!following) camera.followBody = selectedBody;
    const Model& m = copies_.empty() ? sceneModel_ : copies_[0]->world.model();   // launched bodies too
    if (camera.followFem >= 0 && camera.followFem < (int)m.femBodies.size())
        status = "following " + m.femBodies[camera.followFem].name;
    else if (camera.followBody >= 0 && camera.followBody < m.bodyCount())
        status = "following " + m.bodyName[camera.followBody] + " (#" + std::to_string(camera.followBody) + ")";
    else status = following ? "follow off" : "follow off: click a body first";
}

void SandboxApp::keyPressed(int key, int mods) {
    if (!scriptedInput && ImGui::GetCurrentContext() && ImGui::GetIO().WantCaptureKeyboard) return;
    std::string message;
    switch (key) {
    case GLFW_KEY_SPACE: paused = !paused; break;
    case GLFW_KEY_RIGHT:
        paused = true;
        stepOnce = true;
        break;
    case GLFW_KEY_R: {
        graspStop();
        SessionEvent e;
        e.type = SessionEventType::Reset;
        applyEvent(e, true);
        status = "reset";
        break;
    }
    case GLFW_KEY_EQUAL:
    case GLFW_KEY_KP_ADD: speed = std::min(speed * 2.f, 8.f); break;
    case GLFW_KEY_MINUS:
    case GLFW_KEY_KP_SUBTRACT: speed = std::max(speed * 0.5f, 1.f / 32.f); break;
    case GLFW_KEY_F: frameAll(); break;
    case GLFW_KEY_C: toggleFollow(); break;
    case GLFW_KEY_B: launch(false); break;
    case GLFW_KEY_N: launch(true); break;
    case GLFW_KEY_P:
    case GLFW_KEY_F12: {
        std::string error, path = capturePath("screenshot", ".png", &error);
        if (path.empty() || !screenshot(path, &error)) status = error;   // render() reports the file
        break;
    }
    case GLFW_KEY_M: toggleRecording(&message); status = message; break;
    case GLFW_KEY_H:
    case GLFW_KEY_F1: view.help = !view.help; break;
    case GLFW_KEY_G: view.plots = !view.plots; break;
    case GLFW_KEY_I: view.impact = !view.impact; break;
    case GLFW_KEY_LEFT_BRACKET:     // the impact replay: one interval back / forward
    case GLFW_KEY_RIGHT_BRACKET:
        if (impact.current()) {
            impact.index = std::clamp(impact.index + (key == GLFW_KEY_RIGHT_BRACKET ? 1 : -1), 0, impact.intervals());
            impact.playing = false;
            paused = true;
        }
        break;
    case GLFW_KEY_ESCAPE:
        selectedBody = selectedFemBody = -1;
        camera.followBody = camera.followFem = -1;
        break;
    default: graspKey(key); break;
    }
}

}  // namespace cs

namespace cs {

bool SandboxApp::aimAt(const std::string& which, glm::vec2& pixel, int& body) {
    if (copies_.empty()) return false;
    layoutViewports();
    const World& w = copies_[0]->world;
    const Model& m = w.model();
    const Viewport& vp = viewports_[0];
    body = -1;
    float bestZ = -1e30f;
    if (which == "fem") {
        // The highest deformable body whose node centroid's cursor ray hits it first; body is
        // the index into Model::femBodies.
        for (int f = 0; f < (int)m.femBodies.size(); ++f) {
            const FemBodyInfo& info = m.femBodies[f];
            if (info.nodeCount == 0) continue;
            Vec3 c{0, 0, 0};
            for (int i = info.firstNode; i < info.firstNode + info.nodeCount; ++i) c += w.state().femPos[i];
            glm::vec3 p = toGlm(c / Real(info.nodeCount));
            glm::vec2 px;
            if (!camera.project(p, fbHeight_, vp, px) || viewportAt(px.x, px.y) != 0) continue;
            Ray ray = camera.pixelRay(px.x, px.y, fbHeight_, vp);
            const PickHit hit = pickNearest(w, toVec3(ray.origin), toVec3(ray.direction));
            if (hit.fem.tri < 0 || m.femNodeBody[m.femTris[hit.fem.tri][0]] != f) continue;
            if (p.z > bestZ) {
                bestZ = p.z;
                body = f;
                pixel = px;
            }
        }
        return body >= 0;
    }
    for (int b = 0; b < m.bodyCount(); ++b) {
        if (m.isStatic(b) || !w.isActive(b)) continue;
        if (which != "auto" && which != m.bodyName[b] && which != std::to_string(b)) continue;
        glm::vec3 p = toGlm(w.state().pos[b]);
        glm::vec2 px;
        if (!camera.project(p, fbHeight_, vp, px)) continue;
        if (viewportAt(px.x, px.y) != 0) continue;
        // The cursor ray must hit this body first (not one in front of it).
        Ray ray = camera.pixelRay(px.x, px.y, fbHeight_, vp);
        if (w.rayCast(toVec3(ray.origin), toVec3(ray.direction), nullptr) != b) continue;
        if (p.z > bestZ) {
            bestZ = p.z;
            body = b;
            pixel = px;
        }
    }
    return body >= 0;
}

void SandboxApp::printDragReport(int frame) const {
    if (copies_.empty()) return;
    const World& w = copies_[0]->world;
    // Every body's pose and FEM node, hashed (FNV-1a over the printed digits): replays compare this line.
    uint64_t hash = 1469598103934665603ull;
    for (int b = 0; b < w.model().bodyCount(); ++b) {
        char text[160];
        const State& s = w.state();
        std::snprintf(text, sizeof text, "%.6e %.6e %.6e %.6e %.6e %.6e %.6e", double(s.pos[b].x), double(s.pos[b].y),
                      double(s.pos[b].z), double(s.rot[b].w), double(s.rot[b].x), double(s.rot[b].y), double(s.rot[b].z));
        for (const char* c = text; *c; ++c) hash = (hash ^ uint8_t(*c)) * 1099511628211ull;
    }
    for (const Vec3& x : w.state().femPos) {   // and every deformable body's nodes
        char text[96];
        std::snprintf(text, sizeof text, "%.6e %.6e %.6e", double(x.x), double(x.y), double(x.z));
        for (const char* c = text; *c; ++c) hash = (hash ^ uint8_t(*c)) * 1099511628211ull;
    }
    std::printf("bodies-report time=%.6f bodies=%d hash=%016llx\n", double(w.state().time), w.model().bodyCount(),
                (unsigned long long)hash);
    const DragState& d = w.drag();
    if (d.femTri >= 0) {
        const Vec3 p = femDragPoint(w.model(), w.state(), d);
        std::printf("drag-report frame=%d body=fem fem_tri=%d point=%.5f,%.5f,%.5f target=%.5f,%.5f,%.5f force=%.3f\n",
                    frame, d.femTri, double(p.x), double(p.y), double(p.z), double(d.target.x), double(d.target.y),
                    double(d.target.z), double(length(d.force)));
        return;
    }
    if (d.body < 0) {
        std::printf("drag-report frame=%d body=-1\n", frame);
        return;
    }
    Vec3 p = w.state().pos[d.body] + rotate(w.state().rot[d.body], d.localPoint);
    std::printf("drag-report frame=%d body=%d point=%.5f,%.5f,%.5f target=%.5f,%.5f,%.5f force=%.3f\n", frame, d.body,
                double(p.x), double(p.y), double(p.z), double(d.target.x), double(d.target.y), double(d.target.z),
                double(length(d.force)));
}

}  // namespace cs
