// Exact signed distance (see distance.h for why these minima are exact).
#include "engine/collision/distance.h"

#include "engine/collision/world_polytope.h"

namespace cs {

namespace {

struct Witness {
    Vec3 a{0, 0, 0}, b{0, 0, 0};
    Real edgeDistSq = kHuge;   // segment distance of the edge pair behind an edge axis
};

const Real kTie = Real(1e-12);

// Largest separation over the SAT axes: face normals of both and the cross products of the edge
// pairs that span a face of the Minkowski difference (the other edge pairs cannot do better).
// sep(n) = min_A n.x - max_B n.x for n pointing from B to A.
Real satMaxSeparation(const PolytopeView& A, const PolytopeView& B, Witness& w) {
    Real best = -kHuge;
    // Faces of B: n = eta_f, sep = min over A's vertices of the plane gap.
    for (int f = 0; f < B.faceCount; ++f) {
        int arg = 0;
        Real g = kHuge;
        for (int v = 0; v < A.vertexCount; ++v) {
            Real d = vertexFaceGap(A.vertices[v], B.faces[f]);
            if (d < g) { g = d; arg = v; }
        }
        if (g > best) {
            best = g;
            w.edgeDistSq = kHuge;
            w.a = A.vertices[arg];
            w.b = w.a - g * B.faces[f].normal;
        }
    }
    // Faces of A: n = -eta_f, sep = min over B's vertices of the plane gap of A's face.
    for (int f = 0; f < A.faceCount; ++f) {
        int arg = 0;
        Real g = kHuge;
        for (int v = 0; v < B.vertexCount; ++v) {
            Real d = vertexFaceGap(B.vertices[v], A.faces[f]);
            if (d < g) { g = d; arg = v; }
        }
        if (g > best) {
            best = g;
            w.edgeDistSq = kHuge;
            w.b = B.vertices[arg];
            w.a = w.b - g * A.faces[f].normal;
        }
    }
    // Edge pairs spanning a Minkowski face: n = +-(e_a x e_b)/|e_a x e_b|, the better sign.
    for (int i = 0; i < A.edgeCount; ++i) {
        const PolytopeEdge& ea = A.edges[i];
        const Vec3 pa = A.vertices[ea.tail], da = A.vertices[ea.head] - pa;
        const Vec3 a0 = A.faces[ea.face[0]].normal, a1 = A.faces[ea.face[1]].normal;
        for (int j = 0; j < B.edgeCount; ++j) {
            const PolytopeEdge& eb = B.edges[j];
            if (!isMinkowskiFace(a0, a1, -B.faces[eb.face[0]].normal, -B.faces[eb.face[1]].normal)) continue;
            const Vec3 pb = B.vertices[eb.tail], db = B.vertices[eb.head] - pb;
            Vec3 c = cross(da, db);
            if (lengthSq(c) <= Real(1e-20) * lengthSq(da) * lengthSq(db)) continue;
            Vec3 n = normalize(c);
            Real sp = axisSeparation(A, B, n), sm = axisSeparation(A, B, -n);
            Real g = sp > sm ? sp : sm;
            // Parallel edges of a box share an axis: on a tie keep the pair of edges that are
            // closest, the ones that realize the separation, for the witnesses.
            if (g < best - kTie) continue;
            Real u, t;
            Real d2 = segmentSegmentClosest(pa, pa + da, pb, pb + db, u, t);
            if (g > best + kTie || d2 < w.edgeDistSq) {
                best = g > best ? g : best;
                w.a = pa + u * da;
                w.b = pb + t * db;
                w.edgeDistSq = d2;
            }
        }
    }
    return best;
}

// Exact Euclidean distance of separated polytopes.
Real separatedDistance(const PolytopeView& A, const PolytopeView& B, Witness& w) {
    Real best = kHuge;
    for (int v = 0; v < A.vertexCount; ++v) {
        Real maxGap;
        PolygonClosest c = pointPolytopeClosest(B, A.vertices[v], maxGap);
        if (maxGap > Real(0) && c.distSq < best) {
            best = c.distSq;
            w.a = A.vertices[v];
            w.b = c.point;
        }
    }
    for (int v = 0; v < B.vertexCount; ++v) {
        Real maxGap;
        PolygonClosest c = pointPolytopeClosest(A, B.vertices[v], maxGap);
        if (maxGap > Real(0) && c.distSq < best) {
            best = c.distSq;
            w.a = c.point;
            w.b = B.vertices[v];
        }
    }
    for (int i = 0; i < A.edgeCount; ++i) {
        const Vec3 a0 = A.vertices[A.edges[i].tail], a1 = A.vertices[A.edges[i].head];
        for (int j = 0; j < B.edgeCount; ++j) {
            const Vec3 b0 = B.vertices[B.edges[j].tail], b1 = B.vertices[B.edges[j].head];
            Real u, t;
            Real d = segmentSegmentClosest(a0, a1, b0, b1, u, t);
            if (d < best) {
                best = d;
                w.a = a0 + u * (a1 - a0);
                w.b = b0 + t * (b1 - b0);
            }
        }
    }
    return std::sqrt(best);
}

void setWitness(const Witness& w, Vec3* witnessA, Vec3* witnessB) {
    if (witnessA) *witnessA = w.a;
    if (witnessB) *witnessB = w.b;
}

}  // namespace

Real signedDistance(const ConvexPolytope& a, const Transform& Xa, const ConvexPolytope& b,
                    const Transform& Xb, Vec3* witnessA, Vec3* witnessB) {
    thread_local WorldPolytope wa, wb;
    wa.assign(a, Xa);
    wb.assign(b, Xb);
    const PolytopeView A = wa.view(), B = wb.view();
    Witness w;
    const Real sep = satMaxSeparation(A, B, w);
    if (sep <= Real(0)) {
        setWitness(w, witnessA, witnessB);
        return sep;   // minus the penetration depth (0 when touching)
    }
    const Real d = separatedDistance(A, B, w);
    setWitness(w, witnessA, witnessB);
    return d;
}

Real signedDistance(Vec3 center, Real radius, const ConvexPolytope& b, const Transform& Xb,
                    Vec3* witnessA, Vec3* witnessB) {
    thread_local WorldPolytope wb;
    wb.assign(b, Xb);
    const PolytopeView B = wb.view();
    Real maxGap;
    PolygonClosest c = pointPolytopeClosest(B, center, maxGap);
    Real dist;
    Vec3 m;   // unit, from the polytope towards the centre
    if (maxGap <= Real(0)) {
        dist = maxGap;
        m = B.faces[c.index].normal;
    } else {
        dist = std::sqrt(c.distSq);
        m = c.kind == 2 ? B.faces[c.index].normal : (center - c.point) / dist;
    }
    if (witnessA) *witnessA = center - radius * m;
    if (witnessB) *witnessB = c.point;
    return dist - radius;
}

Real signedDistance(Vec3 centerA, Real radiusA, Vec3 centerB, Real radiusB, Vec3* witnessA,
                    Vec3* witnessB) {
    const Vec3 d = centerA - centerB;
    const Real dist = length(d);
    const Vec3 n = dist > Real(1e-12) ? d / dist : Vec3{0, 0, 1};
    if (witnessA) *witnessA = centerA - radiusA * n;
    if (witnessB) *witnessB = centerB + radiusB * n;
    return dist - radiusA - radiusB;
}

}  // namespace cs
