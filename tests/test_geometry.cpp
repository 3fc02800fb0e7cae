// Geometry: hull adjacency ([PEG] section 4 conventions), mass properties against closed forms,
// the overlap-volume metric ([PEG] section 6) against closed forms and Monte-Carlo estimates,
// and degenerate input.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/geometry/overlap_volume.h"
#include "engine/geometry/polytope.h"

using namespace cs;

namespace {

constexpr Real kPi = Real(3.14159265358979323846);

// Small deterministic generator for the Monte-Carlo estimates (independent of the engine's).
struct TestRng {
    uint64_t s;
    double uniform() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return double(s >> 11) * (1.0 / 9007199254740992.0);
    }
};

bool insidePolytope(const ConvexPolytope& p, Vec3 x) {
    for (const PolytopeFace& f : p.faces)
        if (dot(f.normal, x) > f.offset) return false;
    return true;
}

// Checks every adjacency convention of polytope.h on p.
void checkAdjacency(const ConvexPolytope& p) {
    const Real tol = Real(1e-9);
    CHECK(p.vertexCount() - p.edgeCount() + p.faceCount() == 2);
    CHECK(validateConvex(p, Real(1e-9)).ok);
    REQUIRE(p.faceEdges.size() == p.faceVertices.size());
    for (int f = 0; f < p.faceCount(); ++f) {
        const PolytopeFace& face = p.faces[f];
        CHECK(std::fabs(length(face.normal) - 1) < tol);
        // Outward: the centroid is strictly inside.
        CHECK(dot(face.normal, p.centroid) < face.offset);
        Vec3 area{0, 0, 0};
        for (int i = 0; i < face.vertexCount; ++i) {
            int a = p.faceVertices[face.firstVertex + i];
            int b = p.faceVertices[face.firstVertex + (i + 1) % face.vertexCount];
            area += cross(p.vertices[a], p.vertices[b]);
            // faceEdges[i] joins loop vertex i and i+1, and this face is one of its faces.
            const PolytopeEdge& e = p.edges[p.faceEdges[face.firstEdge + i]];
            bool forward = e.tail == a && e.head == b, backward = e.tail == b && e.head == a;
            CHECK((forward || backward));
            // face[0] walks tail -> head, face[1] head -> tail.
            CHECK(e.face[forward ? 0 : 1] == f);
        }
        // CCW seen from outside: the loop's area vector points along the outward normal.
        CHECK(dot(area, face.normal) > 0);
    }
    for (const PolytopeEdge& e : p.edges) {
        Vec3 ev = normalize(p.vertices[e.head] - p.vertices[e.tail]);
        Vec3 mid = Real(0.5) * (p.vertices[e.head] + p.vertices[e.tail]);
        for (int k = 0; k < 2; ++k) {
            const PolytopeFace& face = p.faces[e.face[k]];
            CHECK(std::fabs(length(e.t[k]) - 1) < tol);
            CHECK(std::fabs(dot(e.t[k], ev)) < tol);
            CHECK(std::fabs(dot(e.t[k], face.normal)) < tol);
            // Into the face: a step along t from the edge midpoint stays inside the face polygon,
            // i.e. towards the face's vertex centroid.
            Vec3 fc{0, 0, 0};
            for (int i = 0; i < face.vertexCount; ++i)
                fc += p.vertices[p.faceVertices[face.firstVertex + i]];
            fc = fc / Real(face.vertexCount);
            CHECK(dot(e.t[k], fc - mid) > 0);
        }
    }
    // Vertex -> edge CSR lists exactly the edges touching each vertex.
    REQUIRE((int)p.vertexEdgeStart.size() == p.vertexCount() + 1);
    int total = 0;
    for (int v = 0; v < p.vertexCount(); ++v) {
        for (int k = p.vertexEdgeStart[v]; k < p.vertexEdgeStart[v + 1]; ++k) {
            const PolytopeEdge& e = p.edges[p.vertexEdges[k]];
            CHECK((e.tail == v || e.head == v));
        }
        total += p.vertexEdgeStart[v + 1] - p.vertexEdgeStart[v];
        CHECK(p.vertexEdgeStart[v + 1] - p.vertexEdgeStart[v] >= 3);
    }
    CHECK(total == 2 * p.edgeCount());
}

}  // namespace

