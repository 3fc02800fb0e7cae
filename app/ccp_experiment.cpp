// `sandbox experiment ccp-pile|ccp-liftoff|ccp-scenes|ccp-all`: the cone complementarity model
// ([CCP]; docs/ccp.md) measured.
//
//   ccp-pile     a granular pile of spheres and cubes (half and half, 10 cm, on a lattice in a
//                walled box, every body touching its neighbours) for each --sizes N: one step
//                solved by each CCP solver from the same state (warm impulses of --settle PGS
//                steps), the CCP merit after every iteration until it is below --tol (RMS over
//                the contacts, m/s: the merit's 2-norm below tol x sqrt(contacts)) or --iters
//                iterations, and the solve time of that step (one thread); --solvers pj,pgs,apgd,newton-pcr
//                picks some of them.
//                  ccp_pile_residual.csv  size, solver, iteration, merit (m/s)
//                  ccp_pile_time.csv      size, solver, bodies, contacts, iterations, solve ms, final merit
//   ccp-liftoff  and ccp-scenes: app/ccp_experiment_scenes.cpp; ccp-newton: app/ccp_experiment_newton.cpp.
// scripts/ccp_plot.py draws ccp_pile.png and ccp_liftoff.png from the CSVs; ccp-all runs it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app/ccp_experiment.h"
#include "engine/model_builder.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/world.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace cs {

