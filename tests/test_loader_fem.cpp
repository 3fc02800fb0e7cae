// Deformable bodies in scene files (docs/scene-format.md, "Deformable bodies"): meshes from
// generators, TetGen files and OBJ surfaces, selections for pins, attachments and activation,
// the library's FEM scenes, and one-line errors for bad meshes and values.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "engine/scene/scene_loader.h"

using namespace cs;

namespace {

const std::string kGround = R"({"generator": "ground"})";

bool load(const std::string& text, Model& model, std::string& error, const std::string& dir = ".") {
    WorldSettings settings;
    SceneInfo info;
    return loadSceneFromText(text, "fem.json", dir, model, settings, info, &error);
}

// A scene of the ground and one deformable whose fields are `fields` (after the mesh and material).
std::string oneBody(const std::string& mesh, const std::string& fields = "") {
    return R"({"bodies": [)" + kGround + R"(, {"name": "handle", "shape": {"type": "sphere", "radius": 0.1}, "position": [2, 0, 1]}],
  "deformables": [{"name": "soft", "mesh": )" + mesh +
           R"(, "material": {"model": "neohookean", "youngs": 1e5, "poisson": 0.45}, "position": [0, 0, 1])" + fields +
           "}]}";
}

std::string loadError(const std::string& text, const std::string& dir = ".") {
    Model model;
    std::string error;
    CHECK_FALSE(load(text, model, error, dir));
    CHECK_MESSAGE(error.find('\n') == std::string::npos, error);
    return error;
}

const std::string kBox = R"({"type": "box", "half_extents": [0.5, 0.25, 0.25], "cells": 4})";   // 4 x 2 x 2 cubes

}  // namespace

TEST_CASE("fem scenes: generator meshes, pose, material and selections") {
    Model model;
    std::string error;
    const std::string text = oneBody(kBox, R"(, "friction": 0.8, "velocity": [1, 0, 0],
        "pin": [{"half_space": {"normal": [-1, 0, 0], "offset": 0.5}}],
        "attach": [{"body": "handle", "nodes": {"box": {"min": [0.5, -1, -1], "max": [1, 1, 1]}}}],
        "activation": [{"tets": {"half_space": {"normal": [0, 0, 1], "offset": 0}}, "weight": 0.5}])");
    REQUIRE_MESSAGE(load(text, model, error), error);
    REQUIRE(model.femBodies.size() == 1);
    const FemBodyInfo& b = model.femBodies[0];
    CHECK(b.name == "soft");
    CHECK(b.tetCount == 6 * 4 * 2 * 2);
    CHECK(b.nodeCount == 5 * 3 * 3);
    CHECK(b.material.type == FemMaterialType::StableNeoHookean);
    CHECK(b.contact.friction == doctest::Approx(0.8));
    // The -x face (3 x 3 nodes) pinned, the +x face attached to the handle (body 1).
    int pinned = 0;
    for (int i = 0; i < b.nodeCount; ++i) {
        const bool end = model.femRestPos[i].x < -0.49;
        CHECK((model.femNodeInvMass[i] == 0) == end);
        pinned += end;
    }
    CHECK(pinned == 9);
    REQUIRE(model.femAttachments.size() == 9);
    for (const FemAttachment& a : model.femAttachments) {
        CHECK(a.body == 1);
        CHECK(model.femRestPos[a.node].x == doctest::Approx(0.5));
    }
    // Half the tets (centroids above z = 0 of the mesh frame, z = 1 in the world) weighted 0.5.
    int weighted = 0;
    for (int t = 0; t < b.tetCount; ++t) {
        const auto& k = model.femTets[t];
        const Real z = (model.femRestPos[k[0]].z + model.femRestPos[k[1]].z + model.femRestPos[k[2]].z + model.femRestPos[k[3]].z) / 4;
        CHECK(model.femTetActivation[t] == doctest::Approx(z > 1 ? 0.5 : 0.0));
        weighted += z > 1;
    }
    CHECK(weighted == b.tetCount / 2);
    CHECK(model.femInitialVel[0].x == doctest::Approx(1));
    CHECK(model.femRestPos[0].z == doctest::Approx(0.75));   // placed at z = 1
}

TEST_CASE("fem scenes: beam, capsule, sphere, TetGen files and a closed OBJ surface load") {
    Model model;
    std::string error;
    REQUIRE_MESSAGE(load(oneBody(R"({"type": "beam", "length": 1, "half_width": 0.05, "half_height": 0.1, "cells": 10, "cross_cells": 1})"),
                         model, error), error);
    CHECK(model.femBodies[0].tetCount == 6 * 10 * 1 * 2);
    REQUIRE_MESSAGE(load(oneBody(R"({"type": "capsule", "radius": 0.1, "half_length": 0.2, "resolution": 2})"), model, error), error);
    CHECK(model.femBodies[0].tetCount > 100);
    REQUIRE_MESSAGE(load(oneBody(R"({"type": "sphere", "radius": 0.1, "scale": 2})"), model, error), error);
    Real top = 0;
    for (const Vec3& p : model.femRestPos) top = std::max(top, p.z);
    CHECK(top == doctest::Approx(1.2));   // radius 0.1 scaled by 2 at z = 1

    const auto dir = std::filesystem::temp_directory_path() / ("cs_test_loader_fem_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ofstream n(dir / "tet.node"), e(dir / "tet.ele"), o(dir / "cube.obj"), open(dir / "open.obj");
        n << "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
        e << "1 4 0\n0 0 1 2 3\n";
        o << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
          << "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";
        open << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
             << "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\n";
    }
    REQUIRE_MESSAGE(load(oneBody(R"({"type": "tetgen", "node": "tet.node", "ele": "tet.ele"})"), model, error, dir.string()), error);
    CHECK(model.femBodies[0].tetCount == 1);
    REQUIRE_MESSAGE(load(oneBody(R"({"type": "obj", "path": "cube.obj", "resolution": 4})"), model, error, dir.string()), error);
    Real volume = 0;
    for (const TetRest& r : model.femTetRest) volume += r.volume;
    CHECK(volume == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(model.femBodies[0].tetCount > 12);   // the resolution bounds the tets' size

    // Bad meshes: one line each, naming the problem.
    CHECK(loadError(oneBody(R"({"type": "obj", "path": "open.obj"})"), dir.string()).find("open surface") != std::string::npos);
    CHECK(loadError(oneBody(R"({"type": "obj", "path": "missing.obj"})"), dir.string()).find("file not found") != std::string::npos);
    {
        std::ofstream e(dir / "tet.ele");
        e << "1 4 0\n0 0 2 1 3\n";   // negatively oriented
    }
    CHECK(loadError(oneBody(R"({"type": "tetgen", "node": "tet.node", "ele": "tet.ele"})"), dir.string()).find("tet 0 is inverted") !=
          std::string::npos);
    {
        std::ofstream e(dir / "tet.ele");
        e << "1 4 0\n0 0 1 2 2\n";   // flat
    }
    CHECK(loadError(oneBody(R"({"type": "tetgen", "node": "tet.node", "ele": "tet.ele"})"), dir.string()).find("degenerate") !=
          std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("fem scenes: bad values, selections and limits are one-line errors") {
    struct Case {
        std::string text, mention;
    };
    const Case cases[] = {
        {oneBody(R"({"type": "cone"})"), "unknown mesh type \"cone\""},
        {oneBody(kBox, R"(, "pin": [{"box": {"min": [5, 5, 5], "max": [6, 6, 6]}}])"), "the selection holds no node"},
        {oneBody(kBox, R"(, "pin": [{"indices": [0, 45]}])"), "/deformables/0/pin/0/indices/1"},
        {oneBody(kBox, R"(, "pin": [{"all": true, "indices": [0]}])"), "exactly one of"},
        {oneBody(kBox, R"(, "attach": [{"body": "nobody", "nodes": {"all": true}}])"), "unknown body \"nobody\""},
        {oneBody(kBox, R"(, "activation": [{"tets": {"all": true}, "weight": 2}])"), "must lie in [0, 1]"},
        {oneBody(kBox, R"(, "colour": [1, 0, 0])"), "unknown field"},
        {oneBody(R"({"type": "box", "half_extents": [1, 1, 1], "cells": 100})"), "limited to 200000"},
        {oneBody(R"({"type": "sphere", "radius": 1, "resolution": 25})"), "/deformables/0/mesh/resolution"},
        {R"({"bodies": [{"generator": "ground"}], "deformables": [{"mesh": )" + kBox +
             R"(, "material": {"model": "rubber", "youngs": 1e5}}]})",
         "unknown material model \"rubber\""},
        {R"({"bodies": [{"generator": "ground"}], "deformables": [{"mesh": )" + kBox +
             R"(, "material": {"youngs": 1e5, "poisson": 0.5}}]})",
         "poisson: must lie in (-1, 0.5)"},
        {R"({"bodies": [{"generator": "ground"}], "deformables": [{"name": "a", "mesh": )" + kBox +
             R"(, "material": {"youngs": 1e5}}, {"name": "a", "mesh": )" + kBox + R"(, "material": {"youngs": 1e5}}]})",
         "duplicate deformable name \"a\""},
    };
    for (const Case& c : cases) {
        const std::string error = loadError(c.text);
        CHECK_MESSAGE(error.find(c.mention) != std::string::npos, error);
    }
}

TEST_CASE("fem scenes: the library's deformable scenes load with their pins, attachments and chambers") {
    struct Expect {
        const char* scene;
        int bodies, pinned, attached, staticPins;   // a node attached to a static body is pinned (fem_builder.cpp)
        bool activated;
    };
    const Expect expected[] = {
        {"fem_tomato_drop", 1, 0, 0, 0, false},     {"fem_extension", 2, 18, 18, 0, false},
        {"fem_cantilever", 1, 9, 0, 0, false},      {"pneunet_finger", 1, 30, 0, 30, true},
        {"fem_ball_squeeze", 1, 0, 0, 0, false},    {"fem_ramp", 2, 0, 0, 0, false},
    };
    for (const Expect& e : expected) {
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string error;
        REQUIRE_MESSAGE(loadScene(e.scene, model, settings, info, &error), error);
        CHECK(int(model.femBodies.size()) == e.bodies);
        int pinned = 0;
        for (Real w : model.femNodeInvMass) pinned += w == 0;
        CHECK_MESSAGE(pinned == e.pinned, e.scene);
        CHECK_MESSAGE(int(model.femAttachments.size()) == e.attached, e.scene);
        CHECK_MESSAGE(int(model.femStaticPins.size()) == e.staticPins, e.scene);
        for (const FemAttachment& a : model.femStaticPins) CHECK(model.femNodeInvMass[a.node] == 0);
        Real activated = 0;
        for (Real w : model.femTetActivation) activated += w;
        CHECK_MESSAGE((activated > 0) == e.activated, e.scene);
        World world(model);
        CHECK(world.state().femPos.size() == model.femRestPos.size());
    }
}
