// `sandbox experiment plus-fig8|plus-fig10|plus-fig12|plus-table2|plus-fig15|plus-cost|plus-all`:
// the reproductions of [PLUS] section 4, PLUS against the compliant reference model.
//
// Each writes CSV under --out (default docs/); scripts/plus_plot.py draws the PNGs from them.
//   plus_fig8.csv       tangential velocity of example 1's point per PLUS interval and per
//                       compliant integrator step, for mu = 0.125, 0.225, 0.325 (figure 8)
//   plus_fig8_summary.csv  phase in which each model starts rolling, intervals, final velocities
//   plus_fig10.csv      the same trajectory for theta_max = 0.01 ... 0.5 rad and the interval counts
//   plus_fig12.csv      accumulated impulses of the four points of example 2 (figure 12)
//   plus_table2.csv     phases of the cradle's four pairs in every round (table 2)
//   plus_fig15.csv      CPU time of one impact of the triple pendulum: PLUS against the compliant
//                       model as its stiffness grows from 0.01 to 100 GPa (figure 15)
//   plus_cost.csv       PLUS's cost per impact and per step on the four PLUS scenes
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "engine/contact/compliant_contact.h"
#include "engine/contact/plus_examples.h"
#include "engine/contact/plus_model.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

namespace cs {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CPU time of the calling thread (s): unlike the wall clock it does not count the time other
// processes of the shared machine hold the core.
double threadCpuSeconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Median and least of repeated timings.
struct Timing { double median = 0, least = 0; };
Timing summarize(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    return Timing{n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), t.front()};
}

const Real kMu[3] = {Real(0.125), Real(0.225), Real(0.325)};
const Real kEmin[3] = {Real(0.392), Real(0.387), Real(0.373)};   // table A1

PlusSettings tableA1(Real thetaMax = Real(0.01)) {
    PlusSettings s;
    s.captureVelocity = Real(0.01);
    s.plasticVelocity = Real(0.1);
    s.transitionVelocity = Real(0.1);
    s.maxDirectionChange = thetaMax;
    return s;
}

WorldSettings compliantSettings(Real stiffness, Real dissipation) {
    WorldSettings w;
    w.gravity = Vec3{0, 0, 0};   // impacts: external forces have no effect ([PLUS] 2a)
    w.compliant.stiffness = stiffness;
    w.compliant.dissipation = dissipation;
    w.compliant.stribeckVelocity = Real(0.01);
    w.compliant.tolerance = Real(1e-5);
    w.compliant.maxSubsteps = 2000000;
    return w;
}

// Integrates an example through its collision with the compliant model: until every contact
// has separated (no penetration after having had some). Returns the samples.
std::vector<CompliantSample> compliantCollision(PlusExample& ex, const WorldSettings& w, CompliantStats* stats,
                                                Real chunk = Real(2e-5), Real maxTime = Real(0.2)) {
    std::vector<CompliantSample> all;
    std::vector<char> moving(ex.model.bodyCount(), 1);
    bool touched = false;
    Real t = 0;
    while (t < maxTime) {
        std::vector<CompliantSample> s;
        integrateCompliant(ex.model, ex.state, moving, ex.contacts, w, chunk, stats, &s);
        bool pen = false;
        for (CompliantSample& smp : s) {
            smp.time += t;
            for (Real p : smp.penetration) pen = pen || p > 0;
            if (!all.empty()) {   // impulses accumulate across chunks
                for (size_t c = 0; c < smp.impulse.size(); ++c) smp.impulse[c] += all.back().impulse[c];
            }
        }
        if (!all.empty() && !s.empty()) s.erase(s.begin());   // the chunk's first sample repeats the last
        for (CompliantSample& smp : s) all.push_back(std::move(smp));
        t += chunk;
        touched = touched || pen;
        if (touched && !pen) break;
    }
    return all;
}

FILE* openOut(const std::string& dir, const char* name) {
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) std::fprintf(stderr, "cannot write %s\n", path.c_str());
    else std::printf("wrote %s\n", path.c_str());
    return f;
}

