// The PLUS impact window; see impact_replay.h (the 3D overlay: impact_overlay.cpp).
//
// The window sits under the viewports (they shrink to make room, layoutViewports) in three
// columns: the replay controls and the colour key; the round timeline (one bar per round, one row
// per point coloured by its phase in each interval, the slip state as a stripe: [PLUS] table 2
// drawn along the intervals) with table 2 itself; and per-point plots of the impulse and the
// relative velocity over the intervals.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "app/gui/panel_style.h"
#include "app/gui/sandbox_app.h"
#include "render/plot_widget.h"

namespace cs {

namespace {

ImU32 u32(Color c) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, c.a)); }

// A colour swatch and its name on one line.
void swatch(Color c, const char* text) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + 12, p.y + 13), u32(c));
    ImGui::Dummy(ImVec2(15, 14));
    ImGui::SameLine();
    ImGui::TextUnformatted(text);
}


}  // namespace

float SandboxApp::impactPanelHeight() const {
    if (!view.impact) return 0.f;
    return std::clamp(0.42f * float(fbHeight_), 250.f, 360.f);
}

void SandboxApp::drawImpactWindow() {
    float x0 = view.settingsPanel ? panelWidth_ : 0.f;
    float bottom = tableHeight();
    float h = impactPanelHeight();
    ImGui::SetNextWindowPos(ImVec2(x0, float(fbHeight_) - bottom - h));
    ImGui::SetNextWindowSize(ImVec2(viewRight() - x0, h));
    ImGui::SetNextWindowBgAlpha(0.95f);
    if (!ImGui::Begin("PLUS impact replay (I)", &view.impact,
                      ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    ImpactReplay& r = impact;
    const PlusImpactRecord* rec = r.current();
    if (!rec || r.copy < 0 || r.copy >= copyCount()) {
        bool plus = false;
        for (auto& c : copies_) plus |= c->world.settings.solver.contactModel == ContactModelType::PLUS;
        ImGui::TextWrapped(plus ? "No impact yet: the window keeps the last impact the PLUS model resolves. Play the scene "
                                  "(space); it pauses at the next impact."
                                : "The contact model is not PLUS: choose 'plus' under Solver (or run with --model plus) "
                                  "to record impacts.");
        ImGui::Checkbox("pause on impact", &r.pauseOnImpact);
        ImGui::End();
        return;
    }
    const Model& model = copies_[r.copy]->world.model();
    const int n = r.intervals(), np = r.points();
    r.index = std::clamp(r.index, 0, n);

    if (ImGui::BeginTable("impact", 3, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp)) {
        ImGui::TableSetupColumn("controls", ImGuiTableColumnFlags_WidthFixed, 270.f);
        ImGui::TableSetupColumn("timeline", ImGuiTableColumnFlags_WidthStretch, 1.15f);
        ImGui::TableSetupColumn("plots", ImGuiTableColumnFlags_WidthStretch, 1.0f);
        ImGui::TableNextRow();

        // ---- controls --------------------------------------------------------------------------
        ImGui::TableNextColumn();
        ImGui::Text("%s: t = %.4f s, step %lld", copies_[r.copy]->label.c_str(), double(rec->time), r.tick);
        ImGui::Text("%d point%s, %d round%s, %d interval%s%s", np, np == 1 ? "" : "s", r.rounds(),
                    r.rounds() == 1 ? "" : "s", n, n == 1 ? "" : "s", rec->result.converged ? "" : " (guard hit)");
        if (r.records.size() > 1) {
            ImGui::SetNextItemWidth(120);
            if (ImGui::SliderInt("island", &r.selected, 0, int(r.records.size()) - 1)) r.index = 0;
        }
        ImGui::SetNextItemWidth(-1);
        if (ImGui::SliderInt("##index", &r.index, 0, n, r.index == 0 ? "before the impact" : "interval %d")) {
            paused = true;
            r.playing = false;
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Replay index: 0 is before the impact; keys [ and ] step it.");
        if (ImGui::Button("|<")) r.index = 0, r.playing = false;
        ImGui::SameLine();
        if (ImGui::Button("<")) r.index = std::max(0, r.index - 1), r.playing = false;
        ImGui::SameLine();
        if (ImGui::Button(r.playing ? "pause" : "play ")) {
            if (!r.playing && r.index >= n) r.index = 0;
            r.playing = !r.playing;
            paused = true;
        }
        ImGui::SameLine();
        if (ImGui::Button(">")) r.index = std::min(n, r.index + 1), r.playing = false, paused = true;
        ImGui::SameLine();
        if (ImGui::Button(">|")) r.index = n, r.playing = false;
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-1);
        ImGui::SliderFloat("##rate", &r.rate, 0.5f, 60.f, "%.3g/s", ImGuiSliderFlags_Logarithmic);
        if (r.index > 0) {
            const ImpactInterval& it = rec->result.trace[r.index - 1];
            static const char* kLimit[] = {"end of phase", "alpha_CP", "alpha_DC"};
            ImGui::Text("round %d, alpha = %.3g (%s)", it.round + 1, double(it.alpha), kLimit[std::clamp(it.limitedBy, 0, 2)]);
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("The interval's step length: 1 at the end of a phase; alpha_CP (eq. 2.13) when a sliding "
                                  "point reaches rolling; alpha_DC (eq. 2.14) when a sliding direction turns by theta_max.");
        } else {
            ImGui::TextDisabled("before the impact: velocities at its start");
        }
        if (ImGui::Button("frame impact")) frameImpact();
        ImGui::SameLine();
        ImGui::Checkbox("3D arrows", &r.overlay);
        ImGui::SameLine();
        ImGui::Checkbox("pause", &r.pauseOnImpact);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Pause the simulation when the next impact is resolved.");
        ImGui::SetNextItemWidth(120);
        if (ImGui::SliderFloat("arrow length (m)", &r.arrowLength, 0.05f, 2.f, "%.2f", ImGuiSliderFlags_Logarithmic))
            r.autoArrowLength = false;
        // Colour key: phase (point markers, timeline cells) and slip state (arrows, stripes).
        ImGui::BeginGroup();
        for (int p = 0; p < 3; ++p) swatch(kImpactPhaseColors[p], impactPhaseName(p));
        ImGui::EndGroup();
        ImGui::SameLine(120);
        ImGui::BeginGroup();
        for (int s = 0; s < 3; ++s) swatch(kImpactStateColors[s], slipStateName(s));
        ImGui::EndGroup();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        ImGui::TextWrapped("Arrows: impulse solid, relative velocity dashed (slip-state colour); body velocity white.");
        ImGui::PopStyleColor();

        // ---- round timeline and table 2 ----------------------------------------------------------
        ImGui::TableNextColumn();
        drawImpactTimeline();

        // ---- plots -------------------------------------------------------------------------------
        ImGui::TableNextColumn();
        std::vector<PlotSeries> impulses, velocities;
        for (int k = 0; k < np && k < 12; ++k) {
            PlotSeries a, b;
            // Named when few; else the first and last of the colour ramp.
            if (np <= 6 || k == 0 || k == np - 1) a.name = b.name = r.pointName(model, k);
            a.color = b.color = plotRampColor(k, np);
            for (int i = 0; i <= n; ++i) {
                Vec3 pi = r.impulse(k, i), v = r.velocity(k, i);
                // Rounding noise (1e-16) shown as zero, so the axis reads 0.
                auto clean = [](double x) { return float(std::fabs(x) < 1e-12 ? 0.0 : x); };
                a.values.push_back(clean(r.impulsePlot == 0 ? pi.z : std::sqrt(pi.x * pi.x + pi.y * pi.y)));
                b.values.push_back(clean(r.velocityPlot == 0 ? std::sqrt(v.x * v.x + v.y * v.y) : v.z));
            }
            impulses.push_back(std::move(a));
            velocities.push_back(std::move(b));
        }
        float plotHeight = std::max(60.f, (ImGui::GetContentRegionAvail().y - 2 * ImGui::GetFrameHeightWithSpacing()) / 2.f - 6.f);
        PlotOptions o;
        o.xLabel = "interval";
        o.height = plotHeight;
        o.markerX = float(r.index);
        o.legendLeft = true;
        ImGui::SetNextItemWidth(240);
        ImGui::Combo("##impulsePlot", &r.impulsePlot, "normal impulse pi_z, N s\0tangential impulse |pi_xy|, N s\0");
        plotWidget("impulse", impulses, o);
        o.legend = false;
        ImGui::SetNextItemWidth(240);
        ImGui::Combo("##velocityPlot", &r.velocityPlot, "tangential speed |v_xy|, m/s\0normal velocity v_z, m/s\0");
        plotWidget("velocity", velocities, o);
        ImGui::EndTable();
    }
    ImGui::End();
}

// One row per point, one column per interval, coloured by phase with a slip-state stripe; above,
// one bar per round. Clicking or dragging sets the replay index. Then [PLUS] table 2: the phase
// of each point in each round.
void SandboxApp::drawImpactTimeline() {
    ImpactReplay& r = impact;
    const PlusImpactRecord* rec = r.current();
    const Model& model = copies_[r.copy]->world.model();
    const int n = r.intervals(), np = r.points();
    ImGui::Text("Round timeline (%d rounds)", r.rounds());
    helpMarker("[PLUS] section 3: each round labels each point compressing, expanding or observing; each interval "
               "labels each active point sliding, rolling or in impending slip (the stripe under each cell). Click or drag "
               "to pick an interval.");
    const float labelW = 110.f, rowH = 15.f, barH = 16.f;
    const int shownRows = std::min(np, 8);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    float width = std::max(100.f, ImGui::GetContentRegionAvail().x);
    float plotW = width - labelW;
    // Column boundaries xs[0..n]: every round gets at least minRound pixels (a one-interval
    // expansion next to a 124-interval compression stays visible), the rest in proportion to
    // its intervals.
    const int roundCount = std::max(1, r.rounds());
    const float minRound = std::min(24.f, plotW / float(roundCount));
    std::vector<float> xs(n + 1, p0.x + labelW);
    for (int i = 0, start = 0; i < n; ++i) {
        if (i + 1 < n && rec->result.trace[i + 1].round == rec->result.trace[start].round) continue;
        int count = i + 1 - start;   // intervals start..i form one round
        float w = minRound + (plotW - minRound * float(roundCount)) * float(count) / float(n);
        for (int j = 1; j <= count; ++j) xs[start + j] = xs[start] + w * float(j) / float(count);
        start = i + 1;
    }
    auto cellX = [&](int interval) { return xs[std::clamp(interval, 0, n)]; };
    ImGui::InvisibleButton("timeline", ImVec2(width, barH + rowH * shownRows + 4));
    if (ImGui::IsItemActive() && n > 0) {
        float x = ImGui::GetIO().MousePos.x;
        int i = 1;
        while (i < n && x >= xs[i]) ++i;   // the interval whose column holds x
        r.index = x < xs[0] ? 0 : i;
        r.playing = false;
        paused = true;
    }
    // Round bars.
    int start = 0;
    for (int i = 1; i <= n; ++i) {
        if (i < n && rec->result.trace[i].round == rec->result.trace[start].round) continue;
        int round = rec->result.trace[start].round;
        ImVec2 a(cellX(start) + 1, p0.y), b(cellX(i) - 1, p0.y + barH - 2);
        dl->AddRectFilled(a, b, round % 2 ? IM_COL32(95, 100, 120, 255) : IM_COL32(70, 75, 92, 255), 2.f);
        char label[32];
        std::snprintf(label, sizeof label, "round %d", round + 1);
        if (ImGui::CalcTextSize(label).x > b.x - a.x - 4) std::snprintf(label, sizeof label, "%d", round + 1);
        if (ImGui::CalcTextSize(label).x <= b.x - a.x - 2)
            dl->AddText(ImVec2(a.x + 3, a.y), IM_COL32(235, 235, 235, 255), label);
        start = i;
    }
    // Point rows.
    for (int k = 0; k < shownRows; ++k) {
        float y = p0.y + barH + rowH * float(k);
        std::string name = r.pointName(model, k);
        dl->PushClipRect(ImVec2(p0.x, y), ImVec2(p0.x + labelW - 4, y + rowH), true);
        dl->AddText(ImVec2(p0.x, y), IM_COL32(210, 210, 210, 255), name.c_str());
        dl->PopClipRect();
        for (int i = 0; i < n; ++i) {
            const ImpactInterval& it = rec->result.trace[i];
            float xa = cellX(i), w = cellX(i + 1) - xa, xb = std::max(xa + w - (w > 4 ? 1.f : 0.f), xa + 1.f);
            dl->AddRectFilled(ImVec2(xa, y + 1), ImVec2(xb, y + rowH - 4), u32(impactPhaseColor(it.phase[k])));
            if (it.state[k] != int(SlipState::None))
                dl->AddRectFilled(ImVec2(xa, y + rowH - 4), ImVec2(xb, y + rowH - 1), u32(impactStateColor(it.state[k])));
        }
    }
    if (np > shownRows)
        dl->AddText(ImVec2(p0.x, p0.y + barH + rowH * shownRows - 2), IM_COL32(160, 160, 160, 255), "...");
    // The replay cursor: the end of the interval shown.
    float cx = cellX(r.index);
    dl->AddLine(ImVec2(cx, p0.y - 2), ImVec2(cx, p0.y + barH + rowH * shownRows + 2), IM_COL32(255, 255, 255, 255), 2.f);

    // [PLUS] table 2: rows points, columns rounds.
    const int nr = std::min(r.rounds(), 16);
    ImGui::Spacing();
    ImGui::Text("Table 2: phase per round");
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit;
    float tableH = std::max(40.f, ImGui::GetContentRegionAvail().y);
    if (nr > 0 && ImGui::BeginTable("table2", nr + 1, flags, ImVec2(0, tableH))) {
        ImGui::TableSetupScrollFreeze(1, 1);
        // Full names when they fit, else the first letters.
        const bool narrow = ImGui::GetContentRegionAvail().x < 110.f + 95.f * float(nr);
        ImGui::TableSetupColumn("points");
        for (int j = 0; j < nr; ++j) {
            char header[32];
            std::snprintf(header, sizeof header, narrow ? "r%d" : "round %d", j + 1);
            ImGui::TableSetupColumn(header);
        }
        ImGui::TableHeadersRow();
        std::vector<int> firstOfRound(nr, -1);
        for (int i = 0; i < n; ++i)
            if (rec->result.trace[i].round < nr && firstOfRound[rec->result.trace[i].round] < 0)
                firstOfRound[rec->result.trace[i].round] = i;
        const int current = r.round(r.index);
        for (int k = 0; k < np; ++k) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.pointName(model, k).c_str());
            for (int j = 0; j < nr; ++j) {
                ImGui::TableNextColumn();
                if (j == current) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, IM_COL32(60, 64, 80, 255));
                int ph = firstOfRound[j] >= 0 ? rec->result.trace[firstOfRound[j]].phase[k] : 2;
                Color c = impactPhaseColor(ph);
                static const char* kShort[] = {"comp.", "exp.", "obs."};
                ImGui::TextColored(ImVec4(c.r, c.g, c.b, 1), "%s", narrow ? kShort[std::clamp(ph, 0, 2)] : impactPhaseName(ph));
            }
        }
        ImGui::EndTable();
    }
}

}  // namespace cs
