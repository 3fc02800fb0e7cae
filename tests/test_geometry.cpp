// Geometry: hull adjacency ([PEG] section 4 conventions), mass properties against closed forms,
// the overlap-volume metric ([PEG] section 6) against closed forms and Monte-Carlo estimates,
// and degenerate input.
#include <doctest/doctest.h>

#include <ctime>
#include <cmath>
#include <cstdio>

#include "engine/geometry/overlap_volume.h"
#include "engine/geometry/polytope.h"

using namespace cs;

namespace {

constexpr Real kPi = Real(3.14159265358979323846);
// Tolerances that hold in double; a float build (CS_REAL_FLOAT) gets ones scaled to its epsilon.
constexpr bool kDouble = sizeof(Real) == sizeof(double);
constexpr double kTight = kDouble ? 1e-12 : 2e-5;   // closed forms evaluated directly
constexpr double kLoose = kDouble ? 1e-9 : 2e-4;    // after a qhull run, clipping or a solve

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
    const Real tol = Real(kLoose);
    CHECK(p.vertexCount() - p.edgeCount() + p.faceCount() == 2);
    CHECK(validateConvex(p, Real(kLoose)).ok);
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
    CHECK(box.volume == doctest::Approx(48.0).epsilon(kTight).scale(0));
    CHECK(length(box.centroid) < kTight);
    CHECK(box.boundingRadius == doctest::Approx(std::sqrt(14.0)).epsilon(kTight).scale(0));
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
    CHECK(hex.volume == doctest::Approx(3 * std::sqrt(3.0) / 2).epsilon(kTight).scale(0));
    checkAdjacency(hex);

    ConvexPolytope oct;
    BuildResult r = loadObjHull(CS_SOURCE_DIR "/assets/meshes/octahedron.obj", 2.0, oct);
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(oct.vertexCount() == 6);
    CHECK(oct.edgeCount() == 12);
    CHECK(oct.faceCount() == 8);
    CHECK(oct.volume == doctest::Approx(4.0 / 3.0 * 8).epsilon(kTight).scale(0));  // (4/3) a^3, a = 2
    checkAdjacency(oct);

    // Truncated square pyramid (frustum): base 2x2 at z = 0, top 1x1 at z = 1, an interior
    // point in the file that must not become a vertex. V = h/3 (A1 + A2 + sqrt(A1 A2)).
    ConvexPolytope frustum;
    r = loadObjHull(CS_SOURCE_DIR "/assets/meshes/frustum.obj", 1.0, frustum);
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(frustum.vertexCount() == 8);
    CHECK(frustum.faceCount() == 6);
    CHECK(frustum.volume == doctest::Approx(7.0 / 3.0).epsilon(kTight).scale(0));
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