// Phase (0 compression, 1 expansion) in which the compliant point's slip speed first drops below
// v_transition; -1 if never. Compression ends at the largest penetration.
int compliantRollingPhase(const PlusExample& ex, const std::vector<CompliantSample>& s, Real vt) {
    size_t peak = 0;
    for (size_t i = 0; i < s.size(); ++i)
        if (s[i].penetration[0] > s[peak].penetration[0]) peak = i;
    for (size_t i = 1; i < s.size(); ++i) {
        if (s[i].penetration[0] <= 0) continue;
        Vec3 v = examplePointVelocity(ex, 0, s[i].linVel, s[i].angVel);
        if (std::hypot(v.x, v.y) < vt) return i <= peak ? 0 : 1;
    }
    return -1;
}

void fig8(const std::string& out) {
    FILE* f = openOut(out, "plus_fig8.csv");
    FILE* g = openOut(out, "plus_fig8_summary.csv");
    if (!f || !g) return;
    std::fprintf(f, "model,mu,index,phase,state,normal_impulse,vx,vy\n");
    std::fprintf(g, "mu,min_cor,plus_rolling_phase,compliant_rolling_phase,plus_intervals,plus_rounds,plus_vx,plus_vy,plus_vz,"
                    "compliant_vx,compliant_vy,compliant_vz,compliant_steps,plus_ms,compliant_ms\n");
    const char* phaseName[] = {"compression", "expansion"};
    std::printf("figure 8: example 1, single-point impact at [-5, 0, -5.74] m/s\n");
    for (int m = 0; m < 3; ++m) {
        PlusExample ex = brickExample(brickExample1Orientation(), Vec3{-5, 0, Real(-5.74)}, kMu[m], kEmin[m]);
        auto t0 = Clock::now();
        ImpactResult r = solvePlusImpact(ex.problem, tableA1(), true);
        double plusMs = 1e3 * since(t0);
        std::fprintf(f, "plus,%g,0,0,0,0,%g,%g\n", double(kMu[m]), double(r.velocityStart[0].x), double(r.velocityStart[0].y));
        int plusRoll = -1;
        for (size_t i = 0; i < r.trace.size(); ++i) {
            const ImpactInterval& it = r.trace[i];
            if (plusRoll < 0 && it.state[0] == int(SlipState::Rolling)) plusRoll = it.phase[0];
            std::fprintf(f, "plus,%g,%zu,%d,%d,%g,%g,%g\n", double(kMu[m]), i + 1, it.phase[0], it.state[0],
                         double(it.impulse[0].z), double(it.velocity[0].x), double(it.velocity[0].y));
        }
        CompliantStats st;
        t0 = Clock::now();
        std::vector<CompliantSample> s = compliantCollision(ex, compliantSettings(Real(1e10), Real(0.26)), &st);
        double compMs = 1e3 * since(t0);
        PlusExample ref = brickExample(brickExample1Orientation(), Vec3{-5, 0, Real(-5.74)}, kMu[m], kEmin[m]);
        for (size_t i = 0; i < s.size(); ++i) {
            Vec3 v = examplePointVelocity(ref, 0, s[i].linVel, s[i].angVel);
            std::fprintf(f, "compliant,%g,%zu,%d,-1,%g,%g,%g\n", double(kMu[m]), i, -1, double(s[i].impulse[0].z),
                         double(v.x), double(v.y));
        }
        int compRoll = compliantRollingPhase(ref, s, Real(0.1));
        Vec3 vc = examplePointVelocity(ref, 0, s.back().linVel, s.back().angVel);
        std::fprintf(g, "%g,%g,%d,%d,%d,%d,%g,%g,%g,%g,%g,%g,%d,%.4f,%.3f\n", double(kMu[m]), double(kEmin[m]), plusRoll,
                     compRoll, r.intervals, r.rounds, double(r.velocityEnd[0].x), double(r.velocityEnd[0].y),
                     double(r.velocityEnd[0].z), double(vc.x), double(vc.y), double(vc.z), st.steps, plusMs, compMs);
        std::printf("  mu %.3f: PLUS rolls %s (%d intervals), compliant rolls %s; final v PLUS (%.3f, %.3f, %.3f), "
                    "compliant (%.3f, %.3f, %.3f)\n",
                    double(kMu[m]), plusRoll < 0 ? "never" : phaseName[plusRoll], r.intervals,
                    compRoll < 0 ? "never" : phaseName[compRoll], double(r.velocityEnd[0].x), double(r.velocityEnd[0].y),
                    double(r.velocityEnd[0].z), double(vc.x), double(vc.y), double(vc.z));
    }
    std::fclose(f);
    std::fclose(g);
}

