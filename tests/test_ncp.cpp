// NCP functions and the friction rows of engine/solver/ncp.h ([NSN] sections 4.1-4.3,
// Appendix A), checked against their definitions: complementarity cases, central finite
// differences, and Coulomb's law (eqs. 13-16) for the friction rows.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "engine/solver/ncp.h"

using namespace cs;

namespace {

constexpr bool kFloat = sizeof(Real) == 4;

Real uniform(std::mt19937& rng, Real lo, Real hi) {
    return lo + (hi - lo) * Real(std::uniform_real_distribution<double>(0, 1)(rng));
}

// The defining property of an NCP function (eq. 17): phi(a, b) = 0  <=>  a >= 0, b >= 0, ab = 0.
template <class F>
void checkComplementarity(F phi) {
    const Real pos[] = {Real(1e-3), Real(0.5), Real(2), Real(1e3)};
    for (Real p : pos) {
        CHECK(phi(p, Real(0)).phi == 0);   // a > 0, b = 0: separated, no force
        CHECK(phi(Real(0), p).phi == 0);   // a = 0, b > 0: touching, pushing
        CHECK(phi(p, p).phi > 0);          // both positive: not complementary
        CHECK(phi(p, Real(0.3) * p).phi > 0);
        CHECK(phi(-p, Real(0)).phi < 0);   // penetration (a < 0)
        CHECK(phi(Real(0), -p).phi < 0);   // pulling force (b < 0)
        CHECK(phi(-p, p).phi < 0);
        CHECK(phi(p, -p).phi < 0);
        CHECK(phi(-p, -p).phi < 0);
    }
    CHECK(phi(Real(0), Real(0)).phi == 0);
}

}  // namespace

TEST_CASE("ncp: minimum map and Fischer-Burmeister vanish exactly on complementary pairs") {
    checkComplementarity([](Real a, Real b) { return ncpMinimumMap(a, b); });
    checkComplementarity([](Real a, Real b) { return ncpFischerBurmeister(a, b); });
    // Closed forms away from the complementary set.
    CHECK(ncpMinimumMap(3, -2).phi == -2);
    CHECK(ncpFischerBurmeister(3, 4).phi == doctest::Approx(3 + 4 - 5));
    CHECK(ncpFischerBurmeister(-3, -4).phi == doctest::Approx(-3 - 4 - 5));
    CHECK(ncpFischerBurmeister(3, -4).phi == doctest::Approx(3 - 4 - 5));
}

TEST_CASE("ncp: kink conventions") {
    // FB at (0, 0): eqs. 26-27, alpha = 0, beta = 1.
    NcpValue fb = ncpFischerBurmeister(0, 0);
    CHECK(fb.phi == 0);
    CHECK(fb.dA == 0);
    CHECK(fb.dB == 1);
    // Minimum map on a tie takes the 'a' branch (eqs. 21-22 with C_n <= lambda_n).
    for (Real t : {Real(-1), Real(0), Real(2.5)}) {
        NcpValue mm = ncpMinimumMap(t, t);
        CHECK(mm.phi == t);
        CHECK(mm.dA == 1);
        CHECK(mm.dB == 0);
    }
    CHECK(ncpMinimumMap(1, 2).dA == 1);
    CHECK(ncpMinimumMap(2, 1).dB == 1);
}

