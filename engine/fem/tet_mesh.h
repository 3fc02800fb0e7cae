// Tetrahedral meshes for deformable bodies: generators, TetGen's .node/.ele files, closed
// surfaces tetrahedralized by Debian's TetGen library (libtet), checks with one-line errors, the
// lumped masses and the boundary surface that the renderer and the contact stage use.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/core/math.h"

namespace cs {

struct TetMesh {
    std::vector<Vec3> nodes;                 // (nodes) rest positions, m
    std::vector<std::array<int, 4>> tets;    // (tets) node indices, positively oriented
};

// A box of half extents h split into cells^3-ish cells (`cells` along the longest side, the others
// in proportion, at least 1), each cube cut into 6 tets along its main diagonal (the Kuhn
// subdivision: neighbouring cubes share their face diagonals, so the mesh is conforming).
TetMesh makeBoxTetMesh(Vec3 halfExtents, int cells);

// A beam along x: length x (2 halfWidth) along y x (2 halfHeight) along z, centred on the origin,
// `lengthCells` cubes along x and `crossCells` along the shorter of y and z (the other in
// proportion, at least 1), Kuhn-subdivided like the box (tet_generators.cpp).
TetMesh makeBeamTetMesh(Real length, Real halfWidth, Real halfHeight, int lengthCells, int crossCells);

// A capsule along x: a cylinder of the given radius and half length (of the straight part)
// capped by two half balls, centred on the origin. The surface has 4 * resolution segments
// around and rings about radius / resolution apart; TetGen fills it with a largest tet volume
// of (radius / resolution)^3 (tet_generators.cpp).
bool makeCapsuleTetMesh(Real radius, Real halfLength, int resolution, TetMesh& out, std::string* error);

// A ball of the given radius: an icosphere surface (`subdivisions` 0..5) tetrahedralized by TetGen
// with a quality bound and a largest tet volume of (radius / resolution)^3.
bool makeSphereTetMesh(Real radius, int subdivisions, int resolution, TetMesh& out, std::string* error);

// A closed, consistently oriented triangle surface (vertices, triangles as index triples)
// tetrahedralized by TetGen ('p' keeps the surface, 'q' bounds the radius-edge ratio, 'a' the
// volume; maxVolume <= 0: no bound). A surface whose triangles cross each other is refused
// first (TetGen's 'd' check). Fails with TetGen's reason in one line.
bool tetrahedralizeSurface(const std::vector<Vec3>& vertices, const std::vector<std::array<int, 3>>& triangles,
                           Real maxVolume, TetMesh& out, std::string* error);

// A triangle surface fit to fill with tets (surface_check.cpp): no triangle repeats a vertex or
// has zero area, every edge belongs to exactly two triangles that run it in opposite directions
// (closed, manifold along edges, consistently wound), and the enclosed volume is nonzero.
// Triangles wound inwards are turned outwards; vertices no triangle uses are dropped.
bool checkClosedSurface(std::vector<Vec3>& vertices, std::vector<std::array<int, 3>>& triangles, std::string* error);

// TetGen's text formats (.node: "n 3 attrs markers" then "i x y z ...", .ele: "m 4 attrs" then
// "i a b c d ..."; numbering from 0 or 1 as the file's first index says, '#' comments).
bool loadTetGenFiles(const std::string& nodePath, const std::string& elePath, TetMesh& out, std::string* error);

// Indices in range, every tet with a volume above minVolume (inverted and degenerate tets are
// refused, named by index), every node used. Negatively oriented tets are an error, not fixed
// silently: a file listing them has another convention, and the user should know.
bool validateTetMesh(const TetMesh& mesh, Real minVolume, std::string* error);

// Lumped node masses: each tet's rho V spread equally over its four nodes ([NSN] section 9.3).
std::vector<Real> lumpedNodeMasses(const TetMesh& mesh, Real density);

// The boundary: faces that belong to one tet only, oriented outwards.
std::vector<std::array<int, 3>> boundaryTriangles(const TetMesh& mesh);

Real tetVolume(const TetMesh& mesh, int tet);

}  // namespace cs