    // Nearly flat and nearly collinear clouds are refused, not turned into non-planar faces.
    TestRng rng{31};
    std::vector<Vec3> flat, needle;
    for (int i = 0; i < 20; ++i) {
        Real u = Real(2 * rng.uniform() - 1), v = Real(2 * rng.uniform() - 1);
        flat.push_back({u, v, Real(1e-13 * rng.uniform())});
        needle.push_back(Vec3{u, 2 * u, 3 * u} + Real(1e-12) * Vec3{v, Real(rng.uniform()), -v});
    }
    CHECK(!buildConvexHull(flat, p).ok);
    CHECK(!buildConvexHull(needle, p).ok);
    // Tiny and huge but well-shaped clouds are fine.
    std::vector<Vec3> tiny, huge;
    for (int i = 0; i < 20; ++i) {
        Vec3 x{Real(rng.uniform() - 0.5), Real(rng.uniform() - 0.5), Real(rng.uniform() - 0.5)};
        tiny.push_back(Real(1e-9) * x);
        huge.push_back(Real(1e9) * x);
    }
    CHECK(buildConvexHull(tiny, p).ok);
    CHECK(buildConvexHull(huge, p).ok);

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

namespace {

// Tetrahedron (0, e1, e2, e3): Dirichlet integrals int x^a y^b z^c dV = a! b! c! / (a+b+c+3)!.
TEST_CASE("geometry: mass properties of a box and a tetrahedron match closed forms") {
    const Real rho = 2;
    ConvexPolytope box = makeBox({1, 2, 3});
    MassProperties mp = polytopeMassProperties(box, rho);
    const Real m = rho * 48;
    CHECK(mp.mass == doctest::Approx(m).epsilon(kTight).scale(0));
    CHECK(length(mp.centerOfMass) < kTight);
    // I_xx = m (w_y^2 + w_z^2) / 12 with full widths w = 2 * half extents.
    CHECK(mp.inertia.m[0][0] == doctest::Approx(m * (16 + 36) / 12).epsilon(kTight).scale(0));
    CHECK(mp.inertia.m[1][1] == doctest::Approx(m * (4 + 36) / 12).epsilon(kTight).scale(0));
    CHECK(mp.inertia.m[2][2] == doctest::Approx(m * (4 + 16) / 12).epsilon(kTight).scale(0));
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (i != j) CHECK(std::fabs(mp.inertia.m[i][j]) < kLoose);

    ConvexPolytope tet;
    REQUIRE(buildConvexHull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, tet).ok);
    mp = polytopeMassProperties(tet, 1);
    CHECK(mp.mass == doctest::Approx(1.0 / 6).epsilon(kTight).scale(0));
    for (int k = 0; k < 3; ++k) CHECK(mp.centerOfMass[k] == doctest::Approx(0.25).epsilon(kTight).scale(0));
    // About the origin: int (y^2 + z^2) = 2/60, int x y = 1/120; shift by the parallel-axis rule.
    const Real V = 1.0 / 6, c = 0.25;
    CHECK(mp.inertia.m[0][0] == doctest::Approx(2.0 / 60 - V * 2 * c * c).epsilon(kTight).scale(0));
    CHECK(mp.inertia.m[0][1] == doctest::Approx(-(1.0 / 120 - V * c * c)).epsilon(kTight).scale(0));
    CHECK(mp.inertia.m[1][2] == doctest::Approx(-(1.0 / 120 - V * c * c)).epsilon(kTight).scale(0));

    MassProperties sp = sphereMassProperties(0.5, 3);
    CHECK(sp.mass == doctest::Approx(3 * 4.0 / 3 * kPi * 0.125).epsilon(kTight).scale(0));
    CHECK(sp.inertia.m[1][1] == doctest::Approx(0.4 * sp.mass * 0.25).epsilon(kTight).scale(0));
}

TEST_CASE("geometry: a rotated, shifted box keeps its inertia invariants") {
    Quat q = quatFromAxisAngle({1, 2, 0.5}, 0.7);
    Vec3 shift{0.3, -1.2, 2.0};
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i)
        corners.push_back(rotate(q, Vec3{Real((i & 1) ? 0.5 : -0.5), Real((i & 2) ? 1.0 : -1.0),
                                         Real((i & 4) ? 1.5 : -1.5)}) + shift);
    ConvexPolytope p;
    REQUIRE(buildConvexHull(corners, p).ok);
    CHECK(p.faceCount() == 6);
    MassProperties mp = polytopeMassProperties(p, 1);
    CHECK(length(mp.centerOfMass - shift) < kTight);
    const Real m = 6;
    Real d[3] = {m * (4 + 9) / 12, m * (1 + 9) / 12, m * (1 + 4) / 12};
    // Expected tensor R diag(d) R^T, compared entry by entry (this fixes all invariants).
    Mat3 R = toMat3(q);
    Mat3 expect = R * mat3Diag({d[0], d[1], d[2]}) * transpose(R);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            CHECK(mp.inertia.m[i][j] == doctest::Approx(expect.m[i][j]).epsilon(kLoose).scale(m));
    Real trace = mp.inertia.m[0][0] + mp.inertia.m[1][1] + mp.inertia.m[2][2];
    CHECK(trace == doctest::Approx(d[0] + d[1] + d[2]).epsilon(kTight).scale(0));

