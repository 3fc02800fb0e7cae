// Polytope-polytope potential contacts: the feature pairs of [PEG] section 5.2 (3D).
//
// Four passes over the world-frame polytopes, each a loop over a CS_HD test of
// feature_pairs.h (the same per-pair math a CUDA kernel would call):
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
};

uint64_t pairKey(uint32_t fa, uint32_t fb) { return (uint64_t(fa) << 32) | fb; }

bool emitted(const std::vector<PotentialContact>& out, size_t first, uint32_t fa, uint32_t fb) {
    for (size_t i = first; i < out.size(); ++i)
        if (out[i].featureA == fa && out[i].featureB == fb) return true;
    return false;
}

// Pass 1: vertices of P against faces of Q (vertexIsA: P is shape A).
void vertexFacePass(const PolytopeView& P, const PolytopeView& Q, bool vertexIsA,
                    const NarrowPhaseSettings& s, std::vector<PotentialContact>& out) {
    const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
    PotentialContact c;
    for (int v = 0; v < P.vertexCount; ++v) {
        if (lengthSq(P.vertices[v] - Q.centroid) > reach) continue;
        const Real maxGap = maxFaceGap(Q, P.vertices[v]);
        if (maxGap > s.margin) continue;   // farther than the margin from Q
        for (int f = 0; f < Q.faceCount; ++f)
            if (vertexFaceContact(P, v, Q, f, maxGap, vertexIsA, s, c)) out.push_back(c);
    }
}

// Pass 2: edge-edge.
void edgeEdgePass(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                  std::vector<PotentialContact>& out) {
    PotentialContact c;
    for (int i = 0; i < A.edgeCount; ++i)
        for (int j = 0; j < B.edgeCount; ++j)
            if (edgeEdgeContact(A, i, B, j, s, c)) out.push_back(c);
}

// Pass 3: vertices of P against edges of Q, where no vertex-face contact of that vertex with a
// face of the edge exists. first: where this pair's contacts start in out.
void vertexEdgePass(const PolytopeView& P, const PolytopeView& Q, bool vertexIsA,
                    const NarrowPhaseSettings& s, size_t first, std::vector<PotentialContact>& out) {
    const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
    PotentialContact c;
    for (int v = 0; v < P.vertexCount; ++v) {
        if (lengthSq(P.vertices[v] - Q.centroid) > reach) continue;
        const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v);
        for (int j = 0; j < Q.edgeCount; ++j) {
            if (!vertexEdgeContact(P, v, Q, j, vertexIsA, s, c)) continue;
            const uint32_t f0 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[0]);
            const uint32_t f1 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[1]);
            const bool covered = vertexIsA ? emitted(out, first, fv, f0) || emitted(out, first, fv, f1)
                                           : emitted(out, first, f0, fv) || emitted(out, first, f1, fv);
            if (!covered) out.push_back(c);
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

// Pass 4: vertex-vertex, tip to tip, where nothing above pairs either vertex with the
// features around the other.
void vertexVertexPass(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                      size_t first, std::vector<PotentialContact>& out) {
    PotentialContact c;
    for (int v = 0; v < A.vertexCount; ++v) {
        for (int u = 0; u < B.vertexCount; ++u) {
            if (!vertexVertexContact(A, v, B, u, s, c)) continue;
            if (vertexCovered(B, u, c.featureA, true, first, out)) continue;
            if (vertexCovered(A, v, c.featureB, false, first, out)) continue;
            out.push_back(c);
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
    const Real reach = a.boundingRadius + b.boundingRadius + s.margin;
    if (lengthSq(transformPoint(Xa, a.centroid) - transformPoint(Xb, b.centroid)) > reach * reach) return;
    thread_local PairScratch scratch;
    scratch.a.assign(a, Xa);
    scratch.b.assign(b, Xb);
    const PolytopeView A = scratch.a.view(), B = scratch.b.view();
    if (separatedByFace(A, B, s.margin) || separatedByFace(B, A, s.margin)) return;

    const size_t first = out.size();
    vertexFacePass(A, B, true, s, out);
    vertexFacePass(B, A, false, s, out);
    edgeEdgePass(A, B, s, out);
    vertexEdgePass(A, B, true, s, first, out);
    vertexEdgePass(B, A, false, s, first, out);
    vertexVertexPass(A, B, s, first, out);

    std::sort(out.begin() + first, out.end(), [](const PotentialContact& x, const PotentialContact& y) {
        return pairKey(x.featureA, x.featureB) < pairKey(y.featureA, y.featureB);
    });
}

}  // namespace cs
