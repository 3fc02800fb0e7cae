// Convex polytopes with full feature adjacency, in body-local coordinates.
//
// [PEG] Williams, Lu, Trinkle 2016, section 4: features are vertices, edges e = v_head - v_tail,
// and faces with counter-clockwise vertex loops and outward unit normals eta. Each edge has two
// tangents t1, t2 (eq. 25): t_k lies in the k-th adjacent face, is perpendicular to e and points
// from the edge into that face. These are what the applicability tests of section 4 need.
//
// Hulls are computed with qhull (never by hand); coplanar facets are merged so a box has
// 6 quadrilateral faces, 12 edges and 8 vertices.
#pragma once

#include <string>
#include <vector>

#include "engine/core/math.h"

namespace cs {

struct PolytopeEdge {
    int tail, head;      // vertex indices, e = v[head] - v[tail]
    int face[2];         // the two adjacent faces; face[0] walks tail->head counter-clockwise
    Vec3 t[2];           // t[k]: unit tangent in face[k], perpendicular to e, pointing into the face
};

struct PolytopeFace {
    Vec3 normal;         // outward unit normal eta
    Real offset;         // plane: dot(normal, x) = offset
    int firstVertex;     // into ConvexPolytope::faceVertices (counter-clockwise seen from outside)
    int vertexCount;
    int firstEdge;       // into ConvexPolytope::faceEdges, edge i runs faceVertices[i] -> [i+1]
};

struct ConvexPolytope {
    std::vector<Vec3> vertices;
    std::vector<PolytopeEdge> edges;
    std::vector<PolytopeFace> faces;
    std::vector<int> faceVertices;            // concatenated CCW loops
    std::vector<int> faceEdges;               // edge index per loop side, parallel to faceVertices
    std::vector<int> vertexEdgeStart;         // CSR: edges touching vertex v are
    std::vector<int> vertexEdges;             //   vertexEdges[vertexEdgeStart[v] .. vertexEdgeStart[v+1])
    Vec3 centroid{0, 0, 0};                   // volume centroid
    Real volume = 0;
    Real boundingRadius = 0;                  // max |v - centroid|

    int vertexCount() const { return (int)vertices.size(); }
    int edgeCount() const { return (int)edges.size(); }
    int faceCount() const { return (int)faces.size(); }
};

// Mass properties for a uniform density, about the centroid, in the polytope's frame.
struct MassProperties {
    Real mass = 0;
    Vec3 centerOfMass{0, 0, 0};
    Mat3 inertia = mat3Zero();   // about centerOfMass
};

// Result of building a shape: ok, or a one-line reason (degenerate input, too few points...).
struct BuildResult {
    bool ok = true;
    std::string error;
};

// Builds the convex hull of points with qhull and fills all adjacency. Fails (ok == false) on
// fewer than 4 points, coplanar or coincident point sets.
// maxVertices > 0: a hull with more vertices is refused before its faces are built and checked
// (that check is O(faces x vertices)).
BuildResult buildConvexHull(const std::vector<Vec3>& points, ConvexPolytope& out, int maxVertices = 0);

// Axis-aligned box with the given half extents, centred at the origin.
ConvexPolytope makeBox(Vec3 halfExtents);

// Right prism: a convex polygon in the xy plane (CCW) extruded from z = -halfDepth to +halfDepth.
BuildResult makePrism(const std::vector<Vec3>& polygonXY, Real halfDepth, ConvexPolytope& out);

// Hull of `count` points drawn uniformly on an ellipsoid with the given radii, seeded and
// reproducible across runs and platforms (own generator, not std::uniform_real_distribution).
BuildResult makeRandomPolytope(uint64_t seed, int count, Vec3 radii, ConvexPolytope& out);

// Hull of the vertices of an OBJ mesh (readObjVertices in obj_reader.h), scaled.
BuildResult loadObjHull(const std::string& path, Real scale, ConvexPolytope& out);

// Checks that every face is planar and convex and every vertex is on the inside of every face.
BuildResult validateConvex(const ConvexPolytope& p, Real tolerance);

MassProperties polytopeMassProperties(const ConvexPolytope& p, Real density);
MassProperties sphereMassProperties(Real radius, Real density);

// Translates the polytope so that its centroid is at the origin (bodies are stored about their
// centre of mass).
void recenter(ConvexPolytope& p, Vec3 offset);

}  // namespace cs
