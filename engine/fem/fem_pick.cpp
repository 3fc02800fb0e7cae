// The mouse pick of deformable bodies (fem_pick.h).
#include "engine/fem/fem_pick.h"

#include <cmath>

namespace cs {

// Moller-Trumbore: solve o + t d = a + u (b - a) + v (c - a) by Cramer's rule,
//   p = d x e2, det = e1 . p, u = (o - a) . p / det, q = (o - a) x e1, v = d . q / det,
//   t = e2 . q / det, with e1 = b - a, e2 = c - a; the weights of (a, b, c) are (1 - u - v, u, v).
bool rayTriangle(Vec3 origin, Vec3 d, Vec3 a, Vec3 b, Vec3 c, Real* t, Vec3* weights) {
    const Vec3 e1 = b - a, e2 = c - a, p = cross(d, e2);
    const Real det = dot(e1, p);
    // Degenerate or edge-on: |det| is twice the area projected along d.
    if (std::fabs(det) <= Real(1e-12) * lengthSq(cross(e1, e2)) + Real(1e-30)) return false;
    const Real inv = Real(1) / det;
    const Vec3 s = origin - a;
    const Real u = dot(s, p) * inv;
    if (u < 0 || u > 1) return false;
    const Vec3 q = cross(s, e1);
    const Real v = dot(d, q) * inv;
    if (v < 0 || u + v > 1) return false;
    *t = dot(e2, q) * inv;
    *weights = Vec3{1 - u - v, u, v};
    return true;
}

bool femRayCast(const Model& model, const State& state, Vec3 origin, Vec3 direction, FemRayHit* hit) {
    const Real len = length(direction);
    if (!(len > 0) || state.femPos.size() != model.femRestPos.size()) return false;
    const Vec3 d = direction / len;
    FemRayHit best;
    best.distance = Real(1e30);
    for (int i = 0; i < (int)model.femTris.size(); ++i) {
        const auto& tri = model.femTris[i];
        Real t;
        Vec3 w;
        if (!rayTriangle(origin, d, state.femPos[tri[0]], state.femPos[tri[1]], state.femPos[tri[2]], &t, &w)) continue;
        if (t <= 0 || t >= best.distance) continue;
        best.tri = i;
        best.weights = w;
        best.distance = t;
    }
    if (best.tri < 0) return false;
    best.point = origin + best.distance * d;
    if (hit) *hit = best;
    return true;
}

PickHit pickNearest(const World& world, Vec3 origin, Vec3 direction) {
    PickHit pick;
    Vec3 rigidPoint;
    const int body = world.rayCast(origin, direction, &rigidPoint);
    const Real rigidDistance = body >= 0 ? length(rigidPoint - origin) : Real(1e30);
    FemRayHit fem;
    if (femRayCast(world.model(), world.state(), origin, direction, &fem) && fem.distance < rigidDistance) {
        pick.fem = fem;
        pick.point = fem.point;
        pick.distance = fem.distance;
    } else if (body >= 0) {
        pick.body = body;
        pick.point = rigidPoint;
        pick.distance = rigidDistance;
    }
    return pick;
}

void throwFemBody(World& world, int tri, Vec3 v) {
    const Model& model = world.model();
    if (tri < 0 || tri >= (int)model.femTris.size()) return;
    const FemBodyInfo& body = model.femBodies[model.femNodeBody[model.femTris[tri][0]]];
    State& state = world.state();
    for (int i = body.firstNode; i < body.firstNode + body.nodeCount; ++i)
        if (model.femNodeInvMass[i] > 0) state.femVel[i] = v;
}

}  // namespace cs
