// Colours and small helpers shared by the ImGui windows (panels.cpp, panels_views.cpp).
#pragma once

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
    {{1.0f, 0.5f, 0.0f, 1}, "contact force"},
    {{1.0f, 1.0f, 1.0f, 1}, "drag spring"},
    {{1.0f, 0.3f, 1.0f, 1}, "joint"},
};

// A "(?)" after the last item with a tooltip.
inline void helpMarker(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

}  // namespace cs
