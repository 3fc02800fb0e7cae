// The Newton iteration of the pipeline: [NSN] Algorithm 1 as engine/solver/newton.cpp runs it
// (standard contact rows), with the per-step structure of the rows the solvers need: H^-1 J^T and
// the diagonal of J H^-1 J^T (J is fixed over the step), runs of rows on one body pair, the
// sorted scatter entries, and for Gauss-Seidel a colouring.
//
// Each Newton iteration linearizes every row (evalRow), solves [J M^-1 J^T + C + eps I] dlambda
// = -h (eq. 59, regularized as in section 8.4), takes the damped step lambda = clamp(lambda_k +
// t dlambda) (eq. 61, section 8.1) and sets u = u~ + M^-1 J^T lambda (eqs. 60-62). The loop runs
// while the merit ||phi|| is above the tolerance, and past the cap up to the far Newton cap while it
// is far off (newton_steps_hd.h newtonGoesOnFar), decided in a serial step on the executor: no host
// round trip.
#pragma once

#include "engine/exec/pipeline_joints.h"
#include "engine/exec/pipeline_solve.h"
#include "engine/solver/newton_steps_hd.h"

namespace cs {

// Gauss-Seidel colours by Jones-Plassmann rounds (engine/exec/step_hd.h colourRowInRound) of the first
// *count items (rows, or the CCP solver's contacts) of the view s, whose bodies' sorted entries
// are entries / bodyStart; then the items sorted by colour: colourRowsOut, colourStart
// (kMaxColours + 2), colourSize (kMaxColours + 1; the last one the items no colour took, swept
// serially).
template <class Exec>
void recordColouringOf(Exec& ex, PipelineData<Exec>& d, const RowSystemView& s, const uint64_t* entries,
                       const int* bodyStart, const int* count, int capacity) {
    int *colour = d.colour.data(), *round = d.colourRound.data(), *keys = d.colourKeys.data();
    int *keysOut = d.colourKeysOut.data(), *rows = d.colourRows.data(), *rowsOut = d.colourRowsOut.data();
    int *start = d.colourStart.data(), *size = d.colourSize.data();
    ex.forEach(capacity, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        colour[i] = i < *count ? -1 : kMaxColours + 1;   // unused slots sort after everything
        round[i] = i < *count ? -1 : 0;
    });
    for (int k = 0; k < kGpuColourRounds; ++k)
        ex.forEach(capacity, count, nullptr, [=] CS_LAMBDA(int i) {
            if (round[i] >= 0) return;
            const int chosen = colourRowInRound(s, entries, bodyStart, round, colour, i, k);
            if (chosen < 0) return;
            colour[i] = chosen;
            round[i] = k;
        });
    ex.forEach(capacity, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        keys[i] = colour[i] < 0 ? kMaxColours : colour[i];   // still pending: the serial sweep
        rows[i] = i;
    });
    ex.sortPairs(keys, rows, keysOut, rowsOut, capacity);
    ex.forEach(kMaxColours + 2, nullptr, nullptr, [=] CS_LAMBDA(int k) {
        int lo = 0, hi = *count;   // first sorted item of colour >= k
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (keysOut[mid] < k) lo = mid + 1;
            else hi = mid;
        }
        start[k] = lo;
    });
    ex.forEach(kMaxColours + 1, nullptr, nullptr, [=] CS_LAMBDA(int k) { size[k] = start[k + 1] - start[k]; });
}

template <class Exec>
void recordColouring(Exec& ex, PipelineData<Exec>& d, const SolveView& v) {
    recordColouringOf(ex, d, v.sys, v.entries, v.bodyStart, &v.c->rowCount, v.rowCapacity);
}

