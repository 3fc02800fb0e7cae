// Tet mesh generators (beam, capsule, and the box they share code with), the closed-surface check
// and OBJ surfaces: conforming, positively oriented, the closed forms' volumes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include "engine/fem/tet_mesh.h"
#include "engine/geometry/obj_reader.h"

using namespace cs;

namespace {

struct MeshReport {
    Real tetVolume = 0;        // sum of the tets' signed volumes
    Real boundaryVolume = 0;   // enclosed by the boundary triangles (divergence theorem)
    int overfullFaces = 0;     // faces shared by more than two tets (not conforming)
    bool closed = true;        // boundary edges each run once in each direction
    Real minVolume = 1e30;
};

// A mesh whose faces are each shared by at most two tets, whose boundary is closed and wound
// outwards, and whose tets fill exactly the volume that boundary encloses, has no gaps, no
// overlaps and no hanging nodes.
MeshReport inspect(const TetMesh& m) {
    MeshReport r;
    std::map<std::array<int, 3>, int> faces;
    for (int t = 0; t < int(m.tets.size()); ++t) {
        const Real v = tetVolume(m, t);
        r.tetVolume += v;
        r.minVolume = std::min(r.minVolume, v);
        static const int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
        for (const auto& f : kFace) {
            std::array<int, 3> key = {m.tets[t][f[0]], m.tets[t][f[1]], m.tets[t][f[2]]};
            std::sort(key.begin(), key.end());
            if (++faces[key] == 3) ++r.overfullFaces;
        }
    }
    std::map<std::pair<int, int>, int> edges;
    for (const auto& t : boundaryTriangles(m)) {
        r.boundaryVolume += dot(m.nodes[t[0]], cross(m.nodes[t[1]], m.nodes[t[2]])) / 6;
        for (int c = 0; c < 3; ++c) edges[{t[c], t[(c + 1) % 3]}]++;
    }
    for (const auto& [e, n] : edges) r.closed = r.closed && n == 1 && edges.count({e.second, e.first}) == 1;
    return r;
}

}  // namespace

TEST_CASE("fem generators: a beam is a conforming Kuhn grid with the beam's exact volume") {
    const TetMesh m = makeBeamTetMesh(2, Real(0.1), Real(0.05), 20, 2);   // 20 x 4 x 2 cells
    CHECK(m.tets.size() == 6u * 20 * 4 * 2);
    CHECK(m.nodes.size() == 21u * 5 * 3);
    std::string err;
    CHECK_MESSAGE(validateTetMesh(m, 0, &err), err);
    const MeshReport r = inspect(m);
    CHECK(r.overfullFaces == 0);
    CHECK(r.closed);
    CHECK(r.minVolume > 0);
    CHECK(r.tetVolume == doctest::Approx(2 * 0.2 * 0.1).epsilon(1e-12));
    CHECK(r.boundaryVolume == doctest::Approx(r.tetVolume).epsilon(1e-12));
    // Centred on the origin, the length along x.
    Real lo = 1e30, hi = -1e30;
    for (const Vec3& p : m.nodes) { lo = std::min(lo, p.x); hi = std::max(hi, p.x); }
    CHECK(lo == doctest::Approx(-1));
    CHECK(hi == doctest::Approx(1));
}

