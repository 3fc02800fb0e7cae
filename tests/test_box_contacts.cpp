// The soft step's box-box contacts (engine/collision/box_contacts.h): which polytopes are boxes,
// and the clipped manifold against closed forms and the exact signed distance (distance.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/collision/box_contacts.h"
#include "engine/collision/distance.h"
#include "engine/collision/world_polytope.h"

using namespace cs;

namespace {

// The contacts of box a at Xa against box b at Xb (returns collideBoxes' answer).
bool boxContacts(const ConvexPolytope& a, const Transform& Xa, const ConvexPolytope& b, const Transform& Xb,
                 Real close, std::vector<PotentialContact>& out) {
    WorldPolytope wa, wb;
    wa.assign(a, Xa);
    wb.assign(b, Xb);
    NarrowPhaseSettings s;
    PotentialContact buffer[kBoxMaxPoints];
    ContactSink sink{buffer, kBoxMaxPoints, 0};
    const bool near = collideBoxes(wa.view(), detectBox(a), wb.view(), detectBox(b), s, close, sink);
    out.assign(buffer, buffer + sink.stored());
    return near;
}

bool hasPoint(const std::vector<PotentialContact>& cs, Vec3 p, Real tol) {
    for (const PotentialContact& c : cs)
        if (length(c.pointA - p) < tol || length(c.pointB - p) < tol) return true;
    return false;
}

}  // namespace

