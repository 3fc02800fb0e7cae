// Command-line parsing for `sandbox gui` and `sandbox record`; see gui_options.h.
#include "app/gui/gui_options.h"

#include "engine/fem/fem_deform.h"

#include <cstdlib>
#include <sstream>

#include "engine/scene/scene_loader.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/solver/soft_step.h"

namespace cs {

void CopySpec::apply(WorldSettings& s) const {
    s.solver.contactModel = model;
    s.solver.linearSolver = solver;
    if (model == ContactModelType::CCP && ccpSolver) s.solver.ccp.solver = *ccpSolver;
    if (hyperplane) s.hyperplaneFaces = true;
    s.solver.method = method;
}

CopySpec CopySpec::of(const WorldSettings& s) {
    CopySpec spec;
    spec.model = s.solver.contactModel;
    spec.solver = s.solver.linearSolver;
    if (spec.model == ContactModelType::CCP) spec.ccpSolver = s.solver.ccp.solver;
    spec.hyperplane = s.hyperplaneFaces;
    spec.method = s.solver.method;
    return spec;
}

const std::vector<SolveMethod>& solveMethods() {
    static const std::vector<SolveMethod> list = [] {
        std::vector<SolveMethod> out;
        for (int m = 0; m < 64; ++m) {
            SolveMethod parsed;
            if (!parseSolveMethodName(solveMethodName(SolveMethod(m)), parsed) || int(parsed) != m) break;
            out.push_back(SolveMethod(m));
        }
        return out;
    }();
    return list;
}

std::string copyLabel(const WorldSettings& s) {
    const SolverSettings& p = s.solver;
    // The standard model on hyperplane faces is the variant `sandbox experiment` calls "hyperplane".
    std::string name = contactModelName(p.contactModel);
    if (s.hyperplaneFaces) name = p.contactModel == ContactModelType::Standard ? "hyperplane" : name + "+hyperplane";
    const std::string newton = "newton " + std::to_string(p.newtonIterations) + " x " +
                               solverTypeName(p.linearSolver) + " " + std::to_string(p.linearIterations);
    if (p.contactModel == ContactModelType::CCP && p.ccp.solver != CcpSolverType::Newton)
        return name + "/" + ccpSolverName(p.ccp.solver) + " " + std::to_string(p.ccp.iterations);
    if (p.contactModel == ContactModelType::Compliant) return name + "/rk-merson + " + newton;
    if (p.method != SolveMethod::Newton) return name + "/" + solveMethodName(p.method);
    return name + "/" + newton;
}

void SettingOverrides::apply(WorldSettings& s) const {
    if (model) s.solver.contactModel = *model;
    if (ncp) s.solver.ncp = *ncp;
    if (solver) s.solver.linearSolver = *solver;
    if (newton) s.solver.newtonIterations = *newton;
    if (linear) s.solver.linearIterations = *linear;
    if (substeps) s.substeps = *substeps;
    if (dt) s.dt = *dt;
    if (friction) s.frictionScale = *friction;
    if (gravity) s.gravity = *gravity;
}

bool parseCompareList(const std::string& text, std::vector<CopySpec>& out, std::string* error) {
    out.clear();
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
        if (item.empty()) continue;
        CopySpec spec;
        size_t slash = item.find('/');
        std::string model = item.substr(0, slash);
        spec.hyperplane = model == "hyperplane";
        if (spec.hyperplane) model = "standard";
        if (!parseContactModelName(model, spec.model)) {
            *error = "--compare: unknown contact model '" + model + "' (standard, hyperplane, peg, plus, compliant, ccp)";
            return false;
        }
        const bool ccp = spec.model == ContactModelType::CCP;
        if (slash != std::string::npos) {
            // A linear solver means Newton with it, for every model (CopySpec); pj, pgs and apgd
            // are CCP's own methods. "newton" alone is refused: it would leave the linear solver unsaid.
            std::string solver = item.substr(slash + 1);
            CcpSolverType method;
            SolveMethod solveMethod;
            // ccp's own names first: "ccp/pgs" is CCP's projected Gauss-Seidel, "standard/pgs" a SolveMethod.
            if (!ccp && parseSolveMethodName(solver, solveMethod) && solveMethod != SolveMethod::Newton) {
                if (spec.model != ContactModelType::Standard || spec.hyperplane) {
                    *error = "--compare: '" + item + "': " + solver + " solves the standard model only";
                    return false;
                }
                spec.method = solveMethod;
            } else if (parseSolverTypeName(solver, spec.solver)) {
                if (ccp) spec.ccpSolver = CcpSolverType::Newton;
            } else if (parseCcpSolverName(solver.c_str(), method) && method != CcpSolverType::Newton) {
                if (!ccp) {
                    *error = "--compare: '" + item + "': " + solver + " is a method of the ccp model; " + model +
                             " takes a linear solver (jacobi, gs, pcg, pcr)";
                    return false;
                }
                spec.ccpSolver = method;
            } else if (solver == "newton") {
                *error = "--compare: '" + item + "': name Newton's linear solver instead (" + model +
                         "/pcr is Newton with PCR)";
                return false;
            } else {
                std::string others;   // the solve methods other than Newton: "standard/soft"
                for (SolveMethod m : solveMethods())
                    if (m != SolveMethod::Newton) others += std::string(", ") + solveMethodName(m);
                *error = "--compare: unknown solver '" + solver + "' in '" + item + "' (jacobi, gs, pcg, pcr" +
                         (ccp ? ": ccp's Newton with that linear solver; or ccp's pj, pgs, apgd)"
                              : "; standard also" + others + ")");
                return false;
            }
        }
        out.push_back(spec);
    }
    if (out.empty() || out.size() > 4) {
        *error = "--compare takes 1 to 4 copies, e.g. 'standard/pcr,standard/jacobi'";
        return false;
    }
    return true;
}

