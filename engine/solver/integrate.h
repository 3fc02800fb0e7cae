// Per-body time integration, shared by the CPU and CUDA backends.
//
// [NSN] eqs. 45 and 63: q+ = q- + h G(q) u+, with G the kinematic map of a rigid body:
//   x+ = x + h v,   q+ = normalize(q + h/2 (0, w) q)   (w in the world frame; [PEG] eq. 10).
// (the angular rate is u+ with its gyroscopic share taken at the midpoint: rotationRate below).
// The normalized update turns q by the Cayley rotation cay(h w^) = (1 - h/2 w^)^-1 (1 + h/2 w^),
// the rotation by 2 atan(h |w| / 2) about w (the unit quaternion (1, h w / 2) / |(1, h w / 2)|).
//
// The unconstrained velocity ([NSN] eq. 54) is u~ = u- + h M^-1 f(q-, u-), with gravity and the
// gyroscopic torque -w x (I w). Gravity is integrated explicitly. The gyroscopic term is not:
// explicitly, w x I w adds energy every step and diverges at large spin. It is integrated
// implicitly in the body frame (as Bullet's implicit gyroscopic force and Catto's GDC 2015
// "Numerical methods" do), by the implicit midpoint rule, with L = I w the body-frame momentum:
//     I (w1 - w0) + h wm x I wm = 0,   wm = (w0 + w1) / 2,                       (1)
// which is L1 - L0 = -(h/2) wm x (L0 + L1), i.e. L1 = cay(-h wm^) L0: the momentum turned back by
// the rotation cay(h wm^), and 1/2 w.I w unchanged (the midpoint rule keeps quadratic invariants).
// For the world-frame momentum R L to stay put as well, the body must turn by that same
// cay(h wm^) over the step, not by cay(h w1^): so q is integrated at the rate
//     u+ - (w1 - wm)   (rotationRate; world frame, w1 = u~'s angular part),
// which is wm for a free body and leaves the constraint impulses' share of u+ at full rate.
// A free body then keeps R L and 1/2 w.I w exactly (to the Newton tolerance). Measured on the
// brick of tests/test_gyroscopic.cpp at h = 1/120 s: backward Euler, I (w1 - w0) + h w1 x I w1 = 0
// (Bullet, Catto), loses 1.6% of |L| and 2.2% of the energy per second; (1) with q turned by
// cay(h w1^) keeps |L| and the energy but turns L by 1.7e-2 rad back and forth; (1) as done
// here keeps all three to 2e-12 over 100 s.
//
// Equation (1) is solved by Newton's method from wm = w0 (3x3, a few iterations); whatever the
// iteration reached, L1 is then set to cay(-h wm^) L0 for the last wm, so |L| is kept exactly even
// where Newton would not converge (huge h |w|): the step is stable at any spin.
#pragma once

#include "engine/core/math.h"

