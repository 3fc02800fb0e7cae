// The compliant reference model ([PLUS] section 4, eqs. 4.1-4.2) against Hertz's closed forms,
// and both impact models in the world on their scenes (runner-level behaviour).
#include <doctest/doctest.h>

#include <cmath>

#include "engine/contact/compliant_contact.h"
#include "engine/contact/plus_examples.h"
#include "engine/scene/scene_loader.h"
#include "engine/world.h"

using namespace cs;

namespace {

WorldSettings impactSettings(Real E, Real c) {
    WorldSettings w;
    w.gravity = Vec3{0, 0, 0};
    w.compliant.stiffness = E;
    w.compliant.dissipation = c;
    w.compliant.maxSubsteps = 1000000;
    return w;
}

// A single ball straight down onto the ground plane z = 0 through the whole collision.
struct Drop {
    Real vOut = 0, maxPenetration = 0, contactTime = 0;
    Vec3 impulse{0, 0, 0};
};
Drop dropBall(Real E, Real c, Real v, Real mu, Vec3 lateral = {0, 0, 0}) {
    PlusExample ex = cradleExample(1, 0, 1);   // one 1 kg ball of radius 0.25 m
    ex.state.pos[0] = Vec3{0, 0, Real(0.25)};
    ex.state.linVel[0] = lateral + Vec3{0, 0, -v};
    CompliantContact k;
    k.bodyA = 0;
    k.radiusA = Real(0.25);
    k.curvature = Real(0.25);
    k.mu = mu;
    std::vector<CompliantContact> contacts{k};
    std::vector<char> moving{1};
    std::vector<CompliantSample> s;
    CompliantStats st;
    integrateCompliant(ex.model, ex.state, moving, contacts, impactSettings(E, c), Real(0.01), &st, &s);
    Drop d;
    d.vOut = ex.state.linVel[0].z;
    d.maxPenetration = st.maxPenetration;
    d.impulse = s.back().impulse[0];
    Real first = -1, last = -1;
    for (const CompliantSample& x : s)
        if (x.penetration[0] > 0) {
            if (first < 0) first = x.time;
            last = x.time;
        }
    d.contactTime = last - first;
    return d;
}

bool loadWorld(const char* scene, ContactModelType type, World& world) {
    Model m;
    WorldSettings s;
    SceneInfo info;
    std::string err;
    if (!loadScene(scene, m, s, info, &err)) return false;
    s.solver.contactModel = type;
    world = World(m, s);
    return true;
}

}  // namespace

TEST_CASE("Compliant: Hertz impact without dissipation matches the closed form") {
    // Energy balance 1/2 m v^2 = 2/5 k z^{5/2} with k = 4/3 sqrt(R) E (eq. 4.1):
    // z_max = (5 m v^2 / (4 k))^{2/5}; the ball leaves at the speed it came (no dissipation).
    const Real E = Real(1e9), R = Real(0.25), m = 1, v = 2;
    Drop d = dropBall(E, 0, v, 0);
    const Real k = Real(4.0 / 3.0) * std::sqrt(R) * E;
    const Real zMax = std::pow(5 * m * v * v / (4 * k), Real(0.4));
    CHECK(d.maxPenetration == doctest::Approx(zMax).epsilon(0.01));
    CHECK(d.vOut == doctest::Approx(v).epsilon(1e-3));
    CHECK(d.impulse.z == doctest::Approx(2 * m * v).epsilon(1e-3));
    // Hertz contact time 2.94 z_max / v (Johnson, Contact Mechanics, eq. 11.24).
    CHECK(d.contactTime == doctest::Approx(Real(2.94) * zMax / v).epsilon(0.03));
}

TEST_CASE("Compliant: Hunt-Crossley dissipation (eq. 4.2) removes energy, more at higher speed") {
    const Real E = Real(1e9), c = Real(0.2);
    Drop slow = dropBall(E, c, 1, 0), fast = dropBall(E, c, 4, 0);
    Real eSlow = slow.vOut / 1, eFast = fast.vOut / 4;
    CHECK(eSlow < 1);
    CHECK(eFast < eSlow);   // COR falls with impact speed (e ~ 1 - alpha v)
    CHECK(eFast > 0);
}

