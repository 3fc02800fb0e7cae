// Overlap volume of a ball and a placed convex polytope ([PEG] section 6 metric, sphere parts).
//
// Method: slice along the polytope's local z axis. With the ball centre c (in the polytope
// frame) and radius R, the slice at height z is the disc of radius rho(z) = sqrt(R^2 - (z - c_z)^2)
// cut by the convex polygon P(z) = polytope n {x_3 = z}, and
//     V = integral A(z) dz,   A(z) = area(disc(z) n P(z)).
// A(z) is computed exactly: P(z) comes from the edges crossing the plane, and the disc-polygon
// area is the sum over the polygon's sides of the signed area of disc n triangle (centre, p_i,
// p_i+1), which is a triangle or a circular sector on each piece of the side cut by the circle.
// A(z) is smooth except at the heights of polytope vertices (kinks in P(z)) and where the circle
// becomes tangent to a side or passes through a corner (A stays C^1 there, with a square-root
// term in the second derivative). The z range is split at every vertex height and into pieces of
// at most R / 4, with 8-point Gauss-Legendre on each: on the tests (box faces cutting a ball,
// closed-form caps and half-balls) the relative error is below 1e-6 of the ball's volume.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/geometry/overlap_volume.h"

namespace cs {

namespace {

struct P2 {
    Real x, y;
};

Real cross2(P2 a, P2 b) { return a.x * b.y - a.y * b.x; }

// Signed area of disc(0, R) n triangle (0, a, b).
Real discTriangleArea(P2 a, P2 b, Real R) {
    P2 d{b.x - a.x, b.y - a.y};
    Real A = d.x * d.x + d.y * d.y;
    Real t[4] = {0, 0, 0, 1};
    int nt = 1;
    if (A > Real(0)) {
        // |a + t d|^2 = R^2  ->  A t^2 + 2 B t + C = 0.
        Real B = a.x * d.x + a.y * d.y, C = a.x * a.x + a.y * a.y - R * R;
        Real disc = B * B - A * C;
        if (disc > Real(0)) {
            Real s = std::sqrt(disc);
            Real t1 = (-B - s) / A, t2 = (-B + s) / A;
            if (t1 > 0 && t1 < 1) t[nt++] = t1;
            if (t2 > 0 && t2 < 1) t[nt++] = t2;
        }
    }
    t[nt++] = 1;
    Real area = 0;
    for (int k = 0; k + 1 < nt; ++k) {
        P2 p{a.x + t[k] * d.x, a.y + t[k] * d.y};
        P2 q{a.x + t[k + 1] * d.x, a.y + t[k + 1] * d.y};
        Real tm = Real(0.5) * (t[k] + t[k + 1]);
        P2 mid{a.x + tm * d.x, a.y + tm * d.y};
        if (mid.x * mid.x + mid.y * mid.y <= R * R)
            area += Real(0.5) * cross2(p, q);  // inside the circle: the triangle (0, p, q)
        else
            area += Real(0.5) * R * R * std::atan2(cross2(p, q), p.x * q.x + p.y * q.y);  // sector
    }
    return area;
}

// A(z): area of the disc (centre (cx, cy), radius rho) cut by the polytope slice at height z.
Real sliceArea(const ConvexPolytope& p, Real z, Real cx, Real cy, Real rho,
               std::vector<P2>& poly, std::vector<std::pair<Real, int>>& keyed) {
    poly.clear();
    for (const PolytopeEdge& e : p.edges) {
        Vec3 u = p.vertices[e.tail], v = p.vertices[e.head];
        if ((u.z - z) * (v.z - z) >= 0) continue;  // z is never a vertex height (see the caller)
        Real s = (z - u.z) / (v.z - u.z);
        poly.push_back({u.x + s * (v.x - u.x) - cx, u.y + s * (v.y - u.y) - cy});
    }
    if (poly.size() < 3) return 0;
    P2 m{0, 0};
    for (P2 q : poly) m = {m.x + q.x, m.y + q.y};
    m = {m.x / Real(poly.size()), m.y / Real(poly.size())};
    keyed.resize(poly.size());
    for (size_t i = 0; i < poly.size(); ++i)
        keyed[i] = {std::atan2(poly[i].y - m.y, poly[i].x - m.x), (int)i};
    std::sort(keyed.begin(), keyed.end());
    Real area = 0;
    for (size_t i = 0; i < keyed.size(); ++i)
        area += discTriangleArea(poly[keyed[i].second], poly[keyed[(i + 1) % keyed.size()].second],
                                 rho);
    return area;
}

}  // namespace

Real spherePolytopeOverlapVolume(Real radius, Vec3 center, const ConvexPolytope& p,
                                 const Transform& tp) {
    const Real pi = Real(3.14159265358979323846);
    if (!(radius > 0) || p.vertices.empty()) return 0;
    Vec3 c = invTransformPoint(tp, center);
    if (length(c - p.centroid) >= radius + p.boundingRadius) return 0;
    // Early-outs: separated by a face plane, ball inside the polytope, polytope inside the ball.
    bool ballInside = true;
    for (const PolytopeFace& f : p.faces) {
        Real s = dot(f.normal, c) - f.offset;
        if (s >= radius) return 0;
        if (s > -radius) ballInside = false;
    }
    if (ballInside) return Real(4) / Real(3) * pi * radius * radius * radius;
    bool polytopeInside = true;
    for (Vec3 v : p.vertices)
        if (lengthSq(v - c) > radius * radius) polytopeInside = false;
    if (polytopeInside) return p.volume;

    // Integration breakpoints: the ball's z range and every vertex height inside it.
    std::vector<Real> cuts{c.z - radius, c.z + radius};
    for (Vec3 v : p.vertices)
        if (v.z > c.z - radius && v.z < c.z + radius) cuts.push_back(v.z);
    std::sort(cuts.begin(), cuts.end());

    // 8-point Gauss-Legendre on [-1, 1].
    static const Real node[4] = {Real(0.1834346424956498), Real(0.5255324099163290),
                                 Real(0.7966664774136267), Real(0.9602898564975363)};
    static const Real weight[4] = {Real(0.3626837833783620), Real(0.3137066458778873),
                                   Real(0.2223810344533745), Real(0.1012285362903763)};
    std::vector<P2> poly;
    std::vector<std::pair<Real, int>> keyed;
    Real volume = 0;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
        Real lo = cuts[k], hi = cuts[k + 1];
        if (hi - lo <= Real(0)) continue;
        int pieces = std::max(1, (int)std::ceil((hi - lo) / (Real(0.25) * radius)));
        Real step = (hi - lo) / Real(pieces);
        for (int j = 0; j < pieces; ++j) {
            Real mid = lo + (Real(j) + Real(0.5)) * step, half = Real(0.5) * step;
            for (int q = 0; q < 8; ++q) {
                Real z = mid + (q < 4 ? -node[q] : node[q - 4]) * half;
                Real w = weight[q < 4 ? q : q - 4] * half;
                Real h = z - c.z;
                Real rho = std::sqrt(std::max(Real(0), radius * radius - h * h));
                volume += w * sliceArea(p, z, c.x, c.y, rho, poly, keyed);
            }
        }
    }
    return volume;
}

}  // namespace cs
