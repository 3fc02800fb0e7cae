// Scalar fields of a tet's deformation, for the strain colour map (render/fem_surface.*) and
// the tests. CS_HD: the same functions serve the CPU, a GPU colour pass and the checks.
//
//   F = U diag(s) V^T (svd3, s0 >= s1 >= s2, s2 < 0 for an inverted tet), J = det F = s0 s1 s2.
//   Volumetric strain: J - 1 (relative change of volume; 0 at rest, < 0 squeezed).
//   Max principal stretch: s0 (1 at rest; 2 for a bar stretched to twice its length).
//   Von Mises stress: sqrt(((sig0 - sig1)^2 + (sig1 - sig2)^2 + (sig2 - sig0)^2) / 2) of the
//   principal Cauchy stresses. Both materials are isotropic, so the first Piola-Kirchhoff stress
//   is P = U diag(p) V^T with p_i = dPsi/ds_i, and the Cauchy stress
//   sigma = P F^T / J = U diag(p_i s_i / J) U^T: its principal values are p_i s_i / J.
//     Corotated linear (fem_material_hd.h, [NSN] eq. 85): eps = sym(R^T F) - I = V diag(s - 1) V^T,
//       Psi = mu eps:eps + lambda/2 tr(eps)^2, so p_i = 2 mu (s_i - 1) + lambda sum_k (s_k - 1).
//     Stable neo-Hookean ([NSN] appendix B): Psi = C1 (|s|^2 - 3) + D1 (J - alpha)^2,
//       so p_i = 2 C1 s_i + 2 D1 (J - alpha) s_j s_k.
//   An inverted or flattened tet (J below 1e-6) divides by 1e-6: its colour saturates.
#pragma once

#include "engine/fem/fem_material_hd.h"

namespace cs {

enum class FemField : int { VolumetricStrain = 0, VonMises = 1, MaxStretch = 2 };
constexpr int kFemFieldCount = 3;

CS_HD const char* femFieldName(FemField f) {
    return f == FemField::VolumetricStrain ? "volumetric strain J - 1"
           : f == FemField::VonMises       ? "von Mises stress (Pa)"
                                           : "max principal stretch";
}

// The field's value at rest (F = I): the middle of a fixed colour range.
CS_HD Real femFieldRest(FemField f) { return f == FemField::MaxStretch ? Real(1) : Real(0); }

CS_HD Real volumetricStrain(const Mat3& F) { return determinant(F) - 1; }

CS_HD Real maxPrincipalStretch(const Mat3& F) {
    Mat3 U, V;
    Vec3 s;
    svd3(F, U, s, V);
    return s.x;
}

// Principal first Piola-Kirchhoff stresses p_i = dPsi/ds_i (header), Pa.
CS_HD Vec3 principalPiolaStress(const FemMaterial& m, Vec3 s) {
    const Real J = s.x * s.y * s.z;
    if (m.type == FemMaterialType::CorotatedLinear) {
        const Real tr = s.x + s.y + s.z - 3;
        return Vec3{2 * m.mu * (s.x - 1) + m.lambda * tr, 2 * m.mu * (s.y - 1) + m.lambda * tr,
                    2 * m.mu * (s.z - 1) + m.lambda * tr};
    }
    Real C1, D1, alpha;
    neoHookeanConstants(m, C1, D1, alpha);
    const Real k = 2 * D1 * (J - alpha);
    return Vec3{2 * C1 * s.x + k * s.y * s.z, 2 * C1 * s.y + k * s.z * s.x, 2 * C1 * s.z + k * s.x * s.y};
}

// Principal Cauchy stresses p_i s_i / J, Pa.
CS_HD Vec3 principalCauchyStress(const FemMaterial& m, const Mat3& F) {
    Mat3 U, V;
    Vec3 s;
    svd3(F, U, s, V);
    const Vec3 p = principalPiolaStress(m, s);
    Real J = s.x * s.y * s.z;
    if (J < Real(1e-6)) J = Real(1e-6);
    return Vec3{p.x * s.x / J, p.y * s.y / J, p.z * s.z / J};
}

CS_HD Real vonMisesStress(const FemMaterial& m, const Mat3& F) {
    const Vec3 c = principalCauchyStress(m, F);
    const Real a = c.x - c.y, b = c.y - c.z, d = c.z - c.x;
    return sqrt((a * a + b * b + d * d) / 2);
}

CS_HD Real femFieldValue(FemField f, const FemMaterial& m, const Mat3& F) {
    switch (f) {
        case FemField::VolumetricStrain: return volumetricStrain(F);
        case FemField::VonMises: return vonMisesStress(m, F);
        default: return maxPrincipalStretch(F);
    }
}

}  // namespace cs
