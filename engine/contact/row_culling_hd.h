// Row culling's per-contact math (the predictor and the check of row_culling.h), for both
// backends: row_culling.cpp and fem_contact.cpp (World::substep) and the step pipeline
// (engine/exec/pipeline_collide.h recordContactRows, pipeline_fem_contact.h recordFemContacts,
// pipeline_step.h recordCullCheck) call these CS_HD functions, so the two
// leave out the same contacts and accept the same reduced solves, to the bit. The bound and its
// derivation are in row_culling.h.
#pragma once

#include "engine/collision/potential_contact.h"

namespace cs {

// m: slack on top of h S before a contact is left out. It only sets how often the check fails
// (a failure costs a second solve), never whether a left-out contact may end up active.
constexpr Real kCullMargin = Real(1e-4);

// v_push of the step: min(maxPushoutSpeed, stabilization * deepest / h), deepest the largest
// overlap (-gap, at least 0) among the step's potential contacts.
CS_HD Real cullPushoutSpeedOf(Real deepest, Real stabilization, Real maxPushoutSpeed, Real h) {
    return fmin(maxPushoutSpeed, stabilization * deepest / h);
}

// |v| + |w| |p - x| of a body's point p (lin: the body's v), or 0 (lin 0) for the world and
// static bodies (dynamic false).
CS_HD Real cullPointSpeedBound(bool dynamic, Vec3 linVel, Vec3 angVel, Vec3 x, Vec3 p, Vec3* lin) {
    *lin = Vec3{0, 0, 0};
    if (!dynamic) return 0;
    *lin = linVel;
    return length(angVel) * length(p - x);
}

// The predictor: true when contact c cannot close within the step (g > h S + kCullMargin).
// dynamicA/B: the body is >= 0 and not static (Model::isStatic); pos, linVel, angVel: the state
// at the step's start, indexed by body.
CS_HD bool cullContactCannotClose(const PotentialContact& c, bool dynamicA, bool dynamicB, const Vec3* pos,
                                  const Vec3* linVel, const Vec3* angVel, Vec3 gravity, Real pushoutSpeed, Real h) {
    if (!(c.gap > kCullMargin)) return false;
    if (!dynamicA && !dynamicB) return true;
    const Vec3 zero{0, 0, 0};
    Vec3 vA, vB;
    const Real turn = cullPointSpeedBound(dynamicA, dynamicA ? linVel[c.bodyA] : zero, dynamicA ? angVel[c.bodyA] : zero,
                                          dynamicA ? pos[c.bodyA] : zero, c.pointA, &vA) +
                      cullPointSpeedBound(dynamicB, dynamicB ? linVel[c.bodyB] : zero, dynamicB ? angVel[c.bodyB] : zero,
                                          dynamicB ? pos[c.bodyB] : zero, c.pointB, &vB);
    const Real bound = length(vA - vB) + turn + h * length(gravity) + pushoutSpeed;   // S
    return c.gap > h * bound + kCullMargin;
}

// The check for one left-out contact: g/h + J u+ >= 0 at the solved velocities u (indexed by
// body, the world -1 at rest); pos: the state the contact was found in.
CS_HD bool cullContactStayedOpen(const PotentialContact& c, const Vec3* pos, const Spatial* u, Real h) {
    Real jv = 0;   // J u+ of the normal row (standard_rows_hd.h)
    if (c.bodyA >= 0) {
        const Spatial& ua = u[c.bodyA];
        jv += dot(c.normal, ua.lin + cross(ua.ang, c.pointA - pos[c.bodyA]));
    }
    if (c.bodyB >= 0) {
        const Spatial& ub = u[c.bodyB];
        jv -= dot(c.normal, ub.lin + cross(ub.ang, c.pointB - pos[c.bodyB]));
    }
    return c.gap / h + jv >= 0;
}

// The predictor for a FEM node's contact with a rigid part (fem_contact.cpp; the node is side A
// with no lever arm, nodeVel its velocity at the step's start): S = |v_node - v_B| + |w_B|
// |p_B - x_B| + h |g| + v_push. dynamicB, linVelB, angVelB, posB: the part's body as above.
CS_HD bool cullNodeContactCannotClose(const PotentialContact& c, Vec3 nodeVel, bool dynamicB, Vec3 linVelB,
                                      Vec3 angVelB, Vec3 posB, Vec3 gravity, Real pushoutSpeed, Real h) {
    if (!(c.gap > kCullMargin)) return false;
    Vec3 vB;
    const Real turn = cullPointSpeedBound(dynamicB, linVelB, angVelB, posB, c.pointB, &vB);
    Real bound = length(nodeVel - vB) + turn;
    bound += h * length(gravity) + pushoutSpeed;   // S
    return c.gap > h * bound + kCullMargin;
}

// The check for one left-out node-part contact: g/h + J u+ >= 0, nodeVel the node's solved
// velocity, u and pos as in cullContactStayedOpen for the part's body c.bodyB.
CS_HD bool cullNodeContactStayedOpen(const PotentialContact& c, Vec3 nodeVel, const Vec3* pos, const Spatial* u,
                                     Real h) {
    Real jv = dot(c.normal, nodeVel);   // J u+ of the normal row
    if (c.bodyB >= 0) {
        const Spatial& ub = u[c.bodyB];
        jv -= dot(c.normal, ub.lin + cross(ub.ang, c.pointB - pos[c.bodyB]));
    }
    return c.gap / h + jv >= 0;
}

}  // namespace cs
