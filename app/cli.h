// Command line of `sandbox run`: the options, their parsing and the usage text.
//
// Every bad input (unknown option, missing or malformed value, conflicting options) gives one
// line in *error; the caller prints it and exits with status 2.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "engine/world.h"

namespace cs {

constexpr int kExitUsage = 2;             // bad command line, unknown or broken scene
constexpr const char* kDefaultScene = "pyramid";

struct RunOptions {
    std::string scene;                    // library name or path to a .json file
    std::optional<ContactModelType> contact;
    std::optional<LinearSolverType> solver;
    std::optional<SolveMethod> method;        // --method newton|pgs|soft (SolverSettings::method)
    std::optional<int> pgsIters;              // --pgs-iters N (PgsSettings::iterations and splitIterations)
    std::optional<int> softSubsteps;          // --soft-substeps N (SoftSettings::substeps)
    std::optional<double> softHertz;          // --soft-hertz F (SoftSettings::contactHertz)
    std::optional<NcpFunction> ncp;
    std::optional<CcpSolverType> ccpSolver;   // --ccp-solver pj|pgs|apgd|newton
    std::optional<int> ccpIters;              // --ccp-iters: PJ / PGS sweeps, APGD iterations
    std::optional<double> dt;             // s
    std::optional<int> steps;
    std::optional<double> seconds;        // steps = ceil(seconds / dt)
    std::optional<int> newton, iters, substeps, threads;
    std::optional<int> farNewton;         // --far-newton N (SolverSettings::farNewtonIterations)
    std::optional<bool> cullRows;         // --cull-rows on|off (SolverSettings::cullRows)
    std::optional<bool> condense;         // --condense on|off (SolverSettings::condenseCompliantRows)
    std::optional<bool> keepBest;         // --keep-best on|off (SolverSettings::keepBestIterate)
    std::optional<double> forcing;        // --forcing ETA_MAX (SolverSettings::linearForcing)
    std::optional<double> stepCut;        // --step-cut G (SolverSettings::stepCutGrowth)
    std::optional<Preconditioner> preconditioner;   // --preconditioner diagonal|block
    std::optional<bool> narrowReuse;      // --narrow-reuse on|off (WorldSettings::narrowReuse)
    std::optional<bool> partialWake;      // --partial-wake on|off (WorldSettings::partialWake)
    uint64_t seed = 0;                    // added to every random seed of the scene
    bool json = false;                    // one JSON object on stdout at the end
    bool sleeping = false;                // --sleeping: islands at rest sleep (WorldSettings::sleeping)
    std::string trace;                    // per-step CSV
    std::string stateOut;                 // final state as JSON
    std::string backend = "cpu";          // cpu | cuda | host (the step pipeline on the CPU)
    int overlapStride = 10;               // overlap volume every N steps (and at the last step)
    bool progress = true;                 // progress bar on stderr when it is a terminal
    bool script = false;                  // play the grasp script (engine/grasp/grasp_player.h)
    std::string scriptFile;               // --script=FILE: keyframes from FILE instead of the scene's
    std::optional<double> gripForce;      // N: replaces the script's grip force
    // --drag NAME:DX,DY,DZ[@T]: the mouse drag (World::setDrag) of body NAME, grabbed at its centre
    // of mass (or at --drag-point) at time T (s, default 0); the target moves from there by
    // (DX, DY, DZ) m over 1 s (--drag-over) and then holds, as a user pulls a box and keeps it
    // there, until --drag-release lets go.
    std::string dragBody;                 // empty: no drag
    double dragMove[3] = {0, 0, 0};       // m
    double dragStart = 0;                 // s
    double dragPoint[3] = {0, 0, 0};      // m, --drag-point: the grabbed point in the body's frame
    double dragOver = 1;                  // s, --drag-over: how long the target takes to move
    double dragRelease = -1;              // s, --drag-release: the mouse lets go (clearDrag); < 0: never
};

// Parses argv[first..argc) of `sandbox run` (argv[first] is the scene). Returns false with a
// one-line *error.
bool parseRunOptions(int argc, char** argv, int first, RunOptions& out, std::string* error);

// Applies the command-line overrides to the scene's settings.
void applyRunOptions(const RunOptions& options, WorldSettings& settings);

void printUsage(std::FILE* out);

}  // namespace cs
