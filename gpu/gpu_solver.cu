// The solve stage on the device: [NSN] Algorithm 1 (engine/solver/newton.cpp) and the four
// matrix-free linear solvers (engine/solver/linear_solvers.cpp), mirrored step for step.
//
// Per-row and per-body math is the shared CS_HD code: evalRow (constraint_rows.h),
// scatterRow / gatherRow / rowDiagonal / applyInvMass (row_system.h), and gpu/step_hd.h for the
// deterministic scatter and the colouring. The kernels are thin wrappers over them. What is
// written here is the control flow: the scalar recurrences of the Krylov solvers run in
// one-thread kernels on device scalars (LinearControl), so convergence is tested on the device.
//
// Launch overhead. Every loop has a fixed shape (newtonIterations x linearIterations), so the
// whole stage is captured once into a CUDA graph and replayed each substep; kernels read the row
// count and the "still running" flags from device memory and return at once when the Newton
// merit or the linear residual has converged. The graph is captured again only when a buffer
// moves (it grew) or the loop shape changes (solver, iteration counts, deterministic mode).
// Known cost: converged iterations still launch their (empty) kernels; CUDA 12.4+ conditional
// graph nodes would skip them and are the next step once this runs on a GPU.
//
// Determinism. Reductions use the fixed-order tree of cuda_util.cuh. The scatter
// w = H^-1 J^T x uses atomicAdd by default (fast, not bit-reproducible), or with
// GpuSettings::deterministic the per-body sorted sum of step_hd.h. Gauss-Seidel sweeps colour
// by colour (no two rows of a colour share a dynamic body), so it is deterministic either way.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <limits>

#include "gpu/device_world.cuh"

