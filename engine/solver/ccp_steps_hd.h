// The steps of the CCP solvers ([CCP] eqs. 10-11; ccp_solvers.h) that both backends take: per
// row, per block and the scalar recurrences, as CS_HD functions. The CPU solvers
// (ccp_problem.cpp, ccp_solvers.cpp) loop over them; the device pipeline
// (engine/exec/pipeline_ccp.h) launches the same functions through the executor, and adds its sums
// in the CPU's order, so on the host executor both give the same bits.
//
// Symbols: x the impulses (gamma, N s), g = N x + p the rows' end-of-step velocity (d of
// section 4, m/s), s_k the block's scale (the mean diagonal of N over it, 1/kg), L APGD's
// Lipschitz estimate of the scaled problem.
#pragma once

#include <cmath>

#include "engine/contact/ccp_cone_hd.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/row_system.h"

namespace cs {

enum CcpBlockKind : int { kCcpBilateral = 0, kCcpUnilateral = 1, kCcpCone = 2 };
constexpr int kCcpColours = 64;   // projected Gauss-Seidel colours (engine/exec/step_hd.h kGpuMaxColours)

// d_i,0 of section 4: Phi / h for a normal row; a bilateral row's bias is already m/s.
CS_HD Real ccpRowOffset(int kind, Real bias, Real h) {
    return kind == int(RowKind::Normal) || kind == int(RowKind::Group) ? bias / h
           : kind == int(RowKind::Bilateral)                            ? bias
                                                                        : Real(0);
}

// g_i = offset_i + C_i x_i + J_i u, with u = u~ + M^-1 J^T x (eq. 9): the gradient of eq. 11.
CS_HD Real ccpRowGradient(const RowSystemView& s, int i, const Spatial* u, Real offset, Real x) {
    return offset + s.compliance[i] * x + gatherRow(s, i, u);
}

// The block's scale s_k: the mean of N's diagonal over its rows (1 where that is not positive).
CS_HD Real ccpBlockScale(const Real* diagonal, int size) {
    Real s = 0;
    for (int k = 0; k < size; ++k) s += diagonal[k];
    s /= size;
    return s > 0 ? s : Real(1);
}

// x_k onto its set C_k: the friction cone (3 rows), R+ (a unilateral row), or the box
// [-limit, limit] of a bilateral row (B_j = R, or the drag's force limit).
CS_HD void ccpProjectBlock(Real* x, int k, int kind, Real mu, Real limit) {
    if (kind == kCcpCone) {
        const Vec3 v = projectFrictionCone(Vec3{x[k], x[k + 1], x[k + 2]}, mu);
        x[k] = v.x;
        x[k + 1] = v.y;
        x[k + 2] = v.z;
    } else if (kind == kCcpUnilateral) {
        x[k] = x[k] > 0 ? x[k] : Real(0);
    } else {
        x[k] = x[k] < -limit ? -limit : (limit < x[k] ? limit : x[k]);
    }
}

CS_HD int ccpBlockSize(int kind) { return kind == kCcpCone ? 3 : 1; }

// The block's squared natural-map residual |s_k (x_k - Pi(x_k - g_k / s_k))|^2 (ccp_cone_hd.h);
// the CCP merit is the square root of its sum over the blocks (m/s).
CS_HD Real ccpBlockMeritSq(const Real* x, const Real* g, int k, int kind, Real s, Real mu, Real limit) {
    if (kind == kCcpCone)
        return lengthSq(coneNaturalResidual(Vec3{x[k], x[k + 1], x[k + 2]}, Vec3{g[k], g[k + 1], g[k + 2]}, s, mu));
    Real y = x[k] - g[k] / s;
    y = kind == kCcpUnilateral ? (y > 0 ? y : Real(0)) : (y < -limit ? -limit : (limit < y ? limit : y));
    const Real r = s * (x[k] - y);
    return r * r;
}

// u += M^-1 J_i^T dx on the row's dynamic bodies (static ones are skipped, so blocks of one
// Gauss-Seidel colour, which share no dynamic body, never write the same body).
CS_HD void ccpAddImpulse(const RowSystemView& s, int row, Real dx, Spatial* u) {
    const int a = s.bodyA[row], b = s.bodyB[row];
    if (a >= 0 && s.invMass[a] > 0) u[a] = u[a] + dx * s.invMassJacobianA[row];
    if (b >= 0 && s.invMass[b] > 0) u[b] = u[b] + dx * s.invMassJacobianB[row];
    if (!s.bodyC) return;
    const int c = s.bodyC[row], d = s.bodyD[row];
    if (c >= 0 && s.invMass[c] > 0) u[c] = u[c] + dx * s.invMassJacobianC[row];
    if (d >= 0 && s.invMass[d] > 0) u[d] = u[d] + dx * s.invMassJacobianD[row];
}

// One projected Gauss-Seidel block at rows k .. k + size - 1: g_k from the current velocities,
// x_k <- Pi(x_k - step g_k), and u follows the change (Tasora and Anitescu's scaled iteration).
CS_HD void ccpGaussSeidelBlock(const RowSystemView& s, const Real* offset, int k, int kind, Real step, Real mu,
                               Real limit, Real* x, Spatial* u) {
    const int size = ccpBlockSize(kind);
    const int a = s.bodyA[k], b = s.bodyB[k];
    bool onePair = !s.bodyC && a != b;   // every row on the same two distinct bodies
    for (int r = 1; r < size; ++r) onePair = onePair && s.bodyA[k + r] == a && s.bodyB[k + r] == b;
    if (onePair) {
        // The same sums as below in the same order, with the two bodies' velocities held in
        // locals: read once, written once, instead of once per row.
        const Spatial zero{{0, 0, 0}, {0, 0, 0}};
        const bool moveA = a >= 0 && s.invMass[a] > 0, moveB = b >= 0 && s.invMass[b] > 0;
        Spatial ua = a >= 0 ? u[a] : zero, ub = b >= 0 ? u[b] : zero;
        Real old[3];
        for (int r = 0; r < size; ++r) {
            const int i = k + r;
            Real y = 0;
            if (a >= 0) y += dot(s.jacobianA[i], ua);
            if (b >= 0) y += dot(s.jacobianB[i], ub);
            old[r] = x[i];
            x[i] = x[i] - step * (offset[i] + s.compliance[i] * x[i] + y);
        }
        ccpProjectBlock(x, k, kind, mu, limit);
        for (int r = 0; r < size; ++r) {
            const Real dx = x[k + r] - old[r];
            if (moveA) ua = ua + dx * s.invMassJacobianA[k + r];
            if (moveB) ub = ub + dx * s.invMassJacobianB[k + r];
        }
        if (moveA) u[a] = ua;
        if (moveB) u[b] = ub;
        return;
    }
    Real old[3];
    for (int r = 0; r < size; ++r) {
        old[r] = x[k + r];
        x[k + r] = x[k + r] - step * ccpRowGradient(s, k + r, u, offset[k + r], x[k + r]);
    }
    ccpProjectBlock(x, k, kind, mu, limit);
    for (int r = 0; r < size; ++r) ccpAddImpulse(s, k + r, x[k + r] - old[r], u);
}

// ---- APGD's scalar steps (Mazhar, Heyn, Tasora, Negrut 2015; ccp_solvers.cpp) ----

// Nesterov's theta_{k+1} = (-theta^2 + theta sqrt(theta^2 + 4)) / 2 and the momentum
// beta = theta (1 - theta) / (theta^2 + theta_{k+1}).
CS_HD Real apgdThetaNext(Real theta) { return Real(0.5) * (-theta * theta + theta * std::sqrt(theta * theta + 4)); }
CS_HD Real apgdBeta(Real theta, Real thetaNext) { return theta * (1 - theta) / (theta * theta + thetaNext); }

// The step is accepted when f(x_new) <= f(y) + g_y.(x_new - y) + L/2 |x_new - y|_S^2 (the
// quadratic model of the scaled problem majorizes f), up to the rounding of f near convergence.
CS_HD bool apgdSufficientDecrease(Real f, Real fy, Real gStep, Real lipschitz, Real dist) {
    const Real slack = Real(1e-12) * (std::fabs(f) + std::fabs(fy));
    return f <= fy + gStep + Real(0.5) * lipschitz * dist + slack;
}

// Caps of the APGD iteration, the same on both backends: at most kApgdMaxDoublings doublings of
// L in a row (the step is then taken), and at most 2 x iterations trial steps in all.
constexpr int kApgdMaxDoublings = 60;
CS_HD int apgdMaxTrials(int iterations) { return 2 * iterations; }

// ---- Newton over the relaxed rows, globalized (ccp_solvers.cpp newtonOnRelaxedRows) ----

// A Newton step is kept when it removes at least a tenth of the CCP merit: m_new < 0.9 m. A step
// that lowers the merit by less is as good as a stall (the lagged direction near a switch of
// sticking and sliding makes many such steps), and the fallback is tried from its iterate.
CS_HD Real ccpNewtonKeep(Real merit) { return Real(0.9) * merit; }
// APGD iterations of one fallback: as many as the rejected step's linear iterations, so a
// fallback costs about what the Newton step did (one or two products N x per APGD iteration, one
// per linear iteration).
CS_HD int ccpFallbackIterations(int linearIterations) { return linearIterations > 1 ? linearIterations : 1; }

}  // namespace cs
