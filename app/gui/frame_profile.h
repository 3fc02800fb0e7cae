// The app's per-frame breakdown (`sandbox gui --frame-profile FILE.csv`, issue 20: frames under
// 33 ms while a 20,000-box pile steps). Each frame's wall time is split into the parts of the
// loop, each timed on the UI thread with a steady clock, and written as one CSV row:
//
//   poll        glfwPollEvents (input callbacks included)
//   begin       the frame's start in render: layout, the frame's clear, ImGui's new frame
//   adopt       taking a finished physics job: the swap of the worlds, events applied again,
//               the statistics (physics_thread.cpp)
//   launch      filling the physics thread's world from the UI's and starting the job
//   advance     the rest of SandboxApp::advance (synchronous steps when not in the background)
//   gather      the world's shape transforms into instance arrays (SceneRenderer::gatherInstances)
//   view_key    the progressive view's key (a hash of the instances and the camera)
//   view_start  the start of a progressive build: instance upload, shadow pass, clear
//   view_slices the build's slices, each drawn and finished (glFinish); `slices` counts them
//   blit        the complete image onto the frame (progressive), or the whole shaded pass
//   layers      the debug layers: world.draw, the overlays, their draw and texts
//   ui_build    ImGui's frame: panels, HUD, ImGui::Render
//   ui_render   ImGui's draw data to GL
//   swap        glfwSwapBuffers: the present
//   pace        real time: the wait for the physics job and the frame-rate cap (SandboxApp::paceFrame)
//   other       the frame's time outside these parts (the loop, scripts, screenshots)
//
// On llvmpipe a GL call only queues work, drawn when flushed: with the profile on, the app ends
// each GL part (blit, layers, ui_render) with glFinish, so that its drawing is in its own column
// and not in the swap's (the view's slices are finished anyway). The columns after `other` say
// what happened in the frame: slices (the build's slice count), budget_ms (their budget,
// frame_budget.h; 0: no progressive view), adopted (a job taken), built (a progressive build
// started), done (one completed); then the stepping: sim_s (copy 0's simulated time after the
// frame's advance), asked (the steps the frame asked for), dropped_ms (simulated ms the frame
// let go: the accumulator's cap, slower than real time), stepped (the steps of the job it took)
// step_ms (the physics thread's wall ms per step in that job), drag (1 while the cursor holds a
// body) and title (the title's x real time).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace cs {

enum class FramePart {
    Poll, Begin, Adopt, Launch, Advance, Gather, ViewKey, ViewStart, ViewSlices, Blit, Layers, UiBuild, UiRender, Swap,
    Pace, Count
};

// A frame's stepping (the columns after `done`).
struct FrameSteps {
    double simS = 0;
    int asked = 0;
    double droppedMs = 0;
    int stepped = 0;
    double stepMs = 0;
    bool drag = false;   // the cursor holds a body
    double title = 0;    // the title's x real time (real_time_meter.h)
};

class FrameProfile {
public:
    ~FrameProfile();
    // Opens FILE for writing and writes the header; false with a one-line *error.
    bool open(const std::string& path, std::string* error);
    bool isOpen() const { return file_ != nullptr; }

    void beginFrame();
    void add(FramePart part, double ms) { ms_[int(part)] += ms; }
    double part(FramePart part) const { return ms_[int(part)]; }
    void countSlices(int n) { slices_ += n; }
    void setViewBudget(double ms) { budgetMs_ = ms; }
    void markAdopted() { adopted_ = true; }
    void markBuild(bool started, bool done) { built_ |= started; done_ |= done; }
    FrameSteps& steps() { return steps_; }
    // Writes the frame's row: its time since beginFrame and each part.
    void endFrame(int frame);

    // The CSV's header line (no newline), and a row for the given times.
    static std::string header();
    static std::string row(int frame, double totalMs, const double* partMs, int slices, double budgetMs, bool adopted,
                           bool built, bool done, const FrameSteps& steps = {});

private:
    using Clock = std::chrono::steady_clock;
    std::FILE* file_ = nullptr;
    Clock::time_point start_;
    double ms_[int(FramePart::Count)] = {};
    int slices_ = 0;
    double budgetMs_ = 0;
    bool adopted_ = false, built_ = false, done_ = false;
    FrameSteps steps_;
};

// Adds the time from its construction to its destruction to `part`; nothing when profile is null.
class ProfileScope {
public:
    ProfileScope(FrameProfile* profile, FramePart part) : profile_(profile), part_(part) {
        if (profile_) start_ = std::chrono::steady_clock::now();
    }
    ~ProfileScope() {
        if (profile_)
            profile_->add(part_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
    }
    ProfileScope(const ProfileScope&) = delete;
    ProfileScope& operator=(const ProfileScope&) = delete;

private:
    FrameProfile* profile_;
    FramePart part_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace cs
