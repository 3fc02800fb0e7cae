// The CCP experiments (app/ccp_experiment.cpp, app/ccp_experiment_scenes.cpp, app/ccp_experiment_newton.cpp; docs/ccp.md).
#pragma once

#include <cstdio>
#include <string>

namespace cs {

struct Model;
struct WorldSettings;

struct CcpScenesOptions {
    std::string outDir = "docs";
    int seconds = 0;              // > 0: run each scene this long instead of its duration
    int newtonIterations = 30;    // ccp-newton: Newton iterations per step
};

int runCcpExperiment(int argc, char** argv);    // `sandbox experiment ccp-*`
void runLiftoff(const CcpScenesOptions& o);     // ccp_liftoff.csv
void runCcpScenes(const CcpScenesOptions& o);   // ccp_scenes.csv
void runCcpNewton(const CcpScenesOptions& o);   // ccp_newton.csv

// dir/name opened for writing with its header line, or a one-line error and exit 2.
std::FILE* openExperimentCsv(const std::string& dir, const char* name, const char* header);
// A library scene loaded, or its one-line error and exit 2; returns its duration (s).
double loadExperimentScene(const char* scene, Model& model, WorldSettings& settings);

}  // namespace cs
