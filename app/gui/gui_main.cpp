// runGui: the interactive sandbox's window loop (`sandbox`, `sandbox gui [SCENE]`).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "app/gui/frame_profile.h"
#include "app/gui/gui.h"
#include "app/gui/gui_script.h"
#include "app/gui/sandbox_app.h"

namespace cs {

// The scene `make run` and a bare `sandbox` open.
std::string defaultSceneName() {
    std::vector<std::string> names = listScenes();
    for (const char* preferred : {"default", "pyramid", "box_stack"})
        for (const std::string& n : names)
            if (n == preferred) return n;
    return names.empty() ? "" : names.front();
}

namespace {

SandboxApp* appOf(GLFWwindow* w) { return static_cast<SandboxApp*>(glfwGetWindowUserPointer(w)); }

void onCursor(GLFWwindow* w, double x, double y) {
    // Cursor positions in framebuffer pixels (they differ from window units on HiDPI screens).
    int ww, wh, fw, fh;
    glfwGetWindowSize(w, &ww, &wh);
    glfwGetFramebufferSize(w, &fw, &fh);
    appOf(w)->cursorMoved(x * fw / std::max(ww, 1), y * fh / std::max(wh, 1));
}
void onButton(GLFWwindow* w, int button, int action, int mods) {
    if (action == GLFW_PRESS || action == GLFW_RELEASE)
        appOf(w)->mouseButton(button, action == GLFW_PRESS, (mods & GLFW_MOD_SHIFT) != 0);
}
void onScroll(GLFWwindow* w, double, double dy) { appOf(w)->scrolled(dy); }
void onKey(GLFWwindow* w, int key, int, int action, int mods) {
    if (action == GLFW_PRESS || action == GLFW_REPEAT) appOf(w)->keyPressed(key, mods);
}

// Mesa's software rasterizer (llvmpipe, what a machine without a GPU draws with) starts a thread
// per core by default, and each frame's drawing then takes the physics thread's core too: on 2
// cores pneunet_finger's physics thread got 0.44-0.62 of a core with the rasterizer's 2 threads,
// and with none it reached 1x at 0.73-0.83 of a core, all its steps needed (issue 35,
// docs/speed.md "The app at real time"). So, unless the user set LP_NUM_THREADS, the rasterizer
// gets the cores left after the UI thread's and the physics thread's: none on 2 cores (it draws
// in the UI thread), 2 on 4. Only llvmpipe reads it; it must be set before the GL context is
// made. Returns what the app set, or "" where it left it.
std::string leaveACoreForThePhysics() {
    if (std::getenv("LP_NUM_THREADS")) return "";
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::string threads = std::to_string(cores > 2 ? cores - 2 : 0);
    return setenv("LP_NUM_THREADS", threads.c_str(), 0) == 0 ? threads : "";
}

}  // namespace

int runGui(int argc, char** argv) {
    GuiOptions options;
    std::string error;
    if (!parseGuiOptions(argc, argv, false, options, &error)) {
        std::fprintf(stderr, "sandbox gui: %s\n%s", error.c_str(), guiUsage());
        return 2;
    }
    if (options.help) {
        std::printf("%s", guiUsage());
        return 0;
    }
    GuiScript script;
    if (!options.script.empty()) {
        if (!script.load(options.script, &error)) {
            std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
            return 2;
        }
        options.fixedStep = !options.realTime;   // reproducible, unless the test is of real-time stepping
    }
    if (options.scene.empty() && options.replay.empty()) options.scene = defaultSceneName();

    // A bad scene file is reported before any window or GL context is opened.
    if (options.replay.empty()) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        if (!loadScene(options.scene, model, settings, info, &error)) {
            std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
            return 1;
        }
    }
    FrameProfile profile;
    if (!options.frameProfile.empty() && !profile.open(options.frameProfile, &error)) {
        std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
        return 2;
    }
    const std::string rasterThreads = leaveACoreForThePhysics();
    GlContext gl;
    bool opened = options.headless ? gl.openHeadless(options.width, options.height, &error)
                                   : gl.openWindow(options.width, options.height, "Contact Sandbox", &error);
    if (!opened) {
        std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
        return 1;
    }
    if (gl.rendererName().find("llvmpipe") != std::string::npos && !rasterThreads.empty())
        std::printf("sandbox gui: %s; LP_NUM_THREADS=%s (a core left to the physics thread)\n",
                    gl.rendererName().c_str(), rasterThreads.c_str());
    else
        std::printf("sandbox gui: %s\n", gl.rendererName().c_str());

