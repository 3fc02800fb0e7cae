// Constraint rows: the scalar constraints of one step, and the per-row Newton evaluation.
//
// [NSN] Macklin et al. 2019, sections 3-6 and Appendix A, in velocity/impulse form for rigid
// bodies: unknowns are the end-of-step velocities u and impulses lambda (N s). Positions are
// linearized over the step, C(u) = C0 + h J u, as in [PEG] eqs. 5-9. Every row is scaled to
// units of velocity (m/s) so that the Schur-complement matrix J M^-1 J^T + C has units 1/kg:
//
//   bilateral  h_i = bias_i + J_i u + gamma_i lambda_i           (compliance form, [NSN] eq. 47)
//              with bias = C0/h, gamma = alpha/h^2 for a compliance alpha; a spring-damper
//              (k, c) gives bias = k C0/(k h + c), gamma = 1/(h (k h + c)).
//   normal     phi(a, b) = 0, a = C0 + h J_i u (m), b = r lambda (m), r = h [J M^-1 J^T]_ii
//              ([NSN] eqs. 20-30, 66). Linearized: dA h J du + dB r dlambda = -phi; divided by
//              dA h this is a row with compliance c = dB r / (dA h) and error h_i = phi / (dA h).
//   friction   Coulomb's law ([NSN] eqs. 31-32, 106), two rows per contact following its normal
//              row, linearized with one compliance C per contact (ncp.h, linearizeFriction);
//              r = [J M^-1 J^T]_ii averaged over the two rows.
//   group      [PEG] I- and X-constraints with one primary contact (eq. 24 and section 5.3):
//              phi(a, b) = 0 with a = max(C0_p + h J_p u, max_s (C0_s + h J_s u)) (m), the
//              largest end-of-step gap of the group, and the impulse along the primary J_p only.
//              The secondary gaps s ("gap members") have no impulse and do not enter the
//              momentum equation; the slack chain m_s = m_{s-1} + c_s of section 5.3 is exactly
//              this running maximum, so the slacks are eliminated rather than solved for.
//
// A Newton iteration then solves [J M^-1 J^T + C + eps I] dlambda = -h (eq. 59 with g = 0:
// u = u_tilde + M^-1 J^T lambda is kept exactly, so the momentum residual g vanishes).
#pragma once

#include <vector>

#include "engine/core/math.h"
#include "engine/solver/ncp.h"

namespace cs {

enum class RowKind : int { Bilateral = 0, Normal = 1, Friction = 2, Group = 3 };

// Slope below which an NCP row counts as inactive: its compliance c = dB r/(dA h) is then large
// and drives lambda to the value where phi = 0 (lambda -> 0); the ratio h_i / c stays exact.
#if defined(CS_REAL_FLOAT)
constexpr Real kMinNcpSlope = Real(1e-4);
#else
constexpr Real kMinNcpSlope = Real(1e-8);
#endif

// Smallest coupling ratio rho_s of a [PEG] group row's active secondary to its primary used in
// the Newton matrix (see evalRow).
constexpr Real kMinGroupRatio = Real(0.1);

// Scratch, rebuilt each step (structure of arrays, one entry per row).
struct ConstraintRows {
    std::vector<int> kind;            // RowKind
    std::vector<int> bodyA, bodyB;    // -1: the world
    std::vector<Spatial> jacobianA, jacobianB;
    std::vector<Real> bias;           // normal: gap C0 (m); bilateral: m/s; friction: 0
    std::vector<Real> softness;       // bilateral gamma (1/kg); 0 otherwise
    std::vector<Real> mu;             // friction rows: Coulomb coefficient; normal rows: [CCP] relaxation (else 0)
    std::vector<int> normalRow;       // friction rows: the contact's normal row (tangents follow it)
    std::vector<Real> maxImpulse;     // bilateral rows with a force limit (the drag); else huge
    std::vector<Real> lambda;         // impulses, N s: the unknowns of the Newton iteration
    std::vector<int> owner;           // contact index (contact rows) or -(joint + 2); drag: -1
    std::vector<int> gapFirst;        // group rows: first gap member; -1 otherwise
    std::vector<int> gapCount;        // group rows: number of gap members (secondary contacts)

    // Gap members of group rows ([PEG] secondary contacts): a Jacobian and a gap each, no
    // impulse. Members of one row are contiguous and added right after the row.
    std::vector<int> gapBodyA, gapBodyB;         // (members)
    std::vector<Spatial> gapJacobianA, gapJacobianB;
    std::vector<Real> gapBias;                   // (members) gap C0 (m)
    std::vector<int> gapOwner;                   // (members) contact index

