// The orbit camera shared by every viewport: orbit (left drag), pan (right or middle drag),
// zoom (wheel), frame-all, and follow (the target tracks a body). The world is z-up.
#pragma once

#include <glm/glm.hpp>

namespace cs {

struct Viewport {
    int x = 0, y = 0, width = 1, height = 1;   // pixels, origin bottom-left (GL convention)
    float aspect() const { return height > 0 ? float(width) / float(height) : 1.f; }
};

struct Ray {
    glm::vec3 origin, direction;   // direction unit
};

class Camera {
public:
    glm::vec3 target{0.f, 0.f, 0.5f};
    float yaw = glm::radians(-60.f);      // about +z, from +x
    float pitch = glm::radians(25.f);     // above the horizon
    float distance = 8.f;
    float fovY = glm::radians(45.f);
    int followBody = -1;                  // >= 0: target tracks this body

    glm::vec3 eye() const;
    glm::vec3 forward() const;            // unit, eye -> target
    glm::mat4 view() const;
    glm::mat4 projection(float aspect) const;
    glm::mat4 viewProj(const Viewport& vp) const { return projection(vp.aspect()) * view(); }

    void orbit(float dxPixels, float dyPixels);
    void pan(float dxPixels, float dyPixels, const Viewport& vp);
    void zoom(float wheelSteps);
    // Fits the box [lo, hi] in view, keeping the current direction.
    void frame(glm::vec3 lo, glm::vec3 hi);

    // The ray through window pixel (px, py), measured from the top-left of the window whose
    // height is windowHeight, for the viewport vp (bottom-left origin).
    Ray pixelRay(float px, float py, int windowHeight, const Viewport& vp) const;
    // World point to window pixel (top-left origin); false when behind the camera.
    bool project(glm::vec3 p, int windowHeight, const Viewport& vp, glm::vec2& pixel) const;
};

}  // namespace cs
