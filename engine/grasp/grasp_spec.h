// Grasping: a gripper or hand driven by a kinematic wrist target, and a scripted grasp.
//
// The wrist follows a kinematic target as MuJoCo's mocap bodies do: the target is the world
// side of a fixed joint (body_a "world") whose anchor and rest rotation the user or a script
// moves between steps; the joint's rows are compliant and force-limited (Joint::maxForce,
// maxTorque), so a blocked gripper pushes with bounded force instead of passing through the
// table. Fingers are joints with drives whose force limit is the grip force (Joint::driveMaxForce):
// prismatic jaws of a parallel gripper, or revolute chains of a hand. One "grip" command in
// [0, 1] moves every finger's drive targets from open to closed; a finger can be set on its own.
// A scale is a platform on a prismatic joint whose drive is a spring (grasp_sensors.h).
//
// The scene's "grasp" block (docs/scene-format.md, "Grasp") names these joints and carries the
// script: keyframes of the wrist target, the grip command and the grip force, interpolated by
// smoothstep (zero speed at every key; the rotation by slerp), with a phase name each (approach, close, lift, ...).
#pragma once

#include <string>
#include <vector>

#include "engine/core/math.h"

namespace cs {

struct FingerSpec {
    std::string name;
    std::vector<int> joints;        // joint indices, base first
    std::vector<Real> open, closed; // drive targets per joint (m or rad)
    Real lever = 0;                 // m: revolute fingers, torque limit = grip force x lever
                                    //   (0: prismatic, the limit is the force itself)
    std::vector<int> pads;          // bodies whose contacts count as this finger's pads
};

struct GraspKey {
    Real time = 0;                  // s
    Vec3 wrist{0, 0, 0};            // target of the wrist joint's anchor, world, m
    Vec3 rotation{0, 0, 0};         // rotation vector (rad) applied to the wrist's rest orientation
    Real grip = 0;                  // 0 open .. 1 closed
    Real force = -1;                // N: grip force; < 0: the spec's gripForce
    std::string phase;              // shown by the app and the runner
};

struct GraspSpec {
    int wristJoint = -1;            // fixed joint from the world to the wrist body (the mocap joint)
    std::vector<FingerSpec> fingers;
    Real gripForce = 10;            // N: default grip force (drive force limit)
    int scaleJoint = -1;            // prismatic joint with a spring drive (the scale), or -1
    int object = -1;                // the body the script picks up (reports), or -1
    int objectFem = -1;             // or the deformable body (Model::femBodies) it picks up, or -1
    std::vector<GraspKey> script;   // sorted by time; empty: no script
    bool present() const { return wristJoint >= 0 || !fingers.empty(); }
};

// What the user or the script asks for at one moment.
struct GraspCommand {
    Vec3 wrist{0, 0, 0};            // target of the wrist anchor, world
    Quat rotation = quatIdentity(); // applied to the wrist's rest orientation
    Real grip = 0;                  // 0 open .. 1 closed, every finger
    std::vector<Real> fingerGrip;   // per finger; < 0 (or missing): follow grip
    Real force = 10;                // N
    std::string phase;
};

}  // namespace cs
