// NCP functions for contact and friction: [NSN] Macklin et al. 2019, sections 4.1-4.3 and
// Appendix A.
//
// An NCP function phi(a, b) is zero exactly when 0 <= a  _|_  b >= 0 (eq. 17). The contact row
// uses a = C_n(q) (or its velocity form) and b = r lambda_n, r > 0 being the complementarity
// preconditioner scale of section 7 (units of a per unit of lambda, here 1/kg): with b = r lambda
// the derivative with respect to lambda is r * dB (eqs. 95 and 98).
//
// Friction (section 4.3) is not an NCP row of its own: eq. 31 is turned into the linear row
//     phi_f = D^T u + W lambda_f                                               (eq. 36)
// with a compliance W that the fixed-point iteration of eqs. 33-34 recomputes every Newton
// iteration; W comes from the same NCP function applied to the pair
// (|D^T u|, r (mu lambda_n - |lambda_f|)) (eq. 32 with the r-factor of Appendix A.2).
//
// Symbols: slip = |D^T u| (tangential speed), frictionMag = |lambda_f|, muLambdaN = mu lambda_n
// (the cone radius), r > 0 the complementarity preconditioner scale, g = mu lambda_n - |lambda_f|
// (distance to the cone surface, negative outside the cone).
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

// The friction compliance is capped at kFrictionComplianceCap * r. The paper's eqs. 104-105
// divide by |lambda_f|^{n+1} (eq. 103) and by mu lambda_n, both of which reach zero or go
// negative (far outside the cone, |lambda_f| >= 2 mu lambda_n, eq. 102 turns negative). There
// the true W is infinite: the row wants lambda_f pulled back to the cone at any cost. A cap of
// 1e8 r is "infinitely" stiff against the r-scaled normal row yet keeps the Newton matrix
// finite and positive semi-definite (a negative W would make it indefinite).
constexpr Real kFrictionComplianceCap = Real(1e8);

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

// Frictional compliance for Fischer-Burmeister, Appendix A.2 eqs. 99-104.
// The fixed-point iteration of eqs. 99-102 is, with s = slip, g = mu lambda_n - |lambda_f|,
//     s^{n+1}          = sqrt(s^2 + r^2 g^2) - r g                            (eq. 100)
//     |lambda_f|^{n+1} = r^-1 (s + r mu lambda_n - sqrt(s^2 + r^2 g^2))        (eq. 102)
//     W_FB = s^{n+1} / |lambda_f|^{n+1}
//          = r (sqrt(s^2 + r^2 g^2) - r g) / (s + r mu lambda_n - sqrt(s^2 + r^2 g^2)) (eq. 104)
// The printed eqs. 102 and 104 carry |D^T u|^2 where eq. 101 gives |D^T u| (expand
// |lambda_f| + r^-1 psi_FB); the squared form is not even dimensionally consistent, so the
// derived form is implemented.
// Guards: s^{n+1} = 0 (no slip and inside the cone: sticking) gives W = 0, also at the 0/0
// point s = 0, lambda_f = 0 (the limit along every path into the cone is 0). A denominator
// |lambda_f|^{n+1} <= 0 (far outside the cone, or mu lambda_n <= 0) returns the cap.
// The caller must not use W when mu lambda_n <= 0: eq. 106 then replaces the friction row by
// d phi_f / d lambda_f = 1, i.e. the row lambda_f = 0 (no normal force, no friction).
CS_HD Real frictionComplianceFB(Real slip, Real frictionMag, Real muLambdaN, Real r) {
    Real rg = r * (muLambdaN - frictionMag);
    Real root = std::sqrt(slip * slip + rg * rg);
    // eq. 100; inside the cone (rg > 0) root - rg cancels for small slip, so use the
    // rationalized slip^2 / (root + rg) there.
    Real slipNext = rg > Real(0) ? slip * slip / (root + rg) : root - rg;
    Real cap = kFrictionComplianceCap * r;
    if (!(slipNext > Real(0))) return Real(0);         // sticking
    // r |lambda_f|^{n+1} = slip + r mu lambda_n - root = slip + r |lambda_f| - slipNext (eq. 102
    // with root = slipNext + rg); the second form is >= r |lambda_f| inside the cone.
    Real forceNext = slip + r * frictionMag - slipNext;
    // forceNext is a difference of terms of size ~slip + r (mu lambda_n + |lambda_f|): below a
    // relative 1e-12 of that it is rounding noise, and W = r slipNext / forceNext would be
    // meaningless, so the cap stands in for "infinite".
    Real scale = slip + r * (muLambdaN + frictionMag);
    if (!(forceNext > Real(1e-12) * scale)) return cap;
    Real w = r * slipNext / forceNext;                 // eq. 104
    return w < cap ? w : cap;
}

// Frictional compliance for the minimum map, eq. 105:
//     W_min = 0                                        if s <= r (mu lambda_n - |lambda_f|)
//           = (s - r (mu lambda_n - |lambda_f|)) / (mu lambda_n)   otherwise.
// (From eqs. 33-34 with psi = min(s, r g): sticking gives s^{n+1} = 0; sliding gives
// s^{n+1} = s - r g and |lambda_f|^{n+1} = mu lambda_n.)
// Guard: mu lambda_n too small to divide by returns the cap; as for FB, the caller should
// use eq. 106 (the row lambda_f = 0) when mu lambda_n <= 0.
CS_HD Real frictionComplianceMin(Real slip, Real frictionMag, Real muLambdaN, Real r) {
    Real g = muLambdaN - frictionMag;
    if (slip <= r * g) return Real(0);                 // sticking branch of eq. 105
    Real excess = slip - r * g;                        // > 0
    Real cap = kFrictionComplianceCap * r;
    // excess / muLambdaN > cap  <=>  excess > cap muLambdaN (no division by a tiny number).
    if (!(excess < cap * muLambdaN)) return cap;
    return excess / muLambdaN;                         // sliding branch of eq. 105
}

}  // namespace cs
