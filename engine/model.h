// Model: everything that does not change while stepping (MuJoCo's mjModel, Warp's Model).
//
// Structure of arrays; every array is commented with its shape. Bodies are stored about their
// centre of mass. A body owns a contiguous range of convex parts (shapes): a compound body such
// as a table or a container is a union of convex polytopes, as in [PEG] section 6.
// Emitted bodies (the pouring scenes) exist in the model from the start, dormant until
// spawnTime, so that the model stays fixed while stepping and runs stay deterministic.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/core/math.h"
#include "engine/fem/fem_material_hd.h"
#include "engine/geometry/polytope.h"

namespace cs {
struct Color3 { float r, g, b; };
}

namespace cs {

enum class ShapeType : int { Polytope = 0, Sphere = 1 };

enum class JointType : int { Fixed = 0, Ball = 1, Revolute = 2, Prismatic = 3 };

struct Material {
    Real friction = Real(0.5);     // Coulomb mu
    Real restitution = 0;          // used by impact models (PLUS); the time stepper is inelastic
};

struct Joint {
    JointType type = JointType::Ball;
    int bodyA = -1, bodyB = -1;    // -1: the world
    Vec3 anchorA{0, 0, 0};         // in A's COM frame (world frame when bodyA == -1)
    Vec3 anchorB{0, 0, 0};
    Vec3 axisA{0, 0, 1};           // hinge / slide axis in A's frame
    Vec3 axisB{0, 0, 1};
    Quat relRot = quatIdentity();  // rest relative orientation q_A^-1 q_B (fixed / angular rows)
    Real compliance = 0;           // [NSN] section 3.2, m/N (positional rows)
    Real bendCompliance = -1;      // revolute: angular compliance of the free axis (<0: free)
    bool drive = false;            // drive the free coordinate to driveTarget
    Real driveTarget = 0;          // rad (revolute) or m (prismatic)
    Real driveCompliance = 0;
    Real driveDamping = 0;         // N s/m or N m s/rad: > 0 makes the drive a spring-damper with
                                   //   k = 1 / driveCompliance (a scale's spring, a finger's servo)
    Real driveMaxForce = -1;       // N or N m: the drive's force limit (|lambda| <= this h); < 0: none
    Real maxForce = -1;            // N: limit on each positional row of the joint (a compliant,
                                   //   force-limited coupling such as the wrist's mocap joint); < 0: none
    Real maxTorque = -1;           // N m: the same for each angular row
    std::string name;
};

// A mimic (gear) coupling of two joints' free coordinates q (prismatic: m, revolute: rad):
//     q_a - ratio q_b - offset = 0,
// one row on the joints' bodies (up to four; engine/solver/joint_coupling.h), e.g. the two jaws of
// a parallel gripper closing together.
struct JointCoupling {
    int jointA = -1, jointB = -1;  // prismatic or revolute joints
    Real ratio = 1;
    Real offset = 0;
    Real compliance = 0;           // m/N (or rad/(N m)), the compliance form of [NSN] section 3.2
    std::string name;
};

// A deformable body: a tetrahedral FEM mesh ([NSN] section 9). Its nodes, tets and boundary
// triangles are contiguous ranges of the model's FEM arrays.
struct FemBodyInfo {
    std::string name;
    int firstNode = 0, nodeCount = 0;
    int firstTet = 0, tetCount = 0;
    int firstTri = 0, triCount = 0;     // boundary triangles (drawing, contact)
    FemMaterial material;               // type and Lame parameters
    Real youngs = 0, poisson = 0;       // Pa, -: as given, for the UI
    Real density = 1000;                // kg/m^3
    Real damping = 0;                   // s: Rayleigh stiffness-proportional beta (row c = beta k)
    Material contact;                   // friction against other bodies
    bool selfContact = false;           // nodes against the body's own triangles (fem_contact.h)
    Color3 color{0.85f, 0.3f, 0.25f};
};

// A node held to a point of a rigid body (the PneuNet base, a gripper pad): the point is the
// node's initial position in the body's COM frame.
struct FemAttachment {
    int node = -1;
    int body = -1;
    Vec3 localPoint{0, 0, 0};
};

struct Model {
    // ---- bodies (nbody) ----
    std::vector<std::string> bodyName;   // (nbody)
    std::vector<Real> invMass;           // (nbody) 0 for static bodies
    std::vector<Real> mass;              // (nbody) 0 for static bodies
    std::vector<Mat3> inertiaLocal;      // (nbody) about the COM, body frame
    std::vector<Mat3> invInertiaLocal;   // (nbody) zero for static bodies
    std::vector<int> bodyMaterial;       // (nbody) index into materials
    std::vector<int> bodyFirstShape;     // (nbody) first shape of the body
    std::vector<int> bodyShapeCount;     // (nbody)
    std::vector<Real> bodySpawnTime;     // (nbody) dormant before this time (0: from the start)
    std::vector<Color3> bodyColor;       // (nbody) display colour
    std::vector<float> bodyOpacity;      // (nbody) display opacity in (0, 1]; below 1 the body is
                                         // drawn see-through and a picking ray passes a static one

