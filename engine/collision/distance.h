// Exact signed distance between convex parts: the reference the tests and the overlap metrics
// ([PEG] section 6 measures interpenetration at the end of every step) are checked against.
//
// Separated: the exact Euclidean distance, the minimum over vertex-to-face-polygon distances
// (both ways; a polygon's closest point may be on its boundary, which covers vertex-edge and
// vertex-vertex) and edge-edge segment distances. The minimum distance of two convex polytopes
// is attained by one of these feature pairs, so the minimum is exact, not an iteration.
// Overlapping: minus the penetration depth, from the separating axis test over the face normals
// of both and the cross products of the edge pairs that span a face of the Minkowski difference
// (Gauss-map arc test). Those axes are exactly the face normals of the Minkowski difference, so
// the smallest overlap over them is the exact depth (the minimal translation distance).
//
// Witness points (optional): world points on A and B. Separated: the closest points, with
// |witnessA - witnessB| = distance. Overlapping: points on the surfaces realizing the depth
// along the best axis (a vertex and its projection, or the closest points of two edge lines).
#pragma once

#include "engine/core/math.h"
#include "engine/geometry/polytope.h"

namespace cs {

Real signedDistance(const ConvexPolytope& a, const Transform& Xa, const ConvexPolytope& b,
                    const Transform& Xb, Vec3* witnessA = nullptr, Vec3* witnessB = nullptr);

// Sphere (centre in world, radius) against a polytope: distance of the centre to the polytope
// minus the radius; inside, the largest face gap minus the radius. Witness A is on the sphere.
Real signedDistance(Vec3 center, Real radius, const ConvexPolytope& b, const Transform& Xb,
                    Vec3* witnessA = nullptr, Vec3* witnessB = nullptr);

Real signedDistance(Vec3 centerA, Real radiusA, Vec3 centerB, Real radiusB,
                    Vec3* witnessA = nullptr, Vec3* witnessB = nullptr);

}  // namespace cs
