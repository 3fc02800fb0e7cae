// The headless runner: `sandbox run SCENE [options]` and `sandbox list`.
//
// A run loads the scene, applies the command-line overrides, steps the world for the requested
// time and prints a readable summary or, with --json, exactly one JSON object on stdout (keys
// in docs/scene-format.md, "Runner"). Warnings and the progress bar go to stderr.
#pragma once

#include "app/cli.h"

namespace cs {

// Exit status: 0 done, 1 the final state is not finite, 2 bad options or scene (one line on
// stderr), 3 an output file could not be written.
int runHeadless(const RunOptions& options);

// `sandbox run ...`: argv[first] is the first argument after "run".
int runCommand(int argc, char** argv, int first);

// `sandbox list`: every library scene with its description.
int listCommand();

// Which backend steps the world: "cpu", or "cuda" when requested, built and a GPU is present.
// Writes one line to stderr when a CUDA request falls back to the CPU.
std::string chooseBackend(const std::string& requested);

}  // namespace cs
