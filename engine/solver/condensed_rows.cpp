// The compliant rows condensed into a sparse node-space factor (condensed_rows.h).
#include "engine/solver/condensed_rows.h"

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <chrono>

#include "engine/exec/host_executor.h"

namespace cs {

namespace {

// Hard rows above which the step keeps the iterative solve: their dense factor costs m^3/3 flops
// per Newton iteration (600 rows: 72 Mflop, some 20 ms).
constexpr int kMaxDenseHardRows = 600;
// Node DOFs touched by hard rows above which the step keeps the iterative solve: K^-1 over them
// costs about 1.5 q^3 flops per step. fem_fold's self contact touches 530-560 and more, so its
// steps stay iterative (they converge since the self-contact rows were fixed, docs/fem_convergence.md
// section 5; before, with both limits at 1,500, every condensed step still ended at the Newton cap).
constexpr int kMaxTouchedDofs = 600;

using SparseK = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

double secondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool isZero(const Mat3& m) {
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            if (m.m[r][c] != 0) return false;
    return true;
}

// The bodies and linear Jacobians of row i's (up to) four columns.
int rowColumns(const RowSystemView& v, int i, int body[4], const Spatial* jac[4]) {
    body[0] = v.bodyA[i];
    body[1] = v.bodyB[i];
    jac[0] = &v.jacobianA[i];
    jac[1] = &v.jacobianB[i];
    if (!v.bodyC) return 2;
    body[2] = v.bodyC[i];
    body[3] = v.bodyD[i];
    jac[2] = &v.jacobianC[i];
    jac[3] = &v.jacobianD[i];
    return 4;
}

const Spatial* invMassColumn(const RowSystemView& v, int i, int slot) {
    switch (slot) {
    case 0: return &v.invMassJacobianA[i];
    case 1: return &v.invMassJacobianB[i];
    case 2: return &v.invMassJacobianC[i];
    default: return &v.invMassJacobianD[i];
    }
}

}  // namespace

struct CondensedRows::Impl {
    // ---- K's structure: rebuilt when the soft rows' bodies change (a new model, a drag) ----
    std::vector<int> signature;      // bodyCount, then four bodies per soft run
    std::vector<int> bodyNode;       // (bodies) K node or -1
    std::vector<int> nodeBody;       // (K nodes)
    std::vector<int> runSlot;        // (soft runs x 16) value index of block (p, q)'s entry (0, 0), or -1
    std::vector<int> nodeColumnLength;   // (K nodes) entries in each of the node's three columns
    std::vector<int> diagSlot;       // (K nodes) value index of the diagonal block's (0, 0)
    SparseK K;                       // lower triangle, in the elimination order (nodeBody)
    // The factorization verbs (engine/exec/executor.h) on the host: CHOLMOD's supernodal L L^T of
    // K, its pattern analysed once per structure, in K's numbering (the touched nodes last); and
    // the dense Cholesky of the hard system and of its linear rows.
    HostExecutor exec;
    HostSparseCholesky factorK;
    bool analysed = false;
    long long factorNonZeros = 0;

    // x = K^-1 rhs (rhs and x over K's DOFs).
    void solveK(const Eigen::VectorXd& rhs, Eigen::VectorXd& x) {
        x.resize(rhs.size());
        factorK.solve(exec, rhs.data(), x.data(), 1);
    }

