// "settings": {"peg": {...}} in scene files (engine/scene/scene_settings.cpp, docs/scene-format.md).
#include <doctest/doctest.h>

#include <string>

#include "engine/scene/scene_loader.h"
#include "engine/world.h"

using namespace cs;

namespace {

const char* kBody = R"("bodies": [{"shape": {"type": "box", "half_extents": [0.5, 0.5, 0.5]}}])";

bool load(const std::string& peg, WorldSettings& s, std::string& err) {
    Model m;
    SceneInfo info;
    const std::string text = std::string("{\"settings\": {\"contact\": \"peg\", \"peg\": ") + peg + "}, " + kBody + "}";
    return loadSceneFromText(text, "peg_settings.json", ".", m, s, info, &err);
}

}  // namespace

TEST_CASE("PEG settings: every key of the peg block reaches PegSettings; absent keys keep the defaults") {
    WorldSettings s;
    std::string err;
    REQUIRE(load(R"({"eps_theta": 0.05, "feasible_angle": 0.3, "feasible_delta": 0.01, "edge_eps": 0.03,
                     "trap_tolerance": 1e-5, "vertex_vertex": false, "motion_scale": 1.5})", s, err));
    CHECK(s.solver.contactModel == ContactModelType::PEG);
    CHECK(s.solver.peg.epsTheta == doctest::Approx(0.05));
    CHECK(s.solver.peg.feasibleAngle == doctest::Approx(0.3));
    CHECK(s.solver.peg.feasibleDelta == doctest::Approx(0.01));
    CHECK(s.solver.peg.edgeEps == doctest::Approx(0.03));
    CHECK(s.solver.peg.trapTolerance == doctest::Approx(1e-5));
    CHECK(s.solver.peg.vertexVertex == false);
    CHECK(s.solver.peg.motionScale == doctest::Approx(1.5));

    WorldSettings d;
    REQUIRE(load(R"({"edge_eps": 0.04})", d, err));
    const PegSettings defaults;
    CHECK(d.solver.peg.edgeEps == doctest::Approx(0.04));
    CHECK(d.solver.peg.epsTheta == defaults.epsTheta);
    CHECK(d.solver.peg.feasibleAngle == defaults.feasibleAngle);
    CHECK(d.solver.peg.feasibleDelta == defaults.feasibleDelta);
    CHECK(d.solver.peg.vertexVertex == defaults.vertexVertex);
    CHECK(d.solver.peg.motionScale == defaults.motionScale);
}

TEST_CASE("PEG settings: bad peg blocks give one line naming the file, the key and the problem") {
    struct Case { const char* peg; std::vector<std::string> mentions; };
    const Case cases[] = {
        {R"({"edge_epsilon": 0.01})", {"peg_settings.json", "unknown field", "/settings/peg/edge_epsilon", "edge_eps"}},
        {R"({"eps_theta": -0.1})", {"peg_settings.json", "/settings/peg/eps_theta", "non-negative"}},
        {R"({"eps_theta": 3})", {"/settings/peg/eps_theta", "[0, 2]"}},
        {R"({"feasible_angle": 2})", {"/settings/peg/feasible_angle", "pi/2"}},
        {R"({"feasible_delta": "wide"})", {"/settings/peg/feasible_delta"}},
        {R"({"vertex_vertex": 1})", {"/settings/peg/vertex_vertex"}},
        {R"({"motion_scale": -1})", {"/settings/peg/motion_scale", "non-negative"}},
        {R"([0.1])", {"/settings/peg"}},
    };
    for (const Case& c : cases) {
        INFO("peg block " << c.peg);
        WorldSettings s;
        std::string err;
        CHECK_FALSE(load(c.peg, s, err));
        INFO("error: " << err);
        CHECK(err.find('\n') == std::string::npos);
        for (const std::string& m : c.mentions) CHECK(err.find(m) != std::string::npos);
    }
}
