// Narrow-phase reuse (WorldSettings::narrowReuse, engine/collision/feature_cache.h): pairs at rest
// run the full search's exact tests on cached candidate feature pairs. The claim is that the
// contacts are the full search's bit for bit while the relative pose stays within the bound, so
// every check here is equality with a full search run on the same poses (tolerance 0), plus the
// counts that show the cache was actually used (or, past the bound, not).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "engine/collision/feature_cache.h"
#include "engine/collision/narrow_phase.h"
#include "engine/geometry/polytope.h"
#include "engine/model_builder.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

using namespace cs;

namespace {

bool sameBits(const PotentialContact& a, const PotentialContact& b) {
    return a.shapeA == b.shapeA && a.shapeB == b.shapeB && a.featureA == b.featureA && a.featureB == b.featureB &&
           a.type == b.type && std::memcmp(&a.pointA, &b.pointA, sizeof(Vec3)) == 0 &&
           std::memcmp(&a.pointB, &b.pointB, sizeof(Vec3)) == 0 &&
           std::memcmp(&a.normal, &b.normal, sizeof(Vec3)) == 0 && std::memcmp(&a.gap, &b.gap, sizeof(Real)) == 0;
}

bool sameContacts(const std::vector<PotentialContact>& a, const std::vector<PotentialContact>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!sameBits(a[i], b[i])) return false;
    return true;
}

// The world's broad-phase pairs at its current state.
std::vector<ShapePair> pairsOf(const World& w, const NarrowPhaseSettings& s) {
    std::vector<Aabb> boxes;
    computeContactAabbs(w.model(), w.state(), s, boxes);
    std::vector<ShapePair> pairs;
    findPairs(w.model(), boxes, nullptr, pairs);
    return pairs;
}

struct Tally {
    int steps = 0, mismatches = 0, reused = 0, rebuilt = 0, full = 0;
    int changedWhileReused = 0;   // steps whose contact features differ from the last step's, all pairs reused
};

// Steps w and, at every step, compares the narrow phase with the cache against the full search.
Tally compareAlong(World& w, int steps) {
    FeatureCache cache;
    Tally t;
    std::vector<PotentialContact> full, cached, last;
    for (int k = 0; k < steps; ++k) {
        const NarrowPhaseSettings s = narrowPhaseSettings(w.settings, w.settings.dt);
        const std::vector<ShapePair> pairs = pairsOf(w, s);
        collidePairs(w.model(), w.state(), pairs, s, full);
        collidePairs(w.model(), w.state(), pairs, s, cached, &cache);
        t.mismatches += sameContacts(full, cached) ? 0 : 1;
        t.reused += cache.reusedPairs;
        t.rebuilt += cache.rebuiltPairs;
        t.full += cache.fullPairs;
        bool sameFeatures = full.size() == last.size();
        for (size_t i = 0; sameFeatures && i < full.size(); ++i)
            sameFeatures = full[i].featureA == last[i].featureA && full[i].featureB == last[i].featureB &&
                           full[i].shapeA == last[i].shapeA && full[i].shapeB == last[i].shapeB;
        if (k > 0 && !sameFeatures && cache.rebuiltPairs == 0 && cache.fullPairs == 0) ++t.changedWhileReused;
        last = full;
        w.step();
        ++t.steps;
    }
    return t;
}

World loadWorld(const std::string& scene) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    REQUIRE_MESSAGE(loadScene(scene, model, settings, info, &error), error);
    return World(std::move(model), settings);
}

BodyDesc box(Vec3 half, Vec3 pos, bool isStatic) {
    BodyDesc b;
    b.isStatic = isStatic;
    b.shapes.push_back(ShapeDesc{ShapeType::Polytope, makeBox(half), 0});
    b.pose.pos = pos;
    return b;
}

}  // namespace

// The default pyramid settling from its start: every step's contacts equal the full search's,
// and after the first step nearly every pair runs on its candidates.
TEST_CASE("feature cache: the resting pyramid's contacts are the full search's, bit for bit") {
    World w = loadWorld("pyramid");
    const Tally t = compareAlong(w, 120);
    MESSAGE("pyramid, 120 steps: pair-steps reused ", t.reused, ", rebuilt ", t.rebuilt, ", full ", t.full);
    CHECK(t.mismatches == 0);
    CHECK(t.reused > 0.9 * (t.reused + t.rebuilt + t.full));
}

// The 385-box pyramid (its 2,600 pairs take collidePairs' parallel path): the same at two threads
// as the full search (the cache's slots are the calling thread's, reached by the workers).
TEST_CASE("feature cache: the parallel path gives the full search's contacts") {
    World w = loadWorld(std::string(CS_SOURCE_DIR) + "/bench/scenes/peer_pyramid_385.json");
#if defined(_OPENMP)
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2);
#endif
    const Tally t = compareAlong(w, 4);
#if defined(_OPENMP)
    omp_set_num_threads(saved);
#endif
    CHECK(t.mismatches == 0);
    CHECK(t.reused > 0);
}

