// Scene limits and bad values (issue 22, items 4, 5 and 7): input that crashed the loader, hung a
// run or was accepted silently is refused at load with one line naming the key, and every limit
// of docs/scene-format.md ("Limits") holds exactly at its value: the limit loads, one more fails.
// The limits are written as numbers, as the document gives them, not read from SceneLimits.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "engine/geometry/polytope.h"
#include "engine/scene/scene_loader.h"

using namespace cs;

namespace {

struct Loaded {
    bool ok = false;
    Model model;
    std::string error;
};

std::string folder() { return std::filesystem::temp_directory_path().string(); }

Loaded loadText(const std::string& text) {
    Loaded l;
    WorldSettings settings;
    SceneInfo info;
    l.ok = loadSceneFromText(text, "limits.json", folder(), l.model, settings, info, &l.error);
    return l;
}

// Fails with one line that names every one of `mentions`.
void checkRefused(const std::string& text, std::initializer_list<const char*> mentions) {
    Loaded l = loadText(text);
    CAPTURE(l.error);
    CHECK_FALSE(l.ok);
    CHECK(l.error.find('\n') == std::string::npos);
    CHECK(l.error.rfind("limits.json", 0) == 0);
    for (const char* m : mentions) CHECK_MESSAGE(l.error.find(m) != std::string::npos, m);
}

struct TempFile {
    std::string path;
    TempFile(const std::string& name, const std::string& text)
        : path(folder() + "/cs_test_limits_" + std::to_string(getpid()) + "_" + name) {
        std::ofstream(path) << text;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

const std::string kBox = R"({"type": "box", "half_extents": [0.1, 0.1, 0.1]})";

std::string nested(int depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

std::string sphereObj(int n) {   // n vertices on the unit sphere (a spiral), all on its hull
    std::string s;
    for (int i = 0; i < n; ++i) {
        double z = 1 - (2 * i + 1.0) / n, r = std::sqrt(1 - z * z), a = 2.39996322972865332 * i;
        s += "v " + std::to_string(r * std::cos(a)) + " " + std::to_string(r * std::sin(a)) + " " + std::to_string(z) + "\n";
    }
    return s;
}

}  // namespace

TEST_CASE("loader limits: a value nested 100000 deep is one line, not a stack overflow (item 4a)") {
    // Before: describe() dumped the value with json::dump, which recursed until the stack ran out.
    checkRefused(R"({"bodies": [{"shape": {"type": "box", "half_extents": )" + nested(100000) + "}}]}",
                 {"limits.json:1:", "nested deeper than 64"});
    checkRefused(R"({"bodies": [{"shape": {"type": "box", "half_extents": )" + nested(65) + "}}]}",
                 {"nested deeper than 64"});
    // 63 brackets inside the 4 levels of the scene still parse; the message describes the array by
    // its size, not by dumping it.
    checkRefused(R"({"bodies": [{"shape": {"type": "box", "half_extents": )" + nested(59) + "}}]}",
                 {"/bodies/0/shape/half_extents", "an array of 1 elements"});
}

TEST_CASE("loader limits: hull and OBJ coordinates past qhull's range are refused (item 4b)") {
    // Before: SIGSEGV in qh_normalize2 for points scaled past about 1e155.
    checkRefused(R"({"bodies": [{"shape": {"type": "hull", "points": [[0,0,0],[1e156,0,0],[0,1e156,0],[0,0,1e156]]}}]})",
                 {"/bodies/0/shape/points", "out of range"});
    TempFile cube("cube.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 1 1 1\n");
    checkRefused(R"({"bodies": [{"shape": {"type": "obj", "path": ")" + cube.path + R"(", "scale": 1e300, "convex_hull": true}}]})",
                 {"/bodies/0/shape/path", "out of range"});
    // The geometry refuses them too, whoever calls it.
    ConvexPolytope p;
    BuildResult r = buildConvexHull({{0, 0, 0}, {1e156, 0, 0}, {0, 1e156, 0}, {0, 0, 1e156}}, p);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("beyond 1e12") != std::string::npos);
    CHECK_FALSE(loadObjHull(cube.path, 1e300, p).ok);
}

TEST_CASE("loader limits: every count is held at its documented limit (item 5)") {
    const std::string ground = R"({"generator": "ground"})";
    auto row = [&](long long count, const std::string& body) {
        return R"({"bodies": [)" + ground + R"(, {"generator": "row", "count": )" + std::to_string(count) +
               R"(, "offset": [0.5, 0, 0], "body": )" + body + "}]}";
    };
    const std::string box = R"({"shape": )" + kBox + R"(, "position": [0, 0, 1]})";
    // Bodies: 25000 in all (the ground is one).
    CHECK(loadText(row(25000 - 1, box)).ok);
    checkRefused(row(25000, box), {"/bodies/1", "25000 bodies"});
    checkRefused(row(65536, box), {"/bodies/1/count", "at most 25000"});
    // Parts: 50000 over all bodies; one body of 1e5 parts is refused.
    std::string parts;
    for (int i = 0; i < 50000; ++i)
        parts += (i ? "," : "") + std::string(R"({"type": "box", "half_extents": [0.1, 0.1, 0.1], "position": [)") +
                 std::to_string(0.3 * (i % 100)) + ", " + std::to_string(0.3 * (i / 100)) + ", 0]}";
    CHECK(loadText(R"({"bodies": [{"shapes": [)" + parts + "]}]}").ok);
    checkRefused(R"({"bodies": [)" + ground + R"(, {"shapes": [)" + parts + "]}]}", {"/bodies/1", "50000 convex parts"});
    // Joints.
    std::string joints;
    for (int i = 0; i <= 10000; ++i)
        joints += (i ? "," : "") + std::string(R"({"type": "ball", "body_b": "b", "anchor": [0, 0, 0]})");
    checkRefused(R"({"bodies": [{"name": "b", "shape": )" + kBox + R"(}], "joints": [)" + joints + "]}",
                 {"/joints/10000", "10000 joints"});
    // Settings: substeps, passes, iterations.
    auto withSettings = [&](const std::string& s) { return R"({"settings": {)" + s + R"(}, "bodies": [{"shape": )" + kBox + "}]}"; };
    CHECK(loadText(withSettings(R"("substeps": 1000, "projection": 100, "redetect": 100, "newton": 1000, "iters": 10000)")).ok);
    checkRefused(withSettings(R"("substeps": 2147483647)"), {"/settings/substeps", "at most 1000"});
    checkRefused(withSettings(R"("projection": 100000)"), {"/settings/projection", "at most 100"});
    checkRefused(withSettings(R"("redetect": 101)"), {"/settings/redetect", "at most 100"});
    checkRefused(withSettings(R"("newton": 1001)"), {"/settings/newton", "at most 1000"});
    checkRefused(withSettings(R"("iters": 10001)"), {"/settings/iters", "at most 10000"});
    // Hull points: random shapes, emitters, hull points, generators.
    auto random = [&](int count) {
        return R"({"bodies": [{"shape": {"type": "random", "seed": 1, "count": )" + std::to_string(count) +
               R"(, "radii": [1, 1, 1]}}]})";
    };
    CHECK(loadText(random(255)).ok);
    checkRefused(random(100000), {"/bodies/0/shape/count", "at most 255"});
    checkRefused(R"({"bodies": [)" + ground + R"(], "emitters": [{"count": 1, "seed": 1, "period": 1, "points": 100000, "size": 0.1,
                   "region": {"min": [0, 0, 1], "max": [0, 0, 1]}}]})",
                 {"/emitters/0/points", "255"});
    checkRefused(R"({"bodies": [{"generator": "arch", "blocks": 10000, "inner_radius": 2, "thickness": 0.4, "half_depth": 0.5}]})",
                 {"/bodies/0/blocks", "at most 1000"});
    // OBJ: the hull's vertices, the file's vertices.
    TempFile many("sphere.obj", sphereObj(255 + 1));
    checkRefused(R"({"bodies": [{"shape": {"type": "obj", "path": ")" + many.path + R"(", "convex_hull": true}}]})",
                 {"/bodies/0/shape/path", "256 vertices (the limit is 255)"});
    TempFile huge("huge.obj", sphereObj(100000 + 1));
    const auto t0 = std::chrono::steady_clock::now();
    checkRefused(R"({"bodies": [{"shape": {"type": "obj", "path": ")" + huge.path + R"(", "convex_hull": true}}]})",
                 {"/bodies/0/shape/path", "more than 100000 vertices"});
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));   // before: minutes in validateConvex
    // Bodies in one spot: N^2 / 2 overlapping pairs.
    const std::string spot = R"({"shape": )" + kBox + R"(, "position": [0, 0, 1]})";
    auto inOneSpot = [&](int n) {
        return R"({"bodies": [)" + ground + R"(, {"generator": "row", "count": )" + std::to_string(n) +
               R"(, "offset": [0, 0, 0], "body": )" + spot + "}]}";
    };
    CHECK(loadText(inOneSpot(100)).ok);   // 4950 pairs: under the floor of 10000
    checkRefused(inOneSpot(1000), {"/bodies/1", "pairs of parts", "one spot"});
    // Emitted bodies that appear together in one spot count too; one every 0.5 s does not.
    auto emitter = [&](const char* period) {
        return R"({"bodies": [)" + ground + R"(], "emitters": [{"count": 1000, "seed": 1, "period": )" + std::string(period) +
               R"(, "size": 0.1, "region": {"min": [0, 0, 1], "max": [0, 0, 1]}}]})";
    };
    CHECK(loadText(emitter("0.5")).ok);
    checkRefused(emitter("0.0001"), {"/emitters/0", "one spot"});
}

