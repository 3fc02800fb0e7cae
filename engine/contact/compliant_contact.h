// The compliant reference model ([PLUS] section 4): Hertz normal force with Hunt-Crossley
// dissipation and a Stribeck-style friction curve, integrated through the collision with an
// error-controlled Runge-Kutta-Merson method (the integrator [PLUS] section 4 uses, accuracy 1e-5).
//
// Used terms (per contact):
//   z        penetration depth (m), z = -gap; zdot its rate (m/s)
//   f_Hz     = 4/3 sqrt(R) E z^(3/2)                 (eq. 4.1; R relative curvature, E modulus)
//   f_HC     = f_Hz (1 + 3/2 c zdot)                 (eq. 4.2; c dissipation, s/m), clamped >= 0
//   f_t      = -mu(|s|) f_HC s^, mu(|s|) = mu (2 x - x^2) for x = |s|/v_s < 1, mu beyond: a
//              Stribeck-style curve with equal static and dynamic coefficients and no viscous
//              term, as the paper's runs use (transition speed v_s = 0.01 m/s)
// A contact is kept as body-fixed geometry: a point (polytope witness) or a sphere centre plus
// radius on each side, so the gap is re-evaluated as the bodies move and spheres roll within
// the time step without a new narrow phase. Joints are enforced at acceleration level with
// Baumgarte stabilization, J a = -Jdot u - 2 w Cdot - w^2 C, Jdot u by a finite difference.
#pragma once

#include <vector>

#include "engine/collision/potential_contact.h"
#include "engine/model.h"
#include "engine/settings.h"
#include "engine/state.h"

namespace cs {

struct CompliantContact {
    int bodyA = -1, bodyB = -1;
    Vec3 localA{0, 0, 0}, localB{0, 0, 0};   // body-frame point or sphere centre (world frame when body is -1)
    Real radiusA = 0, radiusB = 0;           // sphere radii (0: a point)
    Vec3 normalLocalB{0, 0, 1};              // normal from B to A in B's frame (world when bodyB is -1)
    bool sphereSphere = false;               // normal follows the two centres
    Real curvature = Real(0.1);              // R of eq. 4.1
    Real mu = 0;
};

// Body-fixed contacts from this step's potential contacts (one per feature pair).
void makeCompliantContacts(const Model& model, const State& state, const std::vector<PotentialContact>& potential,
                           const WorldSettings& settings, std::vector<CompliantContact>& out);

// Penetration z = -gap of a contact at state (0 when apart) and the elastic energy stored in the
// Hertz spring, U = integral of f_Hz dz = 8/15 sqrt(R) E z^(5/2) (eq. 4.1 integrated).
Real compliantPenetration(const State& state, const CompliantContact& c);
Real compliantElasticEnergy(const State& state, const CompliantContact& c, const CompliantSettings& settings);

struct CompliantStats {
    int steps = 0, rejected = 0, evaluations = 0;
    Real maxPenetration = 0;
};

// Optional per-step record of the integration (for the figures): time, body velocities,
// accumulated contact impulse per contact (world frame), penetration per contact.
struct CompliantSample {
    Real time = 0;
    std::vector<Vec3> linVel, angVel;        // (bodies)
    std::vector<Vec3> impulse;               // (contacts)
    std::vector<Real> penetration;           // (contacts)
};

// Integrates the bodies flagged in `moving` from state over duration T (gravity, contacts,
// joints among moving bodies). `state` is advanced in place (positions, orientations,
// velocities, time unchanged). Returns false when the substep budget ran out.
bool integrateCompliant(const Model& model, State& state, const std::vector<char>& moving,
                        const std::vector<CompliantContact>& contacts, const WorldSettings& settings, Real T,
                        CompliantStats* stats, std::vector<CompliantSample>* samples);

}  // namespace cs
