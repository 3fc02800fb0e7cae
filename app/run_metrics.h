// What a headless run measures, per step and in summary, and how it is written out: the
// readable summary, the one JSON object of --json, the --trace CSV and the --state-out file.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "engine/scene/scene_loader.h"
#include "engine/world.h"
#include "engine/world_metrics.h"

namespace cs {

struct StepRecord {
    int step = 0;
    double time = 0;               // s, after the step
    int contacts = 0;
    int rows = 0;                  // rows of the last solve (SolveStats::rows)
    int cullResolves = 0;          // solves repeated with every row (SolveStats::cullResolves)
    int newtonIterations = 0;
    int linearIterations = 0;
    double residual = 0;           // ||h|| of the NCP system at exit
    double maxPenetration = 0;     // m, max over this step's contacts of -gap, 0 if none
    double overlapVolume = -1;     // m^3; -1: not computed this step (stride)
    double kineticEnergy = 0;      // J
    double wallMs = 0;             // ms of World::step()
    double cpuMs = 0;              // CPU ms of the process during World::step() (all its threads):
                                   //   with one thread, the step's cost unaffected by other processes
    bool failed = false;           // World::lastStepFailed()
    int awakeBodies = 0;           // dynamic bodies not asleep after the step
    int wakeResolves = 0;          // solves repeated because a sleeping body's load changed (SolveStats)
    double dragError = -1;         // m, --drag: |grabbed point - target| after the step; -1: no drag
};

struct RunSummary {
    std::string scene, method, contact, solver, ncp, backend, precision;   // method: newton | soft
    std::string executor = "cpu";   // what stepped the world: "cpu" (World::step), "host" (the step
                                    //   pipeline on the host executor, engine/exec) or "cuda" (the
                                    //   pipeline on the CUDA executor, gpu/; the last step ran there)
    double dt = 0;
    int substeps = 1, steps = 0, bodies = 0, threads = 1;
    int femTets = 0, femNodes = 0;          // deformable bodies' tets and nodes
    uint64_t seed = 0;
    std::string threadWait;        // how idle threads wait (app/thread_policy.h)
    double topDrift = 0;           // m: how far the body that started highest moved (the peer rows)
    int sleepingFinal = 0;         // bodies asleep after the last step (WorldSettings::sleeping)
    std::vector<StepRecord> records;
    StepProfile profileSum;        // seconds, summed over steps
    bool nan = false;              // the final state (or any step's) held a NaN
    int failedSteps = 0;
    int stoppedAtStep = -1;        // the step at which the world stopped (World::stopped), -1 if it did not
    bool overlapAvailable = true;
    std::string graspJson;         // the grasp script's measurements (one JSON object), or empty
    std::string graspText;         // the same as readable lines
};


// True when every position, orientation and velocity is finite.
bool stateIsFinite(const World& world);

void writeSummaryText(const RunSummary& s, std::FILE* out);
std::string summaryJson(const RunSummary& s);
bool writeTraceCsv(const RunSummary& s, const std::string& path, std::string* error);
bool writeStateJson(const World& world, const std::string& path, std::string* error);

}  // namespace cs
