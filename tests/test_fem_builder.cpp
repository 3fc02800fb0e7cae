// Building deformable bodies into a Model: masses, rest data, boundary, pins, attachments, errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "engine/fem/fem_builder.h"
#include "engine/model_builder.h"
#include "engine/world.h"

using namespace cs;

namespace {

FemBodyDesc boxBody() {
    FemBodyDesc d;
    d.name = "block";
    d.mesh = makeBoxTetMesh({Real(0.2), Real(0.1), Real(0.1)}, 4);
    d.pose.pos = {1, 2, 3};
    d.density = 500;
    return d;
}

}  // namespace

TEST_CASE("fem builder: a box body's mass, rest volume and closed boundary") {
    Model model;
    std::string error;
    FemBodyDesc d = boxBody();
    REQUIRE(addFemBody(model, d, &error) == 0);
    const FemBodyInfo& b = model.femBodies[0];
    Real mass = 0, volume = 0;
    for (Real m : model.femNodeMass) mass += m;
    for (const TetRest& r : model.femTetRest) volume += r.volume;
    CHECK(volume == doctest::Approx(0.4 * 0.2 * 0.2).epsilon(1e-12).scale(0));   // the box's volume, relative
    CHECK(mass == doctest::Approx(500 * 0.4 * 0.2 * 0.2).epsilon(1e-12).scale(0));
    // The boundary of a box of 4 x 2 x 2 cubes: 2 triangles per cube face on the surface.
    CHECK(b.triCount == 2 * 2 * (4 * 2 + 4 * 2 + 2 * 2));
    // Closed surface: every edge is shared by exactly two boundary triangles (Euler: E = 3T/2).
    std::map<std::pair<int, int>, int> edges;
    for (const auto& t : model.femTris)
        for (int k = 0; k < 3; ++k) edges[{std::min(t[k], t[(k + 1) % 3]), std::max(t[k], t[(k + 1) % 3])}]++;
    for (const auto& [e, count] : edges) CHECK(count == 2);
    // Placed by the pose; the world starts from the initial positions.
    World world(model);
    REQUIRE(world.state().femPos.size() == model.femRestPos.size());
    CHECK(world.state().femPos[0].x == doctest::Approx(1 - 0.2).epsilon(1e-12).scale(0));   // not within Approx's default 1e-5
    CHECK(world.state().femActivation.size() == 1);
}

TEST_CASE("fem builder: pins and attachments") {
    Model model;
    std::string error;
    BodyDesc base;
    base.name = "base";
    base.shapes.push_back(ShapeDesc{ShapeType::Sphere, {}, Real(0.05)});
    base.pose.pos = {1, 2, 3};
    REQUIRE(addBody(model, base, &error) == 0);
    FemBodyDesc d = boxBody();
    d.pinned = {0, 1};
    d.attached = {{2, 0}};
    REQUIRE(addFemBody(model, d, &error) == 0);
    CHECK(model.femNodeInvMass[0] == 0);
    CHECK(model.femNodeInvMass[1] == 0);
    CHECK(model.femNodeInvMass[2] > 0);
    REQUIRE(model.femAttachments.size() == 1);
    const FemAttachment& a = model.femAttachments[0];
    // The attachment point is the node's initial position in the body's frame.
    const Vec3 back = rotate(model.initialRot[0], a.localPoint) + model.initialPos[0];
    CHECK(length(back - model.femInitialPos[2]) < 1e-12);
}

TEST_CASE("fem builder: bad input is refused in one line and adds nothing") {
    auto refuse = [](FemBodyDesc d, const char* expected) {
        Model model;
        std::string error;
        CHECK(addFemBody(model, d, &error) == -1);
        CHECK(error.find(expected) != std::string::npos);
        CHECK(error.find('\n') == std::string::npos);
        CHECK(model.femBodies.empty());
        CHECK(model.femNodeMass.empty());
    };
    FemBodyDesc d = boxBody();
    d.poisson = Real(0.5);
    refuse(d, "poisson");
    d = boxBody();
    d.youngs = 0;
    refuse(d, "youngs");
    d = boxBody();
    d.density = -1;
    refuse(d, "density");
    d = boxBody();
    d.pinned = {100000};
    refuse(d, "pinned node 100000");
    d = boxBody();
    d.attached = {{0, 3}};
    refuse(d, "does not exist");
    d = boxBody();
    std::swap(d.mesh.tets[5][0], d.mesh.tets[5][1]);   // an inverted tet
    refuse(d, "tet 5");
    d = boxBody();
    d.mesh.tets.clear();
    refuse(d, "empty");
}
