// Tetrahedral FEM materials in the compliance form ([NSN] section 9, eqs. 75-85, appendix B).
//
// An element contributes rows of the same Newton iteration as contacts and joints: each row k
// has a value C_k(q), node gradients (its Jacobian over the four nodes) and a compliance alpha_k,
// and the solve drives C_k + alpha_k lambda_k to 0 (eq. 80 with E = diag(alpha)), lambda_k the
// row's generalized stress. Converged, lambda = -dU/ds: the exact elastic force whatever the
// compliance is, so a diagonal E (below) changes the convergence, not the answer.
//
// Both materials are isotropic energies of the principal stretches s (F = U diag(s) V^T, svd3) and
// share one set of rows ([NSN] section 9.2, eqs. 81-84, with s the principal stretches of 9.2.2):
// three stretch rows along the eigenvectors of N = d2Psi/ds2 and three shear rows of the principal
// frame (femElementRows). Each row's gradient is orthogonal to every infinitesimal rotation of the
// element, dF = W F (W skew): ds_i/dF : W F = (U^T W U)_ii s_i = 0, and likewise for the shears
// (below). So each row's node gradients carry no net torque about the element's current nodes, and
// a free body linearized once per step keeps its angular momentum to round-off
// (tests/test_fem_physics.cpp).
//
// Corotated linear ([NSN] eq. 85 with the strain of the corotated frame): eps = S - I with
//   S = R^T F = V diag(s) V^T the polar stretch, so eps:eps = sum_i (s_i - 1)^2, tr eps = sum_i (s_i - 1):
//   Psi = mu sum_i (s_i - 1)^2 + lambda/2 (sum_i (s_i - 1))^2,
//   dPsi/ds_i = 2 mu (s_i - 1) + lambda sum_j (s_j - 1),   N = 2 mu 1 + lambda 1 1^T (constant).
//   N's eigenvectors: (1,1,1)/sqrt(3) with 2 mu + 3 lambda (= 3 K, the volume mode), and the
//   deviatoric plane with 2 mu; the shear rows' curvature is 2 mu. A rigid rotation leaves s = 1:
//   rotation costs no energy. (Holding R fixed in the gradient, dC/dF = R B_k, was tried first: that
//   gradient is orthogonal to rotations only at s = 1, and a spinning, strained free block gained
//   or lost 1.7e-2 of its angular momentum in 2 s.)
//
// Stable neo-Hookean in principal stretches s ([NSN] appendix B, after Smith, de Goes, Kim 2018):
//   Psi = C1 (I_C - 3) + D1 (J - alpha)^2, I_C = |s|^2, J = s1 s2 s3.
//   Rest stress free needs dPsi/ds = 0 at s = 1: 2 C1 + 2 D1 (1 - alpha) = 0. Matching the linear
//   material's stretch Hessian at rest (diagonal 2 mu + lambda, off-diagonal lambda) against
//   appendix B's (diagonal 2 (C1 + D1), off-diagonal 2 D1 (2 - alpha)) gives
//   C1 = mu / 2, D1 = (lambda + mu) / 2, alpha = 1 + mu / (lambda + mu).
//   Rows: three along the eigenvectors q_k of the stretch Hessian N = d2Psi/ds2, so that the
//   diagonal compliance alpha_k = 1 / (V Lambda_k) is eq. 84's E = (V N)^-1 exactly (N's
//   eigenvalues Lambda_k projected to >= C1), the value C_k = alpha_k V q_k . dPsi/ds (eq. 80's
//   E c), and ds_i/dF = u_i v_i^T (F = U diag(s) V^T; Papadopoulo and Lourakis 2000, Perez et al.
//   2013); plus three shear rows of the principal frame (below, in femElementRows).
//   Appendix B's "simple diagonal approximation to E" (alpha_i = 1 / (V N_ii)) was used first:
//   it keeps 0.38 of the volume mode's stiffness at nu = 0.45 and made the step unstable
//   (neoHookeanStretchDerivatives).
// Appendix B prints dPsi/ds with (J - 1); the derivative of its eq. 107 has (J - alpha), used here.
//
// Activation (the PneuNet's chambers): a uniform internal pressure a (Pa; > 0 expands) in the
// element, whose potential is the work it does on the volume change, U_a = -a V (J - 1).
//   Corotated linear: to first order J - 1 = tr(eps) = sum_i (s_i - 1), so dU_a/ds_i = -a V, added to
//   V dPsi/ds_i; N is unchanged. The volume row's value becomes sum_i (s_i - 1) / sqrt(3) -
//   sqrt(3) a / (2 mu + 3 lambda), and a free element settles at tr(eps) = a / K, K = lambda + 2 mu / 3
//   the bulk modulus: linear elasticity's answer for a pressure a (tests/test_fem_physics.cpp).
//   Stable neo-Hookean: dU_a/ds_i = -a V s_j s_k is added to V dPsi/ds_i, and its Hessian
//   -a V s_k to N's off-diagonal entries (the projection keeps the compliances positive).
#pragma once