    // recenter moves the centroid to the origin and keeps the planes consistent.
    recenter(p, p.centroid);
    CHECK(length(p.centroid) < kTight);
    CHECK(validateConvex(p, Real(kLoose)).ok);
    CHECK(length(polytopeMassProperties(p, 1).centerOfMass) < kTight);
}

TEST_CASE("geometry: random hull mass properties agree with Monte Carlo") {
    ConvexPolytope p;
    REQUIRE(makeRandomPolytope(11, 30, {1.0, 0.7, 0.5}, p).ok);
    MassProperties mp = polytopeMassProperties(p, 1);
    TestRng rng{0x1234567ull};
    const int n = 200000;
    int hits = 0;
    Vec3 sum{0, 0, 0};
    double sxx = 0, syy = 0, sxy = 0;
    for (int i = 0; i < n; ++i) {
        Vec3 x{Real(2 * rng.uniform() - 1), Real(1.4 * rng.uniform() - 0.7),
               Real(rng.uniform() - 0.5)};
        if (!insidePolytope(p, x)) continue;
        ++hits;
        sum += x;
        sxx += x.x * x.x;
        syy += x.y * x.y;
        sxy += x.x * x.y;
    }
    const double boxVolume = 2 * 1.4 * 1.0;
    double vol = boxVolume * hits / n;
    CHECK(mp.mass == doctest::Approx(vol).epsilon(0.01).scale(0));
    Vec3 com = sum / Real(hits);
    CHECK(length(com - mp.centerOfMass) < 0.01);
    // I_zz about the origin from the samples, shifted to the centroid.
    double izz = boxVolume / n * (sxx + syy) - vol * (com.x * com.x + com.y * com.y);
    double ixy = -(boxVolume / n * sxy - vol * com.x * com.y);
    CHECK(mp.inertia.m[2][2] == doctest::Approx(izz).epsilon(0.02).scale(0));
    CHECK(std::fabs(mp.inertia.m[0][1] - ixy) < 0.02 * mp.inertia.m[2][2]);
    CHECK(p.volume == doctest::Approx(mp.mass).epsilon(kTight).scale(0));
}

Transform pose(Vec3 p, Quat q = quatIdentity()) { return Transform{p, q}; }

Real interval(Real c1, Real h1, Real c2, Real h2) {
    return std::max(Real(0), std::min(c1 + h1, c2 + h2) - std::max(c1 - h1, c2 - h2));
}

// Monte-Carlo estimate of the overlap volume, sampled in the AABB of A (world frame).
Real monteCarloOverlap(const ConvexPolytope& a, const Transform& ta, const ConvexPolytope& b,
                       const Transform& tb, int n, uint64_t seed) {
    Vec3 lo{1e30, 1e30, 1e30}, hi{-1e30, -1e30, -1e30};
    for (Vec3 v : a.vertices) {
        lo = vmin(lo, transformPoint(ta, v));
        hi = vmax(hi, transformPoint(ta, v));
    }
    TestRng rng{seed};
    int hits = 0;
    for (int i = 0; i < n; ++i) {
        Vec3 x{lo.x + Real(rng.uniform()) * (hi.x - lo.x), lo.y + Real(rng.uniform()) * (hi.y - lo.y),
               lo.z + Real(rng.uniform()) * (hi.z - lo.z)};
        if (insidePolytope(a, invTransformPoint(ta, x)) && insidePolytope(b, invTransformPoint(tb, x)))
            ++hits;
    }
    Vec3 w = hi - lo;
    return w.x * w.y * w.z * hits / n;
}

}  // namespace

