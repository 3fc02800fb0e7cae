// The soft step's per-constraint math (engine/solver/soft_step.h), CS_HD so that the executor's
// forEach runs it on the host and on the device alike.
//
// Used terms (Box2D v3's contact_solver.c and Catto's "Solver2D" / "Soft constraints" notes, in 3D):
//   n            contact normal, from B to A (A moving along +n separates), fixed over the step
//   rA, rB       fixed anchors: contact point minus centre of mass at the step's start (world)
//   s            current separation, s = s0 + dot(dpA + dqA rA - rA - (dpB + dqB rB - rB), n), with
//                dp, dq each body's translation and rotation since the step's start: the narrow
//                phase is not rerun within the step
//   vn           dot(vA + wA x rA - vB - wB x rB, n), the normal approach speed (negative closing)
//   m_n          normal mass 1 / (1/mA + 1/mB + (rA x n).IA^-1 (rA x n) + (rB x n).IB^-1 (rB x n))
//   lambda       accumulated impulse of the current substep (N s), clamped to >= 0
//
// The soft constraint (b2MakeSoft): a constraint C = 0 held by a spring of natural frequency
// omega = 2 pi f and damping ratio zeta, integrated implicitly over a substep h, gives for the
// incremental impulse
//     d lambda = -m_n massScale (vn + biasRate C) - impulseScale lambda,
//     biasRate = omega / (2 zeta + h omega),  massScale = h omega (2 zeta + h omega) / (1 + h omega (2 zeta + h omega)),
//     impulseScale = 1 / (1 + h omega (2 zeta + h omega)).
// (From the implicit spring-damper m a = -k C - c v with k = m omega^2, c = 2 m zeta omega: the
// impulse that sets v+ = v - h (k C + c v+) / m, written with the accumulated impulse.) As
// f -> infinity it is the rigid constraint with Baumgarte factor 1/h; massScale < 1 and the
// impulseScale leak keep it stable at any mass ratio, which is the point of soft constraints.
// A contact applies the soft bias only while overlapping (s < 0); an open contact (s > 0) is
// speculative, vn >= -s / h, rigid. The relax sweeps drop the bias (massScale 1, impulseScale 0),
// so the push-out velocity the biased sweep added is removed again before the next substep.
#pragma once

#include <cmath>

#include "engine/core/math.h"
#include "engine/solver/joint_rows_hd.h"

