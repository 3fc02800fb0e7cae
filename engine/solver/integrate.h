// Per-body time integration, shared by the CPU and CUDA backends.
//
// [NSN] eqs. 45 and 63: q+ = q- + h G(q) u+, with G the kinematic map of a rigid body:
//   x+ = x + h v,   q+ = normalize(q + h/2 (0, w) q)   (w in the world frame; [PEG] eq. 10).
// The unconstrained velocity u~ = u- + h M^-1 f_ext integrates gravity explicitly; gyroscopic
// torques are left out (an explicit w x I w term adds energy at large dt).
#pragma once

#include "engine/core/math.h"

namespace cs {

CS_HD Mat3 worldInverseInertia(Quat q, const Mat3& invInertiaLocal) {
    Mat3 r = toMat3(q);
    return r * invInertiaLocal * transpose(r);
}

CS_HD Spatial unconstrainedVelocity(Vec3 v, Vec3 w, Vec3 gravity, Real h) { return Spatial{v + h * gravity, w}; }

CS_HD void integrateBody(Vec3& x, Quat& q, Vec3 v, Vec3 w, Real h) {
    x += h * v;
    Quat dq = Quat{0, w.x, w.y, w.z} * q;
    Real s = Real(0.5) * h;
    q = normalize(Quat{q.w + s * dq.w, q.x + s * dq.x, q.y + s * dq.y, q.z + s * dq.z});
}

}  // namespace cs
