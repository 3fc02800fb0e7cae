// Scene loading, top to bottom: resolve the name, read the file, parse the JSON (malformed input
// reported as file:line:column), read the blocks in a fixed order (settings, camera, materials,
// bodies and generators, deformables, emitters, joints), then build the Model with addBody / addJoint / addFemBody.
// The format is documented in docs/scene-format.md.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/scene/scene_parse.h"

namespace cs {

namespace fs = std::filesystem;
using scene::Json;
using scene::JsonObject;
using scene::SceneContext;
using scene::SceneError;

std::string sceneLibraryDir() { return std::string(CS_SOURCE_DIR) + "/assets/scenes"; }

std::vector<std::string> listScenes() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(sceneLibraryDir(), ec))
        if (entry.is_regular_file() && entry.path().extension() == ".json")
            names.push_back(entry.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string resolveScene(const std::string& nameOrPath) {
    std::error_code ec;
    if (nameOrPath.empty()) return "";
    bool bareName = nameOrPath.find('/') == std::string::npos;
    if (bareName) {
        std::string stem = nameOrPath;
        if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
        fs::path lib = fs::path(sceneLibraryDir()) / (stem + ".json");
        if (fs::is_regular_file(lib, ec)) return lib.string();
    }
    if (fs::is_regular_file(nameOrPath, ec)) return nameOrPath;
    return "";
}

std::string escapeControl(const std::string& message) {
    static const char* kHex = "0123456789abcdef";
    std::string out;
    out.reserve(message.size());
    for (char ch : message) {
        const unsigned char c = (unsigned char)ch;
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
        else out += ch;
    }
    return out;
}

namespace {

// nlohmann's parse_error carries the byte offset of the last character read; turn it into
// line:column and keep only the reason from its message.
std::string parseErrorLine(const std::string& text, const std::string& file, const Json::parse_error& e) {
    size_t byte = std::min<size_t>(e.byte, text.size());
    size_t line = 1, lineStart = 0;
    for (size_t i = 0; i + 1 < byte; ++i)
        if (text[i] == '\n') { ++line; lineStart = i + 1; }
    size_t column = byte > lineStart ? byte - lineStart : 1;
    std::string what = e.what();
    size_t at = what.find("column ");
    size_t colon = what.find(": ", at == std::string::npos ? 0 : at);
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": malformed JSON: " + reason;
}

void readStringList(JsonObject& obj, const char* key, std::vector<std::string>& out) {
    const Json* v = obj.find(key);
    if (!v) return;
    if (v->is_string()) { out.push_back(v->get<std::string>()); return; }
    if (!v->is_array()) obj.fail(key, "expected a string or an array of strings");
    for (const Json& s : *v) {
        if (!s.is_string()) obj.fail(key, "expected a string or an array of strings");
        out.push_back(s.get<std::string>());
    }
}

const Json& requireArray(JsonObject& obj, const char* key) {
    static const Json kEmpty = Json::array();
    const Json* v = obj.find(key);
    if (!v) return kEmpty;
    if (!v->is_array()) obj.fail(key, "expected an array");
    return *v;
}

void readScene(const Json& root, SceneContext& ctx, WorldSettings& settings, SceneInfo& info) {
    JsonObject top(root, "", ctx);
    if (top.has("format") && top.integer("format", 1) != 1)
        top.fail("format", "unsupported format version (this loader reads format 1)");
    info.name = top.text("name", info.name);
    info.description = top.text("description", "");
    readStringList(top, "notes", info.notes);
    info.duration = top.positive("duration", info.duration);
    if (const Json* s = top.find("settings")) {
        JsonObject obj(*s, "/settings", ctx);
        scene::readSettings(obj, settings);
    }
    if (const Json* c = top.find("camera")) {
        JsonObject obj(*c, "/camera", ctx);
        scene::readCamera(obj, info);
    }
    if (const Json* m = top.find("materials")) {
        if (!m->is_object()) top.fail("materials", "expected an object of named materials");
        for (auto it = m->begin(); it != m->end(); ++it)
            ctx.materials[it.key()] = scene::readMaterial(it.value(), "/materials/" + it.key(), ctx);
    }
    const Json& bodies = requireArray(top, "bodies");
    for (size_t i = 0; i < bodies.size(); ++i) {
        std::string path = "/bodies/" + std::to_string(i);
        if (bodies[i].is_object() && bodies[i].contains("generator"))
            scene::readGenerator(bodies[i], path, ctx);
        else
            ctx.addBody(scene::readBody(bodies[i], path, ctx), path);
    }
    const Json& deformables = requireArray(top, "deformables");
    for (size_t i = 0; i < deformables.size(); ++i)
        scene::readDeformable(deformables[i], "/deformables/" + std::to_string(i), ctx);
    const Json& emitters = requireArray(top, "emitters");
    for (size_t i = 0; i < emitters.size(); ++i)
        scene::readEmitter(emitters[i], "/emitters/" + std::to_string(i), ctx);
    const Json& joints = requireArray(top, "joints");
    for (size_t i = 0; i < joints.size(); ++i)
        scene::readJoint(joints[i], "/joints/" + std::to_string(i), ctx);
    top.find("grasp");   // read after the model is built (scene_grasp.cpp)
    top.finish();
    if (ctx.bodies.empty()) ctx.fail("/bodies", "the scene has no bodies");
}

void buildModel(SceneContext& ctx, Model& model) {
    std::map<std::string, int> index;
    for (size_t i = 0; i < ctx.bodies.size(); ++i) {
        std::string err;
        int b = addBody(model, ctx.bodies[i], &err);
        if (b < 0) ctx.fail(ctx.bodyPaths[i], err.empty() ? "rejected by the model builder" : err);
        if (!ctx.bodies[i].name.empty()) index[ctx.bodies[i].name] = b;
    }
    for (scene::JointSpec& spec : ctx.joints) {
        auto lookup = [&](const std::string& name, const char* key) {
            if (name == "world") return -1;
            auto it = index.find(name);
            if (it == index.end()) ctx.fail(spec.path + "/" + key, "unknown body \"" + name + "\"");
            return it->second;
        };
        spec.joint.bodyA = lookup(spec.bodyA, "body_a");
        spec.joint.bodyB = lookup(spec.bodyB, "body_b");
        std::string err;
        if (addJoint(model, spec.joint, spec.anchor, spec.axis, &err) < 0)
            ctx.fail(spec.path, err.empty() ? "rejected by the model builder" : err);
    }
    scene::buildDeformables(ctx, model, index);
}

}  // namespace

bool loadSceneFromText(const std::string& text, const std::string& sourceName,
                       const std::string& sourceDir, Model& model, WorldSettings& settings,
                       SceneInfo& info, std::string* error, const SceneLoadOptions& options) {
    SceneContext ctx;
    ctx.file = sourceName;
    ctx.text = &text;
    ctx.dir = sourceDir;
    ctx.seedOffset = options.seedOffset;
    Model built;
    WorldSettings ws;
    SceneInfo si;
    si.name = fs::path(sourceName).stem().string();
    si.path = sourceName;
    try {
        const scene::TextPosition deep = scene::findTooDeep(text);
        if (deep.line > 0)
            throw SceneError(sourceName + ":" + std::to_string(deep.line) + ":" + std::to_string(deep.column) +
                             ": arrays and objects nested deeper than " + std::to_string(SceneLimits::jsonDepth) +
                             " levels (the limit)");
        Json root;
        try {
            root = Json::parse(text);
        } catch (const Json::parse_error& e) {
            throw SceneError(parseErrorLine(text, sourceName, e));
        }
        readScene(root, ctx, ws, si);
        ctx.checkStartPairs();
        buildModel(ctx, built);
        if (root.is_object() && root.contains("grasp")) scene::readGrasp(root["grasp"], "/grasp", ctx, built, si.grasp);
    } catch (const SceneError& e) {
        if (error) *error = escapeControl(e.what());
        return false;
    } catch (const std::exception& e) {   // a library threw: still one line, never a crash
        if (error) *error = escapeControl(sourceName + ": " + e.what());
        return false;
    }
    si.generatedBodies = ctx.generatedBodies;
    si.emittedBodies = ctx.emittedBodies;
    model = std::move(built);
    settings = ws;
    info = std::move(si);
    return true;
}

bool loadScene(const std::string& pathOrName, Model& model, WorldSettings& settings,
               SceneInfo& info, std::string* error) {
    return loadScene(pathOrName, model, settings, info, error, SceneLoadOptions{});
}

bool loadScene(const std::string& pathOrName, Model& model, WorldSettings& settings,
               SceneInfo& info, std::string* error, const SceneLoadOptions& options) {
    std::string file = resolveScene(pathOrName);
    if (file.empty()) {
        std::string names;
        for (const std::string& n : listScenes()) names += (names.empty() ? "" : ", ") + n;
        if (error)
            *error = escapeControl("unknown scene \"" + pathOrName + "\": not a file and not in the library (" +
                                   (names.empty() ? "empty" : names) + ")");
        return false;
    }
    std::ifstream in(file, std::ios::binary);
    std::stringstream buffer;
    if (in.is_open()) buffer << in.rdbuf();
    if (!in.is_open() || in.bad()) {
        if (error) *error = escapeControl(file + ": cannot read the file");
        return false;
    }
    std::string dir = fs::path(file).parent_path().string();
    return loadSceneFromText(buffer.str(), file, dir.empty() ? "." : dir, model, settings, info,
                             error, options);
}

}  // namespace cs
