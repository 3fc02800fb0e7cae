// The interactive sandbox: the context struct that holds the UI's settings,
// the simulated copies, the camera and the input state, and the per-frame verbs.
//
// One to four copies of the same scene step in lockstep, each with its own contact model and
// solver; they share the time step, the camera and every user action (a drag or a launch applies
// to the same body in every copy). Every action that changes a world goes through applyEvent(),
// which also appends it to the session log, so a session can be replayed exactly (session.h).
//
// The methods are split by concern: sim_copies.cpp (scene, copies, stepping, statistics),
// interaction.cpp (mouse, keys, picking, drag, launch), panels*.cpp (ImGui windows), ui_report.cpp
// (layout reports for scripted tests),
// app_frame.cpp (rendering a frame, screenshots, recording), impact_panel.cpp (the PLUS impact
// replay window and its 3D overlay).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "app/gui/frame_profile.h"
#include "app/gui/grasp_ui.h"
#include "app/gui/gui_options.h"
#include "app/gui/impact_replay.h"
#include "app/gui/real_time_meter.h"
#include "app/gui/session.h"
#include "app/gui/view_scale.h"
#include "engine/fem/fem_surface.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"
#include "render/camera.h"
#include "render/debug_renderer.h"
#include "render/frame_budget.h"
#include "render/gl_context.h"
#include "render/progressive_view.h"
#include "render/scene_renderer.h"
#include "render/video_writer.h"

namespace cs {

// Time series kept per copy for the plots (the last kHistory steps).
constexpr int kHistory = 600;

struct SimCopy {
    CopySpec spec;
    std::string label;
    World world;                       // what the UI shows and changes (applyEvent)
    std::unique_ptr<World> stepping;   // the physics thread's copy while it steps (physics_thread.cpp)
    std::string stepError;             // the physics thread's last failed-step message
    int jobFailedSteps = 0;            // steps of the physics thread's job that the guards rolled back
    // Steps the guards (World::lastStepFailed) rolled back since the copy was made or reset, and
    // the last one's message: the comparison table's column. Counted here, not by World, whose
    // count would not survive the swap of worlds with the physics thread (adoptSteps).
    int failedSteps = 0;
    std::string lastFailure;
    // maxPenetration of the job's last state, taken on the physics thread (a broad and narrow
    // phase: 16 to 90 ms on the 20,000-box pile, too long for the UI thread); -1: none.
    Real jobPenetration = -1;
    double stepMs = 0;                 // wall time of the last lockstep step (all substeps)
    Real overlapVolume = 0;            // m^3, over all penetrating pairs of convex parts
    std::vector<Real> divergence;      // (nbody) |x_b - x_b of copy 0|
    Real maxDivergence = 0;
    int maxDivergenceBody = -1;
    std::vector<float> historyStepMs, historyPenetration, historyEnergy;
    // For the convergence plot: the solve with the most Newton iterations over the last 120
    // steps (a converged warm start takes none), and the step it belongs to.
    SolveStats plottedSolve;
    long long plottedSolveStep = -1;
};

enum class MouseMode { None, Orbit, Pan, Drag, Rotate, Wrist };   // Wrist: grasp_input.cpp

// What the UI shows; also the state a screenshot or a recording reproduces.
struct ViewSettings {
    DebugDrawFlags draw;
    bool shadows = true;
    bool greyAsleep = true;            // sleeping bodies grey (a recording keeps their colours)
    bool xray = true;                  // overlays drawn over the bodies (see DebugRenderer)
    bool legend = true;
    bool help = false;
    bool plots = false;
    bool settingsPanel = true;         // the left panel (off in headless recordings)
    bool hud = true;                   // labels on each viewport
    bool impact = false;               // the PLUS impact replay window (impact_panel.cpp)
    bool grasp = true;                 // the Grasp window in a scene with a grasp (grasp_panel.cpp)
    FemSurfaceStyle fem;               // deformable bodies: strain colours (panels_fem.cpp)
};

// A window's rectangle in pixels from the window's top-left (for scripted layout checks).
struct UiRect {
    float x = 0, y = 0, w = 0, h = 0;
};

class SandboxApp {
public:
    explicit SandboxApp(const GuiOptions& options) : options_(options) {}
    ~SandboxApp();                     // stops the physics thread (physics_thread.cpp)
    bool init(GlContext* gl, std::string* error);
    void shutdown();

