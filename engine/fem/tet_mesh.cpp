// Tetrahedral meshes (tet_mesh.h).
#include "engine/fem/tet_mesh.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#define TETLIBRARY
#include <tetgen.h>

namespace cs {

namespace {

bool fail(std::string* error, const std::string& message) {
    if (error) *error = message;
    return false;
}

// Non-comment lines of a TetGen file, each as a token stream.
std::vector<std::string> dataLines(std::istream& in) {
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    }
    return lines;
}

}  // namespace

Real tetVolume(const TetMesh& mesh, int t) {
    const auto& k = mesh.tets[t];
    const Vec3 a = mesh.nodes[k[0]];
    return dot(mesh.nodes[k[1]] - a, cross(mesh.nodes[k[2]] - a, mesh.nodes[k[3]] - a)) / Real(6);
}

bool tetrahedralizeSurface(const std::vector<Vec3>& vertices, const std::vector<std::array<int, 3>>& triangles,
                           Real maxVolume, TetMesh& out, std::string* error) {
    if (vertices.size() < 4 || triangles.size() < 4) return fail(error, "the surface has fewer than 4 vertices or triangles");
    tetgenio in, result;
    in.numberofpoints = int(vertices.size());
    in.pointlist = new REAL[3 * vertices.size()];
    for (size_t i = 0; i < vertices.size(); ++i)
        for (int a = 0; a < 3; ++a) in.pointlist[3 * i + a] = vertices[i][a];
    in.numberoffacets = int(triangles.size());
    in.facetlist = new tetgenio::facet[triangles.size()];
    for (size_t f = 0; f < triangles.size(); ++f) {
        tetgenio::facet& facet = in.facetlist[f];
        tetgenio::init(&facet);
        facet.numberofpolygons = 1;
        facet.polygonlist = new tetgenio::polygon[1];
        tetgenio::init(&facet.polygonlist[0]);
        facet.polygonlist[0].numberofvertices = 3;
        facet.polygonlist[0].vertexlist = new int[3];
        for (int c = 0; c < 3; ++c) {
            const int v = triangles[f][c];
            if (v < 0 || v >= int(vertices.size())) return fail(error, "surface triangle " + std::to_string(f) + " names a missing vertex");
            facet.polygonlist[0].vertexlist[c] = v;
        }
    }
    // TetGen's own check first ('d': facets that intersect each other): on a self-intersecting
    // surface the meshing run itself can crash instead of throwing.
    try {
        tetgenio check;
        char detect[] = "dQ";
        tetrahedralize(detect, &in, &check);
        if (check.numberoftrifaces > 0)
            return fail(error, "the surface intersects itself (" + std::to_string(check.numberoftrifaces) +
                                   " triangles cross others)");
    } catch (int) {
        return fail(error, "the surface intersects itself or is degenerate (TetGen's check failed)");
    }
    char switches[64];
    if (maxVolume > 0) std::snprintf(switches, sizeof switches, "pq1.5a%.9gQ", double(maxVolume));
    else std::snprintf(switches, sizeof switches, "pq1.5Q");
    try {
        tetrahedralize(switches, &in, &result);
    } catch (int code) {
        const char* why = code == 3 ? "the surface intersects itself" :
                          code == 4 ? "the surface has a feature too small for TetGen's tolerance" :
                          code == 1 ? "out of memory" : "TetGen failed (is the surface closed and manifold?)";
        return fail(error, std::string("tetrahedralization: ") + why);
    }
    if (result.numberoftetrahedra <= 0) return fail(error, "tetrahedralization produced no tets (is the surface closed?)");
    out = TetMesh{};
    for (int i = 0; i < result.numberofpoints; ++i)
        out.nodes.push_back(Vec3{Real(result.pointlist[3 * i]), Real(result.pointlist[3 * i + 1]), Real(result.pointlist[3 * i + 2])});
    const int base = result.firstnumber;
    for (int t = 0; t < result.numberoftetrahedra; ++t) {
        std::array<int, 4> k;
        for (int c = 0; c < 4; ++c) k[c] = result.tetrahedronlist[t * result.numberofcorners + c] - base;
        out.tets.push_back(k);
        if (tetVolume(out, t) < 0) std::swap(out.tets.back()[2], out.tets.back()[3]);
    }
    return true;
}