namespace {

bool parseNumber(const char* s, double& v) {
    char* end = nullptr;
    v = std::strtod(s, &end);
    return end != s && *end == 0;
}

bool parseInt(const char* s, int& v) {
    char* end = nullptr;
    long l = std::strtol(s, &end, 10);
    v = int(l);
    return end != s && *end == 0;
}

}  // namespace

bool parseGuiOptions(int argc, char** argv, bool record, GuiOptions& o, std::string* error) {
    auto need = [&](int& i, const std::string& name) -> const char* {
        if (i + 1 >= argc) {
            *error = name + " needs a value";
            return nullptr;
        }
        return argv[++i];
    };
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const char* v = nullptr;
        double d = 0;
        int n = 0;
        auto bad = [&](const char* what) {
            *error = a + ": " + what + " expected, got '" + (v ? v : "") + "'";
            return false;
        };
        if (a == "-h" || a == "--help") {
            o.help = true;
        } else if (a == "--size") {
            if (!(v = need(i, a))) return false;
            if (std::sscanf(v, "%dx%d", &o.width, &o.height) != 2 || o.width < 64 || o.height < 64 ||
                o.width > 7680 || o.height > 4320)
                return bad("WxH (64..7680 x 64..4320)");
        } else if (a == "--compare") {
            if (!(v = need(i, a))) return false;
            if (!parseCompareList(v, o.compare, error)) return false;
        } else if (a == "--model") {
            if (!(v = need(i, a))) return false;
            ContactModelType t;
            if (!parseContactModelName(v, t)) return bad("standard, peg, plus, compliant or ccp");
            o.overrides.model = t;
        } else if (a == "--ncp") {
            if (!(v = need(i, a))) return false;
            NcpFunction f;
            if (!parseNcpFunctionName(v, f)) return bad("fb or min");
            o.overrides.ncp = f;
        } else if (a == "--solver") {
            if (!(v = need(i, a))) return false;
            LinearSolverType t;
            if (!parseSolverTypeName(v, t)) return bad("jacobi, gs, pcg or pcr");
            o.overrides.solver = t;
        } else if (a == "--newton" || a == "--linear" || a == "--substeps" || a == "--frames" || a == "--fps") {
            if (!(v = need(i, a))) return false;
            if (!parseInt(v, n) || n < (a == "--frames" ? 0 : 1)) return bad("a positive integer");
            if (a == "--newton") o.overrides.newton = n;
            else if (a == "--linear") o.overrides.linear = n;
            else if (a == "--substeps") o.overrides.substeps = n;
            else if (a == "--frames") o.frames = n;
            else o.fps = std::min(n, 240);
        } else if (a == "--dt" || a == "--friction" || a == "--seconds") {
            if (!(v = need(i, a))) return false;
            if (!parseNumber(v, d) || d < 0 || (a == "--dt" && (d <= 0 || d > 0.1))) return bad("a non-negative number");
            if (a == "--dt") o.overrides.dt = Real(d);
            else if (a == "--friction") o.overrides.friction = Real(d);
            else o.seconds = d;
        } else if (a == "--gravity") {
            if (!(v = need(i, a))) return false;
            double x, y, z;
            if (std::sscanf(v, "%lf,%lf,%lf", &x, &y, &z) == 3) o.overrides.gravity = Vec3{Real(x), Real(y), Real(z)};
            else if (parseNumber(v, z)) o.overrides.gravity = Vec3{0, 0, Real(z)};
            else return bad("gz or gx,gy,gz");
        } else if (a == "--out" && record) {
            if (!(v = need(i, a))) return false;
            o.out = v;
        } else if (a == "--headless") {
            o.headless = true;
        } else if (a == "--no-shadows") {
            o.shadows = false;
        } else if (a == "--shadows") {
            o.forceShadows = true;
        } else if (a == "--fixed-step") {
            o.fixedStep = true;
        } else if (a == "--real-time") {
            o.realTime = true;
        } else if (a == "--max-fps") {
            if (!(v = need(i, a))) return false;
            if (!parseNumber(v, d) || !(d >= 0 && d <= 1000)) return bad("0 (no cap) to 1000 frames a second");
            o.maxFps = int(d);
        } else if ((a == "--script" && record) || a == "--play-script") {
            o.playScript = true;
        } else if (a == "--grip-force") {
            if (!(v = need(i, a))) return false;
            if (!parseNumber(v, d) || !(d > 0 && d < 1e6)) return bad("a positive force in N");
            o.gripForce = d;
        } else if (a == "--fem-deform") {
            if (!(v = need(i, a))) return false;
            std::vector<Vec3> unused;
            if (!deformFemBodies(Model{}, v, unused, error)) return false;
            o.femDeform = v;
        } else if (a == "--script" || a == "--screenshot" || a == "--replay" || a == "--session-out" ||
                   a == "--capture-dir" || a == "--frame-profile") {
            if (!(v = need(i, a))) return false;
            if (a == "--capture-dir") o.captureDir = v;
            else if (a == "--frame-profile") o.frameProfile = v;
            else if (a == "--script") o.script = v;
            else if (a == "--screenshot") o.screenshot = v;
            else if (a == "--replay") o.replay = v;
            else o.sessionOut = v;
        } else if (!a.empty() && a[0] == '-') {
            *error = "unknown option " + a + " (see --help)";
            return false;
        } else if (o.scene.empty()) {
            o.scene = a;
        } else {
            *error = "more than one scene given ('" + o.scene + "', '" + a + "')";
            return false;
        }
    }
    if (record && o.out.empty() && !o.help) {
        *error = "record needs --out FILE.mp4";
        return false;
    }
    return true;
}

