// The ImGui windows, part 3: the settings panel's Show section (what is drawn, and the overlay
// sizes relative to the scene's, view_scale.h) and its footer (captures, status); see panels.cpp.
#include <cstdio>

#include <imgui.h>

#include "app/gui/panel_style.h"
#include "app/gui/sandbox_app.h"

namespace cs {

// ---- what is drawn: three columns of short labels, each with a tooltip ----
void SandboxApp::drawShowSection() {
    ImVec2 header = ImGui::GetCursorScreenPos();
    uiRects_["show-header"] = UiRect{header.x, header.y, ImGui::GetContentRegionAvail().x, ImGui::GetFrameHeight()};
    if (!ImGui::CollapsingHeader("Show", ImGuiTreeNodeFlags_DefaultOpen)) return;
    DebugDrawFlags& f = view.draw;
    struct Toggle {
        const char* label;
        bool* flag;
        const char* tip;
    };
    const Toggle toggles[] = {
        {"points", &f.contactPoints, "contact points (yellow; red where deeper than 1 mm)"},
        {"normals", &f.contactNormals, "contact normals, longer with the normal impulse"},
        {"cones", &f.frictionCones, "friction cones, half-angle atan(mu): green sticking, red slipping"},
        {"forces", &f.contactForces, "contact forces, to the scale in the legend"},
        {"penetration", &f.penetration, "mark contacts deeper than 1 mm in red"},
        {"AABBs", &f.aabbs, "the broad phase's bounding boxes"},
        {"frames", &f.bodyFrames, "body frames and centres of mass"},
        {"joints", &f.jointFrames, "joint frames"},
        {"drag", &f.dragSpring, "the drag spring to the cursor"},
        {"model", &f.constraintGroups, "the contact model's own layer: PEG's constraint groups, PLUS's impact phases"},
        {"shadows", &view.shadows, "shadow mapping (slow on a software rasterizer)"},
        {"x-ray", &view.xray, "overlays drawn over the bodies"},
        {"legend", &view.legend, "the legend of the overlays' colours and the force scale"},
        {"plots (G)", &view.plots, "convergence of the last solve and time series, in a column on the right"},
        {"help (H)", &view.help, "keys and mouse"},
        {"impact (I)", &view.impact,
         "the PLUS impact replay: the last impact the PLUS model resolved, its round timeline ([PLUS] table 2), "
         "impulses and velocities per point, and a slow-motion replay interval by interval"},
    };
    if (ImGui::BeginTable("show", 3)) {
        for (const Toggle& t : toggles) {
            ImGui::TableNextColumn();
            ImGui::Checkbox(t.label, t.flag);
            if (ImGui::IsItemHovered()) wrappedTooltip(t.tip);
        }
        ImGui::EndTable();
    }
    // Sizes relative to the scene's own (view_scale.h); the legend shows the force scale.
    float forceGain = overlayScale_.forceScale > 0 ? f.forceScale / overlayScale_.forceScale : 1.f;
    if (ImGui::SliderFloat("force scale", &forceGain, 0.01f, 100.f, "x%.2g", ImGuiSliderFlags_Logarithmic))
        f.forceScale = forceGain * overlayScale_.forceScale;
    float sizeGain = overlayScale_.normalLength > 0 ? f.normalLength / overlayScale_.normalLength : 1.f;
    if (ImGui::SliderFloat("cone size", &sizeGain, 0.1f, 10.f, "x%.2g", ImGuiSliderFlags_Logarithmic))
        f.normalLength = sizeGain * overlayScale_.normalLength;
    helpMarker("Contact forces are drawn to the scene's scale: one mean body weight is as long as the mean body's "
               "bounding radius (the legend gives it in N per m). Cones and normals are 0.3 x the median part size.");
}

float SandboxApp::footerHeight() const {
    const ImGuiStyle& st = ImGui::GetStyle();
    float wrap = panelWidth_ - 2 * st.WindowPadding.x;
    float h = ImGui::GetFrameHeightWithSpacing() + st.ItemSpacing.y + 4;   // separator, buttons
    if (video_.isOpen()) h += ImGui::CalcTextSize(video_.path().c_str(), nullptr, false, wrap).y + 2 * st.ItemSpacing.y + 13;
    if (!status.empty()) h += ImGui::CalcTextSize(status.c_str(), nullptr, false, wrap).y + st.ItemSpacing.y;
    return h;
}

void SandboxApp::drawFooter() {
    ImVec2 top = ImGui::GetCursorScreenPos();
    ImGui::Separator();
    bool recording = video_.isOpen();
    if (recording) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.15f, 0.15f, 1.f));
    if (ImGui::Button(recording ? "Stop (M)" : "Record MP4 (M)")) {
        std::string message;
        toggleRecording(&message);
        status = message;
    }
    if (recording) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) wrappedTooltip(("MP4 recordings and screenshots go to " + captureDir_).c_str());
    ImGui::SameLine();
    if (ImGui::Button("Screenshot (P)")) {
        std::string error, path = capturePath("screenshot", ".png", &error);
        if (path.empty() || !screenshot(path, &error)) status = error;
    }
    ImGui::SameLine();
    if (ImGui::Button("Save session")) {
        std::string error, path = options_.sessionOut.empty() ? capturePath("session", ".json", &error) : options_.sessionOut;
        if (path.empty()) status = error;
        else status = saveSession(path, &error) ? "session saved to " + path : error;
    }
    if (ImGui::IsItemHovered()) {
        char text[160];
        std::snprintf(text, sizeof text, "the inputs of this session (%zu events over %lld steps%s), to replay with --replay",
                      session_.events.size(), tick_, replaying_ ? ", replaying" : "");
        wrappedTooltip(text);
    }
    if (recording) {
        ImGui::TextColored(ImVec4(1.f, 0.45f, 0.4f, 1.f), "REC %d frames, %d dropped, to", video_.framesWritten(),
                           video_.framesDropped());
        ImGui::TextWrapped("%s", video_.path().c_str());
    }
    if (!status.empty()) ImGui::TextWrapped("%s", status.c_str());
    ImVec2 bottom = ImGui::GetCursorScreenPos();
    uiRects_["footer"] = UiRect{top.x, top.y, panelWidth_, bottom.y - top.y};
}

}  // namespace cs
