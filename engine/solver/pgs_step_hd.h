// Sequential impulses' per-row math (engine/solver/pgs_step.h), CS_HD so that the executor's
// forEach runs it on the host and on the device alike. The manifolds, bodies, joints and drag are
// the soft step's (soft_step_hd.h: SoftContact, SoftBody, SoftJoint, SoftDrag); only the laws differ.
//
// Terms as in soft_step_hd.h (n from B to A, rA rB fixed anchors, m_n the normal mass, vn the
// normal relative velocity, lambda the accumulated impulse of the step). One step h, no substeps,
// the separation s fixed at the narrow phase's value for the whole step.
//
// Velocity rows (Catto, "Iterative Dynamics with Temporal Coherence", 2005; Bullet's
// btSequentialImpulseConstraintSolver, Box2D v2's b2ContactSolver): each point asks for
//     vn >= target,  target = -s / h                          open (s > 0): may close the gap, no more
//                    target = 0                               overlapped, split impulse (the default)
//                    target = min(erp max(-s - slop, 0) / h, maxBiasSpeed)   overlapped, Baumgarte mode
//                    target = max(target, -e vn0)              restitution, vn0 < -threshold, touching
//     d lambda = m_n (target - vn),  lambda <- max(lambda + d lambda, 0)   (accumulated clamping)
// Friction per point against the current normal impulse: both tangents solved as in the soft step
// and the pair scaled back onto Coulomb's disc |lambda_t| <= mu lambda_n (isotropic, as the Newton
// path's standard model; Bullet and Box2D v2 clamp each tangent alone, a box).
//
// Split impulse (Bullet's default position correction): a second set of "pseudo" velocities
// (v', w') per body, zero at the step's start, takes the position error alone:
//     vn' >= splitErp max(-s - slop, 0) / h   over the overlapped points, normal rows only,
// with its own accumulated, clamped impulse; positions then move by h (v + v'), and v' is
// dropped, so an overlap is pushed out without adding kinetic energy to the bodies.
#pragma once

#include "engine/solver/soft_step_hd.h"

namespace cs {

struct PgsParams {
    Real invH;                  // 1 / h
    Real erp;                   // velocity bias factor for overlaps (0 with split impulse)
    Real slop;                  // m: overlap left alone
    Real maxBiasSpeed;          // m/s: the largest velocity bias target
    Real restitutionThreshold;  // m/s
};

// One Gauss-Seidel pass over the manifold: the normal rows, then friction against them.
CS_HD void pgsSolveContact(SoftContact& c, SoftBody* bodies, const Mat3* invInertia, const PgsParams& q) {
    SoftBody a = c.bodyA >= 0 ? bodies[c.bodyA] : softStill();
    SoftBody b = c.bodyB >= 0 ? bodies[c.bodyB] : softStill();
    // Open, no impulse, cannot close its gap this step (the bodies have not moved yet: dp = 0,
    // dq = 1): every row would be clamped to zero, the same bits.
    if (softOpenIdle(c, a, b, q.invH)) return;
    for (int j = 0; j < c.pointCount; ++j) {
        SoftPoint& p = c.points[j];
        const Real s = p.separation;
        Real target;
        if (s > 0) {
            target = -s * q.invH;
        } else {
            const Real depth = -s - q.slop;
            target = depth > 0 ? q.erp * depth * q.invH : Real(0);
            target = target < q.maxBiasSpeed ? target : q.maxBiasSpeed;
            const Real bounce = -c.restitution * p.relativeVelocity;
            if (c.restitution > 0 && p.relativeVelocity < -q.restitutionThreshold && bounce > target) target = bounce;
        }
        const Real vn = dot(softRelativeVelocity(a, b, p.rA, p.rB), c.normal);
        Real impulse = p.normalMass * (target - vn);
        const Real total = p.normalImpulse + impulse > 0 ? p.normalImpulse + impulse : Real(0);
        impulse = total - p.normalImpulse;
        p.normalImpulse = total;
        p.totalNormalImpulse += impulse;
        if (impulse != 0) softApplyImpulse(c, invInertia, a, b, p.rA, p.rB, impulse * c.normal);
    }
    softSolveFriction(c, a, b, invInertia);
    c.quiet = softQuiet(c);
    if (c.bodyA >= 0) bodies[c.bodyA] = a;
    if (c.bodyB >= 0) bodies[c.bodyB] = b;
}

// One split-impulse pass over the manifold's overlapped points: push (v', w' as SoftBody::v, w)
// and split (the points' accumulated pseudo impulses, kSoftMaxPoints per manifold).
CS_HD void pgsSplitContact(const SoftContact& c, SoftBody* push, const Mat3* invInertia, Real* split, Real rate, Real slop) {
    if (c.openGap > 0) return;   // every point open: no position error to take out
    SoftBody a = c.bodyA >= 0 ? push[c.bodyA] : softStill();
    SoftBody b = c.bodyB >= 0 ? push[c.bodyB] : softStill();
    bool any = false;
    for (int j = 0; j < c.pointCount; ++j) {
        const SoftPoint& p = c.points[j];
        const Real depth = -p.separation - slop;
        if (depth <= 0) continue;   // open or within the slop: no position error to take out
        const Real vn = dot(softRelativeVelocity(a, b, p.rA, p.rB), c.normal);
        Real impulse = p.normalMass * (rate * depth - vn);
        const Real total = split[j] + impulse > 0 ? split[j] + impulse : Real(0);
        impulse = total - split[j];
        split[j] = total;
        if (impulse != 0) {
            softApplyImpulse(c, invInertia, a, b, p.rA, p.rB, impulse * c.normal);
            any = true;
        }
    }
    if (!any) return;
    if (c.bodyA >= 0) push[c.bodyA] = a;
    if (c.bodyB >= 0) push[c.bodyB] = b;
}

// A joint's rigid rows as Baumgarte-stabilized velocity constraints: J u + erp C / h = 0, i.e. the
// soft step's joint law (softSolveJoint) with biasRate erp / h, massScale 1 and no leak. Rows with
// their own compliance or spring keep that physics (softSolveJoint).
CS_HD SoftParams pgsJointBias(Real erp, Real h) { return SoftParams{erp / h, 1, 0}; }

}  // namespace cs
