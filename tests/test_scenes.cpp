// Scene loader and scene library: every library scene loads with the body counts and masses its
// description promises (closed forms), no library scene starts with overlapping bodies, and
// every kind of bad input gives one line naming the file and the problem.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

#include "engine/geometry/overlap_volume.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

using namespace cs;

namespace {

constexpr Real kPi = Real(3.14159265358979323846);

struct Loaded {
    bool ok = false;
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
};

Loaded load(const std::string& nameOrPath, uint64_t seedOffset = 0) {
    Loaded l;
    SceneLoadOptions o;
    o.seedOffset = seedOffset;
    l.ok = loadScene(nameOrPath, l.model, l.settings, l.info, &l.error, o);
    return l;
}

// A scene file in the temp folder, removed at the end of the test.
struct TempFile {
    std::string path;
    TempFile(const std::string& name, const std::string& text) {
        path = (std::filesystem::temp_directory_path() /
                ("cs_test_scenes_" + std::to_string(getpid()) + "_" + name)).string();
        std::ofstream(path) << text;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

int bodyIndex(const Model& m, const std::string& name) {
    for (int b = 0; b < m.bodyCount(); ++b)
        if (m.bodyName[b] == name) return b;
    return -1;
}

Transform initialShapeTransform(const Model& m, int s) {
    int b = m.shapeBody[s];
    Transform body{m.initialPos[b], m.initialRot[b]};
    return Transform{transformPoint(body, m.shapeLocal[s].pos), normalize(body.rot * m.shapeLocal[s].rot)};
}

// Overlap volume at the initial poses of every pair of parts of different bodies, not both static.
double initialOverlap(const Model& m) {
    double total = 0;
    for (int i = 0; i < m.shapeCount(); ++i)
        for (int j = i + 1; j < m.shapeCount(); ++j) {
            int a = m.shapeBody[i], b = m.shapeBody[j];
            if (a == b || (m.isStatic(a) && m.isStatic(b))) continue;
            // Emitted bodies wait, dormant, at their spawn poses: only those that appear
            // together (or a waiting one and the static scenery) must not overlap.
            if (!m.isStatic(a) && !m.isStatic(b) && m.bodySpawnTime[a] != m.bodySpawnTime[b]) continue;
            if (m.shapePolytope[i] < 0 || m.shapePolytope[j] < 0) continue;
            Transform ta = initialShapeTransform(m, i), tb = initialShapeTransform(m, j);
            if (length(ta.pos - tb.pos) > m.shapeRadius[i] + m.shapeRadius[j]) continue;
            total += overlapVolume(m.polytopes[m.shapePolytope[i]], ta, m.polytopes[m.shapePolytope[j]], tb);
        }
    return total;
}

}  // namespace

TEST_CASE("scenes: the library holds the promised scenes with their body counts") {
    std::map<std::string, int> expected = {
        {"box_on_plane", 2}, {"friction_ramp", 13}, {"pyramid", 92}, {"heavy_stack", 6}, {"arch", 23},
        {"card_house", 8},   {"pour3d", 16},        {"sm_trap", 6},  {"table_pile", 9}, {"hinge_chain", 7}};
    std::vector<std::string> names = listScenes();
    for (const auto& [name, count] : expected) {
        CAPTURE(name);
        CHECK(std::find(names.begin(), names.end(), name) != names.end());
        Loaded l = load(name);
        REQUIRE_MESSAGE(l.ok, l.error);
        CHECK(l.model.bodyCount() == count);
        CHECK(l.info.name == name);
        CHECK(!l.info.description.empty());
        CHECK(l.info.duration > 0);
        // Ground: a large static box whose top face is z = 0.
        int g = bodyIndex(l.model, "ground");
        REQUIRE(g >= 0);
        CHECK(l.model.isStatic(g));
        const ConvexPolytope& p = l.model.polytopes[l.model.shapePolytope[l.model.bodyFirstShape[g]]];
        Real top = -1e9;
        for (Vec3 v : p.vertices) top = std::max(top, transformPoint({l.model.initialPos[g], l.model.initialRot[g]}, v).z);
        CHECK(top == doctest::Approx(0).epsilon(1e-12));
    }
    for (const std::string& n : names) {
        CAPTURE(n);
        Loaded l = load(n);
        CHECK_MESSAGE(l.ok, l.error);
    }
}

TEST_CASE("scenes: no library scene starts with bodies overlapping") {
    for (const std::string& n : listScenes()) {
        CAPTURE(n);
        Loaded l = load(n);
        REQUIRE(l.ok);
        CHECK(initialOverlap(l.model) < 1e-9);
    }
}

TEST_CASE("scenes: heavy_stack masses are exactly 8, 64, ..., 32768 kg from the bottom up") {
    Loaded l = load("heavy_stack");
    REQUIRE(l.ok);
    Real mass = 8, z = -1;
    for (int i = 0; i < 5; ++i) {
        int b = bodyIndex(l.model, "box_" + std::to_string(i));
        REQUIRE(b >= 0);
        CHECK(l.model.mass[b] == mass);
        CHECK(l.model.invMass[b] == doctest::Approx(1 / mass));
        CHECK(l.model.initialPos[b].z == doctest::Approx(0.5 + i));   // 1 m cubes resting on each other
        CHECK(l.model.initialPos[b].z > z);
        CHECK(l.model.materials[l.model.bodyMaterial[b]].friction == doctest::Approx(0.5));
        // Inertia of a 1 m cube scaled to the given mass: m (1 + 1) / 12.
        CHECK(l.model.inertiaLocal[b].m[0][0] == doctest::Approx(mass / 6));
        z = l.model.initialPos[b].z;
        mass *= 8;
    }
}

TEST_CASE("scenes: pyramid has 91 boxes in rows of 13 down to 1, 125 kg each") {
    Loaded l = load("pyramid");
    REQUIRE(l.ok);
    std::map<long, int> rows;
    int dynamicBodies = 0;
    for (int b = 0; b < l.model.bodyCount(); ++b) {
        if (l.model.isStatic(b)) continue;
        ++dynamicBodies;
        CHECK(l.model.mass[b] == doctest::Approx(125));
        rows[std::lround(l.model.initialPos[b].z * 1000)]++;
    }
    CHECK(dynamicBodies == 91);
    REQUIRE(rows.size() == 13);
    int expect = 13;
    for (const auto& [z, n] : rows) CHECK(n == expect--);
}

TEST_CASE("scenes: pour3d emits ten seeded polyhedra every 0.5 s, reproducibly") {
    Loaded a = load("pour3d"), b = load("pour3d"), c = load("pour3d", 7);
    REQUIRE(a.ok);
    REQUIRE(c.ok);
    CHECK(a.info.emittedBodies == 10);
    int statics = 0;
    std::vector<Real> spawn;
    for (int i = 0; i < a.model.bodyCount(); ++i) {
        if (a.model.isStatic(i)) { ++statics; continue; }
        spawn.push_back(a.model.bodySpawnTime[i]);
        Vec3 p = a.model.initialPos[i];
        CHECK(std::fabs(p.x) < 0.25 + 0.2);   // spawn region +- its COM offset bound
        CHECK(p.z > 0.6);
    }
    CHECK(statics == 6);   // ground, floor, four walls
    REQUIRE(spawn.size() == 10);
    for (int k = 0; k < 10; ++k) CHECK(spawn[k] == doctest::Approx(0.5 * k));
    // Same seed: identical bodies; --seed shifts every random choice.
    REQUIRE(a.model.polytopes.size() == b.model.polytopes.size());
    bool same = true, differs = false;
    for (size_t i = 0; i < a.model.polytopes.size(); ++i) {
        same = same && a.model.polytopes[i].vertices.size() == b.model.polytopes[i].vertices.size();
        if (i < c.model.polytopes.size() && a.model.polytopes[i].volume != c.model.polytopes[i].volume) differs = true;
    }
    CHECK(same);
    for (int i = 0; i < a.model.bodyCount(); ++i) CHECK(a.model.initialPos[i].x == b.model.initialPos[i].x);
    CHECK(differs);
}

TEST_CASE("scenes: compound tables, arch blocks and ramp lanes match their closed forms") {
    Loaded t = load("table_pile");
    REQUIRE(t.ok);
    for (int b = 0; b < t.model.bodyCount(); ++b) {
        if (t.model.isStatic(b)) continue;
        CHECK(t.model.bodyShapeCount[b] == 5);
        CHECK(t.model.mass[b] == doctest::Approx(700 * (1.0 * 0.6 * 0.05 + 4 * 0.05 * 0.05 * 0.4)));
        CHECK(t.model.materials[t.model.bodyMaterial[b]].friction == doctest::Approx(0.7));
    }
    Loaded a = load("arch");
    REQUIRE(a.ok);
    int blocks = 0;
    for (int b = 0; b < a.model.bodyCount(); ++b) {
        if (a.model.isStatic(b)) continue;
        ++blocks;
        // Quadrilateral section 0.5 sin(pi/20) (2.4^2 - 2^2), depth 0.6, density 2000.
        CHECK(a.model.mass[b] == doctest::Approx(2000 * 0.5 * std::sin(kPi / 20) * (2.4 * 2.4 - 4) * 0.6));
        CHECK(a.model.materials[a.model.bodyMaterial[b]].friction == doctest::Approx(0.6));
    }
    CHECK(blocks == 20);
    // friction_ramp: each box sits 1 mm above its own lane, and tan(theta) lies between the mus.
    Loaded r = load("friction_ramp");
    REQUIRE(r.ok);
    int slide = 0, stick = 0;
    for (int b = 0; b < r.model.bodyCount(); ++b) {
        if (r.model.isStatic(b)) continue;
        Real mu = r.model.materials[r.model.bodyMaterial[b]].friction;
        (mu < std::tan(25 * kPi / 180) ? slide : stick)++;
        int lane = b - 1;
        REQUIRE(r.model.isStatic(lane));
        Vec3 local = rotateInv(r.model.initialRot[lane], r.model.initialPos[b] - r.model.initialPos[lane]);
        CHECK(local.z == doctest::Approx(0.05 + 0.2 + 0.001));
        CHECK(r.model.materials[r.model.bodyMaterial[lane]].friction == mu);
    }
    CHECK(slide == 3);
    CHECK(stick == 3);
}

TEST_CASE("scenes: rotation forms agree and the seed offset reaches random shapes") {
    auto scene = [](const std::string& rot) {
        return R"({"bodies": [{"name": "b", "shape": {"type": "random", "seed": 3, "count": 10, "radii": [1, 1, 1]},
                   "rotation": )" + rot + "}]}";
    };
    Model m1, m2, m3, m4;
    WorldSettings s;
    SceneInfo i;
    std::string e;
    REQUIRE(loadSceneFromText(scene(R"({"axis": [0, 0, 1], "deg": 90})"), "a.json", ".", m1, s, i, &e));
    REQUIRE(loadSceneFromText(scene(R"({"euler_deg": [0, 0, 90]})"), "b.json", ".", m2, s, i, &e));
    REQUIRE(loadSceneFromText(scene(R"({"quat": [0.70710678, 0, 0, 0.70710678]})"), "c.json", ".", m3, s, i, &e));
    SceneLoadOptions shifted;
    shifted.seedOffset = 1;
    REQUIRE(loadSceneFromText(scene(R"({"quat": [1, 0, 0, 0]})"), "d.json", ".", m4, s, i, &e, shifted));
    for (const Model* m : {&m2, &m3}) {
        CHECK(m->initialRot[0].w == doctest::Approx(m1.initialRot[0].w));
        CHECK(m->initialRot[0].z == doctest::Approx(m1.initialRot[0].z));
    }
    CHECK(m1.initialRot[0].w == doctest::Approx(std::sqrt(0.5)));
    CHECK(m4.polytopes[0].volume != m1.polytopes[0].volume);
}