TEST_CASE("ncp: derivatives match central finite differences away from kinks") {
    std::mt19937 rng(3);
    const Real h = kFloat ? Real(1e-2) : Real(1e-6);
    const Real tol = kFloat ? Real(2e-2) : Real(1e-7);
    for (int k = 0; k < 400; ++k) {
        Real a = uniform(rng, -5, 5), b = uniform(rng, -5, 5);
        // Fischer-Burmeister is smooth except at the origin.
        if (std::sqrt(a * a + b * b) > Real(0.1)) {
            NcpValue v = ncpFischerBurmeister(a, b);
            Real dA = (ncpFischerBurmeister(a + h, b).phi - ncpFischerBurmeister(a - h, b).phi) / (2 * h);
            Real dB = (ncpFischerBurmeister(a, b + h).phi - ncpFischerBurmeister(a, b - h).phi) / (2 * h);
            CHECK(v.dA == doctest::Approx(double(dA)).epsilon(double(tol)).scale(1));
            CHECK(v.dB == doctest::Approx(double(dB)).epsilon(double(tol)).scale(1));
            // The generalized gradient of FB lies in the unit-disc-shifted set: dA, dB in [0, 2]
            // and (1 - dA)^2 + (1 - dB)^2 = 1.
            CHECK((1 - v.dA) * (1 - v.dA) + (1 - v.dB) * (1 - v.dB) == doctest::Approx(1.0));
        }
        // The minimum map is smooth except on the line a = b.
        if (std::abs(a - b) > 4 * h) {
            NcpValue v = ncpMinimumMap(a, b);
            Real dA = (ncpMinimumMap(a + h, b).phi - ncpMinimumMap(a - h, b).phi) / (2 * h);
            Real dB = (ncpMinimumMap(a, b + h).phi - ncpMinimumMap(a, b - h).phi) / (2 * h);
            CHECK(v.dA == doctest::Approx(double(dA)).epsilon(double(tol)).scale(1));
            CHECK(v.dB == doctest::Approx(double(dB)).epsilon(double(tol)).scale(1));
        }
    }
}

TEST_CASE("ncp: Fischer-Burmeister keeps its accuracy when one argument dominates") {
    // phi(a, b) = 2ab / (a + b + sqrt(a^2 + b^2)); for a = 1e8, b = 1 the naive
    // a + b - sqrt(a^2 + b^2) rounds to 0 in double.
    const double a = 1e8, b = 1;
    double exact = 2 * a * b / (a + b + std::sqrt(a * a + b * b));
    if (!kFloat) CHECK(double(ncpFischerBurmeister(Real(a), Real(b)).phi) == doctest::Approx(exact).epsilon(1e-12));
    CHECK(ncpFischerBurmeister(Real(1e3), Real(1e-3)).phi > 0);
}

namespace {

// Friction rows (ncp.h, linearizeFriction). A contact state: D^T u = (u1, u2), lambda_f = (l1, l2).
const Real kMinSlope = kFloat ? Real(1e-4) : Real(1e-8);   // constraint_rows.h's kMinNcpSlope

struct FrictionState {
    Real u1, u2, l1, l2, muLambdaN, r;
};

FrictionLinearization linearize(int ncp, const FrictionState& c) {
    return linearizeFriction(ncp, c.u1, c.u2, c.l1, c.l2, c.muLambdaN, c.r, kMinSlope);
}

// Random states that satisfy Coulomb's law ([NSN] eqs. 13-16): sticking (no slip, strictly inside
// the cone) or sliding (|lambda_f| = mu lambda_n, lambda_f opposite to the slip).
FrictionState coulombState(std::mt19937& rng, bool sliding) {
    FrictionState c;
    c.muLambdaN = uniform(rng, Real(0.01), 20);
    c.r = uniform(rng, Real(0.05), 10);
    Real angle = uniform(rng, 0, Real(6.283185307179586));
    Real dx = std::cos(angle), dy = std::sin(angle);
    Real mag = sliding ? c.muLambdaN : uniform(rng, 0, Real(0.99)) * c.muLambdaN;
    Real slip = sliding ? uniform(rng, Real(1e-3), 3) : 0;
    c.l1 = mag * dx;
    c.l2 = mag * dy;
    c.u1 = -slip * dx;
    c.u2 = -slip * dy;
    return c;
}

}  // namespace

