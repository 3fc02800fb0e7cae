// The scene's "grasp" block: the wrist's mocap joint, the fingers (joints with drives, open and
// closed targets, pad bodies), the grip force, the scale's joint, the object, and the script of
// keyframes (engine/grasp/grasp_spec.h; docs/scene-format.md, "Grasp"). Names resolve against
// the built model, so the block is read after the bodies and joints. Its "mimic" entries couple two
// finger joints' coordinates (Model::couplings, engine/solver/joint_coupling.h).
#include <cmath>
#include <fstream>
#include <sstream>

#include "engine/scene/scene_grasp.h"
#include "engine/scene/scene_parse.h"

namespace cs::scene {

namespace {

int findJoint(const Model& model, const std::string& name) {
    for (size_t j = 0; j < model.joints.size(); ++j)
        if (model.joints[j].name == name) return int(j);
    return -1;
}

int findBody(const Model& model, const std::string& name) {
    for (int b = 0; b < model.bodyCount(); ++b)
        if (model.bodyName[b] == name) return b;
    return -1;
}

std::vector<Real> readNumbers(const Json& v, const std::string& path, const SceneContext& ctx, size_t count) {
    if (!v.is_array() || v.size() != count)
        ctx.fail(path, "expected an array of " + std::to_string(count) + " numbers (one per joint), got " + describe(v));
    std::vector<Real> out;
    for (size_t i = 0; i < count; ++i) out.push_back(readNumber(v[i], path + "/" + std::to_string(i), ctx));
    return out;
}

FingerSpec readFinger(const Json& v, const std::string& path, const SceneContext& ctx, const Model& model) {
    JsonObject obj(v, path, ctx);
    FingerSpec f;
    f.name = obj.text("name");
    const Json& joints = obj.require("joints");
    if (!joints.is_array() || joints.empty() || joints.size() > 16)
        obj.fail("joints", "expected an array of 1 to 16 joint names");
    for (size_t k = 0; k < joints.size(); ++k) {
        const std::string p = obj.pathOf("joints") + "/" + std::to_string(k);
        if (!joints[k].is_string()) ctx.fail(p, "expected a joint name");
        const int j = findJoint(model, joints[k].get<std::string>());
        if (j < 0) ctx.fail(p, "unknown joint \"" + joints[k].get<std::string>() + "\"");
        const Joint& joint = model.joints[j];
        if (!joint.drive) ctx.fail(p, "joint \"" + joint.name + "\" has no drive (a finger joint needs one)");
        f.joints.push_back(j);
    }
    f.open = readNumbers(obj.require("open"), obj.pathOf("open"), ctx, f.joints.size());
    f.closed = readNumbers(obj.require("closed"), obj.pathOf("closed"), ctx, f.joints.size());
    f.lever = obj.nonNegative("lever", 0);
    const bool revolute = model.joints[f.joints[0]].type == JointType::Revolute;
    if (revolute && !(f.lever > 0)) obj.fail("lever", "a revolute finger needs a lever (m) > 0 for its grip force");
    if (const Json* pads = obj.find("pads")) {
        if (!pads->is_array() || pads->empty()) obj.fail("pads", "expected an array of body names");
        for (size_t k = 0; k < pads->size(); ++k) {
            const std::string p = obj.pathOf("pads") + "/" + std::to_string(k);
            const int b = (*pads)[k].is_string() ? findBody(model, (*pads)[k].get<std::string>()) : -1;
            if (b < 0) ctx.fail(p, "expected the name of a body, got " + describe((*pads)[k]));
            f.pads.push_back(b);
        }
    } else {
        for (int j : f.joints) f.pads.push_back(model.joints[j].bodyB);
    }
    obj.finish();
    return f;
}

// {"joints": [a, b], "ratio": r, "offset": o, "compliance": c}: q_a - r q_b - o = 0.
JointCoupling readMimic(const Json& v, const std::string& path, const SceneContext& ctx, const Model& model) {
    JsonObject obj(v, path, ctx);
    JointCoupling k;
    const Json& joints = obj.require("joints");
    if (!joints.is_array() || joints.size() != 2) obj.fail("joints", "expected an array of two joint names");
    int found[2];
    for (size_t i = 0; i < 2; ++i) {
        const std::string p = obj.pathOf("joints") + "/" + std::to_string(i);
        if (!joints[i].is_string()) ctx.fail(p, "expected a joint name");
        found[i] = findJoint(model, joints[i].get<std::string>());
        if (found[i] < 0) ctx.fail(p, "unknown joint \"" + joints[i].get<std::string>() + "\"");
        const JointType t = model.joints[size_t(found[i])].type;
        if (t != JointType::Prismatic && t != JointType::Revolute)
            ctx.fail(p, "a mimic couples prismatic or revolute joints");
    }
    if (found[0] == found[1]) obj.fail("joints", "a mimic couples two different joints");
    k.jointA = found[0];
    k.jointB = found[1];
    k.ratio = obj.number("ratio", 1);
    if (!std::isfinite(double(k.ratio)) || k.ratio == 0) obj.fail("ratio", "must be a finite non-zero number");
    k.offset = obj.number("offset", 0);
    k.compliance = obj.nonNegative("compliance", 0);
    k.name = model.joints[size_t(k.jointA)].name + "~" + model.joints[size_t(k.jointB)].name;
    obj.finish();
    return k;
}

}  // namespace

void readGraspScript(const Json& v, const std::string& path, const SceneContext& ctx, GraspSpec& spec) {
    if (!v.is_array() || v.empty() || v.size() > 10000)
        ctx.fail(path, "expected an array of 1 to 10000 keyframes");
    spec.script.clear();
    for (size_t i = 0; i < v.size(); ++i) {
        JsonObject obj(v[i], path + "/" + std::to_string(i), ctx);
        GraspKey k;
        k.time = obj.nonNegative("t", 0);
        if (!spec.script.empty() && !(k.time > spec.script.back().time))
            obj.fail("t", "keyframe times must increase");
        k.wrist = obj.vec3("wrist");
        k.rotation = obj.vec3("rotation_deg", Vec3{0, 0, 0}) * Real(3.14159265358979323846 / 180);
        k.grip = obj.number("grip", 0);
        if (k.grip < 0 || k.grip > 1) obj.fail("grip", "must be in [0, 1] (0 open, 1 closed)");
        k.force = obj.has("force") ? obj.positive("force") : Real(-1);
        k.phase = obj.text("phase", "");
        obj.finish();
        spec.script.push_back(k);
    }
}

void readGrasp(const Json& v, const std::string& path, const SceneContext& ctx, Model& model, GraspSpec& spec) {
    JsonObject obj(v, path, ctx);
    spec = GraspSpec{};
    if (obj.has("wrist")) {
        const std::string name = obj.text("wrist");
        spec.wristJoint = findJoint(model, name);
        if (spec.wristJoint < 0) obj.fail("wrist", "unknown joint \"" + name + "\"");
        const Joint& j = model.joints[spec.wristJoint];
        if (j.type != JointType::Fixed || j.bodyA != -1)
            obj.fail("wrist", "the wrist joint must be a fixed joint from the world (body_a \"world\")");
    }
    spec.gripForce = obj.positive("grip_force", spec.gripForce);
    if (obj.has("scale")) {
        const std::string name = obj.text("scale");
        spec.scaleJoint = findJoint(model, name);
        if (spec.scaleJoint < 0) obj.fail("scale", "unknown joint \"" + name + "\"");
        const Joint& j = model.joints[spec.scaleJoint];
        if (j.type != JointType::Prismatic || !j.drive || !(j.driveCompliance > 0))
            obj.fail("scale", "the scale must be a prismatic joint with a spring drive (compliance > 0)");
    }
    if (obj.has("object")) {
        const std::string name = obj.text("object");
        spec.object = findBody(model, name);
        for (int f = 0; spec.object < 0 && f < (int)model.femBodies.size(); ++f)
            if (model.femBodies[f].name == name) spec.objectFem = f;   // a deformable object
        if (spec.object < 0 && spec.objectFem < 0) obj.fail("object", "unknown body \"" + name + "\"");
    }
    if (const Json* fingers = obj.find("fingers")) {
        if (!fingers->is_array() || fingers->size() > 16) obj.fail("fingers", "expected an array of at most 16 fingers");
        for (size_t i = 0; i < fingers->size(); ++i)
            spec.fingers.push_back(readFinger((*fingers)[i], obj.pathOf("fingers") + "/" + std::to_string(i), ctx, model));
    }
    if (const Json* mimic = obj.find("mimic")) {
        if (!mimic->is_array() || mimic->size() > 16) obj.fail("mimic", "expected an array of at most 16 couplings");
        for (size_t i = 0; i < mimic->size(); ++i)
            model.couplings.push_back(readMimic((*mimic)[i], obj.pathOf("mimic") + "/" + std::to_string(i), ctx, model));
    }
    if (const Json* script = obj.find("script")) readGraspScript(*script, obj.pathOf("script"), ctx, spec);
    obj.finish();
    if (!spec.present()) ctx.fail(path, "a grasp block needs a wrist or fingers");
}

}  // namespace cs::scene

namespace cs {

bool loadGraspScript(const std::string& file, GraspSpec& spec, std::string* error) {
    std::ifstream in(file, std::ios::binary);
    if (!in.is_open()) {
        if (error) *error = escapeControl(file + ": cannot read the script file");
        return false;
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    scene::SceneContext ctx;
    ctx.file = file;
    ctx.text = &text;
    try {
        const scene::TextPosition deep = scene::findTooDeep(text);
        if (deep.line > 0) throw scene::SceneError(file + ":" + std::to_string(deep.line) + ": nested too deep");
        scene::Json root;
        try {
            root = scene::Json::parse(text);
        } catch (const scene::Json::parse_error& e) {
            throw scene::SceneError(file + ": not valid JSON (" + e.what() + ")");
        }
        scene::JsonObject top(root, "", ctx);
        GraspSpec read = spec;
        scene::readGraspScript(top.require("script"), "/script", ctx, read);
        top.finish();
        spec.script = read.script;
    } catch (const std::exception& e) {
        if (error) *error = escapeControl(e.what());
        return false;
    }
    return true;
}

}  // namespace cs