TEST_CASE("scenes: bad input gives one line naming the file and the problem") {
    const std::string box = R"({"type": "box", "half_extents": [0.5, 0.5, 0.5]})";
    auto body = [&](const std::string& extra) {
        return R"({"bodies": [{"name": "b", "shape": )" + box + extra + "}]}";
    };
    struct Case {
        const char* file;
        std::string text;
        std::vector<std::string> mentions;
    };
    TempFile cube("cube.obj",
                  "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
                  "f 1 2 3 4\nf 5 6 7 8\n");
    TempFile dented("dented.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 0.1 0.1 0.1\nf 1 2 3\n");
    std::vector<Case> cases = {
        {"malformed.json", "{\n  \"bodies\": [\n    {\"name\": \"b\" \"static\": true}\n  ]\n}\n",
         {"malformed.json:3:", "malformed JSON"}},
        {"truncated.json", "{\"bodies\": [", {"truncated.json:1:", "malformed JSON"}},
        {"unknown_field.json", body(R"(, "colour": [1, 0, 0])"), {"unknown_field.json", "unknown field", "/bodies/0/colour"}},
        {"unknown_setting.json", R"({"settings": {"frition": 1}, "bodies": [{"shape": )" + box + "}]}",
         {"unknown field", "/settings/frition"}},
        // Errors found after parsing name the line of the offending member (json_lines.cpp).
        {"unknown_line.json", "{\n  \"settings\": {\n    \"dt\": 0.01,\n    \"frition\": 1\n  },\n  \"bodies\": [{\"shape\": " +
                                  box + "}]\n}\n",
         {"unknown_line.json:4:", "unknown field", "/settings/frition"}},
        {"mass_line.json", "{\"bodies\": [\n  {\"shape\": " + box + "},\n  {\"shape\": " + box + ",\n   \"mass\": -2}\n]}\n",
         {"mass_line.json:4:", "/bodies/1/mass", "positive"}},
        {"missing_obj.json", R"({"bodies": [{"shape": {"type": "obj", "path": "no_such_mesh.obj"}}]})",
         {"missing_obj.json", "OBJ file not found", "no_such_mesh.obj"}},
        {"nonconvex_obj.json", R"({"bodies": [{"shape": {"type": "obj", "path": ")" + dented.path + R"("}}]})",
         {"non-convex OBJ", "/bodies/0/shape/path"}},
        {"zero_mass.json", body(R"(, "mass": 0)"), {"zero_mass.json", "/bodies/0/mass", "positive"}},
        {"negative_mass.json", body(R"(, "mass": -3)"), {"/bodies/0/mass", "positive"}},
        {"zero_density.json", body(R"(, "density": 0)"), {"/bodies/0/density", "positive"}},
        {"zero_opacity.json", body(R"(, "opacity": 0)"), {"/bodies/0/opacity", "(0, 1]"}},
        {"big_opacity.json", body(R"(, "opacity": 1.5)"), {"/bodies/0/opacity", "(0, 1]"}},
        {"bad_dt.json", R"({"settings": {"dt": 0}, "bodies": [{"shape": )" + box + "}]}", {"/settings/dt", "positive"}},
        {"bad_size.json", R"({"bodies": [{"shape": {"type": "box", "half_extents": [1, -1, 1]}}]})",
         {"/bodies/0/shape/half_extents", "positive"}},
        {"bad_radius.json", R"({"bodies": [{"shape": {"type": "sphere", "radius": 0}}]})", {"/bodies/0/shape/radius"}},
        {"flat_hull.json", R"({"bodies": [{"shape": {"type": "hull", "points": [[0,0,0],[1,0,0],[0,1,0],[1,1,0]]}}]})",
         {"degenerate hull", "/bodies/0/shape/points"}},
        {"dented_hull.json",
         R"({"bodies": [{"shape": {"type": "hull", "points": [[0,0,0],[1,0,0],[0,1,0],[0,0,1],[0.1,0.1,0.1]]}}]})",
         {"non-convex hull", "point 4"}},
        {"dented_prism.json",
         R"({"bodies": [{"shape": {"type": "prism", "polygon": [[0,0],[2,0],[1,0.2],[2,2],[0,2]], "half_depth": 1}}]})",
         {"non-convex", "/bodies/0/shape/polygon"}},
        {"bad_type.json", R"({"bodies": [{"shape": {"type": "cone"}}]})", {"unknown shape type \"cone\""}},
        {"bad_generator.json", R"({"bodies": [{"generator": "tower"}]})", {"unknown generator \"tower\""}},
        {"bad_joint.json", body("") .substr(0, body("").size() - 1) + R"(, "joints": [{"type": "ball", "body_b": "nobody", "anchor": [0,0,0]}]})",
         {"/joints/0/body_b", "unknown body \"nobody\""}},
        {"duplicate.json", R"({"bodies": [{"name": "a", "shape": )" + box + R"(}, {"name": "a", "shape": )" + box + "}]}",
         {"duplicate body name \"a\""}},
        {"bad_quat.json", body(R"(, "rotation": {"quat": [2, 0, 0, 0]})"), {"not a unit quaternion"}},
        {"bad_contact.json", R"({"settings": {"contact": "magic"}, "bodies": [{"shape": )" + box + "}]}",
         {"unknown contact model \"magic\""}},
        {"no_bodies.json", "{}", {"no bodies"}},
        {"static_mass.json", body(R"(, "static": true, "mass": 3)"), {"static body has no mass"}},
        {"emitter_no_count.json", R"({"bodies": [{"shape": )" + box + R"(}], "emitters": [{"period": 0.5, "region": {"min": [0,0,0], "max": [1,1,1]}, "size": 0.1}]})",
         {"/emitters/0", "\"count\" or \"until\""}},
    };
    for (const Case& c : cases) {
        CAPTURE(c.file);
        TempFile f(c.file, c.text);
        Loaded l = load(f.path);
        CHECK_FALSE(l.ok);
        CAPTURE(l.error);
        CHECK(l.error.find('\n') == std::string::npos);
        CHECK(l.error.find(f.path) != std::string::npos);
        for (const std::string& m : c.mentions) CHECK_MESSAGE(l.error.find(m) != std::string::npos, m);
    }
    Loaded unknown = load("no_such_scene_name");
    CHECK_FALSE(unknown.ok);
    CHECK(unknown.error.find("unknown scene \"no_such_scene_name\"") != std::string::npos);
    CHECK(unknown.error.find("pyramid") != std::string::npos);   // names the library

    // The same OBJ files load when convex or when the hull is asked for; scale multiplies lengths.
    TempFile ok("obj_ok.json", R"({"bodies": [{"shape": {"type": "obj", "path": ")" + cube.path +
                                   R"(", "scale": 2}, "density": 1000},
                                  {"shape": {"type": "obj", "path": ")" + dented.path +
                                   R"(", "convex_hull": true}, "position": [5, 0, 0]}]})");
    Loaded l = load(ok.path);
    REQUIRE_MESSAGE(l.ok, l.error);
    CHECK(l.model.mass[0] == doctest::Approx(8000));
    CHECK(l.model.polytopes[1].vertexCount() == 4);
}

