// The model as flat arrays, and the per-shape work of the broad and narrow phase over them.
//
// The CUDA backend cannot use Model (std::vector of ConvexPolytope): flattenModel concatenates
// every polytope's arrays, with per-polytope offsets, and the per-body and per-shape data the
// step needs. The functions below are CS_HD over FlatModelView (plain pointers): a kernel
// launches them one shape or one pair per thread, and the tests run the same functions on the
// CPU against the CPU narrow phase (tests/test_gpu_parity.cpp). The math itself is that of
// engine/collision/shape_pair_hd.h; nothing here computes a contact of its own.
//
// Per-shape world data (vertices, edge tangents, face planes) lives in arrays parallel to the
// shapes' polytope data: shape s owns [shapeFirstVertex[s], + its polytope's vertexCount) etc.
// Topology (face loops, vertex-edge lists) is shared with the polytope, as in world_polytope.h.
// This header needs no CUDA; it is host-only except for the CS_HD functions.
#pragma once

#include <vector>

#include "engine/collision/shape_pair_hd.h"
#include "engine/model.h"
#include "engine/solver/islands.h"

namespace cs {

struct FlatPolytope {
    int firstVertex, vertexCount;        // into vertices
    int firstEdge, edgeCount;            // into edges
    int firstFace, faceCount;            // into faces
    int firstFaceEdge;                   // into faceVertices / faceEdges (parallel)
    int firstVertexEdgeStart;            // into vertexEdgeStart (vertexCount + 1 entries)
    int firstVertexEdge;                 // into vertexEdges
    Vec3 centroid;
    Real boundingRadius;
};

// Plain view of the flattened model (device or host pointers).
struct FlatModelView {
    int bodyCount = 0, shapeCount = 0, jointCount = 0;
    // bodies
    const Real* invMass = nullptr;            // (bodies)
    const Mat3* invInertiaLocal = nullptr;    // (bodies)
    const Real* friction = nullptr;           // (bodies) material mu
    const Real* spawnTime = nullptr;          // (bodies)
    const Real* reach = nullptr;              // (bodies) islands.h bodyReach: the speed guard's lever
    const int* jointed = nullptr;             // (bodies) 1: in a joint (the speed guard's kMaxSpeed)
    // shapes
    const int* shapeType = nullptr;           // (shapes) ShapeType
    const int* shapeBody = nullptr;           // (shapes)
    const Transform* shapeLocal = nullptr;    // (shapes)
    const Real* shapeRadius = nullptr;        // (shapes)
    const int* shapePolytope = nullptr;       // (shapes) -1 for spheres
    const int* shapeFirstVertex = nullptr;    // (shapes) into the per-shape world arrays
    const int* shapeFirstEdge = nullptr;
    const int* shapeFirstFace = nullptr;
    // polytopes, local frame, concatenated
    const FlatPolytope* polytopes = nullptr;
    const Vec3* vertices = nullptr;
    const PolytopeEdge* edges = nullptr;
    const PolytopeFace* faces = nullptr;
    const int* faceEdges = nullptr;
    const int* faceVertices = nullptr;
    const int* vertexEdgeStart = nullptr;
    const int* vertexEdges = nullptr;
    const int* jointBodies = nullptr;         // (2 * joints) bodies that never collide with each other
};

// Per-shape world data written by shapeToWorld (sizes: shapes, and the totals of flattenModel).
struct ShapeWorldView {
    Transform* pose;          // (shapes)
    Aabb* aabb;               // (shapes) grown by the contact margin
    Vec3* centroid;           // (shapes) world centroid (sphere: centre)
    Vec3* vertices;           // (world vertices)
    PolytopeEdge* edges;      // (world edges)
    PolytopeFace* faces;      // (world faces)
};

// Host storage behind a FlatModelView; view() points into it.
struct FlatModel {
    std::vector<Real> invMass, friction, spawnTime, shapeRadius, reach;
    std::vector<int> jointed;
    std::vector<Mat3> invInertiaLocal;
    std::vector<int> shapeType, shapeBody, shapePolytope, shapeFirstVertex, shapeFirstEdge, shapeFirstFace;
    std::vector<Transform> shapeLocal;
    std::vector<FlatPolytope> polytopes;
    std::vector<Vec3> vertices;
    std::vector<PolytopeEdge> edges;
    std::vector<PolytopeFace> faces;
    std::vector<int> faceEdges, faceVertices, vertexEdgeStart, vertexEdges, jointBodies;
    int worldVertexCount = 0, worldEdgeCount = 0, worldFaceCount = 0;

