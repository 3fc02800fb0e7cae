// Grasp events (engine/grasp/grasp_events.h) of grasp_box's script: at 1.2x the minimum grip the
// box is gripped, lifted and released with no slip; at 0.8x the pads slide and it is never lifted.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/grasp/grasp_player.h"
#include "engine/scene/scene_loader.h"

using namespace cs;

namespace {

std::vector<GraspEvent> graspBoxEvents(Real force) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string err;
    REQUIRE_MESSAGE(loadScene("grasp_box", model, settings, info, &err), err);
    World world(model, settings);
    GraspPlayer player(world.model(), info.grasp, force);
    const int steps = int(std::ceil(info.duration / settings.dt));
    for (int i = 0; i < steps; ++i) {
        player.beforeStep(world);
        world.step();
        player.afterStep(world);
    }
    for (const GraspEvent& e : player.events()) MESSAGE(force << " N: t " << e.time << " s " << e.name << " (" << e.detail << ")");
    return player.events();
}

int count(const std::vector<GraspEvent>& events, const char* name) {
    int n = 0;
    for (const GraspEvent& e : events) n += e.name == name ? 1 : 0;
    return n;
}

Real firstTime(const std::vector<GraspEvent>& events, const char* name) {
    for (const GraspEvent& e : events)
        if (e.name == name) return e.time;
    return -1;
}

}  // namespace

TEST_CASE("grasp: grasp_box's events at 1.2x and 0.8x the minimum grip") {
    const Real fmin = Real(1 * 9.81 / (2 * 0.75));
    const std::vector<GraspEvent> held = graspBoxEvents(Real(1.2) * fmin);
    // The script: close 1.5-2.2 s (the command passes 1/2 at 1.85 s), lift from 2.7 s, grip
    // opened 13.2-13.9 s (passing 1/2 at 13.55 s).
    CHECK(count(held, "grip closed") == 1);
    CHECK(count(held, "contact made") == 1);
    CHECK(count(held, "lift start") == 1);
    CHECK(count(held, "slip detected") == 0);
    CHECK(count(held, "release") == 1);
    CHECK(firstTime(held, "grip closed") == doctest::Approx(1.86).epsilon(0.01));
    CHECK(firstTime(held, "lift start") > Real(2.7));
    CHECK(firstTime(held, "lift start") < Real(3.2));
    CHECK(firstTime(held, "release") == doctest::Approx(13.56).epsilon(0.01));

    const std::vector<GraspEvent> dropped = graspBoxEvents(Real(0.8) * fmin);
    CHECK(count(dropped, "contact made") == 1);
    CHECK(count(dropped, "lift start") == 0);
    CHECK(count(dropped, "slip detected") >= 1);
    CHECK(firstTime(dropped, "slip detected") > Real(2.7));   // once the lift pulls the pads up
}
