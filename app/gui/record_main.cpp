// runRecord: headless video of a scene (`sandbox record SCENE --out FILE.mp4`), rendered
// offscreen through EGL surfaceless (no X server) and encoded by ffmpeg on a writer thread.
// Each video frame advances 1/fps of simulated time, so the video plays in real time however
// long the rendering takes. A progress bar goes to stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <unistd.h>

#include "app/gui/gui.h"
#include "app/gui/sandbox_app.h"

namespace cs {

namespace {

// A scripted grasp's video shows what scripts/grasp_shots.sh shows: the pads' dots (stick, slide)
// and the Grasp window carry the contacts, so the contact points, normals and joint axes are off (on a
// deformable object its node contacts would hide it), and a deformable object is coloured by its
// von Mises stress from 0 to 2 % of its Young's modulus (2 kPa for fetch_tomato_fem's tomato,
// whose weight over its cross-section is 0.44 kPa).
void presentGrasp(SandboxApp& app) {
    app.view.draw.contactPoints = false;
    app.view.draw.contactNormals = false;
    app.view.draw.jointFrames = false;
    const Model& m = app.copy(0).world.model();
    const int fem = app.grasp().driver.controller().spec().objectFem;
    if (fem < 0 || fem >= (int)m.femBodies.size()) return;
    app.view.fem.colorByField = true;
    app.view.fem.field = FemField::VonMises;
    app.view.fem.autoRange = false;
    app.view.fem.lo = 0;
    app.view.fem.hi = float(0.02 * m.femBodies[fem].youngs);
}

}  // namespace

int runRecord(int argc, char** argv) {
    GuiOptions options;
    std::string error;
    if (!parseGuiOptions(argc, argv, true, options, &error)) {
        std::fprintf(stderr, "sandbox record: %s\n%s", error.c_str(), recordUsage());
        return 2;
    }
    if (options.help) {
        std::printf("%s", recordUsage());
        return 0;
    }
    // No scene: the demo, a steel ball (0.3 m, 7,800 kg/m^3, 16 m/s) launched into the default
    // pyramid half a second in, so the video opens on a standing pile that then comes down.
    if (options.scene.empty() && options.replay.empty())
        options.replay = std::string(CS_SOURCE_DIR) + "/assets/sessions/pyramid_wrecking_ball.json";
    options.headless = true;
    options.fixedStep = true;
    options.forceShadows = options.shadows;   // a recording takes its time: shadows unless --no-shadows
    options.width &= ~1;    // libx264 in yuv420p wants even sizes
    options.height &= ~1;

    // A bad scene file is reported before any window or GL context is opened.
    if (options.replay.empty()) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        if (!loadScene(options.scene, model, settings, info, &error)) {
            std::fprintf(stderr, "sandbox record: %s\n", error.c_str());
            return 1;
        }
        if (options.playScript && info.grasp.script.empty()) {
            std::fprintf(stderr, "sandbox record: --script: scene \"%s\" has no grasp script\n", info.name.c_str());
            return 2;
        }
    }
    GlContext gl;
    if (!gl.openHeadless(options.width, options.height, &error)) {
        std::fprintf(stderr, "sandbox record: %s\n", error.c_str());
        return 1;
    }
    SandboxApp app(options);
    app.view.settingsPanel = false;
    app.view.greyAsleep = false;   // a video shows the bodies' colours, asleep or not
    app.view.legend = options.height >= 600;   // in a small video the legend hides the scene
    if (!app.init(&gl, &error)) {
        std::fprintf(stderr, "sandbox record: %s\n", error.c_str());
        return 1;
    }
    bool ok = options.replay.empty() ? app.loadScene(options.scene, &error) : app.startReplay(options.replay, &error);
    if (!ok) {
        std::fprintf(stderr, "sandbox record: %s\n", error.c_str());
        app.shutdown();
        return 1;
    }
    if (options.replay.empty()) app.setCopies(options.compare);
    double seconds = options.seconds >= 0 ? options.seconds : double(app.sceneInfo().duration);
    if (options.playScript) {   // the scene's grasp script from the start, and a second after its end
        presentGrasp(app);
        app.graspPlay();
        if (options.seconds < 0)
            seconds = std::max(seconds, double(app.grasp().driver.controller().scriptDuration()) + 1.0);
    }
    int frames = std::max(1, int(std::lround(seconds * options.fps)));

    VideoWriter video;
    video.queueCapacity = 16;
    if (!video.open(options.out, options.width, options.height, options.fps, true, &error)) {
        std::fprintf(stderr, "sandbox record: %s\n", error.c_str());
        app.shutdown();
        return 1;
    }
    std::fprintf(stderr, "sandbox record: %s, %d frames of %dx%d at %d fps (%s)\n", error.c_str(), frames,
                 options.width, options.height, options.fps, gl.rendererName().c_str());
    bool tty = isatty(2);
    auto start = std::chrono::steady_clock::now();
    for (int f = 0; f < frames; ++f) {
        app.render(1.0 / options.fps);
        std::vector<uint8_t> rgb;
        app.readbackFrame(rgb);
        if (!video.push(std::move(rgb))) break;
        app.advance(1.0 / options.fps);
        if (tty || f + 1 == frames || (f + 1) % std::max(1, frames / 10) == 0) {
            double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            int width = 30, done = (f + 1) * width / frames;
            std::fprintf(stderr, "%s[%.*s%*s] %3d%%  frame %d/%d  %.1f fps%s", tty ? "\r" : "", done,
                         "##############################", width - done, "", (f + 1) * 100 / frames, f + 1, frames,
                         (f + 1) / std::max(wall, 1e-9), tty ? "" : "\n");
        }
    }
    if (tty) std::fprintf(stderr, "\n");
    std::string message;
    bool written = video.close(&message);
    std::printf("sandbox record: %s\n", message.c_str());
    app.shutdown();
    return written ? 0 : 1;
}

}  // namespace cs
