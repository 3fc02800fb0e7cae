// The PLUS impact trace the app's slow-motion replay reads ([PLUS] Uchida, Sherman, Delp 2015,
// Algorithms 1-2, table 2): per-interval body velocities agree with the per-point velocities
// (v = G u) and with the impact's final du, momentum is conserved at every interval, and the
// world records the newtons_cradle impact with the five rounds of table 2.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <thread>

#include "engine/contact/plus_examples.h"
#include "engine/contact/plus_impact.h"
#include "engine/contact/plus_model.h"
#include "engine/contact/step_context.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

using namespace cs;

namespace {

// Relative velocity of point k (x, y, z in its frame) at body velocities u: v = G u.
Vec3 pointVelocity(const ImpactProblem& p, int k, const std::vector<Spatial>& u) {
    const ImpactPoint& q = p.points[k];
    Vec3 v{0, 0, 0};
    if (q.bodyA >= 0) v += u[q.bodyA].lin + cross(u[q.bodyA].ang, q.rA);
    if (q.bodyB >= 0) v -= u[q.bodyB].lin + cross(u[q.bodyB].ang, q.rB);
    return Vec3{dot(v, q.t1), dot(v, q.t2), dot(v, q.normal)};
}

}  // namespace

TEST_CASE("PLUS replay: per-interval body velocities match the point velocities and the final du") {
    PlusSettings s;
    s.maxDirectionChange = Real(0.01);
    PlusExample examples[] = {cradleExample(5, 2, 1),
                              brickExample(brickExample1Orientation(), Vec3{-5, 0, Real(-5.74)}, Real(0.225), Real(0.387)),
                              brickExample(brickExample2Orientation(), Vec3{-2, 0, Real(-8.84)}, Real(0.2), Real(0.414),
                                           Real(1e-3))};
    for (PlusExample& ex : examples) {
        const ImpactProblem& p = ex.problem;
        ImpactResult res = solvePlusImpact(p, s, true);
        REQUIRE(res.intervals == (int)res.trace.size());
        REQUIRE(res.intervals > 0);
        Vec3 momentum0{0, 0, 0};
        for (size_t b = 0; b < p.invMass.size(); ++b) momentum0 += p.velocity[b].lin / p.invMass[b];
        for (const ImpactInterval& it : res.trace) {
            REQUIRE(it.bodyVelocity.size() == p.invMass.size());
            for (size_t k = 0; k < p.points.size(); ++k) {
                Vec3 v = pointVelocity(p, int(k), it.bodyVelocity);
                CHECK(length(v - it.velocity[k]) < 1e-9 * (1 + length(v)));
            }
            if (&ex == &examples[0]) {   // no ground in the cradle: the impulses are internal
                Vec3 momentum{0, 0, 0};
                for (size_t b = 0; b < p.invMass.size(); ++b) momentum += it.bodyVelocity[b].lin / p.invMass[b];
                CHECK(length(momentum - momentum0) < 1e-9);
            }
        }
        const ImpactInterval& last = res.trace.back();
        for (size_t b = 0; b < p.invMass.size(); ++b) {
            CHECK(length(last.bodyVelocity[b].lin - (p.velocity[b].lin + res.deltaVelocity[b].lin)) < 1e-9);
            CHECK(length(last.bodyVelocity[b].ang - (p.velocity[b].ang + res.deltaVelocity[b].ang)) < 1e-9);
        }
    }
}

namespace {

struct Cradle {
    Model model;
    WorldSettings settings;
};

Cradle loadCradle() {
    Cradle c;
    SceneInfo info;
    std::string error;
    REQUIRE(loadScene("newtons_cradle", c.model, c.settings, info, &error));
    c.settings.solver.contactModel = ContactModelType::PLUS;
    return c;
}

// Steps until the world records an impact (at most 60 steps); returns the steps taken.
int stepToImpact(World& world) {
    world.stepContext().plus.recordImpacts = true;
    const long long serial0 = world.stepContext().plus.impactSerial;
    int steps = 0;
    while (world.stepContext().plus.impactSerial == serial0 && steps < 60) {
        world.step();
        ++steps;
    }
    return steps;
}

// The newtons_cradle impact as [PLUS] table 2 gives it: five rounds, one pair compressing per round.
void checkCradleImpact(const Model& model, const PlusStepData& plus, int steps, Real dt) {
    REQUIRE(plus.impactSerial > 0);
    // Ball 0 starts 0.1 m from ball 1 at 2 m/s: the impact comes in the step that closes the gap.
    CHECK(steps * dt == doctest::Approx(0.05).epsilon(0.2));
    const std::vector<PlusImpactRecord>& records = plus.impacts;
    REQUIRE(records.size() == 1);
    const PlusImpactRecord& r = records[0];
    CHECK(r.result.rounds == 5);
    CHECK(r.result.intervals == (int)r.result.trace.size());
    REQUIRE(r.contacts.size() == 4);
    REQUIRE(r.bodies.size() == 5);
    // Table 2: in round j the pair (j, j+1) compresses, (j-1, j) expands, the others observe.
    auto ballOf = [&](int body) { return std::stoi(model.bodyName[body].substr(5)); };
    for (const ImpactInterval& it : r.result.trace)
        for (size_t k = 0; k < r.contacts.size(); ++k) {
            int lo = std::min(ballOf(r.contacts[k].bodyA), ballOf(r.contacts[k].bodyB));
            int expected = lo == it.round ? int(ImpactPhase::Compressing)
                           : lo == it.round - 1 ? int(ImpactPhase::Expanding)
                                                : int(ImpactPhase::Observing);
            CHECK(it.phase[k] == expected);
        }
    // Ball 4 leaves at 2 m/s, the others stop.
    const ImpactInterval& last = r.result.trace.back();
    for (size_t b = 0; b < r.bodies.size(); ++b) {
        Real expected = ballOf(r.bodies[b]) == 4 ? Real(-2) : Real(0);
        CHECK(last.bodyVelocity[b].lin.x == doctest::Approx(expected).epsilon(1e-9));
    }
}

}  // namespace

TEST_CASE("PLUS replay: the world records the newtons_cradle impact (table 2's five rounds)") {
    Cradle c = loadCradle();
    World world(c.model, c.settings);
    const int steps = stepToImpact(world);
    checkCradleImpact(c.model, world.stepContext().plus, steps, c.settings.dt);
}

// Issue 37: the recording is the world's (its step context), not the thread's, so a world stepped
// on another thread (the app's physics thread) records its impacts, and a world on this thread
// that does not record keeps none.
TEST_CASE("PLUS replay: a world stepped on a second thread records its impact") {
    Cradle c = loadCradle();
    World recorded(c.model, c.settings), plain(c.model, c.settings);
    int steps = 0;
    std::thread physics([&] { steps = stepToImpact(recorded); });
    for (int i = 0; i < 12; ++i) plain.step();   // the same impact, unrecorded, meanwhile
    physics.join();
    checkCradleImpact(c.model, recorded.stepContext().plus, steps, c.settings.dt);
    CHECK(plain.stepContext().plus.impacts.empty());
    CHECK(plain.stepContext().plus.impactSerial == 0);
    // Recording changes nothing, and neither world's step touched the other's data: after as many
    // steps, the two are the same bits.
    REQUIRE(steps <= 12);
    for (int i = steps; i < 12; ++i) recorded.step();
    for (int b = 0; b < c.model.bodyCount(); ++b)
        for (int k = 0; k < 3; ++k) {
            CHECK(recorded.state().pos[b][k] == plain.state().pos[b][k]);
            CHECK(recorded.state().linVel[b][k] == plain.state().linVel[b][k]);
        }
}
