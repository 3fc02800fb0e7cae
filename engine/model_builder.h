// Building a Model body by body: the scene loader, the app's launcher and the tests use this.
//
// A body is described by its parts in a body frame of the caller's choice; addBody computes the
// mass properties of the union (density or an explicit mass), moves the body frame to the
// centre of mass and stores the parts relative to it. Bad input (non-positive mass or density,
// a degenerate part) gives a one-line error and adds nothing.
#pragma once

#include <string>
#include <vector>

#include "engine/model.h"

namespace cs {

struct ShapeDesc {
    ShapeType type = ShapeType::Polytope;
    ConvexPolytope polytope;          // for ShapeType::Polytope, in part coordinates
    Real radius = 0;                  // for ShapeType::Sphere
    Transform local{{0, 0, 0}, {1, 0, 0, 0}};   // part frame in the body frame
};

struct BodyDesc {
    std::string name;
    bool isStatic = false;
    Real density = 1000;              // kg/m^3, used when mass <= 0 is not given explicitly
    Real mass = 0;                    // > 0: overrides density (inertia scaled to match)
    std::vector<ShapeDesc> shapes;
    Transform pose{{0, 0, 0}, {1, 0, 0, 0}};   // body frame in the world
    Vec3 linVel{0, 0, 0}, angVel{0, 0, 0};
    Material material;
    Real spawnTime = 0;
    Color3 color{0.6f, 0.6f, 0.65f};
    float opacity = 1.f;              // (0, 1]: below 1 drawn see-through (glass walls)
};

// Returns the new body's index, or -1 with *error set.
int addBody(Model& model, const BodyDesc& desc, std::string* error);

// Joints reference bodies by index; anchors are given in world coordinates at the initial pose
// and converted to each body's COM frame.
int addJoint(Model& model, Joint joint, Vec3 worldAnchor, Vec3 worldAxis, std::string* error);

}  // namespace cs
