// Shared set-ups for the FEM physics tests: a ground box and deformable blocks and beams.
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "engine/fem/fem_builder.h"
#include "engine/fem/fem_drag.h"
#include "engine/fem/fem_step.h"
#include "engine/model_builder.h"
#include "engine/world.h"

namespace cs::femtest {

// A static ground box with its top face at z = 0.
inline void addGround(Model& model, Real friction = Real(0.5)) {
    BodyDesc g;
    g.name = "ground";
    g.isStatic = true;
    ShapeDesc s;
    s.polytope = makeBox({5, 5, Real(0.5)});
    g.shapes.push_back(s);
    g.pose.pos = {0, 0, Real(-0.5)};
    g.material.friction = friction;
    std::string error;
    REQUIRE(addBody(model, g, &error) >= 0);
}

inline FemBodyDesc blockDesc(Vec3 half, int cells, Real youngs, Real poisson, FemMaterialType type) {
    FemBodyDesc d;
    d.name = "block";
    d.mesh = makeBoxTetMesh(half, cells);
    d.youngs = youngs;
    d.poisson = poisson;
    d.type = type;
    return d;
}

inline int addFem(Model& model, const FemBodyDesc& d) {
    std::string error;
    const int b = addFemBody(model, d, &error);
    INFO(error);
    REQUIRE(b >= 0);
    return b;
}

// Mesh nodes (body frame) with coordinate k within tol of value.
inline std::vector<int> nodesAt(const TetMesh& mesh, int k, Real value, Real tol = Real(1e-9)) {
    std::vector<int> out;
    for (int i = 0; i < (int)mesh.nodes.size(); ++i)
        if (std::fabs(mesh.nodes[i][k] - value) < tol) out.push_back(i);
    return out;
}

inline Real totalVolume(const Model& model, const State& state) {
    Real v = 0;
    for (int t = 0; t < model.femTetCount(); ++t) {
        const auto& tet = model.femTets[t];
        const Vec3 a = state.femPos[tet[0]];
        v += dot(state.femPos[tet[1]] - a, cross(state.femPos[tet[2]] - a, state.femPos[tet[3]] - a)) / 6;
    }
    return v;
}

// Relative closeness (doctest::Approx adds an absolute scale of 1, under which small figures
// always pass).
inline bool near(Real value, Real expected, Real relative) {
    return std::fabs(value - expected) <= relative * std::fabs(expected);
}

inline Vec3 femDragPointOf(const Model& model, const State& state, const DragState& drag) {
    return femDragPoint(model, state, drag);
}

}  // namespace cs::femtest
