// NCP functions for contact and friction: [NSN] Macklin et al. 2019, sections 4.1-4.3 and
// Appendix A.
//
// An NCP function phi(a, b) is zero exactly when 0 <= a  _|_  b >= 0 (eq. 17). The contact row
// uses a = C_n(q) (or its velocity form) and b = r lambda_n, r > 0 being the complementarity
// preconditioner scale of section 7 (units of a per unit of lambda, here 1/kg): with b = r lambda
// the derivative with respect to lambda is r * dB (eqs. 95 and 98).
//
// Friction (section 4.3): the two tangent rows of a contact, linearized by linearizeFriction
// from the same NCP function applied to eq. 32. See there for why the secant compliance W of
// eqs. 35-37 is not used.
//
// Per-element CS_HD functions only: the CPU and CUDA backends call the same code.
#pragma once

#include "engine/core/math.h"

namespace cs {

struct NcpValue {
    Real phi;  // phi(a, b)
    Real dA;   // d phi / d a (an element of the generalized gradient at kinks)
    Real dB;   // d phi / d b
};

// Minimum map, eqs. 18-22: phi = min(a, b). On a tie a <= b the 'a' branch is taken (the
// contact is active, eq. 21: d phi / d q = grad C_n, eq. 22: d phi / d lambda = 0).
CS_HD NcpValue ncpMinimumMap(Real a, Real b) {
    if (a <= b) return NcpValue{a, Real(1), Real(0)};
    return NcpValue{b, Real(0), Real(1)};
}

// Fischer-Burmeister, eqs. 23-27: phi = a + b - sqrt(a^2 + b^2),
//     dA = 1 - a / sqrt(a^2 + b^2)   (eq. 24),   dB = 1 - b / sqrt(a^2 + b^2)   (eq. 25),
// and at the kink (0, 0) the paper's choice dA = 0, dB = 1 (eqs. 26-27).
// For a + b > 0 the difference a + b - sqrt(a^2 + b^2) cancels badly when one argument
// dominates (a = 1e8, b = 1 gives 0 instead of ~1); the equivalent rationalized form
//     phi = 2 a b / (a + b + sqrt(a^2 + b^2))
// (multiply and divide by a + b + sqrt: (a+b)^2 - (a^2+b^2) = 2ab) has no cancellation there.
// For a + b <= 0 the direct form only adds terms of one sign.
CS_HD NcpValue ncpFischerBurmeister(Real a, Real b) {
    Real norm = std::sqrt(a * a + b * b);
    if (norm == Real(0)) return NcpValue{Real(0), Real(0), Real(1)};
    Real sum = a + b;
    Real phi = sum > Real(0) ? Real(2) * a * b / (sum + norm) : sum - norm;
    return NcpValue{phi, Real(1) - a / norm, Real(1) - b / norm};
}

// Friction rows of one contact: [NSN] eqs. 31-32 (smooth isotropic Coulomb friction), linearized
// for the Newton step with one compliance C shared by the contact's two tangent rows t1, t2:
//     D^T du + C dlambda_f = -h.
//
// Why not the secant compliance W of eqs. 35-37 (Appendix A.2, eqs. 103-105). That row,
// phi_f = D^T u + W lambda_f with W = |D^T u|^{n+1} / |lambda_f|^{n+1} held constant (eq. 37),
// models a slipping contact as a spring that pulls lambda_f towards ZERO in proportion to its
// slip: the step gives lambda_f = -D^T u / W. A box at rest on a ramp just past tan(theta) = mu
// has four contacts that share one tangential velocity. Its sticking iterate loads them
// unequally, so one pair lies outside its cone (W > 0, second case of eq. 105) while the other
// lies inside with zero slip (W = 0: the rigid row D^T u = 0). The linear solve then holds the
// body's slip at zero through the W = 0 rows and drives the springs' lambda_f to zero: all the
// tangential impulse moves to the sticking pair, which is now outside its cone while the first
// pair is inside. The Newton iterates cycle with period two and never have every contact
// slipping at once, so the box never slides: measured, boxes held up to tan(theta) = 1.19 mu at
// mu = 0.1, 1.12 mu at mu = 0.5 and 1.06 mu at mu = 0.8, the Newton merit stuck near 0.22 m/s
// (tests/test_friction.cpp sweeps it).
//
// What is done instead. Let y = lambda_f - D^T u / r, the proximal point of the augmented
// Lagrangian form of Alart and Curnier 1991 (cited in [NSN] section 2), and d = y / |y|.
// Coulomb's law (eqs. 13-16) holds exactly when
//   radial:        psi(s, r (mu lambda_n - lambda_d)) = 0,  s = -d . D^T u,  lambda_d = d . lambda_f
//                  (eq. 32 along d), and
//   perpendicular: the parts of D^T u and of lambda_f across d vanish (y is along d, so these two
//                  parts differ by the factor r and vanish together).
// The radial equation is a scalar NCP like the normal row's and is linearized the same way
// (constraint_rows.h), with d and lambda_n held over the iteration ([NSN] section 6 holds
// lambda_n in W alike):
//     dA ds - dB r dlambda_d = -psi   <=>   d . D^T du + C dlambda_d = psi / dA,   C = r dB / dA.
// The perpendicular part takes the same C (one C per contact keeps the compliance diagonal),
// with h_perp = (D^T u)_perp + C lambda_perp, which is zero at the solution for any C. Sliding
// (minimum map, dA = 0) now pins lambda_f at mu lambda_n d rather than pulling it to zero, and
// sticking (dB = 0) is the rigid row D^T u = 0 as with W = 0. The solution is the same as the
// paper's (both are Coulomb's law); only the Newton step differs, and the matrix stays symmetric.
struct FrictionLinearization {
    Real compliance;    // C of both tangent rows (1/kg)
    Real residual[2];   // h of rows t1, t2 (m/s)
    Real merit[2];      // the Coulomb residual -psi d + (D^T u)_perp on t1, t2 (m/s)
};

// u1, u2: D^T u on t1, t2 (m/s); l1, l2: lambda_f (N s); muLambdaN > 0 (the caller applies eq. 106
// otherwise); r > 0 (1/kg); ncp: 0 Fischer-Burmeister, 1 minimum map; minSlope: floor on dA, as
// for the normal rows (a zero dA, sliding under the minimum map, gives C = r / minSlope).
//
// slipWeight w >= 1 (SolverSettings::frictionSlipWeight): d from y = lambda_f - w D^T u / r, the
// proximal point with r / w in place of r. Any positive parameter gives the same solution (at a
// sliding solution lambda_f and -D^T u both lie along d; at a sticking one D^T u = 0), so w changes
// the iteration only. Why it matters: the linearization holds d, and a sliding row's compliance C
// (large) frees its perpendicular part, so the slip across d is removed only by d turning between
// iterations, by the angle |(D^T u)_perp| / (r |y|). With lambda_f on the cone that angle is tiny:
// fem_ball_squeeze's worst contact (node 102 on the ground) slid at 5.7 mm/s, 2 degrees off its
// friction impulse, and d turned 3e-4 rad per iteration, so its merit sat at 2e-4 m/s for the last
// ten of the cap's 20 iterations, at t = 1 with no row changing side. w = 1: as before, bit for bit.
CS_HD FrictionLinearization linearizeFriction(int ncp, Real u1, Real u2, Real l1, Real l2, Real muLambdaN, Real r,
                                              Real minSlope, Real slipWeight = Real(1)) {
    Real y1 = l1 - slipWeight * u1 / r, y2 = l2 - slipWeight * u2 / r;
    Real ny = std::sqrt(y1 * y1 + y2 * y2);
    Real d1 = 1, d2 = 0;   // y = 0: lambda_f = D^T u / r, both zero in practice; any d is sticking
    if (ny > 0) {
        d1 = y1 / ny;
        d2 = y2 / ny;
    }
    Real ud = u1 * d1 + u2 * d2, ld = l1 * d1 + l2 * d2;
    Real s = -ud, gap = r * (muLambdaN - ld);
    NcpValue f = ncp == 0 ? ncpFischerBurmeister(s, gap) : ncpMinimumMap(s, gap);
    Real dA = f.dA > minSlope ? f.dA : minSlope;
    Real c = f.dB * r / dA;
    Real radial = -f.phi / dA;   // h along d
    Real up1 = u1 - ud * d1, up2 = u2 - ud * d2;
    FrictionLinearization out;
    out.compliance = c;
    out.residual[0] = radial * d1 + up1 + c * (l1 - ld * d1);
    out.residual[1] = radial * d2 + up2 + c * (l2 - ld * d2);
    out.merit[0] = -f.phi * d1 + up1;
    out.merit[1] = -f.phi * d2 + up2;
    return out;
}

}  // namespace cs
