// The app's view choices that are pure functions (issue 22, items 12-13): the contact-force
// scale and the cone size from the scene (app/gui/view_scale.h), the camera kept above the floor
// and zooming towards the cursor (render/camera.h), and the plot axis labels
// (render/plot_widget.h). The rest of the layout is checked in the running app by
// scripts/gui_test.sh.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "app/gui/view_scale.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"
#include "render/camera.h"
#include "render/plot_widget.h"

using namespace cs;

namespace {

struct Extent {
    Real height = 0;    // m, from the floor to the highest point of a dynamic body
    Real longest = 0;   // m, the longest contact-force line at the chosen scale
    Real weight = 0;    // N, the heaviest dynamic body's weight
};

// Runs a library scene for `seconds` (< 0: the scene's duration, when it has come to rest) and
// measures its contact-force lines as contact_model.cpp
// draws them: (forceScale / h) |impulse|.
Extent measure(const char* scene, float forceScale, Real seconds) {
    Model m;
    WorldSettings s;
    SceneInfo info;
    std::string error;
    REQUIRE_MESSAGE(loadScene(scene, m, s, info, &error), error);
    World w(m, s);
    if (seconds < 0) seconds = Real(info.duration);
    for (int i = 0; i < int(seconds / s.dt); ++i) w.step();
    Extent e;
    Real h = s.dt / std::max(1, s.substeps);
    for (const Contact& c : w.contacts()) {
        Vec3 impulse = c.normalImpulse * c.geometry.normal + c.tangentImpulse[0] * c.tangent[0] +
                       c.tangentImpulse[1] * c.tangent[1];
        e.longest = std::max(e.longest, Real(forceScale) / h * length(impulse));
    }
    Real floor = floorHeight(m);
    for (int b = 0; b < m.bodyCount(); ++b) {
        if (m.isStatic(b)) continue;
        e.height = std::max(e.height, w.state().pos[b].z + bodyBoundingRadius(m, b) - floor);
        e.weight = std::max(e.weight, m.mass[b] * length(s.gravity));
    }
    return e;
}

}  // namespace

TEST_CASE("force overlay: box_on_plane's weight is drawn as long as the box's bounding radius") {
    Model m;
    WorldSettings s;
    SceneInfo info;
    std::string error;
    REQUIRE(loadScene("box_on_plane", m, s, info, &error));
    OverlayScale o = overlayScale(m, s.gravity);
    CHECK(o.typicalWeight == doctest::Approx(1000 * 9.81).epsilon(1e-6));
    CHECK(o.typicalRadius == doctest::Approx(0.5 * std::sqrt(3.0)).epsilon(1e-6));
    CHECK(o.forceScale * 1000 * 9.81 == doctest::Approx(0.5 * std::sqrt(3.0)).epsilon(1e-6));
    // Four contacts share the weight: each line a quarter of the radius (a fixed 0.02 m/N drew
    // them 49 m long).
    Extent e = measure("box_on_plane", o.forceScale, Real(1));
    CHECK(e.longest == doctest::Approx(0.25 * 0.5 * std::sqrt(3.0)).epsilon(0.05));
}

TEST_CASE("force overlay: at rest, the longest force line of a stacked scene stays within its height") {
    for (const char* scene : {"pyramid", "arch", "table_pile", "card_house", "heavy_stack"}) {
        Model m;
        WorldSettings s;
        SceneInfo info;
        std::string error;
        REQUIRE(loadScene(scene, m, s, info, &error));
        OverlayScale o = overlayScale(m, s.gravity);
        // The stacks start at rest; the tables are dropped and come to rest by the scene's end.
        Extent e = measure(scene, o.forceScale, std::string(scene) == "table_pile" ? Real(-1) : Real(0.5));
        INFO(std::string(scene) << ": longest " << e.longest << " m, scene height " << e.height << " m, scale " << o.forceScale
                   << " m/N (the old fixed 0.02 m/N: " << e.longest / o.forceScale * 0.02 << " m)");
        CHECK(e.longest <= e.height);
        CHECK(e.longest >= 0.02 * e.height);   // and visible
    }
}

TEST_CASE("cone overlay: a friction cone is no wider than the parts it sits on (cards, table legs)") {
    for (const char* scene : {"card_house", "table_pile", "pyramid", "box_on_plane"}) {
        Model m;
        WorldSettings s;
        SceneInfo info;
        std::string error;
        REQUIRE(loadScene(scene, m, s, info, &error));
        OverlayScale o = overlayScale(m, s.gravity);
        // The cone's base diameter 2 mu H against the part size s = cbrt(volume) of every
        // dynamic part: a table's leg (0.05 x 0.05 x 0.4 m, s = 0.1 m), a card (s = 0.17 m).
        Real smallest = Real(1e30), mu = 0;
        for (int p = 0; p < m.shapeCount(); ++p) {
            int b = m.shapeBody[p];
            if (m.isStatic(b)) continue;
            smallest = std::min(smallest, std::cbrt(m.polytopes[m.shapePolytope[p]].volume));
            mu = std::max(mu, m.materials[m.bodyMaterial[b]].friction);
        }
        INFO(std::string(scene) << ": cone height " << o.normalLength << " m, smallest part " << smallest << " m, mu " << mu);
        CHECK(2 * mu * o.normalLength <= smallest);
        CHECK(o.normalLength >= 0.1 * smallest);
    }
}

