// The orbit camera shared by every viewport: orbit (left drag), pan (right or middle drag),
// zoom (wheel, towards the point under the cursor), frame-all, and follow (the target tracks a
// body). The world is z-up.
#pragma once

#include <algorithm>
#include <cmath>

#include <glm/glm.hpp>

namespace cs {

// No floor: the camera may orbit all round.
constexpr float kNoFloor = -1e30f;

// The lowest pitch that keeps the eye above the floor plane z = floorZ (by a margin of 2% of the
// distance, at least 2 cm): eye.z = target.z + distance sin(pitch) >= floorZ + margin. At most
// 89 degrees (looking straight down), at least -89.
inline float minPitchAboveFloor(float targetZ, float distance, float floorZ) {
    const float limit = 89.f * float(M_PI) / 180.f;
    if (floorZ <= kNoFloor) return -limit;
    float margin = std::max(0.02f, 0.02f * distance);
    float s = (floorZ + margin - targetZ) / std::max(distance, 1e-6f);
    return std::clamp(std::asin(std::clamp(s, -1.f, 1.f)), -limit, limit);
}

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
    int followFem = -1;                   // >= 0: target tracks this deformable body (the app's)
    float floorZ = kNoFloor;              // the scene's ground top: the eye stays above it

    glm::vec3 eye() const;
    glm::vec3 forward() const;            // unit, eye -> target
    glm::mat4 view() const;
    glm::mat4 projection(float aspect) const;
    glm::mat4 viewProj(const Viewport& vp) const { return projection(vp.aspect()) * view(); }

    void orbit(float dxPixels, float dyPixels);
    void pan(float dxPixels, float dyPixels, const Viewport& vp);
    void zoom(float wheelSteps);
    // Zooms towards (or away from) `point`, the point under the cursor: eye and target scale
    // about it by the zoom's distance factor, so it stays at the same pixel (the view direction
    // is kept). While following a body, zooms on the target as zoom() does.
    void zoomToward(float wheelSteps, glm::vec3 point);
    // Fits the box [lo, hi] in view, keeping the current direction.
    void frame(glm::vec3 lo, glm::vec3 hi);
    // Orbit, pan, zoom and frame keep the target on or above the floor and the eye above it.
    void keepAboveFloor();

    // The ray through window pixel (px, py), measured from the top-left of the window whose
    // height is windowHeight, for the viewport vp (bottom-left origin).
    Ray pixelRay(float px, float py, int windowHeight, const Viewport& vp) const;
    // World point to window pixel (top-left origin); false when behind the camera.
    bool project(glm::vec3 p, int windowHeight, const Viewport& vp, glm::vec2& pixel) const;
};

}  // namespace cs
