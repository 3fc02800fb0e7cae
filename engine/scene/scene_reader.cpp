// The strict JSON reader of the scene loader: typed field access with JSON paths in every
// message, unknown-field rejection, poses and rotations (docs/scene-format.md, "Poses").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/scene/scene_parse.h"

namespace cs::scene {

std::string describe(const Json& v) {
    if (v.is_array()) return "an array of " + std::to_string(v.size()) + " elements";
    if (v.is_object()) return "an object of " + std::to_string(v.size()) + " members";
    std::string s = v.dump();   // a scalar: no recursion
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
}

std::string formatNumber(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

namespace {

constexpr Real kDegToRad = Real(3.14159265358979323846 / 180.0);

}  // namespace

std::string SceneContext::where(const std::string& path) const {
    const int line = text ? jsonLineOfPath(*text, path) : -1;
    return line > 0 ? file + ":" + std::to_string(line) : file;
}

void SceneContext::fail(const std::string& path, const std::string& message) const {
    throw SceneError(where(path) + ": " + (path.empty() ? std::string("/") : path) + ": " + message);
}

void SceneContext::addBody(BodyDesc body, const std::string& path) {
    if (bodies.size() >= size_t(Limits::bodies))
        fail(path, "the scene has more than " + std::to_string(Limits::bodies) + " bodies (the limit)");
    parts += int(body.shapes.size());
    if (parts > Limits::parts)
        fail(path, "the scene has more than " + std::to_string(Limits::parts) + " convex parts (the limit)");
    // A generator's offset or a frame can carry a pose out of range (1e308 * 2 = inf).
    const Vec3 p = body.pose.pos;
    const Quat q = body.pose.rot;
    for (Real c : {p.x, p.y, p.z})
        if (!(std::fabs(c) <= Real(Limits::length)))
            fail(path, "position " + (std::isfinite(c) ? formatNumber(c) : std::string("not finite")) +
                           " is out of range (|x| <= 1e6 m)");
    if (!std::isfinite(q.w + q.x + q.y + q.z)) fail(path, "rotation is not finite");
    for (Vec3 v : {body.linVel, body.angVel})
        if (!std::isfinite(v.x + v.y + v.z)) fail(path, "velocity is not finite");
    if (!body.name.empty()) {
        if (frames.count(body.name))
            fail(path, "duplicate body name \"" + body.name + "\"");
        frames[body.name] = body.pose;
    }
    bodies.push_back(std::move(body));
    bodyPaths.push_back(path);
}

// Sweep over the parts' world bounding boxes, where each body appears, along x. The loop stops
// at the limit, so it is bounded by the pairs it allows plus the boxes that overlap along x.
void SceneContext::checkStartPairs() const {
    struct Box { Vec3 lo, hi; int body; };
    std::vector<Box> boxes;
    for (size_t b = 0; b < bodies.size(); ++b) {
        const BodyDesc& body = bodies[b];
        for (const ShapeDesc& shape : body.shapes) {
            const Transform t = composeTransforms(body.pose, shape.local);
            Box box{t.pos, t.pos, int(b)};
            if (shape.type == ShapeType::Sphere) {
                box.lo -= Vec3{shape.radius, shape.radius, shape.radius};
                box.hi += Vec3{shape.radius, shape.radius, shape.radius};
            }
            for (const Vec3& v : shape.polytope.vertices) {
                const Vec3 w = transformPoint(t, v);
                box.lo = vmin(box.lo, w);
                box.hi = vmax(box.hi, w);
            }
            boxes.push_back(box);
        }
    }
    std::sort(boxes.begin(), boxes.end(), [](const Box& a, const Box& b) { return a.lo.x < b.lo.x; });
    const long long limit = std::max<long long>(Limits::minPairs, (long long)Limits::pairsPerPart * parts);
    long long pairs = 0;
    for (size_t i = 0; i < boxes.size(); ++i)
        for (size_t j = i + 1; j < boxes.size() && boxes[j].lo.x <= boxes[i].hi.x; ++j) {
            const Box &a = boxes[i], &b = boxes[j];
            const BodyDesc &A = bodies[a.body], &B = bodies[b.body];
            if (a.body == b.body || (A.isStatic && B.isStatic)) continue;
            if (std::fabs(A.spawnTime - B.spawnTime) >= Real(Limits::spawnWindow)) continue;
            if (a.lo.y > b.hi.y || b.lo.y > a.hi.y || a.lo.z > b.hi.z || b.lo.z > a.hi.z) continue;
            if (++pairs > limit)
                fail(bodyPaths[a.body], "more than " + std::to_string(limit) + " pairs of parts (" +
                                            std::to_string(Limits::pairsPerPart) +
                                            " per part, the limit) overlap where they appear: bodies put in one spot?");
        }
}

Color3 SceneContext::paletteColor(int index) const {
    // A muted palette; consecutive bodies get distinguishable colours.
    static const Color3 kPalette[] = {
        {0.90f, 0.55f, 0.30f}, {0.35f, 0.60f, 0.85f}, {0.55f, 0.80f, 0.45f}, {0.85f, 0.75f, 0.35f},
        {0.70f, 0.50f, 0.80f}, {0.40f, 0.75f, 0.75f}, {0.85f, 0.45f, 0.50f}, {0.60f, 0.60f, 0.65f}};
    return kPalette[index % 8];
}

uint64_t SceneRng::next() {
    // SplitMix64 (Steele, Lea, Flood 2014).
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

Real SceneRng::uniform(Real lo, Real hi) {
    double u = double(next() >> 11) * (1.0 / 9007199254740992.0);   // [0, 1), 53 bits
    return lo + Real(u) * (hi - lo);
}

// ---- JsonObject ----------------------------------------------------------------------------

JsonObject::JsonObject(const Json& value, std::string path, const SceneContext& ctx)
    : value_(value), path_(std::move(path)), ctx_(ctx) {
    if (!value_.is_object())
        ctx_.fail(path_, "expected an object, got " + describe(value_));
}

bool JsonObject::has(const char* key) const {
    auto& used = const_cast<std::vector<std::string>&>(used_);
    if (std::find(used.begin(), used.end(), key) == used.end()) used.push_back(key);
    return value_.contains(key);
}

const Json* JsonObject::find(const char* key) {
    if (std::find(used_.begin(), used_.end(), key) == used_.end()) used_.push_back(key);
    auto it = value_.find(key);
    return it == value_.end() ? nullptr : &*it;
}

const Json& JsonObject::require(const char* key) {
    const Json* v = find(key);
    if (!v) ctx_.fail(path_, std::string("missing required field \"") + key + "\"");
    return *v;
}

void JsonObject::fail(const char* key, const std::string& message) const {
    ctx_.fail(pathOf(key), message);
}

Real JsonObject::number(const char* key) { return readNumber(require(key), pathOf(key), ctx_); }

Real JsonObject::number(const char* key, Real fallback) {
    const Json* v = find(key);
    return v ? readNumber(*v, pathOf(key), ctx_) : fallback;
}

Real JsonObject::positive(const char* key) {
    Real x = number(key);
    if (!(x > 0)) fail(key, "must be positive (got " + describe(*find(key)) + ")");
    return x;
}

Real JsonObject::positive(const char* key, Real fallback) {
    return has(key) ? positive(key) : fallback;
}

Real JsonObject::nonNegative(const char* key, Real fallback) {
    Real x = number(key, fallback);
    if (!(x >= 0)) fail(key, "must be non-negative (got " + describe(*find(key)) + ")");
    return x;
}

int JsonObject::integer(const char* key, int minValue) { return integer(key, minValue, 2147483647); }

int JsonObject::integer(const char* key, int minValue, int maxValue) {
    return int(readInteger(require(key), pathOf(key), ctx_, minValue, maxValue));
}

int JsonObject::integer(const char* key, int fallback, int minValue, int maxValue) {
    return has(key) ? integer(key, minValue, maxValue) : fallback;
}

bool JsonObject::flag(const char* key, bool fallback) {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(key, "expected true or false, got " + describe(*v));
    return v->get<bool>();
}

std::string JsonObject::text(const char* key) {
    const Json& v = require(key);
    if (!v.is_string()) fail(key, "expected a string, got " + describe(v));
    return v.get<std::string>();
}

std::string JsonObject::text(const char* key, const std::string& fallback) {
    return has(key) ? text(key) : fallback;
}

Vec3 JsonObject::vec3(const char* key) { return readVec3(require(key), pathOf(key), ctx_); }

Vec3 JsonObject::vec3(const char* key, Vec3 fallback) {
    const Json* v = find(key);
    return v ? readVec3(*v, pathOf(key), ctx_) : fallback;
}

Vec3 JsonObject::positiveVec3(const char* key) {
    Vec3 v = vec3(key);
    if (!(v.x > 0 && v.y > 0 && v.z > 0))
        fail(key, "every component must be positive (got " + describe(*find(key)) + ")");
    return v;
}

JsonObject JsonObject::object(const char* key) { return JsonObject(require(key), pathOf(key), ctx_); }

void JsonObject::finish() const {
    for (auto it = value_.begin(); it != value_.end(); ++it) {
        if (std::find(used_.begin(), used_.end(), it.key()) != used_.end()) continue;
        std::string known;
        for (const std::string& k : used_) known += (known.empty() ? "" : ", ") + k;
        throw SceneError(ctx_.where(path_ + "/" + it.key()) + ": unknown field \"" + path_ + "/" + it.key() +
                         "\" (expected one of: " + known + ")");
    }
}

// ---- values --------------------------------------------------------------------------------

Real readNumber(const Json& v, const std::string& path, const SceneContext& ctx) {
    if (!v.is_number()) ctx.fail(path, "expected a number, got " + describe(v));
    double x = v.get<double>();
    if (!std::isfinite(x)) ctx.fail(path, "must be finite");
    return Real(x);
}

long long readInteger(const Json& v, const std::string& path, const SceneContext& ctx, long long minValue,
                      long long maxValue) {
    if (!v.is_number_integer()) ctx.fail(path, "expected an integer, got " + describe(v));
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(maxValue))
        ctx.fail(path, "must be at most " + std::to_string(maxValue) + " (got " + describe(v) + ")");
    const long long x = v.get<long long>();
    if (x < minValue)
        ctx.fail(path, "must be at least " + std::to_string(minValue) + " (got " + std::to_string(x) + ")");
    if (x > maxValue)
        ctx.fail(path, "must be at most " + std::to_string(maxValue) + " (got " + std::to_string(x) + ")");
    return x;
}

Vec3 readVec3(const Json& v, const std::string& path, const SceneContext& ctx) {
    if (!v.is_array() || v.size() != 3)
        ctx.fail(path, "expected an array of 3 numbers, got " + describe(v));
    return Vec3{readNumber(v[0], path + "/0", ctx), readNumber(v[1], path + "/1", ctx),
                readNumber(v[2], path + "/2", ctx)};
}

// Rotations (docs/scene-format.md): exactly one of
//   {"quat": [w, x, y, z]}                 unit quaternion (normalized; |q| must be 1 +- 1e-2)
//   {"axis": [x, y, z], "deg": angle}      axis-angle, right-handed, degrees
//   {"euler_deg": [rx, ry, rz]}            about the fixed world axes X, then Y, then Z:
//                                          q = q_z(rz) * q_y(ry) * q_x(rx)
Quat readRotation(const Json& v, const std::string& path, const SceneContext& ctx) {
    JsonObject obj(v, path, ctx);
    int forms = int(obj.has("quat")) + int(obj.has("axis") || obj.has("deg")) +
                int(obj.has("euler_deg"));
    if (forms != 1)
        ctx.fail(path, "give exactly one of \"quat\", \"axis\" + \"deg\", \"euler_deg\"");
    Quat q = quatIdentity();
    if (obj.has("quat")) {
        const Json& a = obj.require("quat");
        if (!a.is_array() || a.size() != 4)
            obj.fail("quat", "expected [w, x, y, z], got " + describe(a));
        std::string p = obj.pathOf("quat");
        q = Quat{readNumber(a[0], p + "/0", ctx), readNumber(a[1], p + "/1", ctx),
                 readNumber(a[2], p + "/2", ctx), readNumber(a[3], p + "/3", ctx)};
        Real n = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
        if (std::fabs(n - 1) > Real(1e-2))
            obj.fail("quat", "is not a unit quaternion (norm " + std::to_string(n) + ")");
        q = normalize(q);
    } else if (obj.has("euler_deg")) {
        Vec3 e = obj.vec3("euler_deg") * kDegToRad;
        q = quatFromAxisAngle({0, 0, 1}, e.z) * quatFromAxisAngle({0, 1, 0}, e.y) *
            quatFromAxisAngle({1, 0, 0}, e.x);
    } else {
        Vec3 axis = obj.vec3("axis");
        Real deg = obj.number("deg");
        if (!(length(axis) > Real(1e-12))) obj.fail("axis", "must be a non-zero vector");
        q = quatFromAxisAngle(axis, deg * kDegToRad);
    }
    obj.finish();
    return q;
}

Transform readPose(JsonObject& obj) {
    Transform t{{0, 0, 0}, quatIdentity()};
    t.pos = obj.vec3("position", t.pos);
    if (const Json* r = obj.find("rotation")) t.rot = readRotation(*r, obj.pathOf("rotation"), obj.ctx());
    return t;
}

Transform composeTransforms(const Transform& parent, const Transform& child) {
    return Transform{transformPoint(parent, child.pos), normalize(parent.rot * child.rot)};
}

}  // namespace cs::scene
