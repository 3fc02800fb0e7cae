// The mouse pick of deformable bodies: a ray against the deformed boundary triangles
// (Model::femTris at State::femPos), nearest hit first. The app compares the hit's distance with
// World::rayCast's rigid hit and grabs whichever is nearer; a FEM hit is dragged as the point
// sum_i w_i x_i of its triangle (World::setFemDrag, fem_drag.h) with the hit's barycentric
// weights w, so the grabbed point is the surface point under the cursor, not the nearest node.
#pragma once

#include "engine/model.h"
#include "engine/state.h"
#include "engine/world.h"

namespace cs {

struct FemRayHit {
    int tri = -1;                 // index into Model::femTris, -1: no hit
    Vec3 weights{0, 0, 0};        // barycentric weights on the triangle's three nodes (sum 1)
    Real distance = 0;            // from the ray's origin to the hit, m
    Vec3 point{0, 0, 0};          // world
};

// Ray (origin, direction; direction need not be unit) against every boundary triangle of every
// FEM body, both sides (a ray starting inside a body still picks it); the nearest hit ahead of
// the origin. Returns false when nothing is hit.
bool femRayCast(const Model& model, const State& state, Vec3 origin, Vec3 direction, FemRayHit* hit);

// What the cursor ray hits first among the rigid bodies (World::rayCast, which skips see-through
// static bodies) and the FEM bodies' surfaces: body >= 0 a rigid body (static ones included: the
// app orbits on those), fem.tri >= 0 a FEM surface point, neither: nothing.
struct PickHit {
    int body = -1;
    FemRayHit fem;
    Vec3 point{0, 0, 0};
    Real distance = 0;
};
PickHit pickNearest(const World& world, Vec3 origin, Vec3 direction);

// The throw on release: every free node (not pinned) of the FEM body that boundary triangle
// `tri` belongs to leaves with velocity v, as a released rigid body leaves with the cursor's.
void throwFemBody(World& world, int tri, Vec3 v);

// Ray against one triangle (a, b, c): the distance along the unit direction d and the weights of
// (a, b, c) at the hit, or false when the ray misses it or the triangle is degenerate.
bool rayTriangle(Vec3 origin, Vec3 d, Vec3 a, Vec3 b, Vec3 c, Real* t, Vec3* weights);

}  // namespace cs