const char* guiUsage() {
    return "usage: sandbox gui [SCENE] [options]\n"
           "  --compare 'standard/pcr,standard/jacobi'  2 to 4 copies side by side, MODEL[/SOLVER] each:\n"
           "                      MODEL standard, hyperplane (standard on faces as hyperplanes), peg, plus,\n"
           "                      compliant, ccp; SOLVER jacobi, gs, pcg, pcr: Newton with that linear solver\n"
           "                      (ccp too: its Newton over the relaxed rows), or ccp's own pj, pgs, apgd;\n"
           "                      none: pcr (ccp: the scene's method); standard/soft: the soft step instead\n"
           "                      of Newton (docs/relaxation.md). Each copy's label names what it runs\n"
           "  --model M --ncp fb|min --solver S --newton N --linear N --dt S --substeps N\n"
           "  --friction X --gravity gz|gx,gy,gz        settings over the scene's own\n"
           "  --size WxH (default 1280x720)  --shadows | --no-shadows (default: on with a GPU)\n"
           "  --replay FILE       replay a recorded session (settings above override its solver)\n"
           "  --session-out FILE  record this session's inputs to FILE on exit\n"
           "  --capture-dir DIR   screenshots (P) and MP4 recordings (M) go here (default ~/Videos/contact-sandbox)\n"
           "  --play-script       play the scene's grasp script (Grasp window: Play script)\n"
           "  --grip-force N      grip force of the grasp script and the Grasp window's start\n"
           "  --script FILE --frames N --screenshot FILE --headless --fixed-step   (tests)\n"
           "  --real-time         with --script: step in real time on the physics thread, not fixed steps\n"
           "  --max-fps N         real time: at most N frames a second (default 60; 0: as many as it can draw);\n"
           "                      a frame also waits (up to 40 ms) for the physics thread's job to end\n"
           "  --frame-profile FILE.csv  each frame's time by part (poll, adopt, view slices, UI, swap...)\n"
           "  (without a GPU: Mesa's llvmpipe draws on cores - 2 threads, none on 2 cores, leaving a core to\n"
           "   the physics thread; LP_NUM_THREADS=N in the environment overrides it)\n"
           "  --fem-deform stretch:A|squeeze:A|bend:K|twist:T   deformable bodies start deformed by hand (review)\n";
}

const char* recordUsage() {
    return "usage: sandbox record [SCENE] --out FILE.mp4 [--seconds S] [--size WxH] [--fps F]\n"
           "       [--compare 'standard/pcr,standard/jacobi'] [--replay SESSION] [settings as for run]\n"
           "       [--script [--grip-force N]]  play the scene's grasp script (and a second after it)\n"
           "  no SCENE: the demo, assets/sessions/pyramid_wrecking_ball.json (a steel ball into the pyramid)\n"
           "  renders offscreen (EGL surfaceless, no X server) through ffmpeg/libx264, with shadows\n"
           "  (--no-shadows: without); sleeping bodies keep their colours;\n"
           "  without ffmpeg it writes PNG frames next to FILE instead.\n";
}

}  // namespace cs