    SandboxApp app(options);
    if (profile.isOpen()) app.profile = &profile;
    app.scriptedInput = !options.script.empty();
    if (GLFWwindow* w = gl.window()) {
        // Installed before ImGui's backend, which chains to them.
        glfwSetWindowUserPointer(w, &app);
        glfwSetCursorPosCallback(w, onCursor);
        glfwSetMouseButtonCallback(w, onButton);
        glfwSetScrollCallback(w, onScroll);
        glfwSetKeyCallback(w, onKey);
    }
    if (!app.init(&gl, &error)) {
        std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
        return 1;
    }
    bool ok = options.replay.empty() ? app.loadScene(options.scene, &error) : app.startReplay(options.replay, &error);
    if (!ok) {
        std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
        app.shutdown();
        return 1;
    }
    if (options.replay.empty()) app.setCopies(options.compare);
    if (options.playScript) app.graspPlay();

    auto start = std::chrono::steady_clock::now(), last = start, half = start;
    int frame = 0;
    double fpsClock = 0;
    int fpsFrames = 0;
    double maxFrameMs = 0;   // the longest frame after the first 10 (start-up, shader compiles)
    std::vector<double> frameMs;   // every frame after the first 10
    while (!gl.shouldClose() && !app.quitRequested) {
        const auto frameStart = std::chrono::steady_clock::now();
        profile.beginFrame();
        if (gl.window()) {
            ProfileScope scope(app.profile, FramePart::Poll);
            glfwPollEvents();
        }
        auto now = std::chrono::steady_clock::now();
        double wallDt = std::chrono::duration<double>(now - last).count();
        last = now;
        if (frame > 10) {
            maxFrameMs = std::max(maxFrameMs, 1e3 * wallDt);
            frameMs.push_back(1e3 * wallDt);
        }
        fpsClock += wallDt;
        ++fpsFrames;
        if (fpsClock > 0.5) {
            app.fps = fpsFrames / fpsClock;
            fpsClock = 0;
            fpsFrames = 0;
        }
        if (!options.script.empty()) script.run(frame, app);
        bool lastFrame = options.frames > 0 && frame + 1 >= options.frames;
        if (lastFrame && !options.screenshot.empty()) app.screenshot(options.screenshot, &error);
        {
            // advance's own part: the adoption and the launch inside it time themselves
            const auto t0 = std::chrono::steady_clock::now();
            app.advance(wallDt);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            profile.add(FramePart::Advance, ms - profile.part(FramePart::Adopt) - profile.part(FramePart::Launch));
        }
        app.render(wallDt);
        {
            ProfileScope scope(app.profile, FramePart::Swap);
            gl.swap();
        }
        {
            ProfileScope scope(app.profile, FramePart::Pace);
            app.paceFrame(frameStart);
        }
        profile.endFrame(frame);
        ++frame;
        if (options.frames > 0 && frame == options.frames / 2) half = std::chrono::steady_clock::now();
        if (lastFrame) break;
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double secondHalf = std::chrono::duration<double>(std::chrono::steady_clock::now() - half).count();
    std::printf("sandbox gui: %d frames in %.2f s (%.1f fps; second half %.1f fps), %d copies, %d bodies\n", frame,
                wall, frame / std::max(wall, 1e-9),
                options.frames > 1 ? (frame - options.frames / 2) / std::max(secondHalf, 1e-9) : 0.0, app.copyCount(),
                app.copyCount() ? app.copy(0).world.model().bodyCount() : 0);
    std::printf("sandbox gui: longest frame %.1f ms (after frame 10); %lld steps, %.3f s simulated (%.3gx real time)%s\n",
                maxFrameMs, app.tick(), app.copyCount() ? double(app.copy(0).world.state().time) : 0.0,
                app.copyCount() ? double(app.copy(0).world.state().time) / std::max(wall, 1e-9) : 0.0,
                app.stepJobRunning() ? ", a step still running" : "");
    if (!frameMs.empty()) {
        std::sort(frameMs.begin(), frameMs.end());
        auto at = [&](double q) { return frameMs[std::min(frameMs.size() - 1, size_t(q * double(frameMs.size())))]; };
        std::printf("sandbox gui: frame time median %.1f ms, p95 %.1f ms, max %.1f ms over %zu frames (after frame 10)\n",
                    at(0.5), at(0.95), frameMs.back(), frameMs.size());
    }
    if (!options.sessionOut.empty()) {
        if (app.saveSession(options.sessionOut, &error)) std::printf("sandbox gui: session written to %s\n", options.sessionOut.c_str());
        else std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
    }
    app.shutdown();
    return 0;
}

}  // namespace cs
