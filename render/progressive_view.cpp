// The 3D view built over several frames; see progressive_view.h.
#include "render/progressive_view.h"

#include <glad/gl.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace cs {

namespace {

uint64_t mix(uint64_t h, const void* data, size_t bytes) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

// The first slice of the first build, before any rate is measured.
constexpr size_t kFirstSlice = 1024;
// A slice is sized to this fraction of the budget left at the measured rate: the rate moves
// with the machine's load (by half from one slice to the next on the shared machine), and an
// overrun lands in the frame whole. (Slices capped at half the budget were tried: no better.)
constexpr double kSliceMargin = 0.75;

}  // namespace

uint64_t ProgressiveView::viewKey(const SceneRenderer& renderer, const Camera& camera, const Viewport& vp,
                                  int slot) const {
    uint64_t h = renderer.instanceHash();
    const glm::mat4 m = camera.viewProj(vp);
    h = mix(h, &m, sizeof m);
    const glm::vec3 eye = camera.eye();
    h = mix(h, &eye, sizeof eye);
    const int ints[] = {vp.width, vp.height, slot, renderer.shadows ? 1 : 0, renderer.shadowMapSize};
    h = mix(h, ints, sizeof ints);
    return mix(h, &renderer.lightDir, sizeof renderer.lightDir);
}

void ProgressiveView::ensureSize(Image& image, int width, int height) {
    if (image.fbo && image.width == width && image.height == height) return;
    if (!image.fbo) {
        glGenFramebuffers(1, &image.fbo);
        glGenRenderbuffers(1, &image.color);
        glGenRenderbuffers(1, &image.depth);
    }
    glBindRenderbuffer(GL_RENDERBUFFER, image.color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
    // The window's and the headless target's depth format (gl_context.cpp), so depth can be blitted.
    glBindRenderbuffer(GL_RENDERBUFFER, image.depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, width, height);
    glBindFramebuffer(GL_FRAMEBUFFER, image.fbo);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, image.color);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER, image.depth);
    image.width = width;
    image.height = height;
    image.valid = false;
}

void ProgressiveView::draw(SceneRenderer& renderer, const Camera& camera, const Viewport& vp, int slot,
                           unsigned target, double budgetMs, bool depth) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto msSince = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
    times_ = DrawTimes{};
    const uint64_t key = viewKey(renderer, camera, vp, slot);
    times_.keyMs = msSince(start);
    if (!building_ && !(shown_.valid && shown_.key == key && shown_.width == vp.width && shown_.height == vp.height)) {
        const auto t0 = Clock::now();
        times_.started = true;
        // Start a build from the instances gathered this frame.
        renderer.uploadInstances();
        buildCamera_ = camera;
        if (renderer.shadows) renderer.renderShadows(camera, slot);
        ensureSize(built_, vp.width, vp.height);
        built_.key = key;
        glBindFramebuffer(GL_FRAMEBUFFER, built_.fbo);
        glViewport(0, 0, vp.width, vp.height);
        glClearColor(0.17f, 0.18f, 0.20f, 1.f);   // the app's background
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        if (!shown_.valid) {
            // The first build: a cleared image is shown meanwhile, so the blit's shaders (which
            // llvmpipe compiles at their first use, 30 ms) are made now, not in a later frame.
            ensureSize(shown_, vp.width, vp.height);
            glBindFramebuffer(GL_FRAMEBUFFER, shown_.fbo);
            glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
            shown_.key = ~key;
            shown_.valid = true;
        }
        building_ = true;
        next_ = 0;
        total_ = renderer.instanceCount();
        buildFrameCount_ = 0;
        buildMsSum_ = 0;
        times_.startMs = msSince(t0);
    }
    if (building_) {
        ++buildFrameCount_;
        glBindFramebuffer(GL_FRAMEBUFFER, built_.fbo);
        const Viewport local{0, 0, built_.width, built_.height};
        // Slices until the build is done or the budget spent: at least one slice a frame.
        do {
            // A build's first slice also draws the image's clear (and the ground's large faces,
            // first in the order): that extra, measured, is taken off its share of the budget.
            const bool first = next_ == 0;
            const double left = budgetMs - msSince(start) - (first ? firstSliceExtraMs_ : 0.0);
            size_t slice = instancesPerMs_ > 0 ? size_t(kSliceMargin * std::max(0.0, left) * instancesPerMs_) : kFirstSlice;
            slice = std::min(std::max<size_t>(slice, 64), total_ - next_);
            const auto t0 = Clock::now();
            renderer.renderRange(buildCamera_, local, slot, next_, slice);
            glFinish();   // llvmpipe draws when flushed: the slice's real cost
            const double ms = msSince(t0);
            buildMsSum_ += ms;
            times_.slicesMs += ms;
            ++times_.slices;
            if (first && instancesPerMs_ > 0) {
                const double extra = std::max(0.0, ms - double(slice) / instancesPerMs_);
                firstSliceExtraMs_ = 0.5 * (firstSliceExtraMs_ + extra);
            } else {
                const double rate = double(slice) / std::max(ms, 1e-3);
                // A slower slice counts at once, a faster one by half: the next is sized for the
                // slow case (llvmpipe shares the cores with the physics thread and the machine).
                instancesPerMs_ = instancesPerMs_ > 0 ? std::min(rate, 0.5 * (instancesPerMs_ + rate)) : rate;
            }
            next_ += slice;
        } while (next_ < total_ && msSince(start) < budgetMs);
        if (next_ >= total_) {
            std::swap(shown_, built_);
            shown_.valid = true;
            building_ = false;
            lastBuildFrames_ = buildFrameCount_;
            lastBuildMs_ = buildMsSum_;
            times_.done = true;
        }
    }
    const auto blitStart = Clock::now();
    glBindFramebuffer(GL_FRAMEBUFFER, target);
    if (!shown_.valid) return;
    glBindFramebuffer(GL_READ_FRAMEBUFFER, shown_.fbo);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target);
    const int w = std::min(shown_.width, vp.width), h = std::min(shown_.height, vp.height);
    GLbitfield mask = GL_COLOR_BUFFER_BIT | (depth && depthBlit_ ? GL_DEPTH_BUFFER_BIT : 0);
    while (glGetError() != GL_NO_ERROR) {}
    glBlitFramebuffer(0, 0, w, h, vp.x, vp.y, vp.x + w, vp.y + h, mask, GL_NEAREST);
    if ((mask & GL_DEPTH_BUFFER_BIT) && glGetError() != GL_NO_ERROR) {   // formats differ: colour only, layers drawn over
        depthBlit_ = false;
        glBlitFramebuffer(0, 0, w, h, vp.x, vp.y, vp.x + w, vp.y + h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    }
    glBindFramebuffer(GL_FRAMEBUFFER, target);
    times_.blitMs = msSince(blitStart);
}

void ProgressiveView::reset() {
    shown_.valid = built_.valid = false;
    building_ = false;
    next_ = total_ = 0;
}

void ProgressiveView::shutdown() {
    for (Image* i : {&shown_, &built_}) {
        if (i->fbo) glDeleteFramebuffers(1, &i->fbo);
        if (i->color) glDeleteRenderbuffers(1, &i->color);
        if (i->depth) glDeleteRenderbuffers(1, &i->depth);
        *i = Image{};
    }
    building_ = false;
}

}  // namespace cs
