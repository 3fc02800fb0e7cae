// Deformable bodies of a scene: the "deformables" array (docs/scene-format.md, "Deformable
// bodies"). Each entry names a tet mesh (a generator, TetGen .node/.ele files or a closed OBJ
// surface filled by TetGen), a material, a pose, and node and tet selections for pins,
// attachments to rigid bodies and activation weights. Read after the rigid bodies (their names
// and frames are known), built after them (attachments need their indices) by addFemBody.
#include <cmath>
#include <filesystem>

#include "engine/geometry/obj_reader.h"
#include "engine/scene/scene_parse.h"

namespace cs::scene {

namespace {

std::string resolvePath(JsonObject& obj, const char* key) {
    std::filesystem::path file(obj.text(key));
    if (file.is_relative()) file = std::filesystem::path(obj.ctx().dir) / file;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) obj.fail(key, "file not found: " + file.lexically_normal().string());
    return file.string();
}

// The tet count a grid of n cubes would have, checked before it is generated.
void checkGridSize(JsonObject& obj, const char* key, double cubes, const SceneContext& ctx) {
    if (6 * cubes + ctx.femTets > double(Limits::femTets))
        obj.fail(key, "the mesh would have " + formatNumber(6 * cubes) + " tets; the scene's deformables are limited to " +
                          std::to_string(Limits::femTets));
}

TetMesh readMesh(const Json& v, const std::string& path, const SceneContext& ctx) {
    JsonObject obj(v, path, ctx);
    const std::string type = obj.text("type");
    TetMesh mesh;
    std::string error;
    bool ok = true;
    if (type == "box") {
        const Vec3 h = obj.positiveVec3("half_extents");
        const int cells = obj.integer("cells", 4, 1, Limits::femCells);
        checkGridSize(obj, "cells", double(cells) * cells * cells, ctx);
        mesh = makeBoxTetMesh(h, cells);
    } else if (type == "beam") {
        const Real length = obj.positive("length"), halfWidth = obj.positive("half_width");
        const Real halfHeight = obj.positive("half_height");
        const int cells = obj.integer("cells", 10, 1, Limits::femCells);
        const int cross = obj.integer("cross_cells", 2, 1, Limits::femCells);
        const Real shorter = std::min(halfWidth, halfHeight);
        checkGridSize(obj, "cells", double(cells) * std::max(1.0, double(cross) * halfWidth / shorter) *
                                        std::max(1.0, double(cross) * halfHeight / shorter), ctx);
        mesh = makeBeamTetMesh(length, halfWidth, halfHeight, cells, cross);
    } else if (type == "sphere") {
        const Real radius = obj.positive("radius");
        const int subdivisions = obj.integer("subdivisions", 2, 0, 4);
        ok = makeSphereTetMesh(radius, subdivisions, obj.integer("resolution", 3, 1, Limits::femResolution), mesh, &error);
    } else if (type == "capsule") {
        const Real radius = obj.positive("radius"), halfLength = obj.nonNegative("half_length", 0);
        ok = makeCapsuleTetMesh(radius, halfLength, obj.integer("resolution", 3, 1, Limits::femResolution), mesh, &error);
    } else if (type == "tetgen") {
        const std::string node = resolvePath(obj, "node"), ele = resolvePath(obj, "ele");
        ok = loadTetGenFiles(node, ele, mesh, &error);
    } else if (type == "obj") {
        const std::string file = resolvePath(obj, "path");
        std::vector<Vec3> vertices;
        std::vector<std::array<int, 3>> triangles;
        ObjLimits limits{Limits::objVertices, Limits::objBytes};
        if (!readObjSurface(file, vertices, triangles, &error, limits)) obj.fail("path", "cannot read OBJ file " + error);
        if (!checkClosedSurface(vertices, triangles, &error)) obj.fail("path", file + ": " + error);
        // The largest tet: (bounding box diagonal / resolution)^3; no bound without a resolution.
        const int resolution = obj.integer("resolution", 0, 0, Limits::femResolution);
        Vec3 lo = vertices[0], hi = vertices[0];
        for (const Vec3& p : vertices) { lo = vmin(lo, p); hi = vmax(hi, p); }
        const Real edge = resolution > 0 ? length(hi - lo) / resolution : 0;
        if (!tetrahedralizeSurface(vertices, triangles, edge * edge * edge, mesh, &error)) obj.fail("path", file + ": " + error);
    } else {
        obj.fail("type", "unknown mesh type \"" + type + "\" (expected box, beam, sphere, capsule, tetgen or obj)");
    }
    if (!ok) ctx.fail(path, error);
    const Real scale = obj.positive("scale", 1);
    for (Vec3& p : mesh.nodes) {
        p = scale * p;
        for (Real c : {p.x, p.y, p.z})
            if (!(std::fabs(c) <= Real(Limits::length))) obj.fail("scale", "a node lies out of range (|x| <= 1e6 m)");
    }
    if (mesh.tets.size() + size_t(ctx.femTets) > size_t(Limits::femTets) ||
        mesh.nodes.size() + size_t(ctx.femNodes) > size_t(Limits::femNodes))
        ctx.fail(path, "the mesh has " + std::to_string(mesh.nodes.size()) + " nodes and " + std::to_string(mesh.tets.size()) +
                           " tets; the scene's deformables are limited to " + std::to_string(Limits::femNodes) +
                           " nodes and " + std::to_string(Limits::femTets) + " tets");
    obj.finish();
    return mesh;
}

// A selection of nodes (tets == false) or tets (by their centroid), in the mesh frame (before
// the pose): {"all": true}, {"indices": [...]}, {"box": {"min", "max"}} or
// {"half_space": {"normal", "offset"}} (points p with normal . p >= offset, normal made unit).
std::vector<int> readSelection(const Json& v, const std::string& path, const SceneContext& ctx, const TetMesh& mesh,
                               bool tets) {
    JsonObject obj(v, path, ctx);
    const int count = int(tets ? mesh.tets.size() : mesh.nodes.size());
    auto point = [&](int i) {
        if (!tets) return mesh.nodes[i];
        const auto& k = mesh.tets[i];
        return Real(0.25) * (mesh.nodes[k[0]] + mesh.nodes[k[1]] + mesh.nodes[k[2]] + mesh.nodes[k[3]]);
    };
    Vec3 lo = mesh.nodes[0], hi = mesh.nodes[0];
    for (const Vec3& p : mesh.nodes) { lo = vmin(lo, p); hi = vmax(hi, p); }
    const Real tol = Real(1e-9) * std::max(Real(1e-6), length(hi - lo));   // points on a face count as inside
    const int kinds = int(obj.has("all")) + int(obj.has("indices")) + int(obj.has("box")) + int(obj.has("half_space"));
    if (kinds != 1) ctx.fail(path, "a selection has exactly one of \"all\", \"indices\", \"box\" or \"half_space\"");
    std::vector<int> out;
    if (obj.has("all")) {
        if (!obj.flag("all", true)) obj.fail("all", "\"all\" must be true (leave the selection out to select nothing)");
        for (int i = 0; i < count; ++i) out.push_back(i);
    } else if (const Json* list = obj.find("indices")) {
        if (!list->is_array()) obj.fail("indices", "expected an array of indices");
        for (size_t i = 0; i < list->size(); ++i)
            out.push_back(int(readInteger((*list)[i], obj.pathOf("indices") + "/" + std::to_string(i), ctx, 0, count - 1)));
    } else if (obj.has("box")) {
        JsonObject box = obj.object("box");
        const Vec3 bmin = box.vec3("min"), bmax = box.vec3("max");
        box.finish();
        for (int i = 0; i < count; ++i) {
            const Vec3 p = point(i);
            if (p.x >= bmin.x - tol && p.y >= bmin.y - tol && p.z >= bmin.z - tol && p.x <= bmax.x + tol &&
                p.y <= bmax.y + tol && p.z <= bmax.z + tol)
                out.push_back(i);
        }
    } else {
        JsonObject half = obj.object("half_space");
        const Vec3 n = half.vec3("normal");
        const Real offset = half.number("offset");
        if (!(length(n) > 0)) half.fail("normal", "must be a nonzero vector");
        half.finish();
        const Vec3 u = normalize(n);
        for (int i = 0; i < count; ++i)
            if (dot(u, point(i)) >= offset - tol) out.push_back(i);
    }
    obj.finish();
    if (out.empty()) ctx.fail(path, std::string("the selection holds no ") + (tets ? "tet" : "node") +
                                        " of the mesh (coordinates are in the mesh frame, before the pose)");
    return out;
}

const Json& arrayOf(JsonObject& obj, const char* key) {
    static const Json kEmpty = Json::array();
    const Json* v = obj.find(key);
    if (!v) return kEmpty;
    if (!v->is_array()) obj.fail(key, "expected an array");
    return *v;
}

void readFemMaterial(JsonObject& obj, FemBodyDesc& d) {
    const std::string model = obj.text("model", "corotated");
    if (model == "corotated") d.type = FemMaterialType::CorotatedLinear;
    else if (model == "neohookean") d.type = FemMaterialType::StableNeoHookean;
    else obj.fail("model", "unknown material model \"" + model + "\" (expected corotated or neohookean)");
    d.youngs = obj.positive("youngs");
    if (d.youngs > Real(1e12)) obj.fail("youngs", "must be at most 1e12 Pa");
    d.poisson = obj.number("poisson", d.poisson);
    if (!(d.poisson > -1 && d.poisson < Real(0.49999))) obj.fail("poisson", "must lie in (-1, 0.5)");
    d.density = obj.positive("density", d.density);
    if (d.density > Real(1e5)) obj.fail("density", "must be at most 1e5 kg/m^3");
    d.damping = obj.nonNegative("damping", 0);
    if (d.damping > 10) obj.fail("damping", "must be at most 10 s");
    obj.finish();
}

}  // namespace

