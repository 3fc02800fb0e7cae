// A FEM boundary node against a rigid part (fem_contact.h), one candidate at a time: CS_HD, so
// World::step (fem_contact.cpp) and the step pipeline (engine/exec/pipeline_fem_contact.h)
// compute the same contact from the same code.
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

}  // namespace cs