TEST_CASE("ncp: the friction rows vanish exactly on Coulomb's law") {
    std::mt19937 rng(5);
    // The merit is a difference of O(scale) terms; the residual divides rounding by dA >= kMinSlope
    // where sliding makes dA = 0.
    const Real tol = kFloat ? Real(1e-4) : Real(1e-10), tolRow = kFloat ? Real(1e-2) : Real(1e-6);
    for (int k = 0; k < 400; ++k) {
        FrictionState c = coulombState(rng, k % 2 == 1);
        Real scale = std::abs(c.u1) + std::abs(c.u2) + c.r * c.muLambdaN;
        for (int ncp = 0; ncp < 2; ++ncp) {
            FrictionLinearization f = linearize(ncp, c);
            CAPTURE(ncp);
            CAPTURE(k);
            for (int j = 0; j < 2; ++j) {
                CHECK(std::abs(f.merit[j]) <= tol * scale);
                CHECK(std::abs(f.residual[j]) <= tolRow * scale);
            }
            CHECK(f.compliance >= 0);
        }
    }
}

TEST_CASE("ncp: the friction rows do not vanish off Coulomb's law") {
    // Each state breaks one condition of eqs. 13-16; the merit must see it.
    const Real muLambdaN = 2, r = Real(0.5);
    const FrictionState bad[] = {
        {0, 0, Real(2.2), 0, muLambdaN, r},          // no slip, outside the cone
        {Real(0.3), 0, Real(2), 0, muLambdaN, r},    // on the cone, slipping along the friction
        {Real(-0.3), 0, 1, 0, muLambdaN, r},         // slipping inside the cone
        {0, Real(0.3), Real(-2), 0, muLambdaN, r},   // slipping across the friction
        {Real(-0.3), 0, Real(2.5), 0, muLambdaN, r}, // sliding outside the cone
    };
    for (int ncp = 0; ncp < 2; ++ncp)
        for (const FrictionState& c : bad) {
            FrictionLinearization f = linearize(ncp, c);
            CAPTURE(ncp);
            CAPTURE(c.u1);
            CAPTURE(c.l1);
            CHECK(std::hypot(f.merit[0], f.merit[1]) > Real(1e-3));
        }
}

TEST_CASE("ncp: sticking is the rigid row D^T u = 0; sliding pins lambda_f to the cone") {
    std::mt19937 rng(7);
    for (int k = 0; k < 200; ++k) {
        FrictionState c = coulombState(rng, false);
        // A small slip inside the minimum map's sticking region, s <= r (mu lambda_n - |lambda_f|).
        c.u1 = Real(1e-3) * c.r * (c.muLambdaN - std::hypot(c.l1, c.l2));
        FrictionLinearization stick = linearize(1, c);
        CHECK(stick.compliance == 0);
        CHECK(stick.residual[0] == doctest::Approx(double(c.u1)).epsilon(1e-6).scale(1e-12));
        CHECK(std::abs(stick.residual[1]) <= Real(1e-6) * (std::abs(c.u1) + Real(1e-12)));
        // Sliding (fast slip against lambda_f, which is off the cone by 10% in magnitude and
        // 0.2 rad in direction): the minimum map's row has C = r / kMinSlope, and the step
        // dlambda = -h / C of that dominant compliance lands on the cone, along y = lambda - u / r.
        Real slip = uniform(rng, 1, 3), angle = uniform(rng, 0, 6);
        FrictionState s{-slip * std::cos(angle), -slip * std::sin(angle),
                        Real(1.1) * c.muLambdaN * std::cos(angle + Real(0.2)),
                        Real(1.1) * c.muLambdaN * std::sin(angle + Real(0.2)), c.muLambdaN, c.r};
        FrictionLinearization f = linearize(1, s);
        CHECK(f.compliance == doctest::Approx(double(s.r / kMinSlope)));
        Real y1 = s.l1 - s.u1 / s.r, y2 = s.l2 - s.u2 / s.r, ny = std::hypot(y1, y2);
        Real n1 = s.l1 - f.residual[0] / f.compliance, n2 = s.l2 - f.residual[1] / f.compliance;
        const double tol = kFloat ? 1e-3 : 1e-6;
        CHECK(n1 == doctest::Approx(double(s.muLambdaN * y1 / ny)).epsilon(tol).scale(s.muLambdaN));
        CHECK(n2 == doctest::Approx(double(s.muLambdaN * y2 / ny)).epsilon(tol).scale(s.muLambdaN));
    }
}