TEST_CASE("scenes: a see-through static wall is read and a picking ray passes it") {
    // A glass wall (static, opacity 0.2) 1 m in front of a 1 m box, on the ray x = 5 - t.
    auto scene = [](double wallOpacity) {
        return R"({"bodies": [{"name": "box", "shape": {"type": "box", "half_extents": [0.5, 0.5, 0.5]}},
                              {"name": "glass", "static": true, "opacity": )" + std::to_string(wallOpacity) +
               R"(, "shape": {"type": "box", "half_extents": [0.01, 1, 1]}, "position": [2, 0, 0]}]})";
    };
    for (double opacity : {0.2, 1.0}) {
        CAPTURE(opacity);
        TempFile f("glass.json", scene(opacity));
        Loaded l = load(f.path);
        REQUIRE_MESSAGE(l.ok, l.error);
        CHECK(l.model.bodyOpacity[bodyIndex(l.model, "box")] == 1.f);
        CHECK(l.model.bodyOpacity[bodyIndex(l.model, "glass")] == doctest::Approx(opacity));
        World world(l.model, l.settings);
        Vec3 hit;
        int body = world.rayCast(Vec3{5, 0.1, 0.2}, Vec3{-1, 0, 0}, &hit);
        if (opacity < 1) {   // through the glass onto the box's face x = 0.5
            CHECK(body == bodyIndex(l.model, "box"));
            CHECK(hit.x == doctest::Approx(0.5).epsilon(1e-12));
        } else {             // an opaque wall stops the ray at its face x = 2.01
            CHECK(body == bodyIndex(l.model, "glass"));
            CHECK(hit.x == doctest::Approx(2.01).epsilon(1e-12));
        }
    }
}