TEST_CASE("box contacts: which polytopes are boxes") {
    const BoxFaces b = detectBox(makeBox({0.5, 1.0, 2.0}));
    CHECK(b.box);
    Real halves[3] = {b.half[0], b.half[1], b.half[2]};
    std::sort(halves, halves + 3);
    CHECK(halves[0] == doctest::Approx(0.5));
    CHECK(halves[1] == doctest::Approx(1.0));
    CHECK(halves[2] == doctest::Approx(2.0));
    ConvexPolytope prism;
    REQUIRE(makePrism({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 0.5, prism).ok);
    CHECK_FALSE(detectBox(prism).box);   // 6 vertices
    // Eight points, six quadrilaterals, but a frustum: not a box.
    ConvexPolytope frustum;
    REQUIRE(buildConvexHull({{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                             {-0.5, -0.5, 1}, {0.5, -0.5, 1}, {0.5, 0.5, 1}, {-0.5, 0.5, 1}}, frustum).ok);
    CHECK(frustum.vertexCount() == 8);
    CHECK_FALSE(detectBox(frustum).box);
}

TEST_CASE("box contacts: a brick on a brick, offset, is the overlap rectangle's corners at the overlap depth") {
    // Upper box A (1 x 1 x 0.5) 0.4 m to the side of lower box B, sunk 3 mm into it.
    const ConvexPolytope box = makeBox({0.5, 0.5, 0.25});
    const Real depth = 0.003;
    const Transform Xa{{0.4, 0, 0.5 - depth}, quatIdentity()}, Xb{{0, 0, 0}, quatIdentity()};
    std::vector<PotentialContact> cs;
    REQUIRE(boxContacts(box, Xa, box, Xb, 0.02, cs));
    REQUIRE(cs.size() == 4);
    for (const PotentialContact& c : cs) {
        CHECK(c.normal.z == doctest::Approx(1));              // from B (below) to A
        CHECK(c.gap == doctest::Approx(-depth).epsilon(1e-9));
        CHECK(dot(c.pointA - c.pointB, c.normal) == doctest::Approx(c.gap).epsilon(1e-9));
    }
    // The overlap is x in [-0.1, 0.5], y in [-0.5, 0.5], at the interface z = 0.25.
    for (Real x : {-0.1, 0.5})
        for (Real y : {-0.5, 0.5}) CHECK(hasPoint(cs, {x, y, 0.25}, 0.004));
    // The deepest point is as deep as the exact distance says.
    CHECK(cs[0].gap == doctest::Approx(signedDistance(box, Xa, box, Xb)).epsilon(1e-6));
}

TEST_CASE("box contacts: a box on its corner gives that corner at the exact distance") {
    // A unit cube turned so that its diagonal is vertical, its lowest corner 2 mm into a slab,
    // then 5 mm above it (a speculative point).
    const ConvexPolytope cube = makeBox({0.5, 0.5, 0.5});
    const ConvexPolytope slab = makeBox({2, 2, 0.5});
    const Vec3 diag = normalize(Vec3{1, 1, 1});
    const Vec3 axis = normalize(cross(diag, Vec3{0, 0, -1}));
    const Quat q = quatFromAxisAngle(axis, std::acos(dot(diag, Vec3{0, 0, -1})));
    const Real half = std::sqrt(Real(3)) / 2;   // centre to corner
    for (Real gap : {-0.002, 0.005}) {
        const Transform Xa{{0.1, -0.2, 0.5 + half + gap}, q}, Xb{{0, 0, 0}, quatIdentity()};
        std::vector<PotentialContact> cs;
        REQUIRE(boxContacts(cube, Xa, slab, Xb, 0.02, cs));
        REQUIRE(cs.size() == 1);   // the other corners are more than the 2 cm margin up
        CHECK(cs[0].gap == doctest::Approx(gap).epsilon(1e-9));
        CHECK(cs[0].gap == doctest::Approx(signedDistance(cube, Xa, slab, Xb)).epsilon(1e-6));
        CHECK(length(cs[0].pointA - Vec3{0.1, -0.2, 0.5 + gap}) < 1e-9);
        CHECK(cs[0].normal.z == doctest::Approx(1));
    }
}

TEST_CASE("box contacts: crossed edges give one edge-edge point at the edges' distance") {
    // Two unit cubes, each turned 45 degrees about a horizontal axis (A about x, B about y), so
    // that A's lowest edge lies across B's highest edge, 4 mm above it.
    const ConvexPolytope cube = makeBox({0.5, 0.5, 0.5});
    const Real r = std::sqrt(Real(0.5));   // centre to edge
    const Real kPi = Real(3.14159265358979323846);
    const Real gap = 0.004;
    const Transform Xb{{0, 0, 0}, quatFromAxisAngle({0, 1, 0}, kPi / 4)};
    const Transform Xa{{0.05, -0.03, 2 * r + gap}, quatFromAxisAngle({1, 0, 0}, kPi / 4)};
    std::vector<PotentialContact> cs;
    REQUIRE(boxContacts(cube, Xa, cube, Xb, 0.02, cs));
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].type == PairType::EdgeEdge);
    CHECK(cs[0].gap == doctest::Approx(gap).epsilon(1e-9));
    CHECK(cs[0].gap == doctest::Approx(signedDistance(cube, Xa, cube, Xb)).epsilon(1e-6));
    CHECK(cs[0].normal.z == doctest::Approx(1));
    // The closest points: A's lowest edge (along x, y = -0.03) over B's highest (along y, x = 0).
    CHECK(length(cs[0].pointA - Vec3{0, -0.03, r + gap}) < 1e-9);
    CHECK(length(cs[0].pointB - Vec3{0, -0.03, r}) < 1e-9);
}

TEST_CASE("box contacts: apart by more than the closing gap, nothing; within it, open points") {
    const ConvexPolytope box = makeBox({0.5, 0.5, 0.5});
    const Transform Xb{{0, 0, 0}, quatIdentity()};
    std::vector<PotentialContact> cs;
    // 3 mm apart side by side: beyond a 1 mm closing gap, nothing listed.
    CHECK_FALSE(boxContacts(box, {{1.003, 0.2, 0}, quatIdentity()}, box, Xb, 0.001, cs));
    CHECK(cs.empty());
    // Within a 1 cm one: the side faces' overlap, 4 open points at 3 mm.
    REQUIRE(boxContacts(box, {{1.003, 0.2, 0}, quatIdentity()}, box, Xb, 0.01, cs));
    REQUIRE(cs.size() == 4);
    for (const PotentialContact& c : cs) {
        CHECK(c.gap == doctest::Approx(0.003).epsilon(1e-9));
        CHECK(c.normal.x == doctest::Approx(1));
    }
    // Keys are distinct: each point keeps its warm start.
    for (size_t i = 0; i < cs.size(); ++i)
        for (size_t j = i + 1; j < cs.size(); ++j)
            CHECK_FALSE((cs[i].featureA == cs[j].featureA && cs[i].featureB == cs[j].featureB));
}
