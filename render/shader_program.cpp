// GLSL compile and link helpers; see shader_program.h.
#include "render/shader_program.h"

#include <glad/gl.h>

namespace cs {

namespace {
unsigned compile(GLenum kind, const char* source, const char* name, std::string* error) {
    unsigned s = glCreateShader(kind);
    glShaderSource(s, 1, &source, nullptr);
    glCompileShader(s);
    int ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetShaderInfoLog(s, sizeof log, nullptr, log);
        *error = std::string(name) + (kind == GL_VERTEX_SHADER ? " (vertex): " : " (fragment): ") + log;
        glDeleteShader(s);
        return 0;
    }
    return s;
}
}  // namespace

unsigned buildProgram(const char* vertexSource, const char* fragmentSource, const char* name,
                      std::string* error) {
    unsigned vs = compile(GL_VERTEX_SHADER, vertexSource, name, error);
    if (!vs) return 0;
    unsigned fs = compile(GL_FRAGMENT_SHADER, fragmentSource, name, error);
    if (!fs) {
        glDeleteShader(vs);
        return 0;
    }
    unsigned p = glCreateProgram();
    glAttachShader(p, vs);
    glAttachShader(p, fs);
    glLinkProgram(p);
    glDeleteShader(vs);
    glDeleteShader(fs);
    int ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetProgramInfoLog(p, sizeof log, nullptr, log);
        *error = std::string(name) + " (link): " + log;
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

}  // namespace cs