void fig10(const std::string& out) {
    FILE* f = openOut(out, "plus_fig10.csv");
    FILE* g = openOut(out, "plus_fig10_summary.csv");
    if (!f || !g) return;
    const Real thetas[] = {Real(0.01), Real(0.05), Real(0.15), Real(0.25), Real(0.5), Real(1.0)};
    const int m = 0;   // mu = 0.125: the point slides throughout, its direction turns the most
    PlusExample ref = brickExample(brickExample1Orientation(), Vec3{-5, 0, Real(-5.74)}, kMu[m], kEmin[m]);
    ImpactResult fine = solvePlusImpact(ref.problem, tableA1(Real(1e-3)), false);
    std::fprintf(f, "theta_max,index,normal_impulse,vx,vy\n");
    std::fprintf(g, "theta_max,intervals,vx,vy,vz,error_vs_theta_1e-3\n");
    std::printf("figure 10: convergence as theta_max shrinks (mu %.3f); reference theta 1e-3: %d intervals\n",
                double(kMu[m]), fine.intervals);
    for (Real th : thetas) {
        ImpactResult r = solvePlusImpact(ref.problem, tableA1(th), true);
        std::fprintf(f, "%g,0,0,%g,%g\n", double(th), double(r.velocityStart[0].x), double(r.velocityStart[0].y));
        for (size_t i = 0; i < r.trace.size(); ++i)
            std::fprintf(f, "%g,%zu,%g,%g,%g\n", double(th), i + 1, double(r.trace[i].impulse[0].z),
                         double(r.trace[i].velocity[0].x), double(r.trace[i].velocity[0].y));
        Real err = length(r.velocityEnd[0] - fine.velocityEnd[0]);
        std::fprintf(g, "%g,%d,%g,%g,%g,%g\n", double(th), r.intervals, double(r.velocityEnd[0].x),
                     double(r.velocityEnd[0].y), double(r.velocityEnd[0].z), double(err));
        std::printf("  theta_max %.3f rad: %4d intervals, final tangential velocity (%.4f, %.4f), error %.4f m/s\n",
                    double(th), r.intervals, double(r.velocityEnd[0].x), double(r.velocityEnd[0].y), double(err));
    }
    std::fclose(f);
    std::fclose(g);
}

void fig12(const std::string& out) {
    FILE* f = openOut(out, "plus_fig12.csv");
    if (!f) return;
    std::fprintf(f, "model,point,side,index,phase,state,px,py,pz\n");
    PlusExample ex = brickExample(brickExample2Orientation(), Vec3{-2, 0, Real(-8.84)}, Real(0.2), Real(0.414));
    ImpactResult r = solvePlusImpact(ex.problem, tableA1(), true);
    auto side = [&](int k) { return ex.pointWorld[k].x < ex.state.pos[0].x ? "left" : "right"; };
    for (size_t i = 0; i < r.trace.size(); ++i)
        for (size_t k = 0; k < ex.problem.points.size(); ++k) {
            const Vec3& p = r.trace[i].impulse[k];
            std::fprintf(f, "plus,%zu,%s,%zu,%d,%d,%g,%g,%g\n", k, side(int(k)), i + 1, r.trace[i].phase[k],
                         r.trace[i].state[k], double(p.x), double(p.y), double(p.z));
        }
    CompliantStats st;
    std::vector<CompliantSample> s = compliantCollision(ex, compliantSettings(Real(1e10), Real(0.15)), &st);
    for (size_t i = 0; i < s.size(); ++i)
        for (size_t k = 0; k < s[i].impulse.size(); ++k) {
            const Vec3& p = s[i].impulse[k];
            std::fprintf(f, "compliant,%zu,%s,%zu,-1,-1,%g,%g,%g\n", k, side(int(k)), i, double(p.x), double(p.y), double(p.z));
        }
    std::fclose(f);
    std::printf("figure 12: four-point impact at [-2, 0, -8.84] m/s, mu 0.2, min COR 0.414 (%d rounds, %d intervals)\n",
                r.rounds, r.intervals);
    for (size_t k = 0; k < r.impulse.size(); ++k)
        std::printf("  point %zu (%s, y %+.1f): PLUS impulse (%.3f, %.3f, %.3f) N s, compliant (%.3f, %.3f, %.3f)\n", k,
                    side(int(k)), double(ex.pointWorld[k].y), double(r.impulse[k].x), double(r.impulse[k].y),
                    double(r.impulse[k].z), double(s.back().impulse[k].x), double(s.back().impulse[k].y),
                    double(s.back().impulse[k].z));
}

