// A small line-plot widget of the project's own, drawn on an ImDrawList (Debian's ImGui 1.86 has
// no ImPlot): several series, linear or log10 y axis, axis labels at the ends, a legend, and a
// hover readout. Used for the convergence plot (residual against iteration, one line per Newton
// iteration, as in [NSN] figures 11 and 18) and for the time series of step time, penetration
// and energy.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace cs {

struct PlotSeries {
    std::string name;
    std::vector<float> values;     // y at x = xStart, xStart + 1, ...
    float xStart = 0;
    unsigned color = 0xffffffff;   // ImU32
};

struct PlotOptions {
    bool logY = false;
    const char* xLabel = "";
    float height = 150;
    bool legend = true;
    bool legendLeft = false;       // legend in the top-left corner (rising curves)
    float markerX = -1;            // >= 0: a vertical cursor at this x (the impact replay's interval)
};

// Draws the plot into the current ImGui window at the cursor, full available width.
void plotWidget(const char* id, const std::vector<PlotSeries>& series, const PlotOptions& options);

// The label of a linear axis tick at v, where ticks are `step` apart and the axis reaches
// |v| <= maxAbs: fixed point with as many decimals as the step needs (10^-d <= step), so that
// neighbouring ticks never read alike (a fixed "%.3f" showed 0.000 at every tick of a 1e-5 mm
// penetration plot); scientific notation for steps below 1e-4 or values of 1e5 and up, with as
// many digits as maxAbs / step needs.
inline std::string axisLabel(double v, double step, double maxAbs) {
    char text[32];
    if (!(step > 0) || !std::isfinite(v)) {
        std::snprintf(text, sizeof text, "%g", v);
    } else if (step < 1e-4 || maxAbs >= 1e5) {
        int digits = std::clamp(int(std::ceil(std::log10(std::max(maxAbs, step) / step) - 1e-9)), 1, 8);
        std::snprintf(text, sizeof text, "%.*e", digits, std::fabs(v) < step * 1e-6 ? 0.0 : v);
    } else {
        int decimals = std::clamp(int(std::ceil(-std::log10(step) - 1e-9)), 0, 4);
        std::snprintf(text, sizeof text, "%.*f", decimals, std::fabs(v) < step * 1e-6 ? 0.0 : v);
    }
    return text;
}

// A colour for series i of n (a perceptual ramp from blue to orange).
unsigned plotRampColor(int i, int n);

}  // namespace cs
