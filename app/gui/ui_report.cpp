// Scripted checks of the layout (gui_script.h "ui report", "hover help N"); see sandbox_app.h.
//
// One line per item, "ui-report frame=F KEY VALUE...", read by scripts/gui_test.sh: the window's
// size, the rectangles of the windows drawn last frame, whether the settings panel's content
// fits its area, the last tooltip's rectangle, the legend's entries, the step counter, each
// copy's label and failed steps, the camera's eye height over the floor, where captures go, the
// recording and the status line; the selection and what the camera follows, the deformable
// bodies' pressures, and where the grasp's object and scale are on the screen (the windows must
// not cover them).
#include <cstdio>

#include "app/gui/panel_style.h"
#include "app/gui/sandbox_app.h"
#include "engine/grasp/grasp_player.h"

namespace cs {

void SandboxApp::printUiReport(int frame) const {
    std::printf("ui-report frame=%d window %d %d\n", frame, fbWidth_, fbHeight_);
    for (const auto& [name, r] : uiRects_)
        std::printf("ui-report frame=%d rect %s %.0f %.0f %.0f %.0f\n", frame, name.c_str(), double(r.x), double(r.y),
                    double(r.w), double(r.h));
    for (size_t i = 0; i < viewports_.size(); ++i) {
        const Viewport& v = viewports_[i];   // bottom-left origin: report from the top-left
        std::printf("ui-report frame=%d rect viewport%zu %d %d %d %d\n", frame, i, v.x, fbHeight_ - v.y - v.height,
                    v.width, v.height);
    }
    std::printf("ui-report frame=%d settings-content %.0f of %.0f\n", frame, double(settingsContentHeight_),
                double(settingsAreaHeight_));
    const ImVec4& t = helpMarkers().tooltip;
    std::printf("ui-report frame=%d tooltip %.0f %.0f %.0f %.0f\n", frame, double(t.x), double(t.y), double(t.z),
                double(t.w));
    std::printf("ui-report frame=%d help-markers %zu\n", frame, helpMarkers().markers.size());
    for (const std::string& e : legendShown_) std::printf("ui-report frame=%d legend %s\n", frame, e.c_str());
    if (!copies_.empty())
        std::printf("ui-report frame=%d steps %lld time %.6f\n", frame, stepsSinceReset(),
                    double(copies_[0]->world.state().time));
    for (size_t i = 0; i < copies_.size(); ++i)   // the comparison table's label and failed steps
        std::printf("ui-report frame=%d copy %zu %s | failed %d | kinetic %.4g\n", frame, i + 1, copies_[i]->label.c_str(),
                    copies_[i]->failedSteps, double(copies_[i]->world.kineticEnergy()));
    std::printf("ui-report frame=%d camera eye-z %.4f floor %.4f pitch %.2f\n", frame, double(camera.eye().z),
                double(camera.floorZ), double(glm::degrees(camera.pitch)));
    std::printf("ui-report frame=%d camera-target %.4f %.4f %.4f distance %.4f\n", frame, double(camera.target.x),
                double(camera.target.y), double(camera.target.z), double(camera.distance));
    std::printf("ui-report frame=%d selection body %d fem %d follow-body %d follow-fem %d\n", frame, selectedBody,
                selectedFemBody, camera.followBody, camera.followFem);
    if (!copies_.empty()) {
        const World& w = copies_[0]->world;
        const std::vector<Real>& act = w.state().femActivation;
        for (size_t f = 0; f < act.size(); ++f)
            std::printf("ui-report frame=%d fem-pressure %zu %.6g\n", frame, f, double(act[f]));
        // The grasp's object and the scale's platform: their pixels in the first viewport.
        const GraspSpec& spec = grasp_.driver.controller().spec();
        auto pixel = [&](const char* name, Vec3 p) {
            glm::vec2 px;
            const glm::vec3 at(float(p.x), float(p.y), float(p.z));
            if (!viewports_.empty() && camera.project(at, fbHeight_, viewports_[0], px))
                std::printf("ui-report frame=%d pixel %s %.0f %.0f\n", frame, name, double(px.x), double(px.y));
        };
        if (grasp_.active() && (spec.object >= 0 || spec.objectFem >= 0))
            pixel("grasp-object", graspObjectPosition(w, spec, false));
        if (grasp_.active() && spec.scaleJoint >= 0)
            pixel("scale", w.state().pos[w.model().joints[spec.scaleJoint].bodyB]);
    }
    std::printf("ui-report frame=%d overlay force-scale %.6g normal-length %.4g weight %.6g\n", frame,
                double(view.draw.forceScale), double(view.draw.normalLength), double(overlayScale_.typicalWeight));
    std::printf("ui-report frame=%d capture-dir %s\n", frame, captureDir_.c_str());
    std::printf("ui-report frame=%d recording %s\n", frame, video_.isOpen() ? video_.path().c_str() : "-");
    std::printf("ui-report frame=%d status %s\n", frame, status.empty() ? "-" : status.c_str());
}

bool SandboxApp::helpMarkerCentre(int n, glm::vec2& pixel) const {
    const std::vector<ImVec4>& m = helpMarkers().markers;
    if (n < 0 || n >= (int)m.size()) return false;
    pixel = glm::vec2(m[n].x + 0.5f * m[n].z, m[n].y + 0.5f * m[n].w);
    return true;
}

}  // namespace cs
