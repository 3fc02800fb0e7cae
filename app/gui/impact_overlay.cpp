// The PLUS impact replay's 3D overlay and the camera framing of an impact; see impact_replay.h.
//
// At the replay index, each point's accumulated impulse (solid) and relative velocity (dashed)
// are ribbons coloured by slip state, from the point, on its moving body; its marker is coloured
// by phase; the bodies' velocities are white arrows from their centres of mass. Time and
// configuration are frozen during a PLUS impact, so the arrows are drawn at the configuration of
// the impact (the bodies themselves are drawn where the step that resolved it left them, h later).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/gui/sandbox_app.h"

namespace cs {

namespace {

const Color kBodyVelocityColor{0.95f, 0.95f, 0.95f, 1};

// A thin line from a to b with two barbs (body velocities).
void lineArrow(DebugRenderer& r, Vec3 a, Vec3 b, Color c, Vec3 view) {
    Vec3 d = b - a;
    Real len = length(d);
    if (!(len > Real(1e-5))) return;
    Vec3 u = d / len, side = cross(u, view);
    if (!(length(side) > Real(1e-6))) return;
    side = side / length(side);
    Real head = std::min(Real(0.06), Real(0.3) * len);
    r.line(a, b, c);
    r.line(b, b - head * u + Real(0.5) * head * side, c);
    r.line(b, b - head * u - Real(0.5) * head * side, c);
}

// A ribbon arrow facing the camera (view: unit, eye to target), `width` metres wide, solid or
// dashed, with a triangular head: the points' impulses and velocities, thicker than lines.
void ribbonArrow(DebugRenderer& r, Vec3 a, Vec3 b, Color c, Vec3 view, Real width, bool dashed) {
    Vec3 d = b - a;
    Real len = length(d);
    if (!(len > Real(1e-5))) return;
    Vec3 u = d / len, side = cross(u, view);
    if (!(length(side) > Real(1e-6))) return;
    side = side * (Real(0.5) * width / length(side));
    Real head = std::min(Real(5) * width, Real(0.4) * len);
    Vec3 shaftEnd = b - head * u;
    const int n = dashed ? 7 : 1;
    for (int i = 0; i < n; i += 2) {
        Vec3 p = a + (shaftEnd - a) * (Real(i) / n), q = a + (shaftEnd - a) * (Real(i + 1) / n);
        r.triangle(p - side, q - side, q + side, c);
        r.triangle(p - side, q + side, p + side, c);
    }
    r.triangle(shaftEnd - Real(2.5) * side, b, shaftEnd + Real(2.5) * side, c);
}

}  // namespace


// Camera onto the impact: its points' centre, at a distance that shows them all.
void SandboxApp::frameImpact() {
    const PlusImpactRecord* rec = impact.current();
    if (!rec) return;
    Vec3 lo{1e30, 1e30, 1e30}, hi{-1e30, -1e30, -1e30};
    auto grow = [&](Vec3 p) {
        lo = Vec3{std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
        hi = Vec3{std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    };
    for (int k = 0; k < impact.points(); ++k) grow(impact.pointWorld(k));
    for (size_t b = 0; b < rec->bodyPosition.size(); ++b) {
        Real radius = impact.bodyRadius(int(b));
        grow(rec->bodyPosition[b] - Vec3{radius, radius, radius});
        grow(rec->bodyPosition[b] + Vec3{radius, radius, radius});
    }
    Vec3 c = Real(0.5) * (lo + hi);
    camera.target = glm::vec3(float(c.x), float(c.y), float(c.z));
    // The box (grown by the arrows) seen along the camera's axes fills about 90% of the first
    // viewport's width or height.
    glm::vec3 f = camera.forward();
    glm::vec3 right = glm::normalize(glm::cross(f, glm::vec3(0, 0, 1))), up = glm::cross(right, f);
    float w = 0, h = 0;
    for (int i = 0; i < 8; ++i) {
        glm::vec3 corner(float(i & 1 ? hi.x : lo.x), float(i & 2 ? hi.y : lo.y), float(i & 4 ? hi.z : lo.z));
        glm::vec3 d = corner - camera.target;
        w = std::max(w, 2.f * std::fabs(glm::dot(d, right)));
        h = std::max(h, 2.f * std::fabs(glm::dot(d, up)));
    }
    w += impact.arrowLength;
    h += impact.arrowLength;
    float aspect = viewports_.empty() ? 1.f : viewports_[0].aspect();
    float t = 2.f * std::tan(0.5f * camera.fovY);
    camera.distance = std::max(0.5f, 1.1f * std::max(w / (t * aspect), h / t));
    camera.followBody = -1;
}

void SandboxApp::drawImpactOverlay() {
    const ImpactReplay& r = impact;
    const PlusImpactRecord* rec = r.current();
    if (!rec) return;
    const int n = r.intervals(), np = r.points(), nb = (int)rec->bodies.size();
    // Scales: the longest arrow over the whole impact is arrowLength.
    Real maxImpulse = 0, maxVelocity = 0;
    for (int i = 0; i <= n; ++i) {
        for (int k = 0; k < np; ++k) {
            maxImpulse = std::max(maxImpulse, length(r.impulse(k, i)));
            maxVelocity = std::max(maxVelocity, length(r.velocity(k, i)));
        }
        for (int b = 0; b < nb; ++b) maxVelocity = std::max(maxVelocity, length(r.bodyVelocity(b, i).lin));
    }
    const Real impulseScale = maxImpulse > 0 ? Real(r.arrowLength) / maxImpulse : 0;
    const Real velocityScale = maxVelocity > 0 ? Real(r.arrowLength) / maxVelocity : 0;
    glm::vec3 f = camera.forward();
    const Vec3 view{Real(f.x), Real(f.y), Real(f.z)};
    const Real width = Real(0.005) * Real(camera.distance);   // about 3 pixels at 45 degrees
    for (int b = 0; b < nb; ++b) {
        Vec3 x = rec->bodyPosition[b];
        debugRenderer_.point(x, 6.f, kBodyVelocityColor);
        lineArrow(debugRenderer_, x, x + velocityScale * r.bodyVelocity(b, r.index).lin, kBodyVelocityColor, view);
    }
    for (int k = 0; k < np; ++k) {
        Vec3 p = r.pointWorld(k);
        int ph = r.phase(k, r.index), st = r.state(k, r.index);
        Color sc = impactStateColor(st);
        debugRenderer_.point(p, 13.f, impactPhaseColor(ph));
        ribbonArrow(debugRenderer_, p, p + impulseScale * r.toWorld(k, r.impulse(k, r.index)), sc, view, width, false);
        ribbonArrow(debugRenderer_, p, p + velocityScale * r.toWorld(k, r.velocity(k, r.index)), sc, view, width, true);
        if (np <= 8) {
            char text[96];
            std::snprintf(text, sizeof text, "%s%s%s", impactPhaseName(ph), st != int(SlipState::None) ? ", " : "",
                          st != int(SlipState::None) ? slipStateName(st) : "");
            // Below the point, staggered so neighbouring points' labels do not overlap.
            debugRenderer_.text(p - Vec3{0, 0, Real(0.06) + Real(0.12) * Real(k % 2)} * Real(r.arrowLength / 0.35f), text,
                                impactPhaseColor(ph));
        }
    }
}

}  // namespace cs
