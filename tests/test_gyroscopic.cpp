// The gyroscopic term (issue 22, item 2; engine/solver/integrate.h) against the torque-free
// rigid body's invariants and its closed-form (Jacobi elliptic) solution.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "engine/model_builder.h"
#include "engine/world.h"

using namespace cs;

namespace {

// A free 0.1 x 0.2 x 0.4 m brick of 1 kg, no gravity. Principal moments (body axes x, y, z):
// I = m (b^2 + c^2) / 3 over half extents = 0.016667, 0.014167, 0.004167 kg m^2, so y is the
// intermediate axis.
struct Brick {
    World world;
    int body;
};

Brick makeBrick(Real dt, Vec3 angVelBody) {
    Model m;
    BodyDesc d;
    d.name = "brick";
    d.mass = 1;
    ShapeDesc s;
    s.polytope = makeBox({Real(0.05), Real(0.1), Real(0.2)});
    d.shapes.push_back(s);
    std::string err;
    int b = addBody(m, d, &err);
    REQUIRE_MESSAGE(b >= 0, err);
    WorldSettings ws;
    ws.dt = dt;
    ws.gravity = {0, 0, 0};
    Brick brick{World(m, ws), b};
    brick.world.state().angVel[b] = angVelBody;   // the body starts unrotated: body = world axes
    return brick;
}

// World-frame angular momentum R I R^T w and kinetic energy 1/2 w . L.
Vec3 momentum(const World& w, int b) {
    const Quat q = w.state().rot[b];
    return rotate(q, w.model().inertiaLocal[b] * rotateInv(q, w.state().angVel[b]));
}
Real energy(const World& w, int b) { return Real(0.5) * dot(w.state().angVel[b], momentum(w, b)); }

Vec3 principalMoments(const World& w, int b) {
    const Mat3& i = w.model().inertiaLocal[b];
    return {i.m[0][0], i.m[1][1], i.m[2][2]};
}

}  // namespace

TEST_CASE("gyroscopic: a free asymmetric top keeps |L|, L's direction and its energy") {
    // Torque-free: the world-frame angular momentum L is constant. Without the gyroscopic term w
    // stays constant in the world, and L = R I R^T w turns with the body (0.9 rad within 10 s).
    Brick t = makeBrick(Real(1.0 / 120), {1, 2, 3});
    World& w = t.world;
    const Vec3 l0 = momentum(w, t.body);
    const Real e0 = energy(w, t.body), seconds = 10;
    Real magnitude = 0, direction = 0, work = 0;
    for (int i = 0; i < int(std::lround(seconds / w.settings.dt)); ++i) {
        w.step();
        Vec3 l = momentum(w, t.body);
        magnitude = std::max(magnitude, std::fabs(length(l) / length(l0) - 1));
        direction = std::max(direction, length(cross(l, l0)) / (length(l) * length(l0)));   // sin of the angle
        work = std::max(work, std::fabs(energy(w, t.body) / e0 - 1));
    }
    MESSAGE("largest change over 10 s: |L| " << magnitude << ", direction " << direction << " rad, energy " << work);
    CHECK(magnitude / seconds < 1e-6);
    CHECK(direction / seconds < 1e-6);
    CHECK(work / seconds < 1e-6);
}

TEST_CASE("gyroscopic: the intermediate-axis (Dzhanibekov) flip comes at the closed-form period") {
    // Closed form (Landau and Lifshitz, Mechanics, 3rd ed., section 37, eqs. 37.10-37.12): with the
    // principal moments I1 < I2 < I3, energy E and |L|^2 = M^2 > 2 E I2, Euler's equations give
    //     w1 ~ cn(tau, k),  w2 ~ sn(tau, k),  w3 ~ dn(tau, k),
    //     tau = t omega_p,  omega_p^2 = (I3 - I2)(M^2 - 2 E I1) / (I1 I2 I3),
    //     k^2 = (I2 - I1)(2 E I3 - M^2) / ((I3 - I2)(M^2 - 2 E I1)),
    // and for M^2 < 2 E I2 the same with I1 and I3 exchanged. sn has period 4 K(k), K the complete
    // elliptic integral of the first kind: w2, the spin about the intermediate axis, changes
    // sign twice (the body flips over and back) every T = 4 K(k) / omega_p. Started at 5 rad/s
    // about the intermediate axis y with 0.1 and 0.05 rad/s about x and z: T = 6.998 s. (A start
    // on the separatrix M^2 = 2 E I2, e.g. 0.01 rad/s about both x and z for this brick, has
    // k = 1 and no finite period.)
    for (Real dt : {Real(1.0 / 120), Real(1.0 / 960)}) {
        const Vec3 w0{Real(0.1), 5, Real(0.05)};
        Brick t = makeBrick(dt, w0);
        World& w = t.world;
        const Vec3 inertia = principalMoments(w, t.body);   // x: I3, y: I2, z: I1
        Real i1 = inertia.z, i2 = inertia.y, i3 = inertia.x;
        REQUIRE(i1 < i2);
        REQUIRE(i2 < i3);
        const Vec3 l = cwiseMul(inertia, w0);
        const Real m2 = dot(l, l), e2 = dot(w0, l);   // M^2 and 2 E
        if (m2 < e2 * i2) std::swap(i1, i3);
        const Real omegaP = std::sqrt((i3 - i2) * (m2 - e2 * i1) / (i1 * i2 * i3));
        const Real k = std::sqrt((i2 - i1) * (e2 * i3 - m2) / ((i3 - i2) * (m2 - e2 * i1)));
        const Real period = 4 * std::comp_ellint_1(k) / omegaP;

        // Times at which w2 (body frame) crosses zero downwards, by linear interpolation.
        Real previous = w0.y, first = -1, last = -1;
        int crossings = 0;
        const int steps = int(std::lround(8 * period / dt));
        for (int i = 0; i < steps; ++i) {
            w.step();
            Real w2 = rotateInv(w.state().rot[t.body], w.state().angVel[t.body]).y;
            if (previous > 0 && w2 <= 0) {
                Real at = w.state().time - dt * (-w2) / (previous - w2);
                if (first < 0) first = at;
                last = at;
                ++crossings;
            }
            previous = w2;
        }
        REQUIRE(crossings >= 5);
        Real measured = (last - first) / (crossings - 1);
        MESSAGE("dt " << dt << ": flip period " << measured << " s, closed form " << period << " s");
        CHECK(measured == doctest::Approx(double(period)).epsilon(dt > Real(0.005) ? 0.02 : 0.002));
    }
}

TEST_CASE("gyroscopic: a brick spun at 1000 rad/s about a skew axis stays bounded at dt = 1/60 s") {
    // h |w| = 17 rad per step: the explicit term would diverge; the implicit step keeps |L|.
    Brick t = makeBrick(Real(1.0 / 60), {300, 500, 800});
    World& w = t.world;
    const Vec3 l0 = momentum(w, t.body);
    for (int i = 0; i < 600; ++i) w.step();
    CHECK(w.failedSteps() == 0);
    CHECK(length(momentum(w, t.body)) == doctest::Approx(double(length(l0))).epsilon(1e-9));
    CHECK(length(w.state().angVel[t.body]) < 2000);
}