namespace cs {

struct SoftParams {
    Real biasRate = 0;       // 1/s
    Real massScale = 1;
    Real impulseScale = 0;
};

CS_HD SoftParams makeSoft(Real hertz, Real zeta, Real h) {
    if (hertz == 0) return SoftParams{0, 1, 0};
    const Real omega = Real(2 * M_PI) * hertz;
    const Real a1 = 2 * zeta + h * omega;
    const Real a2 = h * omega * a1;
    const Real a3 = Real(1) / (1 + a2);
    return SoftParams{omega / a1, a2 * a3, a3};
}

// A body as the sweeps see it: velocities, and the motion since the step's start.
struct SoftBody {
    Vec3 v, w;               // m/s, rad/s (world)
    Vec3 dp;                 // translation since the step's start
    Quat dq;                 // rotation since the step's start (world: q = dq q0)
};

constexpr int kSoftMaxPoints = 4;   // points per manifold (soft_step.cpp reduceManifold)

struct SoftPoint {
    Vec3 rA, rB;             // fixed anchors
    Real baseSeparation;     // s0 - dot(rA - rB, n): s = baseSeparation + dot(dpA + dqA rA - dpB - dqB rB, n)
    Real separation;         // s at the bodies' current poses (positions change only between the
                             //   solve and the relax sweeps: the relax updates it, the next solve reads it)
    Real normalMass;         // m_n
    Real tangentMass[2];
    Real normalImpulse;      // lambda of the current substep
    Real tangentImpulse[2];
    Real totalNormalImpulse; // sum of the impulses applied over the step (N s): reported
    Real relativeVelocity;   // vn at the step's start, for restitution
    int contact;             // index into the step's potential contacts
};

// One manifold: the points of one shape pair sharing one normal (at most kSoftMaxPoints).
// bodyA, bodyB index the solver's bodies; -1 a body that does not move (static, asleep, dormant).
struct alignas(64) SoftContact {
    // What the open-manifold skip (softOpenIdle) reads comes first, in one cache line: a skipped
    // manifold costs its sweep that line only.
    int bodyA, bodyB;
    int pointCount;
    bool stale;              // a sweep skipped the manifold without updating its points' separations
    bool quiet;              // every point's normal and tangent impulses are zero
    // The smallest gap at the step's start when every point is open (> 0), else 0; the largest
    // |rA|, |rB| over the points.
    Real openGap, reachA, reachB;
    Real invMassA, invMassB;         // the inverse inertias (world, at the step's start) are the
                                     //   bodies', read from the solver's per-body array: fewer bytes per sweep
    Vec3 normal, tangent[2];
    Real friction, restitution;
    SoftParams softness;
    SoftPoint points[kSoftMaxPoints];
};

// The relative velocity of the two anchors (A minus B).
CS_HD Vec3 softRelativeVelocity(const SoftBody& a, const SoftBody& b, Vec3 rA, Vec3 rB) {
    return a.v + cross(a.w, rA) - b.v - cross(b.w, rB);
}

CS_HD void softApplyImpulse(const SoftContact& c, const Mat3* invInertia, SoftBody& a, SoftBody& b, Vec3 rA, Vec3 rB,
                            Vec3 impulse) {
    if (c.bodyA >= 0) {
        a.v += c.invMassA * impulse;
        a.w += invInertia[c.bodyA] * cross(rA, impulse);
    }
    if (c.bodyB >= 0) {
        b.v -= c.invMassB * impulse;
        b.w -= invInertia[c.bodyB] * cross(rB, impulse);
    }
}

// The bodies of a constraint: the solver's or a still one (velocity and motion zero).
CS_HD SoftBody softStill() { return SoftBody{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, quatIdentity()}; }

// Whether every point's impulses are zero (SoftContact::quiet), after a pass that changed them.
CS_HD bool softQuiet(const SoftContact& c) {
    bool quiet = true;
    for (int j = 0; j < c.pointCount; ++j) {
        const SoftPoint& p = c.points[j];
        quiet = quiet && p.normalImpulse == 0 && p.tangentImpulse[0] == 0 && p.tangentImpulse[1] == 0;
    }
    return quiet;
}

// Whether a sweep would leave the manifold alone, proven without visiting its points: every point
// is open and holds no impulse, and no point can approach fast enough to close its gap within the
// (sub)step h. A point's separation then is at least openGap - reach, reach bounding how far the
// bodies' motion since the step's start brought the anchors together along n
// (|dpA - dpB| + |dqA rA - rA| + |dqB rB - rB|, with |dq r - r| <= 2 |dq.xyz| |r|), and its normal
// velocity vn is at least -speed (|vA - vB| + |wA| |rA| + |wB| |rB|); its row asks vn >= -s / h
// and is met with a margin, so the impulse it computes is clamped to zero and friction (limit
// mu * 0) takes none: skipping gives the same bits as the visit, less its separations' update
// (`stale`). On the dense pyramids most manifolds are side faces across 1 mm gaps that never touch.
CS_HD bool softOpenIdle(const SoftContact& c, const SoftBody& a, const SoftBody& b, Real invH) {
    if (!(c.openGap > 0) || !c.quiet) return false;
    const Real turnA = std::sqrt(a.dq.x * a.dq.x + a.dq.y * a.dq.y + a.dq.z * a.dq.z);
    const Real turnB = std::sqrt(b.dq.x * b.dq.x + b.dq.y * b.dq.y + b.dq.z * b.dq.z);
    const Real reach = length(a.dp - b.dp) + 2 * (turnA * c.reachA + turnB * c.reachB);
    const Real speed = length(a.v - b.v) + length(a.w) * c.reachA + length(b.w) * c.reachB;
    // The margins cover the rounding of the bounds and of the row's own arithmetic.
    return (c.openGap - reach) * invH > speed * Real(1.001) + Real(1e-9);
}

// Warm start: the last substep's impulses applied again ([Box2D] b2WarmStartContactsTask).
CS_HD void softWarmStart(SoftContact& c, SoftBody* bodies, const Mat3* invInertia) {
    if (c.quiet) return;   // nothing to apply, and the totals would add zeros
    SoftBody a = c.bodyA >= 0 ? bodies[c.bodyA] : softStill();
    SoftBody b = c.bodyB >= 0 ? bodies[c.bodyB] : softStill();
    for (int j = 0; j < c.pointCount; ++j) {
        SoftPoint& p = c.points[j];
        const Vec3 impulse = p.normalImpulse * c.normal + p.tangentImpulse[0] * c.tangent[0] +
                             p.tangentImpulse[1] * c.tangent[1];
        p.totalNormalImpulse += p.normalImpulse;
        if (p.normalImpulse != 0 || p.tangentImpulse[0] != 0 || p.tangentImpulse[1] != 0)
            softApplyImpulse(c, invInertia, a, b, p.rA, p.rB, impulse);
    }
    if (c.bodyA >= 0) bodies[c.bodyA] = a;
    if (c.bodyB >= 0) bodies[c.bodyB] = b;
}

// Friction of each point against its current normal impulse: Coulomb's cone |lambda_t| <= mu
// lambda_n, each tangent solved alone, the pair then scaled back onto the disc (isotropic friction,
// as the Newton path's standard model). a, b: the manifold's bodies (local copies).
CS_HD void softSolveFriction(SoftContact& c, SoftBody& a, SoftBody& b, const Mat3* invInertia) {
    for (int j = 0; j < c.pointCount; ++j) {
        SoftPoint& p = c.points[j];
        // An open point with no friction impulse stays at zero (its limit is zero): skipped, same result.
        if (p.normalImpulse == 0 && p.tangentImpulse[0] == 0 && p.tangentImpulse[1] == 0) continue;
        const Vec3 vr = softRelativeVelocity(a, b, p.rA, p.rB);
        Real t0 = p.tangentImpulse[0] - p.tangentMass[0] * dot(vr, c.tangent[0]);
        Real t1 = p.tangentImpulse[1] - p.tangentMass[1] * dot(vr, c.tangent[1]);
        const Real limit = c.friction * p.normalImpulse;
        const Real norm2 = t0 * t0 + t1 * t1;
        if (norm2 > limit * limit) {
            const Real scale = limit / std::sqrt(norm2);
            t0 *= scale;
            t1 *= scale;
        }
        const Vec3 impulse = (t0 - p.tangentImpulse[0]) * c.tangent[0] + (t1 - p.tangentImpulse[1]) * c.tangent[1];
        p.tangentImpulse[0] = t0;
        p.tangentImpulse[1] = t1;
        softApplyImpulse(c, invInertia, a, b, p.rA, p.rB, impulse);
    }
}

// One Gauss-Seidel pass over the manifold: normal impulses first, then friction against them.
// useBias: the substep's solve (soft push-out of overlaps); false: the relax sweep.
// updateSeparation: the bodies moved since the points' separations were last computed.
CS_HD void softSolveContact(SoftContact& c, SoftBody* bodies, const Mat3* invInertia, Real invH, Real contactSpeed, bool useBias,
                            bool updateSeparation) {
    SoftBody a = c.bodyA >= 0 ? bodies[c.bodyA] : softStill();
    SoftBody b = c.bodyB >= 0 ? bodies[c.bodyB] : softStill();
    if (softOpenIdle(c, a, b, invH)) {
        c.stale = c.stale || updateSeparation;
        return;
    }
    updateSeparation = updateSeparation || c.stale;   // the poses have not moved since: the same values
    c.stale = false;
    const Vec3 dp = a.dp - b.dp;
    for (int j = 0; j < c.pointCount; ++j) {
        SoftPoint& p = c.points[j];
        // s = s0 + dot(dpA + dqA rA - rA - (dpB + dqB rB - rB), n)
        if (updateSeparation) p.separation = p.baseSeparation + dot(dp + rotate(a.dq, p.rA) - rotate(b.dq, p.rB), c.normal);
        const Real s = p.separation;
        Real bias = 0, massScale = 1, impulseScale = 0;
        if (s > 0) {
            bias = s * invH;   // speculative: may close the gap within the substep, no more
        } else if (useBias) {
            bias = c.softness.massScale * c.softness.biasRate * s;
            bias = bias > -contactSpeed ? bias : -contactSpeed;
            massScale = c.softness.massScale;
            impulseScale = c.softness.impulseScale;
        }
        const Real vn = dot(softRelativeVelocity(a, b, p.rA, p.rB), c.normal);
        Real impulse = -p.normalMass * (massScale * vn + bias) - impulseScale * p.normalImpulse;
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

// Restitution after the substeps ([Box2D] b2ApplyRestitutionTask): points that approached faster
// than the threshold at the step's start and took an impulse get vn = -e vn0.
CS_HD void softRestitution(SoftContact& c, SoftBody* bodies, const Mat3* invInertia, Real threshold) {
    if (c.restitution == 0) return;
    SoftBody a = c.bodyA >= 0 ? bodies[c.bodyA] : softStill();
    SoftBody b = c.bodyB >= 0 ? bodies[c.bodyB] : softStill();
    for (int j = 0; j < c.pointCount; ++j) {
        SoftPoint& p = c.points[j];
        if (p.relativeVelocity > -threshold || p.totalNormalImpulse == 0) continue;
        const Real vn = dot(softRelativeVelocity(a, b, p.rA, p.rB), c.normal);
        Real impulse = -p.normalMass * (vn + c.restitution * p.relativeVelocity);
        const Real total = p.normalImpulse + impulse > 0 ? p.normalImpulse + impulse : Real(0);
        impulse = total - p.normalImpulse;
        p.normalImpulse = total;
        p.totalNormalImpulse += impulse;
        softApplyImpulse(c, invInertia, a, b, p.rA, p.rB, impulse * c.normal);
    }
    c.quiet = softQuiet(c);
    if (c.bodyA >= 0) bodies[c.bodyA] = a;
    if (c.bodyB >= 0) bodies[c.bodyB] = b;
}

// A joint: the Newton path's bilateral rows (joint_rows_hd.h jointRowsOf, J u + C / h = 0 in
// velocity form), rebuilt at each substep's pose with h the substep, and solved one row at a
// time. A rigid row (no compliance) is a soft constraint of the joint frequency:
//     d lambda = -m massScale (J u + biasRate C) - impulseScale lambda,   C = bias h,  m = 1 / (J M^-1 J^T),
// and a rigid velocity constraint in the relax sweeps; a row with its own compliance or spring
// (bias, gamma of joint_rows_hd.h) keeps that physics in both sweeps: d lambda = -(bias + J u + gamma lambda) / (J M^-1 J^T + gamma).
// Rows with a force limit are clamped to |lambda| <= maxImpulse.
struct SoftJoint {
    JointParams params;
    int bodyA, bodyB;                 // solver bodies, -1: does not move
    Real invMassA, invMassB;
    Mat3 invInertiaA, invInertiaB;    // world, at the step's start
    JointRowSet rows;                 // at the current substep's pose
    Real mass[kMaxJointRows];         // 1 / (J M^-1 J^T + gamma)
    Real lambda[kMaxJointRows];       // accumulated impulse of the current substep
    int warmFirst;                    // the joint's first row in State::jointWarm
};

CS_HD Real softRowVelocity(const JointRow& r, const SoftBody& a, const SoftBody& b) {
    return dot(r.jacobianA.lin, a.v) + dot(r.jacobianA.ang, a.w) + dot(r.jacobianB.lin, b.v) + dot(r.jacobianB.ang, b.w);
}

CS_HD void softApplyRow(const SoftJoint& j, const JointRow& r, SoftBody& a, SoftBody& b, Real impulse) {
    a.v += (j.invMassA * impulse) * r.jacobianA.lin;
    a.w += j.invInertiaA * (impulse * r.jacobianA.ang);
    b.v += (j.invMassB * impulse) * r.jacobianB.lin;
    b.w += j.invInertiaB * (impulse * r.jacobianB.ang);
}

// The rows at the current pose (pos, rot: every model body's, updated within the step).
CS_HD void softPrepareJoint(SoftJoint& j, const Vec3* pos, const Quat* rot, Real h) {
    jointRowsOf(j.params, jointFramesOf(j.params, pos, rot), h, j.rows);
    for (int k = 0; k < j.rows.count; ++k) {
        const JointRow& r = j.rows.row[k];
        const Real a = j.invMassA * lengthSq(r.jacobianA.lin) + dot(r.jacobianA.ang, j.invInertiaA * r.jacobianA.ang) +
                       j.invMassB * lengthSq(r.jacobianB.lin) + dot(r.jacobianB.ang, j.invInertiaB * r.jacobianB.ang);
        j.mass[k] = a + r.softness > 0 ? Real(1) / (a + r.softness) : Real(0);
    }
}

CS_HD void softWarmStartJoint(SoftJoint& j, SoftBody* bodies) {
    SoftBody a = j.bodyA >= 0 ? bodies[j.bodyA] : softStill();
    SoftBody b = j.bodyB >= 0 ? bodies[j.bodyB] : softStill();
    for (int k = 0; k < j.rows.count; ++k) softApplyRow(j, j.rows.row[k], a, b, j.lambda[k]);
    if (j.bodyA >= 0) bodies[j.bodyA] = a;
    if (j.bodyB >= 0) bodies[j.bodyB] = b;
}

CS_HD void softSolveJoint(SoftJoint& j, SoftBody* bodies, SoftParams softness, Real h, bool useBias) {
    SoftBody a = j.bodyA >= 0 ? bodies[j.bodyA] : softStill();
    SoftBody b = j.bodyB >= 0 ? bodies[j.bodyB] : softStill();
    for (int k = 0; k < j.rows.count; ++k) {
        const JointRow& r = j.rows.row[k];
        const Real jv = softRowVelocity(r, a, b);
        Real impulse;
        if (r.softness > 0) {
            impulse = -j.mass[k] * (r.bias + jv + r.softness * j.lambda[k]);
        } else if (useBias) {
            impulse = -j.mass[k] * softness.massScale * (jv + softness.biasRate * r.bias * h) -
                      softness.impulseScale * j.lambda[k];
        } else {
            impulse = -j.mass[k] * jv;
        }
        Real total = j.lambda[k] + impulse;
        total = total > r.maxImpulse ? r.maxImpulse : total < -r.maxImpulse ? -r.maxImpulse : total;
        impulse = total - j.lambda[k];
        j.lambda[k] = total;
        softApplyRow(j, r, a, b, impulse);
    }
    if (j.bodyA >= 0) bodies[j.bodyA] = a;
    if (j.bodyB >= 0) bodies[j.bodyB] = b;
}

// The mouse drag as a soft point constraint (Box2D's mouse joint): C = x + r - target held by a
// spring of the drag's frequency and damping ratio whatever the body's mass (the effective mass
// K^-1 at the point scales it), the accumulated impulse clamped to maxForce h.
struct SoftDrag {
    int body;                // solver body, -1: none
    Vec3 r;                  // anchor: grabbed point minus centre of mass at the step's start (world)
    Vec3 target;
    Vec3 start;              // C at the step's start: x0 + r - target
    Mat3 mass;               // K^-1, K = 1/m I - [r]x I^-1 [r]x
    Real invMass;
    Mat3 invInertia;
    SoftParams softness;
    Real maxImpulse;         // maxForce h
    Vec3 impulse;            // accumulated, of the current substep
};

CS_HD void softWarmStartDrag(SoftDrag& d, SoftBody* bodies) {
    if (d.body < 0) return;
    SoftBody& b = bodies[d.body];
    b.v += d.invMass * d.impulse;
    b.w += d.invInertia * cross(d.r, d.impulse);
}

// The drag is a spring, not a constraint: it stays soft in the relax sweeps too (as Box2D's mouse
// joint), or the relax would hold the grabbed point still.
CS_HD void softSolveDrag(SoftDrag& d, SoftBody* bodies) {
    if (d.body < 0) return;
    SoftBody& b = bodies[d.body];
    const Vec3 c = d.start + b.dp + rotate(b.dq, d.r) - d.r;
    const Vec3 bias = d.softness.biasRate * c;
    const Real massScale = d.softness.massScale, impulseScale = d.softness.impulseScale;
    const Vec3 cdot = b.v + cross(b.w, d.r);
    Vec3 impulse = Real(-1) * (massScale * (d.mass * (cdot + bias))) - impulseScale * d.impulse;
    Vec3 total = d.impulse + impulse;
    const Real norm = length(total);
    if (norm > d.maxImpulse) total = (d.maxImpulse / norm) * total;
    impulse = total - d.impulse;
    d.impulse = total;
    b.v += d.invMass * impulse;
    b.w += d.invInertia * cross(d.r, impulse);
}

}  // namespace cs