    FlatModelView view() const {
        FlatModelView v;
        v.bodyCount = (int)invMass.size();
        v.shapeCount = (int)shapeType.size();
        v.jointCount = (int)jointBodies.size() / 2;
        v.invMass = invMass.data(); v.invInertiaLocal = invInertiaLocal.data();
        v.friction = friction.data(); v.spawnTime = spawnTime.data();
        v.reach = reach.data(); v.jointed = jointed.data();
        v.shapeType = shapeType.data(); v.shapeBody = shapeBody.data(); v.shapeLocal = shapeLocal.data();
        v.shapeRadius = shapeRadius.data(); v.shapePolytope = shapePolytope.data();
        v.shapeFirstVertex = shapeFirstVertex.data(); v.shapeFirstEdge = shapeFirstEdge.data();
        v.shapeFirstFace = shapeFirstFace.data();
        v.polytopes = polytopes.data(); v.vertices = vertices.data(); v.edges = edges.data();
        v.faces = faces.data(); v.faceEdges = faceEdges.data(); v.faceVertices = faceVertices.data();
        v.vertexEdgeStart = vertexEdgeStart.data(); v.vertexEdges = vertexEdges.data();
        v.jointBodies = jointBodies.data();
        return v;
    }
};

template <class T>
void appendAll(std::vector<T>& to, const std::vector<T>& from) {
    to.insert(to.end(), from.begin(), from.end());
}

inline FlatModel flattenModel(const Model& m) {
    FlatModel f;
    f.invMass = m.invMass;
    f.invInertiaLocal = m.invInertiaLocal;
    f.spawnTime = m.bodySpawnTime;
    for (int b = 0; b < m.bodyCount(); ++b) f.friction.push_back(m.materials[m.bodyMaterial[b]].friction);
    for (int b = 0; b < m.bodyCount(); ++b) f.reach.push_back(bodyReach(m, b));
    f.jointed.assign(m.bodyCount(), 0);   // World::substep's jointed: the bodies of m.joints
    for (const Joint& j : m.joints)
        for (int b : {j.bodyA, j.bodyB})
            if (b >= 0 && b < m.bodyCount()) f.jointed[b] = 1;
    for (const ConvexPolytope& p : m.polytopes) {
        FlatPolytope q;
        q.firstVertex = (int)f.vertices.size();
        q.vertexCount = p.vertexCount();
        q.firstEdge = (int)f.edges.size();
        q.edgeCount = p.edgeCount();
        q.firstFace = (int)f.faces.size();
        q.faceCount = p.faceCount();
        q.firstFaceEdge = (int)f.faceEdges.size();
        q.firstVertexEdgeStart = (int)f.vertexEdgeStart.size();
        q.firstVertexEdge = (int)f.vertexEdges.size();
        q.centroid = p.centroid;
        q.boundingRadius = p.boundingRadius;
        appendAll(f.vertices, p.vertices);
        appendAll(f.edges, p.edges);
        appendAll(f.faces, p.faces);
        appendAll(f.faceEdges, p.faceEdges);
        appendAll(f.faceVertices, p.faceVertices);
        appendAll(f.vertexEdgeStart, p.vertexEdgeStart);
        appendAll(f.vertexEdges, p.vertexEdges);
        f.polytopes.push_back(q);
    }
    for (int s = 0; s < m.shapeCount(); ++s) {
        f.shapeType.push_back(int(m.shapeType[s]));
        f.shapeBody.push_back(m.shapeBody[s]);
        f.shapeLocal.push_back(m.shapeLocal[s]);
        f.shapeRadius.push_back(m.shapeRadius[s]);
        const int p = m.shapeType[s] == ShapeType::Polytope ? m.shapePolytope[s] : -1;
        f.shapePolytope.push_back(p);
        f.shapeFirstVertex.push_back(f.worldVertexCount);
        f.shapeFirstEdge.push_back(f.worldEdgeCount);
        f.shapeFirstFace.push_back(f.worldFaceCount);
        if (p >= 0) {
            f.worldVertexCount += f.polytopes[p].vertexCount;
            f.worldEdgeCount += f.polytopes[p].edgeCount;
            f.worldFaceCount += f.polytopes[p].faceCount;
        }
    }
    for (const Joint& j : m.joints) {
        f.jointBodies.push_back(j.bodyA);
        f.jointBodies.push_back(j.bodyB);
    }
    return f;
}

// ---- per body and per shape ----------------------------------------------------------------

// World::isActive: spawned (emitters' bodies are dormant until spawnTime).
CS_HD bool bodyActiveAt(const FlatModelView& m, int b, Real time) { return time + Real(1e-9) >= m.spawnTime[b]; }

// Shape s into the world frame: pose, AABB (grown by margin), centroid, and for polytopes the
// world vertices, edge tangents and face planes (world_polytope.h does the same on the CPU).
CS_HD void shapeToWorld(const FlatModelView& m, const Vec3* bodyPos, const Quat* bodyRot, Real margin, int s,
                        const ShapeWorldView& w) {
    const int b = m.shapeBody[s];
    const Transform X = composeShapeTransform(bodyPos[b], bodyRot[b], m.shapeLocal[s]);
    w.pose[s] = X;
    const int p = m.shapePolytope[s];
    if (p < 0) {
        w.aabb[s] = sphereAabb(X.pos, m.shapeRadius[s], margin);
        w.centroid[s] = X.pos;
        return;
    }
    const FlatPolytope& P = m.polytopes[p];
    w.aabb[s] = polytopeAabb(m.vertices + P.firstVertex, P.vertexCount, X, margin);
    w.centroid[s] = transformPoint(X, P.centroid);
    for (int i = 0; i < P.vertexCount; ++i)
        w.vertices[m.shapeFirstVertex[s] + i] = transformPoint(X, m.vertices[P.firstVertex + i]);
    for (int i = 0; i < P.edgeCount; ++i) w.edges[m.shapeFirstEdge[s] + i] = worldEdge(X, m.edges[P.firstEdge + i]);
    for (int i = 0; i < P.faceCount; ++i) w.faces[m.shapeFirstFace[s] + i] = worldFace(X, m.faces[P.firstFace + i]);
}

// The world-frame PolytopeView of polytope shape s (after shapeToWorld).
CS_HD PolytopeView shapePolytopeView(const FlatModelView& m, const ShapeWorldView& w, int s) {
    const FlatPolytope& P = m.polytopes[m.shapePolytope[s]];
    PolytopeView v;
    v.vertices = w.vertices + m.shapeFirstVertex[s];
    v.edges = w.edges + m.shapeFirstEdge[s];
    v.faces = w.faces + m.shapeFirstFace[s];
    v.faceVertices = m.faceVertices + P.firstFaceEdge;
    v.faceEdges = m.faceEdges + P.firstFaceEdge;
    v.vertexEdgeStart = m.vertexEdgeStart + P.firstVertexEdgeStart;
    v.vertexEdges = m.vertexEdges + P.firstVertexEdge;
    v.vertexCount = P.vertexCount;
    v.edgeCount = P.edgeCount;
    v.faceCount = P.faceCount;
    v.centroid = w.centroid[s];
    v.boundingRadius = P.boundingRadius;
    return v;
}

// The narrow phase of one shape pair (collideShapes of narrow_phase.cpp on flat data): the
// contacts go to the sink with their shape and body fields set.
CS_HD void collideShapePair(const FlatModelView& m, const ShapeWorldView& w, int sa, int sb,
                            const NarrowPhaseSettings& s, ContactSink& sink) {
    const int first = sink.count;
    const bool sphereA = m.shapePolytope[sa] < 0, sphereB = m.shapePolytope[sb] < 0;
    if (sphereA && sphereB) {
        PotentialContact c;
        if (sphereSphereContact(w.pose[sa].pos, m.shapeRadius[sa], w.pose[sb].pos, m.shapeRadius[sb], s, c)) sink.push(c);
    } else if (sphereA) {
        collideSpherePolytopePair(w.pose[sa].pos, m.shapeRadius[sa], true, shapePolytopeView(m, w, sb), s, sink);
    } else if (sphereB) {
        collideSpherePolytopePair(w.pose[sb].pos, m.shapeRadius[sb], false, shapePolytopeView(m, w, sa), s, sink);
    } else {
        collidePolytopePair(shapePolytopeView(m, w, sa), shapePolytopeView(m, w, sb), s, sink);
    }
    for (int i = first, n = sink.stored(); i < n; ++i) {
        sink.out[i].shapeA = sa;
        sink.out[i].shapeB = sb;
        sink.out[i].bodyA = m.shapeBody[sa];
        sink.out[i].bodyB = m.shapeBody[sb];
    }
}

// findPairs' filter: different bodies, not both static, both active, not joined by a joint.
CS_HD bool shapePairAllowed(const FlatModelView& m, const uint8_t* bodyActive, int sa, int sb) {
    const int ba = m.shapeBody[sa], bb = m.shapeBody[sb];
    if (ba == bb) return false;
    if (m.invMass[ba] == Real(0) && m.invMass[bb] == Real(0)) return false;
    if (!bodyActive[ba] || !bodyActive[bb]) return false;
    for (int j = 0; j < m.jointCount; ++j) {
        const int ja = m.jointBodies[2 * j], jb = m.jointBodies[2 * j + 1];
        if ((ja == ba && jb == bb) || (ja == bb && jb == ba)) return false;
    }
    return true;
}

// Sweep over shapes sorted by the low end of their AABB on the sweep axis (broad_phase.cpp):
// sorted entry i meets the entries j > i whose low end lies within its extent. Writes the
// pairs' keys (shapeA << 32 | shapeB, shapeA < shapeB) to out when non-null; returns the count.
// sortedLo: the sorted low ends (inactive shapes sorted last with kHuge, never reached).
CS_HD int sweepShape(const FlatModelView& m, const uint8_t* bodyActive, const Aabb* aabb, const Real* sortedLo,
                     const int* sortedShape, int activeCount, int axis, int i, uint64_t* out) {
    const int a = sortedShape[i];
    const Real hiA = aabb[a].hi[axis];
    int count = 0;
    for (int j = i + 1; j < activeCount && sortedLo[j] <= hiA; ++j) {
        const int b = sortedShape[j];
        if (!aabbOverlap(aabb[a], aabb[b]) || !shapePairAllowed(m, bodyActive, a, b)) continue;
        if (out) out[count] = a < b ? (uint64_t(a) << 32) | uint32_t(b) : (uint64_t(b) << 32) | uint32_t(a);
        ++count;
    }
    return count;
}

}  // namespace cs