#include "engine/fem/tet_math_hd.h"

namespace cs {

enum class FemMaterialType : int { CorotatedLinear = 0, StableNeoHookean = 1 };

struct FemMaterial {
    FemMaterialType type = FemMaterialType::CorotatedLinear;
    Real mu = 0, lambda = 0;   // Lame parameters, Pa
};

// Lame parameters from Young's modulus Y (Pa) and Poisson's ratio nu in (-1, 0.5).
CS_HD FemMaterial femMaterial(FemMaterialType type, Real youngs, Real poisson) {
    FemMaterial m;
    m.type = type;
    m.mu = youngs / (2 * (1 + poisson));
    m.lambda = youngs * poisson / ((1 + poisson) * (1 - 2 * poisson));
    return m;
}

struct FemRow {
    Real value;        // C_k(q)
    Real compliance;   // alpha_k
    Vec3 grad[4];      // dC_k / dx_j, j = 0..3
};

constexpr int kFemMaxRows = 6;

CS_HD int femRowCount(FemMaterialType) { return 6; }

CS_HD Real frobenius(const Mat3& a, const Mat3& b) {
    Real s = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) s += a.m[i][j] * b.m[i][j];
    return s;
}

// Stable neo-Hookean constants (header): C1, D1, alpha.
CS_HD void neoHookeanConstants(const FemMaterial& m, Real& C1, Real& D1, Real& alpha) {
    C1 = m.mu / 2;
    D1 = (m.lambda + m.mu) / 2;
    alpha = 1 + m.mu / (m.lambda + m.mu);
}

// Energy density Psi (J/m^3) of the principal stretches s (svd3's, s2 < 0 for an inverted element).
CS_HD Real femStretchEnergyDensity(const FemMaterial& m, Vec3 s) {
    if (m.type == FemMaterialType::CorotatedLinear) {
        const Vec3 e = s - Vec3{1, 1, 1};
        const Real tr = e.x + e.y + e.z;
        return m.mu * lengthSq(e) + Real(0.5) * m.lambda * tr * tr;
    }
    Real C1, D1, alpha;
    neoHookeanConstants(m, C1, D1, alpha);
    const Real J = s.x * s.y * s.z;
    return C1 * (lengthSq(s) - 3) + D1 * (J - alpha) * (J - alpha);
}

// Energy density Psi(F) (J/m^3), for the tests and the energy plots.
CS_HD Real femEnergyDensity(const FemMaterial& m, const Mat3& F) {
    Mat3 U, V;
    Vec3 s;
    svd3(F, U, s, V);
    return femStretchEnergyDensity(m, s);
}

