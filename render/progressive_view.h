// A 3D view drawn over several frames when one frame cannot hold it (issue 20: the app's frame
// stays under 33 ms while a 20,000-box pile steps, on Mesa's llvmpipe too).
//
// Drawing 20,000 boxes costs llvmpipe a few hundred ms at 1280x720, far more than a frame. The
// view is therefore an image kept in an offscreen target (colour and depth) and shown by a blit
// each frame. When what it shows changes (the instances' hash, the camera, the viewport, the
// shadows), a new image is built in a second target, a slice of instances per frame within a
// time budget, and replaces the shown one when it is complete; meanwhile the old image stays
// on screen, so the window never waits for the whole scene. A build started is finished with the
// instances it uploaded at its start, then the next one starts from the latest state: the image
// lags the simulation by at most two builds. Where a frame holds the whole scene (a GPU, or a
// small scene) the build finishes in the frame it starts, and the view is current.
//
// The slice size follows the measured rate (instances per ms, each slice timed to glFinish,
// since llvmpipe draws only when flushed), with a margin, since a slice cannot stop once drawn.
// The blit carries depth when asked (the app asks when its layers are depth-tested, x-ray off),
// so the debug layers drawn after it are depth-tested against the bodies as before.
#pragma once

#include <cstddef>
#include <cstdint>

#include "render/camera.h"
#include "render/scene_renderer.h"

namespace cs {

class ProgressiveView {
public:
    // Draws the view of `slot` into `viewport` of framebuffer `target`: builds on (within
    // budgetMs) and blits the latest complete image, with its depth when `depth` (layers drawn
    // after it test against it; llvmpipe's depth blit costs more than the colour's). The instances
    // must be gathered without upload (SceneRenderer::gatherInstances(..., false)); they are
    // uploaded when a build starts.
    void draw(SceneRenderer& renderer, const Camera& camera, const Viewport& viewport, int slot, unsigned target,
              double budgetMs, bool depth);
    // Drops the images (a new scene, or the view no longer drawn progressively).
    void reset();
    void shutdown();

    bool building() const { return building_; }
    int buildFrames() const { return lastBuildFrames_; }       // frames the last complete build took
    double buildMs() const { return lastBuildMs_; }            // its drawing time (sum of its slices)
    // What the last draw did, timed (the app's --frame-profile): the key, a build's start (upload,
    // shadow pass, clear), the slices (drawn and finished) and the blit.
    struct DrawTimes {
        double keyMs = 0, startMs = 0, slicesMs = 0, blitMs = 0;
        int slices = 0;
        bool started = false, done = false;
    };
    const DrawTimes& lastDraw() const { return times_; }

private:
    struct Image {
        unsigned fbo = 0, color = 0, depth = 0;
        int width = 0, height = 0;
        uint64_t key = 0;
        bool valid = false;
    };
    void ensureSize(Image& image, int width, int height);
    uint64_t viewKey(const SceneRenderer& renderer, const Camera& camera, const Viewport& viewport, int slot) const;

    Image shown_, built_;
    bool building_ = false;
    size_t next_ = 0, total_ = 0;            // the build's next instance, and its instance count
    Camera buildCamera_;
    double instancesPerMs_ = 0;              // measured drawing rate; 0 before the first slice
    double firstSliceExtraMs_ = 0;           // a build's first slice's time over the rate's
    int buildFrameCount_ = 0, lastBuildFrames_ = 0;
    double buildMsSum_ = 0, lastBuildMs_ = 0;
    DrawTimes times_;
    bool depthBlit_ = true;                  // false where the target's depth format refuses the blit
};

}  // namespace cs
