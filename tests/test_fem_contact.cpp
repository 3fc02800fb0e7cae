// Deformable bodies in contact: on the ground, on a rigid box (two-way coupling), on another
// deformable body (vertex-triangle rows on four bodies), and the mouse drag on a surface point.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/contact/contact_model.h"
#include "tests/fem_test_util.h"

using namespace cs;
using namespace cs::femtest;

namespace {

Real femMass(const Model& m, int body) {
    Real mass = 0;
    for (int n = 0; n < m.femNodeCount(); ++n)
        if (m.femNodeBody[n] == body) mass += m.femNodeMass[n];
    return mass;
}

Real lowestNode(const Model& m, const State& s, int body) {
    Real z = 1e30;
    for (int n = 0; n < m.femNodeCount(); ++n)
        if (m.femNodeBody[n] == body) z = std::fmin(z, s.femPos[n].z);
    return z;
}

}  // namespace

// A block dropped on the ground comes to rest on it: its nodes' contact impulses carry its
// weight (sum lambda_n = m g h at rest), no node sinks past the solver's tolerance.
TEST_CASE("fem contact: a deformable block comes to rest on the ground and its contacts carry its weight") {
    Model model;
    addGround(model);
    FemBodyDesc d = blockDesc({Real(0.1), Real(0.1), Real(0.05)}, 2, Real(1e5), Real(0.3), FemMaterialType::StableNeoHookean);
    d.pose.pos = {0, 0, Real(0.1)};
    d.damping = Real(0.01);
    addFem(model, d);
    WorldSettings s;
    World world(model, s);
    for (int step = 0; step < 240; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
    }
    Real normal = 0;
    int femContacts = 0;
    for (const Contact& c : world.contacts())
        if (c.femNode >= 0) {
            ++femContacts;
            normal += c.normalImpulse * c.geometry.normal.z;
            CHECK(c.geometry.bodyA == -1);
            CHECK(c.geometry.bodyB == 0);
        }
    const Real weight = femMass(model, 0) * length(s.gravity) * s.dt;
    MESSAGE(femContacts << " node contacts, sum lambda_n = " << normal << " N s, m g h = " << weight
                        << ", lowest node z = " << lowestNode(model, world.state(), 0) << " m, KE "
                        << world.kineticEnergy() << " J");
    CHECK(femContacts >= 9);   // the 3 x 3 bottom nodes
    CHECK(near(normal, weight, Real(1e-3)));
    CHECK(lowestNode(model, world.state(), 0) > -1e-4);
    CHECK(world.kineticEnergy() < 1e-6);

    // The debug draw: a point per node contact, none with the node contacts' layers off (the app's
    // default in scenes with deformable bodies: DebugDrawFlags::femContacts).
    int points = 0;
    DebugDraw dd;
    dd.context = &points;
    dd.drawPoint = [](Vec3, float, Color, void* context) { ++*static_cast<int*>(context); };
    dd.flags.femAnchors = false;
    world.draw(dd);
    CHECK(points == femContacts);
    points = 0;
    dd.flags.femContacts = false;
    world.draw(dd);
    CHECK(points == 0);
}

TEST_CASE("fem contact: PEG and PLUS with deformable bodies carry a note, the other models none") {
    Model rigid;
    addGround(rigid);
    Model fem = rigid;
    addFem(fem, blockDesc({Real(0.1), Real(0.1), Real(0.05)}, 1, Real(1e5), Real(0.3), FemMaterialType::StableNeoHookean));
    CHECK(femContactModelNote(fem, ContactModelType::PEG).find("the PEG contact model applies to rigid pairs only") == 0);
    CHECK(femContactModelNote(fem, ContactModelType::PLUS).find("PLUS") != std::string::npos);
    CHECK(femContactModelNote(fem, ContactModelType::Standard).empty());
    CHECK(femContactModelNote(fem, ContactModelType::CCP).empty());
    CHECK(femContactModelNote(rigid, ContactModelType::PEG).empty());
}

