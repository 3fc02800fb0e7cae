// Lemke's method (lemke.h) and the PEG mixed LCP of [PEG] section 5.3 built from rows.
#include "engine/solver/lemke.h"

#include <cmath>

namespace cs {

LemkeResult solveLemke(int n, const std::vector<double>& M, const std::vector<double>& q, std::vector<double>& z,
                       int maxPivots) {
    LemkeResult result;
    z.assign(n, 0.0);
    if (n == 0) { result.solved = true; return result; }
    // Tableau rows: w - M z - e z0 = q. Columns: w_0..w_{n-1}, z_0..z_{n-1}, z0, rhs.
    const int cols = 2 * n + 2, z0 = 2 * n, rhs = 2 * n + 1;
    std::vector<double> T(size_t(n) * cols, 0.0);
    std::vector<int> basis(n);
    for (int i = 0; i < n; ++i) {
        T[size_t(i) * cols + i] = 1;
        for (int j = 0; j < n; ++j) T[size_t(i) * cols + n + j] = -M[size_t(i) * n + j];
        T[size_t(i) * cols + z0] = -1;
        T[size_t(i) * cols + rhs] = q[i];
        basis[i] = i;
    }
    int row = 0;
    for (int i = 1; i < n; ++i)
        if (q[i] < q[row]) row = i;
    if (q[row] >= 0) { result.solved = true; return result; }   // z = 0 solves it
    auto pivot = [&](int r, int c) {
        double* pr = &T[size_t(r) * cols];
        const double inv = 1.0 / pr[c];
        for (int k = 0; k < cols; ++k) pr[k] *= inv;
        for (int i = 0; i < n; ++i) {
            if (i == r) continue;
            double* pi = &T[size_t(i) * cols];
            const double f = pi[c];
            if (f == 0) continue;
            for (int k = 0; k < cols; ++k) pi[k] -= f * pr[k];
        }
        basis[r] = c;
    };
    // z0 enters at the most negative q; the w that leaves names the next entering column.
    int leaving = basis[row];
    pivot(row, z0);
    int entering = leaving < n ? leaving + n : leaving - n;   // complement
    const double tol = 1e-12;
    for (result.pivots = 1; result.pivots < maxPivots; ++result.pivots) {
        // Minimum ratio test; ties go to z0 leaving (termination), then the lowest row.
        int r = -1;
        double best = 0;
        for (int i = 0; i < n; ++i) {
            const double a = T[size_t(i) * cols + entering];
            if (a <= tol) continue;
            const double ratio = T[size_t(i) * cols + rhs] / a;
            if (r < 0 || ratio < best - 1e-14 || (std::fabs(ratio - best) <= 1e-14 && basis[i] == z0)) {
                r = i;
                best = ratio;
            }
        }
        if (r < 0) return result;   // ray termination: no solution found from this ray
        leaving = basis[r];
        pivot(r, entering);
        if (leaving == z0) {
            for (int i = 0; i < n; ++i)
                if (basis[i] >= n && basis[i] < 2 * n) z[basis[i] - n] = T[size_t(i) * cols + rhs];
            result.solved = true;
            return result;
        }
        entering = leaving < n ? leaving + n : leaving - n;
    }
    return result;
}

namespace {

// J_a H^-1 J_b^T for two scalar rows given by their body blocks.
double coupling(const BodyVelocities& bodies, int a0, const Spatial& ja0, int a1, const Spatial& ja1, int b0,
                const Spatial& jb0, int b1, const Spatial& jb1) {
    double s = 0;
    const int ra[2] = {a0, a1}, rb[2] = {b0, b1};
    const Spatial* Ja[2] = {&ja0, &ja1};
    const Spatial* Jb[2] = {&jb0, &jb1};
    for (int i = 0; i < 2; ++i) {
        if (ra[i] < 0) continue;
        for (int k = 0; k < 2; ++k) {
            if (rb[k] != ra[i]) continue;
            const int b = ra[i];
            Spatial m{bodies.invMass[b] * Jb[k]->lin, bodies.invInertia[b] * Jb[k]->ang};
            s += double(dot(*Ja[i], m));
        }
    }
    return s;
}

double velocityOf(const BodyVelocities& bodies, const std::vector<Spatial>& u, int a, const Spatial& ja, int b,
                  const Spatial& jb) {
    double v = 0;
    if (a >= 0) v += double(dot(ja, u[a]));
    if (b >= 0) v += double(dot(jb, u[b]));
    (void)bodies;
    return v;
}

}  // namespace

LemkeResult solvePegLcp(const ConstraintRows& rows, const BodyVelocities& bodies, Real h,
                        std::vector<Real>& impulses, std::vector<Real>& slacks, std::vector<Spatial>& velocity) {
    // Unknowns: one impulse per Normal/Group row, then one slack per gap member.
    std::vector<int> contactRows;
    for (int i = 0; i < rows.size(); ++i)
        if (rows.kind[i] == int(RowKind::Normal) || rows.kind[i] == int(RowKind::Group)) contactRows.push_back(i);
    const int np = (int)contactRows.size(), nc = rows.gapMemberCount(), n = np + nc;
    // A generic "gap row" g: Jacobian blocks and C0; index < np: a contact row, else a member.
    struct GapRow { int a, b; Spatial ja, jb; double c0; };
    auto rowOf = [&](int i) { return GapRow{rows.bodyA[i], rows.bodyB[i], rows.jacobianA[i], rows.jacobianB[i], double(rows.bias[i])}; };
    auto memberOf = [&](int g) {
        return GapRow{rows.gapBodyA[g], rows.gapBodyB[g], rows.gapJacobianA[g], rows.gapJacobianB[g], double(rows.gapBias[g])};
    };
    std::vector<double> M(size_t(n) * n, 0.0), q(n, 0.0), z;
    const std::vector<Spatial>& ut = bodies.unconstrained;
    // rho_x = C0_x/h + J_x nu~ + sum_j (J_x H^-1 J_j^T) p_j
    auto fillRho = [&](int out, const GapRow& x, double sign) {
        q[out] += sign * (x.c0 / h + velocityOf(bodies, ut, x.a, x.ja, x.b, x.jb));
        for (int j = 0; j < np; ++j) {
            const int r = contactRows[j];
            M[size_t(out) * n + j] += sign * coupling(bodies, x.a, x.ja, x.b, x.jb, rows.bodyA[r], rows.jacobianA[r],
                                                      rows.bodyB[r], rows.jacobianB[r]);
        }
    };
    for (int k = 0; k < np; ++k) {
        const int i = contactRows[k];
        // p rows: rho_p (+ E_I2 c: every slack of the group)
        fillRho(k, rowOf(i), 1.0);
        for (int g = rows.gapFirst[i]; rows.gapFirst[i] >= 0 && g < rows.gapFirst[i] + rows.gapCount[i]; ++g)
            M[size_t(k) * n + np + g] += 1.0;
        // c rows: rho_p - rho_s + sum_{t <= s} c_t (E_I1)
        for (int g = rows.gapFirst[i]; rows.gapFirst[i] >= 0 && g < rows.gapFirst[i] + rows.gapCount[i]; ++g) {
            const int out = np + g;
            fillRho(out, rowOf(i), 1.0);
            fillRho(out, memberOf(g), -1.0);
            for (int t = rows.gapFirst[i]; t <= g; ++t) M[size_t(out) * n + np + t] += 1.0;
        }
    }
    LemkeResult r = solveLemke(n, M, q, z, 50 * n + 100);
    impulses.assign(rows.size(), Real(0));
    slacks.assign(nc, Real(0));
    for (int k = 0; k < np; ++k) impulses[contactRows[k]] = Real(z[k]);
    for (int g = 0; g < nc; ++g) slacks[g] = Real(z[np + g]);
    velocity = ut;
    for (int k = 0; k < np; ++k) {
        const int i = contactRows[k];
        const Real p = impulses[i];
        if (rows.bodyA[i] >= 0) {
            const int b = rows.bodyA[i];
            velocity[b] = velocity[b] + p * Spatial{bodies.invMass[b] * rows.jacobianA[i].lin, bodies.invInertia[b] * rows.jacobianA[i].ang};
        }
        if (rows.bodyB[i] >= 0) {
            const int b = rows.bodyB[i];
            velocity[b] = velocity[b] + p * Spatial{bodies.invMass[b] * rows.jacobianB[i].lin, bodies.invInertia[b] * rows.jacobianB[i].ang};
        }
    }
    return r;
}

}  // namespace cs
