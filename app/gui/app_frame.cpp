// One frame of the sandbox: stepping, the viewports, the debug layers, the UI, screenshots and
// recording; see sandbox_app.h.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include "app/gui/sandbox_app.h"
#include "engine/grasp/grasp_player.h"

namespace cs {

namespace {

// Views of more parts than this are drawn progressively (progressive_view.h), when one copy runs:
// llvmpipe draws about 40 boxes per ms at 1280x720 on the shared build machine, so a view of
// 2,000 still fits a 60 Hz frame. Of a frame's 33 ms, the view's build takes at most 12, less
// when the rest of the frame is long (frame_budget.h).
constexpr int kProgressiveShapes = 2000;
// Contact layers (points, normals, forces, cones) are left out past this many contacts in a
// copy: 100,000 contacts of the 20,000-box pile cost llvmpipe 10 to 25 ms a frame.
constexpr size_t kMaxDrawnContacts = 10000;
// The Grasp window's column (its 330 px and margins), kept where the viewports are left at least
// kGraspMinView px: at 1280x720 with the settings panel, 594 px (the scene's camera frames a
// grasp within them).
constexpr float kGraspColumn = 346.f, kGraspMinView = 480.f;

// Real time: the most wall time the simulation may fall behind and still make up (advance). The
// accumulator's old cap, 8 steps (67 ms) a frame, dropped the rest of every longer frame even with
// the physics idle, and 0.3 s of the default pyramid's waking under a drag (docs/speed.md "The
// drag (session 28)"); a quarter second is the usual bound of a fixed-step loop.
constexpr double kMaxLag = 0.25;

// With the profile on, each GL part ends with glFinish, so that what it queued is drawn in its own
// column (llvmpipe draws only when flushed; else it all lands in the swap).
void finishForProfile(const FrameProfile* profile) {
    if (profile) glFinish();
}

void addViewTimes(FrameProfile& profile, const ProgressiveView::DrawTimes& t) {
    profile.add(FramePart::ViewKey, t.keyMs);
    profile.add(FramePart::ViewStart, t.startMs);
    profile.add(FramePart::ViewSlices, t.slicesMs);
    profile.add(FramePart::Blit, t.blitMs);
    profile.countSlices(t.slices);
    profile.markBuild(t.started, t.done);
}

}  // namespace

bool SandboxApp::init(GlContext* gl, std::string* error) {
    gl_ = gl;
    if (!sceneRenderer_.init(error) || !debugRenderer_.init(error)) return false;
    // Shadow mapping costs ~100 ms a frame at 720p on Mesa's llvmpipe (CPU): off by default
    // there, on with a GPU; the Show panel (or a script's "show shadows on") turns it on, and a
    // recording (not in real time) has them on unless --no-shadows.
    bool software = gl->rendererName().find("llvmpipe") != std::string::npos ||
                    gl->rendererName().find("softpipe") != std::string::npos;
    softwareRasterizer_ = software;
    sceneRenderer_.shadows = view.shadows = options_.forceShadows || (options_.shadows && !software);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;   // no imgui.ini in the user's directory
    ImGui::StyleColorsDark();
    ImGuiStyle& style = ImGui::GetStyle();
    style.WindowRounding = 4;
    style.FrameRounding = 3;
    style.GrabRounding = 3;
    if (gl->window() && !ImGui_ImplGlfw_InitForOpenGL(gl->window(), true)) {
        *error = "ImGui GLFW backend failed to start";
        return false;
    }
    if (!ImGui_ImplOpenGL3_Init("#version 330 core")) {
        *error = "ImGui OpenGL 3 backend failed to start";
        return false;
    }
    sceneList_ = listScenes();
    const char* home = std::getenv("HOME");
    captureDir_ = !options_.captureDir.empty() ? options_.captureDir
                  : home && *home          ? std::string(home) + "/Videos/contact-sandbox"
                                           : std::string("captures");
    impact.clear();
    return true;
}

void SandboxApp::shutdown() {
    finishStepJob();
    std::string message;
    if (video_.isOpen()) {
        video_.close(&message);
        std::printf("%s\n", message.c_str());
    }
    if (!ImGui::GetCurrentContext()) return;
    ImGui_ImplOpenGL3_Shutdown();
    if (gl_ && gl_->window()) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    sceneRenderer_.shutdown();
    progressiveView_.shutdown();
    debugRenderer_.shutdown();
}

void SandboxApp::layoutViewports() {
    gl_->framebufferSize(fbWidth_, fbHeight_);
    panelWidth_ = std::min(340.f, 0.4f * float(fbWidth_));
    int x0 = view.settingsPanel ? int(panelWidth_) : 0;
    // The plots take a column on the right above the comparison table; the table spans the
    // width beside the panel, and the impact window sits over it, beside the plots.
    plotsWidth_ = view.plots ? std::clamp(0.3f * float(fbWidth_), 360.f, 520.f) : 0.f;
    plotsWidth_ = std::max(0.f, std::min(plotsWidth_, float(fbWidth_ - x0) - 240.f));
    // The Grasp window, and the Selected-body window under it, take a column left of the plots:
    // over the view they hid the scale at the end of grasp_box's place and the gripper beside
    // it. Where the viewports would keep less than kGraspMinView the window floats over their
    // right edge instead (a small window, the plots open).
    graspWidth_ = grasp_.active() && view.grasp ? kGraspColumn : 0.f;
    if (float(fbWidth_ - x0) - plotsWidth_ - graspWidth_ < kGraspMinView) graspWidth_ = 0.f;
    int y0 = int(tableHeight()) + int(impactPanelHeight());
    int w = std::max(1, fbWidth_ - x0 - int(plotsWidth_ + graspWidth_)), h = std::max(1, fbHeight_ - y0);
    viewports_.clear();
    int n = std::max(1, copyCount());
    int cols = n == 4 ? 2 : n, rows = n == 4 ? 2 : 1;
    for (int i = 0; i < n; ++i) {
        int c = i % cols, r = i / cols;
        Viewport v;
        v.x = x0 + c * w / cols;
        v.width = (c + 1) * w / cols - c * w / cols;
        v.height = (r + 1) * h / rows - r * h / rows;
        v.y = y0 + h - (r + 1) * h / rows;
        viewports_.push_back(v);
    }
}

void SandboxApp::advance(double wallDt) {
    if (copies_.empty()) return;
    sceneCheckClock_ += wallDt;
    if (sceneCheckClock_ > 0.5 && !replaying_) {
        sceneCheckClock_ = 0;
        checkSceneFileChanged();
    }
    const double dt = copies_[0]->world.settings.dt;
    int steps = 0;
    if (stepOnce) {
        steps = 1;
        stepOnce = false;
    } else if (!paused) {
        // Fixed stepping advances one video frame of simulated time per rendered frame, so tests
        // and recordings are reproducible and videos play in real time.
        bool fixed = options_.fixedStep || video_.isOpen();
        // The frame that loaded a scene (freshCopies_) is not owed: the scene starts at its start.
        accumulator_ += (fixed ? 1.0 / options_.fps : freshCopies_ ? 0.0 : wallDt) * speed;
        // Real time with a bounded lag: simulated time owed but not yet asked of the physics is
        // kept up to kMaxLag of wall time and made up when the steps allow (a long frame, the
        // awake pile's costly steps for a moment); past that it is dropped, and the scene runs in
        // slow motion rather than in a spiral (droppedSim_, the method report's dropped=).
        const double cap = std::max(kMaxLag * speed, dt);
        if (!fixed && accumulator_ > cap) {
            droppedSim_ += accumulator_ - cap;
            if (profile) profile->steps().droppedMs += 1e3 * (accumulator_ - cap);
            accumulator_ = cap;
        }
        steps = int(std::floor(accumulator_ / dt + 1e-9));
        accumulator_ -= steps * dt;
    }
    freshCopies_ = false;
    if (profile) profile->steps().asked = steps;
    // Real time: the physics thread steps (physics_thread.cpp); a frame never waits for it.
    // Steps asked for while it is busy go back to the accumulator and are asked for next frame.
    const long long ticksBefore = tick_;
    if (canStepInBackground()) {
        if (steps > 0 && dragging()) {
            dragTrail_.push_back({double(copies_[0]->world.state().time), dragTarget_});
            if (dragTrail_.size() > 64) dragTrail_.erase(dragTrail_.begin());
        }
        if (!stepInBackground(steps)) accumulator_ += steps * dt;   // busy: asked again next frame
        steps = 0;
    } else {
        adoptSteps();   // a job still running when stepping turned synchronous
    }
    // Otherwise at most 40 ms of stepping per frame, so the UI stays responsive when the
    // physics is slower than real time (the simulation then runs in slow motion).
    bool budgeted = !(options_.fixedStep || video_.isOpen());
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) {
        if (dragging()) {
            dragTrail_.push_back({double(copies_[0]->world.state().time), dragTarget_});
            if (dragTrail_.size() > 64) dragTrail_.erase(dragTrail_.begin());
        }
        stepCopies();
        if (impact.justCaptured) {
            // An impact to study: pause on it (the replay window shows it).
            impact.justCaptured = false;
            if (view.impact && impact.pauseOnImpact) {
                paused = true;
                accumulator_ = 0;
                status = "paused at a PLUS impact (" + std::to_string(impact.rounds()) + " rounds, " +
                         std::to_string(impact.intervals()) + " intervals)";
                break;
            }
        }
        if (budgeted && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(40)) {
            droppedSim_ += (steps - 1 - i) * dt + accumulator_;
            if (profile) profile->steps().droppedMs += 1e3 * ((steps - 1 - i) * dt + accumulator_);
            accumulator_ = 0;
            break;
        }
    }
    if (tick_ > ticksBefore && !canStepInBackground()) noteSimTime(std::chrono::steady_clock::now());
    if (profile) {
        profile->steps().simS = double(copies_[0]->world.state().time);
        profile->steps().stepped += int(tick_ - ticksBefore);
        profile->steps().stepMs = stepWallMs_;
        profile->steps().drag = dragging();
        profile->steps().title = paused ? 0.0 : realTimeFactor();
    }
    if (paused) realTime_.clear();   // the window starts again when the steps do
    impact.play(wallDt);
    // Follow: the target eases to the body's centre of mass, or a deformable body's node centroid.
    const World& w = copies_[0]->world;
    const int follow = camera.followBody, followFem = camera.followFem;
    std::optional<Vec3> p;
    if (follow >= 0 && follow < w.model().bodyCount()) p = w.state().pos[follow];
    if (followFem >= 0 && followFem < (int)w.model().femBodies.size())
        p = femBodyCentroid(w.model(), w.state().femPos, followFem);
    if (p) camera.target += (glm::vec3(float(p->x), float(p->y), float(p->z)) - camera.target) * 0.2f;
}

