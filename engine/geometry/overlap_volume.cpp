// Exact overlap volume of two placed convex polytopes, and the sphere-sphere lens
// ([PEG] Williams, Lu, Trinkle 2016, section 6: the overlap of convex parts as the error metric).
//
// Pipeline for two polytopes A, B (everything in A's frame):
//   1. Bounding-sphere early-out.
//   2. Face-plane classification: a face plane of A with every vertex of B outside separates the
//      pair (volume 0); a plane with every vertex of B inside is redundant for A n B (and the
//      same with A and B swapped). If all of B's planes are redundant, A lies inside B and the
//      answer is A's volume (and vice versa). Redundant planes of one side are dropped.
//   3. Chebyshev centre c, r of the remaining half-spaces n_i . x <= d_i by a dense simplex:
//          maximise r  s.t.  n_i . x + r <= d_i.
//      r <= kThin * (smaller bounding radius) means empty or a sliver: volume 0 (the sliver's
//      volume is below about 2 kThin R * its area).
//   4. qhull half-space intersection ("H", feasible point the origin after translating by c).
//      qhull builds the hull of the dual points n_i / (d_i - n_i . c); each dual facet is one
//      vertex x = c - normal / offset of A n B, and the dual facet's vertices name the planes
//      through it. Per plane i, the vertices on it, ordered by angle, form the face polygon with
//      area a_i; with the face's distance h_i = d_i - n_i . c from c, the pyramids from c give
//          V = sum_i h_i a_i / 3.
// OverlapMethod::Clipping replaces steps 3-4 by clipping A's faces with B's cutting planes
// (overlap_clip.cpp): the same volume, with no LP and no qhull run.
#include "engine/geometry/overlap_volume.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "engine/geometry/qhull_session.h"

