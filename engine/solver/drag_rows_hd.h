// The mouse drag's three rows as CS_HD functions, shared by the CPU (joint_rows.cpp
// buildDragRows, engine/fem/fem_drag.cpp buildFemDragRows) and the step pipeline
// (engine/exec/pipeline_joints.h). Their rule and its derivation are in joint_rows.cpp and
// fem_drag.h: per world axis e_a an implicit spring-damper, k = m w^2, c = 2 zeta m w,
//     f_a = -(k d_a + (k h + c) v_a)                       (the force if the point kept its velocity)
//     below |f| <= F:  bias = k d_a / (k h + c), gamma = 1 / (h (k h + c)),
//                      |lambda_a| <= h sqrt(f_a^2 + (F^2 - |f|^2) / 3)
//     above:           a fixed impulse target lambda_a = h F f_a / |f|, gamma = 1e5 / m,
//                      bias = -2 gamma lambda_a, |lambda_a| <= |h F f_a / |f||
// Above the limit the bias aims at twice the target, so the row's minimum map puts it at its
// bound (constraint_rows.h limitedRowAtBound): the Newton step sets lambda_a to the target in one
// iteration, the row decoupled from the others. With bias = -gamma lambda_a the row was a stiff
// bilateral one inside its box, its merit gamma (lambda - lambda_a) (gamma = 1e5 / m) shrank by
// the damped step's factor 4 per iteration: a pyramid box dragged ran every step at the Newton
// cap with a merit of 0.2 m/s or more.
// A rigid body's m is the effective mass at the point along e_a (1 / (1/m + (r x e) . I^-1 (r x e))),
// a deformable body's the free nodes' mass M (springMass), its gamma's m the point's m_eff.
#pragma once

#include <cmath>

#include "engine/core/math.h"

namespace cs {

// The drag of one step, as the pipeline holds it.
struct DragParams {
    int body;                       // rigid body dragged, -1: none
    int nodes[3];                   // FEM drag: the triangle's nodes as solver bodies (bodies + node)
    Vec3 weights;                   // FEM drag: barycentric weights of the point
    Vec3 localPoint;                // rigid drag: in the body's COM frame
    Vec3 target;
    Real frequencyHz, dampingRatio, maxForce;   // DragSettings
    Real springMass, effectiveMass;             // FEM drag: femDragSpringMass, femDragEffectiveMass
};

// Rows a = 0, 1, 2 along the world axes; column k of row a is jacobian[a][k] (rigid: k = 0 only;
// FEM: the three nodes).
struct DragRows {
    Spatial jacobian[3][3];
    Real bias[3], softness[3], bound[3];
};

// One axis of the rule above, given its force estimate f_a, |f| and the limit F.
CS_HD void dragAxisRow(Real fa, Real norm, Real limit, Real k, Real c, Real da, Real saturatedGamma, Real h,
                       Real& bias, Real& gamma, Real& bound) {
    if (norm > limit) {
        const Real target = h * limit * fa / norm;
        gamma = saturatedGamma;
        bias = -2 * gamma * target;
        bound = std::fabs(target);
    } else {
        bias = k * da / (k * h + c);
        gamma = Real(1) / (h * (k * h + c));
        bound = h * std::sqrt(fa * fa + (limit * limit - norm * norm) / 3);
    }
}

// A rigid body's drag: the point r = R localPoint, d = x + r - target, its velocity v + w x r;
// invMass and invInertia (world) those of the step's solve.
CS_HD void rigidDragRows(const DragParams& p, Vec3 pos, Quat rot, Vec3 linVel, Vec3 angVel, Real invMass,
                         const Mat3& invInertia, Real h, DragRows& out) {
    const Vec3 r = rotate(rot, p.localPoint);
    const Vec3 d = pos + r - p.target;
    const Vec3 v = linVel + cross(angVel, r);
    const Real omega = Real(2 * M_PI) * p.frequencyHz;
    const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    Real invEff[3], k[3], c[3];
    Vec3 f{0, 0, 0};
    for (int a = 0; a < 3; ++a) {
        const Vec3 re = cross(r, axes[a]);
        invEff[a] = invMass + dot(re, invInertia * re);
        k[a] = omega * omega / invEff[a];
        c[a] = 2 * p.dampingRatio * omega / invEff[a];
        f[a] = -(k[a] * d[a] + (k[a] * h + c[a]) * v[a]);
    }
    const Real norm = length(f);
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    for (int a = 0; a < 3; ++a) {
        dragAxisRow(f[a], norm, p.maxForce, k[a], c[a], d[a], Real(1e5) * invEff[a], h, out.bias[a], out.softness[a],
                    out.bound[a]);
        out.jacobian[a][0] = Spatial{axes[a], cross(r, axes[a])};
        out.jacobian[a][1] = out.jacobian[a][2] = zero;
    }
}

// A deformable body's drag: the point p = sum_i w_i x_i of three nodes, its velocity likewise.
CS_HD void femDragRows(const DragParams& p, const Vec3 x[3], const Vec3 xdot[3], Real h, DragRows& out) {
    Vec3 point{0, 0, 0}, v{0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        point += p.weights[i] * x[i];
        v += p.weights[i] * xdot[i];
    }
    const Vec3 d = point - p.target;
    const Real omega = Real(2 * M_PI) * p.frequencyHz;
    const Real k = p.springMass * omega * omega, c = 2 * p.dampingRatio * p.springMass * omega;
    const Vec3 f = -(k * d + (k * h + c) * v);
    const Real norm = length(f);
    for (int a = 0; a < 3; ++a) {
        Vec3 e{0, 0, 0};
        e[a] = 1;
        dragAxisRow(f[a], norm, p.maxForce, k, c, d[a], Real(1e5) / p.effectiveMass, h, out.bias[a], out.softness[a],
                    out.bound[a]);
        for (int i = 0; i < 3; ++i) out.jacobian[a][i] = Spatial{p.weights[i] * e, {0, 0, 0}};
    }
}

}  // namespace cs
