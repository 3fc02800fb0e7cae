// The peer scenes of issue 20 (bench/scenes/peer_*.json), built as the side-by-side runs with
// Bullet 3.24 and ODE 0.16 specify them: unit boxes of 1000 kg, square pyramids with 1 mm side
// gaps, a pile dropped from a 1.25 m lattice with tilts of up to 0.1 rad; and the grid
// generator's "tilt" option they use. Checked against closed forms (counts n(n+1)(2n+1)/6,
// positions on the lattice, the tilt angle from the quaternion).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "engine/scene/scene_loader.h"

using namespace cs;

namespace {

struct Peer {
    Model model;
    WorldSettings settings;
    SceneInfo info;
};

Peer loadPeer(const std::string& file) {
    Peer p;
    std::string error;
    REQUIRE_MESSAGE(loadScene(std::string(CS_SOURCE_DIR) + "/bench/scenes/" + file, p.model, p.settings, p.info, &error),
                    error);
    return p;
}

// Angle between a body's z axis and the world's z axis.
Real tiltOf(Quat q) { return std::acos(std::fmin(Real(1), rotate(q, Vec3{0, 0, 1}).z)); }

}  // namespace

TEST_CASE("peer scenes: square pyramids of unit 1000 kg boxes with 1 mm side gaps") {
    for (int base : {5, 10, 20}) {
        const int boxes = base * (base + 1) * (2 * base + 1) / 6;
        CAPTURE(boxes);
        Peer p = loadPeer("peer_pyramid_" + std::to_string(boxes) + ".json");
        REQUIRE(p.model.bodyCount() == boxes + 1);   // and the ground
        int bottom = 0;
        for (int b = 1; b < p.model.bodyCount(); ++b) {
            CHECK(p.model.mass[b] == doctest::Approx(1000));
            CHECK(p.model.materials[p.model.bodyMaterial[b]].friction == doctest::Approx(0.6));
            const Vec3 x = p.model.initialPos[b];
            const Real level = (x.z - Real(0.5)) / 1;   // unit boxes, levels resting on each other
            CHECK(level == doctest::Approx(std::round(level)).epsilon(1e-12));
            if (x.z < 1) ++bottom;
        }
        CHECK(bottom == base * base);
        // Neighbours on the bottom row: 1 m boxes 1.001 m apart (a 1 mm gap).
        CHECK(p.model.initialPos[2].x - p.model.initialPos[1].x == doctest::Approx(1.001).epsilon(1e-12));
    }
}

TEST_CASE("peer scenes: 1,000 boxes on a 1.25 m lattice with tilts up to 0.1 rad, in a bin") {
    Peer p = loadPeer("peer_pile_1000.json");
    int boxes = 0;
    Real largest = 0, smallest = 1;
    for (int b = 0; b < p.model.bodyCount(); ++b) {
        if (p.model.isStatic(b)) continue;
        ++boxes;
        CHECK(p.model.mass[b] == doctest::Approx(1000));
        const Vec3 x = p.model.initialPos[b];
        for (Real c : {x.x + Real(5.625), x.y + Real(5.625), x.z - Real(0.625)}) {
            const Real cell = c / Real(1.25);
            CHECK(cell == doctest::Approx(std::round(cell)).epsilon(1e-12));
        }
        const Real tilt = tiltOf(p.model.initialRot[b]);
        largest = std::fmax(largest, tilt);
        smallest = std::fmin(smallest, tilt);
    }
    CHECK(boxes == 1000);
    CHECK(largest <= Real(0.1) + Real(1e-12));
    CHECK(largest > Real(0.09));     // the tilts are drawn up to the limit ...
    CHECK(smallest < Real(0.01));    // ... and down to upright
    CHECK(p.model.bodyCount() == 1005);   // ground and four walls
}

TEST_CASE("peer scenes: the grid's tilt is seeded and checked") {
    auto tilts = [](const std::string& text, std::string* error) {
        Model m;
        WorldSettings s;
        SceneInfo info;
        std::vector<Real> out;
        if (!loadSceneFromText(text, "tilt", ".", m, s, info, error)) return out;
        for (int b = 0; b < m.bodyCount(); ++b) out.push_back(tiltOf(m.initialRot[b]));
        return out;
    };
    const std::string grid = R"({"bodies": [{"generator": "grid", "counts": [3, 1, 1], "spacing": [2, 0, 0], )";
    const std::string body = R"("body": {"shape": {"type": "box", "half_extents": [0.5, 0.5, 0.5]}}}]})";
    std::string error;
    const auto a = tilts(grid + R"("tilt": 0.3, "seed": 4, )" + body, &error);
    REQUIRE_MESSAGE(a.size() == 3, error);
    CHECK(a == tilts(grid + R"("tilt": 0.3, "seed": 4, )" + body, &error));
    CHECK(a != tilts(grid + R"("tilt": 0.3, "seed": 5, )" + body, &error));
    for (Real t : a) CHECK(t <= Real(0.3) + Real(1e-12));
    CHECK(tilts(grid + body, &error) == std::vector<Real>{0, 0, 0});
    CHECK(tilts(grid + R"("tilt": -0.1, )" + body, &error).empty());
    CHECK(error.find("tilt") != std::string::npos);
}

TEST_CASE("peer scenes: the 20,000-box pile is the 1,000-box one widened to 40 x 50 columns, in a bin that fits") {
    // Over the old limit of 10,000 bodies: loads now (SceneLimits::bodies 25,000).
    Peer p = loadPeer("peer_pile_20000.json");
    REQUIRE(p.model.bodyCount() == 20005);   // the boxes, the ground and four walls
    Real lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9}, largest = 0;
    for (int b = 0; b < p.model.bodyCount(); ++b) {
        if (p.model.isStatic(b)) continue;
        CHECK(p.model.mass[b] == doctest::Approx(1000));
        CHECK(p.model.materials[p.model.bodyMaterial[b]].friction == doctest::Approx(0.5));
        const Vec3 x = p.model.initialPos[b];
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::fmin(lo[k], x[k]);
            hi[k] = std::fmax(hi[k], x[k]);
        }
        largest = std::fmax(largest, tiltOf(p.model.initialRot[b]));
    }
    // Centres on the 1.25 m lattice: 40 x 50 x 10 cells, centred, the bottom layer 0.125 m up.
    CHECK(hi[0] - lo[0] == doctest::Approx(39 * 1.25));
    CHECK(hi[1] - lo[1] == doctest::Approx(49 * 1.25));
    CHECK(hi[2] - lo[2] == doctest::Approx(9 * 1.25));
    CHECK(lo[0] + hi[0] == doctest::Approx(0));
    CHECK(lo[2] == doctest::Approx(0.625));
    CHECK(largest <= Real(0.1) + Real(1e-12));
    CHECK(largest > Real(0.09));
    // The bin's inner faces 0.875 m from the outer boxes' centres, as in peer_pile_1000 (6.5 - 5.625).
    int walls = 0;
    for (int b = 0; b < p.model.bodyCount(); ++b) {
        if (!p.model.isStatic(b) || p.model.bodyName[b].rfind("wall_", 0) != 0) continue;
        ++walls;
        const Vec3 x = p.model.initialPos[b];
        const bool eastWest = std::fabs(x.x) > std::fabs(x.y);
        const Real inner = (eastWest ? std::fabs(x.x) : std::fabs(x.y)) - Real(0.25);
        const Real outerBox = eastWest ? hi[0] : hi[1];
        CHECK(inner - outerBox == doctest::Approx(0.875));
    }
    CHECK(walls == 4);
}