namespace cs::gpu {
namespace {

// ---- per-row and per-body kernels (thin wrappers) -------------------------------------------

__global__ void precomputeRowsKernel(RowSystemView s, const StepCounters* c, Spatial* minvJA, Spatial* minvJB,
                                     Real* diagA, Real* compliance) {
    const int i = threadIndex();
    if (i >= c->rowCount) return;
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    minvJA[i] = s.bodyA[i] >= 0 ? applyInvMass(s, s.bodyA[i], s.jacobianA[i]) : zero;
    minvJB[i] = s.bodyB[i] >= 0 ? applyInvMass(s, s.bodyB[i], s.jacobianB[i]) : zero;
    diagA[i] = rowDiagonal(s, i);
    compliance[i] = 0;
}

// Scatter entries (body << 32 | row) of every row's dynamic bodies; unused slots sort last.
__global__ void entryKeysKernel(RowSystemView s, const StepCounters* c, int capacity, uint64_t* keys) {
    const int i = threadIndex();
    if (i >= capacity) return;
    const bool row = i < c->rowCount;
    const int a = row ? s.bodyA[i] : -1, b = row ? s.bodyB[i] : -1;
    keys[2 * i] = a >= 0 && s.invMass[a] > 0 ? scatterEntryKey(a, i) : ~uint64_t(0);
    keys[2 * i + 1] = b >= 0 && s.invMass[b] > 0 ? scatterEntryKey(b, i) : ~uint64_t(0);
}

__global__ void bodyStartKernel(const uint64_t* keys, int count, int bodies, int* start) {
    const int b = threadIndex();
    if (b <= bodies) start[b] = scatterEntryStart(keys, count, b);
}

__global__ void zeroBodiesKernel(const int* run, int bodies, Spatial* w) {
    const int b = threadIndex();
    if (b < bodies && *run) w[b] = Spatial{{0, 0, 0}, {0, 0, 0}};
}

__device__ void atomicAddSpatial(Spatial& w, const Spatial& v) {
    atomicAdd(&w.lin.x, v.lin.x); atomicAdd(&w.lin.y, v.lin.y); atomicAdd(&w.lin.z, v.lin.z);
    atomicAdd(&w.ang.x, v.ang.x); atomicAdd(&w.ang.y, v.ang.y); atomicAdd(&w.ang.z, v.ang.z);
}

// Fast mode: w += H^-1 J_i^T x_i with atomics (scatterRow's terms, summed in any order).
__global__ void scatterAtomicKernel(RowSystemView s, const StepCounters* c, const int* run, const Real* x, Spatial* w) {
    const int i = threadIndex();
    if (i >= c->rowCount || !*run) return;
    if (s.bodyA[i] >= 0 && s.invMass[s.bodyA[i]] > 0) atomicAddSpatial(w[s.bodyA[i]], x[i] * s.invMassJacobianA[i]);
    if (s.bodyB[i] >= 0 && s.invMass[s.bodyB[i]] > 0) atomicAddSpatial(w[s.bodyB[i]], x[i] * s.invMassJacobianB[i]);
}

// Deterministic mode: w_b summed over the body's rows in row order.
__global__ void scatterSortedKernel(RowSystemView s, const uint64_t* keys, const int* start, const int* run,
                                    const Real* x, Spatial* w) {
    const int b = threadIndex();
    if (b >= s.bodyCount || !*run) return;
    w[b] = gatherBodyImpulse(s, keys, start[b], start[b + 1], b, x);
}

__global__ void velocityKernel(const int* run, int bodies, const Spatial* unconstrained, const Spatial* w, Spatial* u) {
    const int b = threadIndex();
    if (b < bodies && *run) u[b] = unconstrained[b] + w[b];
}

__global__ void jvKernel(RowSystemView s, const StepCounters* c, const Spatial* u, Real* jv) {
    const int i = threadIndex();
    if (i < c->rowCount && c->newtonActive) jv[i] = gatherRow(s, i, u);
}

__global__ void evalRowKernel(RowEvalView v, const StepCounters* c) {
    const int i = threadIndex();
    if (i < c->rowCount && c->newtonActive) evalRow(v, i);
}

// y = b - (J w + C x) (b non-null) or y = J w + C x: the gather half of A x.
__global__ void gatherKernel(RowSystemView s, const StepCounters* c, const int* run, const Spatial* w, const Real* x,
                             const Real* b, Real* y) {
    const int i = threadIndex();
    if (i >= c->rowCount || !*run) return;
    const Real ax = gatherRow(s, i, w) + s.compliance[i] * x[i];
    y[i] = b ? b[i] - ax : ax;
}

__global__ void inverseDiagonalKernel(RowSystemView s, const StepCounters* c, const int* run, Real* invDiag) {
    const int i = threadIndex();
    if (i >= c->rowCount || !*run) return;
    const Real d = rowDiagonal(s, i);
    invDiag[i] = d > Real(0) ? Real(1) / d : Real(0);
}

// ---- Newton control ---------------------------------------------------------------------------

__global__ void newtonStartKernel(StepCounters* c) {
    c->one = 1;
    c->newtonActive = c->rowCount > 0 ? 1 : 0;
    c->newtonIterations = 0;
    c->linearIterations = 0;
    c->merit = 0;
}

// After an evaluation: merit = ||phi||, history, and whether to go on (k: evaluations so far).
__global__ void newtonCheckKernel(StepCounters* c, const SolveParams* p, const Real* meritSq, int k, int maxIterations) {
    if (!c->newtonActive) return;
    c->merit = sqrt(*meritSq);
    if (k < kMaxNewtonHistory) c->newtonResidual[k] = c->merit;
    c->newtonIterations = k;
    c->newtonActive = c->merit > p->newtonTolerance && k < maxIterations;
}

// [J M^-1 J^T + C + eps I] dlambda = -h ([NSN] eq. 59, section 8.4): the linear system.
__global__ void linearSetupKernel(const StepCounters* c, const SolveParams* p, const Real* residual, Real* compliance,
                                  Real* rhs, Real* dlambda) {
    const int i = threadIndex();
    if (i >= c->rowCount || !c->newtonActive) return;
    compliance[i] += p->regularization;
    rhs[i] = -residual[i];
    dlambda[i] = 0;
}

// lambda = clamp(lambda_k + t dlambda, +-maxImpulse): the damped step ([NSN] eq. 61, 8.1).
__global__ void newtonStepKernel(const StepCounters* c, const SolveParams* p, const Real* dlambda, const Real* maxImpulse,
                                 Real* lambda) {
    const int i = threadIndex();
    if (i >= c->rowCount || !c->newtonActive) return;
    const Real v = lambda[i] + p->damping * dlambda[i];
    lambda[i] = v < -maxImpulse[i] ? -maxImpulse[i] : (v > maxImpulse[i] ? maxImpulse[i] : v);
}

// ---- linear solver control (linear_solvers.cpp's Monitor and scalar recurrences) -------------

__device__ bool monitorDone(const LinearControl* l) {
    return l->residual <= l->target || l->residual == Real(0) || !isfinite(l->residual);
}

// Start of a solve: target from ||b||^2 in dot1, initial residual from ||r||^2 in dot0.
__global__ void linearStartKernel(const StepCounters* c, const SolveParams* p, LinearControl* l) {
    if (!c->newtonActive) { l->active = 0; return; }
    l->target = p->linearTolerance > Real(0) ? p->linearTolerance * sqrt(l->dot1) : Real(-1);
    l->iterations = 0;
    l->residual = l->bestResidual = sqrt(l->dot0);
    l->copyBest = 0;
    l->beta = 0;
    l->active = !monitorDone(l);
}

__global__ void linearArmKernel(const StepCounters* c, LinearControl* l) { l->active = c->newtonActive; }

// One iteration's residual ||r||^2 in dot0.
__global__ void monitorStepKernel(LinearControl* l, int last) {
    if (!l->active) return;
    l->iterations++;
    l->residual = sqrt(l->dot0);
    l->active = !monitorDone(l) && !last;
}

__global__ void linearEndKernel(StepCounters* c, const LinearControl* l) {
    if (c->newtonActive) c->linearIterations += l->iterations;
}

__global__ void jacobiUpdateKernel(const StepCounters* c, const SolveParams* p, const int* run, const Real* invDiag,
                                   const Real* r, Real* x) {
    const int i = threadIndex();
    if (i < c->rowCount && *run) x[i] += p->jacobiOmega * invDiag[i] * r[i];
}

// Gauss-Seidel: one colour's rows in parallel (gaussSeidelRow of linear_solvers.cpp).
__device__ void gaussSeidelRowDevice(const RowSystemView& s, int i, const Real* b, Real* x, const Real* invDiag, Spatial* w) {
    const Real dx = (b[i] - gatherRow(s, i, w) - s.compliance[i] * x[i]) * invDiag[i];
    x[i] += dx;
    scatterRow(s, i, dx, w);
}

__global__ void gaussSeidelColourKernel(RowSystemView s, const int* run, const int* colourStart, int colourIndex,
                                        const Real* b, Real* x, const Real* invDiag, Spatial* w) {
    const int k = colourStart[colourIndex] + threadIndex();
    if (!*run || k >= colourStart[colourIndex + 1]) return;
    gaussSeidelRowDevice(s, s.colourRows[k], b, x, invDiag, w);
}

// The rows no colouring round took: one thread, in order (the CPU's overflow colour).
__global__ void gaussSeidelSerialKernel(RowSystemView s, const int* run, const int* colourStart, const Real* b, Real* x,
                                        const Real* invDiag, Spatial* w) {
    if (!*run) return;
    for (int k = colourStart[kMaxColours]; k < colourStart[kMaxColours + 1]; ++k)
        gaussSeidelRowDevice(s, s.colourRows[k], b, x, invDiag, w);
}

__global__ void colourInitKernel(const StepCounters* c, int capacity, int* colour, int* round) {
    const int i = threadIndex();
    if (i >= capacity) return;
    colour[i] = i < c->rowCount ? -1 : kMaxColours + 1;   // unused slots sort after everything
    round[i] = i < c->rowCount ? -1 : 0;
}

__global__ void colourRoundKernel(RowSystemView s, const StepCounters* c, const uint64_t* keys, const int* bodyStart,
                                  int* round, int* colour, int k) {
    const int i = threadIndex();
    if (i >= c->rowCount || round[i] >= 0) return;
    const int chosen = colourRowInRound(s, keys, bodyStart, round, colour, i, k);
    if (chosen < 0) return;
    colour[i] = chosen;
    round[i] = k;
}

// Sort key of a row: its colour; the serial sweep's rows (kMaxColours, or still pending: -1)
// after the last colour.
__global__ void colourKeysKernel(int capacity, const int* colour, int* keys, int* rows) {
    const int i = threadIndex();
    if (i >= capacity) return;
    keys[i] = colour[i] < 0 ? kMaxColours : colour[i];   // kMaxColours + 1: unused slots
    rows[i] = i;
}

__global__ void colourStartKernel(const int* sortedKeys, const StepCounters* c, int* start) {
    const int k = threadIndex();
    if (k > kMaxColours + 1) return;
    int lo = 0, hi = c->rowCount;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sortedKeys[mid] < k) lo = mid + 1;
        else hi = mid;
    }
    start[k] = lo;
}

