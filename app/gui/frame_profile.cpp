// The per-frame breakdown's CSV; see frame_profile.h.
#include "app/gui/frame_profile.h"

#include <cerrno>
#include <cstring>

namespace cs {

namespace {

const char* const kPartNames[] = {"poll", "begin", "adopt",  "launch", "advance",  "gather",    "view_key", "view_start",
                                  "view_slices", "blit",   "layers", "ui_build", "ui_render", "swap", "pace"};
static_assert(sizeof kPartNames / sizeof kPartNames[0] == size_t(FramePart::Count), "a name per part");

}  // namespace

FrameProfile::~FrameProfile() {
    if (file_) std::fclose(file_);
}

bool FrameProfile::open(const std::string& path, std::string* error) {
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) {
        *error = "cannot write the frame profile " + path + ": " + std::strerror(errno);
        return false;
    }
    std::fprintf(file_, "%s\n", header().c_str());
    return true;
}

void FrameProfile::beginFrame() {
    start_ = Clock::now();
    for (double& m : ms_) m = 0;
    slices_ = 0;
    budgetMs_ = 0;
    adopted_ = built_ = done_ = false;
    steps_ = FrameSteps{};
}

void FrameProfile::endFrame(int frame) {
    if (!file_) return;
    const double total = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
    std::fprintf(file_, "%s\n", row(frame, total, ms_, slices_, budgetMs_, adopted_, built_, done_, steps_).c_str());
}

std::string FrameProfile::header() {
    std::string h = "frame,total_ms";
    for (const char* name : kPartNames) h += std::string(",") + name;
    return h + ",other,slices,budget_ms,adopted,built,done,sim_s,asked,dropped_ms,stepped,step_ms,drag,title";
}

std::string FrameProfile::row(int frame, double totalMs, const double* partMs, int slices, double budgetMs,
                              bool adopted, bool built, bool done, const FrameSteps& steps) {
    char cell[96];
    std::snprintf(cell, sizeof cell, "%d,%.3f", frame, totalMs);
    std::string r = cell;
    double sum = 0;
    for (int i = 0; i < int(FramePart::Count); ++i) {
        std::snprintf(cell, sizeof cell, ",%.3f", partMs[i]);
        r += cell;
        sum += partMs[i];
    }
    std::snprintf(cell, sizeof cell, ",%.3f,%d,%.2f,%d,%d,%d", totalMs - sum, slices, budgetMs, adopted ? 1 : 0,
                  built ? 1 : 0, done ? 1 : 0);
    r += cell;
    std::snprintf(cell, sizeof cell, ",%.6f,%d,%.3f,%d,%.3f,%d,%.3f", steps.simS, steps.asked, steps.droppedMs,
                  steps.stepped, steps.stepMs, steps.drag ? 1 : 0, steps.title);
    return r + cell;
}

}  // namespace cs
