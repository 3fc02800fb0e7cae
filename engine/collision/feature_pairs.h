// One feature pair at a time: the acceptance tests of the narrow phase as CS_HD functions.
//
// Each function decides whether one pair of features (vertex-face, edge-edge, vertex-edge,
// vertex-vertex, sphere cases) is a potential contact under the relaxed tests of [PEG]
// section 4 and, if so, fills a PotentialContact (shape and body fields left -1). The CPU
// narrow phase (polytope_contacts.cpp, narrow_phase.cpp) loops over pairs and calls these; a
// CUDA kernel (gpu/gpu_collision.cu, narrowKernel: one thread per shape pair) calls the same ones.
// The conventions are stated in narrow_phase.h.
#pragma once

#include "engine/collision/feature_geometry.h"
#include "engine/collision/potential_contact.h"

namespace cs {

// The relaxation parameters of [PEG] section 4 (their roles are detailed in narrow_phase.h).
struct NarrowPhaseSettings {
    Real margin = Real(0.02);          // m: report feature pairs with gap <= margin
    Real epsTheta = Real(0.1);         // applicability relaxation, in cosine units (~5.7 deg
                                       //   of rotation within the step)
    Real regionWidening = Real(0.01);  // m: face polygons widened for vertex-face feasibility
    Real faceWindow = Real(0.02);      // m: vertex-face gaps kept within this of the vertex's
                                       //   largest face gap (its least penetrated face)
    Real maxEdgeDepth = Real(0.1);     // m: deepest edge-edge overlap still reported
    Real parallelSin = Real(1e-3);     // edges with |sin angle| below this count as parallel
    Real endpointTol = Real(1e-3);     // m: an edge point this close to an end is that vertex
                                       //   (crossings there are left to the vertex's contacts,
                                       //   so resting neighbours' grazing corners give no
                                       //   spurious edge-edge pairs; the gap error is bounded
                                       //   by endpointTol times the slope)
    // Speculative widening ([PEG] section 4: contacts must be found before they happen, at the
    // *end* of the step). With motionScale > 0, collideShapes grows margin and regionWidening by
    // the pair's reach within the step, motionScale * dt * (|v_A - v_B| + |g| dt + |w_A| R_A +
    // |w_B| R_B) (R: the part's farthest point from its body's centre of mass), and epsTheta by
    // the relative rotation motionScale * dt |w_A - w_B| (an edge direction turned by theta
    // changes its cosine with a normal by at most theta). faceWindow stays: a face whose plane
    // lies that far behind the vertex's nearest one cannot be reached without crossing the body.
    // 0: the fixed relaxations above.
    Real motionScale = 0;
    Real dt = 0;                       // s: the step the contacts must hold over
    Real gravity = 0;                  // m/s^2: |g|, speed gained within the step
    // The conventional detector the [PEG] paper compares its model against (section 2: "facets
    // of polytopes are represented as hyperplanes"; sections 3 and 6: a standard model that falls
    // into SM traps). A vertex is paired with every face it lies within the margin of (its
    // projection at most `margin` outside the face polygon, its plane gap within faceWindow of
    // its least penetrated face), whichever way the vertex's edges point: no applicability test,
    // and edge pairs are kept whatever the applicability of their normal. Each pair is enforced
    // on the face's plane, so a vertex beside a convex edge is held by both faces' planes (the
    // SM trap of [PEG] figure 2). For comparing models only (sandbox experiment --models
    // hyperplane, scene key hyperplane_faces).
    bool hyperplane = false;
    // The relaxation methods' pair filter (SolveMethod::Soft and Pgs; World::softSubstep sets it,
    // closingPairMargin below): a polytope pair that a face plane keeps apart by more than the gap
    // its bodies can close within the step lists no contacts (the pyramids' resting neighbours
    // across 1 mm side gaps); the others list theirs within `margin` as before. < 0: off (the
    // Newton method and the other models).
    Real closingSlop = -1;             // m: the gap kept at rest
    // The soft step's box pairs (World::softSubstep sets it under SolveMethod::Soft, with
    // closingSlop >= 0): two boxes get the separating axes and one face clip (box_contacts.h)
    // instead of the feature pairs. Off for pgs (its resting pyramids drift more on the clipped
    // manifolds: docs/relaxation.md) and for every other method.
    bool boxClip = false;
};

// Speculative widening, shared by the CPU narrow phase (narrow_phase.cpp shapeMotionReach,
// pairSettings) and the device pipeline (pipeline_collide.h). A part's reach within the step:
// motionScale * dt * (|v| + |g| dt + |w| R), R = |local offset| + bounding radius, the farthest
// its points move; 0 for a static body or motionScale 0 (then s is returned unchanged below).
// R of a part for its reach: |its offset from the body's centre of mass| + its bounding radius.
CS_HD Real partArm(const Transform& local, Real boundingRadius) { return length(local.pos) + boundingRadius; }

CS_HD Real partMotionReach(const NarrowPhaseSettings& s, bool dynamic, Vec3 v, Vec3 w, Real arm) {
    if (!(s.motionScale > 0) || !dynamic) return 0;
    return s.motionScale * s.dt * (length(v) + s.gravity * s.dt + length(w) * arm);
}

// One pair's settings with margin and regionWidening grown by the pair's reach and epsTheta by
// its relative turn (capped at 2, the cosine's range), as the comment on motionScale says.
// Velocities of static bodies are taken as zero.
CS_HD NarrowPhaseSettings widenedPairSettings(const NarrowPhaseSettings& s, bool dynamicA, Vec3 vA, Vec3 wA,
                                              Real armA, bool dynamicB, Vec3 vB, Vec3 wB, Real armB) {
    if (!(s.motionScale > 0)) return s;
    const Vec3 zero{0, 0, 0};
    const Vec3 va = dynamicA ? vA : zero, vb = dynamicB ? vB : zero;
    const Vec3 wa = dynamicA ? wA : zero, wb = dynamicB ? wB : zero;
    const Real fall = (dynamicA || dynamicB) ? s.gravity * s.dt : Real(0);   // gravity within the step (kept when both fall: conservative)
    const Real reach = s.motionScale * s.dt * (length(va - vb) + fall + length(wa) * armA + length(wb) * armB);
    const Real turn = s.motionScale * s.dt * length(wa - wb);
    NarrowPhaseSettings out = s;
    out.margin += reach;
    out.regionWidening += reach;
    out.epsTheta += turn < Real(2) ? turn : Real(2);
    return out;
}

// The gap a relaxation method's pair must be within to list contacts (NarrowPhaseSettings::closingSlop >= 0):
//   min(margin, closingSlop + kClosingScale dt (|v_A - v_B| + |w_A| R_A + |w_B| R_B) + fall),
// fall = |g| dt^2 when exactly one of the two moves (gravity alone closes no gap between two
// falling bodies). The velocities are the step's start; kClosingScale allows for their change
// within the step (contacts, gravity against a supported body), and the slop for a gap that
// gravity and the solve close from rest. A gap the step does not close needs no contact: an open
// contact takes no impulse unless it closes (soft_step_hd.h, pgs_step_hd.h), and one that closes
// unlisted is found overlapping at the next step and pushed out. Never larger than the margin.
constexpr Real kClosingScale = 2;

CS_HD Real closingPairMargin(const NarrowPhaseSettings& s, bool dynamicA, Vec3 vA, Vec3 wA, Real armA,
                             bool dynamicB, Vec3 vB, Vec3 wB, Real armB) {
    const Vec3 zero{0, 0, 0};
    const Vec3 va = dynamicA ? vA : zero, vb = dynamicB ? vB : zero;
    const Real wa = dynamicA ? length(wA) : Real(0), wb = dynamicB ? length(wB) : Real(0);
    const Real fall = dynamicA != dynamicB ? s.gravity * s.dt * s.dt : Real(0);
    const Real m = s.closingSlop + kClosingScale * s.dt * (length(va - vb) + wa * armA + wb * armB) + fall;
    return m < s.margin ? m : s.margin;
}

// One part's share of closingPairMargin, for the broad phase's boxes (narrow_phase.cpp
// shapeClosingPad): closingSlop / 2 + kClosingScale dt (|v| + |w| R) for a moving part,
// closingSlop / 2 + |g| dt^2 for one that does not move. Two parts' shares add up to at least the
// pair's closingPairMargin before its cap at the margin: |v_A - v_B| <= |v_A| + |v_B|, and the
// fall, counted when exactly one of the two moves, is the still one's (static pairs never pair).
CS_HD Real closingPartPad(const NarrowPhaseSettings& s, bool dynamic, Vec3 v, Vec3 w, Real arm) {
    const Real half = Real(0.5) * s.closingSlop;
    if (!dynamic) return half + s.gravity * s.dt * s.dt;
    return half + kClosingScale * s.dt * (length(v) + length(w) * arm);
}

CS_HD PotentialContact makePotentialContact(PairType type, uint32_t fa, uint32_t fb, Vec3 pA,
                                            Vec3 pB, Vec3 n, Real gap) {
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

// Largest plane gap of p over the faces of Q: minus the depth inside Q, a lower bound of the
// distance outside.
CS_HD Real maxFaceGap(const PolytopeView& Q, Vec3 p) {
    Real m = -kHuge;
    for (int f = 0; f < Q.faceCount; ++f) {
        Real g = vertexFaceGap(p, Q.faces[f]);
        m = g > m ? g : m;
    }
    return m;
}

// Vertex v of P against face f of Q ([PEG] section 4; section 5.2 "vertex-face").
// maxGap = maxFaceGap(Q, P.vertices[v]). vertexIsA: P is shape A, so the contact normal (B to
// A) is eta_f; otherwise P is B and the normal is -eta_f. psi = eta_f . v - offset_f.
CS_HD bool vertexFaceContact(const PolytopeView& P, int v, const PolytopeView& Q, int f, Real maxGap,
                             bool vertexIsA, const NarrowPhaseSettings& s, PotentialContact& c) {
    const Vec3 p = P.vertices[v];
    const Real g = vertexFaceGap(p, Q.faces[f]);
    if (g > s.margin || g < maxGap - s.faceWindow) return false;
    const Vec3 eta = Q.faces[f].normal;
    if (faceRegionExcess(Q, f, p) > (s.hyperplane ? s.margin : s.regionWidening)) return false;   // feasibility
    if (!s.hyperplane && vertexApplicability(P, v, eta) < -s.epsTheta) return false;            // applicability
    const Vec3 onFace = p - g * eta;
    const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v), ff = makeFeatureId(FeatureKind::Face, f);
    c = vertexIsA ? makePotentialContact(PairType::VertexFace, fv, ff, p, onFace, eta, g)
                  : makePotentialContact(PairType::VertexFace, ff, fv, onFace, p, -eta, g);
    return true;
}

// Edge i of A against edge j of B ([PEG] section 5.2 "edge-edge", applicability eqs. 31-32).
CS_HD bool edgeEdgeContact(const PolytopeView& A, int i, const PolytopeView& B, int j,
                           const NarrowPhaseSettings& s, PotentialContact& c) {
    const PolytopeEdge& ea = A.edges[i];
    const PolytopeEdge& eb = B.edges[j];
    const Vec3 pa = A.vertices[ea.tail], da = A.vertices[ea.head] - pa;
    const Vec3 pb = B.vertices[eb.tail], db = B.vertices[eb.head] - pb;
    // Bounding spheres of the two segments.
    const Real reach = Real(0.5) * (length(da) + length(db)) + s.margin + s.maxEdgeDepth;
    if (lengthSq((pb + Real(0.5) * db) - (pa + Real(0.5) * da)) > reach * reach) return false;
    Real u, w;
    if (!edgeEdgeClosest(pa, da, pb, db, s.parallelSin, u, w)) return false;
    const Real la = length(da), lb = length(db);
    if (u * la <= s.endpointTol || (Real(1) - u) * la <= s.endpointTol) return false;
    if (w * lb <= s.endpointTol || (Real(1) - w) * lb <= s.endpointTol) return false;
    // n = +-(e_a x e_b): keep the sign whose applicability is better.
    Vec3 n = normalize(cross(da, db));
    Real score = edgeEdgeApplicability(ea, eb, n);
    const Real flipped = edgeEdgeApplicability(ea, eb, -n);
    if (flipped > score) { n = -n; score = flipped; }
    if (score < -s.epsTheta && !s.hyperplane) return false;
    const Vec3 qa = pa + u * da, qb = pb + w * db;
    const Real gap = dot(qa - qb, n);
    if (gap > s.margin || gap < -s.maxEdgeDepth) return false;
    c = makePotentialContact(PairType::EdgeEdge, makeFeatureId(FeatureKind::Edge, i),
                             makeFeatureId(FeatureKind::Edge, j), qa, qb, n, gap);
    return true;
}

// Vertex v of P outside Q in the (relaxed) Voronoi region of edge j of Q, within the margin.
// psi = |v - q| with q the closest point, interior to the edge. The caller skips it when a
// vertex-face contact of v with either face of the edge exists (narrow_phase.h).
CS_HD bool vertexEdgeContact(const PolytopeView& P, int v, const PolytopeView& Q, int j, bool vertexIsA,
                             const NarrowPhaseSettings& s, PotentialContact& c) {
    const PolytopeEdge& e = Q.edges[j];
    const Vec3 p = P.vertices[v];
    const Vec3 a = Q.vertices[e.tail], d = Q.vertices[e.head] - a;
    const Real ld = length(d);
    const Real u = dot(p - a, d) / (ld * ld);
    if (u * ld <= s.endpointTol || (Real(1) - u) * ld <= s.endpointTol) return false;
    const Vec3 q = a + u * d;
    const Real dist = length(p - q);
    if (dist > s.margin || dist <= Real(1e-12)) return false;
    const Vec3 m = (p - q) / dist;   // from the edge towards the vertex
    if (edgeNormalConeScore(e, m) < -s.epsTheta) return false;     // Voronoi region of the edge
    if (vertexApplicability(P, v, m) < -s.epsTheta) return false;
    const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v), fe = makeFeatureId(FeatureKind::Edge, j);
    c = vertexIsA ? makePotentialContact(PairType::VertexEdge, fv, fe, p, q, m, dist)
                  : makePotentialContact(PairType::VertexEdge, fe, fv, q, p, -m, dist);
    return true;
}