// PCG (linear_solvers.cpp solvePCG): z = M^-1 r, p = z, best = x; r.z in dot0 afterwards.
__global__ void pcgInitKernel(const StepCounters* c, const int* run, const Real* invDiag, const Real* r, Real* z,
                              Real* p, Real* best, const Real* x) {
    const int i = threadIndex();
    if (i >= c->rowCount || !*run) return;
    z[i] = p[i] = invDiag[i] * r[i];
    best[i] = x[i];
}
__global__ void pcgRzKernel(LinearControl* l) { if (l->active) l->rz = l->dot0; }
// p.Ap in dot0: alpha, or stop on breakdown.
__global__ void pcgAlphaKernel(LinearControl* l) {
    if (!l->active) return;
    if (!(l->dot0 > Real(0)) || !(l->rz > Real(0))) { l->active = 0; return; }
    l->alpha = l->rz / l->dot0;
}
__global__ void pcgUpdateKernel(const StepCounters* c, const LinearControl* l, const Real* invDiag, const Real* p,
                                const Real* ap, Real* x, Real* r, Real* z) {
    const int i = threadIndex();
    if (i >= c->rowCount || !l->active) return;
    x[i] += l->alpha * p[i];
    r[i] -= l->alpha * ap[i];
    z[i] = invDiag[i] * r[i];
}
constexpr Real kPcgGrowth = Real(1e3);   // linear_solvers.cpp: stop once the residual grows this much
// r.r in dot0, r.z in dot1: monitor, best iterate, growth stop, beta.
__global__ void pcgControlKernel(LinearControl* l, int last) {
    l->copyBest = 0;
    if (!l->active) return;
    l->iterations++;
    l->residual = sqrt(l->dot0);
    bool go = !monitorDone(l) && !last;
    if (l->residual < l->bestResidual) {
        l->bestResidual = l->residual;
        l->copyBest = 1;
    } else if (!(l->residual <= kPcgGrowth * l->bestResidual)) {
        go = false;
    }
    l->beta = l->dot1 / l->rz;
    l->rz = l->dot1;
    l->active = go;
}
__global__ void pcgBestKernel(const StepCounters* c, const LinearControl* l, const Real* x, Real* best) {
    const int i = threadIndex();
    if (i < c->rowCount && l->copyBest) best[i] = x[i];
}
__global__ void pcgDirectionKernel(const StepCounters* c, const LinearControl* l, const Real* z, Real* p) {
    const int i = threadIndex();
    if (i < c->rowCount && l->active) p[i] = z[i] + l->beta * p[i];
}
__global__ void pcgFinishKernel(const StepCounters* c, LinearControl* l, const Real* best, Real* x) {
    const int i = threadIndex();
    if (i < c->rowCount && c->newtonActive && l->bestResidual < l->residual) x[i] = best[i];
}

