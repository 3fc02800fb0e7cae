// A FEM boundary node against a rigid part or a boundary triangle (fem_contact.h), one candidate
// at a time: CS_HD, so World::step (fem_contact.cpp) and the step pipeline
// (engine/exec/pipeline_fem_contact.h, pipeline_fem_femcontact.h) compute the same contact from
// the same code.
#pragma once

#include "engine/collision/feature_geometry.h"
#include "engine/collision/potential_contact.h"
#include "engine/state.h"

namespace cs {

// Keys: the node in the upper word (top bit set, so no rigid shape pair collides with it), the
// rigid shape or the triangle (top bit set) in the lower; the rigid part's feature id.
CS_HD ContactKey femContactKey(int node, int shape, int tri, uint32_t feature) {
    const uint32_t lower = tri >= 0 ? (0x80000000u | uint32_t(tri)) : uint32_t(shape);
    return ContactKey{(uint64_t(0x80000000u | uint32_t(node)) << 32) | lower, feature};
}

// Node n at p (solver body nodeBody) against part `shape` of rigid body `body`: a sphere (centre,
// radius) when P is null, else the world-frame polytope *P. Fills c (the node is side A, a
// vertex; the normal points from the part to the node) and returns whether the gap is within
// the margin. Inside a polytope the face of largest gap holds the contact.
CS_HD bool femNodePartContact(int node, int nodeBody, int shape, int body, Vec3 p, const PolytopeView* P, Vec3 centre,
                              Real radius, Real margin, PotentialContact& c) {
    uint32_t feature;
    if (!P) {
        const Vec3 d = p - centre;
        const Real dist = length(d);
        c.normal = dist > Real(1e-12) ? d / dist : Vec3{0, 0, 1};
        c.gap = dist - radius;
        c.pointB = centre + radius * c.normal;
        feature = makeFeatureId(FeatureKind::Sphere, 0);
    } else {
        Real maxGap;
        const PolygonClosest q = pointPolytopeClosest(*P, p, maxGap);
        const Vec3 faceNormal = P->faces[q.kind == 2 ? q.index : 0].normal;
        if (maxGap <= 0) {
            c.gap = maxGap;
            c.normal = faceNormal;
        } else {
            c.gap = sqrt(q.distSq);
            c.normal = q.kind == 2 || c.gap < Real(1e-12) ? faceNormal : (p - q.point) / c.gap;
        }
        c.pointB = q.point;
        feature = makeFeatureId(FeatureKind(q.kind), q.index);
    }
    c.shapeA = -1;
    c.shapeB = shape;
    c.bodyA = nodeBody;
    c.bodyB = body;
    c.featureA = makeFeatureId(FeatureKind::Vertex, node);
    c.featureB = feature;
    c.type = PairType::VertexFace;
    c.pointA = p;
    return !(c.gap > margin);   // as fem_contact.cpp always had it (a NaN gap is kept)
}

// Whether node n is attached to rigid body `body` (bodies[start[n] .. start[n + 1]), from
// femNodeAttachments). Such a node has no contact with that body: the attachment's hard rows hold
// it at a fixed point of the body, so a contact row there is redundant, and a speculative one (the
// node within the margin of the body, as the ends of fem_extension's bars by their handles and
// pneunet_finger's base by its mount) only adds a hard row that Newton has to drive to zero.
CS_HD bool femNodeAttachedTo(int n, int body, const int* start, const int* bodies) {
    for (int k = start[n]; k < start[n + 1]; ++k)
        if (bodies[k] == body) return true;
    return false;
}

// Closest point of triangle (a, b, c) to p as barycentric weights (Ericson, Real-Time Collision
// Detection, 5.1.5, by Voronoi regions).
CS_HD void closestOnTriangle(Vec3 p, Vec3 a, Vec3 b, Vec3 c, Real w[3]) {
    const Vec3 ab = b - a, ac = c - a, ap = p - a;
    const Real d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) { w[0] = 1; w[1] = w[2] = 0; return; }
    const Vec3 bp = p - b;
    const Real d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) { w[1] = 1; w[0] = w[2] = 0; return; }
    const Real vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { const Real v = d1 / (d1 - d3); w[0] = 1 - v; w[1] = v; w[2] = 0; return; }
    const Vec3 cp = p - c;
    const Real d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) { w[2] = 1; w[0] = w[1] = 0; return; }
    const Real vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) { const Real v = d2 / (d2 - d6); w[0] = 1 - v; w[2] = v; w[1] = 0; return; }
    const Real va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        const Real v = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        w[1] = 1 - v; w[2] = v; w[0] = 0; return;
    }
    const Real denom = Real(1) / (va + vb + vc);
    w[1] = vb * denom;
    w[2] = vc * denom;
    w[0] = 1 - w[1] - w[2];
}

