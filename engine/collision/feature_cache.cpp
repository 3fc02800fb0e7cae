// Narrow-phase reuse: candidate feature pairs and the exact tests run on them (feature_cache.h
// derives the bound).
#include "engine/collision/feature_cache.h"

#include <cmath>

namespace cs {

namespace {

// Rounding room on every comparison of the bound: the candidate tests and the current tests
// evaluate the same quantities in floating point, a few ulps apart.
Real padded(Real x) { return x * Real(1.000001) + Real(1e-12); }

// The angle of a unit quaternion's rotation, in [0, pi].
Real rotationAngle(Quat q) {
    const Real s = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    return Real(2) * std::atan2(s, std::fabs(q.w));
}

Real pointSegmentDistance(Vec3 p, Vec3 a, Vec3 b) {
    const Real u = closestOnSegment(p, a, b);
    return length(p - (a + u * (b - a)));
}

Real faceAxisSeparation(const PolytopeView& A, const PolytopeView& B) {
    const Real fa = faceSeparation(B, A), fb = faceSeparation(A, B);
    return fa > fb ? fa : fb;
}

}  // namespace

Real relativeMotion(const FeatureCacheEntry& e, const Transform& Xa, const Transform& Xb, Real& theta) {
    // Relative rotation of A in B's frame now against then: q = (qB^-1 qA)(qB0^-1 qA0)^-1.
    const Quat now = conjugate(Xb.rot) * Xa.rot, then = conjugate(e.poseB.rot) * e.poseA.rot;
    theta = rotationAngle(now * conjugate(then));
    const Vec3 ca = e.polytopeA->centroid, cb = e.polytopeB->centroid;
    // Each centroid in the other's frame, now and at P0.
    const Vec3 aInB = invTransformPoint(Xb, transformPoint(Xa, ca)) - invTransformPoint(e.poseB, transformPoint(e.poseA, ca));
    const Vec3 bInA = invTransformPoint(Xa, transformPoint(Xb, cb)) - invTransformPoint(e.poseA, transformPoint(e.poseB, cb));
    const Real da = length(aInB) + theta * e.polytopeA->boundingRadius;
    const Real db = length(bInA) + theta * e.polytopeB->boundingRadius;
    return da > db ? da : db;
}

bool candidatesHold(const FeatureCacheEntry& e, const ConvexPolytope& a, const ConvexPolytope& b,
                    const Transform& Xa, const Transform& Xb, const NarrowPhaseSettings& s, Real& delta) {
    if (e.polytopeA != &a || e.polytopeB != &b) return false;
    const NarrowPhaseSettings& c = e.candidateSettings;
    if (s.maxEdgeDepth != c.maxEdgeDepth || s.parallelSin != c.parallelSin || s.endpointTol != c.endpointTol ||
        s.hyperplane != c.hyperplane)
        return false;
    Real theta;
    delta = relativeMotion(e, Xa, Xb, theta);
    const Real d = padded(delta);
    return d <= e.slack && s.margin + d <= c.margin && s.regionWidening + d <= c.regionWidening &&
           s.faceWindow + 2 * d <= c.faceWindow && s.epsTheta + padded(theta) <= c.epsTheta;
}

void buildCandidates(const PolytopeView& A, const PolytopeView& B, const Transform& Xa, const Transform& Xb,
                     const NarrowPhaseSettings& s, Real slack, FeatureCacheEntry& e) {
    NarrowPhaseSettings c = s;
    c.margin += slack;
    c.regionWidening += slack;
    c.faceWindow += 2 * slack;
    const Real radius = A.boundingRadius > B.boundingRadius ? A.boundingRadius : B.boundingRadius;
    c.epsTheta += radius > 0 ? slack / radius : slack;
    e.poseA = Xa;
    e.poseB = Xb;
    e.candidateSettings = c;
    e.slack = slack;
    e.separation = faceAxisSeparation(A, B);
    e.candidates.clear();
    // Apart by more than C.margin (bounding spheres, or a face plane): apart by more than S.margin
    // after a motion within (*), where the full search lists nothing. No candidates.
    if (!boundsMayTouch(A.centroid, A.boundingRadius, B.centroid, B.boundingRadius, c.margin) ||
        separatedByFace(A, B, c.margin) || separatedByFace(B, A, c.margin))
        return;
    auto add = [&](CandidatePass pass, int first, int second) { e.candidates.push_back({pass, first, second}); };

    // Vertex-face: vertexFacePass with C (its tests relaxed; feature_cache.h).
    for (int side = 0; side < 2; ++side) {
        const PolytopeView& P = side == 0 ? A : B;
        const PolytopeView& Q = side == 0 ? B : A;
        const Real reach = (Q.boundingRadius + c.margin) * (Q.boundingRadius + c.margin);
        PotentialContact pc;
        for (int v = 0; v < P.vertexCount; ++v) {
            if (lengthSq(P.vertices[v] - Q.centroid) > reach) continue;
            const Real maxGap = maxFaceGap(Q, P.vertices[v]);
            if (maxGap > c.margin) continue;
            for (int f = 0; f < Q.faceCount; ++f)
                if (vertexFaceContact(P, v, Q, f, maxGap, side == 0, c, pc))
                    add(side == 0 ? CandidatePass::VertexFaceAB : CandidatePass::VertexFaceBA, v, f);
        }
    }
    // Edge-edge: segment distance <= max(C.margin, min(maxEdgeDepth + s, C.faceWindow - sep0)).
    Real deep = c.faceWindow - e.separation;
    if (deep > c.maxEdgeDepth + slack) deep = c.maxEdgeDepth + slack;
    const Real edgeReach = padded(deep > c.margin ? deep : c.margin);
    for (int i = 0; i < A.edgeCount; ++i) {
        const Vec3 a0 = A.vertices[A.edges[i].tail], a1 = A.vertices[A.edges[i].head];
        for (int j = 0; j < B.edgeCount; ++j) {
            Real u, w;
            const Vec3 b0 = B.vertices[B.edges[j].tail], b1 = B.vertices[B.edges[j].head];
            segmentSegmentClosest(a0, a1, b0, b1, u, w);
            if (length((a0 + u * (a1 - a0)) - (b0 + w * (b1 - b0))) <= edgeReach) add(CandidatePass::EdgeEdge, i, j);
        }
    }
    // Vertex-edge and vertex-vertex: distance <= C.margin.
    const Real near = padded(c.margin);
    for (int side = 0; side < 2; ++side) {
        const PolytopeView& P = side == 0 ? A : B;
        const PolytopeView& Q = side == 0 ? B : A;
        for (int v = 0; v < P.vertexCount; ++v)
            for (int j = 0; j < Q.edgeCount; ++j)
                if (pointSegmentDistance(P.vertices[v], Q.vertices[Q.edges[j].tail], Q.vertices[Q.edges[j].head]) <= near)
                    add(side == 0 ? CandidatePass::VertexEdgeAB : CandidatePass::VertexEdgeBA, v, j);
    }
    for (int v = 0; v < A.vertexCount; ++v)
        for (int u = 0; u < B.vertexCount; ++u)
            if (length(A.vertices[v] - B.vertices[u]) <= near) add(CandidatePass::VertexVertex, v, u);
}

void collideCandidates(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                       const FeatureCacheEntry& e, Real delta, ContactSink& sink) {
    // The full search's early outs, as collidePolytopePair.
    if (!boundsMayTouch(A.centroid, A.boundingRadius, B.centroid, B.boundingRadius, s.margin)) return;
    if (separatedByFace(A, B, s.margin) || separatedByFace(B, A, s.margin)) return;
    const FeatureCandidate* cand = e.candidates.data();
    const int n = (int)e.candidates.size();
    PotentialContact c;
    int k = 0;
    // Vertex-face, as vertexFacePass: the vertex's reach and maxGap filters, then the face test.
    for (int side = 0; side < 2; ++side) {
        const CandidatePass pass = side == 0 ? CandidatePass::VertexFaceAB : CandidatePass::VertexFaceBA;
        const PolytopeView& P = side == 0 ? A : B;
        const PolytopeView& Q = side == 0 ? B : A;
        const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
        for (int v = -1; k < n && cand[k].pass == pass; ++k) {
            const int cv = cand[k].first;
            if (cv == v) continue;
            v = cv;
            if (lengthSq(P.vertices[v] - Q.centroid) > reach) continue;
            const Real maxGap = maxFaceGap(Q, P.vertices[v]);
            if (maxGap > s.margin) continue;
            for (int j = k; j < n && cand[j].pass == pass && cand[j].first == v; ++j)
                if (vertexFaceContact(P, v, Q, cand[j].second, maxGap, side == 0, s, c)) sink.push(c);
        }
    }
    // Edge-edge, as edgeEdgePass: the face-axis floor once, at the first accepted pair.
    Real floor = -kHuge;
    bool haveFloor = false;
    for (; k < n && cand[k].pass == CandidatePass::EdgeEdge; ++k) {
        if (!edgeEdgeContact(A, cand[k].first, B, cand[k].second, s, c)) continue;
        if (!haveFloor) {
            floor = faceAxisSeparation(A, B) - s.faceWindow;
            haveFloor = true;
        }
        if (c.gap >= floor) sink.push(c);
    }
    // Vertex-edge, as vertexEdgePass, with its coverage rule.
    const Real far = s.margin * Real(1.000001);
    for (int side = 0; side < 2; ++side) {
        const CandidatePass pass = side == 0 ? CandidatePass::VertexEdgeAB : CandidatePass::VertexEdgeBA;
        const bool vertexIsA = side == 0;
        const PolytopeView& P = vertexIsA ? A : B;
        const PolytopeView& Q = vertexIsA ? B : A;
        const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
        int v = -1;
        bool skip = false;
        for (; k < n && cand[k].pass == pass; ++k) {
            if (cand[k].first != v) {
                v = cand[k].first;
                skip = lengthSq(P.vertices[v] - Q.centroid) > reach || maxFaceGap(Q, P.vertices[v]) > far;
            }
            const int j = cand[k].second;
            if (skip || !vertexEdgeContact(P, v, Q, j, vertexIsA, s, c)) continue;
            const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v);
            const uint32_t f0 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[0]);
            const uint32_t f1 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[1]);
            const bool covered = vertexIsA ? sink.has(fv, f0) || sink.has(fv, f1) : sink.has(f0, fv) || sink.has(f1, fv);
            if (!covered) sink.push(c);
        }
    }
    // Vertex-vertex, as vertexVertexPass.
    int v = -1;
    bool skip = false;
    for (; k < n && cand[k].pass == CandidatePass::VertexVertex; ++k) {
        if (cand[k].first != v) {
            v = cand[k].first;
            skip = maxFaceGap(B, A.vertices[v]) > far;
        }
        const int u = cand[k].second;
        if (skip || !vertexVertexContact(A, v, B, u, s, c)) continue;
        if (vertexCovered(B, u, c.featureA, true, sink) || vertexCovered(A, v, c.featureB, false, sink)) continue;
        sink.push(c);
    }
    // Deep overlap: returns at once in the full search when the face-axis separation is >= -margin.
    if (e.separation - padded(delta) < -s.margin) deepOverlapPass(A, B, s, sink);
    sortContactsByFeatures(sink);
}

}  // namespace cs