// PCR (linear_solvers.cpp solvePCR).
__global__ void pcrInitKernel(const StepCounters* c, const int* run, const Real* invDiag, const Real* r, Real* z) {
    const int i = threadIndex();
    if (i < c->rowCount && *run) z[i] = invDiag[i] * r[i];
}
__global__ void pcrNormKernel(LinearControl* l) { if (l->active) l->normSq = l->dot0; }
__global__ void pcrRhoKernel(LinearControl* l) { if (l->active) l->rho = l->dot0; }
__global__ void pcrDirectionKernel(const StepCounters* c, const LinearControl* l, int first, const Real* invDiag,
                                   const Real* z, const Real* az, Real* p, Real* ap, Real* q) {
    const int i = threadIndex();
    if (i >= c->rowCount || !l->active) return;
    const Real keep = first ? Real(0) : l->beta;
    p[i] = z[i] + (keep != Real(0) ? keep * p[i] : Real(0));
    ap[i] = az[i] + (keep != Real(0) ? keep * ap[i] : Real(0));
    q[i] = invDiag[i] * ap[i];
}
// q.Ap in dot0, q.r in dot1.
__global__ void pcrAlphaKernel(LinearControl* l) {
    if (!l->active) return;
    const Real qap = l->dot0, qr = l->dot1;
    if (!(qap > Real(0)) || !isfinite(qr)) { l->active = 0; return; }
    const Real decrease = qr * qr / qap;
    if (!(decrease > std::numeric_limits<Real>::epsilon() * l->normSq)) { l->active = 0; return; }
    l->normSq -= decrease;
    l->alpha = qr / qap;
}
__global__ void pcrUpdateKernel(const StepCounters* c, const LinearControl* l, const Real* p, const Real* ap,
                                const Real* q, Real* x, Real* r, Real* z) {
    const int i = threadIndex();
    if (i >= c->rowCount || !l->active) return;
    x[i] += l->alpha * p[i];
    r[i] -= l->alpha * ap[i];
    z[i] -= l->alpha * q[i];
}
// z.Az in dot0.
__global__ void pcrBetaKernel(LinearControl* l) {
    if (!l->active) return;
    const Real next = l->dot0;
    l->beta = (l->rho > Real(0) && next > Real(0)) ? next / l->rho : Real(0);
    l->rho = next;
}

