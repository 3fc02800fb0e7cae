// Orbit camera; see camera.h.
#include "render/camera.h"

#include <algorithm>
#include <cmath>

#include <glm/gtc/matrix_transform.hpp>

namespace cs {

glm::vec3 Camera::forward() const {
    return -glm::vec3(std::cos(pitch) * std::cos(yaw), std::cos(pitch) * std::sin(yaw), std::sin(pitch));
}

glm::vec3 Camera::eye() const { return target - distance * forward(); }

glm::mat4 Camera::view() const { return glm::lookAt(eye(), target, glm::vec3(0, 0, 1)); }

glm::mat4 Camera::projection(float aspect) const {
    // Near and far planes follow the distance so both a 10 cm grasp and a 1,000-body pile fit.
    float nearPlane = std::max(0.01f, distance * 0.01f);
    float farPlane = std::max(200.f, distance * 20.f);
    return glm::perspective(fovY, aspect, nearPlane, farPlane);
}

void Camera::orbit(float dx, float dy) {
    yaw -= dx * 0.006f;
    pitch = std::clamp(pitch + dy * 0.006f, glm::radians(-89.f), glm::radians(89.f));
    keepAboveFloor();
}

void Camera::keepAboveFloor() {
    if (floorZ <= kNoFloor) return;
    target.z = std::max(target.z, floorZ);
    pitch = std::max(pitch, minPitchAboveFloor(target.z, distance, floorZ));
}

void Camera::pan(float dx, float dy, const Viewport& vp) {
    // One pixel moves the target by the size of a pixel at the target's depth.
    float metresPerPixel = 2.f * distance * std::tan(fovY * 0.5f) / float(std::max(vp.height, 1));
    glm::vec3 f = forward();
    glm::vec3 right = glm::normalize(glm::cross(f, glm::vec3(0, 0, 1)));
    glm::vec3 up = glm::cross(right, f);
    target += (-dx * right + dy * up) * metresPerPixel;
    followBody = followFem = -1;
    keepAboveFloor();
}

void Camera::zoom(float wheelSteps) {
    distance = std::clamp(distance * std::pow(0.88f, wheelSteps), 0.05f, 500.f);
    keepAboveFloor();
}

void Camera::zoomToward(float wheelSteps, glm::vec3 point) {
    const float before = distance;
    zoom(wheelSteps);
    if (followBody >= 0 || followFem >= 0) return;
    // A homothety of ratio k about p maps the eye to p + k (eye - p) and the target to
    // p + k (target - p): the rays through p are unchanged, so p keeps its pixel, and the
    // distance eye-target becomes k times as long, the clamped distance zoom() chose.
    const float k = distance / before;
    target = point + k * (target - point);
    keepAboveFloor();
}

void Camera::frame(glm::vec3 lo, glm::vec3 hi) {
    target = 0.5f * (lo + hi);
    // A radius of at least 5 cm: a tomato of 4 cm radius alone is framed to fit the view (a floor
    // of 25 cm left it at a seventh of the view's height).
    float radius = std::max(0.05f, 0.5f * glm::length(hi - lo));
    distance = radius / std::sin(fovY * 0.5f) * 1.05f;
    keepAboveFloor();
}

Ray Camera::pixelRay(float px, float py, int windowHeight, const Viewport& vp) const {
    float glY = float(windowHeight) - py;
    glm::vec2 ndc{2.f * (px - vp.x) / float(vp.width) - 1.f, 2.f * (glY - vp.y) / float(vp.height) - 1.f};
    glm::mat4 inv = glm::inverse(viewProj(vp));
    glm::vec4 a = inv * glm::vec4(ndc, -1.f, 1.f);
    glm::vec4 b = inv * glm::vec4(ndc, 1.f, 1.f);
    glm::vec3 pa = glm::vec3(a) / a.w, pb = glm::vec3(b) / b.w;
    return Ray{pa, glm::normalize(pb - pa)};
}

bool Camera::project(glm::vec3 p, int windowHeight, const Viewport& vp, glm::vec2& pixel) const {
    glm::vec4 c = viewProj(vp) * glm::vec4(p, 1.f);
    if (c.w <= 1e-6f) return false;
    glm::vec3 ndc = glm::vec3(c) / c.w;
    pixel.x = vp.x + (ndc.x * 0.5f + 0.5f) * vp.width;
    pixel.y = float(windowHeight) - (vp.y + (ndc.y * 0.5f + 0.5f) * vp.height);
    return true;
}

}  // namespace cs
