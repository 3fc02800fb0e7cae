// The decoupled rows' diagonal solve and the coupled block's linear solve (decoupled_rows.h).
#include "engine/solver/decoupled_rows.h"

#include "engine/solver/newton.h"

namespace cs {
namespace {

template <class T>
void fit(std::vector<T>& v, int n) {
    if (v.size() < size_t(n)) v.resize(size_t(n));
}

bool isDecoupled(const RowSystemView& s, int i) {
    return s.compliance[i] >= kDecoupledRatio * s.jmjDiagonal[i];
}

// Copies the coupled rows' columns and b_K - A_KD x_D into k; returns the view of A_KK + C_K.
RowSystemView packCoupled(const RowSystemView& s, const Real* b, const std::vector<Real>& invMass, bool colour,
                          CoupledRows& k) {
    const int n = (int)k.row.size();
    const bool wide = s.bodyC != nullptr;
    fit(k.bodyA, n);
    fit(k.bodyB, n);
    for (auto* v : {&k.jacobianA, &k.jacobianB, &k.minvJA, &k.minvJB}) fit(*v, n);
    if (wide) {
        fit(k.bodyC, n);
        fit(k.bodyD, n);
        for (auto* v : {&k.jacobianC, &k.jacobianD, &k.minvJC, &k.minvJD}) fit(*v, n);
    }
    for (auto* v : {&k.compliance, &k.diag, &k.rhs, &k.x}) fit(*v, n);
    fit(k.runStart, n + 1);
    for (int j = 0; j < n; ++j) {
        const int i = k.row[j];
        k.bodyA[j] = s.bodyA[i];
        k.bodyB[j] = s.bodyB[i];
        k.jacobianA[j] = s.jacobianA[i];
        k.jacobianB[j] = s.jacobianB[i];
        k.minvJA[j] = s.invMassJacobianA[i];
        k.minvJB[j] = s.invMassJacobianB[i];
        if (wide) {
            k.bodyC[j] = s.bodyC[i];
            k.bodyD[j] = s.bodyD[i];
            k.jacobianC[j] = s.jacobianC[i];
            k.jacobianD[j] = s.jacobianD[i];
            k.minvJC[j] = s.invMassJacobianC[i];
            k.minvJD[j] = s.invMassJacobianD[i];
        }
        k.compliance[j] = s.compliance[i];
        k.diag[j] = s.jmjDiagonal[i];
        k.rhs[j] = b[i] - gatherRow(s, i, k.w.data());   // b_K - J_K H^-1 J_D^T x_D
        k.x[j] = 0;
    }
    RowSystemView v;
    v.rowCount = n;
    v.bodyCount = s.bodyCount;
    v.bodyA = k.bodyA.data();
    v.bodyB = k.bodyB.data();
    v.jacobianA = k.jacobianA.data();
    v.jacobianB = k.jacobianB.data();
    v.invMassJacobianA = k.minvJA.data();
    v.invMassJacobianB = k.minvJB.data();
    if (wide) {
        v.bodyC = k.bodyC.data();
        v.bodyD = k.bodyD.data();
        v.jacobianC = k.jacobianC.data();
        v.jacobianD = k.jacobianD.data();
        v.invMassJacobianC = k.minvJC.data();
        v.invMassJacobianD = k.minvJD.data();
    }
    v.compliance = k.compliance.data();
    v.jmjDiagonal = k.diag.data();
    v.invMass = s.invMass;
    v.invInertia = s.invInertia;
    v.runCount = findRuns(n, v.bodyA, v.bodyB, k.runStart.data(), v.bodyC, v.bodyD);
    v.runStart = k.runStart.data();
    if (colour) {
        colourRowArrays(n, v.bodyA, v.bodyB, v.bodyC, v.bodyD, invMass, k.colourStart, k.colourRows,
                        &v.serialColour);
        v.colourCount = (int)k.colourStart.size() - 1;
        v.colourStart = k.colourStart.data();
        v.colourRows = k.colourRows.data();
    }
    return v;
}

}  // namespace

LinearSolveResult solveWithDecoupledRows(LinearSolverType type, const RowSystemView& full, const Real* b, Real* x,
                                         const LinearSolverSettings& settings, const std::vector<Real>& invMass,
                                         LinearSolverScratch& scratch, CoupledRows& k, std::vector<Real>* history) {
    const int n = full.rowCount;
    k.row.clear();
    for (int i = 0; i < n; ++i)
        if (!isDecoupled(full, i)) k.row.push_back(i);
    k.decoupled = n - (int)k.row.size();
    if (k.decoupled == 0) return solveLinear(type, full, b, x, settings, scratch, history);

    // x_D = b_D / (A_ii + C_ii), and w = H^-1 J_D^T x_D for the coupled rows' right-hand side.
    k.w.assign(size_t(full.bodyCount), Spatial{{0, 0, 0}, {0, 0, 0}});
    for (int i = 0; i < n; ++i) {
        if (!isDecoupled(full, i)) continue;
        const Real d = full.jmjDiagonal[i] + full.compliance[i];
        x[i] = d > 0 ? b[i] / d : Real(0);
        scatterRow(full, i, x[i], k.w.data());
    }
    if (k.row.empty()) {
        if (history) history->assign(1, Real(0));
        return LinearSolveResult{};
    }
    const RowSystemView coupled = packCoupled(full, b, invMass, type == LinearSolverType::GaussSeidel, k);
    const LinearSolveResult result = solveLinear(type, coupled, k.rhs.data(), k.x.data(), settings, scratch, history);
    for (int j = 0; j < coupled.rowCount; ++j) x[k.row[j]] = k.x[j];
    // D again, now with every row's impulse: x_D = (b_D - A_DK x_K - (A_DD - diag) x_D) / (A_ii + C_ii),
    // the closing half of a symmetric block Gauss-Seidel sweep D, K, D.
    scatterImpulses(full, x, k.w.data());
    for (int i = 0; i < n; ++i) {
        if (!isDecoupled(full, i)) continue;
        const Real d = full.jmjDiagonal[i] + full.compliance[i];
        if (d > 0) x[i] = (b[i] - gatherRow(full, i, k.w.data()) + full.jmjDiagonal[i] * x[i]) / d;
    }
    return result;
}

}  // namespace cs