void readDeformable(const Json& v, const std::string& path, SceneContext& ctx) {
    JsonObject obj(v, path, ctx);
    DeformableSpec spec;
    spec.path = path;
    FemBodyDesc& d = spec.desc;
    d.name = obj.text("name", "deformable" + std::to_string(ctx.deformables.size()));
    for (const DeformableSpec& other : ctx.deformables)
        if (other.desc.name == d.name) obj.fail("name", "duplicate deformable name \"" + d.name + "\"");
    if (ctx.deformables.size() >= size_t(Limits::femBodies))
        ctx.fail(path, "the scene has more than " + std::to_string(Limits::femBodies) + " deformable bodies (the limit)");
    d.mesh = readMesh(obj.require("mesh"), obj.pathOf("mesh"), ctx);
    JsonObject material = obj.object("material");
    readFemMaterial(material, d);
    d.material.friction = obj.nonNegative("friction", d.material.friction);
    d.selfContact = obj.flag("self_contact", false);
    if (const Json* c = obj.find("color")) d.color = readColor(*c, obj.pathOf("color"), ctx);
    d.pose = readPose(obj);
    if (obj.has("frame")) {
        const std::string frame = obj.text("frame");
        auto it = ctx.frames.find(frame);
        if (it == ctx.frames.end()) obj.fail("frame", "unknown body \"" + frame + "\" (frames must name an earlier body)");
        d.pose = composeTransforms(it->second, d.pose);
    }
    for (Real c : {d.pose.pos.x, d.pose.pos.y, d.pose.pos.z})
        if (!(std::fabs(c) <= Real(Limits::length))) ctx.fail(path, "position is out of range (|x| <= 1e6 m)");
    d.linVel = obj.vec3("velocity", d.linVel);
    const Json& pins = arrayOf(obj, "pin");
    for (size_t i = 0; i < pins.size(); ++i)
        for (int n : readSelection(pins[i], obj.pathOf("pin") + "/" + std::to_string(i), ctx, d.mesh, false))
            d.pinned.push_back(n);
    const Json& attach = arrayOf(obj, "attach");
    for (size_t i = 0; i < attach.size(); ++i) {
        const std::string p = obj.pathOf("attach") + "/" + std::to_string(i);
        JsonObject a(attach[i], p, ctx);
        const std::string body = a.text("body");
        for (int n : readSelection(a.require("nodes"), a.pathOf("nodes"), ctx, d.mesh, false))
            spec.attach.push_back({n, body, a.pathOf("body")});
        a.finish();
    }
    const Json& activation = arrayOf(obj, "activation");
    for (size_t i = 0; i < activation.size(); ++i) {
        const std::string p = obj.pathOf("activation") + "/" + std::to_string(i);
        JsonObject a(activation[i], p, ctx);
        const Real weight = a.number("weight", 1);
        if (!(weight >= 0 && weight <= 1)) a.fail("weight", "must lie in [0, 1]");
        d.activation.resize(d.mesh.tets.size(), 0);
        for (int t : readSelection(a.require("tets"), a.pathOf("tets"), ctx, d.mesh, true)) d.activation[t] = weight;
        a.finish();
    }
    obj.finish();
    ctx.femNodes += int(d.mesh.nodes.size());
    ctx.femTets += int(d.mesh.tets.size());
    ctx.deformables.push_back(std::move(spec));
}

void buildDeformables(SceneContext& ctx, Model& model, const std::map<std::string, int>& bodyIndex) {
    for (DeformableSpec& spec : ctx.deformables) {
        for (const DeformableSpec::Attach& a : spec.attach) {
            auto it = bodyIndex.find(a.body);
            if (it == bodyIndex.end()) ctx.fail(a.path, "unknown body \"" + a.body + "\"");
            spec.desc.attached.push_back({a.node, it->second});
        }
        std::string error;
        if (addFemBody(model, spec.desc, &error) < 0) ctx.fail(spec.path, error);
    }
}

}  // namespace cs::scene
