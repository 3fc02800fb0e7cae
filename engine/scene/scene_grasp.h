// The scene's "grasp" block and grasp script files (docs/scene-format.md, "Grasp").
#pragma once

#include <string>

#include "engine/grasp/grasp_spec.h"

namespace cs {

// Reads a script file, {"script": [keyframes]}, into spec.script (replacing the scene's).
// Returns false with a one-line *error naming the file and the JSON path.
bool loadGraspScript(const std::string& file, GraspSpec& spec, std::string* error);

}  // namespace cs
