// The vertices of an OBJ file, for convex parts (scene `obj` shapes, loadObjHull).
//
// Only `v` lines matter to a convex hull. The file is checked before tinyobjloader parses it:
// it must be a regular file of at most maxBytes, every `v` line must hold three to six decimal
// numbers (x y z, optional w or colour) that are finite in double precision, and there may be at
// most maxVertices of them. tinyobjloader then parses the text from memory with no material
// reader, so a `mtllib` line never opens a file (a material library naming a device would be
// read forever, and materials are not used). A "nan", "inf" or "abc", which tinyobjloader reads
// as 0, is an error naming its line.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/core/math.h"

namespace cs {

struct ObjLimits {
    int maxVertices = 100000;
    long long maxBytes = 16ll << 20;
};

// Appends nothing and returns false with a one-line *error ("mesh.obj:12: ...") on bad input.
bool readObjVertices(const std::string& path, std::vector<Vec3>& out, std::string* error,
                     const ObjLimits& limits = {});

// The vertices and faces of an OBJ file, faces fan-triangulated (deformable bodies' closed
// surfaces, engine/fem). The same checks as readObjVertices; a face naming a missing vertex is an
// error. Whether the surface is closed is the caller's check (checkClosedSurface).
bool readObjSurface(const std::string& path, std::vector<Vec3>& vertices, std::vector<std::array<int, 3>>& triangles,
                    std::string* error, const ObjLimits& limits = {});

}  // namespace cs