TEST_CASE("Compliant: the friction force stays in the cone; fast slip keeps sliding") {
    const Real mu = Real(0.3);
    Drop d = dropBall(Real(1e9), Real(0.1), 2, mu, Vec3{6, 0, 0});   // slip falls by 3.5 mu pi_n < 6
    CHECK(std::hypot(d.impulse.x, d.impulse.y) <= mu * d.impulse.z * (1 + 1e-6));
    // Sliding throughout (the slip never reaches the Stribeck band): |pi_t| = mu pi_n.
    CHECK(std::fabs(d.impulse.x) == doctest::Approx(mu * d.impulse.z).epsilon(0.02));
}

TEST_CASE("Impact models in the world: Newton's cradle scene with PLUS and with the compliant model") {
    for (ContactModelType type : {ContactModelType::PLUS, ContactModelType::Compliant}) {
        World w;
        REQUIRE(loadWorld("newtons_cradle", type, w));
        const Real e0 = w.kineticEnergy();
        for (int i = 0; i < 40; ++i) w.step();   // ball_0 reaches the row at about t = 0.05 s
        CAPTURE(int(type));
        const int last = w.findBody("ball_4"), first = w.findBody("ball_0");
        Real p = 0;
        for (int b = 0; b < w.model().bodyCount(); ++b) p += w.model().mass[b] * w.state().linVel[b].x;
        CHECK(p == doctest::Approx(-2).epsilon(1e-6));                  // momentum
        CHECK(w.kineticEnergy() == doctest::Approx(e0).epsilon(2e-3));   // COR 1, no dissipation
        const Real tol = type == ContactModelType::PLUS ? Real(1e-6) : Real(0.3);   // Hertz chains disperse a little
        CHECK(w.state().linVel[last].x == doctest::Approx(-2).epsilon(tol / 2));
        CHECK(std::fabs(w.state().linVel[first].x) < tol);
    }
}

TEST_CASE("Impact models in the world: the flat brick lands symmetrically (PLUS)") {
    World w;
    REQUIRE(loadWorld("brick_flat_impact", ContactModelType::PLUS, w));
    const int b = w.findBody("brick");
    for (int i = 0; i < 3; ++i) w.step();
    // The impact happened (the brick goes up) and kept the plane of motion y = 0: no lateral
    // velocity, no roll, no yaw.
    CHECK(w.state().linVel[b].z > 0);
    CHECK(std::fabs(w.state().linVel[b].y) < 1e-6);
    CHECK(std::fabs(w.state().angVel[b].x) < 1e-6);
    CHECK(std::fabs(w.state().angVel[b].z) < 1e-6);
    // Persistent contact afterwards: a box resting on the ground never triggers impacts.
    World r;
    REQUIRE(loadWorld("box_on_plane", ContactModelType::PLUS, r));
    for (int i = 0; i < 240; ++i) r.step();
    CHECK(r.kineticEnergy() < 1e-6);
}