TEST_CASE("camera: orbiting, zooming and panning down keep the eye above the floor") {
    Camera c;
    c.target = glm::vec3(0, 0, 0.5f);
    c.distance = 8;
    c.pitch = glm::radians(20.f);
    c.floorZ = 0;
    c.orbit(0, -2000);   // the cursor far up: pitch would go to -89 degrees
    CHECK(c.eye().z >= 0.f);
    CHECK(c.eye().z == doctest::Approx(0.16f).epsilon(1e-3));   // the 2% margin of 8 m
    c.zoom(-10);         // out: the same pitch would take the eye below
    CHECK(c.eye().z >= 0.f);
    c.pan(0, -5000, Viewport{0, 0, 800, 600});   // drag down: the target stops at the floor
    CHECK(c.target.z >= 0.f);
    CHECK(c.eye().z >= 0.f);
    Camera free;         // no floor: all the way round
    free.orbit(0, -2000);
    CHECK(free.pitch == doctest::Approx(glm::radians(-89.f)));
    CHECK(minPitchAboveFloor(0.5f, 8, kNoFloor) == doctest::Approx(glm::radians(-89.f)));
}

TEST_CASE("camera: the wheel zooms towards the point under the cursor, which keeps its pixel") {
    const Viewport vp{340, 0, 940, 720};
    const int windowHeight = 720;
    Camera c;
    c.target = glm::vec3(0, 0, 0.5f);
    c.distance = 8;
    c.floorZ = 0;
    // A point off the centre: 200 px right of and 150 px above the viewport's centre, 6 m along its ray.
    const glm::vec2 cursor(340 + 470 + 200, 360 - 150);
    const Ray ray = c.pixelRay(cursor.x, cursor.y, windowHeight, vp);
    const glm::vec3 p = ray.origin + 6.f * ray.direction;
    const glm::vec3 forward = c.forward();
    for (float steps : {3.f, -2.f}) {   // in, then out
        const float before = c.distance;
        c.zoomToward(steps, p);
        glm::vec2 px;
        REQUIRE(c.project(p, windowHeight, vp, px));
        INFO("zoom " << steps << ": the point at pixel " << px.x << ", " << px.y);
        CHECK(px.x == doctest::Approx(cursor.x).epsilon(1e-3));
        CHECK(px.y == doctest::Approx(cursor.y).epsilon(1e-3));
        CHECK(c.distance == doctest::Approx(before * std::pow(0.88f, steps)));
        CHECK(glm::length(c.forward() - forward) < 1e-6f);   // the view direction is kept
    }
    // The centre's point: the target stays where it is, as a plain zoom.
    Camera centred = c;
    centred.zoomToward(2, c.target);
    CHECK(glm::length(centred.target - c.target) < 1e-5f);
    // Following a body, the wheel zooms on the followed target.
    Camera following = c;
    following.followBody = 3;
    following.zoomToward(2, p);
    CHECK(glm::length(following.target - c.target) < 1e-6f);
}

TEST_CASE("plot axis labels: neighbouring ticks never read alike, each within half a step") {
    struct Axis {
        double lo, hi;
    };
    // Penetration in mm at rest (1e-5 mm: "%.3f" read 0.000 at every tick), metres of
    // penetration on a collapse, an energy offset from zero, a large energy.
    for (Axis a : {Axis{0, 2e-5}, Axis{0, 28.1}, Axis{1000, 1000.004}, Axis{-3e-7, 0}, Axis{0, 3.2e5}}) {
        double step = (a.hi - a.lo) / 4, maxAbs = std::max(std::fabs(a.lo), std::fabs(a.hi));
        std::set<std::string> labels;
        for (int k = 0; k <= 4; ++k) {
            double v = a.lo + step * k;
            std::string text = axisLabel(v, step, maxAbs);
            INFO("axis [" << a.lo << ", " << a.hi << "] tick " << v << ": " << text);
            CHECK(std::fabs(std::strtod(text.c_str(), nullptr) - v) <= 0.5 * step);
            CHECK(text.size() <= 10);   // fits the plot's left margin
            labels.insert(text);
        }
        CHECK(labels.size() == 5);
    }
}
