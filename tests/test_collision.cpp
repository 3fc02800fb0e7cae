// Collision: exact signed distance against closed forms, narrow-phase feature pairs (counts,
// gaps, normal and feature conventions of narrow_phase.h), broad phase against brute force.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "engine/collision/broad_phase.h"
#include "engine/collision/distance.h"
#include "engine/collision/narrow_phase.h"
#include "engine/geometry/polytope.h"

using namespace cs;

namespace {

const Real kPi = Real(3.14159265358979323846);

Transform pose(Vec3 p, Quat q = quatIdentity()) { return Transform{p, q}; }

// Rotation taking unit a to unit b (a != -b).
Quat quatFromTo(Vec3 a, Vec3 b) {
    Vec3 axis = cross(a, b);
    return quatFromAxisAngle(axis, std::acos(std::max(Real(-1), std::min(Real(1), dot(a, b)))));
}

// A model built field by field (no dependence on the model builder): one shape per body.
struct Scene {
    Model model;
    State state;
    int addBody(ShapeType type, int polytope, Real radius, Transform X, bool isStatic) {
        int b = model.bodyCount();
        model.bodyName.push_back("b" + std::to_string(b));
        model.invMass.push_back(isStatic ? Real(0) : Real(1));
        model.mass.push_back(isStatic ? Real(0) : Real(1));
        model.bodyFirstShape.push_back(model.shapeCount());
        model.bodyShapeCount.push_back(0);
        state.pos.push_back(X.pos);
        state.rot.push_back(X.rot);
        addShape(b, type, polytope, radius, pose({0, 0, 0}));
        return b;
    }
    int addShape(int body, ShapeType type, int polytope, Real radius, Transform local) {
        model.shapeType.push_back(type);
        model.shapeBody.push_back(body);
        model.shapeLocal.push_back(local);
        model.shapePolytope.push_back(polytope);
        model.shapeRadius.push_back(type == ShapeType::Sphere ? radius
                                                              : model.polytopes[polytope].boundingRadius);
        model.bodyShapeCount[body]++;
        return model.shapeCount() - 1;
    }
    int addPolytope(const ConvexPolytope& p) {
        model.polytopes.push_back(p);
        return (int)model.polytopes.size() - 1;
    }
};

int countType(const std::vector<PotentialContact>& cs, PairType t) {
    return (int)std::count_if(cs.begin(), cs.end(), [&](const PotentialContact& c) { return c.type == t; });
}

bool near(Vec3 a, Vec3 b, Real tol) { return length(a - b) <= tol; }

const Real kTol = Real(1e-12);

}  // namespace

// ---- exact signed distance -----------------------------------------------------------------

TEST_CASE("distance: box above box at height d, any yaw, and witnesses d apart") {
    ConvexPolytope box = makeBox({0.5, 0.5, 0.5});
    for (Real d : {Real(0.3), Real(0.01), Real(2.0)}) {
        for (Real yaw : {Real(0), Real(0.4), Real(1.1)}) {
            Vec3 wa, wb;
            Transform Xa = pose({0.2, -0.1, 1 + d}, quatFromAxisAngle({0, 0, 1}, yaw));
            Real s = signedDistance(box, Xa, box, pose({0, 0, 0}), &wa, &wb);
            CHECK(std::abs(s - d) < kTol);
            CHECK(std::abs(length(wa - wb) - d) < kTol);
            CHECK(std::abs(wa.z - (Real(0.5) + d)) < kTol);
        }
    }
}

TEST_CASE("distance: crossed edges at 90 degrees, separated and penetrating") {
    // A rolled 45 deg about x has its lowest edge along x at z_A - h sqrt(2); B rolled 45 deg about
    // y has its highest edge along y at h sqrt(2). Closed form: d = z_A - 2 h sqrt(2).
    const Real h = 0.5, r2 = std::sqrt(Real(2));
    ConvexPolytope box = makeBox({h, h, h});
    Quat qa = quatFromAxisAngle({1, 0, 0}, kPi / 4), qb = quatFromAxisAngle({0, 1, 0}, kPi / 4);
    for (Real d : {Real(0.25), Real(0.001), Real(-0.01), Real(-0.05)}) {
        Vec3 wa, wb;
        Real s = signedDistance(box, pose({0, 0, 2 * h * r2 + d}, qa), box, pose({0, 0, 0}, qb), &wa, &wb);
        CHECK(std::abs(s - d) < Real(1e-12));
        CHECK(near(wa, {0, 0, h * r2 + d}, Real(1e-12)));
        CHECK(near(wb, {0, 0, h * r2}, Real(1e-12)));
    }
}

TEST_CASE("distance: rotated box corner down over a face is height minus half-diagonal") {
    ConvexPolytope cube = makeBox({0.5, 0.5, 0.5});
    ConvexPolytope ground = makeBox({5, 5, 0.5});
    const Real halfDiag = Real(0.5) * std::sqrt(Real(3));
    Quat q = quatFromTo(normalize(Vec3{1, 1, 1}), {0, 0, -1});
    for (Real z : {Real(1.2), Real(0.9), Real(0.87)}) {
        Vec3 wa, wb;
        Real s = signedDistance(cube, pose({0.3, 0.2, z}, q), ground, pose({0, 0, -0.5}), &wa, &wb);
        CHECK(std::abs(s - (z - halfDiag)) < Real(1e-12));
        CHECK(near(wa, {0.3, 0.2, z - halfDiag}, Real(1e-12)));
    }
    // Box-box (a non-axis-aligned box A over a rotated box B): the min vertex-face gap when the
    // corner hits the middle of the top face equals the closed form too.
    Real s = signedDistance(cube, pose({0, 0, 0.5 + halfDiag + 0.1}, q), cube, pose({0, 0, 0}));
    CHECK(std::abs(s - Real(0.1)) < Real(1e-12));
}

