// Parsing of `sandbox run` options (see printUsage for the list).
#include "app/cli.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/scene/scene_loader.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/solver/soft_step.h"

namespace cs {

namespace {

bool parseDouble(const std::string& s, double& v) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    v = std::strtod(s.c_str(), &end);
    return errno == 0 && end && *end == '\0' && std::isfinite(v);
}

// A number or a fraction of two ("1/120"), as the peers' tools take a time step.
bool parseFraction(const std::string& s, double& v) {
    const size_t slash = s.find('/');
    if (slash == std::string::npos) return parseDouble(s, v);
    double num, den;
    if (!parseDouble(s.substr(0, slash), num) || !parseDouble(s.substr(slash + 1), den) || den == 0) return false;
    v = num / den;
    return std::isfinite(v);
}

// Three numbers "X,Y,Z", each within 1000 (metres): 0, or 1 where the commas are wrong, 2 where
// a number is malformed or out of range.
int parseTriple(std::string s, double out[3]) {
    for (int k = 0; k < 3; ++k) {
        const size_t comma = s.find(',');
        if ((k < 2) != (comma != std::string::npos)) return 1;
        if (!parseDouble(s.substr(0, comma), out[k]) || std::fabs(out[k]) > 1e3) return 2;
        s = k < 2 ? s.substr(comma + 1) : "";
    }
    return 0;
}

bool parseInt(const std::string& s, long long& v) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    v = std::strtoll(s.c_str(), &end, 10);
    return errno == 0 && end && *end == '\0';
}

}  // namespace

void printUsage(std::FILE* out) {
    std::fprintf(out,
        "usage: sandbox                      open the GUI on the default scene (%s)\n"
        "       sandbox SCENE | gui [SCENE] [gui options]\n"
        "       sandbox record SCENE --out FILE.mp4 [--seconds S] ...\n"
        "       sandbox list                 the scene library with one-line descriptions\n"
        "       sandbox run SCENE [options]  headless run, summary or JSON at the end\n"
        "run options:\n"
        "  --method newton|pgs|soft (standard model: the non-smooth Newton method, sequential impulses, or Box2D v3's soft step)\n"
        "  --pgs-iters N (sequential impulses' velocity and split-impulse sweeps per step; scene block \"pgs\")\n"
        "  --soft-substeps N  --soft-hertz F (the soft step's substeps and contact frequency; scene block \"soft\")\n"
        "  --contact standard|peg|plus|compliant|ccp   --solver jacobi|gs|pcg|pcr   --ncp fb|min\n"
        "  --ccp-solver pj|pgs|apgd|newton (ccp model; newton uses --solver)  --ccp-iters N\n"
        "  --dt H  --steps N | --seconds T  --newton N  --iters M  --substeps K  --seed S\n"
        "  --far-newton N (a step at its Newton cap with merit above 1e-2 m/s goes on up to N iterations;\n"
        "                 with --sleeping at least 2x the cap; SolverSettings::farNewtonIterations)\n"
        "  --threads N  --backend cpu|cuda|host  --json  --trace FILE.csv  --state-out FILE.json\n"
        "  --overlap-every N (overlap volume stride, 0: last step only; default 10)  --no-progress\n"
        "  --sleeping (islands at rest sleep; off unless the scene sets \"sleeping\": true)\n"
        "  --cull-rows on|off (standard model: leave out contacts that cannot close; engine/contact/row_culling.h)\n"
        "  --condense on|off (FEM element rows by a sparse direct solve in node space; default on)\n"
        "  --keep-best on|off (Newton returns its least-merit iterate when it ends at its cap twice worse)\n"
        "  --forcing ETA (0 < ETA < 1: Eisenstat-Walker linear tolerance per Newton iteration, at most ETA; 0: off)\n"
        "  --step-cut G (G > 1: a Newton step raising the merit more than G times is halved, twice at most; 0: off)\n"
        "  --preconditioner diagonal|block (PCG and PCR; scene key linear_preconditioner)\n"
        "  --narrow-reuse on|off (narrow phase: pairs at rest test their cached feature pairs only; same contacts)\n"
        "  --partial-wake on|off (with sleeping: a drag wakes its body alone, a sleeping body wakes when its load\n"
        "    changes; off: the whole island wakes; default on)\n"
        "  --script (play the scene's grasp script) | --script=FILE   --grip-force N (replaces the script's)\n"
        "  --drag NAME:DX,DY,DZ[@T] (the mouse drag of body NAME from time T: its centre pulled by DX,DY,DZ m over 1 s)\n"
        "  --drag-point LX,LY,LZ (the grabbed point in the body's frame, m; default its centre)\n"
        "  --drag-over S (the drag's move takes S s; default 1)  --drag-release T (the mouse lets go at time T s)\n"
        "SCENE is a library name (sandbox list) or a path to a scene .json file.\n",
        kDefaultScene);
}

