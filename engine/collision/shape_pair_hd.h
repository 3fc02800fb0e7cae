// One shape pair at a time, for both backends: the per-element math of the broad and narrow
// phase as CS_HD functions over plain views, written once for the CPU loops and the CUDA kernels.
//
// The CPU narrow phase (polytope_contacts.cpp, narrow_phase.cpp) and the CUDA narrow phase
// (gpu/gpu_collision.cu, via engine/exec/flat_model.h's collideShapePair) call the same functions here:
//   - world-frame poses, AABBs and polytopes, one element at a time (world_polytope.h fills a
//     WorldPolytope with them on the CPU; a kernel fills flat per-shape arrays on the GPU);
//   - collidePolytopePair: the four feature-pair passes of [PEG] section 5.2 (3D) over two
//     world-frame polytopes, written into a bounded array (ContactSink). The rules of each
//     feature pair are those of feature_pairs.h and narrow_phase.h.
// A sink never drops a contact silently: it counts every contact it is offered, stores the
// first `capacity` ones, and the caller grows its buffer and runs the pair again when
// count > capacity (the CPU path does this inside collidePolytopes, the GPU path at the end of
// the step, and reports the event).
#pragma once

#include "engine/collision/broad_phase.h"
#include "engine/collision/feature_pairs.h"

namespace cs {

// ---- world frame, one element at a time ------------------------------------------------------

// Pose of a part: body pose composed with the part's local frame, x_world = q_b (R_l x + p_l) + p_b.
CS_HD Transform composeShapeTransform(Vec3 bodyPos, Quat bodyRot, const Transform& local) {
    Transform X;
    X.rot = bodyRot * local.rot;
    X.pos = rotate(bodyRot, local.pos) + bodyPos;
    return X;
}

// An edge's tangents t_k ([PEG] eq. 25) rotated into the world; topology unchanged.
CS_HD PolytopeEdge worldEdge(const Transform& X, PolytopeEdge e) {
    e.t[0] = rotate(X.rot, e.t[0]);
    e.t[1] = rotate(X.rot, e.t[1]);
    return e;
}

// A face plane in the world: dot(R eta, R x + pos) = dot(eta, x) + dot(R eta, pos).
CS_HD PolytopeFace worldFace(const Transform& X, PolytopeFace f) {
    f.normal = rotate(X.rot, f.normal);
    f.offset += dot(f.normal, X.pos);
    return f;
}

// World AABB of a polytope from its local vertices (tight: the box of the rotated vertices),
// grown by margin on every side.
CS_HD Aabb polytopeAabb(const Vec3* localVertices, int count, const Transform& X, Real margin) {
    Mat3 R = toMat3(X.rot);
    Vec3 lo{kHuge, kHuge, kHuge}, hi = -lo;
    for (int i = 0; i < count; ++i) {
        Vec3 w = R * localVertices[i];
        lo = vmin(lo, w);
        hi = vmax(hi, w);
    }
    Vec3 m{margin, margin, margin};
    return Aabb{lo + X.pos - m, hi + X.pos + m};
}

CS_HD Aabb sphereAabb(Vec3 center, Real radius, Real margin) {
    Vec3 r{radius, radius, radius}, m{margin, margin, margin};
    return Aabb{center - r - m, center + r + m};
}

// ---- bounded output ----------------------------------------------------------------------------

// Contacts of one shape pair: the first `capacity` are stored, all are counted.
struct ContactSink {
    PotentialContact* out;
    int capacity;
    int count;