// ---- the stage ---------------------------------------------------------------------------------

struct Solve {
    DeviceWorld& d;
    const SolverSettings& settings;
    bool deterministic;
    RowSystemView view;
    StepCounters* c;
    LinearControl* l;
    int* run;          // &l->active: the linear solver's gate
    int* newtonRun;    // &c->newtonActive
    int rows, bodies;
    Real h;   // baked into evalRow's view: a new h captures the graph again

    void rowLaunch(const char* name, auto kernel, auto... args) {
        launchKernel(name, Launch::Row, rows, d.stream, kernel, args...);
    }
    void bodyLaunch(const char* name, auto kernel, auto... args) {
        launchKernel(name, Launch::Body, bodies, d.stream, kernel, args...);
    }
    void serial(const char* name, auto kernel, auto... args) {
        launchKernel(name, Launch::Serial, 1, d.stream, kernel, args...);
    }
    void reduce(const Real* x0, const Real* y0, Real* out0, const Real* x1, const Real* y1, Real* out1, const int* gate) {
        deviceReduce(x0, y0, out0, x1, y1, out1, &c->rowCount, gate, d.partial.data(), d.stream);
    }

    // w = H^-1 J^T x, gated by *gate.
    void scatter(const Real* x, Spatial* w, const int* gate) {
        if (deterministic) {
            bodyLaunch("scatterSorted", scatterSortedKernel, view, d.entryKeys.data(), d.bodyStart.data(), gate, x, w);
        } else {
            bodyLaunch("zeroBodies", zeroBodiesKernel, gate, bodies, w);
            rowLaunch("scatterAtomic", scatterAtomicKernel, view, c, gate, x, w);
        }
    }
    // y = b - A x into y, ||y||^2 into dot0 (w left as H^-1 J^T x).
    void residual(const Real* b, const Real* x, Real* y) {
        scatter(x, d.w.data(), run);
        rowLaunch("gather", gatherKernel, view, c, run, d.w.data(), x, b, y);
        reduce(y, nullptr, &l->dot0, nullptr, nullptr, nullptr, run);
    }
    // y = A x, x . y into dot0.
    void apply(const Real* x, Real* y) {
        scatter(x, d.w.data(), run);
        rowLaunch("gather", gatherKernel, view, c, run, d.w.data(), x, (const Real*)nullptr, y);
        reduce(x, y, &l->dot0, nullptr, nullptr, nullptr, run);
    }

