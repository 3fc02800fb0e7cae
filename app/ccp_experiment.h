// The CCP experiments (app/ccp_experiment.cpp, app/ccp_experiment_scenes.cpp, app/ccp_experiment_newton.cpp; docs/ccp.md).
#pragma once

#include <string>

namespace cs {

struct CcpScenesOptions {
    std::string outDir = "docs";
    int seconds = 0;              // > 0: run each scene this long instead of its duration
    int newtonIterations = 30;    // ccp-newton: Newton iterations per step
};

int runCcpExperiment(int argc, char** argv);    // `sandbox experiment ccp-*`
void runLiftoff(const CcpScenesOptions& o);     // ccp_liftoff.csv
void runCcpScenes(const CcpScenesOptions& o);   // ccp_scenes.csv
void runCcpNewton(const CcpScenesOptions& o);   // ccp_newton.csv

}  // namespace cs