    CS_HD void push(const PotentialContact& c) {
        if (count < capacity) out[count] = c;
        ++count;
    }
    CS_HD int stored() const { return count < capacity ? count : capacity; }
    // Whether the pair (fa, fb) has been stored (the coverage tests of narrow_phase.h). When
    // the sink has overflowed the answer may be wrong, but the pair is then run again anyway.
    CS_HD bool has(uint32_t fa, uint32_t fb) const {
        for (int i = 0, n = stored(); i < n; ++i)
            if (out[i].featureA == fa && out[i].featureB == fb) return true;
        return false;
    }
};

// Bounding spheres: farther apart than this, no feature pair is within the margin.
CS_HD bool boundsMayTouch(Vec3 ca, Real ra, Vec3 cb, Real rb, Real margin) {
    const Real reach = ra + rb + margin;
    return lengthSq(ca - cb) <= reach * reach;
}

// ---- polytope-polytope: the four passes ------------------------------------------------------

// Pass 1: vertices of P against faces of Q (vertexIsA: P is shape A).
CS_HD void vertexFacePass(const PolytopeView& P, const PolytopeView& Q, bool vertexIsA,
                          const NarrowPhaseSettings& s, ContactSink& sink) {
    const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
    PotentialContact c;
    for (int v = 0; v < P.vertexCount; ++v) {
        if (lengthSq(P.vertices[v] - Q.centroid) > reach) continue;
        const Real maxGap = maxFaceGap(Q, P.vertices[v]);
        if (maxGap > s.margin) continue;   // farther than the margin from Q
        for (int f = 0; f < Q.faceCount; ++f)
            if (vertexFaceContact(P, v, Q, f, maxGap, vertexIsA, s, c)) sink.push(c);
    }
}

// Separation of P from Q along Q's face normals: max over faces f of Q of the least gap of P's
// vertices to f. The face axes of the separating-axis test, so never more than the signed
// distance of the two polytopes (negative: at least this deep).
CS_HD Real faceSeparation(const PolytopeView& P, const PolytopeView& Q) {
    Real best = -kHuge;
    for (int f = 0; f < Q.faceCount; ++f) {
        Real least = kHuge;
        for (int v = 0; v < P.vertexCount; ++v) {
            const Real g = vertexFaceGap(P.vertices[v], Q.faces[f]);
            least = g < least ? g : least;
        }
        best = least > best ? least : best;
    }
    return best;
}

// Edges of P that lie wholly beyond one face plane of Q by more than reach, as a bit mask
// (bit i: edge i): an edge pair's closest points differ by exactly the pair's gap along
// e_a x e_b, so such an edge has no pair within -reach <= gap <= reach. 0 (no edge skipped)
// when P has more than 64 edges or Q more than 32 faces.
CS_HD uint64_t edgesBeyond(const PolytopeView& P, const PolytopeView& Q, Real reach) {
    if (P.edgeCount > 64 || Q.faceCount > 32 || P.vertexCount > 64) return 0;
    uint32_t beyond[64];   // per vertex of P: bit f set when the vertex lies past face f of Q by > reach
    for (int v = 0; v < P.vertexCount; ++v) {
        uint32_t bits = 0;
        for (int f = 0; f < Q.faceCount; ++f)
            if (vertexFaceGap(P.vertices[v], Q.faces[f]) > reach) bits |= uint32_t(1) << f;
        beyond[v] = bits;
    }
    uint64_t mask = 0;
    for (int i = 0; i < P.edgeCount; ++i)
        if (beyond[P.edges[i].tail] & beyond[P.edges[i].head]) mask |= uint64_t(1) << i;
    return mask;
}

// Pass 2: edge-edge. An edge pair's gap is measured along e_a x e_b; two edges that cross deep
// inside each other's bodies give a gap far below the polytopes' actual depth and a normal that
// separates nothing (two such pairs of one overlapping rock pair, normals +z and -z at -9 cm,
// made an infeasible problem and an explosion in pour3d). Like a vertex's faces (faceWindow),
// an edge pair is kept only within faceWindow of the face-axis separation, computed once, for
// the first candidate. Edges wholly beyond a face of the other polytope by more than both the
// margin and maxEdgeDepth are skipped first (edgesBeyond; the pairs they skip would all be
// rejected, so the output is the same).
CS_HD void edgeEdgePass(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                        ContactSink& sink) {
    PotentialContact c;
    Real floor = -kHuge;
    bool haveFloor = false;
    const Real reach = (s.margin > s.maxEdgeDepth ? s.margin : s.maxEdgeDepth) * Real(1.000001);
    const uint64_t skipA = edgesBeyond(A, B, reach), skipB = edgesBeyond(B, A, reach);
    for (int i = 0; i < A.edgeCount; ++i) {
        if (i < 64 && ((skipA >> i) & 1)) continue;
        for (int j = 0; j < B.edgeCount; ++j) {
            if (j < 64 && ((skipB >> j) & 1)) continue;
            if (!edgeEdgeContact(A, i, B, j, s, c)) continue;
            if (!haveFloor) {
                const Real fa = faceSeparation(B, A), fb = faceSeparation(A, B);
                floor = (fa > fb ? fa : fb) - s.faceWindow;
                haveFloor = true;
            }
            if (c.gap >= floor) sink.push(c);
        }
    }
}

// Pass 3: vertices of P against edges of Q, where no vertex-face contact of that vertex with a
// face of the edge exists. A vertex past a face plane of Q by more than the margin is farther
// than that from all of Q and is skipped (as pass 4 does).
CS_HD void vertexEdgePass(const PolytopeView& P, const PolytopeView& Q, bool vertexIsA,
                          const NarrowPhaseSettings& s, ContactSink& sink) {
    const Real reach = (Q.boundingRadius + s.margin) * (Q.boundingRadius + s.margin);
    PotentialContact c;
    const Real far = s.margin * Real(1.000001);
    for (int v = 0; v < P.vertexCount; ++v) {
        if (lengthSq(P.vertices[v] - Q.centroid) > reach) continue;
        if (maxFaceGap(Q, P.vertices[v]) > far) continue;   // past a face plane: farther than that from every edge
        const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v);
        for (int j = 0; j < Q.edgeCount; ++j) {
            if (!vertexEdgeContact(P, v, Q, j, vertexIsA, s, c)) continue;
            const uint32_t f0 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[0]);
            const uint32_t f1 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[1]);
            const bool covered = vertexIsA ? sink.has(fv, f0) || sink.has(fv, f1)
                                           : sink.has(f0, fv) || sink.has(f1, fv);
            if (!covered) sink.push(c);
        }
    }
}