namespace cs {

#if defined(CS_REAL_FLOAT)
constexpr Real kGyroscopicTolerance = Real(1e-6);   // relative, on the residual of (1)
#else
constexpr Real kGyroscopicTolerance = Real(1e-14);
#endif
constexpr int kGyroscopicIterations = 8;

CS_HD Mat3 worldInverseInertia(Quat q, const Mat3& invInertiaLocal) {
    Mat3 r = toMat3(q);
    return r * invInertiaLocal * transpose(r);
}

// x = A^-1 b for a 3x3 A by Cramer's rule (the Newton matrix of (1) is not symmetric).
CS_HD Vec3 solve3(const Mat3& a, Vec3 b) {
    Vec3 c0{a.m[0][0], a.m[1][0], a.m[2][0]}, c1{a.m[0][1], a.m[1][1], a.m[2][1]}, c2{a.m[0][2], a.m[1][2], a.m[2][2]};
    Real det = dot(c0, cross(c1, c2));
    return Vec3{dot(b, cross(c1, c2)), dot(c0, cross(b, c2)), dot(c0, cross(c1, b))} / det;
}

// A^-1 of an invertible 3x3 A (the adjugate over the determinant).
CS_HD Mat3 inverse3(const Mat3& a) {
    Vec3 r0{a.m[0][0], a.m[0][1], a.m[0][2]}, r1{a.m[1][0], a.m[1][1], a.m[1][2]}, r2{a.m[2][0], a.m[2][1], a.m[2][2]};
    Vec3 c0 = cross(r1, r2), c1 = cross(r2, r0), c2 = cross(r0, r1);   // columns of the inverse, times det
    Real inv = Real(1) / dot(r0, c0);
    return Mat3{{{inv * c0.x, inv * c1.x, inv * c2.x}, {inv * c0.y, inv * c1.y, inv * c2.y}, {inv * c0.z, inv * c1.z, inv * c2.z}}};
}

// v rotated by cay(h w^) (see the header).
CS_HD Vec3 cayleyRotate(Vec3 w, Real h, Vec3 v) {
    Real s = Real(0.5) * h;
    return rotate(normalize(Quat{1, s * w.x, s * w.y, s * w.z}), v);
}

// One torque-free step (1) of a body at orientation q from angular velocity w (world frame).
struct GyroscopicStep {
    Vec3 angVel;     // w1, world frame: u~'s angular part
    Vec3 rotation;   // wm, world frame: the rate that turns a free body over the step
};

CS_HD GyroscopicStep gyroscopicStep(Vec3 w, Quat q, const Mat3& invInertiaLocal, Real h) {
    const Mat3 inertia = inverse3(invInertiaLocal);  // I, body frame
    const Vec3 w0 = rotateInv(q, w);                 // body frame
    const Vec3 l0 = inertia * w0;
    Vec3 wm = w0;
    for (int it = 0; it < kGyroscopicIterations; ++it) {
        // (1) in wm:  g = 2 I (wm - w0) + h wm x I wm = 0,   dg/dwm = 2 I + h (wm^ I - (I wm)^)
        Vec3 lm = inertia * wm;
        Vec3 g = Real(2) * (lm - l0) + h * cross(wm, lm);
        if (!(length(g) > kGyroscopicTolerance * length(l0))) break;
        Mat3 jacobian = Real(2) * inertia + h * (skew(wm) * inertia + Real(-1) * skew(lm));
        wm = wm - solve3(jacobian, g);
    }
    const Vec3 l1 = cayleyRotate(wm, -h, l0);        // L1 = cay(-h wm^) L0: |L1| = |L0|
    // w1 = I^-1 L1 in the end-of-step body frame, to the world by R1 = R0 cay(h wm^).
    return GyroscopicStep{rotate(q, cayleyRotate(wm, h, invInertiaLocal * l1)), rotate(q, wm)};
}

// u~ of [NSN] eq. 54: gravity explicitly, the gyroscopic torque by (1).
CS_HD Spatial unconstrainedVelocity(Vec3 v, Vec3 w, Quat q, const Mat3& invInertiaLocal, Vec3 gravity, Real h) {
    return Spatial{v + h * gravity, gyroscopicStep(w, q, invInertiaLocal, h).angVel};
}

// The rate at which q turns over a step that ends at angular velocity angVelEnd (u+) and started
// at angVelStart and q (u-, q-): u+ - (w1 - wm) of the header. Recomputes the step of
// unconstrainedVelocity from the same u-, q- (cheaper than keeping it per body between stages).
CS_HD Vec3 rotationRate(Vec3 angVelEnd, Vec3 angVelStart, Quat q, const Mat3& invInertiaLocal, Real h) {
    GyroscopicStep g = gyroscopicStep(angVelStart, q, invInertiaLocal, h);
    return angVelEnd - (g.angVel - g.rotation);
}

CS_HD void integrateBody(Vec3& x, Quat& q, Vec3 v, Vec3 w, Real h) {
    x += h * v;
    Quat dq = Quat{0, w.x, w.y, w.z} * q;
    Real s = Real(0.5) * h;
    q = normalize(Quat{q.w + s * dq.w, q.x + s * dq.x, q.y + s * dq.y, q.z + s * dq.z});
}

}  // namespace cs
