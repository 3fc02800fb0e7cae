// GLFW window and EGL surfaceless contexts; see gl_context.h.
#include "render/gl_context.h"

#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <stb_image_write.h>

#include <cstdio>
#include <cstring>

namespace cs {

namespace {
std::string g_glfwError;
void glfwErrorCallback(int code, const char* text) { g_glfwError = text ? text : "unknown"; }

// GL 3.3 core or better, as loaded by glad (GLAD_VERSION_MAJOR/MINOR of the returned version).
bool checkGlVersion(int gladVersion, std::string* error) {
    int major = GLAD_VERSION_MAJOR(gladVersion), minor = GLAD_VERSION_MINOR(gladVersion);
    if (gladVersion == 0 || major < 3 || (major == 3 && minor < 3)) {
        *error = "OpenGL 3.3 core is required, the driver offers " + std::to_string(major) + "." +
                 std::to_string(minor);
        return false;
    }
    return true;
}
}  // namespace

bool OffscreenTarget::create(int w, int h, std::string* error) {
    destroy();
    width = w;
    height = h;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glGenRenderbuffers(1, &depth);
    glBindRenderbuffer(GL_RENDERBUFFER, depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER, depth);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
        if (error) *error = "offscreen framebuffer incomplete";
        return false;
    }
    return true;
}

void OffscreenTarget::destroy() {
    if (fbo) glDeleteFramebuffers(1, &fbo);
    if (color) glDeleteRenderbuffers(1, &color);
    if (depth) glDeleteRenderbuffers(1, &depth);
    fbo = color = depth = 0;
}

void readPixelsRgb(int width, int height, std::vector<uint8_t>& out) {
    out.resize(size_t(width) * height * 3);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, out.data());
}

bool writePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgbBottomUp,
              std::string* error) {
    // stbi's flip flag is global state; flip by passing the last row and a negative stride.
    const uint8_t* last = rgbBottomUp.data() + size_t(height - 1) * width * 3;
    if (!stbi_write_png(path.c_str(), width, height, 3, last, -width * 3)) {
        if (error) *error = "cannot write " + path;
        return false;
    }
    return true;
}

GlContext::~GlContext() { close(); }

bool GlContext::openWindow(int width, int height, const char* title, std::string* error) {
    glfwSetErrorCallback(glfwErrorCallback);
    if (!glfwInit()) {
        *error = "cannot open a window (" + g_glfwError +
                 "); no display? Use `sandbox record` for headless video";
        return false;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    window_ = glfwCreateWindow(width, height, title, nullptr, nullptr);
    if (!window_) {
        *error = "cannot create an OpenGL 3.3 core window (" + g_glfwError + ")";
        glfwTerminate();
        return false;
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(1);
    if (!checkGlVersion(gladLoadGL(glfwGetProcAddress), error)) {
        close();
        return false;
    }
    return true;
}

bool GlContext::openHeadless(int width, int height, std::string* error) {
    auto getPlatformDisplay =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDisplay display = EGL_NO_DISPLAY;
    if (getPlatformDisplay)
        display = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    EGLint major = 0, minor = 0;
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, &major, &minor)) {
        *error = "EGL surfaceless platform unavailable (needs Mesa's EGL, libegl-mesa0)";
        return false;
    }
    eglDisplay_ = display;
    const EGLint configAttribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                    EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    eglChooseConfig(display, configAttribs, &config, 1, &count);
    if (!eglBindAPI(EGL_OPENGL_API)) {
        *error = "EGL: desktop OpenGL API unavailable";
        close();
        return false;
    }
    const EGLint contextAttribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                     EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                     EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext context = eglCreateContext(display, count > 0 ? config : EGL_NO_CONFIG_KHR,
                                          EGL_NO_CONTEXT, contextAttribs);
    if (context == EGL_NO_CONTEXT) {
        *error = "EGL: cannot create an OpenGL 3.3 core context";
        close();
        return false;
    }
    eglContext_ = context;
    if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
        *error = "EGL: cannot make the surfaceless context current";
        close();
        return false;
    }
    if (!checkGlVersion(gladLoadGL((GLADloadfunc)eglGetProcAddress), error)) {
        close();
        return false;
    }
    if (!offscreen_.create(width, height, error)) {
        close();
        return false;
    }
    return true;
}

void GlContext::framebufferSize(int& w, int& h) const {
    if (window_) glfwGetFramebufferSize(window_, &w, &h);
    else { w = offscreen_.width; h = offscreen_.height; }
}

void GlContext::windowSize(int& w, int& h) const {
    if (window_) glfwGetWindowSize(window_, &w, &h);
    else { w = offscreen_.width; h = offscreen_.height; }
}

void GlContext::bindDrawTarget() const {
    glBindFramebuffer(GL_FRAMEBUFFER, window_ ? 0 : offscreen_.fbo);
}

void GlContext::swap() {
    // Headless: wait for the frame, so that frame times are honest (llvmpipe otherwise queues
    // frames and stalls all at once when its queue fills).
    if (window_) glfwSwapBuffers(window_);
    else glFinish();
}

bool GlContext::shouldClose() const { return window_ && glfwWindowShouldClose(window_); }

std::string GlContext::rendererName() const {
    const char* r = (const char*)glGetString(GL_RENDERER);
    const char* v = (const char*)glGetString(GL_VERSION);
    return std::string(r ? r : "?") + ", GL " + (v ? v : "?");
}

void GlContext::close() {
    if (window_) {
        glfwDestroyWindow(window_);
        glfwTerminate();
        window_ = nullptr;
    }
    if (eglDisplay_) {
        offscreen_ = OffscreenTarget{};   // GL objects die with the context
        eglMakeCurrent((EGLDisplay)eglDisplay_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (eglContext_) eglDestroyContext((EGLDisplay)eglDisplay_, (EGLContext)eglContext_);
        eglTerminate((EGLDisplay)eglDisplay_);
        eglDisplay_ = eglContext_ = nullptr;
    }
}

}  // namespace cs