void SandboxApp::render(double wallDt) {
    auto t0 = std::chrono::steady_clock::now();
    std::optional<ProfileScope> begin(std::in_place, profile, FramePart::Begin);
    layoutViewports();
    // Shadow maps first, one per copy; then the frame's target is bound and cleared once
    // (see SceneRenderer::renderShadows).
    sceneRenderer_.shadows = view.shadows;
    sceneRenderer_.greyAsleep = view.greyAsleep;
    sceneRenderer_.setKeyLight(camera);
    sceneRenderer_.femStyle = view.fem;
    const bool progressive = copyCount() == 1 && copies_[0]->world.model().shapeCount() > kProgressiveShapes &&
                             sceneRenderer_.fem().empty();
    if (progressive != progressive_) progressiveView_.reset();
    else if (progressive) viewBudget_.observe(1e3 * wallDt - lastPaceMs_, progressiveView_.lastDraw().slicesMs);
    progressive_ = progressive;
    if (view.shadows && !progressive) {
        for (int i = 0; i < copyCount(); ++i) {
            sceneRenderer_.gatherInstances(copies_[i]->world, selectedBody);
            sceneRenderer_.renderShadows(camera, i);
        }
    }
    gl_->bindDrawTarget();
    GLint target = 0;
    glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &target);
    glViewport(0, 0, fbWidth_, fbHeight_);
    glClearColor(0.17f, 0.18f, 0.20f, 1.f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

    // The UI frame starts first so the debug texts can go to its background draw list.
    ImGuiIO& io = ImGui::GetIO();
    ImGui_ImplOpenGL3_NewFrame();
    if (gl_->window()) {
        ImGui_ImplGlfw_NewFrame();
    } else {
        io.DisplaySize = ImVec2(float(fbWidth_), float(fbHeight_));
        io.DeltaTime = float(std::max(wallDt, 1e-4));
        io.MousePos = ImVec2(float(mouseX_), float(mouseY_));
    }
    if (scriptedInput) io.MousePos = ImVec2(float(mouseX_), float(mouseY_));   // the script's cursor
    ImGui::NewFrame();
    begin.reset();

    for (int i = 0; i < copyCount() && i < (int)viewports_.size(); ++i) {
        const Viewport& vp = viewports_[i];
        const World& world = copies_[i]->world;
        if (progressive) {
            {
                ProfileScope scope(profile, FramePart::Gather);
                sceneRenderer_.gatherInstances(world, selectedBody, false);
            }
            const double budget = viewBudget_.viewBudgetMs();
            if (profile) profile->setViewBudget(budget);
            progressiveView_.draw(sceneRenderer_, camera, vp, i, unsigned(target), budget, !view.xray);
            if (profile) addViewTimes(*profile, progressiveView_.lastDraw());
            ProfileScope scope(profile, FramePart::Blit);
            finishForProfile(profile);
        } else {
            if (copyCount() > 1 || !view.shadows) {
                ProfileScope scope(profile, FramePart::Gather);
                sceneRenderer_.gatherInstances(world, selectedBody);
            }
            ProfileScope scope(profile, FramePart::Blit);
            sceneRenderer_.render(camera, vp, i);
            finishForProfile(profile);
        }
        ProfileScope layers(profile, FramePart::Layers);
        debugRenderer_.clear();
        // While the replay is shown (paused), its overlay replaces PLUS's own annotations, which
        // show the end of the impact.
        bool replay = view.impact && impact.overlay && paused && impact.copy == i && impact.current();
        DebugDrawFlags flags = view.draw;
        if (replay) flags.constraintGroups = false;
        const size_t contacts = world.contacts().size();
        if (contacts > kMaxDrawnContacts)
            flags.contactPoints = flags.contactNormals = flags.contactForces = flags.frictionCones = flags.penetration =
                false;
        if (i == 0) undrawnContacts_ = contacts > kMaxDrawnContacts ? contacts : 0;
        DebugDraw dd = debugRenderer_.makeDebugDraw(flags);
        world.draw(dd);
        drawGraspOverlay(i);
        if (replay) drawImpactOverlay();
        // The app's own layer: the drag target the cursor holds, and the followed body.
        if (dragging() && view.draw.dragSpring) debugRenderer_.point(dragTarget_, 9.f, Color{1, 1, 1, 1});
        debugRenderer_.xray = view.xray;
        debugRenderer_.render(camera, vp);
        debugRenderer_.renderTexts(ImGui::GetBackgroundDrawList(), camera, vp, fbHeight_);
        finishForProfile(profile);
    }
    glViewport(0, 0, fbWidth_, fbHeight_);

    {
        ProfileScope scope(profile, FramePart::UiBuild);
        drawPanels();
        drawHud();
        logSettingsChanges();
        ImGui::Render();
    }
    {
        ProfileScope scope(profile, FramePart::UiRender);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        finishForProfile(profile);
    }

    if (!pendingScreenshot_.empty()) {
        std::vector<uint8_t> rgb;
        readbackFrame(rgb);
        std::string error;
        int w = fbWidth_ & ~1, h = fbHeight_ & ~1;
        if (writePng(pendingScreenshot_, w, h, rgb, &error)) status = "wrote " + pendingScreenshot_;
        else status = error;
        std::printf("screenshot: %s\n", status.c_str());
        std::fflush(stdout);
        pendingScreenshot_.clear();
    }
    if (video_.isOpen()) {
        std::vector<uint8_t> rgb;
        readbackFrame(rgb);
        video_.push(std::move(rgb));
    }
    lastFrameMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void SandboxApp::readbackFrame(std::vector<uint8_t>& rgb) {
    // libx264 with yuv420p needs even sizes: the last odd row or column is left out.
    gl_->bindDrawTarget();
    readPixelsRgb(fbWidth_ & ~1, fbHeight_ & ~1, rgb);
}

bool SandboxApp::screenshot(const std::string& path, std::string* error) {
    pendingScreenshot_ = path;
    return true;
}

bool SandboxApp::toggleRecording(std::string* message) {
    if (video_.isOpen()) {
        video_.close(message);
        std::printf("%s\n", message->c_str());
        return true;
    }
    std::string path = capturePath("sandbox", ".mp4", message);
    if (path.empty()) return false;
    int w = 0, h = 0;
    gl_->framebufferSize(w, h);
    bool ok = video_.open(path, w & ~1, h & ~1, options_.fps, false, message);
    std::printf("%s\n", message->c_str());
    if (ok) *message = "recording: M stops it";   // the footer shows the path
    return ok;
}

std::string SandboxApp::capturePath(const char* prefix, const char* extension, std::string* error) const {
    std::error_code ec;
    std::filesystem::create_directories(captureDir_, ec);
    if (ec) {
        *error = "cannot create the capture directory " + captureDir_ + ": " + ec.message();
        return "";
    }
    char name[96];
    std::time_t now = std::time(nullptr);
    std::strftime(name, sizeof name, "_%Y%m%d_%H%M%S", std::localtime(&now));
    std::filesystem::path dir = std::filesystem::absolute(captureDir_, ec);
    return (dir / (std::string(prefix) + name + extension)).string();
}

}  // namespace cs
