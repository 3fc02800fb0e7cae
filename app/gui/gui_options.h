// Command-line options of `sandbox gui` and `sandbox record`: the scene, the window or video size,
// the copies to compare, scripted input for tests, session replay, and the world settings as for
// `sandbox run` (--model, --ncp, --solver, --newton, --linear, --dt, --substeps, --friction,
// --gravity).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/world.h"

namespace cs {

// One copy of a side-by-side comparison: "standard/pcr" names a contact model and a linear solver.
struct CopySpec {
    ContactModelType model = ContactModelType::Standard;
    LinearSolverType solver = LinearSolverType::PCR;
    bool hyperplane = false;   // faces as hyperplanes (WorldSettings::hyperplaneFaces); "hyperplane" in --compare
    std::string label() const;
};

// Setting overrides from the command line, applied over the scene's own settings.
struct SettingOverrides {
    std::optional<ContactModelType> model;
    std::optional<NcpFunction> ncp;
    std::optional<LinearSolverType> solver;
    std::optional<int> newton, linear, substeps;
    std::optional<Real> dt, friction;
    std::optional<Vec3> gravity;
    void apply(WorldSettings& s) const;
};

struct GuiOptions {
    std::string scene;                 // library name or path; empty: the default scene
    int width = 1280, height = 720;
    std::vector<CopySpec> compare;     // empty: a single copy with the scene's settings
    SettingOverrides overrides;
    // Tests and headless use.
    bool headless = false;             // EGL surfaceless instead of a window
    std::string script;                // scripted input (app/gui/gui_script.h)
    std::string screenshot;            // PNG written at the end
    int frames = 0;                    // quit after this many frames (0: run until closed)
    bool fixedStep = false;            // advance 1/fps of simulated time per frame
    bool realTime = false;             // --real-time: a script does not fix the stepping (the physics thread steps)
    bool shadows = true;               // --no-shadows: off
    bool forceShadows = false;         // --shadows: on even on a software rasterizer
    std::string frameProfile;          // --frame-profile FILE.csv: each frame's parts (frame_profile.h)
    // Sessions.
    std::string replay;                // session file to replay
    std::string sessionOut;            // write the session here on exit
    // Recording.
    std::string captureDir;            // screenshots (P) and recordings (M); empty: ~/Videos/contact-sandbox
    std::string femDeform;             // "stretch:1.5": deformable bodies start deformed (engine/fem/fem_deform.h)
    std::string out;                   // video file
    double seconds = -1;               // <0: the scene's duration
    int fps = 60;
    bool help = false;
    // Grasping (grasp_ui.h).
    bool playScript = false;           // gui --play-script, record --script: play the scene's grasp script
    double gripForce = -1;             // --grip-force N (> 0): replaces the script's and the scene's grip force
};

// Parses argv as after the subcommand (argv[0] skipped). record = true accepts the record
// options and requires --out. Returns false with a one-line *error.
bool parseGuiOptions(int argc, char** argv, bool record, GuiOptions& out, std::string* error);

// "standard/pcr,standard/jacobi" -> copies; false with *error on an unknown name or > 4 copies.
bool parseCompareList(const std::string& text, std::vector<CopySpec>& out, std::string* error);

const char* guiUsage();
const char* recordUsage();

}  // namespace cs
