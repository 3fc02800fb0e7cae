// The mouse pick of deformable bodies (engine/fem/fem_pick.h) against closed forms on a generated
// box: rays hit the face they point at, at the distance the box's extents give, on a triangle of
// that face, with weights that rebuild the hit point; the deformed surface is picked, not the
// rest shape; a rigid body in front of the FEM body wins, and one behind it does not.
#include <cmath>

#include "engine/fem/fem_pick.h"
#include "tests/fem_test_util.h"

using namespace cs;
using namespace cs::femtest;

namespace {

constexpr Real kPi = Real(3.14159265358979323846);

// A 0.4 x 0.2 x 0.1 m block turned 30 degrees about z, centred at (0.3, -0.1, 0.5), no ground.
struct PickScene {
    Model model;
    Vec3 centre{Real(0.3), Real(-0.1), Real(0.5)};
    Vec3 half{Real(0.2), Real(0.1), Real(0.05)};
    Quat rot = quatFromAxisAngle({0, 0, 1}, kPi / 6);
    PickScene() {
        FemBodyDesc d = blockDesc(half, 4, Real(1e5), Real(0.3), FemMaterialType::CorotatedLinear);
        d.pose.pos = centre;
        d.pose.rot = rot;
        addFem(model, d);
    }
};

// The hit's triangle lies in the plane {x : n . x = offset} and its weights rebuild the point.
void checkHit(const Model& model, const State& state, const FemRayHit& hit, Vec3 n, Real offset) {
    REQUIRE(hit.tri >= 0);
    const auto& tri = model.femTris[hit.tri];
    Vec3 rebuilt{0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        CHECK(hit.weights[i] >= -1e-12);
        CHECK(std::fabs(dot(n, state.femPos[tri[i]]) - offset) < 1e-9);
        rebuilt += hit.weights[i] * state.femPos[tri[i]];
    }
    CHECK(std::fabs(hit.weights.x + hit.weights.y + hit.weights.z - 1) < 1e-12);
    CHECK(length(rebuilt - hit.point) < 1e-9);
    // Wound outwards: the triangle's normal is the face's.
    const Vec3 a = state.femPos[tri[0]], b = state.femPos[tri[1]], c = state.femPos[tri[2]];
    CHECK(dot(normalize(cross(b - a, c - a)), n) > 1 - 1e-9);
}

}  // namespace

TEST_CASE("fem pick: rays against a generated box's surface, closed forms") {
    PickScene scene;
    WorldSettings s;
    s.gravity = {0, 0, 0};
    World world(scene.model, s);
    const State& st = world.state();
    const Vec3 ex = rotate(scene.rot, {1, 0, 0}), ey = rotate(scene.rot, {0, 1, 0}), ez{0, 0, 1};

    SUBCASE("straight down onto the top face, off centre") {
        const Vec3 at = scene.centre + Real(0.13) * ex - Real(0.04) * ey;
        const Vec3 origin = at + Vec3{0, 0, 2};
        FemRayHit hit;
        REQUIRE(femRayCast(scene.model, st, origin, {0, 0, -3}, &hit));   // direction need not be unit
        const Real top = scene.centre.z + scene.half.z;
        CHECK(std::fabs(hit.distance - (origin.z - top)) < 1e-9);
        CHECK(length(hit.point - Vec3{at.x, at.y, top}) < 1e-9);
        checkHit(scene.model, st, hit, ez, top);
    }
    SUBCASE("along the body's -x axis onto the +x end face") {
        const Vec3 origin = scene.centre + Real(1.5) * ex + Real(0.03) * ey + Real(0.01) * ez;
        FemRayHit hit;
        REQUIRE(femRayCast(scene.model, st, origin, -ex, &hit));
        CHECK(std::fabs(hit.distance - (Real(1.5) - scene.half.x)) < 1e-9);
        checkHit(scene.model, st, hit, ex, dot(ex, scene.centre) + scene.half.x);
    }
    SUBCASE("a slanted ray that passes beside the box misses it") {
        const Vec3 origin = scene.centre + Vec3{0, 0, 2};
        // Aimed 0.05 m past the +x end at the top face's height, going down: clears the box.
        const Vec3 aim = scene.centre + (scene.half.x + Real(0.05)) * ex + scene.half.z * ez;
        CHECK_FALSE(femRayCast(scene.model, st, origin, aim - origin, nullptr));
        CHECK_FALSE(femRayCast(scene.model, st, origin, {0, 0, 1}, nullptr));   // pointing away
    }
    SUBCASE("a ray starting inside picks the far wall ahead of it") {
        FemRayHit hit;
        REQUIRE(femRayCast(scene.model, st, scene.centre, ey, &hit));
        CHECK(std::fabs(hit.distance - scene.half.y) < 1e-9);
        checkHit(scene.model, st, hit, ey, dot(ey, scene.centre) + scene.half.y);
    }
}

