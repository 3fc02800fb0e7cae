// The solve stage of the pipeline: [NSN] Algorithm 1 (engine/solver/newton.cpp) and the four
// matrix-free linear solvers (engine/solver/linear_solvers.cpp) over the executor verbs, PCG and
// PCR with the diagonal or the block preconditioner (engine/solver/block_preconditioner_hd.h).
//
// The per-row and per-body math is the shared CS_HD code (constraint_rows.h evalRow, row_system.h,
// engine/exec/step_hd.h); the scalar decisions are krylov_steps_hd.h's, the ones the CPU solvers take.
// What is here is the control flow, written so that it needs no host round trip: loops have a
// fixed shape (Newton iterations x linear iterations), every stage is gated by a flag in the
// executor's memory (counters.newtonActive, linear.active) that a serial step clears once the
// merit or the residual has converged, and gated work returns at once. The host executor ends a
// loop as soon as it sees the flag down (Exec::stopped); the CUDA executor records the whole
// shape into a graph.
//
// Sums are added in the CPU's orders on the host (SumOrder: blocked, by runs in the gathers,
// plain for the merit), and the scatter w = H^-1 J^T x is the sorted per-body sum by runs, so on
// the host this stage gives the CPU's bits for Jacobi, PCG and PCR. Gauss-Seidel colours its rows
// by parallel rounds (engine/exec/step_hd.h) instead of the CPU's serial greedy colouring: a different,
// equally valid sweep order, so its results agree with the CPU's within the solver's accuracy.
#pragma once

#include "engine/exec/pipeline_data.h"
#include "engine/solver/krylov_passes.h"
#include "engine/solver/krylov_steps_hd.h"