TEST_CASE("overlap volume: axis-aligned boxes match the product of interval overlaps") {
    Vec3 ha{1, 0.5, 0.75}, hb{0.6, 0.8, 0.4};
    ConvexPolytope a = makeBox(ha), b = makeBox(hb);
    TestRng rng{99};
    for (int i = 0; i < 60; ++i) {
        Vec3 ca{Real(rng.uniform() - 0.5), Real(rng.uniform() - 0.5), Real(rng.uniform() - 0.5)};
        Vec3 cb{Real(3 * rng.uniform() - 1.5), Real(2.5 * rng.uniform() - 1.25),
                Real(2.5 * rng.uniform() - 1.25)};
        Real expect = interval(ca.x, ha.x, cb.x, hb.x) * interval(ca.y, ha.y, cb.y, hb.y) *
                      interval(ca.z, ha.z, cb.z, hb.z);
        for (OverlapMethod method : {OverlapMethod::Qhull, OverlapMethod::Clipping})
            CHECK(overlapVolume(a, pose(ca), b, pose(cb), method) ==
                  doctest::Approx(expect).epsilon(kLoose).scale(1));
    }
    // Coincident planes, containment and identical boxes; touching faces and separated boxes.
    for (OverlapMethod m : {OverlapMethod::Qhull, OverlapMethod::Clipping}) {
        CHECK(overlapVolume(a, pose({0, 0, 0}), a, pose({0, 0, 0}), m) == doctest::Approx(3.0));
        CHECK(overlapVolume(a, pose({0, 0, 0}), a, pose({0.5, 0, 0}), m) == doctest::Approx(2.25));
        CHECK(overlapVolume(a, pose({0, 0, 0}), b, pose({0.4, 0, 0}), m) == doctest::Approx(0.96));
        CHECK(overlapVolume(b, pose({0.4, 0.3, 0}), a, pose({0, 0, 0}), m) == doctest::Approx(0.96));
        CHECK(overlapVolume(a, pose({0, 0, 0}), b, pose({1.6, 0, 0}), m) == 0);
        CHECK(overlapVolume(a, pose({0, 0, 0}), b, pose({1.7, 0.2, 0}), m) == 0);
    }
}

TEST_CASE("overlap volume: rotated boxes and random hulls agree with Monte Carlo") {
    ConvexPolytope a = makeBox({1, 0.5, 0.75}), b = makeBox({0.6, 0.8, 0.4});
    Transform ta = pose({0.1, -0.2, 0.05}, quatFromAxisAngle({0.3, 1, 0.2}, 0.4));
    Transform tb = pose({0.9, 0.3, 0.4}, quatFromAxisAngle({1, -0.5, 0.7}, 1.1));
    const int n = 400000;
    Real v = overlapVolume(a, ta, b, tb);
    Real mc = monteCarloOverlap(a, ta, b, tb, n, 5);
    CHECK(v > 0.1);
    CHECK(v == doctest::Approx(mc).epsilon(0.03).scale(0));
    CHECK(overlapVolume(b, tb, a, ta) == doctest::Approx(v).epsilon(kLoose).scale(0));

    ConvexPolytope p, q;
    REQUIRE(makeRandomPolytope(3, 20, {1.0, 0.8, 0.6}, p).ok);
    REQUIRE(makeRandomPolytope(4, 20, {0.7, 0.9, 0.5}, q).ok);
    Transform tp = pose({0, 0, 0}, quatFromAxisAngle({0, 0, 1}, 0.3));
    Transform tq = pose({0.8, 0.3, -0.2}, quatFromAxisAngle({1, 1, 0}, 0.9));
    v = overlapVolume(p, tp, q, tq);
    mc = monteCarloOverlap(p, tp, q, tq, n, 6);
    CHECK(v > 0.1);
    CHECK(v == doctest::Approx(mc).epsilon(0.03).scale(0));
    // Containment: a scaled-down copy inside.
    ConvexPolytope small;
    REQUIRE(makeRandomPolytope(3, 20, {0.3, 0.2, 0.2}, small).ok);
    CHECK(overlapVolume(p, tp, small, tp) == doctest::Approx(small.volume).epsilon(kTight).scale(0));
}