TEST_CASE("fem pick: the deformed surface is picked, not the rest shape") {
    PickScene scene;
    WorldSettings s;
    World world(scene.model, s);
    // Stretch the block 1.5x along z about its centre (the nodes, by hand).
    State& st = world.state();
    for (Vec3& x : st.femPos) x.z = scene.centre.z + Real(1.5) * (x.z - scene.centre.z);
    const Vec3 origin = scene.centre + Vec3{Real(0.02), Real(0.01), 1};
    FemRayHit hit;
    REQUIRE(femRayCast(scene.model, st, origin, {0, 0, -1}, &hit));
    const Real top = scene.centre.z + Real(1.5) * scene.half.z;
    CHECK(std::fabs(hit.distance - (origin.z - top)) < 1e-9);
    checkHit(scene.model, st, hit, {0, 0, 1}, top);
}

TEST_CASE("fem pick: nearest of rigid and FEM; the FEM pick starts a surface-point drag") {
    PickScene scene;
    // A rigid 0.1 m cube 0.5 m above the block's centre (in the way of a ray from above), and a
    // second one 0.5 m below it (behind the block for that ray).
    for (Real dz : {Real(0.5), Real(-0.5)}) {
        BodyDesc box;
        box.name = dz > 0 ? "above" : "below";
        ShapeDesc shape;
        shape.polytope = makeBox({Real(0.05), Real(0.05), Real(0.05)});
        box.shapes.push_back(shape);
        box.pose.pos = scene.centre + Vec3{0, 0, dz};
        std::string error;
        REQUIRE(addBody(scene.model, box, &error) >= 0);
    }
    WorldSettings s;
    s.gravity = {0, 0, 0};
    World world(scene.model, s);
    const Vec3 down{0, 0, -1};
    // Through the cube above: the cube's top face at 0.55 m above the centre wins.
    PickHit p = pickNearest(world, scene.centre + Vec3{0, 0, 2}, down);
    CHECK(p.body == world.findBody("above"));
    CHECK(p.fem.tri < 0);
    CHECK(std::fabs(p.distance - Real(1.45)) < 1e-9);
    // Beside the cube above (0.12 m along the block's x): the block's top face, before the cube below.
    const Vec3 beside = scene.centre + Real(0.12) * rotate(scene.rot, {1, 0, 0});
    p = pickNearest(world, beside + Vec3{0, 0, 2}, down);
    CHECK(p.body < 0);
    REQUIRE(p.fem.tri >= 0);
    CHECK(std::fabs(p.distance - (2 - scene.half.z)) < 1e-9);
    // From below, up through the cube below: the cube.
    p = pickNearest(world, scene.centre - Vec3{0, 0, 2}, {0, 0, 1});
    CHECK(p.body == world.findBody("below"));

    // The pick drags the grabbed surface point: pulled 0.1 m up, it follows (zero gravity).
    p = pickNearest(world, beside + Vec3{0, 0, 2}, down);
    const Vec3 target = p.point + Vec3{0, 0, Real(0.1)};
    world.setFemDrag(p.fem.tri, p.fem.weights, target);
    CHECK(length(femDragPoint(world.model(), world.state(), world.drag()) - p.point) < 1e-9);
    for (int step = 0; step < 120; ++step) world.step();
    const Vec3 now = femDragPoint(world.model(), world.state(), world.drag());
    MESSAGE("grabbed point " << length(now - target) << " m from the target after 2 s");
    CHECK(length(now - target) < Real(0.01));

    // Release with a throw: every node of the body leaves with the cursor's velocity, so the
    // body's momentum is its mass times it.
    world.clearDrag();
    const Vec3 v{Real(0.5), Real(-0.2), Real(1)};
    throwFemBody(world, p.fem.tri, v);
    Vec3 momentum{0, 0, 0};
    Real mass = 0;
    for (int i = 0; i < world.model().femNodeCount(); ++i) {
        momentum += world.model().femNodeMass[i] * world.state().femVel[i];
        mass += world.model().femNodeMass[i];
    }
    CHECK(length(momentum - mass * v) < 1e-12);
}