    // u = u~ + H^-1 J^T lambda (newton.cpp velocitiesFromImpulses).
    void velocities(const int* gate) {
        scatter(d.lambda.data(), d.w.data(), gate);
        bodyLaunch("velocity", velocityKernel, gate, bodies, d.unconstrained.data(), d.w.data(), d.velocity.data());
    }
    // jv, evalRow, merit ||phi||: newton.cpp's evaluate().
    void evaluate(int k) {
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
        rowLaunch("jv", jvKernel, view, c, d.velocity.data(), d.jv.data());
        rowLaunch("evalRow", evalRowKernel, e, c);
        reduce(d.merit.data(), nullptr, &l->dot2, nullptr, nullptr, nullptr, newtonRun);
        serial("newtonCheck", newtonCheckKernel, c, d.params.data(), &l->dot2, k, settings.newtonIterations);
    }
    void linearSolve() {
        Real* x = d.dlambda.data();
        const Real* b = d.rhs.data();
        serial("linearArm", linearArmKernel, c, l);
        rowLaunch("inverseDiagonal", inverseDiagonalKernel, view, c, run, d.invDiag.data());
        reduce(b, nullptr, &l->dot1, nullptr, nullptr, nullptr, run);
        residual(b, x, d.r.data());
        serial("linearStart", linearStartKernel, c, d.params.data(), l);
        const int n = settings.linearIterations;
        Real *r = d.r.data(), *z = d.z.data(), *p = d.p.data(), *q = d.q.data(), *ap = d.ap.data(), *az = d.az.data();
        const Real* invDiag = d.invDiag.data();
        switch (settings.linearSolver) {
        case LinearSolverType::Jacobi:
            for (int it = 0; it < n; ++it) {
                rowLaunch("jacobiUpdate", jacobiUpdateKernel, c, d.params.data(), run, invDiag, r, x);
                residual(b, x, r);
                serial("monitorStep", monitorStepKernel, l, int(it + 1 == n));
            }
            break;
        case LinearSolverType::GaussSeidel:
            for (int it = 0; it < n; ++it) {
                for (int k = 0; k < kMaxColours; ++k)
                    rowLaunch("gaussSeidelColour", gaussSeidelColourKernel, view, run, d.colourStart.data(), k, b, x,
                              invDiag, d.w.data());
                serial("gaussSeidelSerial", gaussSeidelSerialKernel, view, run, d.colourStart.data(), b, x, invDiag,
                       d.w.data());
                rowLaunch("gather", gatherKernel, view, c, run, d.w.data(), x, b, r);
                reduce(r, nullptr, &l->dot0, nullptr, nullptr, nullptr, run);
                serial("monitorStep", monitorStepKernel, l, int(it + 1 == n));
            }
            break;
        case LinearSolverType::PCG:
            rowLaunch("pcgInit", pcgInitKernel, c, run, invDiag, r, z, p, d.best.data(), (const Real*)x);
            reduce(r, z, &l->dot0, nullptr, nullptr, nullptr, run);
            serial("pcgRz", pcgRzKernel, l);
            for (int it = 0; it < n; ++it) {
                apply(p, ap);
                serial("pcgAlpha", pcgAlphaKernel, l);
                rowLaunch("pcgUpdate", pcgUpdateKernel, c, (const LinearControl*)l, invDiag, (const Real*)p,
                          (const Real*)ap, x, r, z);
                reduce(r, nullptr, &l->dot0, r, z, &l->dot1, run);
                serial("pcgControl", pcgControlKernel, l, int(it + 1 == n));
                rowLaunch("pcgBest", pcgBestKernel, c, (const LinearControl*)l, (const Real*)x, d.best.data());
                rowLaunch("pcgDirection", pcgDirectionKernel, c, (const LinearControl*)l, (const Real*)z, p);
            }
            rowLaunch("pcgFinish", pcgFinishKernel, c, l, (const Real*)d.best.data(), x);
            break;
        case LinearSolverType::PCR:
            rowLaunch("pcrInit", pcrInitKernel, c, run, invDiag, (const Real*)r, z);
            reduce(z, r, &l->dot0, nullptr, nullptr, nullptr, run);
            serial("pcrNorm", pcrNormKernel, l);
            apply(z, az);
            serial("pcrRho", pcrRhoKernel, l);
            for (int it = 0; it < n; ++it) {
                rowLaunch("pcrDirection", pcrDirectionKernel, c, (const LinearControl*)l, int(it == 0), invDiag,
                          (const Real*)z, (const Real*)az, p, ap, q);
                reduce(q, ap, &l->dot0, q, r, &l->dot1, run);
                serial("pcrAlpha", pcrAlphaKernel, l);
                rowLaunch("pcrUpdate", pcrUpdateKernel, c, (const LinearControl*)l, (const Real*)p, (const Real*)ap,
                          (const Real*)q, x, r, z);
                reduce(r, nullptr, &l->dot0, nullptr, nullptr, nullptr, run);
                serial("monitorStep", monitorStepKernel, l, int(it + 1 == n));
                apply(z, az);
                serial("pcrBeta", pcrBetaKernel, l);
            }
            break;
        }
        serial("linearEnd", linearEndKernel, c, (const LinearControl*)l);
    }