bool parseRunOptions(int argc, char** argv, int first, RunOptions& o, std::string* error) {
    auto fail = [&](const std::string& msg) {
        if (error) *error = msg;
        return false;
    };
    for (int i = first; i < argc; ++i) {
        std::string a = argv[i];
        if (a.size() < 2 || a.compare(0, 2, "--") != 0) {
            if (!o.scene.empty()) return fail("unexpected argument \"" + a + "\" (the scene is \"" + o.scene + "\")");
            o.scene = a;
            continue;
        }
        // Flags without a value.
        if (a == "--json") { o.json = true; continue; }
        if (a == "--sleeping") { o.sleeping = true; continue; }
        if (a == "--no-progress") { o.progress = false; continue; }
        if (a == "--script") { o.script = true; continue; }   // the scene's own script; --script=FILE below
        // Options with a value: --opt V or --opt=V.
        std::string v;
        size_t eq = a.find('=');
        if (eq != std::string::npos) {
            v = a.substr(eq + 1);
            a = a.substr(0, eq);
        } else if (i + 1 < argc) {
            v = argv[++i];
        } else {
            static const char* known[] = {"--method", "--pgs-iters", "--soft-substeps", "--soft-hertz", "--contact", "--solver", "--ncp", "--dt", "--steps", "--seconds",
                                          "--newton", "--far-newton", "--iters", "--seed", "--substeps", "--trace",
                                          "--state-out", "--threads", "--backend", "--overlap-every",
                                          "--grip-force", "--cull-rows", "--condense", "--keep-best", "--forcing", "--step-cut",
                                          "--preconditioner", "--narrow-reuse", "--partial-wake", "--drag",
                                          "--drag-point", "--drag-over", "--drag-release",
                                          "--ccp-solver", "--ccp-iters"};
            for (const char* k : known)
                if (a == k) return fail("option " + a + " needs a value");
            return fail("unknown option " + a + " (see sandbox --help)");
        }
        auto bad = [&](const std::string& expected) { return fail("bad value \"" + v + "\" for " + a + ": expected " + expected); };
        double d;
        long long n;
        if (a == "--method") {
            SolveMethod m;
            if (!parseSolveMethodName(v, m)) return bad("newton, pgs or soft");
            o.method = m;
        } else if (a == "--pgs-iters") {
            if (!parseInt(v, n) || n < 1 || n > SceneLimits::iters)
                return bad("a positive integer, at most " + std::to_string(SceneLimits::iters));
            o.pgsIters = int(n);
        } else if (a == "--soft-substeps") {
            if (!parseInt(v, n) || n < 1 || n > SceneLimits::substeps)
                return bad("a positive integer, at most " + std::to_string(SceneLimits::substeps));
            o.softSubsteps = int(n);
        } else if (a == "--soft-hertz") {
            if (!parseDouble(v, d) || !(d > 0) || d > 1e6) return bad("a contact frequency in Hz, > 0");
            o.softHertz = d;
        } else if (a == "--contact") {
            ContactModelType t;
            if (!parseContactModelName(v, t)) return bad("standard, peg, plus, compliant or ccp");
            o.contact = t;
        } else if (a == "--ccp-solver") {
            CcpSolverType t;
            if (!parseCcpSolverName(v.c_str(), t)) return bad("pj, pgs, apgd or newton");
            o.ccpSolver = t;
        } else if (a == "--ccp-iters") {
            if (!parseInt(v, n) || n < 1 || n > SceneLimits::iters)
                return bad("a positive integer, at most " + std::to_string(SceneLimits::iters));
            o.ccpIters = int(n);
        } else if (a == "--solver") {
            LinearSolverType t;
            if (!parseSolverTypeName(v, t)) return bad("jacobi, gs, pcg or pcr");
            o.solver = t;
        } else if (a == "--ncp") {
            NcpFunction f;
            if (!parseNcpFunctionName(v, f)) return bad("fb or min");
            o.ncp = f;
        } else if (a == "--dt") {
            if (!parseFraction(v, d) || !(d > 0) || d > 1) return bad("a time step in (0, 1] seconds (1/120 or 0.00833)");
            o.dt = d;
        } else if (a == "--seconds") {
            if (!parseFraction(v, d) || !(d > 0) || d > 1e6) return bad("a positive number of seconds");
            o.seconds = d;
        } else if (a == "--steps" || a == "--newton" || a == "--far-newton" || a == "--iters" || a == "--substeps" ||
                   a == "--threads") {
            // The scene format's limits (SceneLimits) hold on the command line too.
            const long long most = a == "--newton" || a == "--far-newton" ? SceneLimits::newton
                                   : a == "--iters"    ? SceneLimits::iters
                                   : a == "--substeps" ? SceneLimits::substeps
                                   : a == "--threads"  ? 1024
                                                       : 100000000;
            if (!parseInt(v, n) || n < 1 || n > most)
                return bad("a positive integer, at most " + std::to_string(most));
            if (a == "--steps") o.steps = int(n);
            else if (a == "--newton") o.newton = int(n);
            else if (a == "--far-newton") o.farNewton = int(n);
            else if (a == "--iters") o.iters = int(n);
            else if (a == "--substeps") o.substeps = int(n);
            else o.threads = int(n);
        } else if (a == "--overlap-every") {
            if (!parseInt(v, n) || n < 0 || n > 100000000) return bad("a non-negative integer");
            o.overlapStride = int(n);
        } else if (a == "--seed") {
            if (!parseInt(v, n) || n < 0) return bad("a non-negative integer");
            o.seed = uint64_t(n);
        } else if (a == "--trace") {
            o.trace = v;
        } else if (a == "--state-out") {
            o.stateOut = v;
        } else if (a == "--script") {
            if (v.empty()) return bad("a script file (--script=FILE), or --script alone for the scene's script");
            o.script = true;
            o.scriptFile = v;
        } else if (a == "--grip-force") {
            if (!parseDouble(v, d) || !(d > 0) || d > 1e6) return bad("a grip force in newtons, > 0");
            o.gripForce = d;
        } else if (a == "--cull-rows") {
            if (v != "on" && v != "off") return bad("on or off");
            o.cullRows = v == "on";
        } else if (a == "--condense") {
            if (v != "on" && v != "off") return bad("on or off");
            o.condense = v == "on";
        } else if (a == "--keep-best") {
            if (v != "on" && v != "off") return bad("on or off");
            o.keepBest = v == "on";
        } else if (a == "--forcing") {
            if (!parseDouble(v, d) || !(d >= 0) || !(d < 1)) return bad("a largest linear tolerance in [0, 1)");
            o.forcing = d;
        } else if (a == "--step-cut") {
            if (!parseDouble(v, d) || !(d == 0 || d > 1) || d > 1e12) return bad("a merit growth factor > 1, or 0");
            o.stepCut = d;
        } else if (a == "--preconditioner") {
            Preconditioner p;
            if (!parsePreconditioner(v.c_str(), p)) return bad("diagonal or block");
            o.preconditioner = p;
        } else if (a == "--partial-wake") {
            if (v != "on" && v != "off") return bad("on or off");
            o.partialWake = v == "on";
        } else if (a == "--narrow-reuse") {
            if (v != "on" && v != "off") return bad("on or off");
            o.narrowReuse = v == "on";
        } else if (a == "--drag") {
            const size_t colon = v.rfind(':');
            if (colon == std::string::npos || colon == 0) return bad("NAME:DX,DY,DZ[@T]");
            std::string move = v.substr(colon + 1), start;
            if (size_t at = move.find('@'); at != std::string::npos) {
                start = move.substr(at + 1);
                move = move.substr(0, at);
            }
            if (!start.empty() && (!parseDouble(start, d) || !(d >= 0) || d > 1e6)) return bad("NAME:DX,DY,DZ[@T], T >= 0 s");
            if (!start.empty()) o.dragStart = d;
            if (const int e = parseTriple(move, o.dragMove))
                return bad(e == 1 ? "NAME:DX,DY,DZ[@T]" : "NAME:DX,DY,DZ[@T], |D| <= 1000 m");
            o.dragBody = v.substr(0, colon);
        } else if (a == "--drag-point") {
            if (const int e = parseTriple(v, o.dragPoint)) return bad(e == 1 ? "LX,LY,LZ" : "LX,LY,LZ, |L| <= 1000 m");
        } else if (a == "--drag-over") {
            if (!parseDouble(v, d) || !(d > 0) || d > 1e6) return bad("a duration in seconds, > 0");
            o.dragOver = d;
        } else if (a == "--drag-release") {
            if (!parseDouble(v, d) || !(d >= 0) || d > 1e6) return bad("a time in seconds, >= 0");
            o.dragRelease = d;
        } else if (a == "--backend") {
            if (v != "cpu" && v != "cuda" && v != "host") return bad("cpu, cuda or host");
            o.backend = v;
        } else {
            return fail("unknown option " + a + " (see sandbox --help)");
        }
    }
    if (o.scene.empty()) return fail("missing scene name (see sandbox list)");
    if (o.steps && o.seconds) return fail("give --steps or --seconds, not both");
    return true;
}

