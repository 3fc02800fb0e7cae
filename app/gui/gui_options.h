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

// One copy of a side-by-side comparison, as --compare names it: MODEL[/SOLVER].
//   MODEL/jacobi|gs|pcg|pcr   the non-smooth Newton iteration with that linear solver. Under the
//                             CCP model too: its Newton over the relaxed rows (CcpSolverType::Newton)
//                             is the one CCP method that has a linear solver, so "ccp/pcr" runs what
//                             "standard/pcr" runs, on CCP's rows. (It used to run the scene's APGD
//                             under the label "ccp/pcr", with PCR in no part of it: issue 36.)
//   ccp/pj|pgs|apgd           the CCP model's first-order methods, which have no linear solver.
//   MODEL                     PCR; under ccp, the scene's own CCP method.
//   standard/soft (any method of solveMethods() but newton)   the standard model solved by that
//                             method instead of Newton (SolveMethod, engine/solver/soft_step.h).
// How many iterations each method takes stays the scene's (or --newton, --linear); the copy's
// label (copyLabel) names them as they run.
struct CopySpec {
    ContactModelType model = ContactModelType::Standard;
    LinearSolverType solver = LinearSolverType::PCR;
    std::optional<CcpSolverType> ccpSolver;   // CCP model: the method the spec named; none: the scene's
    bool hyperplane = false;   // faces as hyperplanes (WorldSettings::hyperplaneFaces); "hyperplane" in --compare
    SolveMethod method = SolveMethod::Newton;   // how the step is solved (SolverSettings::method)
    void apply(WorldSettings& s) const;   // the model, its method and solver, the faces, over s
    static CopySpec of(const WorldSettings& s);   // what s runs, as a spec
};

// A copy's label: the contact model, then how its step is solved with the iteration caps, read
// from the settings it runs with: "standard/newton 8 x pcr 40", "ccp/apgd 100", "ccp/newton 8 x
// pcr 40", "hyperplane/newton 8 x pcr 40" (the standard model on hyperplane faces), "compliant/
// rk-merson + newton 8 x pcr 40" (contacts as forces in its own integrator, joints by Newton).
// "standard/soft": another solve method than Newton names itself, with no Newton caps.
std::string copyLabel(const WorldSettings& s);

// Every SolveMethod, in enum order, read from solveMethodName / parseSolveMethodName (the names
// round-trip for each value and for no value past the last): a method added to the engine appears
// in the app's combo and in --compare without a change here.
const std::vector<SolveMethod>& solveMethods();

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
    int maxFps = 60;                   // --max-fps N: real-time frames at most N a second (0: no cap)
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

// "standard/pcr,standard/jacobi" -> copies; false with a one-line *error on an unknown name, a
// CCP method under another model, or more than 4 copies.
bool parseCompareList(const std::string& text, std::vector<CopySpec>& out, std::string* error);

const char* guiUsage();
const char* recordUsage();

}  // namespace cs