namespace {

// A walled box holding N bodies on a lattice: per layer nx x nx sites, cubes (half extent r) and
// spheres (radius r) chosen by a SplitMix64 stream of the seed, every body at rest on the one
// below (vertical pitch 2r) with 2 mm between neighbours in a layer (inside the contact margin,
// so their contacts are in the problem), each site shifted by up to 0.2 mm sideways. The gaps
// matter: a lattice of pitch 2r exactly filling the box is jammed, the sum of the gaps along a
// row from wall to wall is zero, and once a settling step compresses it the problem of eq. 11
// is unbounded (d_n >= 0 cannot hold along the row, and the impulses grow without end).
Model granularPile(int count, uint64_t seed) {
    const Real r = Real(0.05), pitch = 2 * r + Real(0.002);
    const int nx = std::max(2, int(std::lround(std::sqrt(count / 10.0))));
    const Real width = nx * pitch;
    uint64_t state = seed * 0x9E3779B97F4A7C15ull;
    auto uniform = [&]() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return double((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
    };
    Model m;
    std::string err;
    auto addStatic = [&](Vec3 half, Vec3 pos) {
        BodyDesc d;
        d.isStatic = true;
        d.name = "wall" + std::to_string(m.bodyCount());
        d.material.friction = Real(0.5);
        ShapeDesc s;
        s.polytope = makeBox(half);
        d.shapes.push_back(s);
        d.pose.pos = pos;
        addBody(m, d, &err);
    };
    const Real layers = Real(count / (nx * nx) + 1) * 2 * r, wallHalf = Real(0.5) * width;
    addStatic({wallHalf + 1, wallHalf + 1, Real(0.5)}, {wallHalf, wallHalf, Real(-0.5)});   // floor, top at z = 0
    addStatic({Real(0.05), wallHalf, layers}, {Real(-0.05), wallHalf, layers});
    addStatic({Real(0.05), wallHalf, layers}, {width + Real(0.05), wallHalf, layers});
    addStatic({wallHalf, Real(0.05), layers}, {wallHalf, Real(-0.05), layers});
    addStatic({wallHalf, Real(0.05), layers}, {wallHalf, width + Real(0.05), layers});
    for (int k = 0; k < count; ++k) {
        const int layer = k / (nx * nx), i = (k / nx) % nx, j = k % nx;
        BodyDesc d;
        d.name = "grain" + std::to_string(k);
        d.density = 1000;
        d.material.friction = Real(0.5);
        ShapeDesc s;
        if (uniform() < 0.5) {
            s.type = ShapeType::Sphere;
            s.radius = r;
        } else {
            s.polytope = makeBox({r, r, r});
        }
        d.shapes.push_back(s);
        d.pose.pos = {Real(0.5) * pitch + i * pitch + Real(0.0002 * (uniform() - 0.5)),
                      Real(0.5) * pitch + j * pitch + Real(0.0002 * (uniform() - 0.5)), r + layer * 2 * r};
        addBody(m, d, &err);
    }
    return m;
}

struct PileOptions {
    std::vector<int> sizes{1000, 2000, 5000};
    int iterations = 1000;
    double tolerance = 1e-4;   // m/s, RMS over the contacts: the solvers stop at this x sqrt(contacts)
    int settle = 3;
    std::string outDir = "docs";
    std::string solvers;       // comma-separated names of the solvers to run; empty: all
};

void runPile(const PileOptions& o) {
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    std::FILE* res = std::fopen((o.outDir + "/ccp_pile_residual.csv").c_str(), "w");
    std::FILE* tim = std::fopen((o.outDir + "/ccp_pile_time.csv").c_str(), "w");
    if (!res || !tim) {
        std::fprintf(stderr, "sandbox experiment: cannot write into %s\n", o.outDir.c_str());
        std::exit(2);
    }
    std::fprintf(res, "size,solver,iteration,merit\n");
    std::fprintf(tim, "size,solver,bodies,contacts,iterations,solve_ms,ms_per_iteration,final_merit,tolerance,converged\n");
    struct Variant { const char* name; CcpSolverType type; };
    const Variant variants[] = {{"pj", CcpSolverType::Jacobi}, {"pgs", CcpSolverType::GaussSeidel},
                                {"apgd", CcpSolverType::APGD}, {"newton-pcr", CcpSolverType::Newton}};
    for (int size : o.sizes) {
        WorldSettings s;
        s.dt = Real(1.0 / 120);
        s.solver.contactModel = ContactModelType::CCP;
        s.solver.ccp.solver = CcpSolverType::GaussSeidel;
        s.solver.ccp.iterations = 50;
        World w(granularPile(size, 1), s);
        for (int k = 0; k < o.settle; ++k) w.step();
        const State start = w.state();
        const Real tolerance = Real(o.tolerance * std::sqrt(double(std::max<size_t>(w.contacts().size(), 1))));
        for (const Variant& v : variants) {
            if (!o.solvers.empty() && ("," + o.solvers + ",").find("," + std::string(v.name) + ",") == std::string::npos) continue;
            w.state() = start;
            w.settings.solver.ccp.solver = v.type;
            w.settings.solver.ccp.iterations = o.iterations;
            w.settings.solver.ccp.tolerance = tolerance;
            w.settings.solver.newtonTolerance = 0;
            w.step();
            const SolveStats& st = w.solveStats();
            for (size_t k = 0; k < st.ccpMerit.size(); ++k) std::fprintf(res, "%d,%s,%zu,%.6e\n", size, v.name, k, double(st.ccpMerit[k]));
            const int iterations = v.type == CcpSolverType::Newton ? st.newtonIterations : int(st.ccpMerit.size()) - 1;
            const double ms = w.profile().solve * 1e3;
            const bool converged = st.residualFinal <= tolerance;
            std::fprintf(tim, "%d,%s,%d,%zu,%d,%.3f,%.4f,%.6e,%.6e,%d\n", size, v.name, w.model().bodyCount() - 5,
                         w.contacts().size(), iterations, ms, ms / std::max(iterations, 1), double(st.residualFinal),
                         double(tolerance), int(converged));
            std::printf("pile %6d bodies %-10s %6zu contacts: %4d iterations, solve %9.1f ms, CCP merit %.3e m/s%s\n", size,
                        v.name, w.contacts().size(), iterations, ms, double(st.residualFinal),
                        converged ? " (converged)" : "");
            std::fflush(stdout);
        }
    }
    std::fclose(res);
    std::fclose(tim);
}

bool parseSizes(const char* text, std::vector<int>& out) {
    out.clear();
    std::string s = text;
    size_t pos = 0;
    while (pos <= s.size()) {
        const size_t comma = s.find(',', pos);
        const std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        char* end = nullptr;
        const long v = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || *end != '\0' || v < 1 || v > 100000) return false;
        out.push_back(int(v));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return !out.empty();
}

}  // namespace

int runCcpExperiment(int argc, char** argv) {
    const std::string which = argv[2];
    if (which != "ccp-pile" && which != "ccp-liftoff" && which != "ccp-scenes" && which != "ccp-newton" && which != "ccp-all") {
        std::fprintf(stderr, "sandbox experiment: unknown experiment %s (ccp-pile, ccp-liftoff, ccp-scenes, ccp-newton or ccp-all)\n",
                     which.c_str());
        return 2;
    }
    PileOptions pile;
    CcpScenesOptions scenes;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "sandbox experiment: option %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        auto positive = [&](const char* v, int most) {
            char* end = nullptr;
            const long n = std::strtol(v, &end, 10);
            if (!*v || *end != '\0' || n < 1 || n > most) {
                std::fprintf(stderr, "sandbox experiment: bad value \"%s\" for %s: expected an integer in [1, %d]\n", v, a.c_str(), most);
                std::exit(2);
            }
            return int(n);
        };
        if (a == "--out") pile.outDir = scenes.outDir = value();
        else if (a == "--sizes") {
            const char* v = value();
            if (!parseSizes(v, pile.sizes)) {
                std::fprintf(stderr, "sandbox experiment: bad value \"%s\" for --sizes: expected body counts like 1000,2000\n", v);
                return 2;
            }
        } else if (a == "--iters") pile.iterations = positive(value(), 100000);
        else if (a == "--tol") {
            const char* v = value();
            char* end = nullptr;
            pile.tolerance = std::strtod(v, &end);
            if (!*v || *end != '\0' || !(pile.tolerance >= 0) || pile.tolerance > 1) {
                std::fprintf(stderr, "sandbox experiment: bad value \"%s\" for --tol: expected m/s in [0, 1]\n", v);
                return 2;
            }
        }
        else if (a == "--settle") pile.settle = positive(value(), 1000);
        else if (a == "--seconds") scenes.seconds = positive(value(), 1000);
        else if (a == "--solvers") {
            pile.solvers = value();
            for (size_t at = 0; at <= pile.solvers.size();) {
                const size_t comma = std::min(pile.solvers.find(',', at), pile.solvers.size());
                const std::string name = pile.solvers.substr(at, comma - at);
                if (name != "pj" && name != "pgs" && name != "apgd" && name != "newton-pcr") {
                    std::fprintf(stderr, "sandbox experiment: bad value \"%s\" for --solvers: expected names of pj, pgs, apgd, newton-pcr\n",
                                 pile.solvers.c_str());
                    return 2;
                }
                at = comma + 1;
            }
        }
        else if (a == "--newton-iters") scenes.newtonIterations = positive(value(), 1000);
        else {
            std::fprintf(stderr, "sandbox experiment: unknown option %s (ccp experiments take --out, --sizes, --iters, --tol, --settle, "
                         "--seconds, --newton-iters, --solvers)\n", a.c_str());
            return 2;
        }
    }
    if (which == "ccp-pile" || which == "ccp-all") runPile(pile);
    if (which == "ccp-liftoff" || which == "ccp-all") runLiftoff(scenes);
    if (which == "ccp-scenes" || which == "ccp-all") runCcpScenes(scenes);
    if (which == "ccp-newton" || which == "ccp-all") runCcpNewton(scenes);
    if (which == "ccp-all") {
        const std::string cmd = "/usr/bin/python3 '" CS_SOURCE_DIR "/scripts/ccp_plot.py' '" + pile.outDir + "'";
        if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "sandbox experiment: %s failed (needs python3-matplotlib)\n", cmd.c_str());
    }
    return 0;
}

}  // namespace cs
