// Redetection (WorldSettings::redetectPasses, World::widenDetection): a rod falls fast, tilted,
// onto the floor at a large step. The speculative narrow phase, widened by the start velocities
// only, lists the low end's vertices; the impulse there spins the rod, and its high end swings
// down through the floor unlisted. Detected again with the solved velocities, the high end's
// vertices are listed and the step keeps both ends out of the floor. Checked: how deep the rod
// ends, that a redetection never adds energy, and that it changes nothing where the first
// detection already saw everything (a rod falling flat).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/model_builder.h"
#include "engine/world.h"

using namespace cs;

namespace {

constexpr Real kHalfLength = Real(0.5), kHalfWidth = Real(0.05);

// Floor top at z = 0; a 1 m rod along x, turned by `tilt` about y (its +x end lower), its lowest
// corner 1 mm above the floor, falling at `speed`.
Model rodOverFloor(Real tilt, Real speed) {
    Model m;
    std::string err;
    BodyDesc floor;
    floor.name = "floor";
    floor.isStatic = true;
    floor.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({5, 5, 0.5}), 0});
    floor.pose.pos = {0, 0, -0.5};
    REQUIRE(addBody(m, floor, &err) >= 0);
    BodyDesc rod;
    rod.name = "rod";
    rod.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({kHalfLength, kHalfWidth, kHalfWidth}), 0});
    rod.pose.rot = quatFromAxisAngle({0, 1, 0}, tilt);   // +x end goes down for tilt > 0
    // Lowest corner (+x, bottom) height above the centre: -(L sin t + W cos t).
    const Real below = kHalfLength * std::sin(tilt) + kHalfWidth * std::cos(tilt);
    rod.pose.pos = {0, 0, below + Real(0.001)};
    rod.linVel = {0, 0, -speed};
    REQUIRE(addBody(m, rod, &err) >= 0);
    return m;
}

// The rod's lowest vertex height (negative: below the floor's top).
Real lowestVertex(const World& w) {
    const ConvexPolytope box = makeBox({kHalfLength, kHalfWidth, kHalfWidth});
    Real lo = Real(1e30);
    for (const Vec3& v : box.vertices) lo = std::min(lo, transformPoint(Transform{w.state().pos[1], w.state().rot[1]}, v).z);
    return lo;
}

World stepOnce(const Model& m, ContactModelType model, int redetect) {
    WorldSettings s;
    s.dt = Real(0.05);
    s.frictionScale = 0;
    s.speculative = 1;
    s.redetectPasses = redetect;
    s.solver.contactModel = model;
    s.solver.newtonIterations = 60;
    s.solver.linearIterations = 100;
    s.solver.newtonTolerance = Real(1e-12);
    World w(m, s);
    w.step();
    return w;
}

}  // namespace

TEST_CASE("redetect: a tilted rod landing on its low end at a 50 ms step keeps its high end out of the floor") {
    const Real tilt = Real(0.15), speed = 8;
    const Model m = rodOverFloor(tilt, speed);
    for (ContactModelType model : {ContactModelType::Standard, ContactModelType::PEG}) {
        CAPTURE(int(model));
        World without = stepOnce(m, model, 0);
        World with = stepOnce(m, model, 2);
        const Real depthWithout = -lowestVertex(without), depthWith = -lowestVertex(with);
        MESSAGE("lowest vertex below the floor: " << depthWithout << " m without, " << depthWith << " m with; spin "
                << length(without.state().angVel[1]) << " / " << length(with.state().angVel[1]) << " rad/s");
        // Without: the low end stops, the rod turns about it and the high end, 0.15 m up, falls
        // through the floor within the step.
        CHECK(depthWithout > Real(0.02));
        // With: both ends are constrained; what is left is the linearized gap's second-order
        // term, far below the 1 mm the rod started above the floor.
        CHECK(depthWith < Real(1e-4));
        // A redetection only lists more contacts of the same time-stepper: no energy comes in.
        const Real ke0 = Real(0.5) * m.mass[1] * speed * speed;
        CHECK(with.kineticEnergy() <= ke0 + m.mass[1] * Real(9.81) * Real(0.05) * speed);
    }
}

TEST_CASE("redetect: a rod falling flat is listed whole at once, and a redetection changes nothing") {
    const Model m = rodOverFloor(0, 8);
    for (ContactModelType model : {ContactModelType::Standard, ContactModelType::PEG}) {
        CAPTURE(int(model));
        World without = stepOnce(m, model, 0);
        World with = stepOnce(m, model, 2);
        for (int k = 0; k < 3; ++k) {
            CHECK(with.state().pos[1][k] == without.state().pos[1][k]);
            CHECK(with.state().linVel[1][k] == without.state().linVel[1][k]);
            CHECK(with.state().angVel[1][k] == without.state().angVel[1][k]);
        }
        CHECK(-lowestVertex(with) < Real(1e-6));
    }
}
