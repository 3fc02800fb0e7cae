// Sizes of the debug overlays, chosen from the scene so that contact forces and friction cones
// read alike on a 2 kg card and on a 30 t stack (issue 22, item 12).
//
// MuJoCo's visualiser scales a force arrow by the model's mean body mass (vis.map.force /
// stat.meanmass) and its glyphs by the mean body size (stat.meansize). Here likewise:
//   W = mean weight of the dynamic bodies, m_mean |g| (|g| = 9.81 when gravity is off),
//   R = mean bounding radius of the dynamic bodies,
//   s = median over their convex parts of the cube root of the part's volume (a 1 cm thick
//       card of 0.8 x 0.6 m has s = 0.17 m, a table's 5 cm leg 0.1 m, a 1 m cube 1 m),
// and a contact force f is drawn f R / W long: a contact that carries one typical body's weight
// reaches as far as that body's bounding radius. The friction cones (and the normals, whose
// length the engine derives from the same setting) are 0.3 s tall, so a cone at a card's edge or
// a table's leg stays about as wide as the part. GL-free, so the tests include it.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/model.h"

namespace cs {

struct OverlayScale {
    float forceScale = 0.02f;     // m per N (DebugDrawFlags::forceScale)
    float normalLength = 0.15f;   // m (DebugDrawFlags::normalLength: cone height, normal length)
    float typicalWeight = 0;      // N, W above
    float typicalRadius = 0;      // m, R above
};

// Bounding radius of a body about its centre of mass: the farthest point of any of its parts
// (vertices, not the parts' own bounding spheres, which a generator's hull may centre far off).
inline Real bodyBoundingRadius(const Model& m, int b) {
    Real r = 0;
    for (int k = 0; k < m.bodyShapeCount[b]; ++k) {
        int s = m.bodyFirstShape[b] + k, p = m.shapePolytope[s];
        if (p < 0) r = std::max(r, length(m.shapeLocal[s].pos) + m.shapeRadius[s]);
        else
            for (Vec3 v : m.polytopes[p].vertices) r = std::max(r, length(transformPoint(m.shapeLocal[s], v)));
    }
    return r;
}

inline OverlayScale overlayScale(const Model& m, Vec3 gravity) {
    OverlayScale out;
    double mass = 0, radius = 0;
    int bodies = 0;
    std::vector<Real> parts;
    for (int b = 0; b < m.bodyCount(); ++b) {
        if (m.isStatic(b)) continue;
        mass += double(m.mass[b]);
        radius += double(bodyBoundingRadius(m, b));
        ++bodies;
        for (int k = 0; k < m.bodyShapeCount[b]; ++k) {
            int shape = m.bodyFirstShape[b] + k, p = m.shapePolytope[shape];
            Real r = m.shapeRadius[shape];
            Real volume = p >= 0 ? m.polytopes[p].volume : Real(4.0 / 3.0 * M_PI) * r * r * r;
            parts.push_back(std::cbrt(volume));
        }
    }
    if (bodies == 0 || mass <= 0) return out;   // nothing moves: the engine's defaults
    double g = double(length(gravity));
    if (g < 1e-6) g = 9.81;
    out.typicalWeight = float(mass / bodies * g);
    out.typicalRadius = float(radius / bodies);
    std::nth_element(parts.begin(), parts.begin() + parts.size() / 2, parts.end());
    out.forceScale = out.typicalRadius / out.typicalWeight;
    out.normalLength = 0.3f * float(parts[parts.size() / 2]);
    return out;
}

// The floor the camera stays above: the top of the largest static part (the ground box of
// the scene generators, top face at z = 0), or -1e30 when nothing is static.
inline float floorHeight(const Model& m) {
    int best = -1;
    for (int s = 0; s < m.shapeCount(); ++s)
        if (m.isStatic(m.shapeBody[s]) && m.shapePolytope[s] >= 0 && (best < 0 || m.shapeRadius[s] > m.shapeRadius[best]))
            best = s;
    if (best < 0) return -1e30f;
    int b = m.shapeBody[best];
    Transform body{m.initialPos[b], m.initialRot[b]};
    Real top = Real(-1e30);
    for (Vec3 v : m.polytopes[m.shapePolytope[best]].vertices)
        top = std::max(top, transformPoint(body, transformPoint(m.shapeLocal[best], v)).z);
    return float(top);
}

}  // namespace cs
