// Compiling and linking GLSL programs with readable errors.
#pragma once

#include <string>

namespace cs {

// Returns the program id, or 0 with *error holding the compiler's log.
unsigned buildProgram(const char* vertexSource, const char* fragmentSource, const char* name,
                      std::string* error);

}  // namespace cs