// u = u~ + H^-1 J^T lambda (newton.cpp velocitiesFromImpulses).
template <class Exec>
void recordVelocities(Exec& ex, PipelineData<Exec>& d, const SolveView& v, const int* gate) {
    Spatial *w = d.w.data(), *u = d.velocity.data();
    const Spatial* unconstrained = d.unconstrained.data();
    recordScatter(ex, v, d.lambda.data(), w, gate);
    ex.forEach(v.bodies, nullptr, gate, [=] CS_LAMBDA(int b) { u[b] = unconstrained[b] + w[b]; });
}

// Linearize every row at (u, lambda) and the sum of the merit's squares, gated by `gate`.
template <class Exec>
void recordMeritSum(Exec& ex, PipelineData<Exec>& d, const SolveView& v, const RowEvalView& e, const int* gate) {
    StepCounters* c = v.c;
    const RowSystemView s = v.sys;
    const Spatial* u = d.velocity.data();
    Real* jv = d.jv.data();
    const Real* merit = d.merit.data();
    ex.forEach(v.rowCapacity, &c->rowCount, gate, [=] CS_LAMBDA(int i) { jv[i] = gatherRow(s, i, u); });
    ex.forEach(v.rowCapacity, &c->rowCount, gate, [=] CS_LAMBDA(int i) { evalRow(e, i); });
    ex.sum(&c->rowCount, gate, kSerialSum, &c->meritSq, [=] CS_LAMBDA(int i) { return merit[i] * merit[i]; });
}

// The merit ||phi|| (m/s) after k iterations; with keepBestIterate, the impulses of the least
// merit so far into newtonBest (newton.cpp's bestLambda). The far Newton cap (farNewtonIterations
// above newtonIterations; newton_steps_hd.h newtonGoesOnFar): at the cap, if the Newton goes on, its
// merit into meritAtCap and its impulses into newtonAtCap; past it, a run-away merit ends the loop
// (recordCapRestore then returns the cap's iterate).
template <class Exec>
void recordEvaluate(Exec& ex, PipelineData<Exec>& d, const SolveView& v, const RowEvalView& e,
                    const SolverSettings& settings, int k) {
    StepCounters* c = v.c;
    const Real tolerance = settings.newtonTolerance;
    const int cap = settings.newtonIterations, farCap = settings.farNewtonIterations;
    const bool far = farCap > cap;
    const bool keepBest = settings.keepBestIterate;
    recordMeritSum(ex, d, v, e, &c->newtonActive);
    ex.serial(&c->newtonActive, [=] CS_LAMBDA() {
        c->merit = std::sqrt(c->meritSq);
        if (k < kMaxNewtonHistory) c->newtonResidual[k] = c->merit;
        c->newtonIterations = k;
        c->bestImproved = keepBest && (k == 0 || c->merit < c->bestMerit);
        if (c->bestImproved) c->bestMerit = c->merit;
        c->newtonActive = newtonGoesOnFar(c->merit, tolerance, k, cap, farCap);
        if (far && k == cap && c->newtonActive) c->meritAtCap = c->merit;
        if (far && k > cap && c->newtonActive && farNewtonRunAway(c->merit, c->meritAtCap)) c->newtonActive = 0;
    });
    const Real* lambda = d.lambda.data();
    if (far && k == cap) {
        Real* atCap = d.newtonAtCap.data();
        ex.forEach(v.rowCapacity, &c->rowCount, &c->newtonActive, [=] CS_LAMBDA(int i) { atCap[i] = lambda[i]; });
    }
    if (!keepBest) return;
    Real* best = d.newtonBest.data();
    ex.forEach(v.rowCapacity, &c->rowCount, &c->bestImproved, [=] CS_LAMBDA(int i) { best[i] = lambda[i]; });
}

