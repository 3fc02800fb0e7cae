// The ImGui windows, part 2: the comparison table, the plots, the help, the legend and the labels
// on each viewport; see sandbox_app.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <imgui.h>

#include "app/gui/panel_style.h"
#include "app/gui/sandbox_app.h"
#include "render/plot_widget.h"

namespace cs {

// True when the world has moving bodies and all of them sleep (a deformable body never sleeps).
static bool allAsleep(const World& w) {
    const Model& m = w.model();
    if (!m.femBodies.empty()) return false;
    int dynamic = 0;
    for (int b = 0; b < m.bodyCount(); ++b) dynamic += !m.isStatic(b);
    return dynamic > 0 && w.sleepingBodies() == dynamic;
}

float SandboxApp::tableHeight() const { return copyCount() > 1 ? float(34 + 21 * copyCount()) : 0.f; }

void SandboxApp::drawComparisonTable() {
    // Under the viewports and the plots column, beside the settings panel.
    float x0 = view.settingsPanel ? panelWidth_ : 0.f;
    float h = tableHeight();
    ImGui::SetNextWindowPos(ImVec2(x0, float(fbHeight_) - h));
    ImGui::SetNextWindowSize(ImVec2(float(fbWidth_) - x0, h));
    uiRects_["table"] = UiRect{x0, float(fbHeight_) - h, float(fbWidth_) - x0, h};
    ImGui::SetNextWindowBgAlpha(0.92f);
    ImGui::Begin("Comparison", nullptr,
                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                     ImGuiWindowFlags_NoScrollbar);
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
    if (ImGui::BeginTable("compare", 10, flags)) {
        const char* headers[] = {"copy", "step (ms)", "Newton it.", "linear it.", "residual",
                                 "max pen. (mm)", "overlap (cm3)", "kinetic (J)", "failed steps", "max diverg. (m)"};
        for (const char* hd : headers) ImGui::TableSetupColumn(hd);
        ImGui::TableHeadersRow();
        for (int i = 0; i < copyCount(); ++i) {
            SimCopy& c = *copies_[i];
            const SolveStats& st = c.world.solveStats();
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kCopyColors[i]), "%d %s", i + 1, c.label.c_str());
            if (allAsleep(c.world)) {
                // No solve runs while every body sleeps: its zeros would read as a free, exact solve.
                for (int k = 0; k < 4; ++k) {
                    ImGui::TableNextColumn();
                    ImGui::TextDisabled(k == 0 ? "asleep" : "-");
                    if (k == 0 && ImGui::IsItemHovered())
                        ImGui::SetTooltip("every body of this copy sleeps, so no step is solved; a touch or a drag wakes it");
                }
            } else {
                ImGui::TableNextColumn();
                ImGui::Text("%.2f", c.stepMs);
                ImGui::TableNextColumn();
                ImGui::Text("%d", st.newtonIterations);
                ImGui::TableNextColumn();
                ImGui::Text("%d", st.linearIterations);
                ImGui::TableNextColumn();
                ImGui::Text("%.2e", double(st.residualFinal));
            }
            ImGui::TableNextColumn();
            ImGui::Text("%.3f", double(c.world.maxPenetration() * 1000));
            ImGui::TableNextColumn();
            ImGui::Text("%.4f", double(c.overlapVolume * 1e6));
            ImGui::TableNextColumn();
            ImGui::Text("%.4g", double(c.world.kineticEnergy()));
            ImGui::TableNextColumn();
            // Steps the speed and energy guards rolled back (World::lastStepFailed), the last one's
            // message on hover.
            if (c.failedSteps > 0) ImGui::TextColored(ImVec4(1.f, 0.35f, 0.3f, 1.f), "%d", c.failedSteps);
            else ImGui::Text("0");
            if (c.failedSteps > 0 && ImGui::IsItemHovered() && !c.lastFailure.empty()) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.f);
                ImGui::TextUnformatted(c.lastFailure.c_str());
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
            ImGui::TableNextColumn();
            if (i == 0) ImGui::TextDisabled("reference");
            else if (c.maxDivergenceBody < 0) ImGui::Text("0 (same)");   // no body has moved apart
            else ImGui::Text("%.2e (#%d)", double(c.maxDivergence), c.maxDivergenceBody);
            if (i > 0 && ImGui::IsItemHovered() && !c.divergence.empty()) {
                ImGui::BeginTooltip();
                ImGui::Text("divergence from copy 1, per body (m)");
                for (size_t b = 0; b < c.divergence.size() && b < 40; ++b)
                    if (!c.world.model().isStatic(int(b)))
                        ImGui::Text("#%zu %s: %.3e", b, c.world.model().bodyName[b].c_str(), double(c.divergence[b]));
                ImGui::EndTooltip();
            }
        }
        ImGui::EndTable();
    }
    ImGui::End();
}