    // ---- scene and copies (sim_copies.cpp) ----
    bool loadScene(const std::string& nameOrPath, std::string* error);
    void setCopies(const std::vector<CopySpec>& specs);
    void resetCopies();                // every copy back to the scene's initial state
    void stepCopies();                 // one lockstep step of settings.dt, then statistics
    void updateStatistics();
    bool checkSceneFileChanged();      // reload when the scene file changes on disk
    int copyCount() const { return (int)copies_.size(); }
    SimCopy& copy(int i) { return *copies_[i]; }
    const SceneInfo& sceneInfo() const { return sceneInfo_; }
    long long tick() const { return tick_; }
    long long stepsSinceReset() const { return tick_ - resetTick_; }

    // ---- session (every world-changing action) ----
    void applyEvent(const SessionEvent& e, bool log);
    bool startReplay(const std::string& path, std::string* error);
    bool saveSession(const std::string& path, std::string* error) const;

    // ---- input (interaction.cpp); pixel coordinates from the window's top-left ----
    void mouseButton(int button, bool down, bool shift);
    void cursorMoved(double x, double y);
    void scrolled(double dy);
    void keyPressed(int glfwKey, int mods);
    void launch(bool sphere);
    void frameAll();                   // F: the dynamic and deformable bodies in view
    void toggleFollow();               // C: the camera follows the selected body, or stops
    int viewportAt(double x, double y) const;   // copy index under the cursor, -1 outside
    // Scripts: the pixel over a body's centre ("auto": the highest visible dynamic body).
    bool aimAt(const std::string& which, glm::vec2& pixel, int& body);
    // Scripts: a hash of every body's pose, and the grabbed point, the target and the drag force
    // of copy 1.
    void printDragReport(int frame) const;
    // Scripts: "ui-report" lines: the rectangles of the windows drawn last frame, whether the
    // settings panel's content fits, the legend's entries, the step counter, the camera's eye
    // height against the floor, the capture directory and the status line.
    void printUiReport(int frame) const;
    // Scripts: set copy `copy`'s solve method (-1: every copy) as the panel's combo does, or say in
    // one line why not; and print one "method-report" line per copy: its label, method, the last
    // step's Newton and linear (sweep) iterations, how far the highest body has moved, and the
    // title's x real time (title=), the share of the wall time since the last report that the
    // physics thread spent stepping (busy=), and the simulated seconds let go since then because
    // the simulation fell further behind real time than the lag's cap (dropped=, advance).
    void scriptSetMethod(const std::string& name, int copy, int frame);
    void printMethodReport(int frame) const;
    // Scripts: the centre of the n-th "(?)" marker drawn last frame; false if there is none.
    bool helpMarkerCentre(int n, glm::vec2& pixel) const;

    // ---- physics on its own thread (physics_thread.cpp) ----
    // In real time (not fixed stepping, recording or replaying; no PLUS copy while the impact
    // replay pauses on impacts) the copies step on a thread of their own, so a step slower than a
    // frame never holds the window. The UI keeps drawing and changing copy.world; the thread
    // steps copies of it and they are swapped in when done, with the UI's events of meanwhile
    // applied again.
    bool canStepInBackground() const;
    bool stepInBackground(int steps);  // adopts a finished job; launches the next one (false: one is running)
    void finishStepJob();              // waits for a running job and drops it
    bool stepJobRunning() const { return stepRunning_; }
    // Simulated seconds per wall second over the last ~2 s: the physics thread's, from the ends of
    // its jobs (so the frames' timing does not enter), or the UI thread's steps when it steps.
    double realTimeFactor() const;
    // Real time: after the frame that started at frameStart, waits until 1/maxFps after it
    // (--max-fps, default 60: frames a display would not show take no core from the physics
    // thread), then asks the running physics job to end after its step in progress and waits for
    // it, so that the next frame takes it and starts the next job at once: the physics thread is
    // not left idle between a job's end and the next frame (docs/speed.md, "The app at real
    // time"). Nothing with fixed steps, recording or replaying.
    void paceFrame(std::chrono::steady_clock::time_point frameStart);

    // ---- a frame (app_frame.cpp) ----
    // Advances the simulation by wallDt seconds of real time (scaled by the speed), or by one
    // video frame (1/fps) when stepping is fixed (tests, recordings).
    void advance(double wallDt);
    // Renders every viewport, the debug layers and the UI into the current draw target; a
    // pending screenshot is written and a running recording takes the frame.
    void render(double wallDt);
    // Schedules a PNG of the next rendered frame (UI included).
    bool screenshot(const std::string& path, std::string* error);
    bool toggleRecording(std::string* message);
    // Screenshots (P) and recordings (M) go to this directory (--capture-dir; default
    // ~/Videos/contact-sandbox), made on first use; the path of each is shown in the footer.
    std::string capturePath(const char* prefix, const char* extension, std::string* error) const;
    void readbackFrame(std::vector<uint8_t>& rgb);
    void layoutViewports();

    // ---- UI (panels.cpp) ----
    void drawPanels();
    void drawHud();

