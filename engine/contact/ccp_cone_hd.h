// The cone complementarity problem, one contact at a time, for both backends.
//
// [CCP] Tasora and Anitescu 2011, as restated by Negrut et al. Per contact i with impulse
// gamma_i = [gamma_n, gamma_u, gamma_w] (N s) and the composite velocity
//     d_i = [Phi_i / h + v_n, v_u, v_w]                                          (section 4)
// (m/s; Phi_i the gap at the step's start, v the end-of-step relative velocity), the relaxed
// contact law of eq. 5d is the cone complementarity condition of eq. 7:
//     K_i  contains  gamma_i   _|_   -d_i  in  K_i°,
//     K_i  = { [x, y, z] : mu_i x >= sqrt(y^2 + z^2) }      (the friction cone)
//     K_i° = { [a, b, c] : mu_i sqrt(b^2 + c^2) <= -a }     (its polar cone).
// -d_i in K_i° reads Phi_i / h + v_n >= mu_i |v_T|: where a contact pushes (gamma_n > 0) and
// slides, its end-of-step gap is Phi_i + h v_n = h mu_i |v_T| > 0. That is the spurious normal
// separation of sliding contacts section 3 describes (the "bowling ball" lift-off), drawn by the
// app per contact (ccpSeparation).
//
// Every function here is CS_HD: the CPU solvers (engine/solver/ccp_solvers.cpp) loop over them,
// and a device pipeline can launch the same code.
#pragma once

#include <cmath>

#include "engine/core/math.h"

namespace cs {

// Euclidean projection of gamma = [x, y, z] onto K (slope mu). Three cases: inside K (kept),
// inside the polar cone K° (to zero), otherwise onto K's boundary ray through the tangential
// direction: with t = |(y, z)|, the point ((x + mu t) / (1 + mu^2)) [1, mu (y, z) / t].
CS_HD Vec3 projectFrictionCone(Vec3 gamma, Real mu) {
    const Real t = std::sqrt(gamma.y * gamma.y + gamma.z * gamma.z);
    if (t <= mu * gamma.x) return gamma;
    if (mu * t <= -gamma.x) return Vec3{0, 0, 0};
    const Real n = (gamma.x + mu * t) / (1 + mu * mu);
    const Real s = t > 0 ? mu * n / t : Real(0);
    return Vec3{n, s * gamma.y, s * gamma.z};
}

// One block's step of the projected iterations: gamma <- Pi_K(gamma - step d), the scaled
// projected Jacobi / Gauss-Seidel update of Tasora and Anitescu (step = omega eta_i).
CS_HD Vec3 projectedConeStep(Vec3 gamma, Vec3 d, Real step, Real mu) {
    return projectFrictionCone(gamma - step * d, mu);
}

// The natural-map residual of one block, in m/s: (gamma - Pi_K(gamma - d / s)) s with s a
// positive scale of the block (1/kg, the mean diagonal of N over it). Zero exactly when the
// block satisfies eq. 7 (gamma = Pi_K(gamma - alpha d) for any alpha > 0 is eq. 7's fixed-point
// form); its 2-norm over all blocks is the CCP merit the solvers report and stop on.
CS_HD Vec3 coneNaturalResidual(Vec3 gamma, Vec3 d, Real scale, Real mu) {
    return scale * (gamma - projectFrictionCone(gamma - (Real(1) / scale) * d, mu));
}

// How far one contact is from eq. 7, each part >= 0 and zero at a solution:
//   primal   gamma outside K:              max(0, |gamma_T| - mu gamma_n, -gamma_n)   (N s)
//   dual     -d outside K°:                max(0, mu |d_T| - d_n)                     (m/s)
//   product  gamma . d, which is zero at a solution and >= 0 when both are feasible   (N m)
struct ConeComplementarity {
    Real primal, dual, product;
};

CS_HD ConeComplementarity coneComplementarity(Vec3 gamma, Vec3 d, Real mu) {
    const Real gt = std::sqrt(gamma.y * gamma.y + gamma.z * gamma.z);
    const Real dt = std::sqrt(d.y * d.y + d.z * d.z);
    const Real primal = gt - mu * gamma.x > -gamma.x ? gt - mu * gamma.x : -gamma.x;
    const Real dual = mu * dt - d.x;
    return ConeComplementarity{primal > 0 ? primal : Real(0), dual > 0 ? dual : Real(0), std::fabs(dot(gamma, d))};
}

// The end-of-step normal separation the relaxation adds to a contact that slides at |v_T|
// (section 3): h mu |v_T| (m).
CS_HD Real relaxationSeparation(Real h, Real mu, Real vu, Real vw) {
    return h * mu * std::sqrt(vu * vu + vw * vw);
}

}  // namespace cs
