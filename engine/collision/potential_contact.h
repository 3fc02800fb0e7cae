// A potential contact: one pair of features of two convex parts that may touch within the step.
//
// The narrow phase reports these before bodies touch, within a margin, so that the contact model
// can linearize the gap (psi^{l+1} ~ psi^l + h G^T nu, [PEG] eqs. 5-9) and so that PEG can group
// several of them into I- and X-constraints ([PEG] sections 3-5). Each carries both feature ids.
#pragma once

#include <cstdint>

#include "engine/core/math.h"

namespace cs {

enum class FeatureKind : int { Vertex = 0, Edge = 1, Face = 2, Sphere = 3 };

// Feature id: kind in the top 2 bits, index below.
CS_HD uint32_t makeFeatureId(FeatureKind kind, int index) {
    return (uint32_t(kind) << 30) | uint32_t(index);
}
CS_HD FeatureKind featureKind(uint32_t id) { return FeatureKind(id >> 30); }
CS_HD int featureIndex(uint32_t id) { return int(id & 0x3fffffffu); }

enum class PairType : int {
    VertexFace = 0,   // vertex of A against face of B (or face of A against vertex of B, swapped)
    EdgeEdge = 1,
    VertexEdge = 2,
    VertexVertex = 3,
    SphereFace = 4,   // sphere against a polytope face (sphere cases below are the smooth ones)
    SphereEdge = 5,
    SphereVertex = 6,
    SphereSphere = 7,
};

struct PotentialContact {
    int shapeA, shapeB;       // convex parts; bodyA/bodyB follow from the model
    int bodyA, bodyB;
    uint32_t featureA, featureB;
    PairType type;
    Vec3 pointA;              // witness point on A, world frame
    Vec3 pointB;              // witness point on B, world frame
    Vec3 normal;              // unit, world frame, from B towards A: A moves along +normal to separate
    Real gap;                 // signed distance along normal: dot(pointA - pointB, normal); < 0 overlaps
};

}  // namespace cs
