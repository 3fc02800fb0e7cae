// A static slab with its top at z = 0 and a 0.2 m cube at `pose` moving with (v, w): the
// speculative-contact worlds of test_speculative.cpp and test_exec_parity.cpp.
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "engine/model_builder.h"

namespace cs::test {

inline Model cubeOverFloor(Transform pose, Vec3 v, Vec3 w) {
    Model m;
    std::string err;
    BodyDesc floor;
    floor.name = "floor";
    floor.isStatic = true;
    floor.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({1, 1, 0.1}), 0});
    floor.pose.pos = {0, 0, -0.1};
    REQUIRE(addBody(m, floor, &err) >= 0);
    BodyDesc cube;
    cube.name = "cube";
    cube.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox({0.1, 0.1, 0.1}), 0});
    cube.pose = pose;
    cube.linVel = v;
    cube.angVel = w;
    REQUIRE(addBody(m, cube, &err) >= 0);
    return m;
}

}  // namespace cs::test