// The far Newton cap's guard after the loop (newton.cpp): when the iterations past the cap ended
// with the merit run away from its value at the cap, the cap's impulses and velocities return and
// the merit is evaluated again (one more history entry).
template <class Exec>
void recordCapRestore(Exec& ex, PipelineData<Exec>& d, const SolveView& v, const RowEvalView& e,
                      const SolverSettings& settings) {
    StepCounters* c = v.c;
    const int cap = settings.newtonIterations;
    if (settings.farNewtonIterations <= cap) return;
    const int* restored = &c->restoredCap;
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->restoredCap = c->rowCount > 0 && c->newtonIterations > cap && farNewtonRunAway(c->merit, c->meritAtCap);
    });
    Real* lambda = d.lambda.data();
    const Real* atCap = d.newtonAtCap.data();
    ex.forEach(v.rowCapacity, &c->rowCount, restored, [=] CS_LAMBDA(int i) { lambda[i] = atCap[i]; });
    recordVelocities(ex, d, v, restored);
    recordMeritSum(ex, d, v, e, restored);
    ex.serial(restored, [=] CS_LAMBDA() {
        c->merit = std::sqrt(c->meritSq);
        if (c->newtonIterations + 1 < kMaxNewtonHistory) c->newtonResidual[c->newtonIterations + 1] = c->merit;
    });
}

// What every solver of the stage needs, J being fixed over the step: H^-1 J^T, the diagonal of
// J H^-1 J^T, the runs of rows on one body pair, and (sorted, or entries) the sorted scatter
// entries of the rows' dynamic bodies.
template <class Exec>
SolveView recordSolveSetup(Exec& ex, PipelineData<Exec>& d, bool sorted, bool needEntries) {
    StepCounters* c = d.counters.data();
    SolveView v{};
    RowSystemView& s = v.sys;
    s.rowCount = d.rowCapacity;   // loops are bounded by counters.rowCount, not by this
    s.bodyCount = d.solverBodies;   // rigid bodies, then the FEM nodes
    s.bodyA = d.rowBodyA.data();
    s.bodyB = d.rowBodyB.data();
    s.jacobianA = d.jacobianA.data();
    s.jacobianB = d.jacobianB.data();
    s.compliance = d.compliance.data();
    s.invMass = d.bodyInvMass.data();
    s.invInertia = d.bodyInvInertia.data();
    const bool wide = d.fem.wide();   // rows on four bodies (FEM): the C and D columns
    if (wide) {
        s.bodyC = d.fem.bodyC.data();
        s.bodyD = d.fem.bodyD.data();
        s.jacobianC = d.fem.jacobianC.data();
        s.jacobianD = d.fem.jacobianD.data();
    }
    v.c = c;
    v.l = d.linear.data();
    v.runHead = d.runHead.data();
    v.entries = d.entryKeysOut.data();
    v.bodyStart = d.bodyStart.data();
    v.rowCapacity = d.rowCapacity;
    v.bodies = d.solverBodies;
    v.sorted = sorted;

    // J is fixed over the step: H^-1 J^T and the diagonal once (C = 0 until the first evaluation).
    {
        const RowSystemView raw = s;
        Spatial *minvJA = d.minvJA.data(), *minvJB = d.minvJB.data();
        Spatial *minvJC = d.fem.minvJC.data(), *minvJD = d.fem.minvJD.data();
        Real *diagA = d.diagA.data(), *compliance = d.compliance.data();
        int* runHead = d.runHead.data();
        ex.serial(nullptr, [=] CS_LAMBDA() {
            c->newtonActive = c->rowCount > 0 ? 1 : 0;
            c->newtonIterations = c->linearIterations = 0;
            c->restoredCap = 0;
            c->merit = c->meritSq = 0;
        });
        ex.forEach(d.rowCapacity, &c->rowCount, nullptr, [=] CS_LAMBDA(int i) {
            const Spatial zero{{0, 0, 0}, {0, 0, 0}};
            compliance[i] = 0;
            minvJA[i] = raw.bodyA[i] >= 0 ? applyInvMass(raw, raw.bodyA[i], raw.jacobianA[i]) : zero;
            minvJB[i] = raw.bodyB[i] >= 0 ? applyInvMass(raw, raw.bodyB[i], raw.jacobianB[i]) : zero;
            diagA[i] = rowDiagonal(raw, i);
            runHead[i] = i == 0 || raw.bodyA[i] != raw.bodyA[i - 1] || raw.bodyB[i] != raw.bodyB[i - 1];
            if (!raw.bodyC) return;   // findRuns with the C and D columns
            runHead[i] = runHead[i] || raw.bodyC[i] != raw.bodyC[i - 1] || raw.bodyD[i] != raw.bodyD[i - 1];
            minvJC[i] = raw.bodyC[i] >= 0 ? applyInvMass(raw, raw.bodyC[i], raw.jacobianC[i]) : zero;
            minvJD[i] = raw.bodyD[i] >= 0 ? applyInvMass(raw, raw.bodyD[i], raw.jacobianD[i]) : zero;
        });
        s.invMassJacobianA = minvJA;
        s.invMassJacobianB = minvJB;
        if (wide) {
            s.invMassJacobianC = minvJC;
            s.invMassJacobianD = minvJD;
        }
        s.jmjDiagonal = diagA;
    }
    if constexpr (Exec::kRowKernels) ex.prepareRows(d.runHead.data(), &c->rowCount);   // its scatter needs no entries
    if ((sorted && !Exec::kRowKernels) || needEntries) {   // scatter entries (body << 32 | row) of dynamic bodies, sorted
        const RowSystemView sys = s;
        uint64_t* keys = d.entryKeys.data();
        int* start = d.bodyStart.data();
        const uint64_t* sortedKeys = d.entryKeysOut.data();
        const int columns = wide ? 4 : 2, entries = columns * d.rowCapacity;
        ex.forEach(d.rowCapacity, nullptr, nullptr, [=] CS_LAMBDA(int i) {
            const bool row = i < c->rowCount;
            const int bodies[4] = {row ? sys.bodyA[i] : -1, row ? sys.bodyB[i] : -1,
                                   row && sys.bodyC ? sys.bodyC[i] : -1, row && sys.bodyC ? sys.bodyD[i] : -1};
            for (int k = 0; k < columns; ++k) {
                const int b = bodies[k];
                keys[columns * i + k] = b >= 0 && sys.invMass[b] > 0 ? scatterEntryKey(b, i) : ~uint64_t(0);
            }
        });
        ex.sortKeys(keys, d.entryKeysOut.data(), entries);
        ex.forEach(d.solverBodies + 1, nullptr, nullptr,
                   [=] CS_LAMBDA(int b) { start[b] = scatterEntryStart(sortedKeys, entries, b); });
    }
    return v;
}