void applyRunOptions(const RunOptions& o, WorldSettings& s) {
    if (o.method) s.solver.method = *o.method;
    if (o.softSubsteps) s.solver.soft.substeps = *o.softSubsteps;
    if (o.pgsIters) s.solver.pgs.iterations = s.solver.pgs.splitIterations = *o.pgsIters;
    if (o.softHertz) s.solver.soft.contactHertz = Real(*o.softHertz);
    if (o.contact) s.solver.contactModel = *o.contact;
    if (o.solver) s.solver.linearSolver = *o.solver;
    if (o.ncp) s.solver.ncp = *o.ncp;
    if (o.ccpSolver) s.solver.ccp.solver = *o.ccpSolver;
    if (o.ccpIters) s.solver.ccp.iterations = *o.ccpIters;
    if (o.dt) s.dt = Real(*o.dt);
    if (o.newton) s.solver.newtonIterations = *o.newton;
    if (o.farNewton) s.solver.farNewtonIterations = *o.farNewton;
    if (o.iters) s.solver.linearIterations = *o.iters;
    if (o.substeps) s.substeps = *o.substeps;
    if (o.sleeping) s.sleeping = true;
    if (o.cullRows) s.solver.cullRows = *o.cullRows;
    if (o.condense) s.solver.condenseCompliantRows = *o.condense;
    if (o.keepBest) s.solver.keepBestIterate = *o.keepBest;
    if (o.forcing) s.solver.linearForcing = Real(*o.forcing);
    if (o.stepCut) s.solver.stepCutGrowth = Real(*o.stepCut);
    if (o.preconditioner) s.solver.preconditioner = *o.preconditioner;
    if (o.narrowReuse) s.narrowReuse = *o.narrowReuse;
    if (o.partialWake) s.partialWake = *o.partialWake;
}

}  // namespace cs