TEST_CASE("loader limits: values that overflowed or wrapped are load errors (item 7)") {
    // Before: positions became inf/NaN and the run exited 1 with failed_steps 0.
    checkRefused(R"({"bodies": [{"generator": "row", "count": 3, "offset": [1e308, 0, 0], "body": {"shape": )" + kBox + "}}]}",
                 {"/bodies/0", "position", "out of range"});
    checkRefused(R"({"bodies": [{"shape": )" + kBox + R"(, "position": [2e6, 0, 0]}]})", {"/bodies/0", "out of range"});
    // Before: 4294967297 wrapped to 1 body.
    checkRefused(R"({"bodies": [{"generator": "grid", "counts": [4294967297, 1, 1], "spacing": [1, 1, 1], "body": {"shape": )" +
                     kBox + "}}]}",
                 {"/bodies/0/counts/0", "at most 25000"});
    checkRefused(R"({"bodies": [{"generator": "grid", "counts": [100, 100, 3], "spacing": [1, 1, 1], "body": {"shape": )" +
                     kBox + "}}]}",
                 {"/bodies/0/counts", "30000 bodies"});
    // Before: a spawn count past an int emitted 0 bodies and the run exited 0.
    for (const char* timing : {R"("until": 1e12, "period": 1e-3)", R"("until": 5, "period": 1e-300)"})
        checkRefused(R"({"bodies": [{"generator": "ground"}], "emitters": [{)" + std::string(timing) +
                         R"(, "seed": 1, "size": 0.1, "region": {"min": [0, 0, 1], "max": [1, 1, 2]}}]})",
                     {"/emitters/0/until", "the limit is 25000"});
    // Before: tinyobjloader read these coordinates as 0.
    for (const char* bad : {"nan", "inf", "-inf", "abc", "1e999", "0x10"}) {
        CAPTURE(bad);
        TempFile obj("bad.obj", std::string("v 0 0 0\nv 1 0 0\nv 0 1 ") + bad + "\nv 0 0 1\n");
        checkRefused(R"({"bodies": [{"shape": {"type": "obj", "path": ")" + obj.path + R"("}}]})",
                     {"/bodies/0/shape/path", "bad.obj:3:", "not a finite number"});
    }
    TempFile shortVertex("short.obj", "v 0 0 0\nv 1 0\nv 0 1 0\nv 0 0 1\n");
    checkRefused(R"({"bodies": [{"shape": {"type": "obj", "path": ")" + shortVertex.path + R"("}}]})",
                 {"short.obj:2:", "x y z"});
}

TEST_CASE("loader limits: an OBJ's material library is never opened (item 6)") {
    // Before: tinyobjloader opened mtllib files next to the OBJ; one naming /dev/urandom read forever.
    TempFile obj("mtl.obj", "mtllib ../../../../../../../../dev/urandom\nmtllib /dev/zero\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n");
    const auto t0 = std::chrono::steady_clock::now();
    ConvexPolytope p;
    BuildResult r = loadObjHull(obj.path, 1, p);
    CHECK_MESSAGE(r.ok, r.error);
    CHECK(p.vertexCount() == 4);
    CHECK(loadText(R"({"bodies": [{"shape": {"type": "obj", "path": ")" + obj.path + R"("}}]})").ok);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    // A device named as the mesh itself is refused, not read.
    r = loadObjHull("/dev/zero", 1, p);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("not a regular file") != std::string::npos);
}
