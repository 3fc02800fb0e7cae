// The rows of one step as the cone complementarity problem of [CCP] eq. 10 (ccp_solvers.h):
// blocks, the linear term p, the matrix-free gradient N x + p, projections, the merit, and the
// colouring of the blocks for projected Gauss-Seidel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "engine/exec/step_hd.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/solver/linear_solvers.h"

namespace cs {

static_assert(kCcpColours == kGpuMaxColours, "the CPU's block colouring is the device's");

void CcpProblem::setup(const ConstraintRows& rows, const BodyVelocities& bodies, Real h, bool colour) {
    bodies_ = &bodies;
    const int n = rows.size();
    view_ = RowSystemView{};
    view_.rowCount = n;
    view_.bodyCount = (int)bodies.invMass.size();
    view_.bodyA = rows.bodyA.data();
    view_.bodyB = rows.bodyB.data();
    view_.jacobianA = rows.jacobianA.data();
    view_.jacobianB = rows.jacobianB.data();
    view_.compliance = rows.softness.data();
    view_.invMass = bodies.invMass.data();
    view_.invInertia = bodies.invInertia.data();
    if (rows.wideRows > 0) {   // rows on up to four bodies (engine/fem/)
        view_.bodyC = rows.bodyC.data();
        view_.bodyD = rows.bodyD.data();
        view_.jacobianC = rows.jacobianC.data();
        view_.jacobianD = rows.jacobianD.data();
    }
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    auto minvJ = [&](const int* body, const Spatial* jacobian, std::vector<Spatial>& out) {
        out.resize(n);
        for (int i = 0; i < n; ++i) out[i] = body[i] >= 0 ? applyInvMass(view_, body[i], jacobian[i]) : zero;
        return out.data();
    };
    diagonal.resize(n);
    offset.resize(n);
    p.resize(n);
    rowScale.resize(n);
    for (int i = 0; i < n; ++i) {
        diagonal[i] = rowDiagonal(view_, i);
        offset[i] = ccpRowOffset(rows.kind[i], rows.bias[i], h);
    }
    view_.invMassJacobianA = minvJ(view_.bodyA, view_.jacobianA, minvJA_);
    view_.invMassJacobianB = minvJ(view_.bodyB, view_.jacobianB, minvJB_);
    if (view_.bodyC) {
        view_.invMassJacobianC = minvJ(view_.bodyC, view_.jacobianC, minvJC_);
        view_.invMassJacobianD = minvJ(view_.bodyD, view_.jacobianD, minvJD_);
    }
    runStart_.resize(n + 1);
    view_.runCount = findRuns(n, rows.bodyA.data(), rows.bodyB.data(), runStart_.data(), view_.bodyC, view_.bodyD);
    view_.runStart = runStart_.data();

    blockFirst.clear();
    blockKind.clear();
    blockScale.clear();
    mu.clear();
    limit.clear();
    for (int i = 0; i < n;) {
        const bool cone = rows.kind[i] == int(RowKind::Normal) && i + 2 < n && rows.kind[i + 1] == int(RowKind::Friction) &&
                          rows.kind[i + 2] == int(RowKind::Friction);
        const BlockKind kind = cone ? Cone : rows.kind[i] == int(RowKind::Bilateral) ? Bilateral : Unilateral;
        const int size = ccpBlockSize(kind);
        blockFirst.push_back(i);
        blockKind.push_back(kind);
        blockScale.push_back(ccpBlockScale(&diagonal[i], size));
        for (int k = i; k < i + size; ++k) rowScale[k] = blockScale.back();
        mu.push_back(cone ? rows.mu[i + 1] : Real(0));
        limit.push_back(rows.maxImpulse[i]);
        i += size;
    }
    for (int i = 0; i < n; ++i) p[i] = rowGradient(i, bodies.unconstrained.data(), nullptr);
    if (colour) {
        colourBlocks(rows, bodies);
        packBlocks();
    } else {
        colourOrder.clear();
        colourStart.clear();
        colourKey_.clear();
    }
}

// Jones-Plassmann rounds over the blocks (a block's bodies are its first row's), as the device
// pipeline colours them: the same hashed priorities and rounds, so the same colours. A block on
// four bodies goes to the serial range.
void CcpProblem::colourBlocks(const ConstraintRows& rows, const BodyVelocities& bodies) {
    const int nb = blockCount(), bodyCount = (int)bodies.invMass.size();
    // The colouring reads a block's dynamic bodies and whether it is wide, nothing else.
    std::vector<int> key(3 * size_t(nb) + 1);
    key[3 * size_t(nb)] = bodyCount;
    for (int b = 0; b < nb; ++b) {
        const int first = blockFirst[b];
        for (int side = 0; side < 2; ++side) {
            const int body = side == 0 ? rows.bodyA[first] : rows.bodyB[first];
            key[3 * size_t(b) + side] = body >= 0 && bodies.invMass[body] > 0 ? body : -1;
        }
        key[3 * size_t(b) + 2] = rows.wideRows > 0 && (rows.bodyC[first] >= 0 || rows.bodyD[first] >= 0);
    }
    if (key == colourKey_ && (int)colourOrder.size() == nb) return;
    colourKey_ = std::move(key);

    std::vector<int> bodyA(nb), bodyB(nb), round(nb, -1), colour(nb, -1), start(bodyCount + 1);
    std::vector<uint64_t> keys;
    for (int b = 0; b < nb; ++b) {
        bodyA[b] = rows.bodyA[blockFirst[b]];
        bodyB[b] = rows.bodyB[blockFirst[b]];
        for (int body : {bodyA[b], bodyB[b]})
            if (body >= 0 && bodies.invMass[body] > 0) keys.push_back(scatterEntryKey(body, b));
    }
    std::sort(keys.begin(), keys.end());
    for (int body = 0; body <= bodyCount; ++body) start[body] = scatterEntryStart(keys.data(), (int)keys.size(), body);
    RowSystemView blocks;
    blocks.rowCount = nb;
    blocks.bodyCount = bodyCount;
    blocks.bodyA = bodyA.data();
    blocks.bodyB = bodyB.data();
    blocks.invMass = bodies.invMass.data();
    // The pending blocks in index order, as the device's rounds visit them; a round's loop over
    // the pending list is the loop over every block that skips the coloured ones.
    std::vector<int> pending(nb);
    std::iota(pending.begin(), pending.end(), 0);
    for (int k = 0; k < kGpuColourRounds && !pending.empty(); ++k) {
        for (int b : pending) {   // a block coloured in round k still counts as pending in it
            const int chosen = colourRowInRound(blocks, keys.data(), start.data(), round.data(), colour.data(), b, k);
            if (chosen < 0) continue;
            colour[b] = chosen;
            round[b] = k;
        }
        pending.erase(std::remove_if(pending.begin(), pending.end(), [&](int b) { return round[b] >= 0; }), pending.end());
    }
    std::vector<int> order(nb);
    for (int b = 0; b < nb; ++b) order[b] = colour[b] < 0 || colourKey_[3 * size_t(b) + 2] ? kCcpColours : colour[b];
    colourOrder.resize(nb);
    std::iota(colourOrder.begin(), colourOrder.end(), 0);
    std::stable_sort(colourOrder.begin(), colourOrder.end(), [&](int a, int b) { return order[a] < order[b]; });
    colourStart.resize(kCcpColours + 2);
    for (int c = 0; c <= kCcpColours + 1; ++c)
        colourStart[c] = int(std::lower_bound(colourOrder.begin(), colourOrder.end(), c,
                                              [&](int b, int value) { return order[b] < value; }) -
                             colourOrder.begin());
}

// u = u~ + M^-1 J^T x (eq. 9), then g = J u + offset + C x = N x + p.
void CcpProblem::gradient(const Real* x, Real* g, std::vector<Spatial>& velocity) const {
    const int nb = (int)bodies_->unconstrained.size();
    velocity.resize(nb);
    scatterImpulses(view_, x, velocity.data());
    for (int b = 0; b < nb; ++b) velocity[b] = bodies_->unconstrained[b] + velocity[b];
    for (int i = 0; i < rowCount(); ++i) g[i] = rowGradient(i, velocity.data(), x);
}

void CcpProblem::projectBlock(int b, Real* x) const { ccpProjectBlock(x, blockFirst[b], blockKind[b], mu[b], limit[b]); }

void CcpProblem::project(Real* x) const {
    for (int b = 0; b < blockCount(); ++b) projectBlock(b, x);
}

// ||(x - Pi(x - g / s)) s|| over the blocks (ccp_cone_hd.h coneNaturalResidual), m/s.
Real CcpProblem::merit(const Real* x, const Real* g) const {
    Real sum = 0;
    for (int b = 0; b < blockCount(); ++b)
        sum += ccpBlockMeritSq(x, g, blockFirst[b], blockKind[b], blockScale[b], mu[b], limit[b]);
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
Real CcpProblem::jacobiOmega(std::vector<Real>& x, std::vector<Real>& y, std::vector<Spatial>& w) const {
    const int n = rowCount();
    x.assign(n, Real(1));
    y.resize(n);
    w.resize(bodies_->unconstrained.size());
    Real estimate = 1;
    for (int it = 0; it < 10; ++it) {
        scatterImpulses(view_, x.data(), w.data());
        Real norm = 0, xnorm = 0;
        for (int i = 0; i < n; ++i) {
            y[i] = ccpRowGradient(view_, i, w.data(), 0, x[i]) / rowScale[i];
            norm += y[i] * y[i];
        }
        for (int i = 0; i < n; ++i) xnorm += x[i] * x[i];
        norm = std::sqrt(norm);
        xnorm = std::sqrt(xnorm);
        if (!(norm > 0) || !(xnorm > 0)) break;
        estimate = norm / xnorm;
        for (int i = 0; i < n; ++i) x[i] = y[i] / norm;
    }
    return Real(1) / std::max(estimate, Real(1e-12));
}

void CcpProblem::packBlocks() {
    Packed& q = packed_;
    const int n = rowCount();
    const bool wide = view_.bodyC != nullptr;
    q.row.resize(n);
    q.first.resize(blockCount());
    int r = 0;
    for (int k = 0; k < blockCount(); ++k) {
        const int b = colourOrder[k];
        q.first[k] = r;
        for (int i = blockFirst[b]; i < blockFirst[b] + ccpBlockSize(blockKind[b]); ++i) q.row[r++] = i;
    }
    auto copy = [&](const auto* from, auto& to) {
        to.resize(n);
        for (int i = 0; i < n; ++i) to[i] = from[q.row[i]];
        return to.data();
    };
    q.view = view_;
    q.view.bodyA = copy(view_.bodyA, q.bodyA);
    q.view.bodyB = copy(view_.bodyB, q.bodyB);
    q.view.jacobianA = copy(view_.jacobianA, q.jacobianA);
    q.view.jacobianB = copy(view_.jacobianB, q.jacobianB);
    q.view.invMassJacobianA = copy(view_.invMassJacobianA, q.minvJA);
    q.view.invMassJacobianB = copy(view_.invMassJacobianB, q.minvJB);
    q.view.compliance = copy(view_.compliance, q.compliance);
    if (wide) {
        q.view.bodyC = copy(view_.bodyC, q.bodyC);
        q.view.bodyD = copy(view_.bodyD, q.bodyD);
        q.view.jacobianC = copy(view_.jacobianC, q.jacobianC);
        q.view.jacobianD = copy(view_.jacobianD, q.jacobianD);
        q.view.invMassJacobianC = copy(view_.invMassJacobianC, q.minvJC);
        q.view.invMassJacobianD = copy(view_.invMassJacobianD, q.minvJD);
    }
    q.view.runCount = 0;   // per-row arithmetic only
    q.view.runStart = nullptr;
    copy(offset.data(), q.offset);
    q.x.resize(n);
}

void CcpProblem::gaussSeidelSweep(Real omega, Real* x, Spatial* u) const {
    Packed& q = packed_;
    const int n = rowCount();
    for (int i = 0; i < n; ++i) q.x[i] = x[q.row[i]];
    for (int k = 0; k < blockCount(); ++k) {
        const int b = colourOrder[k];
        ccpGaussSeidelBlock(q.view, q.offset.data(), q.first[k], blockKind[b], omega / blockScale[b], mu[b], limit[b],
                            q.x.data(), u);
    }
    for (int i = 0; i < n; ++i) x[q.row[i]] = q.x[i];
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
        const ConeComplementarity c =
            coneComplementarity(Vec3{rows.lambda[k], rows.lambda[k + 1], rows.lambda[k + 2]}, Vec3{g[k], g[k + 1], g[k + 2]}, problem.mu[b]);
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