    // ---- per step ----
    std::vector<int> soft, runStart;     // soft rows, runs of soft rows on the same bodies
    std::vector<int> hard;               // hard rows
    std::vector<double> invD;            // (rows) 1 / D_i on soft rows
    std::vector<int> touchedDof;         // (K nodes) first column in X, or -1
    std::vector<int> touchedNodes;
    Eigen::MatrixXd Xtt;                 // K^-1 over the touched DOFs
    Eigen::MatrixXd G;                   // J_H K~^-1 J_H^T (hard x hard)
    Eigen::MatrixXd B, Bt;               // X_TT U and its transpose, U the hard rows' Jacobians on the touched DOFs
    std::vector<std::vector<std::pair<int, int>>> bodyEntries;   // (bodies) (hard index, slot) on non-K bodies
    // ---- per solve ----
    std::vector<char> hardLinear;        // (hard) a bilateral row with no force limit
    std::vector<int> linearIndex;
    Eigen::VectorXd f, y, za, zb, fa, fb, rhsH, lambdaH, a, bStep, rhsL;
    Eigen::MatrixXd A, All;
    HostDenseCholesky llt, lltLinear;
    Eigen::VectorXd solutionL;
};

CondensedRows::CondensedRows() : impl_(std::make_unique<Impl>()) {}
CondensedRows::~CondensedRows() = default;
CondensedRows::CondensedRows(const CondensedRows&) : impl_(std::make_unique<Impl>()) {}
CondensedRows& CondensedRows::operator=(const CondensedRows&) {
    impl_ = std::make_unique<Impl>();
    rowSoft_.clear();
    stats_ = CondensedStats{};
    return *this;
}

bool CondensedRows::prepare(const ConstraintRows& rows, const RowSystemView& v) {
    Impl& m = *impl_;
    const int n = rows.size(), nb = v.bodyCount;
    stats_ = CondensedStats{};
    rowSoft_.assign(n, 0);
    // Body kinds: 0 static, 1 point mass (an FEM node), 2 rigid.
    std::vector<int>& bodyNode = m.bodyNode;
    auto kindOf = [&](int b) { return v.invMass[b] > 0 ? (isZero(v.invInertia[b]) ? 1 : 2) : 0; };

    m.soft.clear();
    for (int i = 0; i < n; ++i) {
        if (rows.kind[i] != int(RowKind::Bilateral) || !(rows.softness[i] > 0) ||
            rows.maxImpulse[i] < kNoImpulseLimit)
            continue;
        int body[4];
        const Spatial* jac[4];
        const int cols = rowColumns(v, i, body, jac);
        bool ok = true, any = false;
        for (int c = 0; c < cols; ++c) {
            if (body[c] < 0) continue;
            const int k = kindOf(body[c]);
            if (k == 2) ok = false;
            if (k == 1) any = true;
        }
        if (ok && any) {
            rowSoft_[i] = 1;
            m.soft.push_back(i);
        }
    }
    if (m.soft.empty()) return false;
    m.hard.clear();
    m.hardLinear.clear();
    for (int i = 0; i < n; ++i)
        if (!rowSoft_[i]) {
            m.hard.push_back(i);
            m.hardLinear.push_back(rows.kind[i] == int(RowKind::Bilateral) && rows.maxImpulse[i] >= kNoImpulseLimit);
        }
    const int nh = (int)m.hard.size();
    if (nh > kMaxDenseHardRows) return false;

    // Runs of soft rows on the same bodies, and the structure's signature.
    m.runStart.clear();
    std::vector<int> signature{nb};
    for (size_t s = 0; s < m.soft.size(); ++s) {
        const int i = m.soft[s];
        int body[4] = {-1, -1, -1, -1};
        const Spatial* jac[4];
        rowColumns(v, i, body, jac);
        for (int& b : body)   // static columns drop out of K
            if (b >= 0 && kindOf(b) != 1) b = -1;
        bool fresh = s == 0;
        if (!fresh) {
            const size_t at = signature.size() - 4;
            for (int c = 0; c < 4; ++c) fresh = fresh || signature[at + c] != body[c];
        }
        if (fresh) {
            m.runStart.push_back((int)s);
            for (int c = 0; c < 4; ++c) signature.push_back(body[c]);
        }
    }
    m.runStart.push_back((int)m.soft.size());
    const int runs = (int)m.runStart.size() - 1;

    // The nodes the hard rows touch: they go last in K's order, so that the factor's trailing
    // block is their Schur complement (below); they belong to the signature too.
    const size_t runPart = signature.size();
    {
        std::vector<char> inK(nb, 0);
        for (size_t k = 1; k < runPart; ++k)
            if (signature[k] >= 0) inK[signature[k]] = 1;
        m.touchedNodes.clear();   // bodies here, K nodes after the numbering
        std::vector<char> seen(nb, 0);
        for (int i : m.hard) {
            int body[4];
            const Spatial* jac[4];
            const int cols = rowColumns(v, i, body, jac);
            for (int c = 0; c < cols; ++c)
                if (body[c] >= 0 && inK[body[c]] && !seen[body[c]]) {
                    seen[body[c]] = 1;
                    m.touchedNodes.push_back(body[c]);
                }
        }
        if (3 * (int)m.touchedNodes.size() > kMaxTouchedDofs) return false;
        std::sort(m.touchedNodes.begin(), m.touchedNodes.end());
        signature.insert(signature.end(), m.touchedNodes.begin(), m.touchedNodes.end());
    }
    const int touched = (int)m.touchedNodes.size();

    // Each run's pairs of K bodies (b1, b2) at its columns (c1, c2), both in K.
    auto forEachRunPair = [&](auto&& visit) {
        for (int r = 0; r < runs; ++r)
            for (int c1 = 0; c1 < 4; ++c1)
                for (int c2 = 0; c2 < 4; ++c2) {
                    const int b1 = signature[1 + 4 * r + c1], b2 = signature[1 + 4 * r + c2];
                    if (b1 >= 0 && b2 >= 0) visit(r, c1, c2, b1, b2);
                }
    };
    if (signature != m.signature) {
        // Node order: constrained approximate minimum degree (CAMD) on the node graph (a third of
        // the DOF graph's size, 3 x 3 blocks kept together), the touched nodes constrained last.
        // pneunet_finger: 33 Mflop per factorization against 55 with the untouched nodes by plain
        // AMD and the touched ones appended (the 279 touched DOFs cost only 24.5 -> 33).
        m.signature = signature;
        std::vector<int> candidates;   // K bodies
        std::vector<char> isTouched(nb, 0);
        for (int b : m.touchedNodes) isTouched[b] = 1;
        bodyNode.assign(nb, -1);
        for (size_t k = 1; k < runPart; ++k)
            if (signature[k] >= 0) bodyNode[signature[k]] = 0;
        for (int b = 0; b < nb; ++b)
            if (bodyNode[b] >= 0) {
                bodyNode[b] = (int)candidates.size();
                candidates.push_back(b);
            }
        const int count = (int)candidates.size();
        std::vector<Eigen::Triplet<double, int>> adjacency;   // lower triangle of the node graph
        for (int q = 0; q < count; ++q) adjacency.emplace_back(q, q, 1.0);
        forEachRunPair([&](int, int, int, int b1, int b2) {
            if (bodyNode[b1] > bodyNode[b2]) adjacency.emplace_back(bodyNode[b1], bodyNode[b2], 1.0);
        });
        SparseK graph(count, count);
        graph.setFromTriplets(adjacency.begin(), adjacency.end());
        graph.makeCompressed();
        std::vector<int> member(count), order(count);   // constraint set: 1 touched (last), 0 the others
        for (int q = 0; q < count; ++q) member[q] = isTouched[candidates[q]];
        if (!fillReducingOrder(count, graph.outerIndexPtr(), graph.innerIndexPtr(), member.data(), order.data(),
                               nullptr)) {
            m.signature.clear();   // no order: the next prepare starts the structure again
            return false;
        }
        m.nodeBody.clear();
        for (int k = 0; k < count; ++k) m.nodeBody.push_back(candidates[order[k]]);   // order[k]: eliminated k-th
        for (int q = 0; q < (int)m.nodeBody.size(); ++q) bodyNode[m.nodeBody[q]] = q;
        const int nodes = (int)m.nodeBody.size();
        std::vector<std::vector<int>> column(nodes);   // rows (nodes p >= q) of block column q
        for (int q = 0; q < nodes; ++q) column[q].push_back(q);
        forEachRunPair([&](int, int, int, int b1, int b2) {
            const int p = bodyNode[b1], q = bodyNode[b2];
            if (p > q) column[q].push_back(p);
        });
        long long nnz = 0;
        for (auto& col : column) {
            std::sort(col.begin(), col.end());
            col.erase(std::unique(col.begin(), col.end()), col.end());
            nnz += 9 * (long long)col.size();
        }
        const int dofs = 3 * nodes;
        m.K.resize(dofs, dofs);
        m.K.resizeNonZeros((Eigen::Index)nnz);
        int* outer = m.K.outerIndexPtr();
        int* inner = m.K.innerIndexPtr();
        m.nodeColumnLength.assign(nodes, 0);
        m.diagSlot.assign(nodes, 0);
        int at = 0;
        for (int q = 0; q < nodes; ++q) {
            m.nodeColumnLength[q] = 3 * (int)column[q].size();
            for (int c = 0; c < 3; ++c) {
                outer[3 * q + c] = at;
                for (int p : column[q])
                    for (int r = 0; r < 3; ++r) inner[at++] = 3 * p + r;
            }
            m.diagSlot[q] = outer[3 * q];   // the diagonal block comes first (p = q is the least)
        }
        outer[dofs] = at;
        // Value index of entry (3p, 3q) of each run's blocks; entry (3p + r, 3q + c) is that + c * len + r.
        m.runSlot.assign(16 * (size_t)runs, -1);
        forEachRunPair([&](int r, int c1, int c2, int b1, int b2) {
            const int p = bodyNode[b1], q = bodyNode[b2];
            if (p < q) return;
            const auto& col = column[q];
            const int rank = int(std::lower_bound(col.begin(), col.end(), p) - col.begin());
            m.runSlot[16 * r + 4 * c1 + c2] = outer[3 * q] + 3 * rank;
        });
        m.analysed = false;   // a new pattern: analysed again below
    }
    const int nodes = (int)m.nodeBody.size();
    const int dofs = 3 * nodes;

    // ---- K = M + J_S^T D_S^-1 J_S ----
    auto t0 = std::chrono::steady_clock::now();
    m.invD.assign(n, 0.0);
    for (int i : m.soft) m.invD[i] = 1.0 / double(rows.softness[i]);
    double* val = m.K.valuePtr();
    std::fill(val, val + m.K.nonZeros(), 0.0);
    for (int q = 0; q < nodes; ++q) {
        const double mass = 1.0 / double(v.invMass[m.nodeBody[q]]);
        const int len = m.nodeColumnLength[q];
        for (int c = 0; c < 3; ++c) val[m.diagSlot[q] + c * len + c] += mass;
    }
    for (int r = 0; r < runs; ++r) {
        double local[12][12] = {};
        for (int s = m.runStart[r]; s < m.runStart[r + 1]; ++s) {
            const int i = m.soft[s];
            int body[4];
            const Spatial* jac[4];
            const int cols = rowColumns(v, i, body, jac);
            double g[12] = {};
            for (int c = 0; c < cols; ++c)
                for (int k = 0; k < 3; ++k) g[3 * c + k] = double(jac[c]->lin[k]);
            const double w = m.invD[i];
            for (int a = 0; a < 12; ++a) {
                if (g[a] == 0) continue;
                const double ga = w * g[a];
                for (int b = 0; b < 12; ++b) local[a][b] += ga * g[b];
            }
        }
        for (int c1 = 0; c1 < 4; ++c1)
            for (int c2 = 0; c2 < 4; ++c2) {
                const int slot = m.runSlot[16 * r + 4 * c1 + c2];
                if (slot < 0) continue;
                const int len = m.nodeColumnLength[bodyNode[m.signature[1 + 4 * r + c2]]];
                for (int cc = 0; cc < 3; ++cc)
                    for (int rr = 0; rr < 3; ++rr) val[slot + cc * len + rr] += local[3 * c1 + rr][3 * c2 + cc];
            }
    }
    if (!m.analysed) {
        if (!m.factorK.analyse(m.exec, dofs, m.K.outerIndexPtr(), m.K.innerIndexPtr(), nullptr)) return false;
        m.analysed = true;
        m.factorNonZeros = m.factorK.factorNonZeros();
    }
    // Fails only if K lost definiteness in floating point.
    int factored = 0;
    m.factorK.factor(m.exec, m.K.valuePtr(), &factored);
    if (!factored) return false;
    stats_.factorSeconds = secondsSince(t0);
    stats_.softRows = (int)m.soft.size();
    stats_.hardRows = nh;
    stats_.dofs = dofs;
    stats_.factorNonZeros = m.factorNonZeros;

    // ---- the hard rows: K^-1 over the node DOFs they touch, and G ----
    t0 = std::chrono::steady_clock::now();
    // The touched nodes are K's last: with K = L L^T in that order, the trailing block of the
    // factor is their Schur complement S = L_TT L_TT^T, and K^-1 over them is S^-1 =
    // L_TT^-T L_TT^-1 (dense, 3 x touched square): no solve over the whole factor per DOF
    // (the verb's inverseTrailing).
    const int first = nodes - touched, nt = 3 * touched, f0 = 3 * first;
    m.touchedDof.assign(nodes, -1);
    for (int q = first; q < nodes; ++q) m.touchedDof[q] = 3 * (q - first);
    stats_.touchedDofs = nt;
    if (nt > 0) {
        m.Xtt.resize(nt, nt);
        m.factorK.inverseTrailing(m.exec, f0, m.Xtt.data());
    } else {
        m.Xtt.resize(0, 0);
    }
    m.G.setZero(nh, nh);
    // Through K: G_ij += u_i^T X_TT u_j, u_i the row's Jacobian on the touched DOFs.
    if (nt > 0) {
        m.B.setZero(nt, nh);   // X_TT U
        for (int j = 0; j < nh; ++j) {
            int body[4];
            const Spatial* jac[4];
            const int cols = rowColumns(v, m.hard[j], body, jac);
            for (int c = 0; c < cols; ++c) {
                if (body[c] < 0 || bodyNode[body[c]] < 0) continue;
                const int q = bodyNode[body[c]], tq = m.touchedDof[q];
                for (int k = 0; k < 3; ++k) {
                    const double g = double(jac[c]->lin[k]);
                    if (g == 0) continue;
                    m.B.col(j) += g * m.Xtt.col(tq + k);
                }
            }
        }
        // G = U^T B, column i of G (= row i, G symmetric) from B's rows at row i's DOFs: through
        // B^T so that both are read and written contiguously (B's rows, strided, were 2 % of
        // pneunet_finger's step, with 369 hard rows on 279 touched DOFs).
        m.Bt = m.B.transpose();
        for (int i = 0; i < nh; ++i) {
            int body[4];
            const Spatial* jac[4];
            const int cols = rowColumns(v, m.hard[i], body, jac);
            for (int c = 0; c < cols; ++c) {
                if (body[c] < 0 || bodyNode[body[c]] < 0) continue;
                const int tq = m.touchedDof[bodyNode[body[c]]];
                for (int k = 0; k < 3; ++k) {
                    const double g = double(jac[c]->lin[k]);
                    if (g != 0) m.G.col(i) += g * m.Bt.col(tq + k);
                }
            }
        }
    }
    // Through W on every other dynamic body: G_ij += J_ib W_b J_jb^T.
    m.bodyEntries.resize(nb);
    for (auto& e : m.bodyEntries) e.clear();
    for (int j = 0; j < nh; ++j) {
        int body[4];
        const Spatial* jac[4];
        const int cols = rowColumns(v, m.hard[j], body, jac);
        for (int c = 0; c < cols; ++c)
            if (body[c] >= 0 && bodyNode[body[c]] < 0 && v.invMass[body[c]] > 0) m.bodyEntries[body[c]].push_back({j, c});
    }
    for (int b = 0; b < nb; ++b) {
        const auto& e = m.bodyEntries[b];
        for (const auto& [i, ci] : e) {
            int body[4];
            const Spatial* jac[4];
            rowColumns(v, m.hard[i], body, jac);
            const Spatial& Ji = *jac[ci];
            for (const auto& [j, cj] : e) m.G(i, j) += double(dot(Ji, *invMassColumn(v, m.hard[j], cj)));
        }
    }
    stats_.hardSeconds = secondsSince(t0);
    return true;
}

bool CondensedRows::solve(const RowSystemView& v, const Real* compliance, const Real* b, Real* fixed, Real* step) {
    Impl& m = *impl_;
    const int nodes = (int)m.nodeBody.size(), dofs = 3 * nodes, nh = (int)m.hard.size();
    // Gathers J_i x over row i's K nodes (x over K DOFs).
    auto gatherK = [&](int i, const Eigen::VectorXd& x) {
        int body[4];
        const Spatial* jac[4];
        const int cols = rowColumns(v, i, body, jac);
        double y = 0;
        for (int c = 0; c < cols; ++c) {
            if (body[c] < 0 || m.bodyNode[body[c]] < 0) continue;
            const int q = 3 * m.bodyNode[body[c]];
            for (int k = 0; k < 3; ++k) y += double(jac[c]->lin[k]) * x[q + k];
        }
        return y;
    };
    // 1. y = K^-1 J_S^T D_S^-1 r_S
    m.f.setZero(dofs);
    for (int i : m.soft) {
        int body[4];
        const Spatial* jac[4];
        const int cols = rowColumns(v, i, body, jac);
        const double s = double(b[i]) * m.invD[i];
        for (int c = 0; c < cols; ++c) {
            if (body[c] < 0 || m.bodyNode[body[c]] < 0) continue;
            const int q = 3 * m.bodyNode[body[c]];
            for (int k = 0; k < 3; ++k) m.f[q + k] += double(jac[c]->lin[k]) * s;
        }
    }
    m.solveK(m.f, m.y);
    // 2. (G + D_H) dlambda_H = r_H - J_H y
    m.za.setZero(dofs);
    m.zb.setZero(dofs);
    if (nh > 0) {
        m.rhsH.resize(nh);
        for (int j = 0; j < nh; ++j) m.rhsH[j] = double(b[m.hard[j]]) - gatherK(m.hard[j], m.y);
        m.A = m.G;
        for (int j = 0; j < nh; ++j) m.A(j, j) += double(compliance[m.hard[j]]);
        int factored = 0;
        m.llt.factor(m.exec, nh, m.A.data(), &factored);
        if (!factored) return false;
        m.lambdaH.resize(nh);
        m.llt.solve(m.exec, m.rhsH.data(), m.lambdaH.data(), 1);
        // The damped step: the non-smooth hard rows (contacts, force-limited rows) move by
        // t dlambda; the linear ones (attachments, joints) take the values that solve their own
        // equations given that, a + t b: a = A_LL^-1 rhs_L, b = dlambda_L - a. So, as for S, only
        // the non-smooth rows feel the damping.
        int linear = 0;
        for (int j = 0; j < nh; ++j) linear += m.hardLinear[j];
        m.a.setZero(nh);
        m.bStep = m.lambdaH;
        if (linear == nh) {
            m.a = m.lambdaH;
            m.bStep.setZero(nh);
        } else if (linear > 0) {
            m.linearIndex.clear();
            for (int j = 0; j < nh; ++j)
                if (m.hardLinear[j]) m.linearIndex.push_back(j);
            m.All.resize(linear, linear);
            m.rhsL.resize(linear);
            for (int p = 0; p < linear; ++p) {
                m.rhsL[p] = m.rhsH[m.linearIndex[p]];
                for (int q = 0; q < linear; ++q) m.All(p, q) = m.A(m.linearIndex[p], m.linearIndex[q]);
            }
            m.lltLinear.factor(m.exec, linear, m.All.data(), &factored);
            if (!factored) return false;
            m.solutionL.resize(linear);
            m.lltLinear.solve(m.exec, m.rhsL.data(), m.solutionL.data(), 1);
            m.rhsL.swap(m.solutionL);
            for (int p = 0; p < linear; ++p) {
                const int j = m.linearIndex[p];
                m.a[j] = m.rhsL[p];
                m.bStep[j] = m.lambdaH[j] - m.rhsL[p];
            }
        }
        // 3. z = K^-1 J_H^T dlambda_H over K's DOFs (one solve with the factor each for a and b)
        if (m.Xtt.cols() > 0) {
            m.fa.setZero(dofs);
            m.fb.setZero(dofs);
            for (int j = 0; j < nh; ++j) {
                int body[4];
                const Spatial* jac[4];
                const int cols = rowColumns(v, m.hard[j], body, jac);
                for (int c = 0; c < cols; ++c) {
                    if (body[c] < 0 || m.bodyNode[body[c]] < 0) continue;
                    const int q = 3 * m.bodyNode[body[c]];
                    for (int k = 0; k < 3; ++k) {
                        m.fa[q + k] += double(jac[c]->lin[k]) * m.a[j];
                        m.fb[q + k] += double(jac[c]->lin[k]) * m.bStep[j];
                    }
                }
            }
            if (m.a.squaredNorm() > 0) m.solveK(m.fa, m.za);
            if (m.bStep.squaredNorm() > 0) m.solveK(m.fb, m.zb);
        }
        for (int j = 0; j < nh; ++j) {
            fixed[m.hard[j]] = Real(m.a[j]);
            step[m.hard[j]] = Real(m.bStep[j]);
        }
    }
    // 4. dlambda_S(t) = D_S^-1 (r_S - J_S (y + z_a)) - t D_S^-1 J_S z_b
    m.y += m.za;
    for (int i : m.soft) {
        fixed[i] = Real((double(b[i]) - gatherK(i, m.y)) * m.invD[i]);
        step[i] = Real(-gatherK(i, m.zb) * m.invD[i]);
    }
    return true;
}

}  // namespace cs
