// The bodies of the relaxation methods' tests (test_soft_step.cpp, test_pgs_step.cpp): a static
// ground slab whose top face is the plane z = 0, tilted by theta about the y axis, and boxes.
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "engine/model_builder.h"

namespace cs::test {

inline void addGround(Model& m, Real theta = 0, Real friction = 1) {
    BodyDesc d;
    d.name = "ground";
    d.isStatic = true;
    d.material.friction = friction;
    ShapeDesc s;
    s.polytope = makeBox({20, 20, 1});
    s.local.pos = {0, 0, -1};
    d.shapes.push_back(s);
    d.pose.rot = quatFromAxisAngle({0, 1, 0}, theta);
    std::string err;
    REQUIRE(addBody(m, d, &err) >= 0);
}

inline int addBox(Model& m, const std::string& name, Vec3 half, Vec3 pos, Real mass, Real friction = Real(0.5),
                  Quat rot = quatIdentity()) {
    BodyDesc d;
    d.name = name;
    d.mass = mass;
    d.material.friction = friction;
    ShapeDesc s;
    s.polytope = makeBox(half);
    d.shapes.push_back(s);
    d.pose.pos = pos;
    d.pose.rot = rot;
    std::string err;
    const int b = addBody(m, d, &err);
    REQUIRE_MESSAGE(b >= 0, err);
    return b;
}

}  // namespace cs::test