    // ---- shapes: convex parts (nshape) ----
    std::vector<ShapeType> shapeType;    // (nshape)
    std::vector<int> shapeBody;          // (nshape)
    std::vector<Transform> shapeLocal;   // (nshape) part frame relative to the body COM frame
    std::vector<int> shapePolytope;      // (nshape) index into polytopes, -1 for spheres
    std::vector<Real> shapeRadius;       // (nshape) sphere radius; bounding radius for polytopes

    std::vector<ConvexPolytope> polytopes;  // (npolytope) in part-local coordinates
    std::vector<Material> materials;        // (nmaterial)
    std::vector<Joint> joints;              // (njoint)
    std::vector<JointCoupling> couplings;   // (ncoupling) rows after the joints' (joint_coupling.h)

    // ---- deformable bodies (nfem), their nodes (nnode), tets (ntet), boundary triangles (ntri) ----
    std::vector<FemBodyInfo> femBodies;              // (nfem)
    std::vector<Vec3> femRestPos;                    // (nnode) rest shape placed at the initial pose, world
    std::vector<Vec3> femInitialPos, femInitialVel;  // (nnode)
    std::vector<Real> femNodeMass;                   // (nnode) lumped, kg
    std::vector<Real> femNodeInvMass;                // (nnode) 0 for pinned nodes
    std::vector<int> femNodeBody;                    // (nnode) index into femBodies
    std::vector<std::array<int, 4>> femTets;         // (ntet) node indices (global), positively oriented
    std::vector<TetRest> femTetRest;                 // (ntet) Dm^-1 and rest volume
    std::vector<int> femTetBody;                     // (ntet)
    std::vector<Real> femTetActivation;              // (ntet) weight of the body's activation stress (0 or 1)
    std::vector<std::array<int, 3>> femTris;         // (ntri) boundary, wound outwards, node indices (global)
    std::vector<FemAttachment> femAttachments;       // (nattach)
    std::vector<FemAttachment> femStaticPins;        // nodes attached to a static body: pinned instead
                                                     //   (femNodeInvMass 0, no rows; fem_builder.cpp)

    // Initial state of each body (the scene's poses and velocities).
    std::vector<Vec3> initialPos, initialLinVel, initialAngVel;   // (nbody)
    std::vector<Quat> initialRot;                                  // (nbody)

    int bodyCount() const { return (int)invMass.size(); }
    int shapeCount() const { return (int)shapeType.size(); }
    int femNodeCount() const { return (int)femNodeMass.size(); }
    int femTetCount() const { return (int)femTets.size(); }
    bool isStatic(int b) const { return invMass[b] == Real(0); }
};

}  // namespace cs
