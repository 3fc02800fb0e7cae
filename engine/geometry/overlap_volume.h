// Overlap volume of convex parts: the accuracy metric of [PEG] Williams, Lu, Trinkle 2016,
// section 6 (the 2D experiment measured the overlap area of all polygon pairs after each step;
// in 3D it is the overlap volume of every pair of convex parts).
//
// Polytope-polytope is exact up to rounding: the intersection is the intersection of the two
// parts' face half-spaces, computed with qhull's half-space intersection ("H" mode) about a
// strictly interior point (the Chebyshev centre, from a small LP), or by clipping one part's
// faces by the other's planes. Sphere-sphere is the closed-form lens. Sphere-polytope integrates
// exact slice areas (disc cut by a convex polygon) with Gauss-Legendre quadrature; see
// overlap_volume_sphere.cpp for the method and its accuracy.
#pragma once

#include "engine/geometry/polytope.h"

namespace cs {

// Two exact ways to the same number (the tests hold them to 1e-9 of each other):
//   Qhull    - qhull half-space intersection about the Chebyshev centre (the reference);
//   Clipping - A's faces clipped by B's planes (overlap_clip.cpp): about 4x faster, no LP, no
//              failure mode, exact down to the thinnest overlaps. The default, since the app
//              evaluates the metric for every penetrating pair each frame.
enum class OverlapMethod { Qhull, Clipping };

// Volume of (a placed at ta) intersected with (b placed at tb). 0 when they are disjoint or
// touch; with Qhull also when the overlap is thinner than about 1e-7 of the smaller bounding
// radius (its interior point would not be strictly interior).
Real overlapVolume(const ConvexPolytope& a, const Transform& ta, const ConvexPolytope& b,
                   const Transform& tb, OverlapMethod method = OverlapMethod::Clipping);

// Volume of {x in p : normals[i] . x <= offsets[i] for all i} by clipping p's faces.
Real clippedVolume(const ConvexPolytope& p, const Vec3* normals, const Real* offsets, int count);

// Lens volume of two balls (exact).
Real sphereSphereOverlapVolume(Real radiusA, Vec3 centerA, Real radiusB, Vec3 centerB);

// Volume of a ball intersected with a placed polytope: exact slice areas integrated by
// quadrature, error about 1e-8 of the ball's volume (see overlap_volume_sphere.cpp).
Real spherePolytopeOverlapVolume(Real radius, Vec3 center, const ConvexPolytope& p,
                                 const Transform& tp);

// Chebyshev centre of the polytope {x : normals[i] . x <= offsets[i]} (unit normals): the centre
// and radius of the largest inscribed ball, by a dense simplex. Returns false if the LP fails
// (unbounded or cycling); radius < 0 means the set is empty.
bool chebyshevCenter(const Vec3* normals, const Real* offsets, int count, Vec3 start,
                     Vec3& center, Real& radius);

}  // namespace cs
