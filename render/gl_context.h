// Where the sandbox draws: a GLFW window (interactive) or an EGL surfaceless context with an
// offscreen framebuffer (headless recording and tests, no X server: Mesa's surfaceless platform).
//
// Both load OpenGL 3.3 core through the glad 2 loader generated at build time and check the
// version: a missing display or a driver below 3.3 gives a one-line message, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct GLFWwindow;

namespace cs {

// An offscreen colour + depth framebuffer; the target of headless rendering and of readbacks.
struct OffscreenTarget {
    unsigned fbo = 0, color = 0, depth = 0;
    int width = 0, height = 0;
    bool create(int w, int h, std::string* error);
    void destroy();
};

// Reads the bound framebuffer's RGB pixels, bottom row first (glReadPixels order).
void readPixelsRgb(int width, int height, std::vector<uint8_t>& out);

// Writes bottom-up RGB pixels as a top-down PNG; false with *error on failure.
bool writePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgbBottomUp,
              std::string* error);

class GlContext {
public:
    ~GlContext();
    // Interactive: a resizable window. Fails cleanly without a display or GL 3.3.
    bool openWindow(int width, int height, const char* title, std::string* error);
    // Headless: EGL surfaceless platform (Mesa) plus an FBO of the given size.
    bool openHeadless(int width, int height, std::string* error);

    bool headless() const { return window_ == nullptr; }
    GLFWwindow* window() const { return window_; }
    void framebufferSize(int& w, int& h) const;   // drawable size in pixels
    void windowSize(int& w, int& h) const;        // logical size (cursor coordinates)
    void bindDrawTarget() const;                  // default framebuffer or the headless FBO
    void swap();                                  // present (window) or glFinish (headless)
    bool shouldClose() const;
    std::string rendererName() const;             // GL_RENDERER + GL_VERSION
    void close();

private:
    GLFWwindow* window_ = nullptr;
    void* eglDisplay_ = nullptr;
    void* eglContext_ = nullptr;
    OffscreenTarget offscreen_;
};

}  // namespace cs