    ViewSettings view;
    ImpactReplay impact;               // the last PLUS impact, for the replay window
    Camera camera;
    bool paused = false;
    bool stepOnce = false;
    float speed = 1.f;
    std::string status;                // last message for the status line
    int selectedBody = -1;
    int selectedFemBody = -1;          // the deformable body clicked (Model::femBodies), -1: none
    int selectedFem = 0;               // the deformable body the panel's pressure slider drives
    double fps = 0;
    bool quitRequested = false;
    bool scriptedInput = false;        // input comes from a test script: ImGui does not capture it
    FrameProfile* profile = nullptr;   // --frame-profile: each frame's parts are timed into it

    // Drag readout for the selection panel and for scripted tests.
    Vec3 dragTargetWorld() const { return dragTarget_; }
    bool dragging() const { return mouseMode_ == MouseMode::Drag || mouseMode_ == MouseMode::Rotate; }

private:
    void updateDragTarget();
    void clampSettings(WorldSettings& s) const;
    void noteFemContactModel();        // the status line: PEG/PLUS with deformable bodies
    std::string femNoteShown_;         // the note last put in the status line
    void drawSettingsPanel();
    void drawSettingsContent();
    void drawShowSection();
    void drawFooter();
    float footerHeight() const;
    float tableHeight() const;         // pixels of the comparison table under the viewports
    void drawSelectionPanel();
    void drawComparisonTable();
    void drawPlotsWindow();
    void drawHelpWindow();
    void drawLegend();
    // ---- deformable bodies (panels_fem.cpp) ----
    void femViewDefaults();            // strain colours on, node contacts off in scenes with FEM bodies
    void drawFemSection();
    void drawFemLegend();
    void drawFemSelection(const World& w, int femBody);   // the Selected-body window's content
    void applyFemDeform();             // --fem-deform: every copy's FEM nodes set by hand
    // ---- the PLUS impact replay (impact_panel.cpp) ----
    float impactPanelHeight() const;   // pixels under the viewports, 0 when the window is closed
    void drawImpactWindow();
    void drawImpactTimeline();
    void drawImpactOverlay();
public:
    void frameImpact();                // camera onto the impact's points and bodies

    // ---- grasping (grasp_ui.h: grasp_input.cpp, grasp_panel.cpp) ----
    void graspPlay();                  // resets the copies and plays the scene's script
    void setGraspGoal(const GraspCommand& c);      // the user's goal at copy 0's time (stops the script)
    GraspCommand graspCommandNow() const;          // the command at copy 0's time (the script's or the user's ramps)
    GraspCommand graspShown() const;               // the controls' values: the script's command, or the user's goal
    Real graspTime() const;                        // copy 0's time, s
    const GraspUi& grasp() const { return grasp_; }
    // Scripts: "grasp play|stop|grip G|force N|wrist X Y Z|report" (gui_script.h).
    void graspScriptCommand(const std::vector<std::string>& args, int frame);
private:
    void graspLoad();
    void graspReset();
    void graspStop();                  // the user's reset (R): the script stopped, the gripper at rest
    void graspSense();
    void drawGraspHelp();              // the gripper's keys and mouse, in the Help window
    bool graspOwnsBody(int body) const;
    bool graspMouseDown(int body, Vec3 hit, bool shift);
    void graspMouseMoved();
    bool graspScroll(double dy);
    bool graspKey(int key);
    void drawGraspWindow();
    void drawGraspOverlay(int copy);
    GraspUi grasp_;

    void logSettingsChanges();

    GuiOptions options_;
    std::string pendingScreenshot_;
    double lastFrameMs_ = 0;
    GlContext* gl_ = nullptr;
    SceneRenderer sceneRenderer_;
    DebugRenderer debugRenderer_;
    // Large scenes (app_frame.cpp): the view built over frames, contacts past a count not drawn.
    ProgressiveView progressiveView_;
    FrameBudget viewBudget_;           // the build's share of a frame
    bool progressive_ = false;
    size_t undrawnContacts_ = 0;       // copy 0's contacts left out of the layers this frame
    void appendLargeSceneNote(char* line, size_t size) const;   // the HUD's note on both
    VideoWriter video_;

    // Scene as loaded: copies are rebuilt from it.
    Model sceneModel_;
    WorldSettings sceneSettings_;
    SceneInfo sceneInfo_;
    std::string sceneName_;
    long long sceneFileTime_ = 0;
    double sceneCheckClock_ = 0;
    std::vector<std::unique_ptr<SimCopy>> copies_;
    std::vector<WorldSettings> loggedSettings_;   // last settings written to the session log
    std::vector<std::string> sceneList_;

