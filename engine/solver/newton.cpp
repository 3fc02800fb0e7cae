// Non-smooth Newton: [NSN] Algorithm 1 with the Schur complement of eq. 59 applied matrix-free.
//
// Each iteration linearizes every row (constraint_rows.h), solves
//     [J M^-1 J^T + C + eps I] dlambda = -h
// with the chosen linear solver for a fixed number of iterations (an inexact Newton step, the
// point of [NSN] section 8.2), takes the damped step lambda += t dlambda (section 8.1), and sets
// u = u~ + M^-1 J^T lambda, which is eq. 60 summed over iterations and keeps g = 0 exactly.
//
// Safeguards, each a setting and off by default (newton_steps_hd.h, shared with the pipeline;
// measured in docs/speed.md "Newton safeguards"): the least-merit iterate returned when the loop
// ends at its cap more than twice worse (keepBestIterate), the linear tolerance per iteration by
// Eisenstat-Walker (linearForcing), and a step halved when it blows the merit up (stepCutGrowth).
//
// [PEG] group rows and the non-symmetric problem. With PEG an I- or X-constraint j with primary
// contact p and secondary contacts s is the row 0 <= lambda_p _|_ m_j >= 0, m_j the largest of
// the group's end-of-step gaps (constraint_rows.h; the slack chain of [PEG] 5.3 eliminated).
// The exact Newton matrix of that row is h dA J_a H^-1 J_p^T + ..., with J_a the Jacobian of the
// member attaining the max: when a != p, row and column differ and the Schur matrix is not
// symmetric, which PCG and PCR (and the convergence argument of Jacobi/Gauss-Seidel on an SPD
// matrix) do not allow. Three ways were open: a non-symmetric Krylov method (GMRES/BiCGStab,
// a fifth solver and twice the storage per iteration), solving the mixed LCP of eq. 49 with
// its slack unknowns (the E_I1 triangle is not symmetric either), or a symmetric quasi-Newton
// matrix. We take the last, in the spirit of [NSN] treating W as constant: the matrix uses
// J_p in place of J_a, i.e. A = J H^-1 J^T + C exactly as for the standard model, while the
// residual phi(max gap, r lambda) is exact. So every linear solver and NCP function works
// unchanged, the fixed point is the exact PEG solution (only the step direction is
// approximate), and for the common case a = p (the primary is chosen as the applicable member
// with the largest gap) the step is the exact Newton step. When a != p the row is divided by
// rho_a = (J_a H^-1 J_p^T)/(J_p H^-1 J_p^T), computed once per step, which makes the row exact
// in its own impulse (the coupling through other rows stays approximate). rho_a is clamped below
// (kMinGroupRatio): where the primary's impulse barely opens, or closes, the active gap the
// iteration takes bounded steps. Without the rho scaling (J_p alone) pour3d at h = 1 ms blew up
// at t = 2.39 s (Newton residual 40 m/s, kinetic energy 476 J).
// The test against Lemke's method (tests/test_peg.cpp) checks that the fixed point is the same.
#include "engine/solver/newton.h"

#include <algorithm>
#include <cmath>

#include "engine/settings.h"
#include "engine/solver/newton_steps_hd.h"
#include "engine/solver/row_columns.h"
#include "engine/step_types.h"