void SandboxApp::drawPlotsWindow() {
    // A column on the right above the comparison table: the viewports are laid out beside it
    // (layoutViewports), so it covers neither a copy nor the table.
    const float height = float(fbHeight_) - tableHeight();
    ImGui::SetNextWindowPos(ImVec2(float(fbWidth_) - plotsWidth_, 0.f));
    ImGui::SetNextWindowSize(ImVec2(plotsWidth_, height));
    ImGui::SetNextWindowBgAlpha(0.95f);
    uiRects_["plots"] = UiRect{float(fbWidth_) - plotsWidth_, 0.f, plotsWidth_, height};
    if (!ImGui::Begin("Plots (G)", &view.plots, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    // Plot heights follow the window's: at 720 px everything fits without scrolling.
    const float k = std::clamp((height - 260.f) / 460.f, 0.45f, 1.6f);
    static int shown = 0;
    shown = std::min(shown, copyCount() - 1);
    if (copyCount() > 1) {
        for (int i = 0; i < copyCount(); ++i) {
            if (i) ImGui::SameLine();
            ImGui::RadioButton(copies_[i]->label.c_str(), &shown, i);
        }
    }
    // [NSN] figures 11 and 18: residual against iteration for the last solve, one line per
    // Newton iteration, log scale.
    const SolveStats& st = copies_[shown]->plottedSolve;
    ImGui::TextWrapped("Solve of step %lld: %s", copies_[shown]->plottedSolveStep,
                       st.linearResidual.empty() && !st.ccpMerit.empty() ? "the CCP solver's iterations"
                                                                         : "linear residual per Newton iteration");
    helpMarker("The solve with the most Newton iterations over the last 120 steps (a converged warm start takes none). "
               "[NSN] figures 11 and 18: one line per Newton iteration, log scale.");
    if (!st.ccpMerit.empty()) {   // [CCP] model: its merit per iteration (engine/solver/ccp_solvers.h)
        PlotSeries merit;
        merit.name = "CCP merit";
        for (Real r : st.ccpMerit) merit.values.push_back(float(r));
        merit.color = IM_COL32(240, 90, 240, 255);
        PlotOptions mo;
        mo.logY = true;
        mo.xLabel = st.newtonIterations > 0 ? "Newton iteration" : "iteration";
        mo.height = 90 * k;
        ImGui::Text("CCP merit (natural residual, m/s) per iteration");
        plotWidget("ccp", {merit}, mo);
    }
    if (st.ccpMerit.empty() || !st.linearResidual.empty()) {   // the Newton solves' plots
        std::vector<PlotSeries> series;
        int n = (int)st.linearResidual.size();
        for (int k = 0; k < n; ++k) {
            PlotSeries s;
            s.name = n <= 8 || k == 0 || k == n - 1 ? "Newton " + std::to_string(k + 1) : "";
            for (Real r : st.linearResidual[k]) s.values.push_back(float(r));
            s.color = plotRampColor(k, n);
            series.push_back(std::move(s));
        }
        PlotOptions o;
        o.logY = true;
        o.xLabel = "linear iteration";
        o.height = 150 * k;
        plotWidget("linear", series, o);
        ImGui::Text("NCP residual ||h|| per Newton iteration");
        PlotSeries newton;
        newton.name = "||h||";
        for (Real r : st.newtonResidual) newton.values.push_back(float(r));
        newton.color = IM_COL32(255, 210, 80, 255);
        o.xLabel = "Newton iteration";
        o.height = 90 * k;
        plotWidget("newton", {newton}, o);
    }

    // Time series over the last kHistory steps, one line per copy.
    auto timeSeries = [&](const char* id, const char* title, std::vector<float> SimCopy::*member) {
        ImGui::Text("%s", title);
        std::vector<PlotSeries> ss;
        for (int i = 0; i < copyCount(); ++i) {
            PlotSeries s;
            s.name = copies_[i]->label;
            s.values = (*copies_[i]).*member;
            s.color = kCopyColors[i];
            ss.push_back(std::move(s));
        }
        PlotOptions to;
        to.height = 70 * k;
        to.xLabel = "steps";
        to.legend = copyCount() > 1;
        plotWidget(id, ss, to);
    };
    timeSeries("steptime", "step time (ms)", &SimCopy::historyStepMs);
    timeSeries("penetration", "max penetration (mm)", &SimCopy::historyPenetration);
    timeSeries("energy", "kinetic energy (J)", &SimCopy::historyEnergy);
    ImGui::End();
}

void SandboxApp::drawHelpWindow() {
    ImGui::SetNextWindowPos(ImVec2(panelWidth_ + 20.f, 20.f), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.92f);
    if (!ImGui::Begin("Help", &view.help, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::End();
        return;
    }
    static const char* const keys[][2] = {
        {"left drag (body)", "drag it: a compliant spring to the cursor; release moving to throw"},
        {"shift + left drag", "rotate the grabbed body about its centre of mass"},
        {"left drag (empty)", "orbit the camera"},
        {"right / middle drag", "pan"},
        {"wheel", "zoom towards the point under the cursor"},
        {"click", "select a body, rigid or deformable (the Selected-body window)"},
        {"F", "frame the moving bodies (dynamic and deformable)"},
        {"C", "follow the selected body"},
        {"B / N", "launch a box / a sphere from the camera"},
        {"space", "pause / play"},
        {"right arrow", "step once"},
        {"R", "reset the scene"},
        {"+ / -", "simulation speed x2 / x0.5"},
        {"P or F12", "screenshot (PNG)"},
        {"M", "start / stop MP4 recording (ffmpeg)"},
        {"G", "plots"},
        {"I", "PLUS impact replay: round timeline, impulses, slow motion"},
        {"[ / ]", "impact replay: one interval back / forward"},
        {"H or F1", "this help"},
        {"Esc", "deselect"},
    };
    keyTable("keys", keys);
    drawGraspHelp();
    ImGui::End();
}

void SandboxApp::drawLegend() {
    // The entries of the layers shown (kLegend's order), then the contact models' own layers
    // for the models the copies run.
    std::vector<std::pair<const LegendEntry*, std::string>> entries;
    const DebugDrawFlags& f = view.draw;
    bool joints = !copies_.empty() && !copies_[0]->world.model().joints.empty();
    const bool shown[] = {f.contactPoints, f.contactPoints && f.penetration, f.contactNormals, f.frictionCones,
                          f.frictionCones, f.contactForces, f.dragSpring && dragging(), f.jointFrames && joints};
    static_assert(sizeof shown / sizeof shown[0] == sizeof kLegend / sizeof kLegend[0]);
    for (size_t i = 0; i < sizeof kLegend / sizeof kLegend[0]; ++i) {
        if (!shown[i]) continue;
        std::string text = kLegend[i].text;
        if (i == 0 && !f.femContacts && !copies_.empty() && !copies_[0]->world.model().femBodies.empty())
            text += " (rigid; node contacts off)";   // femViewDefaults (panels_fem.cpp)
        if (&kLegend[i] == &kLegend[5]) {
            // The force scale: the length of one mean body weight (view_scale.h).
            char scale[96];
            float weight = overlayScale_.typicalWeight;
            if (weight > 0)
                std::snprintf(scale, sizeof scale, weight >= 100 ? ": %.2g m = %.0f N" : ": %.2g m = %.3g N",
                              double(f.forceScale * weight), double(weight));
            else std::snprintf(scale, sizeof scale, ": 1 m = %.3g N", double(1.f / f.forceScale));
            text += scale;
        }
        entries.push_back({&kLegend[i], text});
    }
    bool peg = false, plus = false;
    for (auto& c : copies_) {
        peg |= c->world.settings.solver.contactModel == ContactModelType::PEG;
        plus |= c->world.settings.solver.contactModel == ContactModelType::PLUS;
    }
    if (f.constraintGroups && peg)
        for (const LegendEntry& e : kPegLegend) entries.push_back({&e, e.text});
    if (f.constraintGroups && plus)
        for (const LegendEntry& e : kPlusLegend) entries.push_back({&e, e.text});
    bool asleep = false;
    for (auto& c : copies_) asleep |= view.greyAsleep && c->world.sleepingBodies() > 0;
    if (asleep) entries.push_back({&kAsleepLegend, kAsleepLegend.text});
    legendShown_.clear();
    for (auto& entry : entries) legendShown_.push_back(entry.second);   // ui report: what it lists, folded or not
    if (entries.empty()) return;

    // Bottom left of the views, clear of the plots and the selection (right).
    float bottom = tableHeight() + impactPanelHeight();
    float left = view.settingsPanel ? panelWidth_ : 0.f;
    ImGui::SetNextWindowPos(ImVec2(left + 10.f, float(fbHeight_) - bottom - 10.f), ImGuiCond_Always, ImVec2(0.f, 1.f));
    ImGui::SetNextWindowBgAlpha(0.6f);
    // With several copies the views are small and the legend would cover most of the bottom-left
    // one: there it is a window with a title bar that starts folded (click it to open).
    ImGuiWindowFlags flags = ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoFocusOnAppearing;
    const bool folding = copyCount() > 1;
    if (folding) ImGui::SetNextWindowCollapsed(true, ImGuiCond_Appearing);
    else flags |= ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoInputs;
    if (!ImGui::Begin("Legend", nullptr, flags)) {
        ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
        uiRects_["legend"] = UiRect{p.x, p.y, sz.x, sz.y};
        ImGui::End();
        return;
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (auto& [e, text] : entries) {
        ImVec2 p = ImGui::GetCursorScreenPos();
        dl->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + 14, p.y + 13), ImGui::ColorConvertFloat4ToU32(e->color));
        ImGui::Dummy(ImVec2(18, 14));
        ImGui::SameLine();
        ImGui::TextUnformatted(text.c_str());
    }
    ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
    uiRects_["legend"] = UiRect{p.x, p.y, sz.x, sz.y};
    ImGui::End();
}

void SandboxApp::appendLargeSceneNote(char* line, size_t size) const {
    size_t n = std::strlen(line);
    if (undrawnContacts_ > 0 && n < size)
        n += std::snprintf(line + n, size - n, "   %zu contacts, not drawn", undrawnContacts_);
    if (progressive_ && progressiveView_.buildFrames() > 1 && n < size)
        std::snprintf(line + n, size - n, "   view drawn over %d frames", progressiveView_.buildFrames());
}

void SandboxApp::drawHud() {
    if (!view.hud) return;
    ImDrawList* dl = ImGui::GetForegroundDrawList();
    for (int i = 0; i < copyCount() && i < (int)viewports_.size(); ++i) {
        const Viewport& vp = viewports_[i];
        float x = float(vp.x) + 10.f, y = float(fbHeight_ - vp.y - vp.height) + 8.f;
        char line[256];
        const World& w = copies_[i]->world;
        if (!view.settingsPanel)   // a recording: the scene's name too
            std::snprintf(line, sizeof line, "%s   %s   t = %.2f s", sceneInfo_.name.c_str(), copies_[i]->label.c_str(),
                          double(w.state().time));
        else if (copyCount() > 1)
            std::snprintf(line, sizeof line, "%s   t = %.2f s%s", copies_[i]->label.c_str(), double(w.state().time),
                          paused ? "   PAUSED" : "");
        else
            std::snprintf(line, sizeof line, "t = %.2f s%s", double(w.state().time), paused ? "   PAUSED" : "");
        if (i == 0 && view.settingsPanel) appendLargeSceneNote(line, sizeof line);
        // On a dark backing: the sky behind it is light near the horizon.
        const ImVec2 size = ImGui::CalcTextSize(line);
        dl->AddRectFilled(ImVec2(x - 5, y - 3), ImVec2(x + size.x + 5, y + size.y + 3), IM_COL32(20, 22, 26, 190), 3.f);
        dl->AddText(ImVec2(x, y), kCopyColors[i], line);
        if (i > 0) dl->AddLine(ImVec2(float(vp.x), float(fbHeight_ - vp.y - vp.height)),
                               ImVec2(float(vp.x), float(fbHeight_ - vp.y)), IM_COL32(10, 10, 12, 255), 2.f);
    }
    if (copies_.empty()) return;
    const DragState& d = copies_[0]->world.drag();
    if (dragging() && (d.body >= 0 || d.femTri >= 0)) {
        char text[64];
        std::snprintf(text, sizeof text, "%.1f N", double(length(d.force)));
        dl->AddText(ImVec2(float(mouseX_) + 14, float(mouseY_) - 6), IM_COL32(255, 255, 255, 255), text);
    }
    if (video_.isOpen() && !options_.out.size()) {
        float x = float(fbWidth_) - 80.f;
        dl->AddCircleFilled(ImVec2(x, 20), 7, IM_COL32(230, 30, 30, 255));
        dl->AddText(ImVec2(x + 12, 13), IM_COL32(255, 255, 255, 255), "REC");
    }
}

}  // namespace cs