TEST_CASE("scenes: generators make the closed-form numbers of bodies and joints keep their anchors") {
    auto loadText = [](const std::string& text, Model& m) {
        WorldSettings s;
        SceneInfo i;
        std::string e;
        bool ok = loadSceneFromText(text, "gen.json", ".", m, s, i, &e);
        CHECK_MESSAGE(ok, e);
        return ok;
    };
    Model square, house, grid, row;
    REQUIRE(loadText(R"({"bodies": [{"generator": "pyramid", "base": 6, "layout": "square"}]})", square));
    CHECK(square.bodyCount() == 36 + 25 + 16 + 9 + 4 + 1);
    REQUIRE(loadText(R"({"bodies": [{"generator": "card_house", "levels": 3, "card_half_length": 0.4,
        "card_half_width": 0.3, "card_half_thickness": 0.005, "lean_deg": 20}]})", house));
    CHECK(house.bodyCount() == 2 * (3 + 2 + 1) + 2);   // A-frame cards + one flat card per lower level
    CHECK(initialOverlap(house) < 1e-12);
    REQUIRE(loadText(R"({"bodies": [{"generator": "grid", "counts": [2, 3, 4], "spacing": [1, 1, 1],
        "body": {"name": "g", "shape": {"type": "sphere", "radius": 0.4}}}]})", grid));
    CHECK(grid.bodyCount() == 24);
    CHECK(grid.bodyName[23] == "g_1_2_3");
    CHECK(grid.initialPos[23].x == doctest::Approx(1));
    CHECK(grid.initialPos[23].z == doctest::Approx(3));
    REQUIRE(loadText(R"({"bodies": [{"generator": "row", "count": 3, "offset": [0, 0, 1],
        "rotation_step": {"axis": [0, 0, 1], "deg": 90},
        "body": {"name": "r", "shape": {"type": "box", "half_extents": [1, 0.1, 0.1]}, "velocity": [1, 0, 0]}}]})", row));
    REQUIRE(row.bodyCount() == 3);
    CHECK(row.initialRot[1].w == doctest::Approx(std::sqrt(0.5)));   // 90 deg about z
    CHECK(std::fabs(row.initialRot[2].z) == doctest::Approx(1));      // 180 deg
    CHECK(row.initialPos[2].z == doctest::Approx(2));
    CHECK(row.initialLinVel[2].x == 1);

    Loaded chain = load("hinge_chain");
    REQUIRE(chain.ok);
    REQUIRE(chain.model.joints.size() == 6);
    for (size_t k = 0; k < chain.model.joints.size(); ++k) {
        const Joint& j = chain.model.joints[k];
        CHECK(j.type == JointType::Revolute);
        CHECK(j.bodyB == bodyIndex(chain.model, "link_" + std::to_string(k)));
        Vec3 world{Real(0.4) * Real(k), 0, Real(2.5)};
        Vec3 fromB = transformPoint({chain.model.initialPos[j.bodyB], chain.model.initialRot[j.bodyB]}, j.anchorB);
        CHECK(length(fromB - world) < 1e-12);
    }
}
