// ImDrawList line plots; see plot_widget.h.
#include "render/plot_widget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

namespace cs {

unsigned plotRampColor(int i, int n) {
    float t = n > 1 ? float(i) / float(n - 1) : 0.f;
    ImVec4 a(0.30f, 0.55f, 0.95f, 1.f), b(0.98f, 0.60f, 0.20f, 1.f);
    return ImGui::ColorConvertFloat4ToU32(ImVec4(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t,
                                                 a.z + (b.z - a.z) * t, 1.f));
}

void plotWidget(const char* id, const std::vector<PlotSeries>& series, const PlotOptions& options) {
    ImGui::PushID(id);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p0 = ImGui::GetCursorScreenPos();
    float width = std::max(120.f, ImGui::GetContentRegionAvail().x);
    ImVec2 size(width, options.height);
    ImGui::InvisibleButton("plot", size);
    bool hovered = ImGui::IsItemHovered();
    ImVec2 p1(p0.x + size.x, p0.y + size.y);
    dl->AddRectFilled(p0, p1, IM_COL32(20, 22, 26, 255));
    dl->AddRect(p0, p1, IM_COL32(90, 90, 100, 255));

    // Data range; log axes ignore non-positive values.
    float xMin = 1e30f, xMax = -1e30f, yMin = 1e30f, yMax = -1e30f;
    auto mapY = [&](float y) { return options.logY ? std::log10(std::max(y, 1e-30f)) : y; };
    for (const PlotSeries& s : series) {
        for (size_t i = 0; i < s.values.size(); ++i) {
            float y = s.values[i];
            if (!std::isfinite(y) || (options.logY && y <= 0)) continue;
            xMin = std::min(xMin, s.xStart + i);
            xMax = std::max(xMax, s.xStart + i);
            yMin = std::min(yMin, mapY(y));
            yMax = std::max(yMax, mapY(y));
        }
    }
    if (xMin > xMax) {
        dl->AddText(ImVec2(p0.x + 66, p0.y + 16), IM_COL32(160, 160, 160, 255), "no data");
        ImGui::PopID();
        return;
    }
    if (xMax - xMin < 1) xMax = xMin + 1;
    if (yMax - yMin < 1e-12f) {
        yMax += options.logY ? 0.5f : std::max(1e-6f, std::fabs(yMax) * 0.1f);
        yMin -= options.logY ? 0.5f : std::max(1e-6f, std::fabs(yMin) * 0.1f);
    }
    // Horizontal guides: each decade on a log axis, a few on a linear one; the left margin fits
    // the widest label.
    std::vector<std::pair<float, std::string>> ticks;   // (axis value, label)
    if (options.logY) {
        // Every decade, or every n-th where they would be closer than a text line.
        int first = (int)std::ceil(yMin), last = (int)std::floor(yMax);
        int stride = std::max(1, (int)std::ceil((last - first + 1) * 14.f / std::max(options.height - 26.f, 14.f)));
        for (int d = first; d <= last; ++d)
            if (d % stride == 0) ticks.push_back({float(d), "1e" + std::to_string(d)});
    } else {
        // Quarters, or halves where a plot is too low for five labels.
        const int parts = options.height - 26 >= 5 * 14 ? 4 : 2;
        double step = (double(yMax) - double(yMin)) / parts, maxAbs = std::max(std::fabs(yMin), std::fabs(yMax));
        for (int k = 0; k <= parts; ++k) {
            float v = yMin + (yMax - yMin) * k / float(parts);
            ticks.push_back({v, axisLabel(v, step, maxAbs)});
        }
    }
    float labelWidth = 0;
    for (auto& t : ticks) labelWidth = std::max(labelWidth, ImGui::CalcTextSize(t.second.c_str()).x);
    const float padL = std::max(40.f, labelWidth + 10.f), padR = 8, padT = 8, padB = 18;
    ImVec2 a(p0.x + padL, p0.y + padT), b(p1.x - padR, p1.y - padB);
    auto toScreen = [&](float x, float y) {
        return ImVec2(a.x + (x - xMin) / (xMax - xMin) * (b.x - a.x),
                      b.y - (mapY(y) - yMin) / (yMax - yMin) * (b.y - a.y));
    };
    for (auto& t : ticks) {
        float sy = b.y - (t.first - yMin) / (yMax - yMin) * (b.y - a.y);
        dl->AddLine(ImVec2(a.x, sy), ImVec2(b.x, sy), IM_COL32(60, 62, 70, 255));
        dl->AddText(ImVec2(p0.x + 4, sy - 7), IM_COL32(170, 170, 170, 255), t.second.c_str());
    }
    char label[64];
    std::snprintf(label, sizeof label, "%g", xMin);
    dl->AddText(ImVec2(a.x, b.y + 2), IM_COL32(170, 170, 170, 255), label);
    std::snprintf(label, sizeof label, "%g %s", xMax, options.xLabel);
    dl->AddText(ImVec2(b.x - ImGui::CalcTextSize(label).x, b.y + 2), IM_COL32(170, 170, 170, 255), label);

    dl->PushClipRect(a, ImVec2(b.x + 1, b.y + 1), true);
    for (const PlotSeries& s : series) {
        std::vector<ImVec2> pts;
        for (size_t i = 0; i < s.values.size(); ++i) {
            float y = s.values[i];
            if (!std::isfinite(y) || (options.logY && y <= 0)) continue;
            pts.push_back(toScreen(s.xStart + i, y));
        }
        if (pts.size() == 1) dl->AddCircleFilled(pts[0], 2.5f, s.color);
        else if (pts.size() > 1) dl->AddPolyline(pts.data(), (int)pts.size(), s.color, 0, 1.5f);
    }
    if (options.markerX >= 0 && options.markerX >= xMin && options.markerX <= xMax) {
        float sx = a.x + (options.markerX - xMin) / (xMax - xMin) * (b.x - a.x);
        dl->AddLine(ImVec2(sx, a.y), ImVec2(sx, b.y), IM_COL32(255, 255, 255, 200), 1.5f);
    }
    dl->PopClipRect();

    if (options.legend && series.size() <= 12) {
        float y = a.y + 2;
        for (const PlotSeries& s : series) {
            if (s.name.empty()) continue;
            ImVec2 ts = ImGui::CalcTextSize(s.name.c_str());
            float x = options.legendLeft ? a.x + 16 : b.x - ts.x - 4;
            dl->AddRectFilled(ImVec2(x - 12, y + 4), ImVec2(x - 4, y + 10), s.color);
            dl->AddText(ImVec2(x, y), IM_COL32(220, 220, 220, 255), s.name.c_str());
            y += ts.y;
        }
    }
    if (hovered) {
        ImVec2 m = ImGui::GetIO().MousePos;
        float x = xMin + (m.x - a.x) / (b.x - a.x) * (xMax - xMin);
        int xi = (int)std::lround(x);
        std::string tip;
        for (const PlotSeries& s : series) {
            int i = xi - (int)s.xStart;
            if (i < 0 || i >= (int)s.values.size()) continue;
            std::snprintf(label, sizeof label, "%s: %.4g\n", s.name.empty() ? "y" : s.name.c_str(), s.values[i]);
            tip += label;
        }
        if (!tip.empty()) ImGui::SetTooltip("x = %d\n%s", xi, tip.c_str());
    }
    ImGui::PopID();
}

}  // namespace cs
