// A small line-plot widget of the project's own, drawn on an ImDrawList (Debian's ImGui 1.86 has
// no ImPlot): several series, linear or log10 y axis, axis labels at the ends, a legend, and a
// hover readout. Used for the convergence plot (residual against iteration, one line per Newton
// iteration, as in [NSN] figures 11 and 18) and for the time series of step time, penetration
// and energy.
#pragma once

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
    const char* yFormat = "%.3g";
    float height = 150;
    bool legend = true;
    bool legendLeft = false;       // legend in the top-left corner (rising curves)
    float markerX = -1;            // >= 0: a vertical cursor at this x (the impact replay's interval)
};

// Draws the plot into the current ImGui window at the cursor, full available width.
void plotWidget(const char* id, const std::vector<PlotSeries>& series, const PlotOptions& options);

// A colour for series i of n (a perceptual ramp from blue to orange).
unsigned plotRampColor(int i, int n);

}  // namespace cs
