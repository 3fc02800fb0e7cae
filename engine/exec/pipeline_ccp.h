// The CCP model's first-order solvers on the step pipeline: projected Jacobi, projected
// Gauss-Seidel over coloured contacts, and APGD ([CCP] eqs. 10-11), written once over the executor
// verbs as engine/solver/ccp_solvers.cpp runs them on the CPU.
//
// The per-row and per-block math is ccp_steps_hd.h's (shared with the CPU solvers), the scatter
// u = u~ + M^-1 J^T x is the Newton solve's sorted per-body sum by runs (pipeline_solve.h
// recordScatter), and every sum is a plain sum in index order (kSerialSum), the CPU's loops. So
// on the host executor each solver gives the CPU solver's bits (tests/test_ccp_pipeline.cpp):
// PGS too, because the CPU sweeps its blocks in the order of the same colouring
// (CcpProblem::colourBlocks), and blocks of one colour share no dynamic body, so sweeping a
// colour in parallel or in order gives the same result.
//
// The rows are the CCP model's contact rows only (pipelineSupports: no joints, no drag, no FEM):
// contact c is the cone block of rows 3c, 3c + 1, 3c + 2, its mu on the friction rows. Loops have
// a fixed shape gated by CcpControl flags (no host round trip): PJ and PGS `iterations` sweeps,
// APGD 2 x `iterations` trials (ccp_steps_hd.h apgdMaxTrials), each either taken or doubling L.
#pragma once

#include "engine/exec/pipeline_newton.h"
#include "engine/solver/ccp_steps_hd.h"