    // Rows on up to four bodies (FEM elements and vertex-triangle contacts, engine/fem/): a third
    // and fourth body column, -1 and zero for two-body rows. wideRows counts rows that use them;
    // with none, the solver's views leave these columns out (two-body code paths, same bits).
    std::vector<int> bodyC, bodyD;
    std::vector<Spatial> jacobianC, jacobianD;
    int wideRows = 0;

    int size() const { return (int)kind.size(); }
    int gapMemberCount() const { return (int)gapBias.size(); }
    void clear();
    int add(RowKind k, int a, int b, const Spatial& ja, const Spatial& jb, Real biasValue,
            Real softnessValue, int ownerId);
    // Appends a secondary gap to group row `row` (which must be the last group row added).
    void addGapMember(int row, int a, int b, const Spatial& ja, const Spatial& jb, Real gap, int ownerId);
    // Gives row `row` its third and fourth bodies (-1: none).
    void setExtraBodies(int row, int c, int d, const Spatial& jc, const Spatial& jd);
};

// Plain view of the per-row data the Newton evaluation reads and writes.
struct RowEvalView {
    const int* kind;
    const Real* bias;
    const Real* softness;
    const Real* mu;
    const int* normalRow;
    const Real* lambda;
    const Real* jv;          // J_i u at the current iterate
    const Real* diagA;       // [J M^-1 J^T]_ii
    const int* gapFirst;     // group rows: members [gapFirst, gapFirst + gapCount)
    const int* gapCount;
    const Real* gapBias;     // (members) C0_s
    const Real* gapJv;       // (members) J_s u at the current iterate
    const Real* gapRatio;    // (members) rho_s = J_s H^-1 J_p^T / J_p H^-1 J_p^T, fixed over the step
    Real h;
    int ncp;                 // 0: Fischer-Burmeister, 1: minimum map
    bool precondition;       // [NSN] section 7 r-factors (else r = 1)
    Real* schurCompliance;   // out: C_ii of the linearized row
    Real* residual;          // out: h_i, the row's error in m/s
    Real* merit;             // out: the row's NCP residual in m/s, for convergence
    const Real* maxImpulse = nullptr;   // bilateral rows' force limits (N s; >= kNoImpulseLimit: none);
                                        // nullptr: no row is limited
    Real frictionSlipWeight = 1;        // SolverSettings::frictionSlipWeight (ncp.h linearizeFriction)
};

// maxImpulse of a row with no force limit (ConstraintRows::add sets 1e30).
constexpr Real kNoImpulseLimit = Real(1e29);

CS_HD NcpValue evalNcp(int ncp, Real a, Real b) {
    return ncp == 0 ? ncpFischerBurmeister(a, b) : ncpMinimumMap(a, b);
}

// A force-limited bilateral row (|lambda| <= L: a drive's or the wrist's limit, the drag) is a box
// complementarity problem; its minimum map phi = lambda - mid(-L, L, lambda - e / D), with
// e = bias + J u + gamma lambda and D = A_ii + gamma, is linearized semi-smoothly: inside the box
// the row is the bilateral one; at a bound (z = lambda - e / D outside the box) its Newton step is
// dlambda = bound - lambda, a row decoupled by a large compliance (as friction with no normal force
// in evalRow), so a saturated drive pushes with exactly its limit and the other rows do not see it
// as stiff. Returns whether row i is at a bound at the current iterate, and which (+-L).
CS_HD bool limitedRowAtBound(const RowEvalView& v, int i, Real& bound) {
    const Real limit = v.maxImpulse ? v.maxImpulse[i] : kNoImpulseLimit;
    const Real d = v.diagA[i] + v.softness[i];
    if (!(limit < kNoImpulseLimit) || !(d > 0) || v.kind[i] != int(RowKind::Bilateral)) return false;
    const Real z = v.lambda[i] - (v.bias[i] + v.jv[i] + v.softness[i] * v.lambda[i]) / d;
    if (!(z > limit || z < -limit)) return false;
    bound = z > limit ? limit : -limit;
    return true;
}

// Linearizes row i at the current iterate (u, lambda).
CS_HD void evalRow(const RowEvalView& v, int i) {
    const Real h = v.h;
    switch (v.kind[i]) {
    case int(RowKind::Bilateral): {
        Real e = v.bias[i] + v.jv[i] + v.softness[i] * v.lambda[i];
        Real bound;   // a force-limited row at its bound (limitedRowAtBound)
        if (limitedRowAtBound(v, i, bound)) {
            const Real big = (v.diagA[i] > 0 ? v.diagA[i] : Real(1)) / kMinNcpSlope;
            v.schurCompliance[i] = big;
            v.residual[i] = big * (v.lambda[i] - bound);
            v.merit[i] = (v.diagA[i] + v.softness[i]) * (v.lambda[i] - bound);
            break;
        }
        v.schurCompliance[i] = v.softness[i];
        v.residual[i] = e;
        v.merit[i] = e;
        break;
    }
    case int(RowKind::Normal):
    case int(RowKind::Group): {
        Real r = v.precondition ? h * v.diagA[i] : Real(1);
        Real a = v.bias[i] + h * v.jv[i];               // gap at the end of the step (m)
        if (v.mu[i] > 0)   // [CCP] eq. 5d: a normal row given mu is relaxed by -h mu |v_T| (ccp_model.cpp)
            a -= h * v.mu[i] * std::sqrt(v.jv[i + 1] * v.jv[i + 1] + v.jv[i + 2] * v.jv[i + 2]);
        Real rho = 1;
        if (v.kind[i] == int(RowKind::Group)) {
            // [PEG] section 5.3: m_k = max(psi_p, psi_1..psi_k) at the end of the step. Its
            // generalized derivative is J_s of the active member s. The Newton matrix keeps J_p
            // on both sides (symmetric quasi-Newton, see newton.cpp): J_s du is approximated by
            // rho_s J_p du, exact for the row's own impulse, so the row is divided by rho_s.
            // rho_s is clamped below at kMinGroupRatio: a primary that cannot open the active
            // gap then takes bounded steps instead of unbounded ones.
            for (int g = v.gapFirst[i], e = v.gapFirst[i] + v.gapCount[i]; g < e; ++g) {
                Real as = v.gapBias[g] + h * v.gapJv[g];
                if (as > a) {
                    a = as;
                    rho = v.gapRatio[g] > kMinGroupRatio ? v.gapRatio[g] : kMinGroupRatio;
                }
            }
        }
        NcpValue f = evalNcp(v.ncp, a, r * v.lambda[i]);
        Real dA = (f.dA > kMinNcpSlope ? f.dA : kMinNcpSlope) * rho;
        v.schurCompliance[i] = f.dB * r / (dA * h);
        v.residual[i] = f.phi / (dA * h);
        v.merit[i] = f.phi / h;
        break;
    }
    default: {   // Friction: rows n+1 and n+2 after the normal row n
        int n = v.normalRow[i];
        int t1 = n + 1, t2 = n + 2;
        Real lambdaN = v.lambda[n] > 0 ? v.lambda[n] : Real(0);
        Real muLambdaN = v.mu[i] * lambdaN;
        // One r per contact, the mean of its two tangent rows' [J M^-1 J^T]_ii: the friction
        // direction of linearizeFriction must not depend on the choice of t1, t2.
        Real r = v.precondition ? Real(0.5) * (v.diagA[t1] + v.diagA[t2]) : Real(1);
        if (muLambdaN > 0) {
            FrictionLinearization f = linearizeFriction(v.ncp, v.jv[t1], v.jv[t2], v.lambda[t1], v.lambda[t2],
                                                        muLambdaN, r, kMinNcpSlope, v.frictionSlipWeight);
            v.schurCompliance[i] = f.compliance;
            v.residual[i] = f.residual[i - t1];
            v.merit[i] = f.merit[i - t1];
        } else {
            // [NSN] eq. 106: no normal force, no friction. An (effectively) infinite compliance
            // drives lambda_f to zero in one step: h_i / C_ii = lambda_i.
            Real big = (v.diagA[i] > 0 ? v.diagA[i] : Real(1)) / kMinNcpSlope;
            v.schurCompliance[i] = big;
            v.residual[i] = big * v.lambda[i];
            v.merit[i] = r * v.lambda[i];
        }
        break;
    }
    }
}

// The side of its NCP that row i was linearized on by evalRow (SolverSettings::fullStepStableSet):
// 0 for a bilateral row; a normal or group row 1 when active (dB < dA: it holds its gap, C h < r),
// else 2; a friction row 1 when sticking (dB < dA, C < r), 2 when sliding, 3 without normal
// force (eq. 106). While no row changes side between two iterations, the Newton matrix is that of
// one smooth system, on which the full step converges quadratically; the damped step (t = 0.75)
// leaves a quarter of the error per iteration.
CS_HD int ncpRowSide(const RowEvalView& v, int i) {
    const int kind = v.kind[i];
    if (kind == int(RowKind::Bilateral)) return 0;
    if (kind == int(RowKind::Friction)) {
        const int n = v.normalRow[i];
        if (!(v.mu[i] * v.lambda[n] > 0)) return 3;
        const Real r = v.precondition ? Real(0.5) * (v.diagA[n + 1] + v.diagA[n + 2]) : Real(1);
        return v.schurCompliance[i] < r ? 1 : 2;
    }
    const Real r = v.precondition ? v.h * v.diagA[i] : Real(1);
    return v.schurCompliance[i] * v.h < r ? 1 : 2;
}

}  // namespace cs