namespace cs {

namespace {

constexpr Real kThin = Real(1e-7);

// Area of a planar convex polygon given by unordered points on a plane with unit normal n.
Real convexPolygonArea(std::vector<Vec3>& pts, Vec3 n) {
    if (pts.size() < 3) return 0;
    Vec3 center{0, 0, 0};
    for (Vec3 q : pts) center += q;
    center = center / Real(pts.size());
    Vec3 u, w;
    tangentBasis(n, u, w);
    w = cross(n, u);
    std::vector<std::pair<Real, int>> keyed(pts.size());
    for (size_t i = 0; i < pts.size(); ++i) {
        Vec3 d = pts[i] - center;
        keyed[i] = {std::atan2(dot(d, w), dot(d, u)), (int)i};
    }
    std::sort(keyed.begin(), keyed.end());
    Vec3 area{0, 0, 0};
    for (size_t i = 0; i < keyed.size(); ++i) {
        Vec3 a = pts[keyed[i].second] - center;
        Vec3 b = pts[keyed[(i + 1) % keyed.size()].second] - center;
        area += cross(a, b);
    }
    return Real(0.5) * std::fabs(dot(area, n));
}

struct HalfSpaces {
    std::vector<Vec3> normal;
    std::vector<Real> offset;
    void add(Vec3 n, Real d) {
        normal.push_back(n);
        offset.push_back(d);
    }
};

enum class PlaneClass { Separating, Redundant, Cutting };

PlaneClass classify(Vec3 n, Real d, const std::vector<Vec3>& verts) {
    Real lo = dot(n, verts[0]) - d, hi = lo;
    for (size_t i = 1; i < verts.size(); ++i) {
        Real s = dot(n, verts[i]) - d;
        lo = std::min(lo, s);
        hi = std::max(hi, s);
    }
    if (lo >= 0) return PlaneClass::Separating;
    if (hi <= 0) return PlaneClass::Redundant;
    return PlaneClass::Cutting;
}

// Step 4: volume of {n_i . x <= d_i} given a strictly interior point c (qhull "H" mode).
Real halfSpaceIntersectionVolume(const HalfSpaces& hs, Vec3 c) {
    const int m = (int)hs.normal.size();
    std::vector<coordT> rows(4 * m);
    std::vector<Real> height(m);
    for (int i = 0; i < m; ++i) {
        // qhull's half-space format: n . y + off <= 0, with y = x - c relative to the feasible point.
        height[i] = hs.offset[i] - dot(hs.normal[i], c);
        rows[4 * i + 0] = hs.normal[i].x;
        rows[4 * i + 1] = hs.normal[i].y;
        rows[4 * i + 2] = hs.normal[i].z;
        rows[4 * i + 3] = -height[i];
    }
    QhullSession session;
    if (session.run(4, m, rows.data(), "qhull H0 Pp") != 0) return 0;
    qhT* qh = &session.qh;
    std::vector<std::vector<Vec3>> onPlane(m);
    facetT* facet;
    vertexT *vertex, **vertexp;
    FORALLfacets {
        if (!facet->normal || facet->offset > -REALepsilon) continue;  // vertex at infinity
        Real inv = Real(-1) / Real(facet->offset);
        Vec3 x{Real(facet->normal[0]) * inv, Real(facet->normal[1]) * inv,
               Real(facet->normal[2]) * inv};
        FOREACHvertex_(facet->vertices) {
            int id = qh_pointid(qh, vertex->point);
            if (id >= 0 && id < m) onPlane[id].push_back(x);
        }
    }
    Real volume = 0;
    for (int i = 0; i < m; ++i)
        volume += height[i] * convexPolygonArea(onPlane[i], hs.normal[i]) / Real(3);
    return volume;
}

}  // namespace

// Dense primal simplex in dictionary form with Bland's rule (no cycling). The free centre is
// split x = start + u+ - u-, and r = r0 + s with r0 = min_i (d_i - n_i . start), so that every
// right-hand side b_i = d_i - n_i . start - r0 is >= 0 and the slack basis is feasible:
//     maximise s  s.t.  n_i . u+ - n_i . u- + s + w_i = b_i,   u+, u-, s, w >= 0.
bool chebyshevCenter(const Vec3* normals, const Real* offsets, int count, Vec3 start,
                     Vec3& center, Real& radius) {
    constexpr int kVars = 7;  // u+ (3), u- (3), s
    const int m = count;
    Real r0 = offsets[0] - dot(normals[0], start);
    for (int i = 1; i < m; ++i) r0 = std::min(r0, offsets[i] - dot(normals[i], start));
    // Dictionary: basic_i = b_i + sum_j D_ij nonbasic_j;  z = z0 + sum_j e_j nonbasic_j.
    std::vector<Real> D(m * kVars), b(m);
    std::vector<int> basicLabel(m), nonbasicLabel(kVars);
    for (int i = 0; i < m; ++i) {
        b[i] = offsets[i] - dot(normals[i], start) - r0;
        for (int k = 0; k < 3; ++k) {
            D[i * kVars + k] = -normals[i][k];
            D[i * kVars + 3 + k] = normals[i][k];
        }
        D[i * kVars + 6] = -1;
        basicLabel[i] = kVars + i;
    }
    Real e[kVars] = {0, 0, 0, 0, 0, 0, 1};
    Real z0 = 0;
    for (int j = 0; j < kVars; ++j) nonbasicLabel[j] = j;
    const Real eps = Real(1e-12);
    bool optimal = false;
    for (int iter = 0; iter < 50 * (m + kVars); ++iter) {
        int enter = -1;
        for (int j = 0; j < kVars; ++j)
            if (e[j] > eps && (enter < 0 || nonbasicLabel[j] < nonbasicLabel[enter])) enter = j;
        if (enter < 0) {
            optimal = true;
            break;
        }
        int leave = -1;
        Real best = 0;
        for (int i = 0; i < m; ++i) {
            Real a = D[i * kVars + enter];
            if (a >= -eps) continue;
            Real ratio = b[i] / -a;
            if (leave < 0 || ratio < best - eps ||
                (ratio <= best + eps && basicLabel[i] < basicLabel[leave])) {
                leave = i;
                best = ratio;
            }
        }
        if (leave < 0) return false;  // unbounded: cannot happen for bounded polytopes
        // Solve row `leave` for the entering variable and substitute everywhere.
        Real* row = &D[leave * kVars];
        Real p = row[enter];
        b[leave] = -b[leave] / p;
        for (int k = 0; k < kVars; ++k) row[k] = (k == enter) ? Real(1) / p : -row[k] / p;
        for (int i = 0; i < m; ++i) {
            if (i == leave) continue;
            Real* ri = &D[i * kVars];
            Real f = ri[enter];
            if (f == 0) continue;
            b[i] += f * b[leave];
            for (int k = 0; k < kVars; ++k) ri[k] = (k == enter) ? f * row[k] : ri[k] + f * row[k];
        }
        Real f = e[enter];
        z0 += f * b[leave];
        for (int k = 0; k < kVars; ++k) e[k] = (k == enter) ? f * row[k] : e[k] + f * row[k];
        std::swap(basicLabel[leave], nonbasicLabel[enter]);
    }
    if (!optimal) return false;
    Real value[kVars] = {0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < m; ++i)
        if (basicLabel[i] < kVars) value[basicLabel[i]] = b[i];
    center = start + Vec3{value[0] - value[3], value[1] - value[4], value[2] - value[5]};
    radius = r0 + value[6];
    return true;
}

Real overlapVolume(const ConvexPolytope& a, const Transform& ta, const ConvexPolytope& b,
                   const Transform& tb, OverlapMethod method) {
    if (a.vertices.empty() || b.vertices.empty()) return 0;
    // 1. Bounding spheres.
    Vec3 ca = transformPoint(ta, a.centroid), cb = transformPoint(tb, b.centroid);
    if (length(ca - cb) >= a.boundingRadius + b.boundingRadius) return 0;

    // 2. Work in A's frame: B's vertices and planes mapped by T_a^-1 T_b.
    std::vector<Vec3> vb(b.vertices.size());
    for (size_t i = 0; i < vb.size(); ++i)
        vb[i] = invTransformPoint(ta, transformPoint(tb, b.vertices[i]));
    // Classify A's planes against B's vertices and B's planes against A's vertices.
    std::vector<Vec3> nb(b.faces.size());
    std::vector<Real> db(b.faces.size());
    std::vector<PlaneClass> ka(a.faces.size()), kb(b.faces.size());
    int redundantA = 0, redundantB = 0;
    for (size_t i = 0; i < a.faces.size(); ++i) {
        ka[i] = classify(a.faces[i].normal, a.faces[i].offset, vb);
        if (ka[i] == PlaneClass::Separating) return 0;
        redundantA += ka[i] == PlaneClass::Redundant;
    }
    for (size_t i = 0; i < b.faces.size(); ++i) {
        const PolytopeFace& f = b.faces[i];
        nb[i] = rotateInv(ta.rot, rotate(tb.rot, f.normal));
        db[i] = dot(nb[i], invTransformPoint(ta, transformPoint(tb, f.offset * f.normal)));
        kb[i] = classify(nb[i], db[i], a.vertices);
        if (kb[i] == PlaneClass::Separating) return 0;
        redundantB += kb[i] == PlaneClass::Redundant;
    }
    if (redundantA == (int)a.faces.size()) return b.volume;  // B inside every plane of A
    if (redundantB == (int)b.faces.size()) return a.volume;  // A inside B
    if (method == OverlapMethod::Clipping) {
        // A is kept whole, so B's redundant planes can all go.
        HalfSpaces cuts;
        for (size_t i = 0; i < b.faces.size(); ++i)
            if (kb[i] == PlaneClass::Cutting) cuts.add(nb[i], db[i]);
        return clippedVolume(a, cuts.normal.data(), cuts.offset.data(), (int)cuts.normal.size());
    }
    // Dropping A's redundant planes is exact while all of B's are kept (the rest of the set lies
    // in B, hence inside them), and vice versa, but not both at once (two coincident planes
    // would both go). Drop them on the side that has more.
    const bool dropA = redundantA >= redundantB;
    HalfSpaces hs;
    for (size_t i = 0; i < a.faces.size(); ++i)
        if (!(dropA && ka[i] == PlaneClass::Redundant)) hs.add(a.faces[i].normal, a.faces[i].offset);
    for (size_t i = 0; i < b.faces.size(); ++i)
        if (!(!dropA && kb[i] == PlaneClass::Redundant)) hs.add(nb[i], db[i]);

    // 3. Strictly interior point.
    Vec3 start = Real(0.5) * (a.centroid + invTransformPoint(ta, cb));
    Vec3 center;
    Real radius;
    if (!chebyshevCenter(hs.normal.data(), hs.offset.data(), (int)hs.normal.size(), start, center,
                         radius))
        return 0;
    if (radius <= kThin * std::min(a.boundingRadius, b.boundingRadius)) return 0;

    // 4. Half-space intersection.
    return halfSpaceIntersectionVolume(hs, center);
}

// Lens of two balls at distance d (exact): with R = ra + rb,
//     V = pi (R - d)^2 (d^2 + 2 d R - 3 (ra - rb)^2) / (12 d),
// the smaller ball's volume when one contains the other, 0 when d >= R.
Real sphereSphereOverlapVolume(Real radiusA, Vec3 centerA, Real radiusB, Vec3 centerB) {
    const Real pi = Real(3.14159265358979323846);
    Real d = length(centerA - centerB);
    Real sum = radiusA + radiusB;
    if (d >= sum) return 0;
    if (d <= std::fabs(radiusA - radiusB)) {
        Real r = std::min(radiusA, radiusB);
        return Real(4) / Real(3) * pi * r * r * r;
    }
    Real diff = radiusA - radiusB;
    return pi * (sum - d) * (sum - d) * (d * d + 2 * d * sum - 3 * diff * diff) / (12 * d);
}

}  // namespace cs