void table2(const std::string& out) {
    FILE* f = openOut(out, "plus_table2.csv");
    if (!f) return;
    PlusExample ex = cradleExample(5, 2, 1);
    ImpactResult r = solvePlusImpact(ex.problem, tableA1(), true);
    const char* names[] = {"compressing", "expanding", "observing"};
    std::fprintf(f, "balls");
    for (int k = 0; k < r.rounds; ++k) std::fprintf(f, ",round %d", k + 1);
    std::fprintf(f, "\n");
    std::printf("table 2: Newton's cradle, %d rounds\n  balls  ", r.rounds);
    for (int k = 0; k < r.rounds; ++k) std::printf("  round %-6d", k + 1);
    std::printf("\n");
    for (size_t p = 0; p < ex.problem.points.size(); ++p) {
        std::fprintf(f, "%zu and %zu", p + 1, p + 2);
        std::printf("  %zu and %zu", p + 1, p + 2);
        int lastRound = -1;
        for (const ImpactInterval& it : r.trace) {
            if (it.round == lastRound) continue;
            lastRound = it.round;
            std::fprintf(f, ",%s", names[it.phase[p]]);
            std::printf("  %-12s", names[it.phase[p]]);
        }
        std::fprintf(f, "\n");
        std::printf("\n");
    }
    std::fclose(f);
    PlusExample c = cradleExample(5, 2, 1);
    CompliantStats st;
    std::vector<CompliantSample> s = compliantCollision(c, compliantSettings(Real(1e10), 0), &st, Real(2e-5), Real(0.05));
    std::printf("  final velocities  PLUS:");
    for (size_t b = 0; b < ex.problem.velocity.size(); ++b)
        std::printf(" %.4f", double(ex.problem.velocity[b].lin.x + r.deltaVelocity[b].lin.x));
    std::printf("\n                    compliant:");
    for (size_t b = 0; b < s.back().linVel.size(); ++b) std::printf(" %.4f", double(s.back().linVel[b].x));
    std::printf("\n");
}