TEST_CASE("overlap volume: pairs separated only along an edge-edge axis give 0") {
    // A has an edge along y at x = +sqrt(2); B an edge along z at its x = -sqrt(2). Their gap
    // along x = cross(y, z) is g; no face plane of either separates them.
    ConvexPolytope cube = makeBox({1, 1, 1});
    const Real s2 = std::sqrt(Real(2));
    Transform ta = pose({0, 0, 0}, quatFromAxisAngle({0, 1, 0}, kPi / 4));
    for (Real g : {Real(0.01), Real(-0.01)}) {
        Transform tb = pose({2 * s2 + g, 0, 0}, quatFromAxisAngle({0, 0, 1}, kPi / 4));
        for (OverlapMethod m : {OverlapMethod::Qhull, OverlapMethod::Clipping}) {
            Real v = overlapVolume(cube, ta, cube, tb, m);
            if (g > 0) {
                CHECK(v == 0);
            } else {
                // Two crossed wedges: x = sqrt2 - |g| + t, |y| <= t, |z| <= |g| - t, so
                // V = integral_0^|g| 4 t (|g| - t) dt = 2 |g|^3 / 3.
                CHECK(v == doctest::Approx(2 * 1e-6 / 3).epsilon(kLoose).scale(0));
            }
        }
    }
}

TEST_CASE("overlap volume: sphere-sphere lens matches two spherical caps") {
    auto cap = [](Real r, Real h) { return kPi * h * h * (3 * r - h) / 3; };
    Real r1 = 1.0, r2 = 0.6;
    for (Real d : {0.5, 0.9, 1.2, 1.5}) {
        Real h1 = (r2 - r1 + d) * (r2 + r1 - d) / (2 * d);
        Real h2 = (r1 - r2 + d) * (r1 + r2 - d) / (2 * d);
        Real expect = cap(r1, h1) + cap(r2, h2);
        CHECK(sphereSphereOverlapVolume(r1, {0, 0, 0}, r2, {d, 0, 0}) ==
              doctest::Approx(expect).epsilon(kTight).scale(0));
    }
    CHECK(sphereSphereOverlapVolume(r1, {0, 0, 0}, r2, {0, 0.3, 0}) ==
          doctest::Approx(4.0 / 3 * kPi * 0.216).epsilon(kTight).scale(0));
    CHECK(sphereSphereOverlapVolume(r1, {0, 0, 0}, r2, {0, 0, 1.6}) == 0);
}

