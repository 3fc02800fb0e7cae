// The ImGui parts for deformable bodies: the settings panel's Deformables section (strain field,
// colour range, rest shape, the pressure slider of a body's chambers), the colour bar legend of
// the strain field, and --fem-deform (nodes set by hand, to review the drawing without the
// solver). See engine/fem/fem_surface.h for what the colours mean.
#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "app/gui/panel_style.h"
#include "app/gui/sandbox_app.h"
#include "engine/fem/fem_deform.h"
#include "engine/grasp/grasp_player.h"

namespace cs {

void SandboxApp::applyFemDeform() {
    if (options_.femDeform.empty()) return;
    for (auto& c : copies_) {
        std::vector<Vec3> x;
        std::string error;
        if (!deformFemBodies(c->world.model(), options_.femDeform, x, &error)) {
            status = error;
            return;
        }
        c->world.state().femPos = std::move(x);
    }
}

void SandboxApp::femViewDefaults() {
    // A scene with deformable bodies is there to show how they deform: the strain colours start
    // on, and the bodies' node contacts start hidden. Those are one per touching boundary node,
    // hundreds under a resting ball, each a point and a normal that hid the body's underside and
    // told no more than the strain colours under them; rigid contacts (a gripper's pads on a rigid
    // object, a box on the floor) are still drawn. The Deformables section turns them back on.
    const bool fem = !sceneModel_.femBodies.empty();
    view.fem.colorByField = fem;
    view.draw.femContacts = !fem;
}

void SandboxApp::drawFemSection() {
    if (copies_.empty()) return;
    const Model& model = copies_[0]->world.model();
    if (model.femBodies.empty()) return;
    if (!ImGui::CollapsingHeader("Deformables", ImGuiTreeNodeFlags_DefaultOpen)) return;
    FemSurfaceStyle& s = view.fem;
    ImGui::Checkbox("strain colours", &s.colorByField);
    if (ImGui::IsItemHovered())
        wrappedTooltip("colour each tet's boundary faces by a field of its deformation gradient F (the legend shows the scale)");
    ImGui::SameLine();
    ImGui::Checkbox("rest shape", &view.draw.femRestShape);
    if (ImGui::IsItemHovered()) wrappedTooltip("the rest shape as a wireframe");
    ImGui::SameLine();
    ImGui::Checkbox("anchors", &view.draw.femAnchors);
    if (ImGui::IsItemHovered()) wrappedTooltip("pinned nodes (red) and nodes attached to a rigid body (cyan, with a line to it)");
    ImGui::Checkbox("node contacts", &view.draw.femContacts);
    if (ImGui::IsItemHovered())
        wrappedTooltip("the contact layers (points, normals, cones, forces) for the deformable bodies' node contacts too: "
                       "one per touching boundary node, hundreds under a resting ball (off by default)");
    const char* fields[kFemFieldCount] = {"volumetric strain J - 1", "von Mises stress", "max principal stretch"};
    int field = int(s.field);
    if (ImGui::Combo("field", &field, fields, kFemFieldCount)) s.field = FemField(field);
    ImGui::Checkbox("auto range", &s.autoRange);
    if (ImGui::IsItemHovered())
        wrappedTooltip("auto: the 2nd to 98th percentiles of the tets' values, symmetric about the rest value for the "
                       "strains (the few hottest tets take the end colour); off: the fixed range below");
    if (!s.autoRange) {
        float range[2] = {s.lo, s.hi};
        const float speed = s.field == FemField::VonMises ? 100.f : 0.005f;
        if (ImGui::DragFloat2("range", range, speed, 0.f, 0.f, s.field == FemField::VonMises ? "%.3g Pa" : "%.3f"))
            if (range[1] > range[0]) {
                s.lo = range[0];
                s.hi = range[1];
            }
    }
    // The pressure of one body's chambers: State::femActivation (Pa) in every copy.
    selectedFem = std::clamp(selectedFem, 0, int(model.femBodies.size()) - 1);
    if (ImGui::BeginCombo("body", model.femBodies[selectedFem].name.c_str())) {
        for (int b = 0; b < int(model.femBodies.size()); ++b)
            if (ImGui::Selectable(model.femBodies[b].name.c_str(), b == selectedFem)) selectedFem = b;
        ImGui::EndCombo();
    }
    bool chambers = false;
    const FemBodyInfo& body = model.femBodies[selectedFem];
    for (int t = 0; t < body.tetCount; ++t) chambers |= model.femTetActivation[body.firstTet + t] > 0;
    std::vector<Real>& act = copies_[0]->world.state().femActivation;
    if (selectedFem < int(act.size()) && chambers) {
        float pressure = float(act[selectedFem]);
        // The library finger curls about 80 degrees at 10 Y: a nearly incompressible tet swells by only
        // 3 (1 - 2 nu) a / Y (docs/fem_pneunet.md).
        const float most = 10.f * float(body.youngs);
        // An event like a drag's: while the physics thread steps, the value is applied again to the
        // worlds it hands back (physics_thread.cpp), so a value set while running holds.
        if (ImGui::SliderFloat("pressure (Pa)", &pressure, 0.f, most, "%.3g", ImGuiSliderFlags_Logarithmic)) {
            SessionEvent e;
            e.type = SessionEventType::Pressure;
            e.body = selectedFem;
            e.pressure = Real(pressure);
            applyEvent(e, true);
        }
        helpMarker("The activation stress in the body's chamber tets (State::femActivation): an internal "
                   "volumetric stress that inflates them. Recorded in sessions; R sets it back to 0.");
    } else {
        ImGui::TextDisabled("%s has no chambers (activation weights)", body.name.c_str());
    }
}

void SandboxApp::drawFemSelection(const World& w, int f) {
    const Model& m = w.model();
    const State& s = w.state();
    const FemBodyInfo& body = m.femBodies[f];
    ImGui::Text("%s (deformable #%d)", body.name.c_str(), f);
    Real mass = 0;
    Vec3 momentum{0, 0, 0};
    for (int i = body.firstNode; i < body.firstNode + body.nodeCount; ++i) {
        mass += m.femNodeMass[i];
        momentum += m.femNodeMass[i] * s.femVel[i];
    }
    ImGui::Text("%d nodes, %d tets, %.4g kg", body.nodeCount, body.tetCount, double(mass));
    ImGui::Text("Y %.3g Pa, nu %.2f", double(body.youngs), double(body.poisson));
    const Vec3 c = femBodyCentroid(m, s.femPos, f), v = mass > 0 ? momentum / mass : momentum;
    ImGui::Text("centroid  %.3f %.3f %.3f", double(c.x), double(c.y), double(c.z));
    ImGui::Text("mean vel. %.3f %.3f %.3f m/s", double(v.x), double(v.y), double(v.z));
    // Node contacts of this body's nodes (on A) and on its triangles (B), and their total force.
    const Real h = w.settings.dt / std::max(1, w.settings.substeps);
    int count = 0;
    Vec3 force{0, 0, 0};
    for (const Contact& k : w.contacts()) {
        const Real sign = k.femNode >= 0 && m.femNodeBody[k.femNode] == f                ? Real(1)
                          : k.femTri >= 0 && m.femNodeBody[m.femTris[k.femTri][0]] == f ? Real(-1)
                                                                                         : Real(0);
        if (sign == 0) continue;
        ++count;
        force += (sign / h) * (k.normalImpulse * k.geometry.normal + k.tangentImpulse[0] * k.tangent[0] +
                               k.tangentImpulse[1] * k.tangent[1]);
    }
    ImGui::Text("contacts  %d, force %.2f %.2f %.2f N", count, double(force.x), double(force.y), double(force.z));
    if (f < (int)s.femActivation.size() && s.femActivation[f] != 0)
        ImGui::Text("pressure  %.3g Pa", double(s.femActivation[f]));
    const DragState& d = w.drag();
    if (d.femTri >= 0 && m.femNodeBody[m.femTris[d.femTri][0]] == f) {
        ImGui::Separator();
        ImGui::Text("drag force %.2f N (limit %.0f N)", double(length(d.force)), double(w.dragSettings.maxForce));
    }
    if (ImGui::Button(camera.followFem == f ? "Stop following (C)" : "Follow (C)")) {
        if (camera.followFem != f) camera.followBody = camera.followFem = -1;   // from another body to this one
        toggleFollow();
    }
}

void SandboxApp::drawFemLegend() {
    if (!view.fem.colorByField || copies_.empty() || sceneRenderer_.fem().empty()) return;
    const FemFieldRange& r = sceneRenderer_.fem().range();
    // Bottom right of the views, clear of the plots column and the table; above the legend (bottom
    // left) where the view is too narrow for the two side by side (beside the grasp's column).
    const float bottom = tableHeight() + impactPanelHeight();
    float y = float(fbHeight_) - bottom - 10.f;
    const auto legend = uiRects_.find("legend");
    if (legend != uiRects_.end() && legend->second.x + legend->second.w + 10.f > viewRight() - 10.f - femLegendWidth_)
        y = legend->second.y - 8.f;
    ImGui::SetNextWindowPos(ImVec2(viewRight() - 10.f, y), ImGuiCond_Always, ImVec2(1.f, 1.f));
    ImGui::SetNextWindowBgAlpha(0.6f);
    ImGui::Begin("Strain legend", nullptr,
                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoFocusOnAppearing);
    ImGui::TextUnformatted(femFieldName(view.fem.field));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = 220.f, h = 14.f;
    const int steps = 44;
    for (int i = 0; i < steps; ++i) {
        const Color3 c = femFieldColor((float(i) + 0.5f) / steps, r.diverging);
        dl->AddRectFilled(ImVec2(p.x + w * i / steps, p.y), ImVec2(p.x + w * (i + 1) / steps + 0.5f, p.y + h),
                          ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, 1.f)));
    }
    ImGui::Dummy(ImVec2(w, h));
    char lo[32], mid[32], hi[32];
    std::snprintf(lo, sizeof lo, "%.3g", double(r.lo));
    std::snprintf(mid, sizeof mid, "%.3g", double(0.5f * (r.lo + r.hi)));
    std::snprintf(hi, sizeof hi, "%.3g", double(r.hi));
    const float x0 = ImGui::GetCursorPosX();
    ImGui::TextUnformatted(lo);
    ImGui::SameLine(x0 + 0.5f * w - 0.5f * ImGui::CalcTextSize(mid).x);
    ImGui::TextUnformatted(mid);
    ImGui::SameLine(x0 + w - ImGui::CalcTextSize(hi).x);
    ImGui::TextUnformatted(hi);
    if (view.fem.autoRange) ImGui::Text("auto: 2nd-98th percentile; all %.3g .. %.3g", double(r.seenMin), double(r.seenMax));
    else ImGui::Text("fixed range; in view %.3g .. %.3g", double(r.seenMin), double(r.seenMax));
    if (r.inverted > 0) ImGui::TextColored(ImVec4(1.f, 0.3f, 1.f, 1.f), "%d inverted tets (det F <= 0) in magenta", r.inverted);
    const ImVec2 wp = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
    uiRects_["fem-legend"] = UiRect{wp.x, wp.y, sz.x, sz.y};
    femLegendWidth_ = sz.x;
    ImGui::End();
}

}  // namespace cs