// Vertex v of A and vertex u of B tip to tip: each in the other's (relaxed) Voronoi region.
CS_HD bool vertexVertexContact(const PolytopeView& A, int v, const PolytopeView& B, int u,
                               const NarrowPhaseSettings& s, PotentialContact& c) {
    const Vec3 pa = A.vertices[v], pb = B.vertices[u];
    const Real dist = length(pa - pb);
    if (dist > s.margin || dist <= Real(1e-12)) return false;
    const Vec3 n = (pa - pb) / dist;
    if (vertexApplicability(A, v, n) < -s.epsTheta) return false;    // -n in v's normal cone
    if (vertexApplicability(B, u, -n) < -s.epsTheta) return false;   // n in u's normal cone
    c = makePotentialContact(PairType::VertexVertex, makeFeatureId(FeatureKind::Vertex, v),
                             makeFeatureId(FeatureKind::Vertex, u), pa, pb, n, dist);
    return true;
}

// Sphere-sphere: psi = |c_A - c_B| - r_A - r_B along n = (c_A - c_B)/|c_A - c_B|.
CS_HD bool sphereSphereContact(Vec3 ca, Real ra, Vec3 cb, Real rb, const NarrowPhaseSettings& s,
                               PotentialContact& c) {
    const Vec3 d = ca - cb;
    const Real dist = length(d);
    const Real gap = dist - ra - rb;
    if (gap > s.margin) return false;
    const Vec3 n = dist > Real(1e-12) ? d / dist : Vec3{0, 0, 1};   // concentric: any axis
    const uint32_t id = makeFeatureId(FeatureKind::Sphere, 0);
    c = makePotentialContact(PairType::SphereSphere, id, id, ca - ra * n, cb + rb * n, n, gap);
    return true;
}

