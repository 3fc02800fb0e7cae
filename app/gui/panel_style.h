// Colours and small helpers shared by the ImGui windows (panels.cpp, panels_views.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include <imgui.h>

#include "engine/world.h"

namespace cs {

// One colour per copy: labels, table rows and plot lines.
inline const unsigned kCopyColors[] = {IM_COL32(90, 160, 255, 255), IM_COL32(255, 150, 60, 255),
                                       IM_COL32(110, 210, 110, 255), IM_COL32(230, 100, 200, 255)};

// The colours of contact_model.cpp's drawing and world_draw.cpp, for the legend.
struct LegendEntry {
    ImVec4 color;
    const char* text;
};
inline const LegendEntry kLegend[] = {
    {{1.0f, 0.85f, 0.1f, 1}, "contact point"},
    {{1.0f, 0.1f, 0.1f, 1}, "penetrating contact"},
    {{0.2f, 0.6f, 1.0f, 1}, "normal (length ~ impulse)"},
    {{0.1f, 0.9f, 0.3f, 1}, "friction cone: sticking"},
    {{1.0f, 0.3f, 0.2f, 1}, "friction cone: slipping"},
    {{1.0f, 0.5f, 0.0f, 1}, "contact force"},   // the legend appends the scale
    {{1.0f, 1.0f, 1.0f, 1}, "drag spring"},
    {{1.0f, 0.3f, 1.0f, 1}, "joint"},
};
// peg_draw.cpp's constraint groups ([PEG] sections 3-5), shown when a copy runs PEG.
inline const LegendEntry kPegLegend[] = {
    {{0.55f, 0.65f, 0.8f, 1}, "PEG U: a single feature pair"},
    {{0.1f, 0.9f, 0.95f, 1}, "PEG I: vertex over several faces"},
    {{0.95f, 0.2f, 0.9f, 1}, "PEG X: edge-edge with its face gaps"},
    {{1.0f, 0.15f, 0.15f, 1}, "PEG: SM trap (labelled)"},
};
// scene_renderer.cpp's colour of a sleeping body (islands.h), shown while a copy has one.
inline const LegendEntry kAsleepLegend{{0.45f, 0.45f, 0.45f, 1},
                                       "asleep (greyed, its last contacts shown; a touch or a drag wakes it)"};
// plus_model.cpp's impact phases, shown when a copy runs PLUS.
inline const LegendEntry kPlusLegend[] = {
    {{1.0f, 0.3f, 0.2f, 1}, "PLUS: compressing"},
    {{0.2f, 0.8f, 1.0f, 1}, "PLUS: expanding"},
    {{0.7f, 0.7f, 0.7f, 1}, "PLUS: observing"},
};

// A two-column table of keys (highlighted) and what they do: the Help window's and the gripper's.
template <size_t N>
inline void keyTable(const char* id, const char* const (&keys)[N][2]) {
    if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_RowBg)) return;
    for (const auto& k : keys) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextColored(ImVec4(1.f, 0.85f, 0.4f, 1.f), "%s", k[0]);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(k[1]);
    }
    ImGui::EndTable();
}

// The "(?)" markers drawn this frame and the last tooltip's rectangle (x, y, w, h): scripted
// tests hover a marker and check that its tooltip stays on the screen.
struct HelpMarkers {
    std::vector<ImVec4> markers;
    ImVec4 tooltip{0, 0, 0, 0};
};
inline HelpMarkers& helpMarkers() {
    static HelpMarkers markers;
    return markers;
}

// A tooltip wrapped at 32 characters' widths (about 420 px), so it stays on a 1280 px screen.
inline void wrappedTooltip(const char* text) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    helpMarkers().tooltip = ImVec4(p.x, p.y, s.x, s.y);
    ImGui::EndTooltip();
}

// A "(?)" after the last item with a wrapped tooltip.
inline void helpMarker(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    helpMarkers().markers.push_back(ImVec4(a.x, a.y, b.x - a.x, b.y - a.y));
    if (ImGui::IsItemHovered()) wrappedTooltip(text);
}

}  // namespace cs
