// The position projection (WorldSettings::projectionPasses, World::projectPositions): a face
// that turns within a step moves its plane by a second-order term that the linearized gap
// psi + h J u leaves out. Checked against the closed form of that term, and for what the
// projection must not do: change velocities (kinetic energy), or move bodies that do not overlap.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/model_builder.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

using namespace cs;

namespace {

constexpr Real kHalf = Real(0.1);   // the cube's half extent

// A static spike (a tetrahedron with its apex at the origin, pointing up) under a 0.2 m cube
// whose bottom face touches the apex at its centre, the cube spinning at w about x. No gravity.
Model cubeOnSpike(Real w, Real startGap) {
    Model m;
    std::string err;
    BodyDesc spike;
    spike.name = "spike";
    spike.isStatic = true;
    ConvexPolytope tet;
    REQUIRE(buildConvexHull({{-0.1, -0.1, -0.2}, {0.1, -0.1, -0.2}, {0, 0.1, -0.2}, {0, 0, 0}}, tet).ok);
    spike.shapes.push_back(ShapeDesc{ShapeType::Polytope, tet, 0});
    REQUIRE(addBody(m, spike, &err) >= 0);
    BodyDesc cube;
    cube.name = "cube";
    cube.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({kHalf, kHalf, kHalf}), 0});
    cube.pose.pos = {0, 0, kHalf + startGap};
    cube.angVel = {w, 0, 0};
    REQUIRE(addBody(m, cube, &err) >= 0);
    return m;
}

// How deep the apex (the origin) lies inside the cube: 0 when outside.
Real apexDepth(const World& w) {
    const Vec3 local = rotateInv(w.state().rot[1], Vec3{0, 0, 0} - w.state().pos[1]);
    const Real outside = std::max({std::fabs(local.x), std::fabs(local.y), std::fabs(local.z)}) - kHalf;
    return outside < 0 ? -outside : Real(0);
}

World stepOnce(const Model& m, ContactModelType model, Real h, int passes) {
    WorldSettings s;
    s.dt = h;
    s.gravity = {0, 0, 0};
    s.frictionScale = 0;
    s.solver.contactModel = model;
    s.solver.newtonIterations = 60;
    s.solver.linearIterations = 100;
    s.solver.newtonTolerance = Real(1e-12);
    s.projectionPasses = passes;
    World w(m, s);
    w.step();
    return w;
}

}  // namespace

TEST_CASE("projection: a face turning over a vertex; the second-order overlap is moved apart, velocities kept") {
    // The apex lies on the line from the cube's centre along its bottom face's normal, so the
    // contact's Jacobian has no angular part: the solve applies no impulse and the cube turns
    // freely, by theta = 2 atan(w h / 2) (the integrator's normalize(q + h/2 (0, w) q)). The
    // face's plane then passes the apex by d (1 - cos theta), d = 0.1 m the face's distance from
    // the centre: 5.0e-4 m at w = 2 rad/s, h = 0.05 s.
    const Real w = 2, h = Real(0.05);
    const Real expected = kHalf * (1 - std::cos(2 * std::atan(w * h / 2)));
    const Model m = cubeOnSpike(w, 0);
    for (ContactModelType model : {ContactModelType::Standard, ContactModelType::PEG}) {
        const std::string name = contactModelName(model);
        CAPTURE(name);
        const World off = stepOnce(m, model, h, 0);
        const World on = stepOnce(m, model, h, 2);
        MESSAGE(name, ": apex depth ", apexDepth(off), " m without the projection (closed form ",
                expected, "), ", apexDepth(on), " m with it");
        CHECK(std::fabs(apexDepth(off) - expected) < Real(1e-12));
        CHECK(apexDepth(on) < Real(1e-10));
        // Velocities untouched: the projection moves positions only (no kinetic energy added).
        for (int b = 0; b < 2; ++b) {
            CHECK(on.state().linVel[b].x == off.state().linVel[b].x);
            CHECK(on.state().linVel[b].z == off.state().linVel[b].z);
            CHECK(on.state().angVel[b].x == off.state().angVel[b].x);
        }
        CHECK(on.kineticEnergy() == off.kineticEnergy());
        // The move is the overlap's size, not more: the smallest mass-weighted displacement.
        const Real moved = length(on.state().pos[1] - off.state().pos[1]);
        CHECK(moved > Real(0.5) * expected);
        CHECK(moved < Real(1.5) * expected);
        CHECK(on.profile().project > 0);
    }
}

TEST_CASE("projection: a cube that does not overlap is not moved") {
    // 1 cm above the apex, turning 0.1 rad: the face passes 5e-4 m lower, still 9.5 mm clear.
    const Model m = cubeOnSpike(2, Real(0.01));
    for (ContactModelType model : {ContactModelType::Standard, ContactModelType::PEG}) {
        const std::string name = contactModelName(model);
        CAPTURE(name);
        const World off = stepOnce(m, model, Real(0.05), 0);
        const World on = stepOnce(m, model, Real(0.05), 2);
        CHECK(on.state().pos[1].z == off.state().pos[1].z);
        CHECK(on.state().rot[1].w == off.state().rot[1].w);
        CHECK(on.state().rot[1].x == off.state().rot[1].x);
    }
}

TEST_CASE("projection: scene keys; bad values are one-line errors") {
    Model m;
    WorldSettings s;
    SceneInfo info;
    std::string err;
    const char* body = R"("bodies": [{"shape": {"type": "box", "half_extents": [0.5, 0.5, 0.5]}}])";
    REQUIRE(loadSceneFromText(std::string(R"({"settings": {"projection": 3, "projection_max": 0.05}, )") + body + "}",
                              "p.json", ".", m, s, info, &err));
    CHECK(s.projectionPasses == 3);
    CHECK(s.projectionMaxCorrection == doctest::Approx(0.05));
    for (const char* bad : {R"({"projection": -1})", R"({"projection_max": 0})"}) {
        Model m2;
        WorldSettings s2;
        err.clear();
        CHECK_FALSE(loadSceneFromText(std::string(R"({"settings": )") + bad + ", " + body + "}", "p.json", ".", m2,
                                      s2, info, &err));
        CHECK(err.find("/settings/projection") != std::string::npos);
        CHECK(err.find('\n') == std::string::npos);
    }
}
