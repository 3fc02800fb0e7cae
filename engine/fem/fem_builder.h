// Adding a deformable body to a Model: a tet mesh, a material and how the body is held.
//
// The mesh is the rest shape in a body frame of the caller's choice, placed in the world by
// `pose`. addFemBody checks it (validateTetMesh: no inverted or degenerate tet, every node used),
// lumps the nodes' masses from the density ([NSN] section 9.3), stores each tet's rest data and
// the boundary triangles, and appends pins and attachments. Bad input gives a one-line error and
// adds nothing.
#pragma once

#include <string>
#include <vector>

#include "engine/fem/tet_mesh.h"
#include "engine/model.h"

namespace cs {

struct FemBodyDesc {
    std::string name;
    TetMesh mesh;                          // rest shape, body frame (m)
    Transform pose{{0, 0, 0}, {1, 0, 0, 0}};   // body frame in the world
    Vec3 linVel{0, 0, 0};                  // initial velocity of every node, world
    FemMaterialType type = FemMaterialType::CorotatedLinear;
    Real youngs = Real(1e5);               // Y, Pa
    Real poisson = Real(0.45);             // nu in (-1, 0.5)
    Real density = 1000;                   // kg/m^3
    Real damping = 0;                      // s: Rayleigh beta, >= 0
    Material material;                     // friction against other bodies
    bool selfContact = false;              // detect contact of the body with itself (fem_contact.h)
    std::vector<int> pinned;               // nodes held fixed in the world
    std::vector<std::array<int, 2>> attached;   // (node, rigid body index): node moves with the body
    std::vector<Real> activation;          // (tets) weight of the activation stress; empty: none
    Color3 color{0.85f, 0.3f, 0.25f};
};

// Returns the new FEM body's index into model.femBodies, or -1 with *error set.
int addFemBody(Model& model, const FemBodyDesc& desc, std::string* error);

}  // namespace cs