// Stable neo-Hookean's stretch derivatives (appendix B) with the activation's work -a (J - 1):
//   grad_i = 2 C1 s_i + (2 D1 (J - alpha) - a) s_j s_k,
//   N_ii = 2 (D1 s_j^2 s_k^2 + C1),   N_ij = (2 D1 (2 J - alpha) - a) s_k   (k the third index).
// The full N, not its diagonal: the off-diagonal terms carry the volumetric stiffness (at rest
// N = (2 mu) 1 + lambda 1 1^T, whose diagonal alone gives the volume mode 2 mu + lambda of its
// 2 mu + 3 lambda), and a step linearized once with so soft a volume mode is unstable for
// h omega > 4 (tests/test_fem_impact.cpp).
CS_HD void neoHookeanStretchDerivatives(const FemMaterial& m, Vec3 s, Real activation, Vec3& grad, Mat3& N) {
    Real C1, D1, alpha;
    neoHookeanConstants(m, C1, D1, alpha);
    const Real J = s.x * s.y * s.z;
    for (int i = 0; i < 3; ++i) {
        const int j = (i + 1) % 3, k = (i + 2) % 3;
        grad[i] = 2 * C1 * s[i] + (2 * D1 * (J - alpha) - activation) * s[j] * s[k];
        N.m[i][i] = 2 * (D1 * s[j] * s[j] * s[k] * s[k] + C1);
        N.m[j][k] = N.m[k][j] = (2 * D1 * (2 * J - alpha) - activation) * s[i];
    }
}

// Corotated linear's stretch derivatives (header) with the activation's work -a sum_i (s_i - 1):
//   grad_i = 2 mu (s_i - 1) + lambda sum_j (s_j - 1) - a,   N = 2 mu 1 + lambda 1 1^T.
CS_HD void corotatedStretchDerivatives(const FemMaterial& m, Vec3 s, Real activation, Vec3& grad, Mat3& N) {
    const Real tr = (s.x - 1) + (s.y - 1) + (s.z - 1);
    for (int i = 0; i < 3; ++i) {
        grad[i] = 2 * m.mu * (s[i] - 1) + m.lambda * tr - activation;
        for (int j = 0; j < 3; ++j) N.m[i][j] = m.lambda + (i == j ? 2 * m.mu : Real(0));
    }
}

// dPsi/ds and d2Psi/ds2 of either material (eqs. 82-83 per unit volume).
CS_HD void femStretchDerivatives(const FemMaterial& m, Vec3 s, Real activation, Vec3& grad, Mat3& N) {
    if (m.type == FemMaterialType::CorotatedLinear) corotatedStretchDerivatives(m, s, activation, grad, N);
    else neoHookeanStretchDerivatives(m, s, activation, grad, N);
}

// The curvature of Psi under a shear of the principal frame's pair (i, j), k the third index:
//   k_ij = (dPsi/ds_i - dPsi/ds_j) / (s_i - s_j), in closed form (no division by s_i - s_j):
//   corotated 2 mu; stable neo-Hookean 2 C1 - (2 D1 (J - alpha) - a) s_k.
CS_HD Real femShearStiffness(const FemMaterial& m, Vec3 s, Real activation, int k) {
    if (m.type == FemMaterialType::CorotatedLinear) return 2 * m.mu;
    Real C1, D1, alpha;
    neoHookeanConstants(m, C1, D1, alpha);
    return 2 * C1 - (2 * D1 * (s.x * s.y * s.z - alpha) - activation) * s[k];
}

