// Bodies of a scene: name, shapes, pose, velocities, density or mass, material, colour
// (docs/scene-format.md, "Bodies").
#include "engine/scene/scene_parse.h"

namespace cs::scene {

Material readMaterial(const Json& v, const std::string& path, const SceneContext& ctx) {
    if (v.is_string()) {
        auto it = ctx.materials.find(v.get<std::string>());
        if (it == ctx.materials.end())
            ctx.fail(path, "unknown material \"" + v.get<std::string>() +
                               "\" (define it under \"materials\")");
        return it->second;
    }
    JsonObject obj(v, path, ctx);
    Material m;
    m.friction = obj.nonNegative("friction", m.friction);
    m.restitution = obj.nonNegative("restitution", m.restitution);
    if (m.restitution > 1) obj.fail("restitution", "must lie in [0, 1]");
    obj.finish();
    return m;
}

Color3 readColor(const Json& v, const std::string& path, const SceneContext& ctx) {
    Vec3 c = readVec3(v, path, ctx);
    for (int i = 0; i < 3; ++i)
        if (!(c[i] >= 0 && c[i] <= 1)) ctx.fail(path, "colour components must lie in [0, 1]");
    return Color3{float(c.x), float(c.y), float(c.z)};
}

void readBodyCommon(JsonObject& obj, BodyDesc& body) {
    const SceneContext& ctx = obj.ctx();
    body.isStatic = obj.flag("static", body.isStatic);
    bool hasMass = obj.has("mass"), hasDensity = obj.has("density");
    if (hasMass && hasDensity) obj.fail("mass", "give either \"mass\" or \"density\", not both");
    if (body.isStatic && (hasMass || hasDensity))
        obj.fail(hasMass ? "mass" : "density", "a static body has no mass or density");
    if (hasMass) body.mass = obj.positive("mass");
    if (hasDensity) body.density = obj.positive("density");
    if (const Json* m = obj.find("material")) body.material = readMaterial(*m, obj.pathOf("material"), ctx);
    if (const Json* c = obj.find("color")) body.color = readColor(*c, obj.pathOf("color"), ctx);
    if (obj.has("opacity")) {
        Real a = obj.number("opacity");
        if (!(a > 0 && a <= 1)) obj.fail("opacity", "opacity must lie in (0, 1] (1: opaque)");
        body.opacity = float(a);
    }
}

BodyDesc readBody(const Json& v, const std::string& path, SceneContext& ctx) {
    JsonObject obj(v, path, ctx);
    BodyDesc body;
    body.color = ctx.paletteColor(int(ctx.bodies.size()));
    body.name = obj.text("name", "");
    if (body.name == "world") obj.fail("name", "\"world\" is reserved for joints to the world");
    readBodyCommon(obj, body);

    bool one = obj.has("shape"), many = obj.has("shapes");
    if (one == many) ctx.fail(path, "give exactly one of \"shape\" or \"shapes\"");
    if (one) {
        body.shapes.push_back(readShape(obj.require("shape"), obj.pathOf("shape"), ctx));
    } else {
        const Json& list = obj.require("shapes");
        if (!list.is_array() || list.empty()) obj.fail("shapes", "expected a non-empty array of shapes");
        for (size_t i = 0; i < list.size(); ++i)
            body.shapes.push_back(readShape(list[i], obj.pathOf("shapes") + "/" + std::to_string(i), ctx));
    }

    // Pose, optionally relative to an earlier body's scene frame ("frame": name).
    body.pose = readPose(obj);
    if (obj.has("frame")) {
        std::string frame = obj.text("frame");
        auto it = ctx.frames.find(frame);
        if (it == ctx.frames.end())
            obj.fail("frame", "unknown body \"" + frame + "\" (frames must name an earlier body)");
        body.pose = composeTransforms(it->second, body.pose);
    }
    body.linVel = obj.vec3("velocity", body.linVel);
    body.angVel = obj.vec3("angular_velocity", body.angVel);
    body.spawnTime = obj.nonNegative("spawn_time", 0);
    if (body.isStatic && (lengthSq(body.linVel) > 0 || lengthSq(body.angVel) > 0 || body.spawnTime > 0))
        ctx.fail(path, "a static body cannot have a velocity or a spawn time");
    obj.finish();
    return body;
}

}  // namespace cs::scene