TEST_CASE("fem generators: a capsule is filled conformingly, close to the capsule's closed-form volume") {
    Real errors[2] = {0, 0};
    for (int resolution : {2, 4}) {
        TetMesh m;
        std::string err;
        const Real r = Real(0.1), h = Real(0.2);
        REQUIRE_MESSAGE(makeCapsuleTetMesh(r, h, resolution, m, &err), err);
        CHECK_MESSAGE(validateTetMesh(m, 0, &err), err);
        const MeshReport rep = inspect(m);
        CHECK(rep.overfullFaces == 0);
        CHECK(rep.closed);
        CHECK(rep.minVolume > 0);
        CHECK(rep.boundaryVolume == doctest::Approx(rep.tetVolume).epsilon(1e-9));   // 'p' keeps the surface
        // Inscribed polygons of 4 * resolution sides: a little less than pi r^2 (2h) + 4/3 pi r^3
        // (an inscribed 8-gon has 0.900 of the circle's area, a 16-gon 0.974; the caps' rings cost a
        // little more), closer when finer.
        const Real exact = Real(M_PI) * r * r * 2 * h + Real(4.0 / 3.0) * Real(M_PI) * r * r * r;
        const Real polygon = Real(2 * resolution) * std::sin(Real(M_PI) / Real(2 * resolution)) / Real(M_PI);
        CHECK(rep.tetVolume < exact);
        CHECK(rep.tetVolume > (polygon - Real(0.04)) * exact);
        errors[resolution / 4] = 1 - rep.tetVolume / exact;
        MESSAGE("capsule r 0.1 h 0.2 resolution " << resolution << ": " << m.nodes.size() << " nodes, " << m.tets.size()
                                                  << " tets, volume " << rep.tetVolume << " of " << exact);
        Real lo = 1e30, hi = -1e30;
        for (const Vec3& p : m.nodes) { lo = std::min(lo, p.x); hi = std::max(hi, p.x); }
        CHECK(lo == doctest::Approx(-(h + r)));
        CHECK(hi == doctest::Approx(h + r));
    }
    CHECK(errors[1] < errors[0] / 3);   // second order in the segment angle
    TetMesh m;
    std::string err;
    CHECK_FALSE(makeCapsuleTetMesh(-1, 1, 2, m, &err));
    CHECK(err.find("radius") != std::string::npos);
}

TEST_CASE("fem surfaces: holes, non-manifold edges and mixed winding are refused in one line") {
    // A tetrahedron's surface, wound inwards: accepted and turned outwards.
    std::vector<Vec3> v = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {5, 5, 5}};
    std::vector<std::array<int, 3>> inward = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    std::string err;
    std::vector<Vec3> w = v;
    auto tris = inward;
    REQUIRE_MESSAGE(checkClosedSurface(w, tris, &err), err);
    CHECK(w.size() == 4u);   // the loose vertex is dropped
    Real volume = 0;
    for (const auto& k : tris) volume += dot(w[k[0]], cross(w[k[1]], w[k[2]])) / 6;
    CHECK(volume == doctest::Approx(1.0 / 6));
    auto refuse = [&](std::vector<std::array<int, 3>> t, const char* expected) {
        std::vector<Vec3> p = v;
        std::string e;
        CHECK_FALSE(checkClosedSurface(p, t, &e));
        CHECK_MESSAGE(e.find(expected) != std::string::npos, e);
        CHECK(e.find('\n') == std::string::npos);
    };
    refuse({{0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}}, "open surface");   // a pyramid without its base
    refuse({{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}, {0, 1, 4}}, "non-manifold");
    refuse({{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 2, 3}}, "inconsistently wound");
    refuse({{0, 1, 1}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}}, "repeats a vertex");
    // Two tetrahedra glued along an edge's worth of triangles: edge (0, 1) in four triangles.
    std::vector<Vec3> pv = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, -1, 0}, {0, 0, -1}};
    std::vector<std::array<int, 3>> two = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3},
                                           {0, 4, 1}, {0, 1, 5}, {0, 5, 4}, {1, 4, 5}};
    std::string e;
    CHECK_FALSE(checkClosedSurface(pv, two, &e));
    CHECK_MESSAGE(e.find("non-manifold") != std::string::npos, e);
}

TEST_CASE("fem surfaces: an OBJ cube is read with its faces and tetrahedralized") {
    const auto dir = std::filesystem::temp_directory_path();
    const std::string path = (dir / ("cs_test_fem_cube_" + std::to_string(getpid()) + ".obj")).string();
    {
        std::ofstream f(path);
        f << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
          << "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";
    }
    std::vector<Vec3> v;
    std::vector<std::array<int, 3>> t;
    std::string err;
    REQUIRE_MESSAGE(readObjSurface(path, v, t, &err), err);
    CHECK(v.size() == 8u);
    CHECK(t.size() == 12u);   // quads fanned into two triangles
    REQUIRE_MESSAGE(checkClosedSurface(v, t, &err), err);
    TetMesh m;
    REQUIRE_MESSAGE(tetrahedralizeSurface(v, t, 0, m, &err), err);
    const MeshReport r = inspect(m);
    CHECK(r.tetVolume == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(r.closed);
    {
        std::ofstream f(path);
        f << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n";
    }
    v.clear();
    t.clear();
    CHECK_FALSE(readObjSurface(path, v, t, &err));
    CHECK(err.find('\n') == std::string::npos);
}
