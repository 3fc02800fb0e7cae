// Narrow-phase reuse, for both backends: the decision of a polytope pair (reuse its candidate
// feature pairs, build new ones, or search in full), the candidates' construction and the exact
// tests run on them, as CS_HD functions over plain views. The CPU narrow phase (narrow_phase.cpp
// collidePairs, through feature_cache.cpp's FeatureCacheEntry) and the step pipeline
// (engine/exec/pipeline_collide.h recordNarrowPhase, flat_model.h collideReusingPair: the host
// executor and the CUDA kernels) call these, so the two decide alike and list the same contacts
// to the bit. The bound they rest on is derived in feature_cache.h.
#pragma once

#include "engine/collision/shape_pair_hd.h"

namespace cs {

// One candidate feature pair; pass: which pass of collidePolytopePair tests it.
enum class CandidatePass : uint8_t { VertexFaceAB, VertexFaceBA, EdgeEdge, VertexEdgeAB, VertexEdgeBA, VertexVertex };

struct FeatureCandidate {
    CandidatePass pass;
    int first;    // the vertex (vertex-* passes) or A's edge (edge-edge), of the pass's first polytope
    int second;   // the face, edge or vertex of the other polytope
};

// What the candidates of a pair were built at (P0), besides the list itself.
struct CandidateFrame {
    Transform poseA, poseB;                      // world poses of the two shapes at P0
    NarrowPhaseSettings candidateSettings;       // C
    Real slack = 0;                              // s, m
    Real separation = 0;                         // face-axis separation at P0
};

// A polytope's local centroid and bounding radius (the model's; relativeMotion moves them).
struct LocalBounds {
    Vec3 centroid;
    Real radius;
};

// One side of a pair for pairStepMotion: a dynamic body's velocities and the part's arm (partArm).
struct PairSide {
    bool dynamic;
    Vec3 linVel, angVel;
    Real arm;
};

// The candidates of one pair: the first `capacity` are stored, all are counted (as ContactSink).
struct CandidateSink {
    FeatureCandidate* out;
    int capacity;
    int count;

