// Speculative contacts (WorldSettings::speculative, narrow_phase.h pairSettings): at large steps
// a body moves farther than the fixed margin, or turns a corner that was not applicable at the
// start of the step into the floor. Both are checked on one step against the exact overlap.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "engine/geometry/overlap_volume.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"
#include "tests/cube_over_floor.h"

using namespace cs;
using cs::test::cubeOverFloor;

namespace {

Real cubeFloorOverlap(const World& w) {
    const Model& m = w.model();
    return overlapVolume(m.polytopes[m.shapePolytope[0]], w.shapeTransform(0), m.polytopes[m.shapePolytope[1]],
                         w.shapeTransform(1));
}

// The world after `steps` steps of h with speculative scale `spec` (both the narrow phase's and
// PEG's), frictionless.
World run(const Model& m, ContactModelType model, Real h, Real spec, int steps) {
    WorldSettings s;
    s.dt = h;
    s.frictionScale = 0;
    s.speculative = spec;
    s.solver.contactModel = model;
    s.solver.peg.motionScale = spec;
    World w(m, s);
    for (int k = 0; k < steps; ++k) w.step();
    MESSAGE(std::string(contactModelName(model)), " speculative ", spec, ": overlap ", cubeFloorOverlap(w), " m^3, cube z ",
            w.state().pos[1].z);
    return w;
}

Real overlapAfter(const Model& m, ContactModelType model, Real h, Real spec, int steps) {
    return cubeFloorOverlap(run(m, model, h, spec, steps));
}

Real finalHeight(const Model& m, ContactModelType model, Real h, Real spec, int steps) {
    return run(m, model, h, spec, steps).state().pos[1].z;
}

}  // namespace

TEST_CASE("speculative: a cube falling 0.36 m per step onto the floor lands instead of passing through") {
    // 12 m/s, h = 0.03 s: the cube's bottom, 0.2 m above the floor, crosses it within the second
    // step, beyond the fixed 2 cm margin: with fixed relaxations the narrow phase never sees the
    // floor and the cube ends below it. With the margin grown by the motion it lands on it.
    const Model m = cubeOverFloor({{0, 0, 0.3}, quatIdentity()}, {0, 0, -12}, {0, 0, 0});
    for (ContactModelType model : {ContactModelType::Standard, ContactModelType::PEG}) {
        CHECK(finalHeight(m, model, Real(0.03), 0, 2) < Real(0));
        const Real z = finalHeight(m, model, Real(0.03), 1, 2);
        CHECK(std::fabs(z - Real(0.1)) < Real(1e-5));
    }
}

TEST_CASE("speculative: a corner swung into the floor within the step is listed and held") {
    // The cube hangs on one bottom edge, its bottom face tilted 30 deg, that edge 5 mm up, falls
    // at 1 m/s and turns at 25 rad/s towards flat: 0.75 rad in one 30 ms step swings the other
    // bottom edge, 5.5 cm up at the start (beyond the 2 cm margin, and its vertices not
    // applicable to the floor: one of their edges points down at 30 deg), into the floor.
    // Measured: 6.0e-5 m^3 of overlap with fixed relaxations, none with speculative ones.
    const Real s30 = Real(0.5), c30 = std::sqrt(Real(3)) / 2;
    const Real lowest = Real(0.1) * (c30 + s30);   // centre height above the lowest edge
    const Model m = cubeOverFloor({{0, 0, lowest + Real(0.005)}, quatFromAxisAngle({1, 0, 0}, Real(M_PI / 6))},
                                  {0, 0, Real(-1)}, {-25, 0, 0});
    for (ContactModelType model : {ContactModelType::Standard, ContactModelType::PEG}) {
        CHECK(overlapAfter(m, model, Real(0.03), 0, 1) > Real(1e-5));
        CHECK(overlapAfter(m, model, Real(0.03), 1, 1) < Real(1e-7));
    }
}