// A node at p against triangle (xa, xb, xc) of a FEM body, as fem_contact.h states it.
struct FemTriangleContact {
    Real gap;       // n . (p - q)
    Real w[3];      // q = w_a x_a + w_b x_b + w_c x_c
    Vec3 normal;    // the triangle's outward normal n
    Vec3 point;     // q
};

// The per-(node, triangle) test of the search for a node's triangle: fills out and returns true
// when the node's projection onto the triangle's plane lies in the closed triangle (all weights
// >= 0; outside it the neighbouring triangle is the better constraint) with a gap within the
// margin and not below bestGap, the largest gap so far (so of equal gaps the later triangle
// wins). The weights are the projection's, not a clamped closest point's: a node straight over a
// vertex or an edge, as on two meshes whose nodes line up, belongs to the triangles that hold it
// on their boundary (with strict weights > 0 it belonged to none of them, and a farther face, such
// as the side of the other jaw, took the node). A degenerate triangle is never a candidate.
CS_HD bool femNodeTriangleContact(Vec3 p, Vec3 xa, Vec3 xb, Vec3 xc, Real margin, Real bestGap,
                                  FemTriangleContact& out) {
    const Vec3 ab = xb - xa, ac = xc - xa, ap = p - xa;
    const Vec3 normalRaw = cross(ab, ac);
    const Real areaSq = lengthSq(normalRaw);
    if (!(areaSq > 0)) return false;
    out.w[1] = dot(cross(ap, ac), normalRaw) / areaSq;
    out.w[2] = dot(cross(ab, ap), normalRaw) / areaSq;
    out.w[0] = 1 - out.w[1] - out.w[2];
    if (out.w[0] < 0 || out.w[1] < 0 || out.w[2] < 0) return false;
    out.normal = normalize(normalRaw);
    out.point = out.w[0] * xa + out.w[1] * xb + out.w[2] * xc;
    out.gap = dot(out.normal, p - out.point);
    return !(out.gap > margin || out.gap < bestGap);
}

// Unit outward pseudo-normal of a boundary node: the normals of the boundary triangles holding it
// (nodeTris[nodeTriStart[n] .. nodeTriStart[n + 1]), ascending), each weighted by the triangle's
// angle at the node (Thuermer and Wuethrich's angle-weighted normal: on a flat face the face's
// normal, on a right-angled edge the bisector, whatever the triangulation). Zero for a node on no
// triangle.
CS_HD Vec3 femNodeNormal(int n, const int* nodeTriStart, const int* nodeTris, const int* triNodes, const Vec3* pos) {
    Vec3 sum{0, 0, 0};
    for (int k = nodeTriStart[n]; k < nodeTriStart[n + 1]; ++k) {
        const int* v = triNodes + 3 * nodeTris[k];
        const int at = v[0] == n ? 0 : v[1] == n ? 1 : 2;
        const Vec3 x = pos[v[at]], e1 = pos[v[(at + 1) % 3]] - x, e2 = pos[v[(at + 2) % 3]] - x;
        const Vec3 c = cross(e1, e2);
        const Real area2 = length(c), l1 = length(e1), l2 = length(e2);
        if (!(area2 > 0) || !(l1 > 0) || !(l2 > 0)) continue;
        const Real cosine = fmin(Real(1), fmax(Real(-1), dot(e1, e2) / (l1 * l2)));
        sum = sum + acos(cosine) / area2 * c;
    }
    const Real l = length(sum);
    return l > 0 ? sum / l : sum;
}

