// Kinematics of a constant-strain tetrahedron, CS_HD so that the CPU and the GPU step share it.
//
//   nodes x0..x3; Ds = [x1 - x0, x2 - x0, x3 - x0] (columns), Dm the same at rest,
//   Bm = Dm^-1, rest volume V = det(Dm) / 6 (positive: a tet is stored positively oriented),
//   deformation gradient F = Ds Bm, so F = sum_j (x_j - x0) b_j^T with b_j^T row j of Bm and
//   dF/dx_j[a] = e_a b_j^T (j = 1..3), dF/dx_0 = -sum_j dF/dx_j.
// A scalar s(F) then has node gradients g_j = (dS/dF) b_j, g_0 = -(g_1 + g_2 + g_3), where dS/dF
// is the 3x3 derivative: this is how every element row's Jacobian is built (fem_material_hd.h).
//
// The principal stretches (singular values of F) come from a Jacobi eigen-decomposition of
// F^T F; an inverted element (det F < 0) gets its smallest stretch negated with the matching
// column of U, the invertible convention of Irving, Teran, Fedkiw 2004, so a stretch-based
// energy (stable neo-Hookean, [NSN] appendix B) sees the inversion and pushes back.
#pragma once

#include "engine/core/math.h"

namespace cs {

CS_HD Mat3 matFromColumns(Vec3 a, Vec3 b, Vec3 c) {
    return Mat3{{{a.x, b.x, c.x}, {a.y, b.y, c.y}, {a.z, b.z, c.z}}};
}
CS_HD Vec3 column(const Mat3& m, int j) { return {m.m[0][j], m.m[1][j], m.m[2][j]}; }
CS_HD Vec3 row(const Mat3& m, int i) { return {m.m[i][0], m.m[i][1], m.m[i][2]}; }
CS_HD Real determinant(const Mat3& m) { return dot(row(m, 0), cross(row(m, 1), row(m, 2))); }
CS_HD Real trace(const Mat3& m) { return m.m[0][0] + m.m[1][1] + m.m[2][2]; }

// Inverse by the adjugate; false when |det| <= tiny (a degenerate matrix).
CS_HD bool invert(const Mat3& m, Mat3& out, Real tiny = Real(1e-30)) {
    const Vec3 r0 = row(m, 0), r1 = row(m, 1), r2 = row(m, 2);
    const Vec3 c0 = cross(r1, r2), c1 = cross(r2, r0), c2 = cross(r0, r1);
    const Real det = dot(r0, c0);
    if (!(det > tiny || det < -tiny)) return false;
    out = matFromColumns(c0 / det, c1 / det, c2 / det);
    return true;
}

struct TetRest {
    Mat3 Bm;          // Dm^-1
    Real volume;      // m^3, > 0
};

// The rest data of a tet; false for an inverted or degenerate one (volume <= minVolume).
CS_HD bool makeTetRest(Vec3 x0, Vec3 x1, Vec3 x2, Vec3 x3, Real minVolume, TetRest& out) {
    const Mat3 Dm = matFromColumns(x1 - x0, x2 - x0, x3 - x0);
    const Real v = determinant(Dm) / Real(6);
    if (!(v > minVolume)) return false;
    if (!invert(Dm, out.Bm)) return false;
    out.volume = v;
    return true;
}

CS_HD Mat3 deformationGradient(const TetRest& r, Vec3 x0, Vec3 x1, Vec3 x2, Vec3 x3) {
    return matFromColumns(x1 - x0, x2 - x0, x3 - x0) * r.Bm;
}

// Node gradients of a scalar s(F) with dS = dS/dF (3x3): g[j] = dS b_j, g[0] = -(g1 + g2 + g3).
CS_HD void nodeGradients(const TetRest& r, const Mat3& dS, Vec3 g[4]) {
    g[0] = Vec3{0, 0, 0};
    for (int j = 1; j <= 3; ++j) {
        g[j] = dS * row(r.Bm, j - 1);
        g[0] -= g[j];
    }
}

// Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations: A = V diag(d) V^T.
CS_HD void symmetricEigen(Mat3 A, Vec3& d, Mat3& V) {
    V = mat3Identity();
    for (int sweep = 0; sweep < 12; ++sweep) {
        const Real off = A.m[0][1] * A.m[0][1] + A.m[0][2] * A.m[0][2] + A.m[1][2] * A.m[1][2];
        const Real scale = A.m[0][0] * A.m[0][0] + A.m[1][1] * A.m[1][1] + A.m[2][2] * A.m[2][2];
        if (off <= Real(1e-30) * scale || off == Real(0)) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                const Real apq = A.m[p][q];
                if (apq == Real(0)) continue;
                // Rotation angle that zeroes A_pq: tan(2 theta) = 2 A_pq / (A_qq - A_pp).
                const Real tau = (A.m[q][q] - A.m[p][p]) / (2 * apq);
                const Real t = (tau >= 0 ? Real(1) : Real(-1)) / (fabs(tau) + sqrt(Real(1) + tau * tau));
                const Real c = Real(1) / sqrt(Real(1) + t * t), s = t * c;
                for (int k = 0; k < 3; ++k) {   // A <- A G (columns p, q)
                    const Real akp = A.m[k][p], akq = A.m[k][q];
                    A.m[k][p] = c * akp - s * akq;
                    A.m[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; ++k) {   // A <- G^T A (rows p, q)
                    const Real apk = A.m[p][k], aqk = A.m[q][k];
                    A.m[p][k] = c * apk - s * aqk;
                    A.m[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; ++k) {
                    const Real vkp = V.m[k][p], vkq = V.m[k][q];
                    V.m[k][p] = c * vkp - s * vkq;
                    V.m[k][q] = s * vkp + c * vkq;
                }
            }
    }
    d = Vec3{A.m[0][0], A.m[1][1], A.m[2][2]};
}

// F = U diag(s) V^T with U, V rotations (det +1); s may have one negative entry (the smallest)
// when det F < 0. Near-zero stretches get a U column completed by a cross product.
CS_HD void svd3(const Mat3& F, Mat3& U, Vec3& s, Mat3& V) {
    Vec3 d;
    symmetricEigen(transpose(F) * F, d, V);
    // Order the stretches s0 >= s1 >= s2 (swap V's columns alike).
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2 - i; ++j)
            if (d[j] < d[j + 1]) {
                const Real t = d[j]; d[j] = d[j + 1]; d[j + 1] = t;
                for (int k = 0; k < 3; ++k) {
                    const Real v = V.m[k][j]; V.m[k][j] = V.m[k][j + 1]; V.m[k][j + 1] = v;
                }
            }
    if (determinant(V) < 0)
        for (int k = 0; k < 3; ++k) V.m[k][2] = -V.m[k][2];
    for (int i = 0; i < 3; ++i) s[i] = sqrt(d[i] > 0 ? d[i] : Real(0));
    Vec3 u0 = F * column(V, 0), u1 = F * column(V, 1);
    u0 = s[0] > Real(1e-12) ? u0 / s[0] : Vec3{1, 0, 0};
    u1 = u1 - dot(u1, u0) * u0;
    if (lengthSq(u1) > Real(1e-24)) u1 = normalize(u1);
    else {   // complete an orthonormal pair
        Vec3 t = fabs(u0.x) < Real(0.9) ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
        u1 = normalize(cross(u0, t));
    }
    const Vec3 u2 = cross(u0, u1);   // det U = +1
    U = matFromColumns(u0, u1, u2);
    s[2] = dot(u2, F * column(V, 2));   // negative when F is inverted
}

// svd3's result, kept per tet (FemTetCache, fem_tet_cache.h).
struct TetSvd {
    Mat3 U, V;
    Vec3 s;
};

// The rotation of the polar decomposition F = R S (R = U V^T of svd3, a proper rotation).
CS_HD Mat3 polarRotation(const Mat3& F) {
    Mat3 U, V;
    Vec3 s;
    svd3(F, U, s, V);
    return U * transpose(V);
}

}  // namespace cs
