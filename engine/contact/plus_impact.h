// The PLUS impact event handler ([PLUS] Uchida, Sherman, Delp 2015, sections 2-3, Algorithms 1-2).
//
// An impact problem is a set of proximal points (feature pairs within the proximity tolerance)
// and bilateral constraints (joints, eq. 2.1b) between a few bodies, with time and configuration
// frozen. Every proximal point k owns three constraint-space rows, ordered x, y, z: two tangents
// t1, t2 and the normal n (from B to A). Used terms:
//   G      Jacobian of all rows (3 per point, then the bilateral rows), v = G u
//   A      = G M^-1 G^T, the Delassus operator (eq. 2.2); dv = A pi for an impulse pi
//   pi     impulse of one interval; pi_total accumulates them
//   e      Poisson's coefficient of restitution (eq. 2.4), velocity-dependent (figure 2)
//   alpha  interval step length: alpha_CP (eq. 2.13, sliding to rolling) and alpha_DC (eq. 2.14,
//          sliding direction change theta_max); the interval applies alpha pi
// Each round labels each point compressing, expanding or observing; each interval labels each
// non-observing point sliding, rolling or in impending slip (table 1). Within an interval the
// impulse is the minimum-norm solution of the active constraints (table 1), found with a
// complete orthogonal decomposition, under the active-set strategy of section 3(b).
#pragma once

#include <vector>

#include "engine/core/math.h"
#include "engine/settings.h"