TEST_CASE("geometry: box hull has 8 vertices, 12 edges, 6 quadrilateral faces") {
    ConvexPolytope box = makeBox({1, 2, 3});
    CHECK(box.vertexCount() == 8);
    CHECK(box.edgeCount() == 12);
    REQUIRE(box.faceCount() == 6);
    for (const PolytopeFace& f : box.faces) CHECK(f.vertexCount == 4);
    CHECK(box.volume == doctest::Approx(48.0).epsilon(1e-12));
    CHECK(length(box.centroid) < 1e-12);
    CHECK(box.boundingRadius == doctest::Approx(std::sqrt(14.0)).epsilon(1e-12));
    checkAdjacency(box);
}

TEST_CASE("geometry: random hulls satisfy Euler and the eq. 25 tangent conventions") {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        ConvexPolytope p;
        BuildResult r = makeRandomPolytope(seed, 8 + int(seed) * 3, {1.0, 0.6, 0.8}, p);
        REQUIRE(r.ok);
        checkAdjacency(p);
    }
    // Same seed, same polytope.
    ConvexPolytope a, b;
    makeRandomPolytope(42, 20, {1, 1, 1}, a);
    makeRandomPolytope(42, 20, {1, 1, 1}, b);
    REQUIRE(a.vertexCount() == b.vertexCount());
    for (int i = 0; i < a.vertexCount(); ++i) CHECK(length(a.vertices[i] - b.vertices[i]) == 0);
}

TEST_CASE("geometry: prism and OBJ hulls") {
    ConvexPolytope hex;
    std::vector<Vec3> poly;
    for (int i = 0; i < 6; ++i)
        poly.push_back({std::cos(i * kPi / 3), std::sin(i * kPi / 3), 0});
    REQUIRE(makePrism(poly, 0.5, hex).ok);
    CHECK(hex.vertexCount() == 12);
    CHECK(hex.edgeCount() == 18);
    CHECK(hex.faceCount() == 8);
    CHECK(hex.volume == doctest::Approx(3 * std::sqrt(3.0) / 2).epsilon(1e-12));
    checkAdjacency(hex);

    ConvexPolytope oct;
    BuildResult r = loadObjHull(CS_SOURCE_DIR "/assets/meshes/octahedron.obj", 2.0, oct);
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(oct.vertexCount() == 6);
    CHECK(oct.edgeCount() == 12);
    CHECK(oct.faceCount() == 8);
    CHECK(oct.volume == doctest::Approx(4.0 / 3.0 * 8).epsilon(1e-12));  // (4/3) a^3, a = 2
    checkAdjacency(oct);

    // Truncated square pyramid (frustum): base 2x2 at z = 0, top 1x1 at z = 1, an interior
    // point in the file that must not become a vertex. V = h/3 (A1 + A2 + sqrt(A1 A2)).
    ConvexPolytope frustum;
    r = loadObjHull(CS_SOURCE_DIR "/assets/meshes/frustum.obj", 1.0, frustum);
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(frustum.vertexCount() == 8);
    CHECK(frustum.faceCount() == 6);
    CHECK(frustum.volume == doctest::Approx(7.0 / 3.0).epsilon(1e-12));
    checkAdjacency(frustum);
}

TEST_CASE("geometry: degenerate input fails cleanly") {
    ConvexPolytope p;
    BuildResult r = buildConvexHull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, p);
    CHECK(!r.ok);
    CHECK(!r.error.empty());
    CHECK(r.error.find('\n') == std::string::npos);

    r = buildConvexHull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0.5, 0.2, 0}}, p);  // coplanar
    CHECK(!r.ok);
    CHECK(r.error.find('\n') == std::string::npos);

    r = buildConvexHull({{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, p);  // duplicates
    CHECK(!r.ok);

    r = buildConvexHull({{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}}, p);  // collinear
    CHECK(!r.ok);

    r = buildConvexHull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, NAN}}, p);
    CHECK(!r.ok);

    r = loadObjHull(CS_SOURCE_DIR "/assets/meshes/does_not_exist.obj", 1.0, p);
    CHECK(!r.ok);
    CHECK(r.error.find("does_not_exist.obj") != std::string::npos);
    CHECK(r.error.find('\n') == std::string::npos);

    r = makeRandomPolytope(1, 3, {1, 1, 1}, p);
    CHECK(!r.ok);
    r = makePrism({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, 1.0, p);  // collinear polygon
    CHECK(!r.ok);

    // A hull that was built after failures still works (qhull state is per call).
    CHECK(makeRandomPolytope(7, 12, {1, 1, 1}, p).ok);
}