bool makeSphereTetMesh(Real radius, int subdivisions, int resolution, TetMesh& out, std::string* error) {
    if (!(radius > 0) || subdivisions < 0 || subdivisions > 5 || resolution < 1)
        return fail(error, "sphere mesh: radius must be > 0, subdivisions 0..5, resolution >= 1");
    // Icosahedron, each triangle split in four per subdivision, vertices pushed onto the sphere.
    const Real g = (1 + std::sqrt(Real(5))) / 2;
    std::vector<Vec3> v = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0}, {0, -1, g}, {0, 1, g},
                           {0, -1, -g}, {0, 1, -g}, {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    std::vector<std::array<int, 3>> f = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                                         {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
                                         {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    for (int s = 0; s < subdivisions; ++s) {
        std::map<std::pair<int, int>, int> mid;
        auto middle = [&](int a, int b) {
            const auto key = std::minmax(a, b);
            auto it = mid.find(key);
            if (it != mid.end()) return it->second;
            v.push_back(Real(0.5) * (v[a] + v[b]));
            return mid[key] = int(v.size()) - 1;
        };
        std::vector<std::array<int, 3>> next;
        for (const auto& t : f) {
            const int ab = middle(t[0], t[1]), bc = middle(t[1], t[2]), ca = middle(t[2], t[0]);
            next.push_back({t[0], ab, ca});
            next.push_back({t[1], bc, ab});
            next.push_back({t[2], ca, bc});
            next.push_back({ab, bc, ca});
        }
        f = std::move(next);
    }
    for (Vec3& p : v) p = radius * normalize(p);
    const Real edge = radius / resolution;
    return tetrahedralizeSurface(v, f, edge * edge * edge, out, error);
}

bool loadTetGenFiles(const std::string& nodePath, const std::string& elePath, TetMesh& out, std::string* error) {
    std::ifstream nodeFile(nodePath), eleFile(elePath);
    if (!nodeFile) return fail(error, "cannot read tet mesh nodes " + nodePath);
    if (!eleFile) return fail(error, "cannot read tet mesh elements " + elePath);
    const std::vector<std::string> nodes = dataLines(nodeFile), eles = dataLines(eleFile);
    constexpr long kMaxCount = 2000000;
    long count = 0, dim = 0, corners = 0;
    if (nodes.empty() || !(std::istringstream(nodes[0]) >> count >> dim) || dim != 3 || count < 4 ||
        count > kMaxCount || long(nodes.size()) < count + 1)
        return fail(error, nodePath + ": expected a header 'count 3 ...' (4 to 2000000 nodes) and that many node lines");
    if (eles.empty() || !(std::istringstream(eles[0]) >> corners) || eles.size() < 2)
        return fail(error, elePath + ": expected a header 'count 4 ...' and element lines");
    long tetCount = 0;
    std::istringstream(eles[0]) >> tetCount >> corners;
    if (corners != 4 || tetCount < 1 || tetCount > kMaxCount || long(eles.size()) < tetCount + 1)
        return fail(error, elePath + ": expected a header 'count 4 ...' (1 to 2000000 linear tets) and that many lines");
    out = TetMesh{};
    long base = -1;
    for (long i = 1; i <= count; ++i) {
        std::istringstream line(nodes[i]);
        long index;
        double x, y, z;
        if (!(line >> index >> x >> y >> z) || !std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z))
            return fail(error, nodePath + ": node line " + std::to_string(i) + " is not 'index x y z' with finite numbers");
        if (base < 0) base = index;
        if (index != base + i - 1) return fail(error, nodePath + ": node indices must be consecutive");
        out.nodes.push_back(Vec3{Real(x), Real(y), Real(z)});
    }
    for (long t = 1; t <= tetCount; ++t) {
        std::istringstream line(eles[t]);
        long index, k[4];
        if (!(line >> index >> k[0] >> k[1] >> k[2] >> k[3]))
            return fail(error, elePath + ": element line " + std::to_string(t) + " is not 'index a b c d'");
        std::array<int, 4> tet;
        for (int c = 0; c < 4; ++c) {
            if (k[c] - base < 0 || k[c] - base >= count)
                return fail(error, elePath + ": element " + std::to_string(index) + " names node " + std::to_string(k[c]) + ", not in the .node file");
            tet[c] = int(k[c] - base);
        }
        out.tets.push_back(tet);
    }
    return true;
}

bool validateTetMesh(const TetMesh& mesh, Real minVolume, std::string* error) {
    std::vector<char> used(mesh.nodes.size(), 0);
    for (size_t t = 0; t < mesh.tets.size(); ++t) {
        for (int k : mesh.tets[t]) {
            if (k < 0 || k >= int(mesh.nodes.size())) return fail(error, "tet " + std::to_string(t) + " names a missing node");
            used[k] = 1;
        }
        const Real v = tetVolume(mesh, int(t));
        if (!(v > minVolume))
            return fail(error, "tet " + std::to_string(t) + (v < 0 ? " is inverted" : " is degenerate") + " (volume " +
                                   std::to_string(double(v)) + " m^3)");
    }
    for (size_t i = 0; i < used.size(); ++i)
        if (!used[i]) return fail(error, "node " + std::to_string(i) + " belongs to no tet");
    return true;
}

std::vector<Real> lumpedNodeMasses(const TetMesh& mesh, Real density) {
    std::vector<Real> m(mesh.nodes.size(), 0);
    for (size_t t = 0; t < mesh.tets.size(); ++t)
        for (int k : mesh.tets[t]) m[k] += density * tetVolume(mesh, int(t)) / 4;
    return m;
}

std::vector<std::array<int, 3>> boundaryTriangles(const TetMesh& mesh) {
    // Faces opposite each node, wound so that their normal points away from that node.
    static const int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    std::map<std::array<int, 3>, std::pair<int, std::array<int, 3>>> faces;   // sorted key -> count, oriented
    for (const auto& t : mesh.tets)
        for (const auto& f : kFace) {
            std::array<int, 3> tri = {t[f[0]], t[f[1]], t[f[2]]}, key = tri;
            std::sort(key.begin(), key.end());
            auto& entry = faces[key];
            entry.first++;
            entry.second = tri;
        }
    std::vector<std::array<int, 3>> out;
    for (const auto& [key, entry] : faces)
        if (entry.first == 1) out.push_back(entry.second);
    return out;
}

}  // namespace cs