namespace cs {

// Plain pointers of the CCP solve, captured by value in the functors.
struct CcpSolveView {
    SolveView solve;           // rows, counters, the sorted scatter
    RowSystemView sys;         // compliance = the rows' softness (eq. 10's N includes it)
    CcpControl* ctl;
    const Real *offset, *linear, *scale, *mu;
};

// g = N x + p: u = u~ + M^-1 J^T x into d.velocity, then each row's g (ccpRowGradient).
template <class Exec>
void recordCcpGradient(Exec& ex, PipelineData<Exec>& d, const CcpSolveView& v, const Real* x, Real* g,
                       const int* gate) {
    Spatial *w = d.w.data(), *u = d.velocity.data();
    const Spatial* unconstrained = d.unconstrained.data();
    const RowSystemView s = v.sys;
    const Real* offset = v.offset;
    recordScatter(ex, v.solve, x, w, gate);
    ex.forEach(v.solve.bodies, nullptr, gate, [=] CS_LAMBDA(int b) { u[b] = unconstrained[b] + w[b]; });
    ex.forEach(v.solve.rowCapacity, &v.solve.c->rowCount, gate,
               [=] CS_LAMBDA(int i) { g[i] = ccpRowGradient(s, i, u, offset[i], x[i]); });
}

// *out = the sum over contacts of the squared natural-map residual (the merit squared).
template <class Exec>
void recordCcpMeritSq(Exec& ex, const CcpSolveView& v, const Real* x, const Real* g, Real* out, const int* gate) {
    const Real *scale = v.scale, *mu = v.mu;
    ex.sum(&v.solve.c->keptContacts, gate, kSerialSum, out,
           [=] CS_LAMBDA(int k) { return ccpBlockMeritSq(x, g, 3 * k, kCcpCone, scale[3 * k], mu[3 * k + 1], Real(0)); });
}

// The merit of (lambda, g) into ctl->merit and the history entry 0; active = merit > tolerance.
template <class Exec>
void recordCcpStart(Exec& ex, PipelineData<Exec>& d, const CcpSolveView& v, const CcpSettings& settings) {
    CcpControl* ctl = v.ctl;
    Real* history = d.ccpHistory.data();
    const Real tolerance = settings.tolerance;
    const int iterations = settings.iterations;
    recordCcpGradient(ex, d, v, d.lambda.data(), d.ccpG.data(), nullptr);
    recordCcpMeritSq(ex, v, d.lambda.data(), d.ccpG.data(), &ctl->meritSq, nullptr);
    ex.serial(nullptr, [=] CS_LAMBDA() {
        ctl->merit = ctl->bestMerit = std::sqrt(ctl->meritSq);
        history[0] = ctl->merit;
        ctl->active = ctl->merit > tolerance && iterations > 0;
    });
}

// After a PJ or PGS sweep (g current): the merit, the history, and whether to go on.
template <class Exec>
void recordCcpSweepEnd(Exec& ex, PipelineData<Exec>& d, const CcpSolveView& v, const CcpSettings& settings, int it) {
    CcpControl* ctl = v.ctl;
    Real* history = d.ccpHistory.data();
    const Real tolerance = settings.tolerance;
    const bool last = it + 1 == settings.iterations;
    recordCcpMeritSq(ex, v, d.lambda.data(), d.ccpG.data(), &ctl->meritSq, &ctl->active);
    ex.serial(&ctl->active, [=] CS_LAMBDA() {
        ctl->merit = std::sqrt(ctl->meritSq);
        history[it + 1] = ctl->merit;
        ctl->iterations = it + 1;
        ctl->active = ctl->merit > tolerance && !last;
    });
}

// Projected Jacobi (ccp_solvers.cpp projectedJacobi): omega = 1 / lambda_max(D N) by ten power
// iterations from the ones vector (CcpProblem::jacobiOmega), then per sweep every contact
// gamma_c <- Pi(gamma_c - omega g_c / s_c) and g of the new iterate.
template <class Exec>
void recordCcpJacobi(Exec& ex, PipelineData<Exec>& d, const CcpSolveView& v, const CcpSettings& settings) {
    CcpControl* ctl = v.ctl;
    const RowSystemView s = v.sys;
    const int* rows = &v.solve.c->rowCount;
    const int rowCapacity = v.solve.rowCapacity;
    const Real *scale = v.scale, *mu = v.mu;
    Real *x = d.power.data(), *y = d.powerOut.data(), *lambda = d.lambda.data(), *g = d.ccpG.data();
    Spatial* w = d.w.data();
    const Real fixedOmega = settings.omega;
    if (fixedOmega > 0) {
        ex.serial(nullptr, [=] CS_LAMBDA() { ctl->omega = fixedOmega; });
    } else {
        ex.forEach(rowCapacity, rows, nullptr, [=] CS_LAMBDA(int i) { x[i] = 1; });
        ex.serial(nullptr, [=] CS_LAMBDA() {
            ctl->estimate = 1;
            ctl->powerActive = 1;
        });
        for (int it = 0; it < 10 && !ex.stopped(&ctl->powerActive); ++it) {
            recordScatter(ex, v.solve, x, w, &ctl->powerActive);
            ex.forEach(rowCapacity, rows, &ctl->powerActive,
                       [=] CS_LAMBDA(int i) { y[i] = ccpRowGradient(s, i, w, Real(0), x[i]) / scale[i]; });
            ex.sum(rows, &ctl->powerActive, kSerialSum, &ctl->normSq, [=] CS_LAMBDA(int i) { return y[i] * y[i]; });
            ex.sum(rows, &ctl->powerActive, kSerialSum, &ctl->xnormSq, [=] CS_LAMBDA(int i) { return x[i] * x[i]; });
            ex.serial(&ctl->powerActive, [=] CS_LAMBDA() {
                const Real norm = std::sqrt(ctl->normSq), xnorm = std::sqrt(ctl->xnormSq);
                if (!(norm > 0) || !(xnorm > 0)) {
                    ctl->powerActive = 0;
                    return;
                }
                ctl->estimate = norm / xnorm;
                ctl->norm = norm;
            });
            ex.forEach(rowCapacity, rows, &ctl->powerActive, [=] CS_LAMBDA(int i) { x[i] = y[i] / ctl->norm; });
        }
        ex.serial(nullptr, [=] CS_LAMBDA() {
            ctl->omega = Real(1) / (ctl->estimate > Real(1e-12) ? ctl->estimate : Real(1e-12));
        });
    }
    recordCcpStart(ex, d, v, settings);
    for (int it = 0; it < settings.iterations && !ex.stopped(&ctl->active); ++it) {
        ex.forEach(rowCapacity, &v.solve.c->keptContacts, &ctl->active, [=] CS_LAMBDA(int c) {
            const int k = 3 * c;
            const Real step = ctl->omega / scale[k];
            for (int i = k; i < k + 3; ++i) lambda[i] = lambda[i] - step * g[i];
            ccpProjectBlock(lambda, k, kCcpCone, mu[k + 1], Real(0));
        });
        recordCcpGradient(ex, d, v, lambda, g, &ctl->active);
        recordCcpSweepEnd(ex, d, v, settings, it);
    }
}

// Projected Gauss-Seidel (ccp_solvers.cpp projectedGaussSeidel): the contacts coloured by their
// bodies (recordColouringOf over a view of contacts), then per sweep colour after colour, the
// contacts of one colour in parallel (ccpGaussSeidelBlock), the uncoloured ones in order.
template <class Exec>
void recordCcpGaussSeidel(Exec& ex, PipelineData<Exec>& d, const CcpSolveView& v, const CcpSettings& settings) {
    CcpControl* ctl = v.ctl;
    StepCounters* c = v.solve.c;
    const RowSystemView s = v.sys;
    const int capacity = d.contactCapacity;
    {
        int *bodyA = d.contactBodyA.data(), *bodyB = d.contactBodyB.data(), *start = d.contactBodyStart.data();
        const int *rowA = d.rowBodyA.data(), *rowB = d.rowBodyB.data();
        const Real* invMass = d.bodyInvMass.data();
        uint64_t* keys = d.contactKeys.data();
        const uint64_t* sortedKeys = d.contactKeysOut.data();
        const int entries = 2 * capacity;
        ex.forEach(capacity, nullptr, nullptr, [=] CS_LAMBDA(int k) {
            const bool used = k < c->keptContacts;
            const int a = used ? rowA[3 * k] : -1, b = used ? rowB[3 * k] : -1;
            bodyA[k] = a;
            bodyB[k] = b;
            keys[2 * k] = a >= 0 && invMass[a] > 0 ? scatterEntryKey(a, k) : ~uint64_t(0);
            keys[2 * k + 1] = b >= 0 && invMass[b] > 0 ? scatterEntryKey(b, k) : ~uint64_t(0);
        });
        ex.sortKeys(keys, d.contactKeysOut.data(), entries);
        ex.forEach(d.bodies + 1, nullptr, nullptr,
                   [=] CS_LAMBDA(int b) { start[b] = scatterEntryStart(sortedKeys, entries, b); });
        RowSystemView contacts{};
        contacts.rowCount = capacity;
        contacts.bodyCount = d.bodies;
        contacts.bodyA = bodyA;
        contacts.bodyB = bodyB;
        contacts.invMass = invMass;
        recordColouringOf(ex, d, contacts, sortedKeys, start, &c->keptContacts, capacity);
    }
    const Real omega = settings.omega > 0 ? settings.omega : Real(1);
    const Real *offset = v.offset, *scale = v.scale, *mu = v.mu;
    Real *lambda = d.lambda.data(), *g = d.ccpG.data();
    Spatial* u = d.velocity.data();
    const int *order = d.colourRowsOut.data(), *start = d.colourStart.data(), *size = d.colourSize.data();
    auto block = [=] CS_LAMBDA(int contact) {
        const int k = 3 * contact;
        ccpGaussSeidelBlock(s, offset, k, kCcpCone, omega / scale[k], mu[k + 1], Real(0), lambda, u);
    };
    recordCcpStart(ex, d, v, settings);
    for (int it = 0; it < settings.iterations && !ex.stopped(&ctl->active); ++it) {
        for (int k = 0; k < kMaxColours; ++k)   // contacts of one colour share no dynamic body
            ex.forEach(capacity, size + k, &ctl->active, [=] CS_LAMBDA(int j) { block(order[start[k] + j]); });
        ex.serial(&ctl->active, [=] CS_LAMBDA() {   // the contacts no colour took, in order
            for (int j = start[kMaxColours]; j < start[kMaxColours + 1]; ++j) block(order[j]);
        });
        ex.forEach(v.solve.rowCapacity, &c->rowCount, &ctl->active,
                   [=] CS_LAMBDA(int i) { g[i] = ccpRowGradient(s, i, u, offset[i], lambda[i]); });
        recordCcpSweepEnd(ex, d, v, settings, it);
    }
}

}  // namespace cs