// True when vertex fv of one side already has a contact with a face or edge around vertex u of
// the other polytope Q (vertexIsA: fv belongs to A).
CS_HD bool vertexCovered(const PolytopeView& Q, int u, uint32_t fv, bool vertexIsA, const ContactSink& sink) {
    for (int k = Q.vertexEdgeStart[u]; k < Q.vertexEdgeStart[u + 1]; ++k) {
        const int j = Q.vertexEdges[k];
        const uint32_t ids[3] = {makeFeatureId(FeatureKind::Edge, j),
                                 makeFeatureId(FeatureKind::Face, Q.edges[j].face[0]),
                                 makeFeatureId(FeatureKind::Face, Q.edges[j].face[1])};
        for (uint32_t id : ids)
            if (vertexIsA ? sink.has(fv, id) : sink.has(id, fv)) return true;
    }
    return false;
}

// Pass 4: vertex-vertex, tip to tip, where nothing above pairs either vertex with the
// features around the other.
CS_HD void vertexVertexPass(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                            ContactSink& sink) {
    PotentialContact c;
    const Real far = s.margin * Real(1.000001);
    for (int v = 0; v < A.vertexCount; ++v) {
        if (maxFaceGap(B, A.vertices[v]) > far) continue;   // past a face plane: farther than that from every vertex
        for (int u = 0; u < B.vertexCount; ++u) {
            if (!vertexVertexContact(A, v, B, u, s, c)) continue;
            if (vertexCovered(B, u, c.featureA, true, sink)) continue;
            if (vertexCovered(A, v, c.featureB, false, sink)) continue;
            sink.push(c);
        }
    }
}

// Cheap rejection: a face plane of Q with every vertex of P beyond the margin is a separating
// axis with clearance > margin, so no feature pair is within the margin.
CS_HD bool separatedByFace(const PolytopeView& P, const PolytopeView& Q, Real margin) {
    for (int f = 0; f < Q.faceCount; ++f) {
        bool all = true;
        for (int v = 0; v < P.vertexCount && all; ++v) all = vertexFaceGap(P.vertices[v], Q.faces[f]) > margin;
        if (all) return true;
    }
    return false;
}

