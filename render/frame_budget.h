// How much of a frame the progressive view's build may take (progressive_view.h; issue 20: the
// app's frames under 33 ms while a 20,000-box pile steps).
//
// A frame is the view's build slices plus the rest: the blit, the debug layers, the UI, the
// swap, an adopted physics job. The rest varies (the contact layers grow with the contacts to
// 5-10 ms on llvmpipe, a busy machine stretches everything), so a fixed slice budget let frames
// run to 40-45 ms on an idle 2-core machine. The budget is instead what the target frame leaves
// after the rest, estimated from the frames before: each frame's rest (its time less its slices)
// raises the estimate at once and lowers it by a tenth of the gap per frame, so a spike keeps
// the budget down for a few frames and the estimate leans to the long frames. The budget stays
// within [minMs, maxMs]: the build always moves on, and a frame with room gives the build no more
// than before (the median frame is not made longer).
#pragma once

#include <algorithm>

namespace cs {

struct FrameBudget {
    double targetMs = 21;    // the frame the budget aims at, under 33 ms with a margin for overruns
                             // (25 before: p95 1-3 ms longer, max within the noise; docs/speed.md)
    double minMs = 4, maxMs = 12;
    double restMs = 0;       // estimated time of a frame outside the view's build

    // The last frame took frameMs, of which viewMs in the build's slices.
    void observe(double frameMs, double viewMs) {
        const double rest = std::max(0.0, frameMs - viewMs);
        restMs = std::max(rest, 0.9 * restMs + 0.1 * rest);
    }
    double viewBudgetMs() const { return std::clamp(targetMs - restMs, minMs, maxMs); }
};

}  // namespace cs