namespace cs {

void ConstraintRows::clear() {
    kind.clear(); bodyA.clear(); bodyB.clear(); jacobianA.clear(); jacobianB.clear();
    bias.clear(); softness.clear(); mu.clear(); normalRow.clear(); maxImpulse.clear();
    lambda.clear(); owner.clear(); gapFirst.clear(); gapCount.clear();
    gapBodyA.clear(); gapBodyB.clear(); gapJacobianA.clear(); gapJacobianB.clear(); gapBias.clear();
    gapOwner.clear(); bodyC.clear(); bodyD.clear(); jacobianC.clear(); jacobianD.clear();
    wideRows = 0;
}

void ConstraintRows::setExtraBodies(int row, int c, int d, const Spatial& jc, const Spatial& jd) {
    if (bodyC[row] < 0 && bodyD[row] < 0 && (c >= 0 || d >= 0)) ++wideRows;
    bodyC[row] = c;
    bodyD[row] = d;
    jacobianC[row] = jc;
    jacobianD[row] = jd;
}

void ConstraintRows::addGapMember(int row, int a, int b, const Spatial& ja, const Spatial& jb, Real gap,
                                  int ownerId) {
    if (gapFirst[row] < 0) gapFirst[row] = gapMemberCount();
    gapCount[row]++;
    gapBodyA.push_back(a);
    gapBodyB.push_back(b);
    gapJacobianA.push_back(ja);
    gapJacobianB.push_back(jb);
    gapBias.push_back(gap);
    gapOwner.push_back(ownerId);
}

int ConstraintRows::add(RowKind k, int a, int b, const Spatial& ja, const Spatial& jb, Real biasValue,
                        Real softnessValue, int ownerId) {
    kind.push_back(int(k));
    bodyA.push_back(a);
    bodyB.push_back(b);
    jacobianA.push_back(ja);
    jacobianB.push_back(jb);
    bias.push_back(biasValue);
    softness.push_back(softnessValue);
    mu.push_back(0);
    normalRow.push_back(-1);
    maxImpulse.push_back(Real(1e30));
    lambda.push_back(0);
    owner.push_back(ownerId);
    gapFirst.push_back(-1);
    gapCount.push_back(0);
    bodyC.push_back(-1);
    bodyD.push_back(-1);
    jacobianC.push_back(Spatial{{0, 0, 0}, {0, 0, 0}});
    jacobianD.push_back(Spatial{{0, 0, 0}, {0, 0, 0}});
    return size() - 1;
}

namespace {

RowSystemView makeView(const ConstraintRows& rows, const BodyVelocities& bodies, const Real* compliance) {
    RowSystemView v;
    v.rowCount = rows.size();
    v.bodyCount = (int)bodies.invMass.size();
    v.bodyA = rows.bodyA.data();
    v.bodyB = rows.bodyB.data();
    v.jacobianA = rows.jacobianA.data();
    v.jacobianB = rows.jacobianB.data();
    v.compliance = compliance;
    v.invMass = bodies.invMass.data();
    v.invInertia = bodies.invInertia.data();
    if (rows.wideRows > 0) {   // rows on up to four bodies (engine/fem/)
        v.bodyC = rows.bodyC.data();
        v.bodyD = rows.bodyD.data();
        v.jacobianC = rows.jacobianC.data();
        v.jacobianD = rows.jacobianD.data();
    }
    return v;
}

// u = u~ + M^-1 J^T lambda.
void velocitiesFromImpulses(const RowSystemView& view, const ConstraintRows& rows, BodyVelocities& bodies,
                            std::vector<Spatial>& w) {
    w.resize(bodies.invMass.size());
    scatterImpulses(view, rows.lambda.data(), w.data());
    for (size_t b = 0; b < w.size(); ++b) bodies.velocity[b] = bodies.unconstrained[b] + w[b];
}

// J_s u of gap member g (a [PEG] secondary contact of a group row).
Real gapMemberVelocity(const ConstraintRows& rows, int g, const Spatial* u) {
    Real y = 0;
    if (rows.gapBodyA[g] >= 0) y += dot(rows.gapJacobianA[g], u[rows.gapBodyA[g]]);
    if (rows.gapBodyB[g] >= 0) y += dot(rows.gapJacobianB[g], u[rows.gapBodyB[g]]);
    return y;
}

Real norm2(const std::vector<Real>& x) {
    Real s = 0;
    for (Real v : x) s += v * v;
    return std::sqrt(s);
}

// The step t cut where a force-limited row (|lambda| <= L: a drive's or the wrist's limit, the
// drag) that starts inside its box would leave it. Such a row was linearized as a bilateral one
// (evalRow), so the rest of the step relies on its impulse going past L; clamping it alone leaves
// the other rows' steps out of balance. At the release of grasp_box's mimic-coupled jaws under
// PCR with the minimum map, the drives asked for ten times their limit, were clamped, and the pad
// contacts' pulling impulses of the same step threw the fingers at 88 rad/s (Newton residual
// 235 m/s). Cut at the bound, the step stays a Newton step; the next iteration linearizes the
// row as saturated (dlambda = bound - lambda). Rows already at a bound are clamped as before.
Real stepToBounds(const ConstraintRows& rows, const std::vector<Real>& start, const std::vector<Real>& step, Real t) {
    for (int i = 0; i < rows.size(); ++i) {
        const Real limit = rows.maxImpulse[i];
        if (!(limit < kNoImpulseLimit)) continue;
        const Real x = start[i], dx = step[i];
        if (!(x > -limit && x < limit)) continue;
        if (x + t * dx > limit) t = (limit - x) / dx;
        else if (x + t * dx < -limit) t = (-limit - x) / dx;
    }
    return t;
}

}  // namespace

void colourRows(const ConstraintRows& rows, const std::vector<Real>& invMass, std::vector<int>& colourStart,
                std::vector<int>& colourRowsOut, int* serialColour) {
    const bool wide = rows.wideRows > 0;
    colourRowArrays(rows.size(), rows.bodyA.data(), rows.bodyB.data(), wide ? rows.bodyC.data() : nullptr,
                    wide ? rows.bodyD.data() : nullptr, invMass, colourStart, colourRowsOut, serialColour);
}

void colourRowArrays(int n, const int* bodyA, const int* bodyB, const int* bodyC, const int* bodyD,
                     const std::vector<Real>& invMass, std::vector<int>& colourStart, std::vector<int>& colourRowsOut,
                     int* serialColour) {
    // Greedy: each row takes the lowest colour not yet used by any of its dynamic bodies (two,
    // or up to four for FEM rows). A per-body bitmask covers kColourWords x 64 colours (a mesh node
    // meets ~20 tets of 6 rows each; two-body systems keep one word, as before FEM); rows beyond
    // that go to a last colour, swept serially.
    const bool wide = bodyC != nullptr;
    const int kColourWords = wide ? 4 : 1, kColours = 64 * kColourWords;
    std::vector<uint64_t> used(invMass.size() * kColourWords, 0);
    std::vector<int> colour(n);
    int colourCount = 0;
    for (int i = 0; i < n; ++i) {
        const int bodies[4] = {bodyA[i], bodyB[i], wide ? bodyC[i] : -1, wide ? bodyD[i] : -1};
        bool dynamic[4];
        for (int k = 0; k < 4; ++k) dynamic[k] = bodies[k] >= 0 && invMass[bodies[k]] > 0;
        int c = kColours;
        for (int word = 0; word < kColourWords && c == kColours; ++word) {
            uint64_t mask = 0;
            for (int k = 0; k < 4; ++k)
                if (dynamic[k]) mask |= used[size_t(bodies[k]) * kColourWords + word];
            if (~mask == 0) continue;
            int bit = 0;
            while ((mask >> bit) & 1u) ++bit;
            c = 64 * word + bit;
            for (int k = 0; k < 4; ++k)
                if (dynamic[k]) used[size_t(bodies[k]) * kColourWords + word] |= uint64_t(1) << bit;
        }
        colour[i] = c;   // kColours: the overflow colour, swept serially
        colourCount = std::max(colourCount, c + 1);
    }
    if (serialColour) *serialColour = colourCount == kColours + 1 ? kColours : -1;
    colourStart.assign(colourCount + 1, 0);
    for (int i = 0; i < n; ++i) colourStart[colour[i] + 1]++;
    for (int c = 0; c < colourCount; ++c) colourStart[c + 1] += colourStart[c];
    colourRowsOut.resize(n);
    std::vector<int> fill(colourStart.begin(), colourStart.end() - 1);
    for (int i = 0; i < n; ++i) colourRowsOut[fill[colour[i]]++] = i;
}

void solveNewton(const SolverSettings& settings, Real h, ConstraintRows& rows, BodyVelocities& bodies,
                 NewtonScratch& s, SolveStats& stats) {
    const int n = rows.size();
    stats.newtonIterations = 0;
    stats.linearIterations = 0;
    stats.residualFinal = 0;
    stats.restoredBest = 0;
    stats.newtonResidual.clear();
    stats.linearResidual.clear();

    s.jv.resize(n); s.diagA.resize(n); s.compliance.resize(n); s.residual.resize(n);
    s.merit.resize(n); s.rhs.resize(n); s.dlambda.resize(n);

    RowSystemView view = makeView(rows, bodies, s.compliance.data());
    std::fill(s.compliance.begin(), s.compliance.end(), Real(0));
    // J is fixed over the step: H^-1 J^T and the diagonal are computed once.
    s.minvJA.resize(n);
    s.minvJB.resize(n);
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    for (int i = 0; i < n; ++i) {
        s.minvJA[i] = rows.bodyA[i] >= 0 ? applyInvMass(view, rows.bodyA[i], rows.jacobianA[i]) : zero;
        s.minvJB[i] = rows.bodyB[i] >= 0 ? applyInvMass(view, rows.bodyB[i], rows.jacobianB[i]) : zero;
        s.diagA[i] = rowDiagonal(view, i);
    }
    view.invMassJacobianA = s.minvJA.data();
    view.invMassJacobianB = s.minvJB.data();
    if (view.bodyC) {
        s.minvJC.resize(n);
        s.minvJD.resize(n);
        for (int i = 0; i < n; ++i) {
            s.minvJC[i] = rows.bodyC[i] >= 0 ? applyInvMass(view, rows.bodyC[i], rows.jacobianC[i]) : zero;
            s.minvJD[i] = rows.bodyD[i] >= 0 ? applyInvMass(view, rows.bodyD[i], rows.jacobianD[i]) : zero;
        }
        view.invMassJacobianC = s.minvJC.data();
        view.invMassJacobianD = s.minvJD.data();
    }
    view.jmjDiagonal = s.diagA.data();
    s.runStart.resize(n + 1);
    view.runCount = findRuns(n, rows.bodyA.data(), rows.bodyB.data(), s.runStart.data(), view.bodyC, view.bodyD);
    view.runStart = s.runStart.data();
    if (settings.linearSolver == LinearSolverType::GaussSeidel) {
        colourRows(rows, bodies.invMass, s.colourStart, s.colourRows, &view.serialColour);
        view.colourCount = (int)s.colourStart.size() - 1;
        view.colourStart = s.colourStart.data();
        view.colourRows = s.colourRows.data();
    }

    velocitiesFromImpulses(view, rows, bodies, s.w);
    if (n == 0) return;

    const int members = rows.gapMemberCount();
    s.gapJv.resize(members);
    s.gapRatio.resize(members);
    // rho_s = J_s H^-1 J_p^T / J_p H^-1 J_p^T for each secondary s of a group row p (J fixed).
    for (int i = 0; i < n; ++i) {
        if (rows.gapFirst[i] < 0) continue;
        for (int g = rows.gapFirst[i]; g < rows.gapFirst[i] + rows.gapCount[i]; ++g) {
            Real c = 0;
            if (rows.bodyA[i] >= 0) {
                if (rows.gapBodyA[g] == rows.bodyA[i]) c += dot(rows.gapJacobianA[g], s.minvJA[i]);
                if (rows.gapBodyB[g] == rows.bodyA[i]) c += dot(rows.gapJacobianB[g], s.minvJA[i]);
            }
            if (rows.bodyB[i] >= 0) {
                if (rows.gapBodyA[g] == rows.bodyB[i]) c += dot(rows.gapJacobianA[g], s.minvJB[i]);
                if (rows.gapBodyB[g] == rows.bodyB[i]) c += dot(rows.gapJacobianB[g], s.minvJB[i]);
            }
            s.gapRatio[g] = s.diagA[i] > 0 ? c / s.diagA[i] : Real(1);
        }
    }
    RowEvalView eval{rows.kind.data(), rows.bias.data(), rows.softness.data(), rows.mu.data(),
                     rows.normalRow.data(), rows.lambda.data(), s.jv.data(), s.diagA.data(),
                     rows.gapFirst.data(), rows.gapCount.data(), rows.gapBias.data(), s.gapJv.data(), s.gapRatio.data(), h,
                     settings.ncp == NcpFunction::FischerBurmeister ? 0 : 1,
                     settings.complementarityPreconditioner, s.compliance.data(), s.residual.data(),
                     s.merit.data(), rows.maxImpulse.data(), settings.frictionSlipWeight};

    // J by columns for the CPU gather (RowSystemView::jacobianColumns), two-body systems only;
    // filled before the first linear solve, so a step that meets the tolerance at once (most of a
    // resting pile's) does not pay for it.
    auto prepareColumns = [&]() {
        if (view.bodyC || view.jacobianColumns) return;
        s.jacobianColumns.resize(12 * size_t(n));
        fillJacobianColumns(rows.jacobianA.data(), rows.jacobianB.data(), size_t(n), s.jacobianColumns.data());
        view.jacobianColumns = s.jacobianColumns.data();
    };

    LinearSolverSettings linear;
    linear.maxIterations = settings.linearIterations;
    linear.tolerance = settings.linearTolerance;
    linear.preconditioner = settings.preconditioner;

    // Merit: ||phi|| over all rows in m/s, after linearizing every row at (u, lambda).
    auto evaluate = [&]() {
        for (int i = 0; i < n; ++i) s.jv[i] = gatherRow(view, i, bodies.velocity.data());
        for (int g = 0; g < members; ++g)   // [PEG] secondary gaps: J_s u, no impulse of their own
            s.gapJv[g] = gapMemberVelocity(rows, g, bodies.velocity.data());
        for (int i = 0; i < n; ++i) evalRow(eval, i);
        return norm2(s.merit);
    };
    auto setImpulses = [&](Real t) {   // lambda = lambda_k + t dlambda, drag force limit, u from lambda
        for (int i = 0; i < n; ++i)
            rows.lambda[i] = std::clamp(s.lambdaStart[i] + s.dlambdaFixed[i] + t * s.dlambda[i], -rows.maxImpulse[i],
                                        rows.maxImpulse[i]);
        for (const auto& [i, bound] : s.boundRows) rows.lambda[i] = bound;
        velocitiesFromImpulses(view, rows, bodies, s.w);   // eqs. 60-62
    };

    // The compliant bilateral rows (FEM elements) by a sparse direct solve in node space, the rest
    // by a dense one (condensed_rows.h); false: none, or too many hard rows: the iterative solve.
    // Prepared (K factored) at the first iteration: a step whose start already meets the
    // tolerance needs no factor (pneunet_finger: many of its resting steps).
    bool condense = false, condensePrepared = false;
    s.dlambdaFixed.assign(n, Real(0));

    Real merit = evaluate();
    stats.newtonResidual.push_back(merit);
    // The safeguards of newton_steps_hd.h: the least-merit iterate, the forcing term eta_k.
    Real bestMerit = merit, previousMerit = 0, eta = settings.linearTolerance;
    if (settings.keepBestIterate) s.bestLambda = rows.lambda;
    auto goesOn = [&](int k) {   // the cap, and past it, up to the far cap while the merit is far off
        return newtonGoesOnFar(merit, settings.newtonTolerance, k, settings.newtonIterations,
                               settings.farNewtonIterations);
    };
    // The far iterations' guard (kFarNewtonGrowth): the iterate and merit at the cap (allocated only
    // in a step that goes past the cap).
    const bool far = settings.farNewtonIterations > settings.newtonIterations;
    std::vector<Real> capLambda;
    Real meritAtCap = 0;
    auto runAway = [&]() { return farNewtonRunAway(merit, meritAtCap); };
    for (int k = 0; goesOn(k); ++k) {
        if (far && k == settings.newtonIterations) {
            meritAtCap = merit;
            capLambda = rows.lambda;
        }
        if (far && k > settings.newtonIterations && runAway()) break;
        if (!condensePrepared) {
            condense = settings.condenseCompliantRows && s.condensed.prepare(rows, view);
            condensePrepared = true;
        }
        // The full step while no NCP row changed side since the last iteration (read before eps
        // is added to the compliance): the smooth part of the problem, where Newton is quadratic.
        bool sameSides = false;
        if (settings.fullStepStableSet) {
            if (k == 0) s.ncpSide.assign(n, -1);
            sameSides = k > 0;
            for (int i = 0; i < n; ++i) {
                const int side = ncpRowSide(eval, i);
                if (side != s.ncpSide[i]) sameSides = false;
                s.ncpSide[i] = side;
            }
        }
        // [J M^-1 J^T + C + eps I] dlambda = -h   ([NSN] eq. 59, regularized as in section 8.4)
        // The condensed rows take no regularization: their D_S > 0 keeps K positive definite, and
        // eps would make the FEM rows' step inexact (a second iteration for linear rows).
        for (int i = 0; i < n; ++i) {
            if (!(condense && s.condensed.isSoft(i))) s.compliance[i] += settings.regularization;
            s.rhs[i] = -s.residual[i];
            s.dlambda[i] = 0;
            s.dlambdaFixed[i] = 0;
        }
        if (settings.linearForcing > 0) {
            eta = forcingTolerance(merit, previousMerit, eta, k, settings.linearForcing, settings.newtonTolerance,
                                   settings.linearTolerance);
            linear.tolerance = eta;
        }
        std::vector<Real> history;
        LinearSolveResult r;
        if (condense &&
            s.condensed.solve(view, s.compliance.data(), s.rhs.data(), s.dlambdaFixed.data(), s.dlambda.data())) {
            // One direct solve; its history is ||b|| and the full system's ||b - A x|| at t = 1.
            r.iterations = 1;
            s.checkX.resize(n);
            s.checkAx.resize(n);
            for (int i = 0; i < n; ++i) s.checkX[i] = s.dlambdaFixed[i] + s.dlambda[i];
            applySystem(view, s.checkX.data(), s.checkAx.data(), s.linear);
            Real bb = 0, rr = 0;
            for (int i = 0; i < n; ++i) {
                bb += s.rhs[i] * s.rhs[i];
                rr += (s.rhs[i] - s.checkAx[i]) * (s.rhs[i] - s.checkAx[i]);
            }
            history = {std::sqrt(bb), std::sqrt(rr)};
        } else {
            prepareColumns();
            std::fill(s.dlambdaFixed.begin(), s.dlambdaFixed.end(), Real(0));
            std::fill(s.dlambda.begin(), s.dlambda.end(), Real(0));
            r = settings.decoupleRows
                ? solveWithDecoupledRows(settings.linearSolver, view, s.rhs.data(), s.dlambda.data(), linear,
                                         bodies.invMass, s.linear, s.coupled, &history)
                : solveLinear(settings.linearSolver, view, s.rhs.data(), s.dlambda.data(), linear, s.linear, &history);
        }
        stats.linearResidual.push_back(std::move(history));
        stats.linearIterations += r.iterations;
        stats.newtonIterations = k + 1;

        // Damped step t ([NSN] eq. 61, section 8.1). No line search: as [NSN] reports for
        // frictional problems, backtracking on the merit stalls the iteration; measured here on
        // the pyramid it also let the stack creep (bench notes in README).
        // Only a step that blows the merit up by stepCutGrowth is halved (newton_steps_hd.h cutStep).
        // A force-limited row linearized at its bound (limitedRowAtBound) takes its whole step,
        // which is bound - lambda: damped, a quarter of the gap was left each iteration, and its
        // merit, scaled by a saturated drag's compliance of 1e5 / m, stayed far above the tolerance
        // (a box of the pyramid dragged: 3,300 m/s at the first iteration, 0.2 m/s at the cap).
        s.boundRows.clear();
        for (int i = 0; i < n; ++i)
            if (Real bound; limitedRowAtBound(eval, i, bound)) s.boundRows.emplace_back(i, bound);
        s.lambdaStart = rows.lambda;
        previousMerit = merit;
        Real t = stepToBounds(rows, s.lambdaStart, s.dlambda, sameSides ? Real(1) : settings.damping);
        setImpulses(t);
        merit = evaluate();
        for (int cuts = 0; cutStep(merit, previousMerit, settings.stepCutGrowth, cuts, kMaxStepCuts); ++cuts) {
            t *= Real(0.5);
            setImpulses(t);
            merit = evaluate();
        }
        stats.newtonResidual.push_back(merit);
        if (settings.keepBestIterate && merit < bestMerit) {
            bestMerit = merit;
            s.bestLambda = rows.lambda;
        }
    }
    if (far && stats.newtonIterations > settings.newtonIterations && runAway()) {
        rows.lambda = capLambda;
        velocitiesFromImpulses(view, rows, bodies, s.w);
        merit = evaluate();
        stats.newtonResidual.push_back(merit);
    }
    if (settings.keepBestIterate &&
        restoreBestIterate(merit, bestMerit, settings.newtonTolerance, stats.newtonIterations)) {
        rows.lambda = s.bestLambda;
        velocitiesFromImpulses(view, rows, bodies, s.w);
        merit = bestMerit;
        stats.restoredBest = 1;
    }
    stats.residualFinal = merit;
}

}  // namespace cs