TEST_CASE("overlap volume: sphere-polytope against caps, half, quarter and eighth balls") {
    const Real R = 0.5, ball = 4.0 / 3 * kPi * R * R * R;
    auto cap = [](Real r, Real h) { return kPi * h * h * (3 * r - h) / 3; };
    // The same box twice: axis-aligned and placed by a transform, and built from rotated corners
    // so that its faces are oblique to the slicing axis (the hard case for the quadrature).
    Quat q = quatFromAxisAngle({0.4, 1, 0.3}, 0.8);
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i)
        corners.push_back(rotate(q, Vec3{Real((i & 1) ? 2 : -2), Real((i & 2) ? 2 : -2), Real((i & 4) ? 2 : -2)}));
    ConvexPolytope oblique;
    REQUIRE(buildConvexHull(corners, oblique).ok);
    struct Placement {
        ConvexPolytope box;
        Transform place;
    };
    Vec3 shift{0.1, 0.2, -0.3};
    Placement placements[2] = {{makeBox({2, 2, 2}), pose(shift, q)}, {oblique, pose(shift)}};
    for (const Placement& pl : placements) {
        auto at = [&](Vec3 local) { return rotate(q, local) + shift; };
        auto vol = [&](Vec3 local) { return spherePolytopeOverlapVolume(R, at(local), pl.box, pl.place); };
        const Real tol = kDouble ? 1e-7 : 1e-4;
        // Centre on a face, on an edge, on a corner.
        CHECK(vol({2, 0.3, -0.5}) == doctest::Approx(ball / 2).epsilon(tol).scale(0));
        CHECK(vol({2, 2, 0.7}) == doctest::Approx(ball / 4).epsilon(tol).scale(0));
        CHECK(vol({-2, 2, -2}) == doctest::Approx(ball / 8).epsilon(tol).scale(0));
        // Centre outside a face: a cap of height h; inside it: the ball less a cap.
        for (Real h : {0.01, 0.05, 0.2, 0.45})
            CHECK(vol({0.4, -0.3, 2 + R - h}) == doctest::Approx(cap(R, h)).epsilon(tol).scale(0));
        CHECK(vol({0.4, -0.3, 1.9}) == doctest::Approx(ball - cap(R, R - 0.1)).epsilon(tol).scale(0));
        // Inside, outside, and the box inside a big ball.
        CHECK(vol({0, 0, 0}) == doctest::Approx(ball));
        CHECK(vol({0, 0, 2.6}) == 0);
        CHECK(spherePolytopeOverlapVolume(10, shift, pl.box, pl.place) == doctest::Approx(64.0));
    }

    // A random hull against Monte Carlo.
    ConvexPolytope p;
    REQUIRE(makeRandomPolytope(8, 20, {1.0, 0.8, 0.6}, p).ok);
    Transform tp = pose({0, 0, 0}, quatFromAxisAngle({1, 0, 1}, 0.5));
    Vec3 c{0.7, 0.2, 0.1};
    Real v = spherePolytopeOverlapVolume(R, c, p, tp);
    TestRng rng{77};
    int hits = 0;
    const int n = 400000;
    for (int i = 0; i < n; ++i) {
        Vec3 x = c + R * Vec3{Real(2 * rng.uniform() - 1), Real(2 * rng.uniform() - 1),
                              Real(2 * rng.uniform() - 1)};
        if (lengthSq(x - c) <= R * R && insidePolytope(p, invTransformPoint(tp, x))) ++hits;
    }
    Real mc = 8 * R * R * R * hits / n;
    CHECK(v > 0.05);
    CHECK(v == doctest::Approx(mc).epsilon(0.02).scale(0));
}

TEST_CASE("overlap volume: thin overlaps of stacked boxes (resting contact)") {
    // B (0.6 x 0.8 x 0.4) sinks by delta into the top face of A (a unit cube): V = delta * 0.48.
    ConvexPolytope a = makeBox({0.5, 0.5, 0.5}), b = makeBox({0.3, 0.4, 0.2});
    for (Real delta : {1e-2, 1e-4, 1e-6}) {
        if (!kDouble && delta < 1e-2) continue;  // float positions resolve ~1e-7 m only
        Transform tb = pose({0.1, 0.05, Real(0.7 - delta)});
        for (OverlapMethod m : {OverlapMethod::Qhull, OverlapMethod::Clipping})
            CHECK(overlapVolume(a, pose({0, 0, 0}), b, tb, m) ==
                  doctest::Approx(delta * 0.48).epsilon(kDouble ? 1e-6 : 1e-3).scale(0));
        // Same-size boxes stacked: the side faces are coplanar.
        CHECK(overlapVolume(a, pose({0, 0, 0}), a, pose({0, 0, 1 - delta})) ==
              doctest::Approx(delta).epsilon(kDouble ? 1e-6 : 1e-3).scale(0));
    }
    // Far below the qhull path's interior-point threshold, clipping is still exact.
    if (kDouble) {
        Transform tb = pose({0.1, 0.05, Real(0.7 - 1e-9)});
        CHECK(overlapVolume(a, pose({0, 0, 0}), b, tb, OverlapMethod::Clipping) ==
              doctest::Approx(0.48e-9).epsilon(1e-5).scale(0));
    }
}