// Whether a boundary node (unit pseudo-normal nodeNormal) and a triangle (unit normal
// triNormal) face each other: normals more than 120 degrees apart. A node meets a triangle only
// from the outside of its own surface: the top of a jaw meets the underside of the other jaw
// (normals 180 degrees apart; 135 at the jaw's edge, 125 at a box corner), but not that jaw's
// side faces (90 degrees: the node lies along them) nor its top (0 degrees: the node is behind
// it, on the far side of the jaw). fem_fold's jaws, landing on each other, were pushed sideways
// by such pairs until the upper jaw slid off (issue 35).
CS_HD bool femFacing(Vec3 nodeNormal, Vec3 triNormal) { return dot(nodeNormal, triNormal) < Real(-0.5); }

// Whether node m is node n or shares a tet with it: nbrs[nbrStart[n] .. nbrStart[n + 1]) lists
// n's tet neighbours and n itself (femNodeNeighbours).
CS_HD bool femNeighbours(int n, int m, const int* nbrStart, const int* nbrs) {
    for (int k = nbrStart[n]; k < nbrStart[n + 1]; ++k)
        if (nbrs[k] == m) return true;
    return false;
}

// Self contact of node n (rest position p, reach l_n) with triangle tri (rest positions ra, rb,
// rc) at gap (fem_contact.h): no node of the triangle shares a tet with n (those triangles hold
// n's own elements, and the node rests on or behind them), and the gap is not below
// -min(d_rest / 2, l_n / 2), d_rest the rest distance of n to the triangle: a node deeper than
// that is nearer the far side of a part than the face it crossed (fem_fold: the bottom of the
// lower jaw under the top face of the upper jaw, 2.5 cm below it, was pulled up through the lower
// jaw). The neighbour rule replaced a distance one (no triangle within 1.1 l_n of n at rest), which
// also left out the faces across fem_fold's 2 cm slot wherever l_n exceeded 1.8 cm, so most of
// the jaws' nodes had no contact and the jaws landed into each other (issue 35).
CS_HD bool femSelfCandidate(int n, const int* tri, const int* nbrStart, const int* nbrs, Vec3 p, Real reach, Vec3 ra,
                            Vec3 rb, Vec3 rc, Real gap) {
    for (int k = 0; k < 3; ++k)
        if (femNeighbours(n, tri[k], nbrStart, nbrs)) return false;
    Real w[3];
    closestOnTriangle(p, ra, rb, rc, w);
    const Real restDist = length(p - (w[0] * ra + w[1] * rb + w[2] * rc));
    return gap > -Real(0.5) * fmin(restDist, reach);
}

// The box [lo, hi] of triangle (xa, xb, xc), the triangle grid's unit (fem_contact.cpp).
CS_HD void femTriangleBounds(Vec3 xa, Vec3 xb, Vec3 xc, Vec3& lo, Vec3& hi) {
    lo = hi = xa;
    for (int k = 0; k < 3; ++k) {
        lo[k] = fmin(fmin(lo[k], xb[k]), xc[k]);
        hi[k] = fmax(fmax(hi[k], xb[k]), xc[k]);
    }
}

// The triangle grid's cell coordinate of x (fem_contact.cpp: cells of side `cell`), and the bits
// of a coordinate its hash key keeps (cells 2^21 apart share a key).
CS_HD int femGridCell(Real x, Real cell) { return (int)floor(x / cell); }
constexpr uint32_t kFemGridKeyMask = 0x1fffff;

// Whether a triangle entered into the cells lo..hi of one axis is listed under a node's cell c on
// that axis: some x in [lo, hi] has the key bits of c (the grid's lookup, key aliasing included).
CS_HD bool femGridRangeHolds(int lo, int hi, int c) {
    return ((uint32_t(c) - uint32_t(lo)) & kFemGridKeyMask) <= uint32_t(hi) - uint32_t(lo);
}

}  // namespace cs