    CS_HD void push(CandidatePass pass, int first, int second) {
        if (count < capacity) out[count] = FeatureCandidate{pass, first, second};
        ++count;
    }
};

// What a polytope pair does this step.
enum class ReuseMode : uint8_t { Full, Reuse, Rebuild };

constexpr Real kSlackFraction = Real(0.25);   // s = kSlackFraction * base margin

// Rounding room on every comparison of the bound: the candidate tests and the current tests
// evaluate the same quantities in floating point, a few ulps apart.
CS_HD Real paddedBound(Real x) { return x * Real(1.000001) + Real(1e-12); }

// The angle of a unit quaternion's rotation, in [0, pi].
CS_HD Real rotationAngle(Quat q) {
    const Real s = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    return Real(2) * std::atan2(s, std::fabs(q.w));
}

CS_HD Real pointSegmentDistance(Vec3 p, Vec3 a, Vec3 b) {
    const Real u = closestOnSegment(p, a, b);
    return length(p - (a + u * (b - a)));
}

CS_HD Real faceAxisSeparation(const PolytopeView& A, const PolytopeView& B) {
    const Real fa = faceSeparation(B, A), fb = faceSeparation(A, B);
    return fa > fb ? fa : fb;
}

// Largest point displacement of either polytope in the other's frame since P0 (f's poses), and
// the relative rotation angle (feature_cache.h (*)): returns delta, sets theta.
CS_HD Real relativeMotion(const CandidateFrame& f, LocalBounds a, LocalBounds b, const Transform& Xa,
                          const Transform& Xb, Real& theta) {
    // Relative rotation of A in B's frame now against then: q = (qB^-1 qA)(qB0^-1 qA0)^-1.
    const Quat now = conjugate(Xb.rot) * Xa.rot, then = conjugate(f.poseB.rot) * f.poseA.rot;
    theta = rotationAngle(now * conjugate(then));
    const Vec3 ca = a.centroid, cb = b.centroid;
    // Each centroid in the other's frame, now and at P0.
    const Vec3 aInB = invTransformPoint(Xb, transformPoint(Xa, ca)) - invTransformPoint(f.poseB, transformPoint(f.poseA, ca));
    const Vec3 bInA = invTransformPoint(Xa, transformPoint(Xb, cb)) - invTransformPoint(f.poseA, transformPoint(f.poseB, cb));
    const Real da = length(aInB) + theta * a.radius;
    const Real db = length(bInA) + theta * b.radius;
    return da > db ? da : db;
}

// Whether candidates built at f hold at poses Xa, Xb with pair settings s: condition (*) of
// feature_cache.h; delta: relativeMotion (set once the settings match).
CS_HD bool candidatesHold(const CandidateFrame& f, LocalBounds a, LocalBounds b, const Transform& Xa,
                          const Transform& Xb, const NarrowPhaseSettings& s, Real& delta) {
    const NarrowPhaseSettings& c = f.candidateSettings;
    if (s.maxEdgeDepth != c.maxEdgeDepth || s.parallelSin != c.parallelSin || s.endpointTol != c.endpointTol ||
        s.hyperplane != c.hyperplane)
        return false;
    Real theta;
    delta = relativeMotion(f, a, b, Xa, Xb, theta);
    const Real d = paddedBound(delta);
    return d <= f.slack && s.margin + d <= c.margin && s.regionWidening + d <= c.regionWidening &&
           s.faceWindow + 2 * d <= c.faceWindow && s.epsTheta + paddedBound(theta) <= c.epsTheta;
}

// Relative motion of a pair's two bodies within one step at their velocities:
// dt (|v_A - v_B| + |w_A| R_A + |w_B| R_B), R the part's arm; static sides count as at rest.
CS_HD Real pairStepMotion(const PairSide& a, const PairSide& b, Real dt) {
    const Vec3 zero{0, 0, 0};
    const Vec3 va = a.dynamic ? a.linVel : zero, vb = b.dynamic ? b.linVel : zero;
    const Real wa = a.dynamic ? length(a.angVel) : Real(0), wb = b.dynamic ? length(b.angVel) : Real(0);
    return dt * (length(va - vb) + wa * a.arm + wb * b.arm);
}

// The decision for a polytope pair with pair settings s (feature_cache.h): Reuse when the pair's
// entry of the last narrow phase (held; null: none, or built for other polytopes) holds at the
// current poses (delta: the motion since its P0); else Rebuild (new candidates at the current
// poses, delta 0) when the pair is at rest, relative motion per step below a quarter of the
// slack kSlackFraction * baseMargin; else Full: the plain search and no entry.
CS_HD ReuseMode decidePairReuse(const CandidateFrame* held, LocalBounds a, LocalBounds b, const Transform& Xa,
                            const Transform& Xb, const NarrowPhaseSettings& s, Real baseMargin, const PairSide& sideA,
                            const PairSide& sideB, Real& delta) {
    delta = 0;
    if (held && candidatesHold(*held, a, b, Xa, Xb, s, delta)) return ReuseMode::Reuse;
    delta = 0;
    const Real slack = kSlackFraction * baseMargin;
    const Real motion = pairStepMotion(sideA, sideB, s.dt > 0 ? s.dt : Real(1.0 / 60));
    if (!(slack > 0) || !(motion < Real(0.25) * slack)) return ReuseMode::Full;
    return ReuseMode::Rebuild;
}

// Sets f and lists the candidates of the world-frame polytopes A, B at poses Xa, Xb (P0) with
// pair settings s into sink (feature_cache.h: every test relaxed by the slack).
CS_HD void buildCandidates(const PolytopeView& A, const PolytopeView& B, const Transform& Xa, const Transform& Xb,
                           const NarrowPhaseSettings& s, Real slack, CandidateFrame& f, CandidateSink& sink) {
    NarrowPhaseSettings c = s;
    c.margin += slack;
    c.regionWidening += slack;
    c.faceWindow += 2 * slack;
    const Real radius = A.boundingRadius > B.boundingRadius ? A.boundingRadius : B.boundingRadius;
    c.epsTheta += radius > 0 ? slack / radius : slack;
    f.poseA = Xa;
    f.poseB = Xb;
    f.candidateSettings = c;
    f.slack = slack;
    f.separation = faceAxisSeparation(A, B);
    // Apart by more than C.margin (bounding spheres, or a face plane): apart by more than S.margin
    // after a motion within (*), where the full search lists nothing. No candidates.
    if (!boundsMayTouch(A.centroid, A.boundingRadius, B.centroid, B.boundingRadius, c.margin) ||
        separatedByFace(A, B, c.margin) || separatedByFace(B, A, c.margin))
        return;

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
            for (int face = 0; face < Q.faceCount; ++face)
                if (vertexFaceContact(P, v, Q, face, maxGap, side == 0, c, pc))
                    sink.push(side == 0 ? CandidatePass::VertexFaceAB : CandidatePass::VertexFaceBA, v, face);
        }
    }
    // Edge-edge: segment distance <= max(C.margin, min(maxEdgeDepth + s, C.faceWindow - sep0)).
    Real deep = c.faceWindow - f.separation;
    if (deep > c.maxEdgeDepth + slack) deep = c.maxEdgeDepth + slack;
    const Real edgeReach = paddedBound(deep > c.margin ? deep : c.margin);
    for (int i = 0; i < A.edgeCount; ++i) {
        const Vec3 a0 = A.vertices[A.edges[i].tail], a1 = A.vertices[A.edges[i].head];
        for (int j = 0; j < B.edgeCount; ++j) {
            Real u, w;
            const Vec3 b0 = B.vertices[B.edges[j].tail], b1 = B.vertices[B.edges[j].head];
            segmentSegmentClosest(a0, a1, b0, b1, u, w);
            if (length((a0 + u * (a1 - a0)) - (b0 + w * (b1 - b0))) <= edgeReach) sink.push(CandidatePass::EdgeEdge, i, j);
        }
    }
    // Vertex-edge and vertex-vertex: distance <= C.margin.
    const Real near = paddedBound(c.margin);
    for (int side = 0; side < 2; ++side) {
        const PolytopeView& P = side == 0 ? A : B;
        const PolytopeView& Q = side == 0 ? B : A;
        for (int v = 0; v < P.vertexCount; ++v)
            for (int j = 0; j < Q.edgeCount; ++j)
                if (pointSegmentDistance(P.vertices[v], Q.vertices[Q.edges[j].tail], Q.vertices[Q.edges[j].head]) <= near)
                    sink.push(side == 0 ? CandidatePass::VertexEdgeAB : CandidatePass::VertexEdgeBA, v, j);
    }
    for (int v = 0; v < A.vertexCount; ++v)
        for (int u = 0; u < B.vertexCount; ++u)
            if (length(A.vertices[v] - B.vertices[u]) <= near) sink.push(CandidatePass::VertexVertex, v, u);
}

