// The rows of one step as the cone complementarity problem of [CCP] eq. 10 (ccp_solvers.h):
// blocks, the linear term p, the matrix-free gradient N x + p, projections and the merit.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/contact/ccp_cone_hd.h"
#include "engine/solver/ccp_solvers.h"

namespace cs {

namespace {
Vec3 block3(const Real* x, int k) { return Vec3{x[k], x[k + 1], x[k + 2]}; }
}  // namespace

void CcpProblem::setup(const ConstraintRows& rows, const BodyVelocities& bodies, Real h) {
    rows_ = &rows;
    bodies_ = &bodies;
    const int n = rows.size();
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    minvJA_.resize(n);
    minvJB_.resize(n);
    diagonal.resize(n);
    offset.resize(n);
    p.resize(n);
    blockFirst.clear();
    blockKind.clear();
    blockScale.clear();
    mu.clear();
    limit.clear();
    for (int i = 0; i < n; ++i) {
        const int a = rows.bodyA[i], b = rows.bodyB[i];
        minvJA_[i] = a >= 0 ? Spatial{bodies.invMass[a] * rows.jacobianA[i].lin, bodies.invInertia[a] * rows.jacobianA[i].ang} : zero;
        minvJB_[i] = b >= 0 ? Spatial{bodies.invMass[b] * rows.jacobianB[i].lin, bodies.invInertia[b] * rows.jacobianB[i].ang} : zero;
        diagonal[i] = dot(rows.jacobianA[i], minvJA_[i]) + dot(rows.jacobianB[i], minvJB_[i]) + rows.softness[i];
        // d_i,0 of section 4: Phi / h for a normal row; the bilateral rows' bias is already m/s.
        const int kind = rows.kind[i];
        offset[i] = kind == int(RowKind::Normal) || kind == int(RowKind::Group) ? rows.bias[i] / h
                    : kind == int(RowKind::Bilateral)                            ? rows.bias[i]
                                                                                 : Real(0);
    }
    for (int i = 0; i < n;) {
        const bool cone = rows.kind[i] == int(RowKind::Normal) && i + 2 < n && rows.kind[i + 1] == int(RowKind::Friction) &&
                          rows.kind[i + 2] == int(RowKind::Friction);
        const int size = cone ? 3 : 1;
        blockFirst.push_back(i);
        blockKind.push_back(cone ? Cone : rows.kind[i] == int(RowKind::Bilateral) ? Bilateral : Unilateral);
        Real s = 0;
        for (int k = i; k < i + size; ++k) s += diagonal[k];
        s /= size;
        blockScale.push_back(s > 0 ? s : Real(1));
        mu.push_back(cone ? rows.mu[i + 1] : Real(0));
        limit.push_back(rows.maxImpulse[i]);
        i += size;
    }
    std::vector<Spatial> u(bodies.unconstrained);
    for (int i = 0; i < n; ++i) p[i] = rowGradient(i, u.data(), nullptr);
}

Real CcpProblem::rowGradient(int i, const Spatial* u, const Real* x) const {
    const ConstraintRows& r = *rows_;
    Real g = offset[i] + (x ? r.softness[i] * x[i] : Real(0));
    if (r.bodyA[i] >= 0) g += dot(r.jacobianA[i], u[r.bodyA[i]]);
    if (r.bodyB[i] >= 0) g += dot(r.jacobianB[i], u[r.bodyB[i]]);
    return g;
}

void CcpProblem::addImpulse(int i, Real dx, Spatial* velocity) const {
    const ConstraintRows& r = *rows_;
    if (r.bodyA[i] >= 0) velocity[r.bodyA[i]] = velocity[r.bodyA[i]] + dx * minvJA_[i];
    if (r.bodyB[i] >= 0) velocity[r.bodyB[i]] = velocity[r.bodyB[i]] + dx * minvJB_[i];
}

// u = u~ + M^-1 J^T x (eq. 9), then g = J u + offset + C x = N x + p.
void CcpProblem::gradient(const Real* x, Real* g, std::vector<Spatial>& velocity) const {
    velocity = bodies_->unconstrained;
    const int n = rowCount();
    for (int i = 0; i < n; ++i) addImpulse(i, x[i], velocity.data());
    for (int i = 0; i < n; ++i) g[i] = rowGradient(i, velocity.data(), x);
}

void CcpProblem::projectBlock(int b, Real* x) const {
    const int k = blockFirst[b];
    switch (blockKind[b]) {
    case Cone: {
        const Vec3 v = projectFrictionCone(block3(x, k), mu[b]);
        x[k] = v.x;
        x[k + 1] = v.y;
        x[k + 2] = v.z;
        break;
    }
    case Unilateral: x[k] = std::max(x[k], Real(0)); break;
    default: x[k] = std::clamp(x[k], -limit[b], limit[b]); break;   // B_j = R, or the drag's box
    }
}

void CcpProblem::project(Real* x) const {
    for (int b = 0; b < blockCount(); ++b) projectBlock(b, x);
}

// ||(x - Pi(x - g / s)) s|| over the blocks (ccp_cone_hd.h coneNaturalResidual), m/s.
Real CcpProblem::merit(const Real* x, const Real* g) const {
    Real sum = 0;
    for (int b = 0; b < blockCount(); ++b) {
        const int k = blockFirst[b];
        const Real s = blockScale[b];
        if (blockKind[b] == Cone) {
            const Vec3 r = coneNaturalResidual(block3(x, k), block3(g, k), s, mu[b]);
            sum += lengthSq(r);
            continue;
        }
        Real y = x[k] - g[k] / s;
        y = blockKind[b] == Unilateral ? std::max(y, Real(0)) : std::clamp(y, -limit[b], limit[b]);
        const Real r = s * (x[k] - y);
        sum += r * r;
    }
    return std::sqrt(sum);
}

Real CcpProblem::objective(const Real* x, const Real* g) const {
    Real f = 0;
    for (int i = 0; i < rowCount(); ++i) f += x[i] * (g[i] + p[i]);
    return Real(0.5) * f;
}

// Projected Jacobi is a projected gradient step with the diagonal scaling D = diag(1/s_k); it
// converges for omega < 2 / lambda_max(D N). lambda_max by ten power iterations from a vector of
// ones (an estimate from below), omega = 1 / estimate. A fixed omega diverges where a body has
// many contacts (lambda_max(D N) grows with them).
Real CcpProblem::jacobiOmega(std::vector<Real>& x, std::vector<Real>& y, std::vector<Spatial>& velocity) const {
    const int n = rowCount();
    x.assign(n, Real(1));
    y.resize(n);
    Real estimate = 1;
    for (int it = 0; it < 10; ++it) {
        velocity.assign(bodies_->unconstrained.size(), Spatial{{0, 0, 0}, {0, 0, 0}});
        for (int i = 0; i < n; ++i) addImpulse(i, x[i], velocity.data());
        Real norm = 0;
        for (int b = 0; b < blockCount(); ++b)
            for (int k = blockFirst[b], e = k + (blockKind[b] == Cone ? 3 : 1); k < e; ++k) {
                y[k] = (rowGradient(k, velocity.data(), x.data()) - offset[k]) / blockScale[b];
                norm += y[k] * y[k];
            }
        norm = std::sqrt(norm);
        Real xnorm = 0;
        for (Real v : x) xnorm += v * v;
        xnorm = std::sqrt(xnorm);
        if (!(norm > 0) || !(xnorm > 0)) break;
        estimate = norm / xnorm;
        for (int i = 0; i < n; ++i) x[i] = y[i] / norm;
    }
    return Real(1) / std::max(estimate, Real(1e-12));
}

CcpCheck checkCcp(const ConstraintRows& rows, const BodyVelocities& bodies, Real h) {
    CcpProblem problem;
    problem.setup(rows, bodies, h);
    CcpCheck check;
    std::vector<Real> g(rows.size());
    for (int i = 0; i < rows.size(); ++i) g[i] = problem.rowGradient(i, bodies.velocity.data(), rows.lambda.data());
    for (int b = 0; b < problem.blockCount(); ++b) {
        if (problem.blockKind[b] != CcpProblem::Cone) continue;
        const int k = problem.blockFirst[b];
        const ConeComplementarity c = coneComplementarity(block3(rows.lambda.data(), k), block3(g.data(), k), problem.mu[b]);
        check.primal = std::max(check.primal, c.primal);
        check.dual = std::max(check.dual, c.dual);
        check.product = std::max(check.product, c.product);
        check.contacts++;
    }
    return check;
}

const char* ccpSolverName(CcpSolverType type) {
    switch (type) {
    case CcpSolverType::Jacobi: return "pj";
    case CcpSolverType::GaussSeidel: return "pgs";
    case CcpSolverType::APGD: return "apgd";
    case CcpSolverType::Newton: return "newton";
    }
    return "?";
}

bool parseCcpSolverName(const char* name, CcpSolverType& out) {
    for (CcpSolverType t : {CcpSolverType::Jacobi, CcpSolverType::GaussSeidel, CcpSolverType::APGD, CcpSolverType::Newton})
        if (std::strcmp(name, ccpSolverName(t)) == 0) {
            out = t;
            return true;
        }
    return false;
}

}  // namespace cs