namespace {

// Mechanical energy at the start of the world's last step: kinetic + gravitational + the Hertz
// springs' elastic energy over that step's contacts (eq. 4.1 integrated), at `before`.
Real mechanicalEnergy(const World& w, const State& before) {
    std::vector<CompliantContact> cc;
    makeCompliantContacts(w.model(), before, w.potentialContacts(), w.settings, cc);
    Real e = 0;
    for (const CompliantContact& c : cc) e += compliantElasticEnergy(before, c, w.settings.compliant);
    for (int b = 0; b < w.model().bodyCount(); ++b) {
        if (w.model().isStatic(b)) continue;
        const Vec3 om = rotateInv(before.rot[b], before.angVel[b]);
        e += Real(0.5) * w.model().mass[b] * lengthSq(before.linVel[b]) + Real(0.5) * dot(om, w.model().inertiaLocal[b] * om);
        e -= w.model().mass[b] * dot(w.settings.gravity, before.pos[b]);
    }
    return e;
}

struct RestRun {
    Real first = 0, last = 0, lowest = 0, worstRise = 0, drift = 0, tilt = 0;
};

// Steps the world `steps` times and follows its mechanical energy from step to step, the
// bodies' horizontal drift and their tilt.
RestRun runResting(World& w, int steps) {
    RestRun r;
    const State start = w.state();
    Real prev = 0;
    for (int i = 0; i < steps; ++i) {
        const State before = w.state();
        w.step();
        REQUIRE_FALSE(w.lastStepFailed());
        const Real e = mechanicalEnergy(w, before);
        if (i == 0) r.first = r.lowest = e;
        else r.worstRise = std::max(r.worstRise, e - prev);
        r.lowest = std::min(r.lowest, e);
        prev = r.last = e;
    }
    for (int b = 0; b < w.model().bodyCount(); ++b) {
        if (w.model().isStatic(b)) continue;
        const Vec3 d = w.state().pos[b] - start.pos[b];
        r.drift = std::max(r.drift, std::hypot(d.x, d.y));
        const Quat q = w.state().rot[b];
        r.tilt = std::max(r.tilt, Real(2) * std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z));   // rotation angle, rad
    }
    return r;
}

}  // namespace

TEST_CASE("Compliant in the world: resting contact never gains energy and comes to rest in place") {
    // The compliant model integrates its bodies through the step; moving them with the end
    // velocities instead (x + h v_end) is semi-implicit Euler on the contact springs, unstable
    // above h w = 2: that coupling made the stack below gain up to 1.6 J per step (and the
    // pyramid collapse).
    SUBCASE("box_on_plane: 1000 kg cube dropped 0.1 m, 5 s") {
        World w;
        REQUIRE(loadWorld("box_on_plane", ContactModelType::Compliant, w));
        const RestRun r = runResting(w, 600);
        CHECK(r.worstRise <= Real(1e-5) * r.first);
        // The least energy the box can have: at rest on its four corners, each carrying m g / 4
        // at the Hertz depth z = (m g / (4 k))^(2/3), k = 4/3 sqrt(R) E (eq. 4.1).
        const int b = w.findBody("box");
        const Real m = w.model().mass[b], g = -w.settings.gravity.z, R = w.settings.compliant.radius;
        const Real k = Real(4.0 / 3.0) * std::sqrt(R) * w.settings.compliant.stiffness;
        const Real z = std::pow(m * g / (4 * k), Real(2.0 / 3.0));
        const Real eMin = m * g * (Real(0.5) - z) + 4 * Real(0.4) * k * z * z * std::sqrt(z);
        CHECK(r.lowest >= eMin - Real(1e-6) * r.first);
        CHECK(r.last - eMin <= Real(0.01) * (r.first - eMin));   // 99 % of the drop dissipated
        CHECK(r.drift < Real(1e-6));
        CHECK(r.tilt < Real(1e-6));
    }
    SUBCASE("a stack of three 125 kg cubes, 5 s") {
        const char* scene = R"({"format": 1, "name": "stack3", "bodies": [
            {"generator": "ground", "material": {"friction": 0.5}},
            {"generator": "stack", "name": "box", "count": 3, "half_extents": [0.25, 0.25, 0.25],
             "density": 1000, "material": {"friction": 0.5}}]})";
        Model model;
        WorldSettings settings;
        SceneInfo info;
        std::string err;
        REQUIRE(loadSceneFromText(scene, "stack3", ".", model, settings, info, &err));
        settings.solver.contactModel = ContactModelType::Compliant;
        World w(model, settings);
        const Real top = w.state().pos[w.model().bodyCount() - 1].z;
        const RestRun r = runResting(w, 600);
        CHECK(r.worstRise <= Real(1e-5) * r.first);
        CHECK(r.last < r.first);
        CHECK(r.drift < Real(1e-4));
        CHECK(r.tilt < Real(1e-4));
        CHECK(std::fabs(w.state().pos[w.model().bodyCount() - 1].z - top) < Real(0.01));   // it stands
    }
}