// The element's rows at the nodes' current positions; returns their count.
// activation: the internal pressure a of the header (Pa), 0 for none. rotation (optional):
// receives U V^T, the rotation of F's polar decomposition (unique where F is invertible, whatever
// the principal frame: fem_rows_hd.h's warm start turns with it).
// svd (optional): svd3 of this F, when the caller has it (fem_tet_cache.h).
CS_HD int femElementRows(const FemMaterial& m, const TetRest& r, Vec3 x0, Vec3 x1, Vec3 x2, Vec3 x3,
                         FemRow rows[kFemMaxRows], Real activation = 0, Mat3* rotation = nullptr,
                         const TetSvd* svd = nullptr) {
    Mat3 U, V;
    Vec3 s;
    if (svd) {
        U = svd->U;
        V = svd->V;
        s = svd->s;
    } else {
        svd3(deformationGradient(r, x0, x1, x2, x3), U, s, V);
    }
    if (rotation) *rotation = U * transpose(V);
    // Floor of the rows' stiffnesses ([NSN] 9.2.2's projection to the positive cone): C1 = mu / 2;
    // the corotated material's are constant, 2 mu and 2 mu + 3 lambda, and never reach it.
    const Real stiffMin = m.mu / 2;
    // Shear rows 3..5 (pairs i < j): without them the three stretch rows' fixed gradients
    // u_i v_i^T leave every shear of the principal frame without stiffness within a step (a
    // stretch changes only to second order under it), and a free block rang on for seconds
    // (tests/test_fem_physics.cpp, patch test). They are the second-order terms [NSN] section
    // 8.3 calls geometric stiffness, made rows: with G = U^T dF V and the rotation of the polar
    // decomposition taken out, the shear of S = R^T F in the principal frame is
    //   dS_ij = (s_i G_ij + s_j G_ji) / (s_i + s_j)   (a rigid rotation gives 0),
    // and the row C = sqrt(2) dS_ij (unit-norm symmetric basis) has the isotropic energy's
    // curvature k_ij = (Psi_i - Psi_j) / (s_i - s_j) (femShearStiffness), compliance 1 / (V k_ij)
    // (k_ij clamped below at stiffMin), value 0 (the stress is diagonal in the principal frame),
    // so the fixed point is unchanged. At rest k_ij = 2 mu in both materials: with the stretch
    // rows, the six rows of linear elasticity (volume 2 mu + 3 lambda, five deviatoric 2 mu).
    for (int p = 0; p < 3; ++p) {
        const int i = p == 2 ? 1 : 0, j = p == 0 ? 1 : 2, k = 3 - i - j;
        Real kij = femShearStiffness(m, s, activation, k);
        kij = kij > stiffMin ? kij : stiffMin;
        const Real sum = s[i] + s[j] > Real(1e-6) ? s[i] + s[j] : Real(1e-6);
        const Vec3 ui = column(U, i), uj = column(U, j), vi = column(V, i), vj = column(V, j);
        // dC/dF = sqrt(2) (s_i u_i v_j^T + s_j u_j v_i^T) / (s_i + s_j)
        const Real ci = sqrt(Real(2)) * s[i] / sum, cj = sqrt(Real(2)) * s[j] / sum;
        const Mat3 dS = matFromColumns(ci * vj.x * ui + cj * vi.x * uj, ci * vj.y * ui + cj * vi.y * uj,
                                       ci * vj.z * ui + cj * vi.z * uj);
        rows[3 + p].value = 0;
        rows[3 + p].compliance = Real(1) / (r.volume * kij);
        nodeGradients(r, dS, rows[3 + p].grad);
    }
    // Stretch rows 0..2 along the eigenvectors q_k of the stretch Hessian N (appendix B):
    // E = (V N)^-1 of eq. 84 made diagonal by the rows r_k = q_k . s, compliance 1 / (V Lambda_k),
    // value q_k . dPsi/ds / Lambda_k, gradient sum_i q_ik u_i v_i^T. Lambda_k is clamped below at
    // stiffMin.
    Vec3 grad, lam;
    Mat3 N, Q;
    femStretchDerivatives(m, s, activation, grad, N);
    symmetricEigen(N, lam, Q);
    for (int k = 0; k < 3; ++k) {
        const Real Lk = lam[k] > stiffMin ? lam[k] : stiffMin;
        const Vec3 q = column(Q, k);
        rows[k].compliance = Real(1) / (r.volume * Lk);
        rows[k].value = dot(q, grad) / Lk;
        Mat3 dS = mat3Zero();
        for (int i = 0; i < 3; ++i) {
            const Vec3 u = column(U, i), v = column(V, i);
            dS = dS + q[i] * matFromColumns(v.x * u, v.y * u, v.z * u);   // q_ik u_i v_i^T
        }
        nodeGradients(r, dS, rows[k].grad);
    }
    return 6;
}

}  // namespace cs