// maxFaceGap(Q, P.vertices[v]) for the vertices of P, each computed once per pair: the
// vertex-face, vertex-edge and vertex-vertex passes of collideCandidates test the same vertices
// against the same polytope (the same arithmetic, so the same bits). Vertices past the first
// kMemoVertices are computed at every call.
struct FaceGapMemo {
    static constexpr int kMemoVertices = 16;
    Real gap[kMemoVertices];
    uint32_t known = 0;

    CS_HD Real get(const PolytopeView& Q, const PolytopeView& P, int v) {
        if (v >= kMemoVertices) return maxFaceGap(Q, P.vertices[v]);
        if (!((known >> v) & 1u)) {
            gap[v] = maxFaceGap(Q, P.vertices[v]);
            known |= uint32_t(1) << v;
        }
        return gap[v];
    }
};

// collidePolytopePair's output from the n candidates cand built at f only (delta: relativeMotion
// since P0, 0 for candidates built at the current poses). apartChecked: the caller has already
// found the pair's bounding spheres within s.margin and no face plane of either polytope keeping
// the other beyond a margin <= s.margin (narrow_phase.cpp collideCachedPair under the relaxation
// methods), so the full search's early outs below cannot return and are skipped.
CS_HD void collideCandidates(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                             const CandidateFrame& f, const FeatureCandidate* cand, int n, Real delta, ContactSink& sink,
                             bool apartChecked = false) {
    // The full search's early outs, as collidePolytopePair.
    if (!apartChecked) {
        if (!boundsMayTouch(A.centroid, A.boundingRadius, B.centroid, B.boundingRadius, s.margin)) return;
        if (separatedByFace(A, B, s.margin) || separatedByFace(B, A, s.margin)) return;
    }
    FaceGapMemo gapOfA, gapOfB;   // A's vertices against B's faces, B's against A's
    PotentialContact c;
    int k = 0;
    // Vertex-face, as vertexFacePass: the vertex's reach and maxGap filters, then the face test.
    for (int side = 0; side < 2; ++side) {
        const CandidatePass pass = side == 0 ? CandidatePass::VertexFaceAB : CandidatePass::VertexFaceBA;
        const PolytopeView& P = side == 0 ? A : B;
        const PolytopeView& Q = side == 0 ? B : A;
        FaceGapMemo& memo = side == 0 ? gapOfA : gapOfB;
        const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
        for (int v = -1; k < n && cand[k].pass == pass; ++k) {
            const int cv = cand[k].first;
            if (cv == v) continue;
            v = cv;
            if (lengthSq(P.vertices[v] - Q.centroid) > reach) continue;
            const Real maxGap = memo.get(Q, P, v);
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
        FaceGapMemo& memo = vertexIsA ? gapOfA : gapOfB;
        const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
        int v = -1;
        bool skip = false;
        for (; k < n && cand[k].pass == pass; ++k) {
            if (cand[k].first != v) {
                v = cand[k].first;
                skip = lengthSq(P.vertices[v] - Q.centroid) > reach || memo.get(Q, P, v) > far;
            }
            const int j = cand[k].second;
            if (skip) continue;
            // The coverage rule first: a few integer compares against the sink, which
            // vertexEdgeContact leaves as it is, where the exact test costs square roots.
            const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v);
            const uint32_t f0 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[0]);
            const uint32_t f1 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[1]);
            const bool covered = vertexIsA ? sink.has(fv, f0) || sink.has(fv, f1) : sink.has(f0, fv) || sink.has(f1, fv);
            if (!covered && vertexEdgeContact(P, v, Q, j, vertexIsA, s, c)) sink.push(c);
        }
    }
    // Vertex-vertex, as vertexVertexPass.
    int v = -1;
    bool skip = false;
    for (; k < n && cand[k].pass == CandidatePass::VertexVertex; ++k) {
        if (cand[k].first != v) {
            v = cand[k].first;
            skip = gapOfA.get(B, A, v) > far;
        }
        const int u = cand[k].second;
        if (skip || !vertexVertexContact(A, v, B, u, s, c)) continue;
        if (vertexCovered(B, u, c.featureA, true, sink) || vertexCovered(A, v, c.featureB, false, sink)) continue;
        sink.push(c);
    }
    // Deep overlap: returns at once in the full search when the face-axis separation is >= -margin.
    if (f.separation - paddedBound(delta) < -s.margin) deepOverlapPass(A, B, s, sink);
    sortContactsByFeatures(sink);
}

}  // namespace cs
