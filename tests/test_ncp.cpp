// NCP functions and the frictional compliance W of engine/solver/ncp.h ([NSN] sections 4.1-4.3,
// Appendix A), checked against their definitions: complementarity cases, central finite
// differences, and the fixed-point relations of eqs. 33-35 / 99-102.
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

TEST_CASE("ncp: friction compliance makes phi_f = D^T u + W lambda_f vanish when sliding") {
    // Sliding solution of eqs. 31-32: |lambda_f| = mu lambda_n and lambda_f opposite to the slip
    // D^T u. Then psi_f = 0 and W must equal |D^T u| / |lambda_f| so that eq. 36 gives zero.
    std::mt19937 rng(5);
    for (int k = 0; k < 200; ++k) {
        Real ux = uniform(rng, -2, 2), uy = uniform(rng, -2, 2);
        Real slip = std::sqrt(ux * ux + uy * uy);
        if (slip < Real(1e-3)) continue;
        Real muLambdaN = uniform(rng, Real(0.01), 20);
        Real r = uniform(rng, Real(0.05), 10);
        Real fx = -muLambdaN * ux / slip, fy = -muLambdaN * uy / slip;  // on the cone
        for (int which = 0; which < 2; ++which) {
            Real w = which == 0 ? frictionComplianceFB(slip, muLambdaN, muLambdaN, r)
                                : frictionComplianceMin(slip, muLambdaN, muLambdaN, r);
            CAPTURE(which);
            Real phiX = ux + w * fx, phiY = uy + w * fy;  // eq. 36
            CHECK(std::abs(phiX) <= Real(1e-5) * slip);
            CHECK(std::abs(phiY) <= Real(1e-5) * slip);
            CHECK(w == doctest::Approx(double(slip / muLambdaN)).epsilon(1e-5));
        }
    }
}

TEST_CASE("ncp: friction compliance is zero when sticking") {
    // Sticking: D^T u = 0 strictly inside the cone (|lambda_f| < mu lambda_n). Both NCP
    // functions give psi_f = 0 and W = 0, so eq. 36 reads phi_f = D^T u = 0.
    std::mt19937 rng(7);
    for (int k = 0; k < 200; ++k) {
        Real muLambdaN = uniform(rng, Real(0.01), 20);
        Real frictionMag = uniform(rng, 0, Real(0.999)) * muLambdaN;
        Real r = uniform(rng, Real(0.05), 10);
        CHECK(frictionComplianceFB(0, frictionMag, muLambdaN, r) == 0);
        CHECK(frictionComplianceMin(0, frictionMag, muLambdaN, r) == 0);
        // The minimum map keeps W = 0 for any slip up to r (mu lambda_n - |lambda_f|) (eq. 105).
        Real slack = r * (muLambdaN - frictionMag);
        CHECK(frictionComplianceMin(Real(0.99) * slack, frictionMag, muLambdaN, r) == 0);
        CHECK(frictionComplianceMin(Real(1.01) * slack + Real(1e-6), frictionMag, muLambdaN, r) > 0);
    }
}

TEST_CASE("ncp: friction compliance equals the fixed-point ratio of eqs. 33-35") {
    // W = |D^T u|^{n+1} / |lambda_f|^{n+1} with (Appendix A.2, r-scaled eqs. 33-34)
    //     |D^T u|^{n+1} = |D^T u| - psi,   |lambda_f|^{n+1} = |lambda_f| + psi / r,
    //     psi = phi(|D^T u|, r (mu lambda_n - |lambda_f|))        (eq. 32)
    // computed here from the NCP functions themselves, independently of eqs. 104-105.
    std::mt19937 rng(11);
    int checkedFB = 0, checkedMin = 0;
    for (int k = 0; k < 2000; ++k) {
        Real slip = uniform(rng, 0, 3);
        Real muLambdaN = uniform(rng, Real(0.05), 10);
        Real frictionMag = uniform(rng, 0, Real(1.8)) * muLambdaN;  // inside and outside the cone
        Real r = uniform(rng, Real(0.1), 5);
        Real g = r * (muLambdaN - frictionMag);
        {
            Real psi = ncpFischerBurmeister(slip, g).phi;
            Real slipNext = slip - psi, forceNext = frictionMag + psi / r;
            Real w = frictionComplianceFB(slip, frictionMag, muLambdaN, r);
            CHECK(w >= 0);
            if (forceNext > Real(1e-3) * muLambdaN && slipNext > Real(1e-6)) {
                CHECK(w == doctest::Approx(double(slipNext / forceNext)).epsilon(kFloat ? 1e-3 : 1e-8));
                ++checkedFB;
            }
        }
        {
            Real psi = ncpMinimumMap(slip, g).phi;
            Real slipNext = slip - psi, forceNext = frictionMag + psi / r;
            Real w = frictionComplianceMin(slip, frictionMag, muLambdaN, r);
            CHECK(w >= 0);
            if (forceNext > 0) {
                CHECK(w == doctest::Approx(double(slipNext / forceNext)).epsilon(kFloat ? 1e-4 : 1e-10).scale(1e-12));
                ++checkedMin;
            }
        }
    }
    CHECK(checkedFB > 1000);
    CHECK(checkedMin > 1000);
}

TEST_CASE("ncp: friction compliance guards stay finite") {
    const Real r = 2;
    const Real cap = kFrictionComplianceCap * r;
    // No slip, no force: the 0/0 point of eq. 104; the limit into the cone is 0.
    CHECK(frictionComplianceFB(0, 0, 1, r) == 0);
    CHECK(frictionComplianceMin(0, 0, 1, r) == 0);
    // No normal force (mu lambda_n = 0) and slipping: the division by mu lambda_n (eq. 105) and
    // by |lambda_f|^{n+1} = 0 (eq. 104) give the cap. (The caller uses eq. 106 there instead.)
    CHECK(frictionComplianceFB(1, 0, 0, r) == cap);
    CHECK(frictionComplianceMin(1, 0, 0, r) == cap);
    CHECK(frictionComplianceMin(1, 0, Real(1e-30), r) == cap);
    // Far outside the cone, |lambda_f| >= 2 mu lambda_n: eq. 102 turns <= 0, FB gives the cap.
    CHECK(frictionComplianceFB(0, 3, 1, r) == cap);
    CHECK(frictionComplianceFB(Real(0.1), 5, 1, r) == cap);
    // Everything finite and non-negative over a wide grid, including extreme magnitudes.
    const Real huge = kFloat ? Real(1e15) : Real(1e20);
    const Real values[] = {0, Real(1e-20), Real(1e-6), Real(0.5), 1, 3, Real(1e6), huge};
    for (Real s : values)
        for (Real f : values)
            for (Real m : values) {
                Real wFB = frictionComplianceFB(s, f, m, r);
                Real wMin = frictionComplianceMin(s, f, m, r);
                CHECK(std::isfinite(wFB));
                CHECK(std::isfinite(wMin));
                CHECK(wFB >= 0);
                CHECK(wMin >= 0);
                CHECK(wFB <= cap);
                CHECK(wMin <= cap);
            }
}
