// Projected Jacobi, projected Gauss-Seidel, APGD and Newton over the CCP of one step
// (ccp_solvers.h; [CCP] eqs. 10-11).
#include <algorithm>
#include <cmath>

#include "engine/contact/ccp_cone_hd.h"
#include "engine/solver/ccp_solvers.h"

namespace cs {

namespace {

// Projected Jacobi: every block from the same iterate, gamma_k <- Pi(gamma_k - omega g_k / s_k),
// then g = N gamma + p of the new iterate (one scatter and one gather per sweep).
void projectedJacobi(const CcpSettings& settings, CcpScratch& s, Real* x, SolveStats& stats) {
    const CcpProblem& p = s.problem;
    const Real omega = settings.omega > 0 ? settings.omega : p.jacobiOmega(s.y, s.gy, s.velocity);
    p.gradient(x, s.g.data(), s.velocity);
    stats.ccpMerit.push_back(p.merit(x, s.g.data()));
    for (int it = 0; it < settings.iterations && stats.ccpMerit.back() > settings.tolerance; ++it) {
        for (int b = 0; b < p.blockCount(); ++b) {
            const int k = p.blockFirst[b];
            const Real step = omega / p.blockScale[b];
            for (int i = k; i < k + ccpBlockSize(p.blockKind[b]); ++i) x[i] = x[i] - step * s.g[i];
            p.projectBlock(b, x);
        }
        p.gradient(x, s.g.data(), s.velocity);
        stats.ccpMerit.push_back(p.merit(x, s.g.data()));
        stats.linearIterations = it + 1;
    }
}

// Projected Gauss-Seidel: block after block in colour order, each seeing the velocity changes of
// those before (CcpProblem::gaussSeidelSweep).
void projectedGaussSeidel(const CcpSettings& settings, CcpScratch& s, Real* x, SolveStats& stats) {
    const CcpProblem& p = s.problem;
    const Real omega = settings.omega > 0 ? settings.omega : Real(1);
    p.gradient(x, s.g.data(), s.velocity);
    stats.ccpMerit.push_back(p.merit(x, s.g.data()));
    for (int it = 0; it < settings.iterations && stats.ccpMerit.back() > settings.tolerance; ++it) {
        p.gaussSeidelSweep(omega, x, s.velocity.data());
        for (int i = 0; i < p.rowCount(); ++i) s.g[i] = p.rowGradient(i, s.velocity.data(), x);
        stats.ccpMerit.push_back(p.merit(x, s.g.data()));
        stats.linearIterations = it + 1;
    }
}

// APGD (Mazhar et al. 2015, algorithm "APGD"; Chrono's ChSolverAPGD) on the scaled problem: with
// S = diag(s_k) per row and z = S^1/2 x, f(z) = 1/2 z.(S^-1/2 N S^-1/2) z + (S^-1/2 p).z over the
// same cones (a cone is invariant under the positive scale of its block), so in x:
//   L_0 = |S^-1/2 (g(x_0 + S^-1/2 1) - g(x_0))| / sqrt(n)
//   trial: x_new = Pi(y - S^-1 g_y / L); accepted when
//     f(x_new) <= f(y) + g_y.(x_new - y) + L/2 |x_new - y|_S^2, else L = 2 L and a new trial
//   accepted: theta_new = (-theta^2 + theta sqrt(theta^2 + 4)) / 2,
//     beta = theta (1 - theta) / (theta^2 + theta_new), y = x_new + beta (x_new - x), restart
//     (y = x_new, theta = 1) when g_y.(x_new - x) > 0, L = 0.9 L.
// The iterate of least merit is returned. Without the scaling one step 1/L serves every contact,
// and a contact between heavy bodies (small N_kk) barely moves: on heavy_stack (4096:1) the cold
// first step needed ~1000 iterations instead of ~500. The loop is flat (one trial per pass, the
// caps of ccp_steps_hd.h), as the device pipeline runs it.
void apgd(const CcpSettings& settings, CcpScratch& s, Real* xOut, SolveStats& stats) {
    const CcpProblem& p = s.problem;
    const int n = p.rowCount();
    const Real* scale = p.rowScale.data();
    std::vector<Real>& x = s.x;        // x_k
    std::vector<Real>& y = s.y;
    std::vector<Real>& gy = s.gy;
    std::vector<Real>& xn = s.previous;   // the trial x_{k+1}
    x.assign(xOut, xOut + n);
    for (int i = 0; i < n; ++i) xn[i] = x[i] + Real(1) / std::sqrt(scale[i]);
    p.gradient(x.data(), s.g.data(), s.velocity);
    p.gradient(xn.data(), gy.data(), s.velocity);
    Real num = 0;
    for (int i = 0; i < n; ++i) num += (gy[i] - s.g[i]) * (gy[i] - s.g[i]) / scale[i];
    Real lipschitz = std::sqrt(num / Real(n));
    if (!(lipschitz > 0)) lipschitz = 1;
    Real bestMerit = p.merit(x.data(), s.g.data());
    stats.ccpMerit.push_back(bestMerit);
    s.best = x;
    y = x;
    gy = s.g;
    Real fy = p.objective(y.data(), gy.data());
    Real theta = 1;
    int iterations = 0, doublings = 0;
    const int trials = apgdMaxTrials(settings.iterations);
    for (int trial = 0; trial < trials && iterations < settings.iterations && bestMerit > settings.tolerance; ++trial) {
        for (int i = 0; i < n; ++i) xn[i] = y[i] - gy[i] / (scale[i] * lipschitz);
        p.project(xn.data());
        p.gradient(xn.data(), s.g.data(), s.velocity);
        Real gStep = 0, dist = 0;
        for (int i = 0; i < n; ++i) gStep += gy[i] * (xn[i] - y[i]);
        for (int i = 0; i < n; ++i) dist += scale[i] * (xn[i] - y[i]) * (xn[i] - y[i]);
        const Real f = p.objective(xn.data(), s.g.data());
        if (!apgdSufficientDecrease(f, fy, gStep, lipschitz, dist) && doublings < kApgdMaxDoublings) {
            lipschitz *= 2;
            doublings++;
            continue;
        }
        doublings = 0;
        Real progress = 0;
        for (int i = 0; i < n; ++i) progress += gy[i] * (xn[i] - x[i]);
        const Real m = p.merit(xn.data(), s.g.data());
        const Real thetaNext = apgdThetaNext(theta), beta = apgdBeta(theta, thetaNext);
        stats.ccpMerit.push_back(m);
        stats.linearIterations = ++iterations;
        if (m < bestMerit) {
            bestMerit = m;
            s.best = xn;
        }
        const bool restart = progress > 0;   // gradient restart
        for (int i = 0; i < n; ++i) y[i] = restart ? xn[i] : xn[i] + beta * (xn[i] - x[i]);
        theta = restart ? Real(1) : thetaNext;
        x = xn;
        lipschitz *= Real(0.9);
        if (iterations == settings.iterations || !(bestMerit > settings.tolerance)) break;
        p.gradient(y.data(), gy.data(), s.velocity);
        fy = p.objective(y.data(), gy.data());
    }
    std::copy(s.best.begin(), s.best.end(), xOut);
}

// Newton over the relaxed rows (ccp_solvers.h), globalized by a projected-gradient fallback.
// Each outer iteration tries one iteration of newton.cpp (solveNewton's state is rows.lambda
// alone, u is recomputed from it, so k calls of one iteration are the iteration of one call with
// k). The step is kept when it lowers the CCP merit m below ccpNewtonKeep(m) (ccp_steps_hd.h);
// otherwise ccpFallbackIterations APGD iterations on eq. 11 are taken from the better of the
// impulses before and after the step (projected onto the cones), APGD returning its least-merit
// iterate; where APGD improves on neither, the Newton step is taken after all (on the dense stack
// of three the merit rises for an iteration on the way to 1e-9 m/s while 200 APGD iterations
// cannot move along the stack's flat directions, tests/test_ccp.cpp). The lagged step
// (the relaxation -h mu |v_T| in the residual, not in the symmetric matrix) is not a descent
// direction where contacts switch between sticking and sliding: on card_house the merit jumped
// from 0.23 to 56 m/s in one iteration, and a backtracking line search along it stalls (every
// step length down to 0.75/256 raises the merit; docs/ccp.md). The fallback cannot stall: APGD
// converges on the convex problem from any start.
void newtonOnRelaxedRows(const SolverSettings& settings, Real h, ConstraintRows& rows, BodyVelocities& bodies,
                         CcpScratch& s, SolveStats& stats) {
    CcpProblem& p = s.problem;
    const int n = rows.size();
    SolverSettings one = settings;
    one.newtonIterations = 1;
    one.farNewtonIterations = 0;   // one iteration: no far Newton cap
    one.newtonTolerance = 0;
    CcpSettings fallback = settings.ccp;
    fallback.iterations = ccpFallbackIterations(settings.linearIterations);
    SolveStats step;
    auto merit = [&]() {
        for (int i = 0; i < n; ++i) s.g[i] = p.rowGradient(i, bodies.velocity.data(), rows.lambda.data());
        return p.merit(rows.lambda.data(), s.g.data());
    };
    stats.ccpMerit.push_back(merit());
    for (int k = 0; k < settings.newtonIterations && stats.ccpMerit.back() > settings.ccp.tolerance; ++k) {
        const Real before = stats.ccpMerit.back();
        s.saved.assign(rows.lambda.begin(), rows.lambda.end());
        solveNewton(one, h, rows, bodies, s.newton, step);
        if (stats.newtonResidual.empty()) stats.newtonResidual.push_back(step.newtonResidual.front());
        stats.newtonResidual.push_back(step.newtonResidual.back());
        for (auto& r : step.linearResidual) stats.linearResidual.push_back(std::move(r));
        stats.linearIterations += step.linearIterations;
        stats.newtonIterations = k + 1;
        Real m = merit();
        if (!(m < ccpNewtonKeep(before))) {   // not kept: APGD from the better of the two iterates
            const Real start = m < before ? m : before;
            s.newtonIterate.assign(rows.lambda.begin(), rows.lambda.end());
            if (!(m < before)) std::copy(s.saved.begin(), s.saved.end(), rows.lambda.begin());
            p.project(rows.lambda.data());
            SolveStats pg;
            apgd(fallback, s, rows.lambda.data(), pg);
            stats.ccpFallbacks++;
            stats.linearIterations += pg.linearIterations;
            p.gradient(rows.lambda.data(), s.g.data(), bodies.velocity);
            m = merit();
            if (!(m < start)) {   // APGD did not improve on either: the Newton step after all
                std::copy(s.newtonIterate.begin(), s.newtonIterate.end(), rows.lambda.begin());
                p.gradient(rows.lambda.data(), s.g.data(), bodies.velocity);
                m = merit();
            }
        }
        stats.ccpMerit.push_back(m);
    }
}

}  // namespace

void solveCcp(const SolverSettings& settings, Real h, ConstraintRows& rows, BodyVelocities& bodies,
              CcpScratch& s, SolveStats& stats) {
    stats = SolveStats{};
    CcpProblem& p = s.problem;
    p.setup(rows, bodies, h, settings.ccp.solver == CcpSolverType::GaussSeidel);
    const int n = rows.size();
    s.g.resize(n);
    s.previous.resize(n);
    s.gy.resize(n);
    s.y.resize(n);
    // PJ / PGS / APGD start from the warm impulses projected onto the cones; Newton from them as
    // they are, as newton.cpp (and the device pipeline's Newton) does for every model.
    if (settings.ccp.solver != CcpSolverType::Newton) p.project(rows.lambda.data());
    switch (settings.ccp.solver) {
    case CcpSolverType::Jacobi: projectedJacobi(settings.ccp, s, rows.lambda.data(), stats); break;
    case CcpSolverType::GaussSeidel: projectedGaussSeidel(settings.ccp, s, rows.lambda.data(), stats); break;
    case CcpSolverType::APGD: apgd(settings.ccp, s, rows.lambda.data(), stats); break;
    case CcpSolverType::Newton: break;
    }
    // u = u~ + M^-1 J^T gamma (eq. 9) for the impulses kept.
    p.gradient(rows.lambda.data(), s.g.data(), bodies.velocity);
    if (settings.ccp.solver == CcpSolverType::Newton) newtonOnRelaxedRows(settings, h, rows, bodies, s, stats);
    stats.residualFinal = settings.ccp.solver == CcpSolverType::Newton ? stats.ccpMerit.back()
                                                                       : p.merit(rows.lambda.data(), s.g.data());
}

}  // namespace cs
