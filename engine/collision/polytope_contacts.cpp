// Polytope-polytope potential contacts: the feature pairs of [PEG] section 5.2 (3D).
//
// Four passes over the world-frame polytopes, each a loop over a CS_HD test of
// feature_geometry.h (the same per-pair math a CUDA kernel would call):
//   1. vertex(A)-face(B) and vertex(B)-face(A): plane gap, feasibility (face region widened),
//      applicability (eq. 28 relaxed by eps_theta; [PEG] section 4);
//   2. edge-edge: closest points interior to both edges, normal +-(e_a x e_b) oriented by the
//      edges' normal cones (tangents t_k, eqs. 25, 31-32);
//   3. vertex-edge, 4. vertex-vertex: Euclidean closest-feature contacts for the configurations
//      no vertex-face contact covers (a vertex beyond the widened faces of an edge or vertex).
// The conventions and the exact acceptance rules are in narrow_phase.h.
#include <algorithm>

#include "engine/collision/narrow_phase.h"
#include "engine/collision/world_polytope.h"

namespace cs {

namespace {

struct PairScratch {
    WorldPolytope a, b;
    std::vector<Real> gaps;
};

PotentialContact makeContact(PairType type, uint32_t fa, uint32_t fb, Vec3 pA, Vec3 pB, Vec3 n,
                             Real gap) {
    PotentialContact c;
    c.shapeA = c.shapeB = c.bodyA = c.bodyB = -1;
    c.featureA = fa;
    c.featureB = fb;
    c.type = type;
    c.pointA = pA;
    c.pointB = pB;
    c.normal = n;
    c.gap = gap;
    return c;
}

uint64_t pairKey(uint32_t fa, uint32_t fb) { return (uint64_t(fa) << 32) | fb; }

bool emitted(const std::vector<PotentialContact>& out, size_t first, uint32_t fa, uint32_t fb) {
    for (size_t i = first; i < out.size(); ++i)
        if (out[i].featureA == fa && out[i].featureB == fb) return true;
    return false;
}

Real sq(Real x) { return x * x; }

// Pass 1: vertices of P against faces of Q. vertexIsA: P is shape A (normal = eta_Q),
// otherwise P is B and the normal B->A is -eta_Q.
void vertexFacePass(const PolytopeView& P, const PolytopeView& Q, bool vertexIsA,
                    const NarrowPhaseSettings& s, std::vector<Real>& gaps,
                    std::vector<PotentialContact>& out) {
    gaps.resize(Q.faceCount);
    const Real reach = sq(Q.boundingRadius + s.margin);
    for (int v = 0; v < P.vertexCount; ++v) {
        const Vec3 p = P.vertices[v];
        if (lengthSq(p - Q.centroid) > reach) continue;
        // maxGap(v) >= dist(v, Q) for a vertex outside Q, and is minus its depth inside.
        Real maxGap = Real(-1e300);
        for (int f = 0; f < Q.faceCount; ++f) {
            gaps[f] = vertexFaceGap(p, Q.faces[f]);
            maxGap = gaps[f] > maxGap ? gaps[f] : maxGap;
        }
        if (maxGap > s.margin) continue;
        for (int f = 0; f < Q.faceCount; ++f) {
            const Real g = gaps[f];
            if (g > s.margin || g < maxGap - s.faceWindow) continue;
            if (faceRegionExcess(Q, f, p) > s.regionWidening) continue;     // feasibility
            const Vec3 eta = Q.faces[f].normal;
            if (vertexApplicability(P, v, eta) < -s.epsTheta) continue;     // applicability
            const Vec3 onFace = p - g * eta;
            if (vertexIsA)
                out.push_back(makeContact(PairType::VertexFace, makeFeatureId(FeatureKind::Vertex, v),
                                          makeFeatureId(FeatureKind::Face, f), p, onFace, eta, g));
            else
                out.push_back(makeContact(PairType::VertexFace, makeFeatureId(FeatureKind::Face, f),
                                          makeFeatureId(FeatureKind::Vertex, v), onFace, p, -eta, g));
        }
    }
}

// Pass 2: edge-edge.
void edgeEdgePass(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                  std::vector<PotentialContact>& out) {
    const Real lo = s.interiorTol, hi = Real(1) - s.interiorTol;
    for (int i = 0; i < A.edgeCount; ++i) {
        const PolytopeEdge& ea = A.edges[i];
        const Vec3 pa = A.vertices[ea.tail], da = A.vertices[ea.head] - pa;
        const Vec3 ma = pa + Real(0.5) * da;
        const Real ra = Real(0.5) * length(da);
        for (int j = 0; j < B.edgeCount; ++j) {
            const PolytopeEdge& eb = B.edges[j];
            const Vec3 pb = B.vertices[eb.tail], db = B.vertices[eb.head] - pb;
            const Real reach = ra + Real(0.5) * length(db) + s.margin + s.maxEdgeDepth;
            if (lengthSq(pb + Real(0.5) * db - ma) > reach * reach) continue;
            Real u, w;
            if (!edgeEdgeClosest(pa, da, pb, db, s.parallelSin, u, w)) continue;
            if (u <= lo || u >= hi || w <= lo || w >= hi) continue;
            // n = +-(e_a x e_b): keep the sign whose applicability is better (eqs. 31-32).
            Vec3 n = normalize(cross(da, db));
            Real score = edgeEdgeApplicability(ea, eb, n);
            Real flipped = edgeEdgeApplicability(ea, eb, -n);
            if (flipped > score) { n = -n; score = flipped; }
            if (score < -s.epsTheta) continue;
            const Vec3 qa = pa + u * da, qb = pb + w * db;
            const Real gap = dot(qa - qb, n);
            if (gap > s.margin || gap < -s.maxEdgeDepth) continue;
            out.push_back(makeContact(PairType::EdgeEdge, makeFeatureId(FeatureKind::Edge, i),
                                      makeFeatureId(FeatureKind::Edge, j), qa, qb, n, gap));
        }
    }
}

// Pass 3: vertices of P against edges of Q, where no vertex-face contact of that vertex with a
// face of the edge exists. first: where this pair's contacts start in out.
void vertexEdgePass(const PolytopeView& P, const PolytopeView& Q, bool vertexIsA,
                    const NarrowPhaseSettings& s, size_t first, std::vector<PotentialContact>& out) {
    const Real lo = s.interiorTol, hi = Real(1) - s.interiorTol;
    const Real tiny = Real(1e-12);
    const Real reach = sq(Q.boundingRadius + s.margin);
    for (int v = 0; v < P.vertexCount; ++v) {
        const Vec3 p = P.vertices[v];
        if (lengthSq(p - Q.centroid) > reach) continue;
        const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v);
        for (int j = 0; j < Q.edgeCount; ++j) {
            const PolytopeEdge& e = Q.edges[j];
            const Vec3 a = Q.vertices[e.tail], d = Q.vertices[e.head] - a;
            const Real u = dot(p - a, d) / lengthSq(d);
            if (u <= lo || u >= hi) continue;
            const Vec3 q = a + u * d;
            const Real dist = length(p - q);
            if (dist > s.margin || dist <= tiny) continue;
            const Vec3 m = (p - q) / dist;   // from the edge towards the vertex
            if (edgeNormalConeScore(e, m) < -s.epsTheta) continue;     // Voronoi region of e
            if (vertexApplicability(P, v, m) < -s.epsTheta) continue;
            const uint32_t fe = makeFeatureId(FeatureKind::Edge, j);
            const uint32_t f0 = makeFeatureId(FeatureKind::Face, e.face[0]);
            const uint32_t f1 = makeFeatureId(FeatureKind::Face, e.face[1]);
            if (vertexIsA) {
                if (emitted(out, first, fv, f0) || emitted(out, first, fv, f1)) continue;
                out.push_back(makeContact(PairType::VertexEdge, fv, fe, p, q, m, dist));
            } else {
                if (emitted(out, first, f0, fv) || emitted(out, first, f1, fv)) continue;
                out.push_back(makeContact(PairType::VertexEdge, fe, fv, q, p, -m, dist));
            }
        }
    }
}

// True when vertex fv of one side already has a contact with a face or edge around vertex u of
// the other polytope Q (vertexIsA: fv belongs to A).
bool vertexCovered(const PolytopeView& Q, int u, uint32_t fv, bool vertexIsA, size_t first,
                   const std::vector<PotentialContact>& out) {
    for (int k = Q.vertexEdgeStart[u]; k < Q.vertexEdgeStart[u + 1]; ++k) {
        const int j = Q.vertexEdges[k];
        const uint32_t ids[3] = {makeFeatureId(FeatureKind::Edge, j),
                                 makeFeatureId(FeatureKind::Face, Q.edges[j].face[0]),
                                 makeFeatureId(FeatureKind::Face, Q.edges[j].face[1])};
        for (uint32_t id : ids)
            if (vertexIsA ? emitted(out, first, fv, id) : emitted(out, first, id, fv)) return true;
    }
    return false;
}

// Pass 4: vertex-vertex, tip to tip.
void vertexVertexPass(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                      size_t first, std::vector<PotentialContact>& out) {
    const Real tiny = Real(1e-12);
    for (int v = 0; v < A.vertexCount; ++v) {
        const Vec3 pa = A.vertices[v];
        for (int u = 0; u < B.vertexCount; ++u) {
            const Vec3 pb = B.vertices[u];
            const Real dist = length(pa - pb);
            if (dist > s.margin || dist <= tiny) continue;
            const Vec3 n = (pa - pb) / dist;
            // n in the Voronoi region of u, -n in that of v (both relaxed).
            if (vertexApplicability(A, v, n) < -s.epsTheta) continue;
            if (vertexApplicability(B, u, -n) < -s.epsTheta) continue;
            const uint32_t fa = makeFeatureId(FeatureKind::Vertex, v);
            const uint32_t fb = makeFeatureId(FeatureKind::Vertex, u);
            if (vertexCovered(B, u, fa, true, first, out)) continue;
            if (vertexCovered(A, v, fb, false, first, out)) continue;
            out.push_back(makeContact(PairType::VertexVertex, fa, fb, pa, pb, n, dist));
        }
    }
}

// Cheap rejection: a face plane of either polytope with every vertex of the other beyond
// margin is a separating axis with clearance > margin, so no feature pair is within margin.
bool separatedByFace(const PolytopeView& P, const PolytopeView& Q, Real margin) {
    for (int f = 0; f < Q.faceCount; ++f) {
        bool all = true;
        for (int v = 0; v < P.vertexCount && all; ++v) all = vertexFaceGap(P.vertices[v], Q.faces[f]) > margin;
        if (all) return true;
    }
    return false;
}

}  // namespace