// Pass 5: deep overlap. The passes above list feature pairs within the margin of each other's
// surfaces, so two parts overlapping by more than the margin (a collapsed stack, two boxes
// spawned into each other) can list nothing that separates them, or only pairs at gap 0 on
// coincident faces. When the separating-axis test says the parts overlap deeper than the margin,
// this adds the contacts of the minimum translation axis (the face normals of both and the edge
// cross products spanning a Minkowski face, distance.h), unless a listed pair is already about
// as deep (within the margin of the depth): every vertex behind the best face,
// against that face, or the closest points of the best edge pair. The solve then pushes the
// parts apart along that axis (at most at maxPushoutSpeed, [NSN] section 8.2's stabilization).
// Pairs already listed are not repeated.
CS_HD void deepOverlapPass(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                           ContactSink& sink) {
    // sep(n) = min over A of n.x - max over B of n.x, n from B towards A; depth = -max_n sep(n).
    Real best = -kHuge;
    int axis = -1, face = -1, edgeA = -1, edgeB = -1;   // axis 0: a face of B, 1: a face of A, 2: an edge pair
    Vec3 edgeNormal{0, 0, 0};
    for (int pass = 0; pass < 2; ++pass) {
        const PolytopeView& P = pass == 0 ? A : B;   // the vertices
        const PolytopeView& Q = pass == 0 ? B : A;   // the faces
        for (int f = 0; f < Q.faceCount; ++f) {
            Real least = kHuge;
            for (int v = 0; v < P.vertexCount; ++v) {
                const Real g = vertexFaceGap(P.vertices[v], Q.faces[f]);
                least = g < least ? g : least;
            }
            if (least > best) {
                best = least;
                axis = pass;
                face = f;
            }
        }
    }
    if (axis < 0 || best >= -s.margin) return;   // face axes bound the depth from above: within the margin
    for (int i = 0; i < A.edgeCount; ++i) {
        const PolytopeEdge& ea = A.edges[i];
        const Vec3 da = A.vertices[ea.head] - A.vertices[ea.tail];
        const Vec3 a0 = A.faces[ea.face[0]].normal, a1 = A.faces[ea.face[1]].normal;
        for (int j = 0; j < B.edgeCount; ++j) {
            const PolytopeEdge& eb = B.edges[j];
            if (!isMinkowskiFace(a0, a1, -B.faces[eb.face[0]].normal, -B.faces[eb.face[1]].normal)) continue;
            const Vec3 db = B.vertices[eb.head] - B.vertices[eb.tail];
            const Vec3 c = cross(da, db);
            if (lengthSq(c) <= Real(1e-20) * lengthSq(da) * lengthSq(db)) continue;
            Vec3 n = normalize(c);
            Real g = axisSeparation(A, B, n);
            const Real flipped = axisSeparation(A, B, -n);
            if (flipped > g) { g = flipped; n = -n; }
            if (g > best + Real(1e-12)) {
                best = g;
                axis = 2;
                edgeA = i;
                edgeB = j;
                edgeNormal = n;
            }
        }
    }
    if (best >= -s.margin) return;
    // Listed pairs as deep as the parts' depth already push them apart along some axis.
    for (int i = 0, n = sink.stored(); i < n; ++i)
        if (sink.out[i].gap <= best + s.margin) return;
    if (axis == 2) {
        const PolytopeEdge& ea = A.edges[edgeA];
        const PolytopeEdge& eb = B.edges[edgeB];
        Real u, t;
        segmentSegmentClosest(A.vertices[ea.tail], A.vertices[ea.head], B.vertices[eb.tail], B.vertices[eb.head], u, t);
        const Vec3 pa = A.vertices[ea.tail] + u * (A.vertices[ea.head] - A.vertices[ea.tail]);
        const uint32_t fa = makeFeatureId(FeatureKind::Edge, edgeA), fb = makeFeatureId(FeatureKind::Edge, edgeB);
        if (!sink.has(fa, fb))
            sink.push(makePotentialContact(PairType::EdgeEdge, fa, fb, pa, pa - best * edgeNormal, edgeNormal, best));
        return;
    }
    const PolytopeView& P = axis == 0 ? A : B;
    const PolytopeView& Q = axis == 0 ? B : A;
    const Vec3 eta = Q.faces[face].normal;
    const uint32_t ff = makeFeatureId(FeatureKind::Face, face);
    for (int v = 0; v < P.vertexCount; ++v) {
        const Vec3 p = P.vertices[v];
        const Real g = vertexFaceGap(p, Q.faces[face]);
        if (g >= 0) continue;
        const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v);
        if (axis == 0 ? sink.has(fv, ff) : sink.has(ff, fv)) continue;
        sink.push(axis == 0 ? makePotentialContact(PairType::VertexFace, fv, ff, p, p - g * eta, eta, g)
                            : makePotentialContact(PairType::VertexFace, ff, fv, p - g * eta, p, -eta, g));
    }
}

CS_HD uint64_t featurePairKey(const PotentialContact& c) { return (uint64_t(c.featureA) << 32) | c.featureB; }

// The stored contacts sorted by (featureA, featureB): insertion sort, a pair has a handful.
CS_HD void sortContactsByFeatures(ContactSink& sink) {
    for (int i = 1, n = sink.stored(); i < n; ++i) {
        PotentialContact c = sink.out[i];
        int j = i;
        for (; j > 0 && featurePairKey(sink.out[j - 1]) > featurePairKey(c); --j) sink.out[j] = sink.out[j - 1];
        sink.out[j] = c;
    }
}

// All potential contacts of two world-frame polytopes (A is shape A), sorted by
// (featureA, featureB) (keys are unique within a pair). Shape and body fields are left -1.
CS_HD void collidePolytopePair(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                               ContactSink& sink) {
    if (!boundsMayTouch(A.centroid, A.boundingRadius, B.centroid, B.boundingRadius, s.margin)) return;
    if (separatedByFace(A, B, s.margin) || separatedByFace(B, A, s.margin)) return;
    vertexFacePass(A, B, true, s, sink);
    vertexFacePass(B, A, false, s, sink);
    edgeEdgePass(A, B, s, sink);
    vertexEdgePass(A, B, true, s, sink);
    vertexEdgePass(B, A, false, s, sink);
    vertexVertexPass(A, B, s, sink);
    deepOverlapPass(A, B, s, sink);
    sortContactsByFeatures(sink);
}

// Sphere against a world-frame polytope (narrow_phase.h, "Sphere pairs").
CS_HD void collideSpherePolytopePair(Vec3 center, Real radius, bool sphereIsA, const PolytopeView& Q,
                                     const NarrowPhaseSettings& s, ContactSink& sink) {
    if (!boundsMayTouch(Q.centroid, Q.boundingRadius, center, radius, s.margin)) return;
    PotentialContact c;
    if (spherePolytopeContact(center, radius, sphereIsA, Q, s, c)) sink.push(c);
}

}  // namespace cs
