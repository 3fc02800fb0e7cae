// Volume of a convex polytope cut by half-spaces, by clipping its boundary: the second, faster
// way to the overlap volume of [PEG] section 6 (overlapVolume with OverlapMethod::Clipping).
//
// The polytope is kept as a list of planar polygons (its faces). Cutting by n . x <= d clips every
// polygon against the plane (Sutherland-Hodgman, which keeps each loop's orientation) and closes
// the hole with a cap: the points on the plane (new crossing points and old points lying on it),
// ordered counter-clockwise about n, which is the cap's outward normal. Nothing is cut when no
// point is strictly outside, so a face lying in the plane never gets a second, duplicate cap.
// The volume is the sum over the closed surface of the fan tetrahedra from a reference point r,
//     V = sum_faces sum_i det[p_0 - r, p_i - r, p_i+1 - r] / 6.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "engine/geometry/overlap_volume.h"

namespace cs {

namespace {

struct PolygonSoup {
    std::vector<Vec3> points;
    std::vector<int> start;  // polygon k is points[start[k] .. start[k + 1])
    int count() const { return (int)start.size() - 1; }
    void clear() {
        points.clear();
        start.assign(1, 0);
    }
    void close() { start.push_back((int)points.size()); }
};

// Appends the points of `cap` ordered counter-clockwise about n as one polygon.
void appendCap(std::vector<Vec3>& cap, Vec3 n, PolygonSoup& out,
               std::vector<std::pair<Real, int>>& keyed) {
    if (cap.size() < 3) return;
    Vec3 center{0, 0, 0};
    for (Vec3 q : cap) center += q;
    center = center / Real(cap.size());
    Vec3 u, w;
    tangentBasis(n, u, w);
    w = cross(n, u);
    keyed.resize(cap.size());
    for (size_t i = 0; i < cap.size(); ++i) {
        Vec3 d = cap[i] - center;
        keyed[i] = {std::atan2(dot(d, w), dot(d, u)), (int)i};
    }
    std::sort(keyed.begin(), keyed.end());
    for (const auto& k : keyed) out.points.push_back(cap[k.second]);
    out.close();
}

}  // namespace

Real clippedVolume(const ConvexPolytope& p, const Vec3* normals, const Real* offsets, int count) {
    if (p.faces.empty()) return 0;
    // Scratch kept per thread: this runs per overlapping pair, and allocation dominated it.
    thread_local PolygonSoup cur, next;
    thread_local std::vector<Real> side;
    thread_local std::vector<Vec3> cap;
    thread_local std::vector<std::pair<Real, int>> keyed;
    cur.clear();
    for (const PolytopeFace& f : p.faces) {
        for (int i = 0; i < f.vertexCount; ++i)
            cur.points.push_back(p.vertices[p.faceVertices[f.firstVertex + i]]);
        cur.close();
    }
    const Real eps = Real(1e-12) * std::max(Real(1), p.boundingRadius);
    for (int h = 0; h < count; ++h) {
        const Vec3 n = normals[h];
        const Real d = offsets[h];
        side.resize(cur.points.size());
        bool anyOutside = false, anyInside = false;
        for (size_t i = 0; i < cur.points.size(); ++i) {
            side[i] = dot(n, cur.points[i]) - d;
            anyOutside |= side[i] > eps;
            anyInside |= side[i] < -eps;
        }
        if (!anyOutside) continue;
        if (!anyInside) return 0;
        next.clear();
        cap.clear();
        for (int k = 0; k < cur.count(); ++k) {
            const int s = cur.start[k], m = cur.start[k + 1] - s;
            Real lo = side[s], hi = side[s];
            for (int i = 1; i < m; ++i) {
                lo = std::min(lo, side[s + i]);
                hi = std::max(hi, side[s + i]);
            }
            if (lo > eps) continue;  // wholly outside
            if (hi < -eps) {         // wholly inside: kept as it is
                next.points.insert(next.points.end(), cur.points.begin() + s,
                                   cur.points.begin() + s + m);
                next.close();
                continue;
            }
            const size_t before = next.points.size();
            for (int i = 0; i < m; ++i) {
                int a = s + i, b = s + (i + 1) % m;
                Real sa = side[a], sb = side[b];
                if (sa <= eps) {
                    next.points.push_back(cur.points[a]);
                    if (sa >= -eps) cap.push_back(cur.points[a]);
                }
                if ((sa < -eps && sb > eps) || (sa > eps && sb < -eps)) {
                    Vec3 x = cur.points[a] + (sa / (sa - sb)) * (cur.points[b] - cur.points[a]);
                    next.points.push_back(x);
                    cap.push_back(x);
                }
            }
            if (next.points.size() - before >= 3)
                next.close();
            else
                next.points.resize(before);
        }
        appendCap(cap, n, next, keyed);
        std::swap(cur, next);
    }
    if (cur.count() < 4) return 0;
    Vec3 r = cur.points[0];
    Real volume6 = 0;
    for (int k = 0; k < cur.count(); ++k) {
        const int s = cur.start[k], m = cur.start[k + 1] - s;
        Vec3 a = cur.points[s] - r;
        for (int i = 1; i + 1 < m; ++i)
            volume6 += dot(a, cross(cur.points[s + i] - r, cur.points[s + i + 1] - r));
    }
    return std::max(Real(0), volume6 / Real(6));
}

}  // namespace cs
