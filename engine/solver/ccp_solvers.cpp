// Projected Jacobi, projected Gauss-Seidel, APGD and Newton over the CCP of one step
// (ccp_solvers.h; [CCP] eqs. 10-11).
#include <algorithm>
#include <cmath>

#include "engine/contact/ccp_cone_hd.h"
#include "engine/solver/ccp_solvers.h"

namespace cs {

namespace {

Real dotN(const std::vector<Real>& a, const std::vector<Real>& b) {
    Real s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

int blockSize(const CcpProblem& p, int b) { return p.blockKind[b] == CcpProblem::Cone ? 3 : 1; }

// Projected Jacobi: every block from the same iterate, gamma_k <- Pi(gamma_k - omega g_k / s_k).
// g of the iterate is at hand before each sweep, so its merit is recorded for free.
void projectedJacobi(const CcpSettings& settings, CcpScratch& s, Real* x, SolveStats& stats) {
    const CcpProblem& p = s.problem;
    const Real omega = settings.omega > 0 ? settings.omega : p.jacobiOmega(s.y, s.gy, s.velocity);
    p.gradient(x, s.g.data(), s.velocity);
    stats.ccpMerit.push_back(p.merit(x, s.g.data()));
    for (int it = 0; it < settings.iterations && stats.ccpMerit.back() > settings.tolerance; ++it) {
        for (int b = 0; b < p.blockCount(); ++b) {
            const int k = p.blockFirst[b], e = k + blockSize(p, b);
            const Real step = omega / p.blockScale[b];
            for (int i = k; i < e; ++i) s.previous[i] = x[i], x[i] -= step * s.g[i];
            p.projectBlock(b, x);
            for (int i = k; i < e; ++i) p.addImpulse(i, x[i] - s.previous[i], s.velocity.data());
        }
        for (int i = 0; i < p.rowCount(); ++i) s.g[i] = p.rowGradient(i, s.velocity.data(), x);
        stats.ccpMerit.push_back(p.merit(x, s.g.data()));
        stats.linearIterations = it + 1;
    }
}

// Projected Gauss-Seidel: block after block, each seeing the velocity changes of those before.
void projectedGaussSeidel(const CcpSettings& settings, CcpScratch& s, Real* x, SolveStats& stats) {
    const CcpProblem& p = s.problem;
    const Real omega = settings.omega > 0 ? settings.omega : Real(1);
    p.gradient(x, s.g.data(), s.velocity);
    stats.ccpMerit.push_back(p.merit(x, s.g.data()));
    for (int it = 0; it < settings.iterations && stats.ccpMerit.back() > settings.tolerance; ++it) {
        for (int b = 0; b < p.blockCount(); ++b) {
            const int k = p.blockFirst[b], e = k + blockSize(p, b);
            const Real step = omega / p.blockScale[b];
            Real old[3];
            for (int i = k; i < e; ++i) old[i - k] = x[i], x[i] -= step * p.rowGradient(i, s.velocity.data(), x);
            p.projectBlock(b, x);
            for (int i = k; i < e; ++i) p.addImpulse(i, x[i] - old[i - k], s.velocity.data());
        }
        for (int i = 0; i < p.rowCount(); ++i) s.g[i] = p.rowGradient(i, s.velocity.data(), x);
        stats.ccpMerit.push_back(p.merit(x, s.g.data()));
        stats.linearIterations = it + 1;
    }
}

// APGD (Mazhar et al. 2015, algorithm "APGD"; Chrono's ChSolverAPGD), f(x) = 1/2 x.N x + p.x:
//   y_0 = x_0, theta_0 = 1, L_0 = |N (x_0 - x^)| / |x_0 - x^| for x^ = x_0 + 1
//   per iteration: g_y = N y + p; x_new = Pi(y - g_y / L), doubling L until
//     f(x_new) <= f(y) + g_y.(x_new - y) + L/2 |x_new - y|^2         (adaptive step)
//   theta_new = (-theta^2 + theta sqrt(theta^2 + 4)) / 2,  beta = theta (1 - theta) / (theta^2 + theta_new)
//   y = x_new + beta (x_new - x);  restart (y = x_new, theta = 1) when g_y.(x_new - x) > 0
//   L = 0.9 L.   The iterate of least merit is returned.
void apgd(const CcpSettings& settings, CcpScratch& s, Real* xOut, SolveStats& stats) {
    const CcpProblem& p = s.problem;
    const int n = p.rowCount();
    std::vector<Real>& x = s.x;        // x_k
    std::vector<Real>& y = s.y;
    std::vector<Real>& gy = s.gy;
    std::vector<Real>& xn = s.previous;   // x_{k+1}
    x.assign(xOut, xOut + n);
    for (int i = 0; i < n; ++i) xn[i] = x[i] + 1;
    p.gradient(x.data(), s.g.data(), s.velocity);
    p.gradient(xn.data(), gy.data(), s.velocity);
    Real num = 0, den = Real(n);
    for (int i = 0; i < n; ++i) num += (gy[i] - s.g[i]) * (gy[i] - s.g[i]);
    Real lipschitz = std::sqrt(num / den);
    if (!(lipschitz > 0)) lipschitz = 1;
    Real bestMerit = p.merit(x.data(), s.g.data());
    stats.ccpMerit.push_back(bestMerit);
    s.best = x;
    y = x;
    Real theta = 1;
    for (int it = 0; it < settings.iterations && bestMerit > settings.tolerance; ++it) {
        p.gradient(y.data(), gy.data(), s.velocity);
        const Real fy = p.objective(y.data(), gy.data());
        for (int tries = 0;; ++tries) {
            for (int i = 0; i < n; ++i) xn[i] = y[i] - gy[i] / lipschitz;
            p.project(xn.data());
            p.gradient(xn.data(), s.g.data(), s.velocity);
            Real model = fy, dist = 0;
            for (int i = 0; i < n; ++i) {
                model += gy[i] * (xn[i] - y[i]);
                dist += (xn[i] - y[i]) * (xn[i] - y[i]);
            }
            const Real f = p.objective(xn.data(), s.g.data());
            const Real slack = Real(1e-12) * (std::fabs(f) + std::fabs(fy));   // rounding of f near convergence
            if (f <= model + Real(0.5) * lipschitz * dist + slack || tries >= 60) break;
            lipschitz *= 2;
        }
        const Real thetaNext = Real(0.5) * (-theta * theta + theta * std::sqrt(theta * theta + 4));
        const Real beta = theta * (1 - theta) / (theta * theta + thetaNext);
        Real progress = 0;
        for (int i = 0; i < n; ++i) progress += gy[i] * (xn[i] - x[i]);
        const Real m = p.merit(xn.data(), s.g.data());
        stats.ccpMerit.push_back(m);
        stats.linearIterations = it + 1;
        if (m < bestMerit) {
            bestMerit = m;
            s.best = xn;
        }
        if (progress > 0) {   // gradient restart
            y = xn;
            theta = 1;
        } else {
            for (int i = 0; i < n; ++i) y[i] = xn[i] + beta * (xn[i] - x[i]);
            theta = thetaNext;
        }
        x = xn;
        lipschitz *= Real(0.9);
    }
    std::copy(s.best.begin(), s.best.end(), xOut);
}

// Newton over the relaxed rows (ccp_solvers.h): solveNewton one iteration at a time, the CCP
// merit between them. solveNewton's state is rows.lambda alone (u is recomputed from it), so k
// calls of one iteration are the iteration of one call with k.
void newtonOnRelaxedRows(const SolverSettings& settings, Real h, ConstraintRows& rows, BodyVelocities& bodies,
                         CcpScratch& s, SolveStats& stats) {
    const CcpProblem& p = s.problem;
    SolverSettings one = settings;
    one.newtonIterations = 1;
    one.newtonTolerance = 0;
    SolveStats step;
    auto merit = [&]() {
        for (int i = 0; i < p.rowCount(); ++i) s.g[i] = p.rowGradient(i, bodies.velocity.data(), rows.lambda.data());
        return p.merit(rows.lambda.data(), s.g.data());
    };
    stats.ccpMerit.push_back(merit());
    for (int k = 0; k < settings.newtonIterations && stats.ccpMerit.back() > settings.ccp.tolerance; ++k) {
        solveNewton(one, h, rows, bodies, s.newton, step);
        if (stats.newtonResidual.empty()) stats.newtonResidual.push_back(step.newtonResidual.front());
        stats.newtonResidual.push_back(step.newtonResidual.back());
        for (auto& r : step.linearResidual) stats.linearResidual.push_back(std::move(r));
        stats.linearIterations += step.linearIterations;
        stats.newtonIterations = k + 1;
        stats.ccpMerit.push_back(merit());
    }
}

}  // namespace

void solveCcp(const SolverSettings& settings, Real h, ConstraintRows& rows, BodyVelocities& bodies,
              CcpScratch& s, SolveStats& stats) {
    stats = SolveStats{};
    CcpProblem& p = s.problem;
    p.setup(rows, bodies, h);
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
