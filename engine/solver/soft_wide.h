// The soft step's sweeps over kSoftLanes manifolds at once (engine/solver/soft_step.h), on the
// host: the manifolds of one colour share no moving body, so a block of them is solved with the
// same per-point law as softSolveContact (soft_step_hd.h), each operation on all lanes at once
// (GCC's vector types: one AVX instruction per operation), the block's data laid out by lane.
//
// A block holds kSoftLanes manifolds of one colour (an empty lane: bodyA = bodyB = -1, no points),
// each with up to kSoftMaxPoints points; a lane with fewer points than the block's pointCount has
// padding points that take no impulse (normal and tangent masses zero, open). The arithmetic per
// lane is softSolveContact's, operation for operation, except that a point is always visited (the
// scalar path skips the friction of a point with no impulse, and a manifold softOpenIdle proves
// would take none): such a visit adds zero impulses, which can change only the sign of a zero. A
// block is skipped, as a manifold is, when every lane is proven idle (softWideIdle); each colour
// lists its manifolds open at the step's start last, so that the idle ones share blocks.
// The overflow colour and the device keep the scalar law (soft_step_hd.h).
#pragma once

#include <cmath>

#include "engine/solver/soft_step_hd.h"

namespace cs {

constexpr int kSoftLanes = 8;
typedef Real SoftLane __attribute__((vector_size(sizeof(Real) * kSoftLanes)));

struct SoftLaneVec3 {
    SoftLane x, y, z;
};

inline SoftLaneVec3 operator+(const SoftLaneVec3& a, const SoftLaneVec3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline SoftLaneVec3 operator-(const SoftLaneVec3& a, const SoftLaneVec3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline SoftLaneVec3 operator*(SoftLane s, const SoftLaneVec3& a) { return {s * a.x, s * a.y, s * a.z}; }
inline SoftLane dot(const SoftLaneVec3& a, const SoftLaneVec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline SoftLaneVec3 cross(const SoftLaneVec3& a, const SoftLaneVec3& b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

struct SoftWidePoint {   // one point of each lane's manifold
    SoftLaneVec3 rA, rB;
    SoftLane baseSeparation, separation;
    SoftLane normalMass, tangentMass[2];
    SoftLane normalImpulse, tangentImpulse[2];
    SoftLane totalNormalImpulse;
    SoftLane relativeVelocity;
    SoftLane split;          // sequential impulses' accumulated split impulse (pgs_step.cpp)
};

struct alignas(64) SoftWideBlock {
    int manifold[kSoftLanes];              // index in the sweep (SoftStepScratch::sweep), -1: empty lane
    int bodyA[kSoftLanes], bodyB[kSoftLanes];
    int pointCount;                        // the most points of any lane
    bool stale;                            // skipped without updating the separations
    bool quiet;                            // every impulse of every lane is zero
    bool restitution;                      // a lane has restitution
    Real openGap[kSoftLanes], reachA[kSoftLanes], reachB[kSoftLanes];   // as SoftContact's
    SoftLane invMassA, invMassB;
    SoftLaneVec3 normal, tangent[2];
    SoftLane friction, restitutionCoef;
    SoftLane biasRate, massScale, impulseScale;
    SoftWidePoint points[kSoftMaxPoints];
};

// One side's bodies of a block, by lane: a still body (-1) has zero velocity, motion and inverse inertia.
struct SoftWideBodies {
    SoftLaneVec3 v, w, dp;
    SoftLane dq[4];
    SoftLane invI[3][3];
};

inline void softWideGather(const int* index, const SoftBody* bodies, const Mat3* invInertia, SoftWideBodies& o) {
    for (int l = 0; l < kSoftLanes; ++l) {
        const int k = index[l];
        const SoftBody b = k >= 0 ? bodies[k] : softStill();
        const Mat3 inv = k >= 0 ? invInertia[k] : mat3Zero();
        o.v.x[l] = b.v.x, o.v.y[l] = b.v.y, o.v.z[l] = b.v.z;
        o.w.x[l] = b.w.x, o.w.y[l] = b.w.y, o.w.z[l] = b.w.z;
        o.dp.x[l] = b.dp.x, o.dp.y[l] = b.dp.y, o.dp.z[l] = b.dp.z;
        o.dq[0][l] = b.dq.w, o.dq[1][l] = b.dq.x, o.dq[2][l] = b.dq.y, o.dq[3][l] = b.dq.z;
        for (int d = 0; d < 3; ++d)
            for (int e = 0; e < 3; ++e) o.invI[d][e][l] = inv.m[d][e];
    }
}

// Velocities back to the solver's bodies (the motion dp, dq does not change in a sweep).
inline void softWideScatter(const int* index, const SoftWideBodies& o, SoftBody* bodies) {
    for (int l = 0; l < kSoftLanes; ++l) {
        const int k = index[l];
        if (k < 0) continue;
        bodies[k].v = Vec3{o.v.x[l], o.v.y[l], o.v.z[l]};
        bodies[k].w = Vec3{o.w.x[l], o.w.y[l], o.w.z[l]};
    }
}

inline SoftLaneVec3 softWideTimes(const SoftLane (&m)[3][3], const SoftLaneVec3& v) {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z, m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
}

// softApplyImpulse's arithmetic on every lane (a still body's inverse mass and inertia are zero,
// and it is not scattered back).
inline void softWideApply(const SoftWideBlock& k, SoftWideBodies& a, SoftWideBodies& b, const SoftLaneVec3& rA,
                          const SoftLaneVec3& rB, const SoftLaneVec3& impulse) {
    a.v = a.v + k.invMassA * impulse;
    a.w = a.w + softWideTimes(a.invI, cross(rA, impulse));
    b.v = b.v - k.invMassB * impulse;
    b.w = b.w - softWideTimes(b.invI, cross(rB, impulse));
}

inline SoftLaneVec3 softWideRelativeVelocity(const SoftWideBodies& a, const SoftWideBodies& b, const SoftLaneVec3& rA,
                                             const SoftLaneVec3& rB) {
    return a.v + cross(a.w, rA) - b.v - cross(b.w, rB);
}

// rotate(q, v) of math.h on every lane: v + 2 w (u x v) + 2 u x (u x v).
inline SoftLaneVec3 softWideRotate(const SoftLane (&q)[4], const SoftLaneVec3& v) {
    const SoftLaneVec3 u{q[1], q[2], q[3]};
    const SoftLane two = SoftLane{} + Real(2);
    const SoftLaneVec3 t = two * cross(u, v);
    return v + q[0] * t + cross(u, t);
}

// softOpenIdle for every lane (an empty lane is idle).
inline bool softWideIdle(const SoftWideBlock& k, const SoftBody* bodies, Real invH) {
    if (!k.quiet) return false;
    for (int l = 0; l < kSoftLanes; ++l) {
        if (k.manifold[l] < 0) continue;
        if (!(k.openGap[l] > 0)) return false;
        const SoftBody a = k.bodyA[l] >= 0 ? bodies[k.bodyA[l]] : softStill();
        const SoftBody b = k.bodyB[l] >= 0 ? bodies[k.bodyB[l]] : softStill();
        const Real turnA = std::sqrt(a.dq.x * a.dq.x + a.dq.y * a.dq.y + a.dq.z * a.dq.z);
        const Real turnB = std::sqrt(b.dq.x * b.dq.x + b.dq.y * b.dq.y + b.dq.z * b.dq.z);
        const Real reach = length(a.dp - b.dp) + 2 * (turnA * k.reachA[l] + turnB * k.reachB[l]);
        const Real speed = length(a.v - b.v) + length(a.w) * k.reachA[l] + length(b.w) * k.reachB[l];
        if (!((k.openGap[l] - reach) * invH > speed * Real(1.001) + Real(1e-9))) return false;
    }
    return true;
}

// Whether every impulse of the block is zero.
inline bool softWideQuiet(const SoftWideBlock& k) {
    for (int j = 0; j < k.pointCount; ++j) {
        const SoftWidePoint& p = k.points[j];
        for (int l = 0; l < kSoftLanes; ++l)
            if (p.normalImpulse[l] != 0 || p.tangentImpulse[0][l] != 0 || p.tangentImpulse[1][l] != 0) return false;
    }
    return true;
}

// softWarmStart over the block.
inline void softWideWarmStart(SoftWideBlock& k, SoftBody* bodies, const Mat3* invInertia) {
    if (k.quiet) return;
    SoftWideBodies a, b;
    softWideGather(k.bodyA, bodies, invInertia, a);
    softWideGather(k.bodyB, bodies, invInertia, b);
    for (int j = 0; j < k.pointCount; ++j) {
        SoftWidePoint& p = k.points[j];
        const SoftLaneVec3 impulse = p.normalImpulse * k.normal + p.tangentImpulse[0] * k.tangent[0] +
                                     p.tangentImpulse[1] * k.tangent[1];
        p.totalNormalImpulse += p.normalImpulse;
        softWideApply(k, a, b, p.rA, p.rB, impulse);
    }
    softWideScatter(k.bodyA, a, bodies);
    softWideScatter(k.bodyB, b, bodies);
}

// softSolveFriction over the block: each point's tangents against its current normal impulse.
inline void softWideFriction(SoftWideBlock& k, SoftWideBodies& a, SoftWideBodies& b) {
    for (int j = 0; j < k.pointCount; ++j) {
        SoftWidePoint& p = k.points[j];
        const SoftLaneVec3 vr = softWideRelativeVelocity(a, b, p.rA, p.rB);
        SoftLane t0 = p.tangentImpulse[0] - p.tangentMass[0] * dot(vr, k.tangent[0]);
        SoftLane t1 = p.tangentImpulse[1] - p.tangentMass[1] * dot(vr, k.tangent[1]);
        const SoftLane limit = k.friction * p.normalImpulse;
        const SoftLane norm2 = t0 * t0 + t1 * t1;
        const auto clamp = norm2 > limit * limit;
        SoftLane root;
        for (int l = 0; l < kSoftLanes; ++l) root[l] = std::sqrt(clamp[l] ? norm2[l] : Real(1));
        const SoftLane scale = limit / root;
        t0 = clamp ? t0 * scale : t0;
        t1 = clamp ? t1 * scale : t1;
        const SoftLaneVec3 impulse = (t0 - p.tangentImpulse[0]) * k.tangent[0] + (t1 - p.tangentImpulse[1]) * k.tangent[1];
        p.tangentImpulse[0] = t0;
        p.tangentImpulse[1] = t1;
        softWideApply(k, a, b, p.rA, p.rB, impulse);
    }
}

// A point's normal impulse step on the lanes in `take`: the accumulated impulse clamped at zero,
// the difference applied to both bodies (softSolveContact's clamp); the other lanes keep theirs.
using SoftMask = decltype(SoftLane{} < SoftLane{});
inline SoftMask softEveryLane() { const SoftLane z{}; return z == z; }
inline void softWideNormalStep(const SoftWideBlock& k, SoftWideBodies& a, SoftWideBodies& b, SoftWidePoint& p,
                               SoftLane impulse, SoftMask take) {
    const SoftLane zero{};
    const SoftLane sum = p.normalImpulse + impulse;
    const SoftLane total = take ? (sum > 0 ? sum : zero) : p.normalImpulse;
    impulse = total - p.normalImpulse;
    p.normalImpulse = total;
    p.totalNormalImpulse += impulse;
    softWideApply(k, a, b, p.rA, p.rB, impulse * k.normal);
}

// softSolveContact over the block: each point's normal row, then friction against the normal impulses.
inline void softWideSolve(SoftWideBlock& k, SoftBody* bodies, const Mat3* invInertia, Real invH, Real contactSpeed,
                          bool useBias, bool updateSeparation) {
    if (softWideIdle(k, bodies, invH)) {
        k.stale = k.stale || updateSeparation;
        return;
    }
    updateSeparation = updateSeparation || k.stale;
    k.stale = false;
    SoftWideBodies a, b;
    softWideGather(k.bodyA, bodies, invInertia, a);
    softWideGather(k.bodyB, bodies, invInertia, b);
    const SoftLane zero{}, one = zero + Real(1);
    const SoftLane speedLimit = zero - contactSpeed;
    for (int j = 0; j < k.pointCount; ++j) {
        SoftWidePoint& p = k.points[j];
        if (updateSeparation)
            p.separation = p.baseSeparation + dot(a.dp - b.dp + softWideRotate(a.dq, p.rA) - softWideRotate(b.dq, p.rB), k.normal);
        const SoftLane s = p.separation;
        const SoftLane soft = k.massScale * k.biasRate * s;
        SoftLane bias, massScale, impulseScale;
        if (useBias) {
            bias = s > 0 ? s * invH : soft > speedLimit ? soft : speedLimit;
            massScale = s > 0 ? one : k.massScale;
            impulseScale = s > 0 ? zero : k.impulseScale;
        } else {
            bias = s > 0 ? s * invH : zero;
            massScale = one;
            impulseScale = zero;
        }
        const SoftLane vn = dot(softWideRelativeVelocity(a, b, p.rA, p.rB), k.normal);
        const SoftLane impulse = -p.normalMass * (massScale * vn + bias) - impulseScale * p.normalImpulse;
        softWideNormalStep(k, a, b, p, impulse, softEveryLane());
    }
    softWideFriction(k, a, b);
    k.quiet = softWideQuiet(k);
    softWideScatter(k.bodyA, a, bodies);
    softWideScatter(k.bodyB, b, bodies);
}

// softRestitution over the block.
inline void softWideRestitution(SoftWideBlock& k, SoftBody* bodies, const Mat3* invInertia, Real threshold) {
    if (!k.restitution) return;
    SoftWideBodies a, b;
    softWideGather(k.bodyA, bodies, invInertia, a);
    softWideGather(k.bodyB, bodies, invInertia, b);
    for (int j = 0; j < k.pointCount; ++j) {
        SoftWidePoint& p = k.points[j];
        const auto take = (k.restitutionCoef != 0) & (p.relativeVelocity <= -threshold) & (p.totalNormalImpulse != 0);
        const SoftLane vn = dot(softWideRelativeVelocity(a, b, p.rA, p.rB), k.normal);
        softWideNormalStep(k, a, b, p, -p.normalMass * (vn + k.restitutionCoef * p.relativeVelocity), take);
    }
    k.quiet = softWideQuiet(k);
    softWideScatter(k.bodyA, a, bodies);
    softWideScatter(k.bodyB, b, bodies);
}

// Sequential impulses' velocity rows over the block (pgs_step_hd.h pgsSolveContact): each point's
// normal row towards its target, then friction.
template <class Params>   // PgsParams (pgs_step_hd.h)
inline void pgsWideSolve(SoftWideBlock& k, SoftBody* bodies, const Mat3* invInertia, const Params& q) {
    if (softWideIdle(k, bodies, q.invH)) return;
    SoftWideBodies a, b;
    softWideGather(k.bodyA, bodies, invInertia, a);
    softWideGather(k.bodyB, bodies, invInertia, b);
    const SoftLane zero{};
    for (int j = 0; j < k.pointCount; ++j) {
        SoftWidePoint& p = k.points[j];
        const SoftLane s = p.separation;
        const SoftLane depth = -s - q.slop;
        SoftLane target = depth > 0 ? q.erp * depth * q.invH : zero;
        target = target < q.maxBiasSpeed ? target : zero + q.maxBiasSpeed;
        const SoftLane bounce = -k.restitutionCoef * p.relativeVelocity;
        target = (k.restitutionCoef > 0) & (p.relativeVelocity < -q.restitutionThreshold) & (bounce > target) ? bounce : target;
        target = s > 0 ? -s * q.invH : target;
        const SoftLane vn = dot(softWideRelativeVelocity(a, b, p.rA, p.rB), k.normal);
        softWideNormalStep(k, a, b, p, p.normalMass * (target - vn), softEveryLane());
    }
    softWideFriction(k, a, b);
    k.quiet = softWideQuiet(k);
    softWideScatter(k.bodyA, a, bodies);
    softWideScatter(k.bodyB, b, bodies);
}

// Sequential impulses' split impulse over the block (pgs_step_hd.h pgsSplitContact): push holds
// the pseudo velocities, SoftWidePoint::split the accumulated pseudo impulses.
inline void pgsWideSplit(SoftWideBlock& k, SoftBody* push, const Mat3* invInertia, Real rate, Real slop) {
    bool open = true;   // every lane open (or empty): no position error to take out
    for (int l = 0; l < kSoftLanes; ++l) open = open && (k.manifold[l] < 0 || k.openGap[l] > 0);
    if (open) return;
    SoftWideBodies a, b;
    softWideGather(k.bodyA, push, invInertia, a);
    softWideGather(k.bodyB, push, invInertia, b);
    const SoftLane zero{};
    for (int j = 0; j < k.pointCount; ++j) {
        SoftWidePoint& p = k.points[j];
        const SoftLane depth = -p.separation - slop;
        const SoftLane vn = dot(softWideRelativeVelocity(a, b, p.rA, p.rB), k.normal);
        SoftLane impulse = p.normalMass * (rate * depth - vn);
        const SoftLane sum = p.split + impulse;
        const SoftLane total = depth > 0 ? (sum > 0 ? sum : zero) : p.split;
        impulse = total - p.split;
        p.split = total;
        softWideApply(k, a, b, p.rA, p.rB, impulse * k.normal);
    }
    softWideScatter(k.bodyA, a, push);
    softWideScatter(k.bodyB, b, push);
}

}  // namespace cs
