// Joints of a scene: fixed, ball, revolute, prismatic between two named bodies (or a body and
// the world), anchor and axis in world coordinates at the initial pose (docs/scene-format.md,
// "Joints"). Compliance is [NSN] Macklin et al. 2019, section 3.2 (m/N on positional rows).
#include "engine/scene/scene_parse.h"

namespace cs::scene {

void readJoint(const Json& v, const std::string& path, SceneContext& ctx) {
    if (ctx.joints.size() >= size_t(Limits::joints))
        ctx.fail(path, "the scene has more than " + std::to_string(Limits::joints) + " joints (the limit)");
    JsonObject obj(v, path, ctx);
    JointSpec spec;
    spec.path = path;
    Joint& j = spec.joint;
    std::string type = obj.text("type");
    if (type == "fixed") j.type = JointType::Fixed;
    else if (type == "ball") j.type = JointType::Ball;
    else if (type == "revolute") j.type = JointType::Revolute;
    else if (type == "prismatic") j.type = JointType::Prismatic;
    else obj.fail("type", "unknown joint type \"" + type + "\" (expected fixed, ball, revolute or prismatic)");
    bool hasAxis = j.type == JointType::Revolute || j.type == JointType::Prismatic;

    j.name = obj.text("name", "");
    spec.bodyA = obj.text("body_a", "world");
    spec.bodyB = obj.text("body_b");
    if (spec.bodyA == spec.bodyB) obj.fail("body_b", "a joint needs two different bodies");
    spec.anchor = obj.vec3("anchor");
    if (hasAxis) {
        spec.axis = obj.vec3("axis");
        if (!(length(spec.axis) > Real(1e-12))) obj.fail("axis", "must be a non-zero vector");
        spec.axis = normalize(spec.axis);
    }
    j.compliance = obj.nonNegative("compliance", 0);
    j.maxForce = obj.has("max_force") ? obj.positive("max_force") : Real(-1);     // N, each positional row
    j.maxTorque = obj.has("max_torque") ? obj.positive("max_torque") : Real(-1);  // N m, each angular row
    if (obj.has("bending_stiffness")) {
        if (j.type != JointType::Revolute) obj.fail("bending_stiffness", "only revolute joints bend");
        j.bendCompliance = 1 / obj.positive("bending_stiffness");   // N m/rad -> rad/(N m)
    }
    if (const Json* d = obj.find("drive")) {
        if (!hasAxis) obj.fail("drive", "only revolute and prismatic joints have a drive");
        JsonObject drive(*d, obj.pathOf("drive"), ctx);
        j.drive = true;
        j.driveTarget = drive.number("target");
        j.driveCompliance = drive.nonNegative("compliance", 0);
        j.driveDamping = drive.nonNegative("damping", 0);   // N s/m or N m s/rad
        if (j.driveDamping > 0 && !(j.driveCompliance > 0))
            drive.fail("damping", "a damped drive is a spring: give it a compliance > 0");
        j.driveMaxForce = drive.has("max_force") ? drive.positive("max_force") : Real(-1);   // N or N m
        drive.finish();
    }
    obj.finish();
    ctx.joints.push_back(spec);
}

}  // namespace cs::scene