    // cub's scratch for the sorts of buildStructure, reserved before the capture: a buffer that
    // moved during the capture would leave the graph with a dangling pointer.
    size_t entrySortBytes = 0, colourSortBytes = 0;
    void reserveScratch() {
        CS_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, entrySortBytes, d.entryKeys.data(), d.entryKeysOut.data(),
                                               2 * rows, 0, 64, d.stream));
        int* rowsOut = reinterpret_cast<int*>(d.entryKeysOut.data());
        CS_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, colourSortBytes, d.colourKeys.data(), d.colourKeysOut.data(),
                                                d.colourRows.data(), rowsOut, rows, 0, 8, d.stream));
        d.solveTemp.reserve(std::max<size_t>(std::max(entrySortBytes, colourSortBytes), 1));
    }

    // Sorted scatter entries and, for Gauss-Seidel, the colouring.
    void buildStructure() {
        if (!deterministic && settings.linearSolver != LinearSolverType::GaussSeidel) return;
        const int entries = 2 * rows;
        rowLaunch("entryKeys", entryKeysKernel, view, c, rows, d.entryKeys.data());
        CS_CUDA(cub::DeviceRadixSort::SortKeys(d.solveTemp.data(), entrySortBytes, d.entryKeys.data(),
                                               d.entryKeysOut.data(), entries, 0, 64, d.stream));
        CS_CUDA(cudaMemcpyAsync(d.entryKeys.data(), d.entryKeysOut.data(), entries * sizeof(uint64_t),
                                cudaMemcpyDeviceToDevice, d.stream));
        launchKernel("bodyStart", Launch::Body, bodies + 1, d.stream, bodyStartKernel, (const uint64_t*)d.entryKeys.data(),
                     entries, bodies, d.bodyStart.data());
        if (settings.linearSolver != LinearSolverType::GaussSeidel) return;
        rowLaunch("colourInit", colourInitKernel, c, rows, d.colour.data(), d.colourRound.data());
        for (int k = 0; k < kGpuColourRounds; ++k)
            rowLaunch("colourRound", colourRoundKernel, view, c, (const uint64_t*)d.entryKeys.data(),
                      (const int*)d.bodyStart.data(), d.colourRound.data(), d.colour.data(), k);
        rowLaunch("colourKeys", colourKeysKernel, rows, (const int*)d.colour.data(), d.colourKeys.data(), d.colourRows.data());
        // The sorted rows go through entryKeysOut's storage (2 rows uint64 hold rows ints).
        int* rowsOut = reinterpret_cast<int*>(d.entryKeysOut.data());
        CS_CUDA(cub::DeviceRadixSort::SortPairs(d.solveTemp.data(), colourSortBytes, d.colourKeys.data(),
                                                d.colourKeysOut.data(), d.colourRows.data(), rowsOut, rows, 0, 8,
                                                d.stream));
        CS_CUDA(cudaMemcpyAsync(d.colourRows.data(), rowsOut, rows * sizeof(int), cudaMemcpyDeviceToDevice, d.stream));
        launchKernel("colourStart", Launch::Serial, kMaxColours + 2, d.stream, colourStartKernel,
                     (const int*)d.colourKeysOut.data(), (const StepCounters*)c, d.colourStart.data());
        view.colourCount = kMaxColours + 1;
        view.colourStart = d.colourStart.data();
        view.colourRows = d.colourRows.data();
    }

    // newton.cpp solveNewton, every launch on d.stream.
    void record() {
        serial("newtonStart", newtonStartKernel, c);
        rowLaunch("precomputeRows", precomputeRowsKernel, view, (const StepCounters*)c, d.minvJA.data(), d.minvJB.data(),
                  d.diagA.data(), d.compliance.data());
        view.invMassJacobianA = d.minvJA.data();
        view.invMassJacobianB = d.minvJB.data();
        buildStructure();
        velocities(&c->one);   // from the warm impulses (with no rows: u = u~)
        evaluate(0);
        for (int k = 0; k < settings.newtonIterations; ++k) {
            rowLaunch("linearSetup", linearSetupKernel, (const StepCounters*)c, (const SolveParams*)d.params.data(),
                      (const Real*)d.residual.data(), d.compliance.data(), d.rhs.data(), d.dlambda.data());
            linearSolve();
            rowLaunch("newtonStep", newtonStepKernel, (const StepCounters*)c, (const SolveParams*)d.params.data(),
                      (const Real*)d.dlambda.data(), (const Real*)d.maxImpulse.data(), d.lambda.data());
            velocities(newtonRun);
            evaluate(k + 1);
        }
    }
};

}  // namespace

