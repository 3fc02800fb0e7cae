// Solvers of the cone complementarity problem of one step ([CCP] eqs. 10-11).
//
// The rows are those of constraint_rows.h: a contact is a Normal row followed by its two Friction
// rows (one cone K_i, engine/contact/ccp_cone_hd.h), a joint or drag row is a bilateral row
// (the cone B_j = R of eq. 8; the drag's force limit makes it a box). With N = J M^-1 J^T + C
// (C the bilateral rows' compliance) and p = J u~ + [Phi/h | bias], the problem is
//     min_gamma  1/2 gamma^T N gamma + p^T gamma   subject to  gamma_k in C_k       (eq. 11)
// whose first-order conditions are eq. 10: C_k contains gamma_k _|_ -(N gamma + p)_k in C_k°.
// The gradient N gamma + p is the rows' end-of-step velocity, J u + offset with u = u~ + M^-1
// J^T gamma (eq. 9), so everything is matrix-free, as in the Newton solve.
//
// Solvers, one signature (CcpSettings::solver):
//   Jacobi        projected Jacobi: every block gamma_k <- Pi(gamma_k - omega eta_k g_k) from the
//                 same iterate (Tasora and Anitescu's scaled projected iteration, eta_k = 1 over
//                 the block's mean diagonal of N)
//   GaussSeidel   projected Gauss-Seidel: the same update block after block, each seeing the
//                 velocities of the blocks before it, in colour order (blocks of one colour share
//                 no dynamic body, so the device sweeps a colour in parallel)
//   APGD          Nesterov-accelerated projected gradient with adaptive step (backtracking on the
//                 Lipschitz estimate L, which then shrinks by 0.9 per iteration) and gradient
//                 restart, returning the iterate of least merit (Mazhar, Heyn, Tasora, Negrut
//                 2015, the method Chrono ships as its APGD solver), on the problem scaled by
//                 the blocks' scales (x = S^-1/2 z: the diagonal preconditioning that makes the
//                 steps independent of the bodies' masses)
//   Newton        the non-smooth Newton iteration of newton.cpp over the same rows: normal rows
//                 that carry mu are relaxed by -h mu |v_T| (constraint_rows.h evalRow), its NCP
//                 friction rows are Coulomb's law, so its fixed point is eq. 5d, i.e. eq. 7. The
//                 relaxation enters the residual only (lagged in the Newton matrix, which stays
//                 symmetric), so each linear solver (Jacobi / GS / PCG / PCR) applies unchanged.
//                 A step that does not lower the CCP merit by a tenth is replaced by APGD
//                 iterations on eq. 11 (the fallback, ccp_solvers.cpp newtonOnRelaxedRows).
// All report the CCP merit per iteration (the natural-map residual, ccp_cone_hd.h) in
// SolveStats::ccpMerit and stop when it drops below CcpSettings::tolerance.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/settings.h"
#include "engine/solver/ccp_steps_hd.h"
#include "engine/solver/newton.h"
#include "engine/step_types.h"

namespace cs {

// The rows of one step as eq. 10: blocks, offsets and the matrix-free products. The per-row and
// per-block arithmetic is ccp_steps_hd.h's and the scatter u = u~ + M^-1 J^T x is the Newton
// solve's (linear_solvers.h scatterImpulses, summed by runs of rows on one body pair), so that
// the device pipeline (engine/exec/pipeline_ccp.h) reproduces these solvers bit for bit.
class CcpProblem {
public:
    enum BlockKind : uint8_t { Bilateral = kCcpBilateral, Unilateral = kCcpUnilateral, Cone = kCcpCone };
    // colour: also colour the blocks for projected Gauss-Seidel (colourOrder, colourStart).
    void setup(const ConstraintRows& rows, const BodyVelocities& bodies, Real h, bool colour = false);