// evalRow's view of the pipeline's rows (no force limits: recordSolve adds them; the CCP Newton,
// pipeline_ccp_newton.h, has none).
template <class Exec>
RowEvalView rowEvalView(PipelineData<Exec>& d, const SolverSettings& settings, Real h) {
    RowEvalView e{};
    e.kind = d.kind.data();
    e.bias = d.bias.data();
    e.softness = d.softness.data();
    e.mu = d.mu.data();
    e.normalRow = d.normalRow.data();
    e.lambda = d.lambda.data();
    e.jv = d.jv.data();
    e.diagA = d.diagA.data();
    e.h = h;
    e.ncp = settings.ncp == NcpFunction::FischerBurmeister ? 0 : 1;
    e.precondition = settings.complementarityPreconditioner;
    e.schurCompliance = d.compliance.data();
    e.residual = d.residual.data();
    e.merit = d.merit.data();
    e.frictionSlipWeight = settings.frictionSlipWeight;
    return e;
}

// The step's Newton condenses the compliant rows (recordSolve): the setting, and FEM rows.
template <class Exec>
bool pipelineCondenses(const PipelineData<Exec>& d, const SolverSettings& settings) {
    return settings.condenseCompliantRows && d.fem.rows > 0;
}

template <class Exec>
void recordSolve(Exec& ex, PipelineData<Exec>& d, const SolverSettings& settings, Real h, bool sorted) {
    const bool gaussSeidel = settings.linearSolver == LinearSolverType::GaussSeidel;
    const SolveView v = recordSolveSetup(ex, d, sorted, gaussSeidel);
    StepCounters* c = v.c;
    if (gaussSeidel) recordColouring(ex, d, v);

    RowEvalView e = rowEvalView(d, settings, h);
    e.maxImpulse = d.maxImpulse.data();   // force-limited rows (joint drives, the drag) as evalRow's box

    const Real eps = settings.regularization, damping = settings.damping, fixedTolerance = settings.linearTolerance;
    const bool fullStepStable = settings.fullStepStableSet;
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->linearTolerance = fixedTolerance;
        c->previousMerit = c->bestMerit = 0;
        c->restoredBest = c->cutActive = 0;
    });
    recordVelocities(ex, d, v, nullptr);   // from the warm impulses (no rows: u = u~)
    recordEvaluate(ex, d, v, e, settings, 0);
    Real *compliance = d.compliance.data(), *rhs = d.rhs.data(), *dlambda = d.dlambda.data();
    Real *lambda = d.lambda.data(), *lambdaStart = d.lambdaStart.data();
    const Real *residual = d.residual.data(), *maxImpulse = d.maxImpulse.data();
    const Real etaMax = settings.linearForcing, newtonTolerance = settings.newtonTolerance;
    const Real growth = settings.stepCutGrowth;
    // lambda = clamp(lambda_k + t dlambda) (std::clamp(x, -max, max)), gated by `gate`, with
    // t = scale c->newtonStep: the damping cut at the force limits (recordStepToBounds), halved by
    // the step cut (scale a power of two, so t is newton.cpp's to the bit).
    const int leading = d.joints.leadingRows();
    const Real* stepBound = d.joints.stepBound.data();
    Real* fixed = d.dlambdaFixed.data();   // the condensed solve's part that no damping scales
    auto step = [&](Real scale, const int* gate) {
        ex.forEach(d.rowCapacity, &c->rowCount, gate, [=] CS_LAMBDA(int i) {
            const Real x = lambdaStart[i] + fixed[i] + (scale * c->newtonStep) * dlambda[i];
            lambda[i] = x < -maxImpulse[i] ? -maxImpulse[i] : (maxImpulse[i] < x ? maxImpulse[i] : x);
            if (i < leading && std::fabs(stepBound[i]) < kNoImpulseLimit) lambda[i] = stepBound[i];   // at its bound
        });
        recordVelocities(ex, d, v, gate);
    };
    // The compliant rows (FEM elements) condensed into a sparse factor and the others solved by a
    // dense one (condensed_solve.h), as World::substep's Newton does: prepared at the first
    // iteration that runs, the condensed rows without regularization (their D_S > 0 keeps K
    // positive definite), one direct solve per iteration; prepare or solve false: the linear
    // solver on every row. It reads sizes on the host, so the host learns each iteration whether
    // the Newton goes on (on CUDA such a step is not a recorded graph: pipelineCondenses).
    const bool wantCondense = pipelineCondenses(d, settings);
    bool condense = false, condensePrepared = false;
    const CondensedInput condensedIn{v.sys, d.kind.data(), d.softness.data(), d.maxImpulse.data(), &c->rowCount};
    const int iterations = std::max(settings.newtonIterations, settings.farNewtonIterations);   // the far cap
    for (int k = 0; k < iterations && !ex.stopped(&c->newtonActive); ++k) {
        if (wantCondense) {
            int active = 0;
            ex.download(&active, &c->newtonActive, 1);
            ex.sync();
            if (!active) break;
            if (!condensePrepared) condense = d.condensed.prepare(ex, condensedIn);
            condensePrepared = true;
        }
        const int* soft = condense ? d.condensed.rowClass() : nullptr;
        if (fullStepStable) {   // newton.cpp: each row's NCP side against the last iteration's, before eps
            int* side = d.ncpSide.data();
            const bool first = k == 0;
            ex.serial(&c->newtonActive, [=] CS_LAMBDA() { c->ncpSideChanged = first ? 1 : 0; });
            ex.forEach(d.rowCapacity, &c->rowCount, &c->newtonActive, [=] CS_LAMBDA(int i) {
                const int now = ncpRowSide(e, i);
                if (now != side[i]) atomicSetFlag(&c->ncpSideChanged);
                side[i] = now;
            });
        }
        ex.forEach(d.rowCapacity, &c->rowCount, &c->newtonActive, [=] CS_LAMBDA(int i) {
            if (!(soft && soft[i] == kCondensedSoft)) compliance[i] += eps;
            rhs[i] = -residual[i];
            dlambda[i] = 0;
            fixed[i] = 0;
        });
        if (etaMax > 0)   // eta_k (newton_steps_hd.h), the previous eta in linearTolerance
            ex.serial(&c->newtonActive, [=] CS_LAMBDA() {
                c->linearTolerance = forcingTolerance(c->merit, c->previousMerit, c->linearTolerance, k, etaMax,
                                                      newtonTolerance, fixedTolerance);
            });
        if (condense && d.condensed.solve(ex, condensedIn, compliance, rhs, fixed, dlambda)) {
            ex.serial(&c->newtonActive, [=] CS_LAMBDA() { c->linearIterations += 1; });   // one direct solve
        } else {
            if (condense)   // the dense hard system was not positive definite: start again from zero
                ex.forEach(d.rowCapacity, &c->rowCount, &c->newtonActive, [=] CS_LAMBDA(int i) {
                    dlambda[i] = 0;
                    fixed[i] = 0;
                });
            recordLinearSolve(ex, d, v, settings);
        }
        recordStepToBounds(ex, d, e, damping, fullStepStable, &c->newtonActive);   // c->newtonStep (pipeline_joints.h)
        ex.forEach(d.rowCapacity, &c->rowCount, &c->newtonActive, [=] CS_LAMBDA(int i) { lambdaStart[i] = lambda[i]; });
        ex.serial(&c->newtonActive, [=] CS_LAMBDA() { c->previousMerit = c->merit; });
        step(1, &c->newtonActive);
        if (growth > 0) {   // newton.cpp's step cut: t/2 while the merit grew past `growth`
            Real scale = 1;
            recordMeritSum(ex, d, v, e, &c->newtonActive);
            for (int cut = 0; cut < kMaxStepCuts; ++cut) {
                ex.serial(nullptr, [=] CS_LAMBDA() {   // ungated: a finished Newton clears the flag
                    c->cutActive = 0;
                    if (!c->newtonActive) return;
                    c->merit = std::sqrt(c->meritSq);
                    c->cutActive = cutStep(c->merit, c->previousMerit, growth, cut, kMaxStepCuts);
                });
                scale *= Real(0.5);
                step(scale, &c->cutActive);
                recordMeritSum(ex, d, v, e, &c->cutActive);
            }
        }
        recordEvaluate(ex, d, v, e, settings, k + 1);
    }
    recordCapRestore(ex, d, v, e, settings);
    if (!settings.keepBestIterate) return;
    const int* restored = &c->restoredBest;
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->restoredBest = c->rowCount > 0 && restoreBestIterate(c->merit, c->bestMerit, newtonTolerance,
                                                                c->newtonIterations);
        if (c->restoredBest) c->merit = c->bestMerit;
    });
    const Real* best = d.newtonBest.data();
    ex.forEach(d.rowCapacity, &c->rowCount, restored, [=] CS_LAMBDA(int i) { lambda[i] = best[i]; });
    recordVelocities(ex, d, v, restored);
}

}  // namespace cs
