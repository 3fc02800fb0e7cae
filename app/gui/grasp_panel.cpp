// The Grasp window (controls, per copy the sensors and their plots), the grasp's 3D overlay and
// the scripts' grasp commands; see grasp_ui.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <imgui.h>

#include "app/gui/panel_style.h"
#include "app/gui/sandbox_app.h"

namespace cs {

namespace {

const unsigned kFingerColors[] = {IM_COL32(90, 200, 255, 255), IM_COL32(255, 190, 70, 255),
                                  IM_COL32(200, 130, 255, 255), IM_COL32(130, 230, 130, 255)};
const Color kStick{0.1f, 0.9f, 0.3f, 1}, kSlide{1.0f, 0.2f, 0.15f, 1}, kFree{0.6f, 0.6f, 0.6f, 1};

// Up to four series on one axis from 0 to the largest value, red stripes where `slip` is 1.
void plotSeries(const char* title, const std::vector<std::vector<float>>& series,
                const std::vector<std::vector<float>>* slip, float height) {
    float top = 1e-3f;
    for (const auto& s : series)
        for (float v : s) top = std::max(top, v);
    ImGui::TextDisabled("%s (max %.3g)", title, top);
    top *= 1.15f;   // headroom: a saturated drive's line stays off the frame
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 a = ImGui::GetCursorScreenPos();
    ImVec2 size(ImGui::GetContentRegionAvail().x, height);
    ImVec2 b(a.x + size.x, a.y + size.y);
    dl->AddRectFilled(a, b, IM_COL32(30, 32, 36, 255));
    auto xAt = [&](size_t i) { return a.x + size.x * float(i) / float(kHistory - 1); };
    if (slip) {
        for (const auto& s : *slip)
            for (size_t i = 0; i < s.size(); ++i)
                if (s[i] > 0.5f) dl->AddRectFilled(ImVec2(xAt(i), b.y - 5), ImVec2(xAt(i + 1), b.y), IM_COL32(255, 50, 40, 255));
    }
    for (size_t k = 0; k < series.size(); ++k) {
        const auto& s = series[k];
        for (size_t i = 1; i < s.size(); ++i)
            dl->AddLine(ImVec2(xAt(i - 1), b.y - size.y * s[i - 1] / top), ImVec2(xAt(i), b.y - size.y * s[i] / top),
                        kFingerColors[k % 4], 1.5f);
    }
    ImGui::Dummy(size);
}

// The scale's reading as shown: within 0.05 g of zero it reads 0 (a tared scale's rounding noise
// printed "-0.0 g"); before the first step it reads "--" (the spring starts unstretched, so the tare
// alone read -500.0 g in a recording's first frame).
std::string shownScale(const GraspReadings& r) {
    if (!r.scaleSettled) return "scale -- g";
    const double g = double(r.scale.kilograms) * 1000;
    char text[48];
    std::snprintf(text, sizeof text, "scale %.1f g", std::fabs(g) < 0.05 ? 0.0 : g);
    return text;
}

// What a pad presses other than the object: "ground 103 N" (the body taking the most).
std::string pressing(const World& w, const PadReading& p) {
    const Model& m = w.model();
    const std::string name = p.otherBody >= 0 && p.otherBody < m.bodyCount() ? m.bodyName[p.otherBody] : "other";
    char text[96];
    std::snprintf(text, sizeof text, "on %s %.0f N", name.c_str(), double(p.otherNormalForce));
    return text;
}

// A copy's label as one word of a report line ("standard/newton 16 x pcg 40" split the line's
// key=value fields).
std::string copyLabelWord(std::string label) {
    std::replace(label.begin(), label.end(), ' ', '_');
    return label;
}

}  // namespace

void SandboxApp::drawGraspWindow() {
    const GraspSpec& spec = grasp_.driver.controller().spec();
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove;
    if (graspWidth_ > 0) {
        // Its column right of the viewports (layoutViewports), above the Selected-body window.
        const bool selection = (selectedBody >= 0 || selectedFemBody >= 0) && view.settingsPanel;
        const float below = selection ? selectionHeight_ : 0.f;
        ImGui::SetNextWindowPos(ImVec2(viewRight(), 0.f), ImGuiCond_Always);
        ImGui::SetNextWindowSize(ImVec2(graspWidth_, float(fbHeight_) - tableHeight() - below), ImGuiCond_Always);
        ImGui::SetNextWindowBgAlpha(0.95f);
        flags |= ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse;
    } else {
        // Over the view's top right corner (a window too small for the column).
        const float width = 330;
        const float x = float(fbWidth_) - plotsWidth_ - width - 8;
        ImGui::SetNextWindowPos(ImVec2(std::max(x, view.settingsPanel ? panelWidth_ : 0.f), 8), ImGuiCond_Always);
        ImGui::SetNextWindowSizeConstraints(ImVec2(width, 0), ImVec2(width, float(fbHeight_) - tableHeight() - 16));
        ImGui::SetNextWindowBgAlpha(0.88f);
        flags |= ImGuiWindowFlags_AlwaysAutoResize;
    }
    if (!ImGui::Begin("Grasp", &view.grasp, flags)) {
        ImGui::End();
        return;
    }
    // The controls show the user's goal (the command ramps to it, grasp_driver.h), or the
    // script's command while it plays.
    GraspCommand c = graspShown();
    bool changed = false;
    ImGui::Text("t %.2f s   %s", double(graspTime()), grasp_.driver.playing() ? ("script: " + c.phase).c_str() : "user control");
    if (!spec.script.empty()) {
        if (ImGui::Button("Play script")) graspPlay();
        ImGui::SameLine();
        if (ImGui::Button("Stop") && grasp_.driver.playing()) grasp_.driver.takeOver(graspTime());
        ImGui::SameLine();
    }
    if (ImGui::Button("Wrist to rest")) {
        c.wrist = grasp_.driver.controller().restWrist();
        c.rotation = quatIdentity();
        changed = true;
    }
    ImGui::PushItemWidth(-110);
    float grip = float(c.grip);
    if (ImGui::SliderFloat(spec.fingers.size() > 2 ? "grasp" : "grip (V)", &grip, 0, 1, "%.2f")) {
        c.grip = grip;
        c.fingerGrip.clear();
        changed = true;
    }
    for (size_t f = 0; f < spec.fingers.size() && spec.fingers.size() > 1; ++f) {
        float g = float(f < c.fingerGrip.size() && c.fingerGrip[f] >= 0 ? c.fingerGrip[f] : c.grip);
        if (ImGui::SliderFloat(spec.fingers[f].name.c_str(), &g, 0, 1, "%.2f")) {
            c.fingerGrip.resize(spec.fingers.size(), Real(-1));
            c.fingerGrip[f] = g;
            changed = true;
        }
    }
    float force = float(c.force);
    if (ImGui::SliderFloat("grip force N", &force, 0, grasp_.forceMax, "%.2f")) {
        c.force = force;
        changed = true;
    }
    float wrist[3] = {float(c.wrist.x), float(c.wrist.y), float(c.wrist.z)};
    if (ImGui::DragFloat3("wrist m", wrist, 0.002f, -5, 5, "%.3f")) {
        c.wrist = Vec3{Real(wrist[0]), Real(wrist[1]), Real(wrist[2])};
        changed = true;
    }
    ImGui::PopItemWidth();
    helpMarker("Drag the gripper with the left button to move its wrist target in the plane facing the camera; "
               "shift-drag turns it; the wheel during the drag moves it along the view. Keys: W/S A/D Q/E move "
               "1 cm, J/L U/O Z/X turn 5 deg, V opens or closes. These set a goal (the sliders' values, the "
               "hollow marker); the gripper moves to it at most 0.15 m/s and 0.5 m/s^2 and closes in 0.9 s, "
               "so that a held object is not shaken loose. R puts the gripper back at rest.");
    if (changed) setGraspGoal(c);

    // Sensors, per copy: the drive force, the pad forces and their slip state, the scale.
    const float plotHeight = copyCount() > 1 ? 34.f : 48.f;
    for (int i = 0; i < copyCount() && i < (int)grasp_.copies.size(); ++i) {
        const GraspReadings& r = grasp_.copies[i];
        ImGui::Separator();
        ImGui::PushStyleColor(ImGuiCol_Text, kCopyColors[i % 4]);
        ImGui::TextUnformatted(copies_[i]->label.c_str());
        ImGui::PopStyleColor();
        ImGui::SameLine();
        ImGui::Text(" rise %.3f m", double(r.objectRise));
        if (spec.scaleJoint >= 0) {
            ImGui::SameLine();
            ImGui::Text("  %s", shownScale(r).c_str());
        }
        if (ImGui::BeginTable("sensors", 5, ImGuiTableFlags_SizingStretchProp)) {
            for (const char* h : {"finger", "grip N", "normal N", "friction N", "pad"}) ImGui::TableSetupColumn(h);
            ImGui::TableHeadersRow();
            for (size_t f = 0; f < r.drive.size(); ++f) {
                const PadReading& p = r.pads[f];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::PushStyleColor(ImGuiCol_Text, kFingerColors[f % 4]);
                ImGui::TextUnformatted(spec.fingers[f].name.c_str());
                ImGui::PopStyleColor();
                ImGui::TableNextColumn();
                ImGui::Text("%.2f", double(r.drive[f]));
                ImGui::TableNextColumn();
                ImGui::Text("%.2f", double(p.normalForce));
                ImGui::TableNextColumn();
                ImGui::Text("%.2f", double(p.frictionForce));
                ImGui::TableNextColumn();
                // The pad's state on the object; a pad that only presses something else (the
                // floor, the other finger) holds nothing: it says what it presses and how hard.
                if (p.contacts > 0 && p.sticking()) ImGui::TextColored(ImVec4(0.2f, 0.9f, 0.4f, 1), "stick");
                else if (p.contacts > 0) ImGui::TextColored(ImVec4(1, 0.3f, 0.2f, 1), "SLIDE");
                else if (p.otherContacts == 0) ImGui::TextDisabled("free");
                else ImGui::TextColored(ImVec4(1, 0.75f, 0.2f, 1), "%s", pressing(copies_[i]->world, p).c_str());
                if (p.otherContacts > 0 && ImGui::IsItemHovered())
                    ImGui::SetTooltip("%s; the normal force column counts the object's contacts only",
                                      pressing(copies_[i]->world, p).c_str());
            }
            ImGui::EndTable();
        }
        plotSeries("grip force per finger, N", r.historyGrip, nullptr, plotHeight);
        plotSeries("pad normal force, N; red: sliding", r.historyNormal, &r.historySlip, plotHeight);
        if (spec.scaleJoint >= 0 && copyCount() == 1) plotSeries("scale, g", {r.historyScale}, nullptr, plotHeight);
    }
    ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
    uiRects_["grasp"] = UiRect{p.x, p.y, sz.x, sz.y};
    ImGui::End();
}

void SandboxApp::drawGraspOverlay(int copy) {
    if (!grasp_.active() || copy >= (int)grasp_.copies.size()) return;
    const GraspSpec& spec = grasp_.driver.controller().spec();
    const World& w = copies_[copy]->world;
    const GraspReadings& r = grasp_.copies[copy];
    // The wrist target (the mocap frame): a point and its three axes; the user's goal, where the
    // target is still on its way to it, as a grey point joined to it.
    const GraspCommand c = graspCommandNow();
    const Quat q = c.rotation * grasp_.driver.controller().restRotation();
    debugRenderer_.point(c.wrist, 8.f, Color{1, 1, 1, 1});
    const Vec3 goal = grasp_.driver.goal().wrist;
    if (!grasp_.driver.playing() && length(goal - c.wrist) > Real(1e-4)) {
        debugRenderer_.point(goal, 6.f, Color{0.6f, 0.6f, 0.6f, 1});
        debugRenderer_.line(c.wrist, goal, Color{0.6f, 0.6f, 0.6f, 1});
    }
    const Color axes[3] = {{1, 0.3f, 0.3f, 1}, {0.3f, 1, 0.3f, 1}, {0.3f, 0.5f, 1, 1}};
    for (int k = 0; k < 3; ++k) {
        Vec3 e{0, 0, 0};
        e[k] = Real(0.05);
        debugRenderer_.line(c.wrist, c.wrist + rotate(q, e), axes[k]);
    }
    // Each pad: its slip state as a dot, its net contact force as a line, its grip force as text.
    // The labels go beside their pads on the screen: left of a pad that is left of the pads'
    // centre (the text ending there), right of one on the right, a line lower for each further
    // pad on a side. Placed 6 cm from the wrist in 3D instead, the two jaws' labels met on the
    // screen when the camera looked along the jaws' axis, as grasp_box's own camera does.
    const glm::vec3 f3 = camera.forward();
    const Vec3 right = normalize(Vec3{Real(f3.y), Real(-f3.x), 0});   // the screen's right, level
    Vec3 centre{0, 0, 0};
    int padCount = 0;
    for (size_t f = 0; f < r.pads.size() && f < spec.fingers.size(); ++f)
        if (!spec.fingers[f].pads.empty()) {
            centre += w.state().pos[spec.fingers[f].pads[0]];
            ++padCount;
        }
    if (padCount > 0) centre = centre / Real(padCount);
    int onSide[2] = {0, 0};   // labels placed so far left and right
    char text[64];
    for (size_t f = 0; f < r.pads.size() && f < spec.fingers.size(); ++f) {
        const PadReading& p = r.pads[f];
        if (spec.fingers[f].pads.empty()) continue;
        const Vec3 at = w.state().pos[spec.fingers[f].pads[0]];
        const Real across = dot(at - centre, right);
        const int side = across > 0 || (across == 0 && f % 2 == 1) ? 1 : 0;
        const glm::vec2 offset(side ? 12.f : -12.f, -7.f + 15.f * float(onSide[side]++));
        const Color state = p.contacts == 0 ? kFree : p.sticking() ? kStick : kSlide;
        debugRenderer_.point(at, 11.f, state);
        // The net force at the force layer's scale, at most 0.25 m long (a jaw pressed on the floor
        // carries many times the grip force and would leave the view).
        Vec3 arrow = Real(view.draw.forceScale) * p.force;
        if (length(arrow) > Real(0.25)) arrow = Real(0.25) * normalize(arrow);
        debugRenderer_.line(at, at + arrow, Color{0.1f, 0.9f, 0.95f, 1});
        std::snprintf(text, sizeof text, "%.2f N %s", double(r.drive[f]),
                      p.contacts > 0 ? (p.sticking() ? "stick" : "SLIDE") : p.otherContacts > 0 ? "(not on the object)" : "");
        debugRenderer_.text(at, text, state, offset, side ? 0.f : 1.f);
    }
    if (spec.scaleJoint >= 0) {
        const Vec3 at = w.state().pos[w.model().joints[spec.scaleJoint].bodyB];
        std::snprintf(text, sizeof text, "%s", shownScale(r).c_str());
        debugRenderer_.text(at + Vec3{0, Real(0.12), Real(0.02)}, text, Color{1, 1, 1, 1});   // past the platform's far edge
    }
}

void SandboxApp::graspScriptCommand(const std::vector<std::string>& args, int frame) {
    const std::string verb = args.empty() ? "" : args[0];
    auto num = [&](size_t i) { return i < args.size() ? Real(std::atof(args[i].c_str())) : Real(0); };
    GraspCommand c = graspShown();
    if (verb == "play") {
        graspPlay();
    } else if (verb == "stop") {
        grasp_.driver.takeOver(graspTime());
    } else if (verb == "grip" || verb == "force") {
        (verb == "grip" ? c.grip : c.force) = num(1);
        c.fingerGrip.clear();
        setGraspGoal(c);
    } else if (verb == "wrist") {
        c.wrist = Vec3{num(1), num(2), num(3)};
        setGraspGoal(c);
    } else if (verb == "report") {
        // One line per copy: the tests read the object's rise, the forces and the slip states.
        const GraspSpec& spec = grasp_.driver.controller().spec();
        const Vec3 goal = grasp_.driver.goal().wrist;
        for (int i = 0; i < copyCount() && i < (int)grasp_.copies.size(); ++i) {
            const GraspReadings& r = grasp_.copies[i];
            const World& w = copies_[i]->world;
            const Vec3 target = spec.wristJoint >= 0 ? w.model().joints[spec.wristJoint].anchorA : Vec3{0, 0, 0};
            std::string grips, normals, slides, states, others;
            for (size_t f = 0; f < r.drive.size(); ++f) {
                const PadReading& p = r.pads[f];
                states += std::string(f ? "," : "") +
                          (p.contacts > 0 ? (p.sticking() ? "stick" : "slide") : p.otherContacts > 0 ? "other" : "free");
                char one[48];
                std::snprintf(one, sizeof one, "%s%.4f", f ? "," : "", double(r.drive[f]));
                grips += one;
                std::snprintf(one, sizeof one, "%s%.4f", f ? "," : "", double(r.pads[f].normalForce));
                normals += one;
                slides += (f ? "," : "") + std::to_string(r.pads[f].sliding);
                std::snprintf(one, sizeof one, "%s%.4f", f ? "," : "", double(p.otherNormalForce));
                others += one;
            }
            std::printf("grasp-report frame=%d copy=%d label=%s time=%.4f phase=%s playing=%d wrist=%.5f,%.5f,%.5f "
                        "goal=%.5f,%.5f,%.5f rise=%.5f grip=%s normal=%s sliding=%s pad=%s other=%s scale_g=%.2f\n",
                        frame, i, copyLabelWord(copies_[i]->label).c_str(), double(w.state().time), c.phase.c_str(),
                        int(grasp_.driver.playing()), double(target.x), double(target.y), double(target.z),
                        double(goal.x), double(goal.y), double(goal.z),
                        double(r.objectRise), grips.c_str(), normals.c_str(), slides.c_str(), states.c_str(),
                        others.c_str(), double(r.scale.kilograms * 1000));
        }
        if (!grasp_.active()) std::printf("grasp-report frame=%d none\n", frame);
    } else {
        std::printf("grasp: unknown command '%s' (play, stop, grip G, force N, wrist X Y Z, report)\n", verb.c_str());
    }
}

void SandboxApp::drawGraspHelp() {
    // The keys of grasp_input.cpp (graspKey, graspMouseDown, graspScroll): W/S and A/D move along
    // the view's ground directions, Q/E down and up; J/L turn about z, U/O about the view's right,
    // Z/X about its ahead direction.
    static const char* const keys[][2] = {
        {"left drag (gripper)", "move the wrist target in the plane facing the camera"},
        {"shift + left drag (gripper)", "turn the wrist"},
        {"wheel during the drag", "move the wrist along the view (depth)"},
        {"W / S", "wrist goal 1 cm ahead / back (along the view, level)"},
        {"A / D", "wrist goal 1 cm left / right"},
        {"Q / E", "wrist goal 1 cm down / up (the gripper follows at 0.15 m/s)"},
        {"J / L", "turn the wrist 5 degrees about the vertical"},
        {"U / O", "turn 5 degrees about the view's right axis"},
        {"Z / X", "turn 5 degrees about the view's ahead axis"},
        {"V", "open / close the grip (in 1.8 s, force-limited)"},
        {"R", "reset: the gripper at rest, the script stopped"},
    };
    ImGui::Separator();
    ImGui::TextUnformatted(grasp_.active() ? "Gripper (this scene)" : "Gripper (grasp scenes: grasp_box, fetch_tomato, ...)");
    keyTable("grasp keys", keys);
    ImGui::TextUnformatted("Grasp events (grip closed, contact made, lift start, slip detected, release)\n"
                           "go to the status line and the session log (--session-out).");
}

}  // namespace cs