    int rowCount() const { return (int)offset.size(); }
    int blockCount() const { return (int)blockFirst.size(); }
    // g = N x + p (m/s): u = u~ + M^-1 J^T x into velocity, then each row's velocity.
    void gradient(const Real* x, Real* g, std::vector<Spatial>& velocity) const;
    // Row k's g from body velocities u that belong to impulses x (x null: zero impulses).
    // (Inline: the solvers call it once per row after every sweep.)
    Real rowGradient(int row, const Spatial* u, const Real* x) const {
        return ccpRowGradient(view_, row, u, offset[row], x ? x[row] : Real(0));
    }
    void projectBlock(int block, Real* x) const;                  // onto C_k
    void project(Real* x) const;
    Real merit(const Real* x, const Real* g) const;               // natural-map residual, m/s
    Real objective(const Real* x, const Real* g) const;           // 1/2 x.N x + p.x = 1/2 x.(g + p)
    Real jacobiOmega(std::vector<Real>& x, std::vector<Real>& y, std::vector<Spatial>& w) const;
    // One projected Gauss-Seidel sweep over the blocks in colour order, u kept current.
    void gaussSeidelSweep(Real omega, Real* x, Spatial* u) const;
    const RowSystemView& view() const { return view_; }

    std::vector<int> blockFirst;        // (blocks) first row
    std::vector<uint8_t> blockKind;     // (blocks) BlockKind; Cone blocks span 3 rows
    std::vector<Real> blockScale;       // (blocks) mean diagonal of N over the block, 1/kg
    std::vector<Real> rowScale;         // (rows) the scale of the row's block
    std::vector<Real> offset;           // (rows) Phi/h (normal), bias (bilateral), 0 (friction)
    std::vector<Real> p;                // (rows) J u~ + offset: the linear term of eq. 11
    std::vector<Real> diagonal;         // (rows) N_kk
    std::vector<Real> mu;               // (blocks) cone slope
    std::vector<Real> limit;            // (blocks) bilateral impulse bound (the drag's)
    // Gauss-Seidel order: blocks sorted by colour, colours 0 .. kCcpColours - 1 share no dynamic
    // body within a colour; the last range [colourStart[kCcpColours], blockCount) is swept in
    // order. The colouring is the device pipeline's (engine/exec/step_hd.h colourRowInRound over blocks).
    std::vector<int> colourOrder, colourStart;

private:
    void colourBlocks(const ConstraintRows& rows, const BodyVelocities& bodies);

    // What the colouring depends on, per block: its first row's bodies A and B (-1 where the body
    // is absent or static) and whether it is wide. The same list as the last call's gives the same
    // colours, so they are kept (a resting scene's blocks repeat step after step).
    std::vector<int> colourKey_;

    // The blocks' rows copied in colour order (packBlocks), so that a sweep reads its rows one
    // after the other instead of one block in every few dozen: the same arithmetic on the same
    // numbers (ccpGaussSeidelBlock over a view of the copies), a sweep about half as long on the
    // 385-box pyramid. Mutable: the sweep writes its copy of the impulses, x.
    void packBlocks();
    struct Packed {
        RowSystemView view;
        std::vector<int> row;                 // (rows) the row each copy comes from
        std::vector<int> first;               // (blocks, colour order) first copied row
        std::vector<int> bodyA, bodyB, bodyC, bodyD;
        std::vector<Spatial> jacobianA, jacobianB, jacobianC, jacobianD;
        std::vector<Spatial> minvJA, minvJB, minvJC, minvJD;
        std::vector<Real> compliance, offset, x;
    };
    mutable Packed packed_;

    const BodyVelocities* bodies_ = nullptr;
    RowSystemView view_;
    std::vector<Spatial> minvJA_, minvJB_, minvJC_, minvJD_;
    std::vector<int> runStart_;
};

struct CcpScratch {
    CcpProblem problem;
    std::vector<Real> g, x, y, gy, best, previous;
    std::vector<Real> saved, newtonIterate;   // Newton: the impulses before and after a step (fallback)
    std::vector<Spatial> velocity;
    NewtonScratch newton;
};

// Solves the CCP of the rows for rows.lambda (warm impulses in it are the start, projected
// onto the cones) and bodies.velocity, with the solver of settings.ccp.
void solveCcp(const SolverSettings& settings, Real h, ConstraintRows& rows, BodyVelocities& bodies,
              CcpScratch& scratch, SolveStats& stats);

// How far rows.lambda with bodies.velocity (u = u~ + M^-1 J^T lambda) is from eq. 7, the largest
// violation over the contacts of each part of ccp_cone_hd.h coneComplementarity.
struct CcpCheck {
    Real primal = 0, dual = 0, product = 0;
    int contacts = 0;
};
CcpCheck checkCcp(const ConstraintRows& rows, const BodyVelocities& bodies, Real h);

const char* ccpSolverName(CcpSolverType type);     // "pj", "pgs", "apgd", "newton"
bool parseCcpSolverName(const char* name, CcpSolverType& out);

}  // namespace cs