// The triple pendulum falls with PLUS until its first impact; from the state just before it,
// PLUS resolves the impact (timed over repetitions) and the compliant model integrates through
// it for each stiffness (timed once), from first touch to separation.
void fig15(const std::string& out) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string err;
    if (!loadScene("triple_pendulum", model, settings, info, &err)) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return;
    }
    settings.solver.contactModel = ContactModelType::PLUS;
    World world(model, settings);
    State before;
    std::vector<PotentialContact> potential;
    PlusStepReport impact;
    for (int i = 0; i < 2000; ++i) {
        State s = world.state();
        world.step();
        if (world.stepContext().plus.report.impacts > 0) {
            before = s;
            impact = world.stepContext().plus.report;
            potential = world.potentialContacts();
            break;
        }
    }
    if (impact.impacts == 0) {
        std::fprintf(stderr, "plus-fig15: no impact\n");
        return;
    }
    // PLUS: the impact problems of that step (recorded), solved again and again from the same
    // input. Thread CPU time of batches of 100 solves, 31 batches: median and least per solve.
    const int repeats = 31;
    std::vector<ImpactProblem> problems;
    {
        World w(model, settings);
        w.state() = before;
        w.stepContext().plus.recordImpacts = true;
        w.step();
        for (const PlusImpactRecord& rec : w.stepContext().plus.impacts) problems.push_back(rec.problem);
    }
    std::vector<double> plusTimes;
    for (int r = 0; r < repeats; ++r) {
        const int batch = 100;
        const double t0 = threadCpuSeconds();
        for (int k = 0; k < batch; ++k)
            for (const ImpactProblem& p : problems) solvePlusImpact(p, settings.plus, false);
        plusTimes.push_back((threadCpuSeconds() - t0) / batch);
    }
    const Timing plusT = summarize(plusTimes);
    FILE* f = openOut(out, "plus_fig15.csv");
    if (!f) return;
    std::fprintf(f, "model,stiffness_pa,cpu_median_s,cpu_min_s,repeats,steps,evaluations,max_penetration_m,collision_time_s\n");
    std::fprintf(f, "plus,0,%.6g,%.6g,%d,%d,0,0,0\n", plusT.median, plusT.least, repeats, impact.intervals);
    std::printf("figure 15: triple pendulum impact (t = %.4f s): PLUS %.1f us median, %.1f us least of %d (%d rounds, %d "
                "intervals, %d points, %d joint rows)\n",
                double(before.time), 1e6 * plusT.median, 1e6 * plusT.least, repeats, impact.rounds, impact.intervals,
                impact.pointCount, impact.bilateralRows);
    std::vector<CompliantContact> contacts;
    WorldSettings cs = settings;
    makeCompliantContacts(model, before, potential, cs, contacts);
    // The repeats go round the stiffnesses (E1 E2 ... E5, E1 E2 ...), so that a slow spell of
    // the shared machine falls on every point alike instead of on one.
    const std::vector<double> stiffness{1e7, 1e8, 1e9, 1e10, 1e11};
    std::vector<std::vector<double>> times(stiffness.size());
    std::vector<CompliantStats> stats(stiffness.size());
    std::vector<Real> touchStart(stiffness.size()), touchEnd(stiffness.size());
    std::vector<char> moving(model.bodyCount(), 0);
    for (int b = 0; b < model.bodyCount(); ++b) moving[b] = !model.isStatic(b);
    for (int rep = 0; rep < repeats; ++rep)
        for (size_t i = 0; i < stiffness.size(); ++i) {   // the same integration each time: only the clock varies
            cs.compliant.stiffness = Real(stiffness[i]);
            cs.compliant.dissipation = 0;
            cs.compliant.maxSubsteps = 2000000;
            State st = before;
            stats[i] = CompliantStats{};
            const double t0 = threadCpuSeconds();
            // From just before touch to separation, in chunks of 1/4 ms.
            bool touched = false;
            Real t = 0;
            touchStart[i] = touchEnd[i] = -1;
            while (t < Real(0.05)) {
                std::vector<CompliantSample> smp;
                integrateCompliant(model, st, moving, contacts, cs, Real(2.5e-4), &stats[i], &smp);
                bool pen = false;
                for (const CompliantSample& x : smp)
                    for (Real p : x.penetration)
                        if (p > 0) {
                            pen = true;
                            if (touchStart[i] < 0) touchStart[i] = t + x.time;
                            touchEnd[i] = t + x.time;
                        }
                t += Real(2.5e-4);
                touched = touched || pen;
                if (touched && !pen) break;
            }
            times[i].push_back(threadCpuSeconds() - t0);
        }
    for (size_t i = 0; i < stiffness.size(); ++i) {
        const Timing T = summarize(times[i]);
        std::fprintf(f, "compliant,%g,%.6g,%.6g,%d,%d,%d,%g,%g\n", stiffness[i], T.median, T.least, repeats,
                     stats[i].steps, stats[i].evaluations, double(stats[i].maxPenetration),
                     double(touchEnd[i] - touchStart[i]));
        std::printf("  compliant E = %.0e Pa: %.2f ms median, %.2f ms least CPU, %d steps, %d evaluations, max "
                    "penetration %.2e m, contact %.2e s\n",
                    stiffness[i], 1e3 * T.median, 1e3 * T.least, stats[i].steps, stats[i].evaluations,
                    double(stats[i].maxPenetration), double(touchEnd[i] - touchStart[i]));
    }
    std::fclose(f);
}

