// Internals of the scene loader: the strict JSON reader and the parsing stages.
//
// Every stage reads through JsonObject, which remembers which keys it consumed; finish() rejects
// whatever is left as an unknown field with its JSON path. Errors are thrown as SceneError (one
// line, already prefixed with the file name) and caught once, in loadSceneFromText, which is the
// only place that turns them into the false + *error of the public API.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/fem/fem_builder.h"
#include "engine/model_builder.h"
#include "engine/scene/scene_loader.h"

namespace cs::scene {

using Json = nlohmann::json;

struct SceneError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A joint as read from the file: bodies by name, anchor and axis in world coordinates.
struct JointSpec {
    Joint joint;
    std::string bodyA, bodyB;    // "" or "world": the world
    Vec3 anchor{0, 0, 0}, axis{0, 0, 1};
    std::string path;            // JSON path, for messages
};

// A deformable body as read from the file: attachments name their rigid body, resolved when
// the model is built (scene_deformables.cpp).
struct DeformableSpec {
    struct Attach {
        int node;
        std::string body, path;
    };
    FemBodyDesc desc;
    std::vector<Attach> attach;
    std::string path;            // JSON path, for messages
};

using Limits = SceneLimits;   // scene_loader.h

// Line (1-based) of the member or array element at a JSON path ("/bodies/3/mass") in the text
// it was parsed from, or -1 when the path is not there (json_lines.cpp).
int jsonLineOfPath(const std::string& text, const std::string& path);

// Where the text nests arrays and objects deeper than Limits::jsonDepth: the 1-based line and
// column of the bracket that goes too deep, or line 0 when it does not (json_lines.cpp). Checked
// before parsing, so that nothing later (the reader, its messages, the line scanner) recurses
// deeper than that.
struct TextPosition { int line = 0, column = 0; };
TextPosition findTooDeep(const std::string& text);

struct SceneContext {
    std::string file;            // for messages
    const std::string* text = nullptr;   // the file's text, for line numbers in messages
    std::string dir;             // OBJ paths are relative to this
    uint64_t seedOffset = 0;
    std::map<std::string, Material> materials;     // named materials
    std::vector<BodyDesc> bodies;                  // in file order, emitted bodies last
    std::vector<std::string> bodyPaths;            // (bodies) JSON path of each, for messages
    std::map<std::string, Transform> frames;       // scene pose of every named body
    std::vector<JointSpec> joints;
    int generatedBodies = 0;
    int emittedBodies = 0;
    int parts = 0;                                 // convex parts over all bodies so far
    std::vector<DeformableSpec> deformables;       // in file order
    int femNodes = 0, femTets = 0;                 // over the deformables so far

    [[noreturn]] void fail(const std::string& path, const std::string& message) const;
    std::string where(const std::string& path) const;   // "file:line" (or "file" without a line)
    // Checks the name is unique, the counts and the pose against Limits.
    void addBody(BodyDesc body, const std::string& path);
    // The pairs-at-start limit (Limits::pairsPerPart), over every body added.
    void checkStartPairs() const;
    Color3 paletteColor(int index) const;
};

// Strict view of one JSON object.
class JsonObject {
public:
    JsonObject(const Json& value, std::string path, const SceneContext& ctx);

    bool has(const char* key) const;
    const Json* find(const char* key);               // marks the key used; nullptr when absent
    const Json& require(const char* key);
    std::string pathOf(const char* key) const { return path_ + "/" + key; }
    const std::string& path() const { return path_; }
    const SceneContext& ctx() const { return ctx_; }
    [[noreturn]] void fail(const char* key, const std::string& message) const;

    Real number(const char* key);                    // required
    Real number(const char* key, Real fallback);
    Real positive(const char* key);                  // > 0, required
    Real positive(const char* key, Real fallback);
    Real nonNegative(const char* key, Real fallback);
    int integer(const char* key, int minValue);                 // required
    int integer(const char* key, int minValue, int maxValue);   // required, in [minValue, maxValue]
    int integer(const char* key, int fallback, int minValue, int maxValue);
    bool flag(const char* key, bool fallback);
    std::string text(const char* key);
    std::string text(const char* key, const std::string& fallback);
    Vec3 vec3(const char* key);
    Vec3 vec3(const char* key, Vec3 fallback);
    Vec3 positiveVec3(const char* key);              // every component > 0
    JsonObject object(const char* key);              // required nested object

    void finish() const;                             // unknown fields -> SceneError

private:
    const Json& value_;
    std::string path_;
    const SceneContext& ctx_;
    std::vector<std::string> used_;
};

// Value readers for values that are not object fields (array elements).
Real readNumber(const Json& v, const std::string& path, const SceneContext& ctx);
// An integer in [minValue, maxValue] (a JSON integer; a count past an int is an error, not a wrap).
long long readInteger(const Json& v, const std::string& path, const SceneContext& ctx, long long minValue,
                      long long maxValue);
// A value in a message: a scalar as written (cut to 40 characters), an array or object by its size,
// never the whole (possibly deep) value.
std::string describe(const Json& v);
// A count or size computed in double, for messages: "20000", "1e+15".
std::string formatNumber(double x);
Vec3 readVec3(const Json& v, const std::string& path, const SceneContext& ctx);
Quat readRotation(const Json& v, const std::string& path, const SceneContext& ctx);
// "position" and "rotation" of an object (both optional).
Transform readPose(JsonObject& obj);
Transform composeTransforms(const Transform& parent, const Transform& child);

// Deterministic generator for emitters and generated layouts (SplitMix64): the same scene and
// seed give the same bodies on every platform.
struct SceneRng {
    uint64_t state;
    uint64_t next();
    Real uniform(Real lo, Real hi);
};

// Stages.
void readSettings(JsonObject& obj, WorldSettings& settings);
void readCamera(JsonObject& obj, SceneInfo& info);
Material readMaterial(const Json& v, const std::string& path, const SceneContext& ctx);
Color3 readColor(const Json& v, const std::string& path, const SceneContext& ctx);
ShapeDesc readShape(const Json& v, const std::string& path, const SceneContext& ctx);
// A body object; `fallbackName` is used when it has no "name".
BodyDesc readBody(const Json& v, const std::string& path, SceneContext& ctx);
// Fields common to generated bodies: density or mass, material, colour, static.
void readBodyCommon(JsonObject& obj, BodyDesc& body);
void readGenerator(const Json& v, const std::string& path, SceneContext& ctx);
void readEmitter(const Json& v, const std::string& path, SceneContext& ctx);
void readJoint(const Json& v, const std::string& path, SceneContext& ctx);
// The "grasp" block, read after the model is built (names resolve against it; scene_grasp.cpp).
// Also appends the block's "mimic" couplings to model.couplings.
void readGrasp(const Json& v, const std::string& path, const SceneContext& ctx, Model& model, GraspSpec& spec);
void readGraspScript(const Json& v, const std::string& path, const SceneContext& ctx, GraspSpec& spec);
void readDeformable(const Json& v, const std::string& path, SceneContext& ctx);
// After the rigid bodies are in the model: attachments resolved by name, then addFemBody.
void buildDeformables(SceneContext& ctx, Model& model, const std::map<std::string, int>& bodyIndex);

}  // namespace cs::scene
