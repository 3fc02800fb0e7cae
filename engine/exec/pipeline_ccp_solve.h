// The CCP model's solve stage on the pipeline for PJ, PGS and APGD (pipeline_ccp.h): the problem
// of eq. 10 from the rows (offsets, p, the blocks' scales, the warm impulses projected onto the
// cones), the solver, and u = u~ + M^-1 J^T gamma of the impulses kept, as
// engine/solver/ccp_solvers.cpp solveCcp does on the CPU. APGD is here too.
#pragma once

#include "engine/exec/pipeline_ccp.h"

namespace cs {

// APGD (ccp_solvers.cpp apgd, the scaled problem; ccp_steps_hd.h's scalar steps). One pass of the
// loop is one trial x_new = Pi(y - S^-1 g_y / L): taken when the quadratic model majorizes f
// (then the momentum step, the least-merit iterate kept, g_y of the new y), otherwise L doubles.
// gate: the whole solve is skipped where *gate is 0 (the Newton fallback; ctl->active must then
// be 0 beforehand).
template <class Exec>
void recordApgd(Exec& ex, PipelineData<Exec>& d, const CcpSolveView& v, const CcpSettings& settings,
                const int* gate = nullptr) {
    CcpControl* ctl = v.ctl;
    const int* rows = &v.solve.c->rowCount;
    const int* contacts = &v.solve.c->keptContacts;
    const int rowCapacity = v.solve.rowCapacity;
    const Real *scale = v.scale, *mu = v.mu, *linear = v.linear;
    Real *lambda = d.lambda.data(), *g = d.ccpG.data(), *x = d.ccpX.data(), *y = d.ccpY.data(), *gy = d.ccpGy.data();
    Real *xn = d.ccpTrial.data(), *best = d.ccpBest.data(), *history = d.ccpHistory.data();
    const Real tolerance = settings.tolerance;
    const int iterations = settings.iterations;

    // L_0 = |S^-1/2 (g(x_0 + S^-1/2 1) - g(x_0))| / sqrt(n); the start's merit; y = x_0.
    ex.forEach(rowCapacity, rows, gate, [=] CS_LAMBDA(int i) {
        x[i] = lambda[i];
        xn[i] = x[i] + Real(1) / std::sqrt(scale[i]);
    });
    recordCcpGradient(ex, d, v, x, g, gate);
    recordCcpGradient(ex, d, v, xn, gy, gate);
    ex.sum(rows, gate, kSerialSum, &ctl->num, [=] CS_LAMBDA(int i) { return (gy[i] - g[i]) * (gy[i] - g[i]) / scale[i]; });
    recordCcpMeritSq(ex, v, x, g, &ctl->meritSq, gate);
    ex.forEach(rowCapacity, rows, gate, [=] CS_LAMBDA(int i) {
        best[i] = x[i];
        y[i] = x[i];
        gy[i] = g[i];
    });
    ex.sum(rows, gate, kSerialSum, &ctl->fx, [=] CS_LAMBDA(int i) { return y[i] * (gy[i] + linear[i]); });
    ex.serial(gate, [=] CS_LAMBDA() {
        const int n = *rows;
        ctl->lipschitz = std::sqrt(ctl->num / Real(n));
        if (!(ctl->lipschitz > 0)) ctl->lipschitz = 1;
        ctl->bestMerit = ctl->merit = std::sqrt(ctl->meritSq);
        history[0] = ctl->bestMerit;
        ctl->fy = Real(0.5) * ctl->fx;
        ctl->theta = 1;
        ctl->iterations = ctl->doublings = 0;
        ctl->active = ctl->bestMerit > tolerance && iterations > 0;
    });

    for (int trial = 0; trial < apgdMaxTrials(iterations) && !ex.stopped(&ctl->active); ++trial) {
        ex.forEach(rowCapacity, contacts, &ctl->active, [=] CS_LAMBDA(int c) {
            const int k = 3 * c;
            for (int i = k; i < k + 3; ++i) xn[i] = y[i] - gy[i] / (scale[i] * ctl->lipschitz);
            ccpProjectBlock(xn, k, kCcpCone, mu[k + 1], Real(0));
        });
        recordCcpGradient(ex, d, v, xn, g, &ctl->active);
        ex.sum(rows, &ctl->active, kSerialSum, &ctl->gStep, [=] CS_LAMBDA(int i) { return gy[i] * (xn[i] - y[i]); });
        ex.sum(rows, &ctl->active, kSerialSum, &ctl->dist,
               [=] CS_LAMBDA(int i) { return scale[i] * (xn[i] - y[i]) * (xn[i] - y[i]); });
        ex.sum(rows, &ctl->active, kSerialSum, &ctl->fx, [=] CS_LAMBDA(int i) { return xn[i] * (g[i] + linear[i]); });
        ex.serial(&ctl->active, [=] CS_LAMBDA() {
            const Real f = Real(0.5) * ctl->fx;
            ctl->accepted = apgdSufficientDecrease(f, ctl->fy, ctl->gStep, ctl->lipschitz, ctl->dist) ||
                            ctl->doublings >= kApgdMaxDoublings;
            ctl->refresh = 0;
            if (ctl->accepted) {
                ctl->doublings = 0;
            } else {
                ctl->lipschitz *= 2;
                ctl->doublings++;
            }
        });
        ex.sum(rows, &ctl->accepted, kSerialSum, &ctl->progress, [=] CS_LAMBDA(int i) { return gy[i] * (xn[i] - x[i]); });
        recordCcpMeritSq(ex, v, xn, g, &ctl->meritSq, &ctl->accepted);
        ex.serial(&ctl->accepted, [=] CS_LAMBDA() {
            const Real m = std::sqrt(ctl->meritSq);
            const Real thetaNext = apgdThetaNext(ctl->theta);
            ctl->beta = apgdBeta(ctl->theta, thetaNext);
            history[++ctl->iterations] = m;
            ctl->improved = m < ctl->bestMerit;
            if (ctl->improved) ctl->bestMerit = m;
            ctl->restart = ctl->progress > 0;   // gradient restart
            ctl->theta = ctl->restart ? Real(1) : thetaNext;
            ctl->lipschitz *= Real(0.9);
            ctl->active = ctl->iterations < iterations && ctl->bestMerit > tolerance;
            ctl->refresh = ctl->active;
        });
        ex.forEach(rowCapacity, rows, &ctl->accepted, [=] CS_LAMBDA(int i) {
            if (ctl->improved) best[i] = xn[i];
            y[i] = ctl->restart ? xn[i] : xn[i] + ctl->beta * (xn[i] - x[i]);
            x[i] = xn[i];
        });
        recordCcpGradient(ex, d, v, y, gy, &ctl->refresh);
        ex.sum(rows, &ctl->refresh, kSerialSum, &ctl->fx, [=] CS_LAMBDA(int i) { return y[i] * (gy[i] + linear[i]); });
        ex.serial(&ctl->refresh, [=] CS_LAMBDA() { ctl->fy = Real(0.5) * ctl->fx; });
        ex.serial(nullptr, [=] CS_LAMBDA() { ctl->accepted = ctl->refresh = 0; });
    }
    ex.forEach(rowCapacity, rows, gate, [=] CS_LAMBDA(int i) { lambda[i] = best[i]; });
}

// The whole solve stage for the CCP model with PJ, PGS or APGD.
template <class Exec>
void recordCcpSolve(Exec& ex, PipelineData<Exec>& d, const SolverSettings& settings, Real h, bool sorted) {
    CcpSolveView v{};
    v.solve = recordSolveSetup(ex, d, sorted, false);
    v.sys = v.solve.sys;
    v.sys.compliance = d.softness.data();
    v.sys.jmjDiagonal = nullptr;   // N_kk with the softness (CcpProblem::setup)
    v.ctl = d.ccp.data();
    v.offset = d.ccpOffset.data();
    v.linear = d.ccpLinear.data();
    v.scale = d.ccpScale.data();
    v.mu = d.mu.data();
    StepCounters* c = v.solve.c;
    CcpControl* ctl = v.ctl;
    const RowSystemView s = v.sys;
    const int *kind = d.kind.data(), *rows = &c->rowCount;
    const Real *bias = d.bias.data(), *mu = v.mu;
    Real *offset = d.ccpOffset.data(), *linear = d.ccpLinear.data(), *scale = d.ccpScale.data(), *lambda = d.lambda.data();
    const Spatial* unconstrained = d.unconstrained.data();
    // d_i,0, the blocks' scales s_c, p = J u~ + d_0, the warm impulses onto the cones.
    ex.forEach(d.rowCapacity, rows, nullptr, [=] CS_LAMBDA(int i) { offset[i] = ccpRowOffset(kind[i], bias[i], h); });
    ex.forEach(d.rowCapacity, &c->keptContacts, nullptr, [=] CS_LAMBDA(int k) {
        Real diagonal[3];
        for (int r = 0; r < 3; ++r) diagonal[r] = rowDiagonal(s, 3 * k + r);
        const Real sc = ccpBlockScale(diagonal, 3);
        for (int r = 0; r < 3; ++r) scale[3 * k + r] = sc;
        ccpProjectBlock(lambda, 3 * k, kCcpCone, mu[3 * k + 1], Real(0));
    });
    ex.forEach(d.rowCapacity, rows, nullptr,
               [=] CS_LAMBDA(int i) { linear[i] = ccpRowGradient(s, i, unconstrained, offset[i], Real(0)); });
    ex.serial(nullptr, [=] CS_LAMBDA() { ctl->iterations = 0; });
    switch (settings.ccp.solver) {
    case CcpSolverType::Jacobi: recordCcpJacobi(ex, d, v, settings.ccp); break;
    case CcpSolverType::GaussSeidel: recordCcpGaussSeidel(ex, d, v, settings.ccp); break;
    default: recordApgd(ex, d, v, settings.ccp); break;
    }
    // u = u~ + M^-1 J^T gamma (eq. 9) and the merit of the impulses kept.
    recordCcpGradient(ex, d, v, lambda, d.ccpG.data(), nullptr);
    recordCcpMeritSq(ex, v, lambda, d.ccpG.data(), &ctl->meritSq, nullptr);
    ex.serial(nullptr, [=] CS_LAMBDA() {
        ctl->merit = std::sqrt(ctl->meritSq);
        c->merit = ctl->merit;
        c->newtonIterations = 0;
        c->linearIterations = ctl->iterations;
    });
}

// The number of CCP merit entries a step records (the history buffer's length).
inline int ccpHistoryLength(const CcpSettings& settings) { return settings.iterations + 1; }

}  // namespace cs