// Two boxes resting face to face; the top one is then moved by hand. Within the bound (here a
// quarter of the slack) the pair reuses its candidates and its contacts equal the full search's;
// moved past the slack (2 cm, the slack is 5 mm) or turned past it, the pair is searched in full.
TEST_CASE("feature cache: a pair moved past the bound is searched in full") {
    Model m;
    std::string err;
    REQUIRE(addBody(m, box({1, 1, 0.5}, {0, 0, -0.5}, true), &err) >= 0);
    REQUIRE(addBody(m, box({0.5, 0.5, 0.5}, {0.1, 0.05, 0.501}, false), &err) >= 0);
    State st;
    st.pos = m.initialPos;
    st.rot = m.initialRot;
    st.linVel.assign(2, Vec3{0, 0, 0});
    st.angVel.assign(2, Vec3{0, 0, 0});
    NarrowPhaseSettings s;
    s.dt = Real(1.0 / 120);
    const std::vector<ShapePair> pairs{{0, 1}};
    FeatureCache cache;
    std::vector<PotentialContact> full, cached;
    collidePairs(m, st, pairs, s, cached, &cache);
    CHECK(cache.rebuiltPairs == 1);
    const Real slack = kSlackFraction * s.margin;
    struct Move { Vec3 shift; Real turn; bool reuse; };
    const Move moves[] = {{{0.25 * slack, 0, 0}, 0, true},           // within: reused
                          {{0, 0, -0.2 * slack}, 0, true},           // pressed in a little: reused
                          {{0.02, 0, 0}, 0, false},                  // 2 cm: past the slack
                          {{0, 0, 0}, 0.02, false}};                 // 0.02 rad x 0.87 m: past it
    for (const Move& mv : moves) {
        CAPTURE(mv.shift.x);
        CAPTURE(mv.turn);
        State moved = st;
        moved.pos[1] = st.pos[1] + mv.shift;
        moved.rot[1] = quatFromAxisAngle({0, 0, 1}, mv.turn);
        FeatureCache c = cache;
        collidePairs(m, moved, pairs, s, cached, &c);
        collidePairs(m, moved, pairs, s, full);
        CHECK(sameContacts(full, cached));
        CHECK(full.size() >= 4);
        CHECK(c.reusedPairs == (mv.reuse ? 1 : 0));
        CHECK(c.rebuiltPairs == (mv.reuse ? 0 : 1));
    }
    // A pair that moves within the step (5 cm per step here) gets the plain search and no entry.
    st.linVel[1] = Vec3{6, 0, 0};
    FeatureCache fresh;
    collidePairs(m, st, pairs, s, cached, &fresh);
    CHECK(fresh.fullPairs == 1);
    CHECK(fresh.entries.empty());
}

// A box sliding slowly across a larger static box and over its edge: the contacts change (the
// bottom face's vertices leave the top face, edge contacts appear, the box tips over the edge)
// and some of those changes happen on steps where the pair ran on its candidates only. Each
// step's contacts equal the full search's.
TEST_CASE("feature cache: contacts that appear while a box slides over an edge are found") {
    Model m;
    std::string err;
    REQUIRE(addBody(m, box({1, 1, 0.5}, {0, 0, -0.5}, true), &err) >= 0);
    BodyDesc slider = box({0.25, 0.25, 0.25}, {0.6, 0, 0.25}, false);
    slider.linVel = {0.1, 0, 0};   // 0.83 mm per step: the pair stays at rest by the cache's test
    slider.material.friction = 0;
    REQUIRE(addBody(m, slider, &err) >= 0);
    WorldSettings ws;
    World w(std::move(m), ws);
    const Tally t = compareAlong(w, 600);
    MESSAGE("slider, 600 steps: pair-steps reused ", t.reused, ", rebuilt ", t.rebuilt, ", full ", t.full,
            "; steps whose contacts changed while reused ", t.changedWhileReused);
    CHECK(t.mismatches == 0);
    CHECK(t.reused > 0);
    CHECK(t.changedWhileReused > 0);
    CHECK(w.state().pos[1].x > 1.0);   // it went over the edge
}

// A pyramid at rest hit by a box thrown at it: the world with reuse ends in the same state, bit
// for bit, as the world without (the narrow phase's output is identical, so is everything after).
TEST_CASE("feature cache: a pyramid hit by a box steps as without the cache") {
    for (const char* scene : {"pyramid", "card_house"}) {
        CAPTURE(scene);
        World plain = loadWorld(scene), reuse = loadWorld(scene);
        reuse.settings.narrowReuse = true;
        plain.settings.narrowReuse = false;
        for (int k = 0; k < 60; ++k) {
            plain.step();
            reuse.step();
        }
        for (World* w : {&plain, &reuse}) {
            BodyDesc thrown = box({0.3, 0.3, 0.3}, {-6, 0, 1.5}, false);
            thrown.linVel = {12, 0, 1};
            std::string err;
            REQUIRE(w->addBody(thrown, &err) >= 0);
        }
        for (int k = 0; k < 120; ++k) {
            plain.step();
            reuse.step();
        }
        const State& a = plain.state();
        const State& b = reuse.state();
        REQUIRE(a.pos.size() == b.pos.size());
        CHECK(std::memcmp(a.pos.data(), b.pos.data(), a.pos.size() * sizeof(Vec3)) == 0);
        CHECK(std::memcmp(a.rot.data(), b.rot.data(), a.rot.size() * sizeof(Quat)) == 0);
        CHECK(std::memcmp(a.linVel.data(), b.linVel.data(), a.linVel.size() * sizeof(Vec3)) == 0);
        const Vec3 p = a.pos.back();
        CHECK(length(p - Vec3{-6, 0, 1.5}) > 1.0);   // the thrown box went somewhere
    }
}
