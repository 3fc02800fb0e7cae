// Per-element geometry of feature pairs: the math of [PEG] section 4, written once for the CPU
// and the CUDA backend (gpu/gpu_collision.cu reaches it through shape_pair_hd.h).
//
// Everything here is CS_HD inline over a PolytopeView: plain pointers to a polytope whose
// vertices, face planes and edge tangents are already in the world frame (see world_polytope.h
// for the CPU scratch that fills one). No std containers, no allocation, no virtual calls.
//
// Used terms ([PEG] section 4, eqs. 25-32):
//   eta_f        outward unit normal of face f, plane dot(eta_f, x) = offset_f
//   e = v_h - v_t     edge vector; t_k (k = 0, 1) unit tangent in the k-th adjacent face,
//                     perpendicular to e, pointing into that face (eq. 25)
//   psi          signed gap along the contact normal n, n pointing from body B to body A
//   APPL         applicability score: >= 0 for the classical test, accepted when >= -eps_theta
//   normal cone of an edge: directions n perpendicular to e with dot(n, t_k) <= 0, k = 0, 1
#pragma once

#include "engine/core/math.h"
#include "engine/geometry/polytope.h"

namespace cs {

// "Infinity" for running minima and maxima, finite in float builds too (CS_REAL_FLOAT).
constexpr Real kHuge = Real(1e30);

// A polytope in the world frame as plain arrays (same layout as ConvexPolytope).
struct PolytopeView {
    const Vec3* vertices;
    const PolytopeEdge* edges;
    const PolytopeFace* faces;
    const int* faceVertices;
    const int* faceEdges;
    const int* vertexEdgeStart;
    const int* vertexEdges;
    int vertexCount, edgeCount, faceCount;
    Vec3 centroid;
    Real boundingRadius;
};

// ---- vertex-face ----------------------------------------------------------------------------

// Vertex-face gap: psi = eta_f . v - offset_f, the signed distance of v from the face plane.
CS_HD Real vertexFaceGap(Vec3 v, const PolytopeFace& f) { return dot(f.normal, v) - f.offset; }

// How far the projection of p onto face f lies outside the face polygon, measured in the
// plane: max over the face's sides of dot(p - a_side, -t_k), where -t_k is the side's outward
// in-plane normal. <= 0 inside (the negative of the distance to the nearest side), > 0 outside.
// This is the position half of vertex-face feasibility ([PEG] section 4, "feasibility").
CS_HD Real faceRegionExcess(const PolytopeView& P, int f, Vec3 p) {
    const PolytopeFace& face = P.faces[f];
    Real worst = -kHuge;
    for (int i = 0; i < face.vertexCount; ++i) {
        const PolytopeEdge& e = P.edges[P.faceEdges[face.firstEdge + i]];
        Vec3 outward = e.face[0] == f ? -e.t[0] : -e.t[1];
        Real d = dot(p - P.vertices[e.tail], outward);
        worst = d > worst ? d : worst;
    }
    return worst;
}

// Applicability of vertex v of P against a feature of the other body with outward normal n
// (n pointing from the other body towards v): APPL = min over neighbours w of v of
// n . (w - v) / |w - v| ([PEG] section 4, the vertex-edge / vertex-face test). Negative when an
// edge leaving v points into the other body, i.e. a neighbour would touch first.
CS_HD Real vertexApplicability(const PolytopeView& P, int v, Vec3 n) {
    Real score = Real(1);
    Vec3 pv = P.vertices[v];
    for (int k = P.vertexEdgeStart[v]; k < P.vertexEdgeStart[v + 1]; ++k) {
        const PolytopeEdge& e = P.edges[P.vertexEdges[k]];
        Vec3 w = P.vertices[e.tail == v ? e.head : e.tail];
        Real s = dot(n, normalize(w - pv));
        score = s < score ? s : score;
    }
    return score;
}

// ---- edges ----------------------------------------------------------------------------------

// Score of direction n (perpendicular to the edge) against the edge's outward normal cone:
// min(-n . t_0, -n . t_1) >= 0 inside the cone, negative outside.
CS_HD Real edgeNormalConeScore(const PolytopeEdge& e, Vec3 n) {
    Real s0 = -dot(n, e.t[0]), s1 = -dot(n, e.t[1]);
    return s0 < s1 ? s0 : s1;
}

// Edge-edge applicability ([PEG] eqs. 31-32) for a normal n pointing from B to A: n must lie
// in the normal cone of e_b and -n in the normal cone of e_a. The sign of n = e_a x e_b is not
// known in advance; the caller evaluates both signs and keeps the better.
CS_HD Real edgeEdgeApplicability(const PolytopeEdge& ea, const PolytopeEdge& eb, Vec3 n) {
    Real sa = edgeNormalConeScore(ea, -n), sb = edgeNormalConeScore(eb, n);
    return sa < sb ? sa : sb;
}

// Closest points of the infinite lines pa + s ea and pb + t eb. Returns false when the lines
// are parallel within sinTol (|ea x eb| <= sinTol |ea||eb|); s and t are then untouched.
CS_HD bool edgeEdgeClosest(Vec3 pa, Vec3 ea, Vec3 pb, Vec3 eb, Real sinTol, Real& s, Real& t) {
    Vec3 c = cross(ea, eb);
    Real cc = lengthSq(c);
    if (cc <= sinTol * sinTol * lengthSq(ea) * lengthSq(eb)) return false;
    // Solve pa + s ea - (pb + t eb) perpendicular to ea and eb (Cramer's rule via cross products).
    Vec3 r = pb - pa;
    s = dot(cross(r, eb), c) / cc;
    t = dot(cross(r, ea), c) / cc;
    return true;
}

// Parameter of the point of segment a + u (b - a), u in [0, 1], closest to p.
CS_HD Real closestOnSegment(Vec3 p, Vec3 a, Vec3 b) {
    Vec3 e = b - a;
    Real ee = lengthSq(e);
    if (ee <= Real(0)) return Real(0);
    Real u = dot(p - a, e) / ee;
    return u < Real(0) ? Real(0) : (u > Real(1) ? Real(1) : u);
}

// Exact closest points of two segments p0 + s d0 and q0 + t d1, s, t in [0, 1]; returns the
// squared distance. Handles parallel and degenerate segments (classic clamped solution).
CS_HD Real segmentSegmentClosest(Vec3 p0, Vec3 p1, Vec3 q0, Vec3 q1, Real& s, Real& t) {
    Vec3 d0 = p1 - p0, d1 = q1 - q0, r = p0 - q0;
    Real a = dot(d0, d0), e = dot(d1, d1), f = dot(d1, r);
    if (a <= Real(0) && e <= Real(0)) {
        s = t = 0;
    } else if (a <= Real(0)) {
        s = 0;
        t = closestOnSegment(p0, q0, q1);
    } else {
        Real c = dot(d0, r);
        if (e <= Real(0)) {
            t = 0;
            s = closestOnSegment(q0, p0, p1);
        } else {
            Real b = dot(d0, d1), denom = a * e - b * b;
            s = denom > Real(0) ? (b * f - c * e) / denom : Real(0);
            s = s < Real(0) ? Real(0) : (s > Real(1) ? Real(1) : s);
            t = (b * s + f) / e;
            if (t < Real(0)) {
                t = 0;
                s = -c / a;
                s = s < Real(0) ? Real(0) : (s > Real(1) ? Real(1) : s);
            } else if (t > Real(1)) {
                t = 1;
                s = (b - c) / a;
                s = s < Real(0) ? Real(0) : (s > Real(1) ? Real(1) : s);
            }
        }
    }
    return lengthSq((p0 + s * d0) - (q0 + t * d1));
}

// ---- point against a face polygon -----------------------------------------------------------

// Which feature of a face polygon holds the closest point: the face itself (projection inside),
// one of its edges (interior of a side) or one of its vertices.
struct PolygonClosest {
    Vec3 point;
    Real distSq;
    int kind;    // 0 vertex, 1 edge, 2 face (the FeatureKind values)
    int index;   // vertex, edge or face index in the polytope
};

// Closest point of face polygon f to p (exact, any p). Endpoint hits of a side are reported as
// vertices, so the feature is the Voronoi feature of the polygon.
CS_HD PolygonClosest pointPolygonClosest(const PolytopeView& P, int f, Vec3 p) {
    const PolytopeFace& face = P.faces[f];
    PolygonClosest best;
    if (faceRegionExcess(P, f, p) <= Real(0)) {
        Real g = vertexFaceGap(p, face);
        best.point = p - g * face.normal;
        best.distSq = g * g;
        best.kind = 2;
        best.index = f;
        return best;
    }
    best.distSq = kHuge;
    best.kind = 0;
    best.index = -1;
    best.point = p;
    for (int i = 0; i < face.vertexCount; ++i) {
        int ei = P.faceEdges[face.firstEdge + i];
        const PolytopeEdge& e = P.edges[ei];
        Vec3 a = P.vertices[e.tail], b = P.vertices[e.head];
        Real u = closestOnSegment(p, a, b);
        Vec3 q = a + u * (b - a);
        Real d = lengthSq(p - q);
        if (d < best.distSq) {
            best.distSq = d;
            best.point = q;
            if (u <= Real(0)) { best.kind = 0; best.index = e.tail; }
            else if (u >= Real(1)) { best.kind = 0; best.index = e.head; }
            else { best.kind = 1; best.index = ei; }
        }
    }
    return best;
}

// Closest point of the polytope's surface to p. Outside (some face gap > 0) it is the exact
// Euclidean closest point; only faces with positive gap can hold it. Inside, it is the
// projection onto the face of largest (least negative) gap, and distSq holds that gap squared.
// maxGap returns the largest face gap: > 0 outside, <= 0 inside.
CS_HD PolygonClosest pointPolytopeClosest(const PolytopeView& P, Vec3 p, Real& maxGap) {
    maxGap = -kHuge;
    int maxFace = 0;
    for (int f = 0; f < P.faceCount; ++f) {
        Real g = vertexFaceGap(p, P.faces[f]);
        if (g > maxGap) { maxGap = g; maxFace = f; }
    }
    if (maxGap <= Real(0)) {
        PolygonClosest c;
        c.point = p - maxGap * P.faces[maxFace].normal;
        c.distSq = maxGap * maxGap;
        c.kind = 2;
        c.index = maxFace;
        return c;
    }
    PolygonClosest best;
    best.distSq = kHuge;
    for (int f = 0; f < P.faceCount; ++f) {
        if (vertexFaceGap(p, P.faces[f]) <= Real(0)) continue;
        PolygonClosest c = pointPolygonClosest(P, f, p);
        if (c.distSq < best.distSq) best = c;
    }
    return best;
}

// Whether edges e_a (faces with normals a, b) and e_b (normals c', d') span a face of the
// Minkowski difference A - B: their arcs on the Gauss map, (a, b) and (c, d) = (-c', -d'),
// intersect (Gregorius, "The separating axis test between convex polyhedra", GDC 2013).
// Only such pairs can give a separating axis that the face normals do not already give.
CS_HD bool isMinkowskiFace(Vec3 a, Vec3 b, Vec3 c, Vec3 d) {
    const Vec3 bxa = cross(b, a), dxc = cross(d, c);
    const Real cba = dot(c, bxa), dba = dot(d, bxa), adc = dot(a, dxc), bdc = dot(b, dxc);
    return cba * dba < Real(0) && adc * bdc < Real(0) && cba * bdc > Real(0);
}

// Separation of the two polytopes along unit axis n (pointing from B to A):
// min_A n.x - max_B n.x. Positive: a separating axis with that clearance.
CS_HD Real axisSeparation(const PolytopeView& A, const PolytopeView& B, Vec3 n) {
    Real minA = kHuge, maxB = -kHuge;
    for (int i = 0; i < A.vertexCount; ++i) {
        Real d = dot(n, A.vertices[i]);
        minA = d < minA ? d : minA;
    }
    for (int i = 0; i < B.vertexCount; ++i) {
        Real d = dot(n, B.vertices[i]);
        maxB = d > maxB ? d : maxB;
    }
    return minA - maxB;
}

}  // namespace cs
