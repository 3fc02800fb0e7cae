// Tet mesh generators (tet_mesh.h): boxes and beams as Kuhn-subdivided grids, capsules as a
// closed ring surface that TetGen fills. Balls are in tet_mesh.cpp (an icosphere through TetGen).
//
// Every generator returns positively oriented tets (volume > 0) and a conforming mesh: two tets
// meet in a whole face, a whole edge, a node or not at all. For the grids this holds because the
// Kuhn subdivision cuts every cube along the same main diagonal, so two cubes sharing a face cut
// it along the same face diagonal. For the capsule TetGen's 'p' switch keeps the input surface
// as the boundary and produces a constrained Delaunay mesh, conforming by construction.
#include <algorithm>
#include <cmath>

#include "engine/fem/tet_mesh.h"

namespace cs {

namespace {

// A grid of n[0] x n[1] x n[2] cubes (cuboids) over [-h, h], each cut into 6 tets along the
// paths 000 -> e_a -> e_a + e_b -> 111 over the 6 orders (a, b, c) of the axes.
TetMesh makeGridTetMesh(Vec3 h, const int n[3]) {
    TetMesh m;
    auto node = [&](int i, int j, int k) { return (k * (n[1] + 1) + j) * (n[0] + 1) + i; };
    for (int k = 0; k <= n[2]; ++k)
        for (int j = 0; j <= n[1]; ++j)
            for (int i = 0; i <= n[0]; ++i)
                m.nodes.push_back(Vec3{-h.x + 2 * h.x * i / n[0], -h.y + 2 * h.y * j / n[1], -h.z + 2 * h.z * k / n[2]});
    static const int kPerm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i)
                for (const auto& p : kPerm) {
                    int c[3] = {i, j, k};
                    std::array<int, 4> t;
                    t[0] = node(c[0], c[1], c[2]);
                    for (int s = 0; s < 3; ++s) {
                        ++c[p[s]];
                        t[s + 1] = node(c[0], c[1], c[2]);
                    }
                    m.tets.push_back(t);
                    // Odd permutations of the axes give negatively oriented paths: swap two nodes.
                    if (tetVolume(m, int(m.tets.size()) - 1) < 0) std::swap(m.tets.back()[2], m.tets.back()[3]);
                }
    return m;
}

// Appends the triangles between ring a and ring b (each `segments` vertices, a at lower x),
// wound so that their normals point away from the x axis.
void stitchRings(int a, int b, int segments, std::vector<std::array<int, 3>>& tris) {
    for (int s = 0; s < segments; ++s) {
        const int s1 = (s + 1) % segments;
        tris.push_back({a + s, a + s1, b + s});
        tris.push_back({a + s1, b + s1, b + s});
    }
}

}  // namespace

TetMesh makeBoxTetMesh(Vec3 h, int cells) {
    const Real longest = std::max({h.x, h.y, h.z});
    int n[3];
    for (int a = 0; a < 3; ++a) n[a] = std::max(1, int(std::lround(cells * h[a] / longest)));
    return makeGridTetMesh(h, n);
}

TetMesh makeBeamTetMesh(Real length, Real halfWidth, Real halfHeight, int lengthCells, int crossCells) {
    const Real shorter = std::min(halfWidth, halfHeight);
    const int n[3] = {std::max(1, lengthCells), std::max(1, int(std::lround(crossCells * halfWidth / shorter))),
                      std::max(1, int(std::lround(crossCells * halfHeight / shorter)))};
    return makeGridTetMesh(Vec3{length / 2, halfWidth, halfHeight}, n);
}

bool makeCapsuleTetMesh(Real radius, Real halfLength, int resolution, TetMesh& out, std::string* error) {
    if (!(radius > 0) || !(halfLength >= 0) || !std::isfinite(radius + halfLength) || resolution < 1 || resolution > 64) {
        if (error) *error = "capsule mesh: radius must be > 0, half_length >= 0, resolution 1..64";
        return false;
    }
    const Real pi = Real(3.14159265358979323846);
    const int segments = 4 * resolution;
    const int capRings = std::max(2, resolution);                       // rings per half ball, pole excluded
    const int cylinderSteps = std::max(0, int(std::lround(2 * halfLength * resolution / radius)));
    // Ring centres (x) and radii from the pole at -x to the pole at +x.
    std::vector<Real> ringX, ringR;
    for (int i = 1; i <= capRings; ++i) {
        const Real a = pi / 2 * Real(i) / Real(capRings);
        ringX.push_back(-halfLength - radius * std::cos(a));
        ringR.push_back(radius * std::sin(a));
    }
    for (int j = 1; j <= cylinderSteps; ++j) {
        ringX.push_back(-halfLength + 2 * halfLength * Real(j) / Real(cylinderSteps));
        ringR.push_back(radius);
    }
    if (halfLength > 0 && cylinderSteps == 0) {   // a very short cylinder: one ring at each end
        ringX.push_back(halfLength);
        ringR.push_back(radius);
    }
    for (int i = capRings - 1; i >= 1; --i) {
        const Real a = pi / 2 * Real(i) / Real(capRings);
        ringX.push_back(halfLength + radius * std::cos(a));
        ringR.push_back(radius * std::sin(a));
    }
    std::vector<Vec3> v;
    v.push_back(Vec3{-halfLength - radius, 0, 0});
    for (size_t r = 0; r < ringX.size(); ++r)
        for (int s = 0; s < segments; ++s) {
            const Real phi = 2 * pi * Real(s) / Real(segments);
            v.push_back(Vec3{ringX[r], ringR[r] * std::cos(phi), ringR[r] * std::sin(phi)});
        }
    v.push_back(Vec3{halfLength + radius, 0, 0});
    const int rings = int(ringX.size()), last = int(v.size()) - 1;
    std::vector<std::array<int, 3>> tris;
    for (int s = 0; s < segments; ++s) {   // pole fans
        const int s1 = (s + 1) % segments;
        tris.push_back({0, 1 + s1, 1 + s});
        const int top = 1 + (rings - 1) * segments;
        tris.push_back({top + s, top + s1, last});
    }
    for (int r = 0; r + 1 < rings; ++r) stitchRings(1 + r * segments, 1 + (r + 1) * segments, segments, tris);
    const Real edge = radius / resolution;
    return tetrahedralizeSurface(v, tris, edge * edge * edge, out, error);
}

}  // namespace cs