namespace cs {

// Plain pointers of the solve, captured by value in the functors.
struct SolveView {
    RowSystemView sys;          // minvJ and the J H^-1 J^T diagonal precomputed
    StepCounters* c;
    LinearControl* l;
    const int* runHead;         // (rows) 1 where a run of rows on one body pair starts
    const uint64_t* entries;    // (2 rows) sorted scatter entries body << 32 | row
    const int* bodyStart;       // (bodies + 1) each body's entries
    int rowCapacity, bodies;
    bool sorted;                // deterministic scatter (else atomics, CUDA only)
    bool block;                 // PCG and PCR precondition with block (recordBlockPreconditioner)
    BlockPreconditionerView m;  // its layout and inverse
};

// The block-Jacobi preconditioner over the runs (block_preconditioner_hd.h), laid out and
// factorized with the current compliance, as linear_solvers.cpp buildBlockPreconditioner does:
// each run's first row from the scan of the run heads, each row's block, then every block's
// first row factorizes its block (the same CS_HD factorBlock, so the same bits).
template <class Exec>
void recordBlockPreconditioner(Exec& ex, PipelineData<Exec>& d, const SolveView& v) {
    StepCounters* c = v.c;
    const RowSystemView s = v.sys;
    const int* head = v.runHead;
    int *masked = d.blockHead.data(), *runIndex = d.runIndex.data(), *runFirst = d.runFirst.data();
    int *blockFirst = d.blockFirst.data(), *blockSize = d.blockSize.data();
    Real* inverse = d.blockInverse.data();
    const int* gate = &c->newtonActive;
    ex.forEach(v.rowCapacity, nullptr, gate, [=] CS_LAMBDA(int i) { masked[i] = i < c->rowCount ? head[i] : 0; });
    ex.exclusiveScan(masked, runIndex, v.rowCapacity);
    // Run k of row i: runIndex[i] + head[i] - 1; runFirst gets rowCount after the last run.
    ex.forEach(v.rowCapacity, &c->rowCount, gate, [=] CS_LAMBDA(int i) {
        if (head[i]) runFirst[runIndex[i]] = i;
        if (i == c->rowCount - 1) runFirst[runIndex[i] + head[i]] = c->rowCount;
    });
    ex.forEach(v.rowCapacity, &c->rowCount, gate, [=] CS_LAMBDA(int i) {
        const int k = runIndex[i] + head[i] - 1;
        blockOfRow(runFirst[k], runFirst[k + 1], i, blockFirst[i], blockSize[i]);
    });
    ex.forEach(v.rowCapacity, &c->rowCount, gate, [=] CS_LAMBDA(int i) {
        if (blockFirst[i] == i) factorBlock(s, i, blockSize[i], inverse);
    });
}

// w = H^-1 J^T x, gated by *gate.
template <class Exec>
void recordScatter(Exec& ex, const SolveView& v, const Real* x, Spatial* w, const int* gate) {
    const RowSystemView s = v.sys;
    const uint64_t* entries = v.entries;
    const int *start = v.bodyStart, *runHead = v.runHead;
    if constexpr (Exec::kRowKernels) {   // by runs in row order: the sorted scatter's bits (host_row_system.h)
        ex.scatterRows(s, v.bodies, x, w, gate);
        return;
    }
    if (v.sorted) {
        ex.forEach(v.bodies, nullptr, gate, [=] CS_LAMBDA(int b) {
            w[b] = gatherBodyImpulseRuns(s, entries, start[b], start[b + 1], b, x, runHead);
        });
        return;
    }
    ex.forEach(v.bodies, nullptr, gate, [=] CS_LAMBDA(int b) { w[b] = Spatial{{0, 0, 0}, {0, 0, 0}}; });
    ex.forEach(v.rowCapacity, &v.c->rowCount, gate, [=] CS_LAMBDA(int i) {
        if (s.bodyA[i] >= 0 && s.invMass[s.bodyA[i]] > 0) atomicAddSpatial(&w[s.bodyA[i]], x[i] * s.invMassJacobianA[i]);
        if (s.bodyB[i] >= 0 && s.invMass[s.bodyB[i]] > 0) atomicAddSpatial(&w[s.bodyB[i]], x[i] * s.invMassJacobianB[i]);
        if (!s.bodyC) return;   // four-body rows (FEM)
        if (s.bodyC[i] >= 0 && s.invMass[s.bodyC[i]] > 0) atomicAddSpatial(&w[s.bodyC[i]], x[i] * s.invMassJacobianC[i]);
        if (s.bodyD[i] >= 0 && s.invMass[s.bodyD[i]] > 0) atomicAddSpatial(&w[s.bodyD[i]], x[i] * s.invMassJacobianD[i]);
    });
}

// y = A x (b null) or y = b - A x; *out = y . v (v null: y . y), summed by runs.
template <class Exec>
void recordProduct(Exec& ex, const SolveView& v, const Real* x, const Real* b, Real* y, const Real* dotWith, Real* out,
                   Spatial* w, const int* gate) {
    recordScatter(ex, v, x, w, gate);
    const RowSystemView s = v.sys;
    if constexpr (Exec::kRowKernels) {   // by runs over J's columns: the same bits (host_row_system.h)
        ex.productRows(s, w, x, b, y, dotWith, out, gate);
        return;
    }
    ex.forEach(v.rowCapacity, &v.c->rowCount, gate, [=] CS_LAMBDA(int i) {
        const Real ax = systemRowProduct(s, i, w, x);
        y[i] = b ? b[i] - ax : ax;
    });
    ex.sum(&v.c->rowCount, gate, SumOrder{kCpuSumBlocks, v.runHead}, out,
           [=] CS_LAMBDA(int i) { return y[i] * (dotWith ? dotWith[i] : y[i]); });
}

// f(i) for the rows, then *out0 (and *out1, unless null) = the blocked sums of term0(i)
// (term1(i)), each term reading only what f(i) wrote at i: on the host one pass over the rows, as
// the CPU solvers fuse them (HostExecutor::forEachSums, the same bits); elsewhere a forEach and
// the sums.
template <class Exec, class F, class Term0, class Term1>
void recordRowsAndSums(Exec& ex, const SolveView& v, const int* gate, const F& f, Real* out0, const Term0& term0,
                       Real* out1, const Term1& term1) {
    const int* rows = &v.c->rowCount;
    if constexpr (Exec::kRowKernels) {
        ex.forEachSums(rows, gate, f, out0, term0, out1, term1);
    } else {
        ex.forEach(v.rowCapacity, rows, gate, f);
        ex.sum(rows, gate, kBlockedSum, out0, term0);
        if (out1) ex.sum(rows, gate, kBlockedSum, out1, term1);
    }
}

// One iteration's residual ||r||^2 = l.rr: the monitor's step (linear_solvers.cpp Monitor).
template <class Exec>
void recordMonitorStep(Exec& ex, LinearControl* l, bool last) {
    ex.serial(&l->active, [=] CS_LAMBDA() {
        l->iterations++;
        l->residual = std::sqrt(l->rr);
        l->active = !linearDone(l->residual, l->target) && !last;
    });
}

template <class Exec>
void recordJacobi(Exec& ex, PipelineData<Exec>& d, const SolveView& v, int iterations) {
    LinearControl* l = v.l;
    const RowSystemView s = v.sys;
    Real *x = d.dlambda.data(), *r = d.r.data(), *power = d.power.data(), *powerOut = d.powerOut.data();
    const Real *b = d.rhs.data(), *invDiag = d.invDiag.data();
    Spatial* w = d.w.data();
    const int* rows = &v.c->rowCount;
    // omega = 1 / lambda_max(D^-1 A) by power iteration from the ones vector (solveJacobi).
    ex.forEach(v.rowCapacity, rows, &l->active, [=] CS_LAMBDA(int i) { power[i] = 1; });
    ex.serial(&l->active, [=] CS_LAMBDA() {
        l->powerActive = 1;
        l->lambdaMax = 1;
    });
    for (int k = 0; k < kJacobiPowerIterations && !ex.stopped(&l->powerActive); ++k) {
        recordScatter(ex, v, power, w, &l->powerActive);
        ex.forEach(v.rowCapacity, rows, &l->powerActive,
                   [=] CS_LAMBDA(int i) { powerOut[i] = systemRowProduct(s, i, w, power) * invDiag[i]; });
        ex.max(rows, &l->powerActive, &l->rhoNext, [=] CS_LAMBDA(int i) { return std::fabs(powerOut[i]); });
        ex.serial(&l->powerActive, [=] CS_LAMBDA() {
            if (!(l->rhoNext > Real(0))) l->powerActive = 0;
            else l->lambdaMax = l->rhoNext;   // infinity-norm ratio, the vector normalized to max 1
        });
        ex.forEach(v.rowCapacity, rows, &l->powerActive, [=] CS_LAMBDA(int i) { power[i] = powerOut[i] / l->rhoNext; });
    }
    ex.serial(&l->active, [=] CS_LAMBDA() { l->omega = Real(1) / l->lambdaMax; });
    for (int it = 0; it < iterations && !ex.stopped(&l->active); ++it) {
        ex.forEach(v.rowCapacity, rows, &l->active, [=] CS_LAMBDA(int i) { x[i] += l->omega * invDiag[i] * r[i]; });
        recordProduct(ex, v, x, b, r, nullptr, &l->rr, w, &l->active);
        recordMonitorStep(ex, l, it + 1 == iterations);
    }
}

template <class Exec>
void recordGaussSeidel(Exec& ex, PipelineData<Exec>& d, const SolveView& v, int iterations) {
    LinearControl* l = v.l;
    const RowSystemView s = v.sys;
    Real *x = d.dlambda.data(), *r = d.r.data();
    const Real *b = d.rhs.data(), *invDiag = d.invDiag.data();
    Spatial* w = d.w.data();
    const int *order = d.colourRowsOut.data(), *start = d.colourStart.data(), *size = d.colourSize.data();
    // dx_i = (b_i - J_i w - C_i x_i) / A_ii, x_i += dx_i, w += H^-1 J_i^T dx_i (gaussSeidelRow).
    auto row = [=] CS_LAMBDA(int i) {
        const Real dx = (b[i] - gatherRow(s, i, w) - s.compliance[i] * x[i]) * invDiag[i];
        x[i] += dx;
        scatterRow(s, i, dx, w);
    };
    for (int it = 0; it < iterations && !ex.stopped(&l->active); ++it) {
        for (int k = 0; k < kMaxColours; ++k)   // rows of one colour share no dynamic body
            ex.forEach(v.rowCapacity, size + k, &l->active, [=] CS_LAMBDA(int j) { row(order[start[k] + j]); });
        ex.serial(&l->active, [=] CS_LAMBDA() {   // the rows no colour took, in order
            for (int j = start[kMaxColours]; j < start[kMaxColours + 1]; ++j) row(order[j]);
        });
        // w is current after the sweep: the residual needs only the gather.
        ex.forEach(v.rowCapacity, &v.c->rowCount, &l->active,
                   [=] CS_LAMBDA(int i) { r[i] = b[i] - systemRowProduct(s, i, w, x); });
        ex.sum(&v.c->rowCount, &l->active, SumOrder{kCpuSumBlocks, v.runHead}, &l->rr,
               [=] CS_LAMBDA(int i) { return r[i] * r[i]; });
        recordMonitorStep(ex, l, it + 1 == iterations);
    }
}

template <class Exec>
void recordPCG(Exec& ex, PipelineData<Exec>& d, const SolveView& v, int iterations) {
    LinearControl* l = v.l;
    StepCounters* c = v.c;
    Real *x = d.dlambda.data(), *r = d.r.data(), *z = d.z.data(), *p = d.p.data(), *ap = d.ap.data();
    Real* best = d.best.data();
    const Real* invDiag = d.invDiag.data();
    const int* rows = &c->rowCount;
    const bool block = v.block;
    const BlockPreconditionerView m = v.m;
    ex.forEach(v.rowCapacity, rows, &c->newtonActive, [=] CS_LAMBDA(int i) {
        p[i] = z[i] = block ? applyBlockRow(m, i, r) : invDiag[i] * r[i];
        best[i] = x[i];
    });
    ex.sum(rows, &c->newtonActive, kBlockedSum, &l->rz, [=] CS_LAMBDA(int i) { return r[i] * z[i]; });
    for (int it = 0; it < iterations && !ex.stopped(&l->active); ++it) {
        recordProduct(ex, v, p, nullptr, ap, p, &l->pap, d.w.data(), &l->active);
        ex.serial(&l->active, [=] CS_LAMBDA() {
            l->copyBest = 0;
            if (!pcgStepLength(l->pap, l->rz, l->alpha)) l->active = 0;
        });
        const auto update = [=] CS_LAMBDA(int i) {
            x[i] += l->alpha * p[i];
            const Real ri = r[i] - l->alpha * ap[i];
            r[i] = ri;
            if (!block) z[i] = invDiag[i] * ri;
        };
        const auto rr = [=] CS_LAMBDA(int i) { return r[i] * r[i]; };
        const auto rz = [=] CS_LAMBDA(int i) { return r[i] * z[i]; };
        if (block) {   // z = M^-1 r needs the whole block's new r
            recordRowsAndSums(ex, v, &l->active, update, &l->rr, rr, nullptr, rr);
            recordRowsAndSums(ex, v, &l->active, [=] CS_LAMBDA(int i) { z[i] = applyBlockRow(m, i, r); }, &l->rzNext,
                              rz, nullptr, rz);
        } else {
            recordRowsAndSums(ex, v, &l->active, update, &l->rr, rr, &l->rzNext, rz);
        }
        const bool last = it + 1 == iterations;
        ex.serial(&l->active, [=] CS_LAMBDA() {
            l->iterations++;
            l->residual = std::sqrt(l->rr);
            bool goOn = !linearDone(l->residual, l->target) && !last;
            const int best = pcgTrackBest(l->residual, l->bestResidual);
            l->copyBest = best > 0;
            if (best < 0) goOn = false;
            l->beta = l->rzNext / l->rz;
            l->rz = l->rzNext;
            l->active = goOn;
        });
        ex.forEach(v.rowCapacity, rows, &l->copyBest, [=] CS_LAMBDA(int i) { best[i] = x[i]; });
        ex.forEach(v.rowCapacity, rows, &l->active, [=] CS_LAMBDA(int i) { p[i] = z[i] + l->beta * p[i]; });
    }
    // CG's residual is not monotone: return the best iterate.
    ex.forEach(v.rowCapacity, rows, &c->newtonActive, [=] CS_LAMBDA(int i) {
        if (l->bestResidual < l->residual) x[i] = best[i];
    });
}

template <class Exec>
void recordPCR(Exec& ex, PipelineData<Exec>& d, const SolveView& v, int iterations) {
    LinearControl* l = v.l;
    Real *x = d.dlambda.data(), *r = d.r.data(), *z = d.z.data(), *p = d.p.data(), *q = d.q.data();
    Real *ap = d.ap.data(), *az = d.az.data();
    const Real* invDiag = d.invDiag.data();
    Spatial* w = d.w.data();
    const int* rows = &v.c->rowCount;
    const bool block = v.block;
    const BlockPreconditionerView m = v.m;
    ex.forEach(v.rowCapacity, rows, &l->active,
               [=] CS_LAMBDA(int i) { z[i] = block ? applyBlockRow(m, i, r) : invDiag[i] * r[i]; });
    ex.sum(rows, &l->active, kBlockedSum, &l->normSq, [=] CS_LAMBDA(int i) { return z[i] * r[i]; });
    recordProduct(ex, v, z, nullptr, az, z, &l->rho, w, &l->active);
    for (int it = 0; it < iterations && !ex.stopped(&l->active); ++it) {
        // p = z + beta p, Ap = Az + beta Ap (first pass: p = z, Ap = Az), q = M^-1 Ap.
        const bool first = it == 0;
        const auto direction = [=] CS_LAMBDA(int i) {
            const Real keep = first ? Real(0) : l->beta;
            const Real api = az[i] + (keep != Real(0) ? keep * ap[i] : Real(0));
            p[i] = z[i] + (keep != Real(0) ? keep * p[i] : Real(0));
            ap[i] = api;
            if (!block) q[i] = invDiag[i] * api;
        };
        const auto qap = [=] CS_LAMBDA(int i) { return q[i] * ap[i]; };
        const auto qr = [=] CS_LAMBDA(int i) { return q[i] * r[i]; };
        if (block) {   // q = M^-1 Ap needs the whole block's new Ap
            ex.forEach(v.rowCapacity, rows, &l->active, direction);
            recordRowsAndSums(ex, v, &l->active, [=] CS_LAMBDA(int i) { q[i] = applyBlockRow(m, i, ap); }, &l->qap,
                              qap, &l->qr, qr);
        } else if constexpr (Exec::kRowKernels) {   // the CPU's vectorized pass (krylov_passes.h), the same bits
            ex.blockSums(rows, &l->active, &l->qap, &l->qr, [=](int begin, int end, Real* acc) {
                pcrDirectionPass(begin, end, first ? Real(0) : l->beta, z, az, r, invDiag, p, ap, q, acc);
            });
        } else {
            recordRowsAndSums(ex, v, &l->active, direction, &l->qap, qap, &l->qr, qr);
        }
        ex.serial(&l->active, [=] CS_LAMBDA() {
            if (!pcrStepLength(l->qap, l->qr, l->normSq, l->alpha)) l->active = 0;
        });
        if constexpr (Exec::kRowKernels) {
            ex.blockSums(rows, &l->active, &l->rr, nullptr, [=](int begin, int end, Real* acc) {
                pcrUpdatePass(begin, end, l->alpha, p, ap, q, x, r, z, acc);
            });
        } else {
            const auto rr = [=] CS_LAMBDA(int i) { return r[i] * r[i]; };
            recordRowsAndSums(ex, v, &l->active, [=] CS_LAMBDA(int i) {
                x[i] += l->alpha * p[i];
                r[i] = r[i] - l->alpha * ap[i];
                z[i] -= l->alpha * q[i];
            }, &l->rr, rr, nullptr, rr);
        }
        recordMonitorStep(ex, l, it + 1 == iterations);
        recordProduct(ex, v, z, nullptr, az, z, &l->rhoNext, w, &l->active);
        ex.serial(&l->active, [=] CS_LAMBDA() {
            l->beta = pcrBeta(l->rho, l->rhoNext);
            l->rho = l->rhoNext;
        });
    }
}

// [J M^-1 J^T + C + eps I] dlambda = -h from dlambda = 0 (solveLinear), gated by newtonActive.
template <class Exec>
void recordLinearSolve(Exec& ex, PipelineData<Exec>& d, const SolveView& v, const SolverSettings& settings) {
    StepCounters* c = v.c;
    LinearControl* l = v.l;
    const RowSystemView s = v.sys;
    Real *invDiag = d.invDiag.data(), *r = d.r.data();
    const Real* b = d.rhs.data();
    Spatial* w = d.w.data();
    const Real* tolerance = &c->linearTolerance;   // settings.linearTolerance, or eta_k (pipeline_newton.h)
    const int* rows = &c->rowCount;
    // invDiag_i = 1 / A_ii, 0 for an empty row (its unknown is left as it is).
    ex.forEach(v.rowCapacity, rows, &c->newtonActive, [=] CS_LAMBDA(int i) {
        const Real a = rowDiagonal(s, i);
        invDiag[i] = a > Real(0) ? Real(1) / a : Real(0);
    });
    ex.sum(rows, &c->newtonActive, kBlockedSum, &l->bb, [=] CS_LAMBDA(int i) { return b[i] * b[i]; });
    // x = 0: r = b, w = H^-1 J^T x = 0, ||r|| = ||b|| (computeResidual's zero start).
    ex.forEach(v.rowCapacity, rows, &c->newtonActive, [=] CS_LAMBDA(int i) { r[i] = b[i]; });
    ex.forEach(v.bodies, nullptr, &c->newtonActive, [=] CS_LAMBDA(int k) { w[k] = Spatial{{0, 0, 0}, {0, 0, 0}}; });
    ex.serial(&c->newtonActive, [=] CS_LAMBDA() {
        l->iterations = 0;
        l->target = linearTarget(*tolerance, std::sqrt(l->bb));
        l->residual = l->bestResidual = std::sqrt(l->bb);
        l->active = !linearDone(l->residual, l->target);
    });
    const int n = settings.linearIterations;
    SolveView vb = v;   // PCG and PCR with the block preconditioner (linear_solvers.cpp solveLinear)
    vb.block = settings.preconditioner == Preconditioner::Block &&
               (settings.linearSolver == LinearSolverType::PCG || settings.linearSolver == LinearSolverType::PCR);
    if (vb.block) {
        vb.m = BlockPreconditionerView{d.blockFirst.data(), d.blockSize.data(), d.blockInverse.data()};
        recordBlockPreconditioner(ex, d, vb);
    }
    switch (settings.linearSolver) {
    case LinearSolverType::Jacobi: recordJacobi(ex, d, v, n); break;
    case LinearSolverType::GaussSeidel: recordGaussSeidel(ex, d, v, n); break;
    case LinearSolverType::PCG: recordPCG(ex, d, vb, n); break;
    case LinearSolverType::PCR: recordPCR(ex, d, vb, n); break;
    }
    ex.serial(&c->newtonActive, [=] CS_LAMBDA() { c->linearIterations += l->iterations; });
}

}  // namespace cs
