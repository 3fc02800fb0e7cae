// Box-box contacts for the relaxation methods: the separating axis test and one face clip per
// pair (box_contacts.h).
#include "engine/collision/box_contacts.h"

#include <cmath>

namespace cs {

BoxFaces detectBox(const ConvexPolytope& p) {
    BoxFaces b;
    if (p.vertexCount() != 8 || p.faceCount() != 6 || p.edgeCount() != 12) return b;
    int axes = 0;
    for (int f = 0; f < 6; ++f) {
        if (p.faces[f].vertexCount != 4) return BoxFaces{};
        for (int g = f + 1; g < 6; ++g)
            if (dot(p.faces[f].normal, p.faces[g].normal) < Real(-1) + Real(1e-12)) {
                if (axes == 3) return BoxFaces{};
                b.face[axes] = f;
                b.opposite[axes] = g;
                b.half[axes] = Real(0.5) * (p.faces[f].offset + p.faces[g].offset);
                ++axes;
            }
    }
    if (axes != 3) return BoxFaces{};
    Real size = 0;
    for (int i = 0; i < 3; ++i) {
        if (!(b.half[i] > 0)) return BoxFaces{};
        size = b.half[i] > size ? b.half[i] : size;
        for (int j = i + 1; j < 3; ++j)
            if (std::fabs(dot(p.faces[b.face[i]].normal, p.faces[b.face[j]].normal)) > Real(1e-9)) return BoxFaces{};
    }
    const Real tol = Real(1e-9) * size;
    for (int i = 0; i < 3; ++i) {
        // The centroid halfway between the two planes, every vertex on one of them.
        const Vec3 n = p.faces[b.face[i]].normal;
        const Real mid = Real(0.5) * (p.faces[b.face[i]].offset - p.faces[b.opposite[i]].offset);
        if (std::fabs(dot(n, p.centroid) - mid) > tol) return BoxFaces{};
        for (const Vec3& v : p.vertices)
            if (std::fabs(std::fabs(dot(n, v - p.centroid)) - b.half[i]) > tol) return BoxFaces{};
    }
    b.box = true;
    return b;
}

namespace {

// A point of the clipped polygon and what it is: an incident vertex, an incident edge crossing a
// reference side, or a reference corner; `along`: what the polygon's side from it to the next
// point runs along (an incident edge, or a reference side after a clip).
struct ClipPoint {
    Vec3 p;
    uint32_t incident, reference;   // feature ids on the incident and the reference box
    PairType type;
    bool alongReference;            // the side to the next point: a reference side (else an incident edge)
    int along;                      // its edge index
};

constexpr int kMaxClip = kBoxMaxPoints;

// The vertex edges e and f of P share (-1: none).
int sharedVertex(const PolytopeView& P, int e, int f) {
    const PolytopeEdge& a = P.edges[e];
    const PolytopeEdge& b = P.edges[f];
    if (a.tail == b.tail || a.tail == b.head) return a.tail;
    if (a.head == b.tail || a.head == b.head) return a.head;
    return -1;
}

// Sutherland-Hodgman against one side of the reference face (plane through o, outward m):
// the points with dot(p - o, m) <= 0 stay. A point on the plane stays as it is (no crossing is
// made there), so no point is listed twice. side: the reference edge. (Keeping the incident
// vertices up to regionWidening outside, as the vertex-face test widens a face, was tried: the
// default pyramid's top drift came out 1% lower but its overlap 3% higher and the five-box stack
// of tests/test_soft_step.cpp slipped 0.17 mm on landing, against 0.085 mm clipped exactly and
// 0.044 mm with the feature pairs.)
int clipSide(const ClipPoint* in, int n, Vec3 o, Vec3 m, const PolytopeView& R, int side,
             uint32_t incidentFace, ClipPoint* out) {
    int k = 0;
    for (int i = 0; i < n; ++i) {
        const ClipPoint& P = in[i];
        const ClipPoint& Q = in[(i + 1) % n];
        const Real dp = dot(P.p - o, m), dq = dot(Q.p - o, m);
        const bool inP = dp <= 0, inQ = dq <= 0;
        if (k + 2 > kMaxClip) break;   // cannot happen for two boxes (at most 8 corners); a guard
        if (inP) {
            out[k] = P;
            if (!inQ && dp == 0) {   // leaves along the plane from P
                out[k].alongReference = true;
                out[k].along = side;
            }
            ++k;
        }
        if ((inP && !inQ && dp < 0) || (!inP && inQ && dq < 0)) {
            ClipPoint X;
            X.p = P.p + (dp / (dp - dq)) * (Q.p - P.p);
            if (P.alongReference) {   // two reference sides meet: a reference corner
                const int corner = sharedVertex(R, P.along, side);
                X.incident = incidentFace;
                X.reference = makeFeatureId(FeatureKind::Vertex, corner < 0 ? 0 : corner);
                X.type = PairType::VertexFace;
            } else {
                X.incident = makeFeatureId(FeatureKind::Edge, P.along);
                X.reference = makeFeatureId(FeatureKind::Edge, side);
                X.type = PairType::EdgeEdge;
            }
            // Leaving: the polygon goes on along the plane; entering: along P-Q's own side.
            X.alongReference = inP ? true : P.alongReference;
            X.along = inP ? side : P.along;
            out[k++] = X;
        }
    }
    return k;
}

// Face case: R's face fr (outward normal towards I) against I's face most opposed to it.
void clipFaces(const PolytopeView& R, int fr, const PolytopeView& I, const BoxFaces& bi,
               bool referenceIsA, const NarrowPhaseSettings& s, ContactSink& sink) {
    const PolytopeFace& ref = R.faces[fr];
    const Vec3 nr = ref.normal;
    int fi = -1;
    Real most = -1;
    for (int k = 0; k < 3; ++k) {
        const Real c = dot(I.faces[bi.face[k]].normal, nr);
        const Real a = std::fabs(c);
        if (a > most) {
            most = a;
            fi = c > 0 ? bi.opposite[k] : bi.face[k];
        }
    }
    const PolytopeFace& inc = I.faces[fi];
    ClipPoint poly[2][kMaxClip];
    int n = inc.vertexCount;
    for (int i = 0; i < n; ++i) {
        const int v = I.faceVertices[inc.firstVertex + i];
        poly[0][i] = ClipPoint{I.vertices[v], makeFeatureId(FeatureKind::Vertex, v),
                               makeFeatureId(FeatureKind::Face, fr), PairType::VertexFace, false,
                               I.faceEdges[inc.firstEdge + i]};
    }
    const uint32_t incidentFace = makeFeatureId(FeatureKind::Face, fi);
    int cur = 0;
    for (int i = 0; i < ref.vertexCount && n > 0; ++i) {
        const int e = R.faceEdges[ref.firstEdge + i];
        const PolytopeEdge& edge = R.edges[e];
        const Vec3 outward = edge.face[0] == fr ? -edge.t[0] : -edge.t[1];
        n = clipSide(poly[cur], n, R.vertices[edge.tail], outward, R, e, incidentFace, poly[1 - cur]);
        cur = 1 - cur;
    }
    // Points within the margin, the polygon walked backwards: the soft step solves a manifold's
    // points in this order, and its resting overlaps depend on it (default pyramid 1.95 mm
    // walked either way, 2.1 mm from the second point, 2.3 mm sorted by key; 385 pyramid 0.47 mm
    // backwards, 0.48 forwards: docs/relaxation.md).
    for (int k = n - 1; k >= 0; --k) {
        const ClipPoint& P = poly[cur][k];
        const Real gap = dot(nr, P.p) - ref.offset;
        if (gap > s.margin) continue;
        const Vec3 onRef = P.p - gap * nr;
        sink.push(referenceIsA ? makePotentialContact(P.type, P.reference, P.incident, onRef, P.p, -nr, gap)
                               : makePotentialContact(P.type, P.incident, P.reference, P.p, onRef, nr, gap));
    }
}

// The edge of P parallel to axis whose midpoint lies farthest along dir.
int supportEdge(const PolytopeView& P, Vec3 axis, Vec3 dir) {
    int best = -1;
    Real most = -kHuge;
    for (int e = 0; e < P.edgeCount; ++e) {
        const Vec3 t = P.vertices[P.edges[e].tail], h = P.vertices[P.edges[e].head];
        if (std::fabs(dot(h - t, axis)) < Real(0.5) * length(h - t)) continue;
        const Real d = dot(t + h, dir);
        if (d > most) most = d, best = e;
    }
    return best;
}

}  // namespace

bool collideBoxes(const PolytopeView& A, const BoxFaces& ba, const PolytopeView& B, const BoxFaces& bb,
                  const NarrowPhaseSettings& s, Real close, ContactSink& sink) {
    Vec3 a[3], b[3];
    for (int i = 0; i < 3; ++i) {
        a[i] = A.faces[ba.face[i]].normal;
        b[i] = B.faces[bb.face[i]].normal;
    }
    const Vec3 d = B.centroid - A.centroid;   // A towards B
    Real absR[3][3];   // |a_i . b_j|
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) absR[i][j] = std::fabs(dot(a[i], b[j]));
    // Face axes of A, then of B: separation |t| - (A's reach) - (B's reach) along the axis.
    Real sepA = -kHuge, sepB = -kHuge;
    int axisA = 0, axisB = 0;
    for (int i = 0; i < 3; ++i) {
        const Real sep = std::fabs(dot(a[i], d)) - ba.half[i] -
                         (bb.half[0] * absR[i][0] + bb.half[1] * absR[i][1] + bb.half[2] * absR[i][2]);
        if (sep > sepA) sepA = sep, axisA = i;
    }
    for (int j = 0; j < 3; ++j) {
        const Real sep = std::fabs(dot(b[j], d)) - bb.half[j] -
                         (ba.half[0] * absR[0][j] + ba.half[1] * absR[1][j] + ba.half[2] * absR[2][j]);
        if (sep > sepB) sepB = sep, axisB = j;
    }
    const Real faceSep = sepA > sepB ? sepA : sepB;
    if (faceSep > close) return false;
    // Edge axes a_i x b_j (parallel pairs give no axis the face axes do not).
    Real sepE = -kHuge;
    Vec3 edgeAxis{0, 0, 0};
    int edgeI = 0, edgeJ = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            Vec3 u = cross(a[i], b[j]);
            const Real len = length(u);
            if (len < Real(1e-6)) continue;
            u = (Real(1) / len) * u;
            Real reach = 0;
            for (int k = 0; k < 3; ++k)
                reach += ba.half[k] * std::fabs(dot(u, a[k])) + bb.half[k] * std::fabs(dot(u, b[k]));
            const Real sep = std::fabs(dot(u, d)) - reach;
            if (sep > sepE) sepE = sep, edgeAxis = u, edgeI = i, edgeJ = j;
        }
    if (sepE > close) return false;

    if (sepE > faceSep + kBoxEdgeTolerance) {
        // Edge case: one point between the support edges, normal from B to A.
        const Vec3 n = dot(edgeAxis, d) > 0 ? -edgeAxis : edgeAxis;
        const int ea = supportEdge(A, a[edgeI], -n), eb = supportEdge(B, b[edgeJ], n);
        if (ea < 0 || eb < 0) return true;
        const Vec3 a0 = A.vertices[A.edges[ea].tail], a1 = A.vertices[A.edges[ea].head];
        const Vec3 b0 = B.vertices[B.edges[eb].tail], b1 = B.vertices[B.edges[eb].head];
        Real u, w;
        segmentSegmentClosest(a0, a1, b0, b1, u, w);
        const Vec3 qa = a0 + u * (a1 - a0), qb = b0 + w * (b1 - b0);
        const Real gap = dot(qa - qb, n);
        if (gap <= s.margin)
            sink.push(makePotentialContact(PairType::EdgeEdge, makeFeatureId(FeatureKind::Edge, ea),
                                           makeFeatureId(FeatureKind::Edge, eb), qa, qb, n, gap));
        return true;
    }
    // Face case: A's face unless B's separates by more (a tolerance keeps the choice while the
    // two are equal, as for boxes resting face to face).
    const Real kFlip = Real(0.1) * kBoxEdgeTolerance;
    if (sepB > sepA + kFlip) {
        const int f = dot(b[axisB], d) > 0 ? bb.opposite[axisB] : bb.face[axisB];   // B's face towards A
        clipFaces(B, f, A, ba, false, s, sink);
    } else {
        const int f = dot(a[axisA], d) > 0 ? ba.face[axisA] : ba.opposite[axisA];   // A's face towards B
        clipFaces(A, f, B, bb, true, s, sink);
    }
    return true;
}

}  // namespace cs
