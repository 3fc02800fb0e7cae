// CPU scratch: a ConvexPolytope moved into the world frame, viewed as a PolytopeView.
//
// The narrow phase and the distance queries work in the world frame so that every gap, normal
// and witness point they report is already world-frame (potential_contact.h). Topology arrays
// (face loops, CSR vertex-edge lists) are shared with the source polytope; only the vectors are
// transformed: vertices, face normals and offsets, edge tangents t_k ([PEG] eq. 25), one
// element at a time by the CS_HD functions of shape_pair_hd.h (the GPU backend calls them too).
#pragma once

#include <vector>

#include "engine/collision/shape_pair_hd.h"

namespace cs {

struct WorldPolytope {
    std::vector<Vec3> vertices;
    std::vector<PolytopeEdge> edges;
    std::vector<PolytopeFace> faces;
    const ConvexPolytope* source = nullptr;
    Vec3 centroid{0, 0, 0};

    void assign(const ConvexPolytope& p, const Transform& X) {
        source = &p;
        vertices.resize(p.vertices.size());
        for (size_t i = 0; i < p.vertices.size(); ++i) vertices[i] = transformPoint(X, p.vertices[i]);
        edges.resize(p.edges.size());
        for (size_t i = 0; i < p.edges.size(); ++i) edges[i] = worldEdge(X, p.edges[i]);
        faces.resize(p.faces.size());
        for (size_t i = 0; i < p.faces.size(); ++i) faces[i] = worldFace(X, p.faces[i]);
        centroid = transformPoint(X, p.centroid);
    }

    PolytopeView view() const {
        PolytopeView v;
        v.vertices = vertices.data();
        v.edges = edges.data();
        v.faces = faces.data();
        v.faceVertices = source->faceVertices.data();
        v.faceEdges = source->faceEdges.data();
        v.vertexEdgeStart = source->vertexEdgeStart.data();
        v.vertexEdges = source->vertexEdges.data();
        v.vertexCount = (int)vertices.size();
        v.edgeCount = (int)edges.size();
        v.faceCount = (int)faces.size();
        v.centroid = centroid;
        v.boundingRadius = source->boundingRadius;
        return v;
    }
};

}  // namespace cs
