// Checks a closed triangle surface before TetGen fills it (tet_mesh.h, checkClosedSurface).
//
// TetGen accepts many broken inputs and fails late or silently (an open surface gives no tets or
// tets outside it), so the loader checks the surface first and names the first bad edge: the
// message then tells the user what to fix in the modelling tool.
#include <algorithm>
#include <cmath>
#include <map>

#include "engine/fem/tet_mesh.h"

namespace cs {

namespace {

bool fail(std::string* error, const std::string& message) {
    if (error) *error = message;
    return false;
}

std::string edgeName(int a, int b) {   // 1-based, as OBJ files count vertices
    return "(" + std::to_string(a + 1) + ", " + std::to_string(b + 1) + ")";
}

}  // namespace

bool checkClosedSurface(std::vector<Vec3>& vertices, std::vector<std::array<int, 3>>& triangles, std::string* error) {
    if (triangles.size() < 4) return fail(error, "the surface has fewer than 4 triangles, so it encloses no volume");
    Real extent = 0;
    for (const Vec3& p : vertices) extent = std::max({extent, std::fabs(p.x), std::fabs(p.y), std::fabs(p.z)});
    // Directed edges: each undirected edge must appear once in each direction.
    std::map<std::pair<int, int>, int> directed;
    for (size_t t = 0; t < triangles.size(); ++t) {
        const auto& k = triangles[t];
        for (int c = 0; c < 3; ++c)
            if (k[c] < 0 || k[c] >= int(vertices.size()))
                return fail(error, "triangle " + std::to_string(t) + " names a missing vertex");
        if (k[0] == k[1] || k[1] == k[2] || k[2] == k[0])
            return fail(error, "triangle " + std::to_string(t) + " repeats a vertex (degenerate)");
        const Real area2 = length(cross(vertices[k[1]] - vertices[k[0]], vertices[k[2]] - vertices[k[0]]));
        if (!(area2 > Real(1e-12) * extent * extent))
            return fail(error, "triangle " + std::to_string(t) + " has zero area (degenerate)");
        for (int c = 0; c < 3; ++c) directed[{k[c], k[(c + 1) % 3]}]++;
    }
    for (const auto& [edge, count] : directed) {
        const auto [a, b] = edge;
        const auto back = directed.find({b, a});
        const int reverse = back == directed.end() ? 0 : back->second;
        if (count + reverse == 1)
            return fail(error, "open surface: edge " + edgeName(a, b) + " belongs to one triangle only (a hole)");
        if (count + reverse > 2)
            return fail(error, "non-manifold surface: edge " + edgeName(a, b) + " belongs to " +
                                   std::to_string(count + reverse) + " triangles");
        if (count != 1)
            return fail(error, "inconsistently wound surface: two triangles run edge " + edgeName(a, b) +
                                   " the same way (flip one)");
    }
    // Enclosed volume by the divergence theorem: sum over triangles of x0 . (x1 x x2) / 6.
    Real volume = 0;
    for (const auto& k : triangles) volume += dot(vertices[k[0]], cross(vertices[k[1]], vertices[k[2]])) / 6;
    if (!(std::fabs(volume) > Real(1e-12) * extent * extent * extent))
        return fail(error, "the surface encloses no volume");
    if (volume < 0)
        for (auto& k : triangles) std::swap(k[1], k[2]);
    // Drop unused vertices (TetGen would keep them as loose nodes).
    std::vector<int> remap(vertices.size(), -1);
    std::vector<Vec3> used;
    for (auto& k : triangles)
        for (int& v : k) {
            if (remap[v] < 0) {
                remap[v] = int(used.size());
                used.push_back(vertices[v]);
            }
            v = remap[v];
        }
    vertices = std::move(used);
    return true;
}

}  // namespace cs
