// Newton over the CCP model's relaxed rows on the step pipeline, globalized by an APGD fallback,
// as engine/solver/ccp_solvers.cpp newtonOnRelaxedRows runs it on the CPU ([CCP] eqs. 5d, 7, 11).
//
// Each outer iteration: one Newton iteration of pipeline_newton.h over the rows (linearize at
// (u, lambda), the linear solve, the damped step), then the CCP merit m of the new impulses. The
// step is kept when m < ccpNewtonKeep(m_before) (ccp_steps_hd.h); otherwise the impulses go back
// to those before the step unless m < m_before, and ccpFallbackIterations APGD iterations
// (pipeline_ccp_solve.h recordApgd, gated) are taken from them, projected onto the cones; when
// APGD improves on neither iterate, the Newton step is taken after all. The loop stops when the CCP merit is below ccp.tolerance. Every decision is a serial step on flags
// in CcpControl (no host round trip); on the host executor the result is the CPU's bit for bit
// (tests/test_ccp_pipeline.cpp), the Newton part being pipeline_newton.h's and the CCP part
// pipeline_ccp.h's, each of which gives the CPU's bits.
#pragma once

#include "engine/exec/pipeline_ccp_solve.h"

namespace cs {

// The CCP model with the Newton iteration (and its fallback) rather than a first-order solver.
inline bool ccpNewtonSolve(const SolverSettings& s) {
    return s.contactModel == ContactModelType::CCP && s.ccp.solver == CcpSolverType::Newton;
}

// The merit history buffer's length for the fallback's APGD (its entries are not reported).
inline int ccpFallbackHistoryLength(const SolverSettings& s) { return ccpFallbackIterations(s.linearIterations) + 1; }

template <class Exec>
void recordCcpNewton(Exec& ex, PipelineData<Exec>& d, const SolverSettings& settings, Real h, bool sorted) {
    const bool gaussSeidel = settings.linearSolver == LinearSolverType::GaussSeidel;
    const SolveView nv = recordSolveSetup(ex, d, sorted, gaussSeidel);
    StepCounters* c = nv.c;
    if (gaussSeidel) recordColouring(ex, d, nv);

    RowEvalView e = rowEvalView(d, settings, h);
    SolverSettings one = settings;   // one Newton iteration at a time, as the CPU calls solveNewton
    one.newtonIterations = 1;
    one.farNewtonIterations = 0;   // one iteration: no far Newton cap
    one.newtonTolerance = 0;

    // The CCP problem of the rows (recordCcpSolve's setup, the warm impulses not projected).
    CcpSolveView v{};
    v.solve = nv;
    v.sys = nv.sys;
    v.sys.compliance = d.softness.data();
    v.sys.jmjDiagonal = nullptr;
    v.ctl = d.ccp.data();
    v.offset = d.ccpOffset.data();
    v.linear = d.ccpLinear.data();
    v.scale = d.ccpScale.data();
    v.mu = d.mu.data();
    CcpControl* ctl = v.ctl;
    {
        const RowSystemView s = v.sys;
        const int* kind = d.kind.data();
        const Real* bias = d.bias.data();
        Real *offset = d.ccpOffset.data(), *linear = d.ccpLinear.data(), *scale = d.ccpScale.data();
        const Spatial* unconstrained = d.unconstrained.data();
        ex.forEach(d.rowCapacity, &c->rowCount, nullptr, [=] CS_LAMBDA(int i) { offset[i] = ccpRowOffset(kind[i], bias[i], h); });
        ex.forEach(d.rowCapacity, &c->keptContacts, nullptr, [=] CS_LAMBDA(int k) {
            Real diagonal[3];
            for (int r = 0; r < 3; ++r) diagonal[r] = rowDiagonal(s, 3 * k + r);
            const Real sc = ccpBlockScale(diagonal, 3);
            for (int r = 0; r < 3; ++r) scale[3 * k + r] = sc;
        });
        ex.forEach(d.rowCapacity, &c->rowCount, nullptr,
                   [=] CS_LAMBDA(int i) { linear[i] = ccpRowGradient(s, i, unconstrained, offset[i], Real(0)); });
    }
    Real *lambda = d.lambda.data(), *lambdaStart = d.lambdaStart.data(), *g = d.ccpG.data();
    Real *compliance = d.compliance.data(), *rhs = d.rhs.data(), *dlambda = d.dlambda.data();
    const Real *residual = d.residual.data(), *maxImpulse = d.maxImpulse.data(), *mu = d.mu.data();
    const Real eps = settings.regularization, damping = settings.damping, tolerance = settings.ccp.tolerance;
    CcpSettings fallback = settings.ccp;
    fallback.iterations = ccpFallbackIterations(settings.linearIterations);

    // The CCP merit of the warm impulses (u = u~ + M^-1 J^T lambda on the way).
    recordCcpGradient(ex, d, v, lambda, g, nullptr);
    recordCcpMeritSq(ex, v, lambda, g, &ctl->meritSq, nullptr);
    const Real linearTolerance = settings.linearTolerance;   // recordLinearSolve reads it from the counters
    ex.serial(nullptr, [=] CS_LAMBDA() {
        ctl->merit = std::sqrt(ctl->meritSq);
        ctl->outer = c->rowCount > 0 && ctl->merit > tolerance;
        ctl->fallbacks = ctl->outerIterations = 0;
        c->linearIterations = 0;
        c->linearTolerance = linearTolerance;
    });
    for (int k = 0; k < settings.newtonIterations && !ex.stopped(&ctl->outer); ++k) {
        // One Newton iteration (pipeline_newton.h recordSolve's body, from a fresh linearization).
        ex.serial(nullptr, [=] CS_LAMBDA() {   // ungated: a recorded graph runs every iteration's shape
            c->newtonActive = ctl->outer;
            ctl->before = ctl->merit;
        });
        recordVelocities(ex, d, nv, &ctl->outer);
        recordEvaluate(ex, d, nv, e, one, 0);
        ex.forEach(d.rowCapacity, &c->rowCount, &c->newtonActive, [=] CS_LAMBDA(int i) {
            compliance[i] += eps;
            rhs[i] = -residual[i];
            dlambda[i] = 0;
        });
        recordLinearSolve(ex, d, nv, settings);
        ex.forEach(d.rowCapacity, &c->rowCount, &ctl->outer, [=] CS_LAMBDA(int i) { lambdaStart[i] = lambda[i]; });
        ex.forEach(d.rowCapacity, &c->rowCount, &c->newtonActive, [=] CS_LAMBDA(int i) {
            const Real x = lambdaStart[i] + damping * dlambda[i];   // std::clamp(x, -max, max)
            lambda[i] = x < -maxImpulse[i] ? -maxImpulse[i] : (maxImpulse[i] < x ? maxImpulse[i] : x);
        });
        // The CCP merit of the step; kept, or the fallback from the better of the two iterates.
        recordCcpGradient(ex, d, v, lambda, g, &ctl->outer);
        recordCcpMeritSq(ex, v, lambda, g, &ctl->meritSq, &ctl->outer);
        ex.serial(&ctl->outer, [=] CS_LAMBDA() {
            ctl->merit = std::sqrt(ctl->meritSq);
            ctl->fallback = !(ctl->merit < ccpNewtonKeep(ctl->before));
            ctl->revert = ctl->fallback && !(ctl->merit < ctl->before);
            ctl->start = ctl->merit < ctl->before ? ctl->merit : ctl->before;
            ctl->fallbacks += ctl->fallback;
        });
        ex.forEach(d.rowCapacity, &c->rowCount, &ctl->revert, [=] CS_LAMBDA(int i) { lambda[i] = lambdaStart[i]; });
        ex.forEach(d.rowCapacity, &c->keptContacts, &ctl->fallback,
                   [=] CS_LAMBDA(int q) { ccpProjectBlock(lambda, 3 * q, kCcpCone, mu[3 * q + 1], Real(0)); });
        ex.serial(nullptr, [=] CS_LAMBDA() { ctl->active = ctl->accepted = ctl->refresh = 0; });
        recordApgd(ex, d, v, fallback, &ctl->fallback);
        ex.serial(&ctl->fallback, [=] CS_LAMBDA() { c->linearIterations += ctl->iterations; });
        recordCcpGradient(ex, d, v, lambda, g, &ctl->fallback);
        recordCcpMeritSq(ex, v, lambda, g, &ctl->meritSq, &ctl->fallback);
        // APGD did not improve on either iterate: the Newton step after all (lambdaStart + t dlambda).
        ex.serial(&ctl->fallback, [=] CS_LAMBDA() {
            ctl->merit = std::sqrt(ctl->meritSq);
            ctl->useNewton = !(ctl->merit < ctl->start);
        });
        ex.forEach(d.rowCapacity, &c->rowCount, &ctl->useNewton, [=] CS_LAMBDA(int i) {
            const Real x = lambdaStart[i] + damping * dlambda[i];
            lambda[i] = x < -maxImpulse[i] ? -maxImpulse[i] : (maxImpulse[i] < x ? maxImpulse[i] : x);
        });
        recordCcpGradient(ex, d, v, lambda, g, &ctl->useNewton);
        recordCcpMeritSq(ex, v, lambda, g, &ctl->meritSq, &ctl->useNewton);
        const bool last = k + 1 == settings.newtonIterations;
        ex.serial(&ctl->outer, [=] CS_LAMBDA() {
            if (ctl->useNewton) ctl->merit = std::sqrt(ctl->meritSq);
            ctl->outerIterations++;
            ctl->fallback = ctl->revert = ctl->useNewton = 0;
            ctl->outer = ctl->merit > tolerance && !last;
        });
    }
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->merit = ctl->merit;
        c->newtonIterations = ctl->outerIterations;
        c->newtonActive = 0;
    });
}

}  // namespace cs
