// FEM rows in the solver's form (constraint_rows.h), one element or one attachment at a time,
// CS_HD so that the CPU step and a later device pipeline share them.
//
// The solver's body index space: [0, nbody) rigid bodies, then [nbody, nbody + nnode) FEM nodes
// as point masses (inverse mass 1/m, 0 when pinned; inverse inertia zero; velocity {v, 0}), so a
// node's Jacobian block is {dC/dx, 0} ([NSN] section 9.3: G = 1, M = m 1).
//
// Element rows ([NSN] eqs. 75-85, fem_material_hd.h) are linearized once per step at the
// step-start positions, like the contacts and joints: C(x0 + h u) = C0 + h J u with J = dC/dx at
// x0. In the compliance form (eq. 47) a row with compliance alpha is
//     bias = C0 / h,   softness = alpha / h^2,
// and with Rayleigh damping beta (stiffness-proportional, c = beta k, k = 1 / alpha) it is the
// implicit spring-damper of joint_rows.cpp, f = -k (C0 + h J u) - c J u:
//     bias = k C0 / (k h + c) = C0 / (h + beta),   softness = 1 / (h (k h + c)) = alpha / (h (h + beta)),
// which is the compliance form again at beta = 0.
//
// Units. Element rows measure strain (dimensionless); every other row is in m/s (constraint_rows.h)
// and the Newton merit adds them up. So each element row is scaled by the element's length
// L = V^(1/3): C' = L C, J' = L J, alpha' = L^2 alpha, which leaves the energy C^2 / (2 alpha) and
// the force J^T lambda unchanged (lambda' = lambda / L) and puts the row in m/s like the rest.
//
// Geometric stiffness ([NSN] section 8.3, eq. 70: K = d(J^T lambda)/du). It arises when J is
// re-evaluated at the Newton iterate. Here J is fixed over the step (linearized at x0, as every
// row of this solver), so the momentum residual g = M (u - u~) - J^T lambda is linear in u and
// K = 0 exactly: the diagonal approximation of eqs. 71-74 is zero and H = M. The geometric
// terms that matter within a step are those of the element's own measure: the stretch rows'
// gradients (both materials) turn with the principal axes, and that curvature enters as three
// shear rows (fem_material_hd.h); each step re-linearizes at the new positions. Every row's
// gradient is orthogonal to rigid rotations at x0, so its impulses carry no net torque about
// x0, and with x1 = x0 + h v1 a free body's angular momentum is kept to round-off:
// sum m x1 x v1 = sum m x0 x v1 = sum m x0 x v0 + h sum x0 x f, and the last sum is zero.
#pragma once

#include "engine/fem/fem_material_hd.h"

