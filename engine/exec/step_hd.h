// Per-body and per-row work of the CUDA step that has no CPU counterpart function of its own:
// the glue of world.cpp's substep (body preparation; its speed guard is engine/solver/speed_guard_hd.h), the standard model's
// rows written into flat arrays, and the two deterministic building blocks of the device
// solver (a body-major scatter and a parallel colouring). CS_HD over plain pointers, so the
// tests run them on the CPU (tests/test_gpu_parity.cpp); the math is the shared CS_HD code of
// engine/ (integrate.h, row_system.h, standard_rows_hd.h).
#pragma once

#include "engine/contact/standard_rows_hd.h"
#include "engine/exec/flat_model.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/integrate.h"
#include "engine/solver/row_system.h"

namespace cs {

// World::substep's per-body set-up: dynamic bodies get their inverse mass, world inverse
// inertia and unconstrained velocity u~; static and dormant bodies get zeros.
CS_HD void prepareBody(const FlatModelView& m, const Quat* rot, const Vec3* linVel, const Vec3* angVel,
                       Vec3 gravity, Real h, Real time, int b, uint8_t* active, Real* invMass,
                       Mat3* invInertia, Spatial* unconstrained) {
    const bool isActive = bodyActiveAt(m, b, time);
    active[b] = isActive ? 1 : 0;
    const bool dynamic = isActive && m.invMass[b] != Real(0);
    invMass[b] = dynamic ? m.invMass[b] : Real(0);
    invInertia[b] = dynamic ? worldInverseInertia(rot[b], m.invInertiaLocal[b]) : mat3Zero();
    unconstrained[b] = dynamic ? unconstrainedVelocity(linVel[b], angVel[b], rot[b], m.invInertiaLocal[b], gravity, h)
                               : Spatial{{0, 0, 0}, {0, 0, 0}};
}

// Rows as flat arrays (ConstraintRows without std::vector), written by contact rows.
struct FlatRows {
    int* kind;
    int* bodyA;
    int* bodyB;
    Spatial* jacobianA;
    Spatial* jacobianB;
    Real* bias;
    Real* softness;
    Real* mu;
    int* normalRow;
    Real* maxImpulse;
    Real* lambda;
    int* owner;
};

// Stores one contact's three rows (normal, two friction) at rows n, n+1, n+2 with their warm
// impulses; normalMu is the normal row's mu (0 but under [CCP]), mu the friction rows'.
CS_HD void storeContactRows(const FlatRows& r, int n, int bodyA, int bodyB, const StandardContactRows& rows,
                            const Real lambda[3], Real normalMu, Real mu, int owner) {
    for (int k = 0; k < 3; ++k) {
        const int i = n + k;
        r.kind[i] = k == 0 ? int(RowKind::Normal) : int(RowKind::Friction);
        r.bodyA[i] = bodyA;
        r.bodyB[i] = bodyB;
        r.jacobianA[i] = rows.jacobianA[k];
        r.jacobianB[i] = rows.jacobianB[k];
        r.bias[i] = k == 0 ? rows.bias : Real(0);
        r.softness[i] = 0;
        r.mu[i] = k == 0 ? normalMu : mu;
        r.normalRow[i] = k == 0 ? -1 : n;
        r.maxImpulse[i] = Real(1e30);
        r.lambda[i] = lambda[k];
        r.owner[i] = owner;
    }
}

// One bilateral row i on bodies a, b (the joints', the drag's, the FEM elements' and attachments';
// the caller sets C and D) with its force limit, warm impulse and owner.
CS_HD void writeBilateralRow(const FlatRows& r, int i, int a, int b, const Spatial& ja, const Spatial& jb, Real bias,
                             Real softness, Real maxImpulse, Real lambda, int owner) {
    r.kind[i] = int(RowKind::Bilateral);
    r.bodyA[i] = a;
    r.bodyB[i] = b;
    r.jacobianA[i] = ja;
    r.jacobianB[i] = jb;
    r.bias[i] = bias;
    r.softness[i] = softness;
    r.mu[i] = 0;
    r.normalRow[i] = -1;
    r.maxImpulse[i] = maxImpulse;
    r.lambda[i] = lambda;
    r.owner[i] = owner;
}

// The three rows of contact ci at rows n, n+1, n+2 (buildStandardRows of standard_model.cpp,
// one contact at a time): normal row, two friction rows, warm impulses from the sorted cache.
// ccpRelaxed: the CCP model's rows (buildCcpRows), the normal row carrying mu.
CS_HD void writeStandardContactRows(const FlatModelView& m, const PotentialContact& c, int ci, const Vec3* bodyPos,
                                    Real stabilization, Real maxPushout, Real frictionScale, const WarmImpulse* warm,
                                    int warmCount, bool warmStart, int n, const FlatRows& r, bool ccpRelaxed = false) {
    const Vec3 zero{0, 0, 0};
    const StandardContactRows rows = standardContactRows(c, c.bodyA >= 0 ? bodyPos[c.bodyA] : zero,
                                                         c.bodyB >= 0 ? bodyPos[c.bodyB] : zero, stabilization,
                                                         maxPushout);
    const Real mu = mixFrictionCoefficient(c.bodyA >= 0 ? m.friction[c.bodyA] : Real(0),
                                           c.bodyB >= 0 ? m.friction[c.bodyB] : Real(0), frictionScale);
    Real lambda[3] = {0, 0, 0};
    if (warmStart) {
        const int w = findWarmIndex(warm, warmCount, contactKeyOf(c));
        if (w >= 0) warmRowImpulses(warm[w], rows, lambda);
    }
    // [CCP]: mu on the normal row too (ccp_model.cpp).
    storeContactRows(r, n, c.bodyA, c.bodyB, rows, lambda, ccpRelaxed ? mu : Real(0), mu, ci);
}

// ---- deterministic scatter: sort, then reduce per body -------------------------------------
//
// w_b = sum over the rows i on body b of H_b^-1 J_{i,b}^T x_i, summed in row order. The entries
// (body << 32 | row) of all rows' dynamic bodies are sorted; body b's entries are
// [start[b], start[b + 1]). One thread per body adds them in the order of scatterRow's serial
// loop on the CPU, so no float atomics are needed and the bits do not depend on scheduling.

CS_HD uint64_t scatterEntryKey(int body, int row) { return (uint64_t(uint32_t(body)) << 32) | uint32_t(row); }

// First entry of body b in the sorted keys[0..count): a lower bound.
CS_HD int scatterEntryStart(const uint64_t* keys, int count, int body) {
    const uint64_t key = scatterEntryKey(body, 0);
    int lo = 0, hi = count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

CS_HD Spatial gatherBodyImpulse(const RowSystemView& s, const uint64_t* keys, int begin, int end, int body,
                                const Real* x) {
    Spatial w{{0, 0, 0}, {0, 0, 0}};
    for (int k = begin; k < end; ++k) {
        const int row = int(uint32_t(keys[k]));
        if (s.bodyA[row] == body)
            w = w + x[row] * (s.invMassJacobianA ? s.invMassJacobianA[row] : applyInvMass(s, body, s.jacobianA[row]));
        else
            w = w + x[row] * (s.invMassJacobianB ? s.invMassJacobianB[row] : applyInvMass(s, body, s.jacobianB[row]));
    }
    return w;
}

// H_b^-1 J_{i,b}^T of row i for its body b (the column b takes: A, B, or on four-body rows C, D).
CS_HD const Spatial& rowInvMassJacobian(const RowSystemView& s, int row, int body) {
    if (s.bodyA[row] == body) return s.invMassJacobianA[row];
    if (!s.bodyC || s.bodyB[row] == body) return s.invMassJacobianB[row];
    return s.bodyC[row] == body ? s.invMassJacobianC[row] : s.invMassJacobianD[row];
}

// The same sum in the CPU backend's order (linear_solvers.cpp scatterRun): the rows of one run
// (consecutive rows on the same two bodies, runHead[i] = 1 where one starts) are summed first and
// each run's sum is then added to w_b, so the host executor reproduces the CPU's bits.
CS_HD Spatial gatherBodyImpulseRuns(const RowSystemView& s, const uint64_t* keys, int begin, int end, int body,
                                    const Real* x, const int* runHead) {
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    Spatial w = zero, run = zero;
    int last = -2;
    for (int k = begin; k < end; ++k) {
        const int row = int(uint32_t(keys[k]));
        if (k > begin && (row != last + 1 || runHead[row])) {
            w = w + run;
            run = zero;
        }
        run = run + x[row] * rowInvMassJacobian(s, row, body);
        last = row;
    }
    return begin < end ? w + run : zero;
}

// (A x)_i = C_i x_i + J_{i,A} . w_A + J_{i,B} . w_B (+ C, D), added in the CPU gather's order
// (linear_solvers.cpp gatherSpan), w = H^-1 J^T x.
CS_HD Real systemRowProduct(const RowSystemView& s, int i, const Spatial* w, const Real* x) {
    Real ax = s.compliance[i] * x[i];
    if (s.bodyA[i] >= 0) ax += dot(s.jacobianA[i], w[s.bodyA[i]]);
    if (s.bodyB[i] >= 0) ax += dot(s.jacobianB[i], w[s.bodyB[i]]);
    if (s.bodyC) {   // four-body rows (FEM), in gatherSpan's order
        if (s.bodyC[i] >= 0) ax += dot(s.jacobianC[i], w[s.bodyC[i]]);
        if (s.bodyD[i] >= 0) ax += dot(s.jacobianD[i], w[s.bodyD[i]]);
    }
    return ax;
}

// ---- colouring for Gauss-Seidel on the device ------------------------------------------------
//
// Jones-Plassmann rounds with hashed priorities. In round k a pending row (round[i] < 0) whose
// pending neighbours (rows sharing a dynamic body) all have lower priority takes the smallest
// colour that no neighbour coloured in an earlier round has (as the CPU's greedy colouring, at
// most kGpuMaxColours colours; a row with all of them taken goes to the serial sweep). A row
// coloured in this same round still counts as pending (round[j] == k), so every thread decides
// on the state at the start of the round and the result does not depend on scheduling. Rows
// still pending after kGpuColourRounds rounds are swept serially too.
constexpr int kGpuMaxColours = 64;
constexpr int kGpuColourRounds = 128;

CS_HD uint32_t rowPriority(int row) {   // a fixed hash (splitmix-style): deterministic, well mixed
    uint32_t x = uint32_t(row) * 0x9E3779B9u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    return x;
}
CS_HD bool rowBefore(int a, int b) {
    uint32_t pa = rowPriority(a), pb = rowPriority(b);
    return pa != pb ? pa > pb : a < b;
}

// Round k for pending row i: the colour it takes (kGpuMaxColours: the serial sweep), or -1 when
// a pending neighbour goes first. keys/bodyStart: the sorted body entries above.
CS_HD int colourRowInRound(const RowSystemView& s, const uint64_t* keys, const int* bodyStart, const int* round,
                           const int* colour, int i, int k) {
    uint64_t used = 0;
    const int bodies[4] = {s.bodyA[i], s.bodyB[i], s.bodyC ? s.bodyC[i] : -1, s.bodyC ? s.bodyD[i] : -1};
    for (int side = 0; side < 4; ++side) {
        const int b = bodies[side];
        if (b < 0 || s.invMass[b] == Real(0)) continue;
        for (int e = bodyStart[b]; e < bodyStart[b + 1]; ++e) {
            const int j = int(uint32_t(keys[e]));
            if (j == i) continue;
            const int rj = round[j];
            if ((rj < 0 || rj == k) && rowBefore(j, i)) return -1;
            if (rj >= 0 && rj < k && colour[j] < kGpuMaxColours) used |= uint64_t(1) << colour[j];
        }
    }
    int c = 0;
    while (c < kGpuMaxColours && ((used >> c) & 1u)) ++c;
    return c;
}

}  // namespace cs