void releaseSolveGraph(DeviceWorld& d) {
    if (d.solveGraph) cudaGraphExecDestroy(d.solveGraph);
    d.solveGraph = nullptr;
}

void solveOnDevice(DeviceWorld& d, const SolverSettings& settings, Real h, bool deterministic) {
    const int rows = d.rowCapacity, bodies = d.bodies;
    SolveParams params{h, settings.damping, settings.regularization, settings.newtonTolerance,
                       settings.linearTolerance, Real(0.6), settings.ncp == NcpFunction::FischerBurmeister ? 0 : 1,
                       settings.complementarityPreconditioner ? 1 : 0};
    d.params.reserve(1);
    CS_CUDA(cudaMemcpyAsync(d.params.data(), &params, sizeof(params), cudaMemcpyHostToDevice, d.stream));

    const bool stale = !d.solveGraph || d.graphRowCapacity != rows || d.graphBodyCapacity != bodies ||
                       d.graphSolver != int(settings.linearSolver) || d.graphNewton != settings.newtonIterations ||
                       d.graphLinear != settings.linearIterations || d.graphDeterministic != int(deterministic) ||
                       d.graphH != h || d.graphNcp != int(settings.ncp) ||
                       d.graphPrecondition != int(settings.complementarityPreconditioner);
    if (stale) {
        releaseSolveGraph(d);
        Solve s{d, settings, deterministic};
        RowSystemView& v = s.view;
        v.rowCount = rows;
        v.bodyCount = bodies;
        v.bodyA = d.rowBodyA.data();
        v.bodyB = d.rowBodyB.data();
        v.jacobianA = d.jacobianA.data();
        v.jacobianB = d.jacobianB.data();
        v.compliance = d.compliance.data();
        v.invMass = d.bodyInvMass.data();
        v.invInertia = d.bodyInvInertia.data();
        s.c = d.counters.data();
        s.l = d.linear.data();
        s.run = &s.l->active;
        s.newtonRun = &s.c->newtonActive;
        s.rows = rows;
        s.bodies = bodies;
        s.h = h;
        s.reserveScratch();
        cudaGraph_t graph;
        captureActive() = true;
        CS_CUDA(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal));
        try {
            s.record();
        } catch (...) {
            cudaStreamEndCapture(d.stream, &graph);
            captureActive() = false;
            throw;
        }
        CS_CUDA(cudaStreamEndCapture(d.stream, &graph));
        captureActive() = false;
        CS_CUDA(cudaGraphInstantiate(&d.solveGraph, graph, 0));
        cudaGraphDestroy(graph);
        d.graphRowCapacity = rows;
        d.graphBodyCapacity = bodies;
        d.graphSolver = int(settings.linearSolver);
        d.graphNewton = settings.newtonIterations;
        d.graphLinear = settings.linearIterations;
        d.graphDeterministic = int(deterministic);
        d.graphH = h;
        d.graphNcp = int(settings.ncp);
        d.graphPrecondition = int(settings.complementarityPreconditioner);
    }
    CS_CUDA(cudaGraphLaunch(d.solveGraph, d.stream));
}

}  // namespace cs::gpu