namespace cs {

enum class ImpactPhase : int { Compressing = 0, Expanding = 1, Observing = 2 };
enum class SlipState : int { Sliding = 0, Rolling = 1, ImpendingSlip = 2, None = 3 };

struct ImpactPoint {
    int bodyA = -1, bodyB = -1;       // problem-local body indices, -1: fixed (the world, a static body)
    Vec3 rA{0, 0, 0}, rB{0, 0, 0};    // lever arms from the COMs to the contact point, world
    Vec3 normal{0, 0, 1};             // from B to A
    Vec3 t1{1, 0, 0}, t2{0, 1, 0};    // tangents completing the frame (x, y)
    Real mu = 0;
    Real minRestitution = 0;          // e_min of figure 2
};

struct ImpactBilateral {                // one always-active velocity constraint, G_b (u + du) = 0
    int bodyA = -1, bodyB = -1;
    Spatial jacobianA{{0, 0, 0}, {0, 0, 0}}, jacobianB{{0, 0, 0}, {0, 0, 0}};
};

struct ImpactProblem {
    std::vector<Real> invMass;        // (bodies)
    std::vector<Mat3> invInertia;     // (bodies) world frame
    std::vector<Spatial> velocity;    // (bodies) at the beginning of the impact
    std::vector<ImpactPoint> points;
    std::vector<ImpactBilateral> bilateral;
};

// One interval of the impact, for the slow-motion replay and the figures.
struct ImpactInterval {
    int round = 0;
    Real alpha = 1;
    int limitedBy = 0;                      // 0 end of phase, 1 alpha_CP (rolling), 2 alpha_DC (direction)
    std::vector<int> phase;                 // (points) ImpactPhase
    std::vector<int> state;                 // (points) SlipState
    std::vector<Vec3> impulse;              // (points) accumulated (x, y, z) after the interval, N s
    std::vector<Vec3> velocity;             // (points) (x, y, z) after the interval, m/s
    std::vector<Spatial> bodyVelocity;      // (bodies) u + M^-1 G^T pi_total after the interval
};

struct ImpactResult {
    std::vector<Spatial> deltaVelocity;     // (bodies) du = M^-1 G^T pi_total
    std::vector<Vec3> impulse;              // (points) accumulated (x, y, z) impulse, N s
    std::vector<Vec3> velocityStart;        // (points) (x, y, z) before the impact
    std::vector<Vec3> velocityEnd;          // (points) after
    std::vector<int> lastPhase;             // (points) phase in the last round a point was not observing
    std::vector<int> lastState;             // (points) slip state at the end
    int rounds = 0;
    int intervals = 0;
    int activeSetIterations = 0;
    bool converged = true;                  // false: a guard (max rounds / intervals) stopped it
    std::vector<ImpactInterval> trace;      // filled when asked for
};

// Velocity-dependent coefficient of restitution of [PLUS] figure 2: zero below the capture
// velocity, one just above it, falling linearly to e_min at the plastic-deformation velocity.
CS_HD Real plusRestitution(Real approachSpeed, Real captureVelocity, Real plasticVelocity, Real minRestitution) {
    if (approachSpeed < captureVelocity) return 0;
    if (approachSpeed >= plasticVelocity || plasticVelocity <= captureVelocity) return minRestitution;
    Real s = (approachSpeed - captureVelocity) / (plasticVelocity - captureVelocity);
    return Real(1) + s * (minRestitution - Real(1));
}

// Interval step length of one sliding point whose tangential velocity moves from v to v + d over
// the interval (d = A_xy pi). Returns 1 when neither condition limits the step; *reason 1 when
// the sliding-to-rolling transition alpha_CP (eq. 2.13) does, 2 when theta_max (eq. 2.14) does.
CS_HD Real plusStepLength(Real vx, Real vy, Real dx, Real dy, Real transitionVelocity, Real maxDirectionChange,
                          Real minStepLength, int* reason) {
    *reason = 0;
    Real ex = vx + dx, ey = vy + dy;
    // In practice alpha = 1 if ||v_end|| < v_transition: no short terminal interval ([PLUS] 2e).
    if (std::sqrt(ex * ex + ey * ey) < transitionVelocity) return 1;
    Real dd = dx * dx + dy * dy;
    if (!(dd > 0)) return 1;
    // alpha_CP = -v . A_xy pi / ||A_xy pi||^2 (eq. 2.13): the closest point P to the origin.
    Real alphaCP = -(vx * dx + vy * dy) / dd;
    if (alphaCP > 0 && alphaCP < 1) {
        Real px = vx + alphaCP * dx, py = vy + alphaCP * dy;
        if (std::sqrt(px * px + py * py) < transitionVelocity) {
            *reason = 1;
            return alphaCP > minStepLength ? alphaCP : minStepLength;
        }
    }
    // eq. 2.14 in closed form: with a = d . v^ and b = |d x v^| the velocity after alpha has
    // components (|v| + alpha a, alpha b) along and across v^, so the angle reaches theta_max at
    // alpha b = tan(theta_max) (|v| + alpha a): alpha_DC = |v| tan / (b - a tan), the positive root
    // of the quadratic of eq. 2.14; with b - a tan <= 0 the angle never reaches theta_max.
    Real v = std::sqrt(vx * vx + vy * vy);
    if (!(v > 0)) return 1;
    Real a = (dx * vx + dy * vy) / v;
    Real b = std::fabs(dx * vy - dy * vx) / v;
    Real tanMax = std::tan(maxDirectionChange);
    Real den = b - a * tanMax;
    if (den <= 0) return 1;
    Real alphaDC = v * tanMax / den;
    if (alphaDC >= 1) return 1;
    *reason = 2;
    return alphaDC > minStepLength ? alphaDC : minStepLength;
}

// Algorithms 1 and 2: resolves the impact, returns du per body and the accumulated impulses.
// fullSystem: each interval solves table 1's whole (3 points + bilateral)-square system, the
// reference for the reduced system over the free unknowns that is used otherwise (same
// minimum-norm impulse; plus_impact.cpp, solveReduced).
ImpactResult solvePlusImpact(const ImpactProblem& problem, const PlusSettings& settings, bool recordTrace,
                             bool fullSystem = false);

// Kinetic energy of the problem's bodies at velocities u (mass from the inverses; J).
Real impactKineticEnergy(const ImpactProblem& problem, const std::vector<Spatial>& u);

}  // namespace cs