TEST_CASE("overlap volume: qhull and clipping agree on random hull pairs") {
    TestRng rng{2024};
    int overlapping = 0;
    for (int i = 0; i < 150; ++i) {
        ConvexPolytope p, q;
        REQUIRE(makeRandomPolytope(1000 + i, 6 + i % 25, {1.0, 0.7, 0.5}, p).ok);
        REQUIRE(makeRandomPolytope(5000 + i, 6 + (i * 7) % 25, {0.6, 0.8, 0.9}, q).ok);
        auto randomPose = [&](Real spread) {
            Vec3 axis{Real(rng.uniform() - 0.5), Real(rng.uniform() - 0.5), Real(rng.uniform() - 0.5)};
            Vec3 pos{Real(spread * (rng.uniform() - 0.5)), Real(spread * (rng.uniform() - 0.5)),
                     Real(spread * (rng.uniform() - 0.5))};
            return pose(pos, quatFromAxisAngle(axis, Real(6 * rng.uniform())));
        };
        Transform tp = randomPose(0.5), tq = randomPose(2.5);
        Real vq = overlapVolume(p, tp, q, tq, OverlapMethod::Qhull);
        Real vc = overlapVolume(p, tp, q, tq, OverlapMethod::Clipping);
        overlapping += vq > 0;
        CHECK(vq <= std::min(p.volume, q.volume) * (1 + 1e-12));
        CHECK(std::fabs(vq - vc) <= kLoose * std::min(p.volume, q.volume));
    }
    CHECK(overlapping > 50);
}

TEST_CASE("overlap volume: timing of two 20-vertex hulls (data, not asserted)") {
    ConvexPolytope p, q;
    REQUIRE(makeRandomPolytope(21, 20, {1.0, 0.8, 0.6}, p).ok);
    REQUIRE(makeRandomPolytope(22, 20, {0.9, 0.7, 0.8}, q).ok);
    Transform tp = pose({0, 0, 0}, quatIdentity());
    Quat rq = quatFromAxisAngle({1, 2, 3}, 0.4);
    // Shallow contact: bisect the x offset at which q just touches p, then sink it by 1e-3.
    Real lo = 0.5, hi = 2.5;
    for (int it = 0; it < 60; ++it) {
        Real mid = Real(0.5) * (lo + hi);
        (overlapVolume(p, tp, q, pose({mid, 0.2, 0.1}, rq)) > 0 ? lo : hi) = mid;
    }
    struct Case {
        const char* name;
        Real x;
    } cases[3] = {{"deep overlap", 0.6}, {"1e-3 penetration", lo - Real(1e-3)},
                  {"1e-3 gap", hi + Real(1e-3)}};
    const int n = 2000;
    for (const Case& c : cases) {
        for (OverlapMethod m : {OverlapMethod::Qhull, OverlapMethod::Clipping}) {
            Real total = 0;
            // Process CPU time, so that other jobs on a shared machine do not inflate the figure.
            std::clock_t t0 = std::clock();
            for (int i = 0; i < n; ++i) {
                Transform tq = pose({c.x, Real(0.2 + 1e-7 * i), 0.1}, rq);
                total += overlapVolume(p, tp, q, tq, m);
            }
            double us = 1e6 * double(std::clock() - t0) / CLOCKS_PER_SEC / n;
            CHECK((c.x > hi) == (total == 0));
            MESSAGE("overlapVolume " << std::string(m == OverlapMethod::Qhull ? "qhull   " : "clipping")
                                     << " 20-vertex hulls, " << std::string(c.name) << ", "
                                     << std::string(kPrecisionName) << ": " << us
                                     << " us CPU per call (mean volume " << total / n << ")");
        }
    }
}