    // Lockstep time.
    long long tick_ = 0;               // steps since the session began (never reset)
    double accumulator_ = 0;
    bool freshCopies_ = false;         // setCopies ran: advance skips the wall time of the frame it ran in
    double droppedSim_ = 0;            // simulated s let go past the lag's cap (advance): slow motion
    mutable double reportDroppedSim_ = 0;   // droppedSim_ at the last method report
    double stepWallMs_ = 0;

    // The physics thread (physics_thread.cpp).
    // One thread for the session, made at the first job and waiting between jobs (a thread per
    // job cost its start, its OpenMP team's start, and a join at every adoption).
    struct Job {
        std::vector<SimCopy*> copies;
        int steps = 0;
        GraspDriver driver;
    };
    void adoptSteps();
    void physicsLoop();                // the thread: waits for a job, steps it, says it is done
    void waitForJob();                 // until the running job is done
    void stopPhysicsThread();
    std::thread stepThread_;
    bool softwareRasterizer_ = false;  // llvmpipe draws: the physics thread's OpenMP team is one thread
    std::mutex jobMutex_;
    std::condition_variable jobWake_, jobDone_;
    Job job_;                          // the next job, under jobMutex_
    bool jobPending_ = false, quitPhysics_ = false;   // under jobMutex_
    std::atomic<bool> stepDone_{false};
    std::atomic<bool> handover_{false};   // the UI waits for the job: it ends after the step in progress
    int jobAsked_ = 0;                 // steps the running job was asked for
    std::atomic<double> physicsBusyMs_{0};   // wall ms the physics thread spent in jobs (method report)
    mutable double reportBusyMs_ = 0;  // physicsBusyMs_ at the last method report, and when
    mutable std::chrono::steady_clock::time_point reportWall_;
    bool stepRunning_ = false;
    bool reapplying_ = false;
    int jobSteps_ = 0;                 // steps the running job did
    double jobMs_ = 0;
    std::vector<double> jobStepMs_;    // (copies) the last step's ms on the physics thread
    std::vector<SessionEvent> pendingEvents_;   // applied to copy.world while the job ran
    double lastPaceMs_ = 0;            // the last frame's wait in paceFrame (not the frame's own work)
    std::chrono::steady_clock::time_point jobEnd_;   // when the last job ended (physics thread)
    // Copy 0's simulated time at the end of each job or synchronous stepping: the title's x real
    // time (realTimeFactor, real_time_meter.h).
    mutable RealTimeMeter realTime_;
    void noteSimTime(std::chrono::steady_clock::time_point when);

    // Session log and replay.
    Session session_;
    Session replay_;
    size_t replayNext_ = 0;
    bool replaying_ = false;

    // Viewports (framebuffer pixels, bottom-left origin) and the window's size.
    std::vector<Viewport> viewports_;
    int fbWidth_ = 1, fbHeight_ = 1;
    float panelWidth_ = 340;
    float plotsWidth_ = 0;             // the plots window's column on the right (0: closed)
    float graspWidth_ = 0;             // the Grasp window's column left of the plots (0: none)
    float selectionHeight_ = 0;        // the Selected-body window's height last frame
    float femLegendWidth_ = 360;       // the strain legend's width last frame
    float viewRight() const { return float(fbWidth_) - plotsWidth_ - graspWidth_; }   // the viewports' right edge
    std::map<std::string, UiRect> uiRects_;   // windows drawn last frame (printUiReport)
    float settingsContentHeight_ = 0, settingsAreaHeight_ = 0;
    std::vector<std::string> legendShown_;

    // Overlay sizes from the scene (view_scale.h), the floor, the last reset, captures.
    OverlayScale overlayScale_;
    long long resetTick_ = 0;          // tick_ at the last reset: the panel counts steps from it
    std::string captureDir_;

    // Mouse.
    MouseMode mouseMode_ = MouseMode::None;
    double mouseX_ = 0, mouseY_ = 0;
    int dragViewport_ = 0;
    Vec3 dragPlanePoint_{0, 0, 0};      // the drag target moves in the plane through the grab
    Vec3 dragTarget_{0, 0, 0};          // point facing the camera
    Vec3 dragLocal_{0, 0, 0};           // grabbed point in the body's COM frame
    int dragFemTri_ = -1;               // >= 0: a FEM surface point is grabbed (fem_pick.h)
    Vec3 dragFemWeights_{0, 0, 0};      // its weights on the triangle's nodes
    Vec3 rotateLever_{0, 0, 0};         // shift-drag: grab point relative to the centre of mass
    glm::vec2 rotateStartMouse_{0, 0};
    std::vector<std::pair<double, Vec3>> dragTrail_;   // (sim time, target) for the throw velocity
};

}  // namespace cs