// Cost per impact and per step of PLUS on its scenes: wall time of the impact pass in the steps
// that had an impact, and the mean step.
void cost(const std::string& out) {
    FILE* f = openOut(out, "plus_cost.csv");
    if (!f) return;
    std::fprintf(f, "scene,steps,impact_steps,impacts,mean_points,mean_rounds,mean_intervals,us_per_impact,us_per_step_plus,"
                    "us_per_step_standard\n");
    std::printf("PLUS cost per impact and per step\n");
    for (const char* name : {"brick_impact", "brick_flat_impact", "newtons_cradle", "triple_pendulum", "card_house", "table_pile",
                             "pyramid"}) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string err;
        if (!loadScene(name, model, settings, info, &err)) continue;
        const int steps = int(std::lround(info.duration / settings.dt));
        double stepSeconds[2] = {0, 0};
        int impactSteps = 0, impacts = 0, points = 0, rounds = 0, intervals = 0;
        double impactSeconds = 0;
        for (int pass = 0; pass < 2; ++pass) {
            WorldSettings s = settings;
            s.solver.contactModel = pass == 0 ? ContactModelType::PLUS : ContactModelType::Standard;
            World world(model, s);
            for (int i = 0; i < steps; ++i) {
                world.step();
                stepSeconds[pass] += world.profile().total;
                if (pass == 0 && world.stepContext().plus.report.impacts > 0) {
                    const PlusStepReport& r = world.stepContext().plus.report;
                    ++impactSteps;
                    impacts += r.impacts;
                    points += r.pointCount;
                    rounds += r.rounds;
                    intervals += r.intervals;
                    impactSeconds += r.seconds;
                }
            }
        }
        double n = impacts > 0 ? impacts : 1;
        std::fprintf(f, "%s,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n", name, steps, impactSteps, impacts, points / n,
                     rounds / n, intervals / n, 1e6 * impactSeconds / n, 1e6 * stepSeconds[0] / steps,
                     1e6 * stepSeconds[1] / steps);
        std::printf("  %-18s %4d steps, %3d impacts (%.1f points, %.1f rounds, %.1f intervals each): %.1f us per impact; "
                    "step %.1f us (standard %.1f us)\n",
                    name, steps, impacts, points / n, rounds / n, intervals / n, 1e6 * impactSeconds / n,
                    1e6 * stepSeconds[0] / steps, 1e6 * stepSeconds[1] / steps);
    }
    std::fclose(f);
}

}  // namespace

int runPlusExperiment(int argc, char** argv) {
    std::string which = argc > 2 ? argv[2] : "";
    std::string out = "docs";
    for (int i = 3; i < argc; ++i) {
        if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
        else {
            std::fprintf(stderr, "sandbox experiment %s: unknown argument \"%s\" (only --out DIR)\n", which.c_str(), argv[i]);
            return 2;
        }
    }
    const std::pair<const char*, std::function<void(const std::string&)>> table[] = {
        {"plus-fig8", fig8}, {"plus-fig10", fig10}, {"plus-fig12", fig12},
        {"plus-table2", table2}, {"plus-fig15", fig15}, {"plus-cost", cost}};
    bool all = which == "plus-all", any = false;
    for (const auto& [name, fn] : table)
        if (all || which == name) {
            fn(out);
            any = true;
        }
    if (!any) {
        std::fprintf(stderr, "sandbox experiment: unknown PLUS experiment \"%s\" (plus-fig8, plus-fig10, plus-fig12, "
                             "plus-table2, plus-fig15, plus-cost, plus-all)\n", which.c_str());
        return 2;
    }
    return 0;
}

}  // namespace cs