// Two-way coupling: a deformable block on a rigid box on the ground. At rest the box's ground
// contacts carry both weights; the block's contacts with the box carry the block's.
TEST_CASE("fem contact: a deformable block on a rigid box, both weights reach the ground") {
    Model model;
    addGround(model);
    BodyDesc box;
    box.name = "box";
    ShapeDesc shape;
    shape.polytope = makeBox({Real(0.2), Real(0.2), Real(0.05)});
    box.shapes.push_back(shape);
    box.pose.pos = {0, 0, Real(0.05)};
    box.mass = 2;
    std::string error;
    REQUIRE(addBody(model, box, &error) == 1);
    FemBodyDesc d = blockDesc({Real(0.1), Real(0.1), Real(0.05)}, 2, Real(1e5), Real(0.3), FemMaterialType::CorotatedLinear);
    d.pose.pos = {0, 0, Real(0.151)};
    d.damping = Real(0.01);
    addFem(model, d);
    WorldSettings s;
    World world(model, s);
    for (int step = 0; step < 240; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
    }
    Real onBox = 0, onGround = 0;
    for (const Contact& c : world.contacts()) {
        const Real up = c.normalImpulse * std::fabs(c.geometry.normal.z);
        if (c.femNode >= 0 && c.geometry.bodyB == 1) onBox += up;
        if (c.femNode < 0 && (c.geometry.bodyA == 0 || c.geometry.bodyB == 0)) onGround += up;
    }
    const Real gh = length(s.gravity) * s.dt, mFem = femMass(model, 0);
    MESSAGE("block on box " << onBox << " N s (m g h " << mFem * gh << "), box on ground " << onGround << " N s ("
                            << (mFem + 2) * gh << ")");
    CHECK(near(onBox, mFem * gh, Real(1e-3)));
    CHECK(near(onGround, (mFem + 2) * gh, Real(1e-3)));
    CHECK(lowestNode(model, world.state(), 0) > Real(0.1) - 1e-4);
}

// Deformable on deformable: the upper block rests on the lower one's boundary triangles.
TEST_CASE("fem contact: a deformable block rests on another (vertex-triangle rows)") {
    Model model;
    addGround(model);
    FemBodyDesc lower = blockDesc({Real(0.15), Real(0.15), Real(0.05)}, 3, Real(1e5), Real(0.3), FemMaterialType::StableNeoHookean);
    lower.pose.pos = {0, 0, Real(0.05)};
    lower.damping = Real(0.01);
    addFem(model, lower);
    FemBodyDesc upper = blockDesc({Real(0.07), Real(0.07), Real(0.035)}, 2, Real(1e5), Real(0.3), FemMaterialType::StableNeoHookean);
    upper.pose.pos = {Real(0.013), Real(-0.021), Real(0.137)};
    upper.damping = Real(0.01);
    upper.name = "upper";
    addFem(model, upper);
    WorldSettings s;
    World world(model, s);
    for (int step = 0; step < 240; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
    }
    Real carried = 0;
    int triangleContacts = 0;
    for (const Contact& c : world.contacts())
        if (c.femTri >= 0) {
            ++triangleContacts;
            if (model.femNodeBody[c.femNode] == 1) carried += c.normalImpulse * c.geometry.normal.z;
        }
    const Real weight = femMass(model, 1) * length(s.gravity) * s.dt;
    MESSAGE(triangleContacts << " vertex-triangle contacts, upper's weight carried " << carried << " N s of " << weight
                             << "; upper's lowest node " << lowestNode(model, world.state(), 1) << " m, KE "
                             << world.kineticEnergy() << " J");
    CHECK(triangleContacts > 0);
    CHECK(near(carried, weight, Real(0.02)));
    CHECK(lowestNode(model, world.state(), 1) > Real(0.095));
    CHECK(world.kineticEnergy() < 1e-5);
}

// The drag pulls a surface point towards the target (a free block in zero gravity follows).
TEST_CASE("fem contact: the mouse drag on a deformable surface point") {
    Model model;
    FemBodyDesc d = blockDesc({Real(0.1), Real(0.1), Real(0.1)}, 2, Real(1e5), Real(0.3), FemMaterialType::CorotatedLinear);
    addFem(model, d);
    WorldSettings s;
    s.gravity = {0, 0, 0};
    World world(model, s);
    const Vec3 w{Real(0.2), Real(0.3), Real(0.5)};
    const Vec3 target = Vec3{Real(0.3), 0, Real(0.2)};
    world.setFemDrag(0, w, target);
    DragState drag = world.drag();
    const Real d0 = length(femDragPointOf(model, world.state(), drag) - target);
    for (int step = 0; step < 240; ++step) world.step();
    const Real d1 = length(femDragPointOf(model, world.state(), drag) - target);
    MESSAGE("distance to the target " << d0 << " m -> " << d1 << " m, force " << length(world.drag().force) << " N");
    CHECK(d1 < 0.02 * d0);
    world.setFemDrag(-1, w, target);
    CHECK(world.drag().femTri == -1);
}
