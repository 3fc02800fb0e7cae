// The app's frame under 33 ms while a 20,000-box pile steps (issue 20): the progressive view's
// slice budget from what the rest of the frame leaves (render/frame_budget.h), and the rows of
// `sandbox gui --frame-profile` (app/gui/frame_profile.h). The frame times themselves are
// measured in the running app (scripts/bench_gui_frames.sh; ctest gui_pile checks the profile).
#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "app/gui/frame_profile.h"
#include "app/gui/real_time_meter.h"
#include "render/frame_budget.h"

using namespace cs;

namespace {

std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream in(line);
    for (std::string c; std::getline(in, c, ',');) out.push_back(c);
    return out;
}

}  // namespace

TEST_CASE("frame budget: the view's build gets what the target frame leaves, within its bounds") {
    FrameBudget b;   // target 21 ms, budget in [4, 12]
    REQUIRE(b.targetMs == 21);
    CHECK(b.viewBudgetMs() == doctest::Approx(12));
    // A frame of 20 ms, 12 of them the build's: the rest (8 ms) leaves 21 - 8 = 13, capped at 12.
    b.observe(20, 12);
    CHECK(b.restMs == doctest::Approx(8));
    CHECK(b.viewBudgetMs() == doctest::Approx(12));
    // The contact layers grow: a frame of 26 ms with 12 of build leaves 21 - 14 = 7.
    b.observe(26, 12);
    CHECK(b.restMs == doctest::Approx(14));
    CHECK(b.viewBudgetMs() == doctest::Approx(7));
    // A frame of 60 ms outside the build (a busy machine): the floor, the build still moves on.
    b.observe(64, 4);
    CHECK(b.viewBudgetMs() == doctest::Approx(4));
}

TEST_CASE("frame budget: a long rest counts at once and fades by a tenth of the gap per frame") {
    FrameBudget b;
    b.observe(40, 10);   // rest 30
    CHECK(b.restMs == doctest::Approx(30));
    // Then frames with a rest of 8 ms: the estimate falls towards 8, never below it.
    double previous = b.restMs;
    int frames = 0;
    while (b.viewBudgetMs() < 12 && frames < 100) {
        b.observe(16, 8);
        CHECK(b.restMs < previous);
        CHECK(b.restMs >= 8);
        CHECK(b.restMs == doctest::Approx(0.9 * previous + 0.1 * 8));
        previous = b.restMs;
        ++frames;
    }
    // A full budget needs a rest of at most 21 - 12 = 9 ms: 8 + 0.9^n * 22 <= 9 first at n = 30.
    CHECK(frames == 30);
    CHECK(b.viewBudgetMs() == doctest::Approx(12));
}

TEST_CASE("frame profile: a header and rows of the same columns; other is the time outside the parts") {
    const std::vector<std::string> head = cells(FrameProfile::header());
    REQUIRE(head.size() == 2 + size_t(FramePart::Count) + 6 + 7);
    CHECK(head[0] == "frame");
    CHECK(head[1] == "total_ms");
    CHECK(head[2] == "poll");
    CHECK(head[2 + int(FramePart::ViewSlices)] == "view_slices");
    CHECK(head[2 + int(FramePart::Swap)] == "swap");
    CHECK(head[2 + int(FramePart::Count)] == "other");

    double parts[int(FramePart::Count)] = {};
    parts[int(FramePart::ViewSlices)] = 11.5;
    parts[int(FramePart::UiRender)] = 4.25;
    parts[int(FramePart::Swap)] = 0.75;
    FrameSteps steps;
    steps.simS = 4.125;
    steps.asked = 30;
    steps.droppedMs = 12.5;
    steps.stepped = 7;
    steps.stepMs = 0.25;
    steps.drag = true;
    steps.title = 0.875;
    const std::vector<std::string> row = cells(FrameProfile::row(42, 20, parts, 3, 11.25, true, false, true, steps));
    REQUIRE(row.size() == head.size());
    auto at = [&](const char* name) {
        for (size_t i = 0; i < head.size(); ++i)
            if (head[i] == name) return row[i];
        return std::string("?");
    };
    CHECK(at("frame") == "42");
    CHECK(std::stod(at("total_ms")) == doctest::Approx(20));
    CHECK(std::stod(at("view_slices")) == doctest::Approx(11.5));
    CHECK(std::stod(at("other")) == doctest::Approx(20 - 11.5 - 4.25 - 0.75));
    CHECK(at("slices") == "3");
    CHECK(std::stod(at("budget_ms")) == doctest::Approx(11.25));
    CHECK(at("adopted") == "1");
    CHECK(at("built") == "0");
    CHECK(at("done") == "1");
    CHECK(std::stod(at("sim_s")) == doctest::Approx(4.125));
    CHECK(at("asked") == "30");
    CHECK(std::stod(at("dropped_ms")) == doctest::Approx(12.5));
    CHECK(at("stepped") == "7");
    CHECK(std::stod(at("step_ms")) == doctest::Approx(0.25));
    CHECK(at("drag") == "1");
    CHECK(std::stod(at("title")) == doctest::Approx(0.875));
}

TEST_CASE("real-time meter: simulated over wall time across the last 2 s of step ends") {
    using namespace std::chrono;
    RealTimeMeter m;
    const auto t0 = steady_clock::time_point{} + seconds(100);
    CHECK(m.factor(t0) == 0);   // no step yet
    // 5 s of jobs ending every 30 ms, each 25 ms of simulated time (3 steps of 8.33 ms): 0.833x.
    double sim = 0;
    auto t = t0;
    for (int i = 0; i < 167; ++i) {
        t += milliseconds(30);
        sim += 0.025;
        m.add(t, sim);
    }
    CHECK(m.factor(t) == doctest::Approx(0.025 / 0.030).epsilon(1e-9));
    CHECK(duration<double>(m.samples.back().first - m.samples.front().first).count() == doctest::Approx(2.01).epsilon(0.02));
    // Then 1 s at half speed: the window holds 1 s of each.
    for (int i = 0; i < 50; ++i) {
        t += milliseconds(20);
        sim += 0.010;
        m.add(t, sim);
    }
    const double span = duration<double>(t - m.samples.front().first).count();
    const double expect = (0.5 + (span - 1.0) * 0.025 / 0.030) / span;
    CHECK(m.factor(t) == doctest::Approx(expect).epsilon(1e-9));
    CHECK(m.factor(t) < 0.7);
    // A step in progress for 3 s: the figure falls with the wall time up to now.
    const double before = m.factor(t);
    CHECK(m.factor(t + milliseconds(900)) == doctest::Approx(before));   // under half a window: the last step's end
    CHECK(m.factor(t + seconds(3)) < 0.5 * before);
    // A reset (the time goes back): one sample, the last figure kept until the next.
    m.add(t + seconds(3), 0.0);
    CHECK(m.samples.size() == 1);
    CHECK(m.factor(t + seconds(3)) > 0);
    m.add(t + seconds(3) + milliseconds(100), 0.1);
    CHECK(m.factor(t + seconds(3) + milliseconds(100)) == doctest::Approx(1.0));
}