void collidePolytopes(const ConvexPolytope& a, const Transform& Xa, const ConvexPolytope& b,
                      const Transform& Xb, const NarrowPhaseSettings& s,
                      std::vector<PotentialContact>& out) {
    thread_local PairScratch scratch;
    scratch.a.assign(a, Xa);
    scratch.b.assign(b, Xb);
    const PolytopeView A = scratch.a.view(), B = scratch.b.view();
    const Real reach = A.boundingRadius + B.boundingRadius + s.margin;
    if (lengthSq(A.centroid - B.centroid) > reach * reach) return;
    if (separatedByFace(A, B, s.margin) || separatedByFace(B, A, s.margin)) return;

    const size_t first = out.size();
    vertexFacePass(A, B, true, s, scratch.gaps, out);
    vertexFacePass(B, A, false, s, scratch.gaps, out);
    edgeEdgePass(A, B, s, out);
    vertexEdgePass(A, B, true, s, first, out);
    vertexEdgePass(B, A, false, s, first, out);
    vertexVertexPass(A, B, s, first, out);

    std::sort(out.begin() + first, out.end(), [](const PotentialContact& x, const PotentialContact& y) {
        return pairKey(x.featureA, x.featureB) < pairKey(y.featureA, y.featureB);
    });
}

}  // namespace cs