namespace cs {

struct FemTetStepRows {
    int count;                               // rows of the material (femRowCount)
    Mat3 rotation;                           // the polar rotation U V^T at the step's start (warm start)
    Real bias[kFemMaxRows];                  // m/s
    Real softness[kFemMaxRows];              // 1/kg
    Vec3 jacobian[kFemMaxRows][4];           // per node, linear part of the node's block
};

// The element's length scale L of the header.
CS_HD Real femRowScale(const TetRest& r) { return cbrt(r.volume); }

// Rows of one tet for a step of length h at the start positions x0..x3; activation in Pa
// (fem_material_hd.h), damping = Rayleigh beta (s); svd (optional): svd3 of F at x0..x3.
CS_HD void femTetStepRows(const FemMaterial& m, const TetRest& r, Vec3 x0, Vec3 x1, Vec3 x2, Vec3 x3,
                          Real activation, Real damping, Real h, FemTetStepRows& out, const TetSvd* svd = nullptr) {
    FemRow rows[kFemMaxRows];
    out.count = femElementRows(m, r, x0, x1, x2, x3, rows, activation, &out.rotation, svd);
    const Real L = femRowScale(r);
    for (int k = 0; k < out.count; ++k) {
        out.bias[k] = L * rows[k].value / (h + damping);
        out.softness[k] = L * L * rows[k].compliance / (h * (h + damping));
        for (int j = 0; j < 4; ++j) out.jacobian[k][j] = L * rows[k].grad[j];
    }
}

// The warm start of an element's rows. The rows live in the element's principal frame (U, V of
// F's SVD and the stretch Hessian's eigenvectors q_k, fem_material_hd.h); near rest, where the
// principal stretches are nearly equal, that frame is arbitrary and turns from one step to the
// next, so last step's impulse on row k belongs to another direction of strain (docs/
// fem_convergence.md section 4: a resting ball's steps started 300-500x above where the last one
// ended). What does not depend on that frame is the element's impulse on its nodes,
// f_j = sum_k lambda_k J_kj (nodes 1..3; node 0's is minus their sum, the rows' gradients being
// orthogonal to translations). It is kept in the element's polar frame, g_j = R^T f_j with
// R = U V^T (unique for an invertible F), so that it turns with the element between steps as the
// stress does; the next step gives its rows the impulses whose node impulses are nearest to
// R' g_j, R' its own polar rotation (least squares over the four nodes, (J J^T) lambda = J f,
// 6 x 6). For an element that kept its shape this reproduces the turned impulses exactly.
constexpr int kFemWarmPerTet = 9;

// g_1..g_3 (kFemWarmPerTet numbers) of `count` consecutive rows of one element after the solve:
// jacobianB, C, D and lambda point at its first row (nodes 1, 2, 3 are the rows' bodies B, C, D);
// rotation: the rows' FemTetStepRows::rotation.
CS_HD void femTetWarmStore(int count, const Spatial* jacobianB, const Spatial* jacobianC, const Spatial* jacobianD,
                           const Real* lambda, const Mat3& rotation, Real* out) {
    Vec3 f[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int k = 0; k < count; ++k) {
        f[0] += lambda[k] * jacobianB[k].lin;
        f[1] += lambda[k] * jacobianC[k].lin;
        f[2] += lambda[k] * jacobianD[k].lin;
    }
    const Mat3 rt = transpose(rotation);
    for (int j = 0; j < 3; ++j) {
        const Vec3 g = rt * f[j];
        out[3 * j] = g.x;
        out[3 * j + 1] = g.y;
        out[3 * j + 2] = g.z;
    }
}

// The new rows' warm impulses (kFemMaxRows) from last step's g_1..g_3. A row whose pivot in the
// Cholesky factor of J J^T falls below 1e-12 of the largest diagonal (dependent rows of a
// degenerate element) gets no impulse.
CS_HD void femTetWarmImpulses(const FemTetStepRows& r, const Real* stored, Real* lambda) {
    Vec3 f[4];
    for (int j = 0; j < 3; ++j) f[j + 1] = r.rotation * Vec3{stored[3 * j], stored[3 * j + 1], stored[3 * j + 2]};
    f[0] = -(f[1] + f[2] + f[3]);
    const int n = r.count;
    Real a[kFemMaxRows][kFemMaxRows], b[kFemMaxRows];
    Real largest = 0;
    for (int k = 0; k < n; ++k) {
        b[k] = 0;
        for (int j = 0; j < 4; ++j) b[k] += dot(r.jacobian[k][j], f[j]);
        for (int l = 0; l <= k; ++l) {
            Real g = 0;
            for (int j = 0; j < 4; ++j) g += dot(r.jacobian[k][j], r.jacobian[l][j]);
            a[k][l] = g;
        }
        largest = a[k][k] > largest ? a[k][k] : largest;
    }
    bool kept[kFemMaxRows];
    for (int k = 0; k < n; ++k) {   // A = L L^T in the lower triangle; a dropped row's column is zero
        Real d = a[k][k];
        for (int m = 0; m < k; ++m) d -= a[k][m] * a[k][m];
        kept[k] = d > Real(1e-12) * largest;
        a[k][k] = kept[k] ? sqrt(d) : Real(0);
        for (int l = k + 1; l < n; ++l) {
            Real e = a[l][k];
            for (int m = 0; m < k; ++m) e -= a[l][m] * a[k][m];
            a[l][k] = kept[k] ? e / a[k][k] : Real(0);
        }
    }
    for (int k = 0; k < n; ++k) {   // L y = b
        Real y = b[k];
        for (int m = 0; m < k; ++m) y -= a[k][m] * lambda[m];
        lambda[k] = kept[k] ? y / a[k][k] : Real(0);
    }
    for (int k = n - 1; k >= 0; --k) {   // L^T x = y
        Real x = lambda[k];
        for (int m = k + 1; m < n; ++m) x -= a[m][k] * lambda[m];
        lambda[k] = kept[k] ? x / a[k][k] : Real(0);
    }
}

// Three rows holding a node at a point of a rigid body ([NSN] section 3.2, compliance 0): per
// world axis e, C = e . (x_n - p), p = x_b + r the body point, J_node = {e, 0},
// J_body = {-e, -(r x e)}; bias C0 / h.
struct FemAttachmentRows {
    Real bias[3];
    Spatial jacobianNode[3], jacobianBody[3];
};

CS_HD void femAttachmentRows(Vec3 node, Vec3 bodyPos, Quat bodyRot, Vec3 localPoint, Real h, FemAttachmentRows& out) {
    const Vec3 r = rotate(bodyRot, localPoint);
    const Vec3 d = node - (bodyPos + r);
    for (int k = 0; k < 3; ++k) {
        Vec3 e{0, 0, 0};
        e[k] = 1;
        out.bias[k] = d[k] / h;
        out.jacobianNode[k] = Spatial{e, {0, 0, 0}};
        out.jacobianBody[k] = Spatial{-e, -cross(r, e)};
    }
}

// Per-tet fields for drawing and the tests, from F and the material:
//   volumetric strain J - 1, von Mises stress (Pa) from the principal Cauchy stresses, and the
//   largest principal stretch. Principal stresses: corotated linear, sigma_i = 2 mu e_i +
//   lambda sum_j e_j with e_i = s_i - 1 (eps = V diag(s - 1) V^T); stable neo-Hookean, the
//   Cauchy stress sigma_i = s_i (dPsi/ds_i) / J. An isotropic activation changes neither J - 1's
//   meaning nor the von Mises stress (it is deviatoric-free), so it is left out.
struct FemStrainFields {
    Real volumetricStrain;   // J - 1
    Real vonMises;           // Pa
    Real maxStretch;         // largest principal stretch
};

CS_HD FemStrainFields femStrainFields(const FemMaterial& m, const Mat3& F) {
    Mat3 U, V;
    Vec3 s;
    svd3(F, U, s, V);
    const Real J = s.x * s.y * s.z;
    Vec3 sigma;
    if (m.type == FemMaterialType::CorotatedLinear) {
        const Real tr = (s.x - 1) + (s.y - 1) + (s.z - 1);
        for (int i = 0; i < 3; ++i) sigma[i] = 2 * m.mu * (s[i] - 1) + m.lambda * tr;
    } else {
        Real C1, D1, alpha;
        neoHookeanConstants(m, C1, D1, alpha);
        for (int i = 0; i < 3; ++i) {
            const Real dPsi = 2 * C1 * s[i] + 2 * D1 * (J - alpha) * s[(i + 1) % 3] * s[(i + 2) % 3];
            sigma[i] = J != Real(0) ? s[i] * dPsi / J : Real(0);
        }
    }
    const Real a = sigma.x - sigma.y, b = sigma.y - sigma.z, c = sigma.z - sigma.x;
    FemStrainFields f;
    f.volumetricStrain = J - 1;
    f.vonMises = sqrt(Real(0.5) * (a * a + b * b + c * c));
    f.maxStretch = s.x;   // svd3 orders s0 >= s1 >= s2
    return f;
}

}  // namespace cs