// Sphere against polytope Q, on the Voronoi feature of Q closest to the centre. Outside:
// exact Euclidean closest point, psi = |c - q| - r. Inside: the least penetrated face,
// psi = maxGap - r.
CS_HD bool spherePolytopeContact(Vec3 center, Real radius, bool sphereIsA, const PolytopeView& Q,
                                 const NarrowPhaseSettings& s, PotentialContact& c) {
    Real maxGap;
    PolygonClosest q = pointPolytopeClosest(Q, center, maxGap);
    if (maxGap - radius > s.margin) return false;
    Vec3 m;       // unit, from the polytope towards the sphere centre
    Real dist;    // signed distance of the centre from the polytope
    if (maxGap <= Real(0) || q.kind == 2) {
        m = Q.faces[q.index].normal;
        dist = maxGap <= Real(0) ? maxGap : std::sqrt(q.distSq);
    } else {
        dist = std::sqrt(q.distSq);
        m = (center - q.point) / dist;
    }
    const Real gap = dist - radius;
    if (gap > s.margin) return false;
    const PairType type = q.kind == 2 ? PairType::SphereFace
                        : q.kind == 1 ? PairType::SphereEdge : PairType::SphereVertex;
    const uint32_t polyId = makeFeatureId(FeatureKind(q.kind), q.index);
    const uint32_t sphereId = makeFeatureId(FeatureKind::Sphere, 0);
    const Vec3 onSphere = center - radius * m;
    c = sphereIsA ? makePotentialContact(type, sphereId, polyId, onSphere, q.point, m, gap)
                  : makePotentialContact(type, polyId, sphereId, q.point, onSphere, -m, gap);
    return true;
}

}  // namespace cs