TEST_CASE("distance: penetration depth of overlapping boxes") {
    ConvexPolytope box = makeBox({0.5, 0.5, 0.5});
    // Overlap d along z with a horizontal offset smaller than 1 - d: depth is d.
    for (Real d : {Real(0.01), Real(0.2)}) {
        Real s = signedDistance(box, pose({0.3, 0.1, 1 - d}), box, pose({0, 0, 0}));
        CHECK(std::abs(s + d) < kTol);
    }
    // Overlapping more sideways than vertically: depth is the smaller horizontal overlap.
    Real s = signedDistance(box, pose({0.95, 0, 0.5}), box, pose({0, 0, 0}));
    CHECK(std::abs(s + Real(0.05)) < kTol);
    // Concentric: depth 1 (move by a full edge).
    CHECK(std::abs(signedDistance(box, pose({0, 0, 0}), box, pose({0, 0, 0})) + 1) < kTol);
}

TEST_CASE("distance: random polytopes, separated distance is certified and depth translates out") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> U(-1, 1);
    int separated = 0, overlapping = 0;
    for (int trial = 0; trial < 60; ++trial) {
        ConvexPolytope a, b;
        REQUIRE(makeRandomPolytope(100 + trial, 12, {0.5, 0.4, 0.3}, a).ok);
        REQUIRE(makeRandomPolytope(900 + trial, 16, {0.4, 0.6, 0.35}, b).ok);
        Transform Xa = pose({Real(U(rng)), Real(U(rng)), Real(U(rng))},
                            normalize(Quat{Real(U(rng)), Real(U(rng)), Real(U(rng)), Real(U(rng))}));
        Transform Xb = pose({0, 0, 0}, normalize(Quat{Real(U(rng)), Real(U(rng)), Real(U(rng)), Real(U(rng))}));
        Vec3 wa, wb;
        Real s = signedDistance(a, Xa, b, Xb, &wa, &wb);
        if (s > 0) {
            ++separated;
            // Witnesses lie on the bodies and are s apart; the axis through them separates the
            // bodies by exactly s (support functions), which certifies s is the minimum.
            CHECK(std::abs(length(wa - wb) - s) < Real(1e-10));
            Vec3 n = (wa - wb) / s;
            Real minA = 1e300, maxB = -1e300;
            for (Vec3 v : a.vertices) minA = std::min(minA, dot(n, transformPoint(Xa, v)));
            for (Vec3 v : b.vertices) maxB = std::max(maxB, dot(n, transformPoint(Xb, v)));
            CHECK(std::abs((minA - maxB) - s) < Real(1e-10));
            for (Vec3 v : a.vertices) CHECK(length(transformPoint(Xa, v) - wb) >= s - Real(1e-12));
        } else {
            ++overlapping;
            // Moving A by depth + 1e-6 along the witness direction separates; by depth/2 it does not.
            Vec3 n = normalize(wa - wb);
            if (lengthSq(wa - wb) < Real(1e-24)) continue;
            // The witness pair of an overlap points from A's surface to B's: the escape is -that.
            Vec3 escape = -n;
            Transform moved = Xa;
            moved.pos = Xa.pos + (-s + Real(1e-6)) * escape;
            CHECK(signedDistance(a, moved, b, Xb) > 0);
            moved.pos = Xa.pos + (-s * Real(0.5)) * escape;
            CHECK(signedDistance(a, moved, b, Xb) < 0);
        }
    }
    CHECK(separated > 5);
    CHECK(overlapping > 5);
}

TEST_CASE("distance: spheres against spheres and box face, edge, corner, inside") {
    Vec3 wa, wb;
    CHECK(std::abs(signedDistance(Vec3{1, 2, 3}, 0.5, Vec3{1, 2, 0}, 1.0, &wa, &wb) - 1.5) < kTol);
    CHECK(near(wa, {1, 2, 2.5}, kTol));
    CHECK(near(wb, {1, 2, 1}, kTol));
    CHECK(std::abs(signedDistance(Vec3{0, 0, 1}, 0.75, Vec3{0, 0, 0}, 0.5) + 0.25) < kTol);

    const Real h = 0.5, r = 0.2;
    ConvexPolytope box = makeBox({h, h, h});
    Transform X = pose({0, 0, 0});
    CHECK(std::abs(signedDistance(Vec3{0.1, -0.2, h + 0.3}, r, box, X) - (0.3 - r)) < kTol);
    CHECK(std::abs(signedDistance(Vec3{h + 0.3, 0.1, h + 0.4}, r, box, X) - (0.5 - r)) < kTol);
    CHECK(std::abs(signedDistance(Vec3{h + 0.1, h + 0.2, h + 0.2}, r, box, X, &wa, &wb) - (0.3 - r)) < kTol);
    CHECK(near(wb, {h, h, h}, kTol));
    CHECK(std::abs(signedDistance(Vec3{0, 0.1, h - 0.05}, r, box, X) - (-0.05 - r)) < kTol);
    // Rotated box: a face at 45 degrees.
    Transform R = pose({0, 0, 0}, quatFromAxisAngle({0, 1, 0}, kPi / 4));
    Vec3 c = Real(h + 0.4) * normalize(Vec3{1, 0, 1});
    CHECK(std::abs(signedDistance(c, r, box, R) - (0.4 - r)) < Real(1e-12));
}
