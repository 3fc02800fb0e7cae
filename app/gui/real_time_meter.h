// The title's "x real time" (issue 35: what the title shows is what the physics thread achieves):
// simulated seconds per wall second over the last ~2 s, from (wall time, simulated time) pairs
// taken where steps end. The app adds one at the end of each physics-thread job (its own clock,
// so when the UI thread takes the job does not enter) or after the UI thread's own steps.
//
// The window keeps the newest sample at least `window` older than the last one, so the figure
// spans 2 s or a little more (with steps of seconds, the two last steps). A time that goes back
// (a reset, a new scene) starts the window again. When no step has ended for half a window (a
// step of seconds in progress) the wall time runs on to `now`, so the figure falls while the
// physics thread is in its step rather than showing the last window's.
#pragma once

#include <chrono>
#include <deque>
#include <utility>

namespace cs {

struct RealTimeMeter {
    using Clock = std::chrono::steady_clock;
    Clock::duration window = std::chrono::seconds(2);
    std::deque<std::pair<Clock::time_point, double>> samples;   // (wall, simulated s)
    double last = 0;   // the last figure, shown while the window holds a single sample

    void clear() { samples.clear(); }
    void add(Clock::time_point when, double sim) {
        if (!samples.empty() && sim < samples.back().second) samples.clear();
        samples.push_back({when, sim});
        while (samples.size() > 2 && when - samples[1].first > window) samples.pop_front();
    }
    // Simulated s per wall s; 0 before any step.
    double factor(Clock::time_point now) {
        if (samples.size() < 2) return samples.empty() ? 0.0 : last;
        auto end = samples.back().first;
        if (now - end > window / 2) end = now;
        const double wall = std::chrono::duration<double>(end - samples.front().first).count();
        last = wall > 0 ? (samples.back().second - samples.front().second) / wall : 0.0;
        return last;
    }
};

}  // namespace cs
