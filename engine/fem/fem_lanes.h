// Per-tet work of the CPU step done for several tets at once in the CPU's vector registers (one tet
// per lane): svd3 (tet_math_hd.h) and femTetWarmImpulses (fem_rows_hd.h). Every lane does the
// scalar function's operations in its order, so each result is bitwise the scalar one's (the
// build compiles with -ffp-contract=off, and +, -, *, /, sqrt round alike in scalar and vector
// code). Where the scalar code branches on a value, every lane computes both sides and keeps its
// own; svd3's Jacobi sweeps run until the last lane has converged, the others keeping their
// matrices. CPU only (GCC/Clang vector extensions); the GPU runs one thread per tet.
#pragma once

#include <cmath>

#include "engine/fem/fem_rows_hd.h"
#include "engine/fem/tet_math_hd.h"

namespace cs {

namespace svd3lanes {

typedef Real Lanes __attribute__((vector_size(32)));
constexpr int kLanes = int(sizeof(Lanes) / sizeof(Real));
using Mask = decltype(Lanes{} < Lanes{});   // a lane's comparison: all bits set or none

inline Lanes splat(Real x) {
    Lanes r;
    for (int l = 0; l < kLanes; ++l) r[l] = x;
    return r;
}
inline Lanes lanesSqrt(Lanes a) {
    for (int l = 0; l < kLanes; ++l) a[l] = std::sqrt(a[l]);
    return a;
}
inline Lanes lanesFabs(Lanes a) {
    for (int l = 0; l < kLanes; ++l) a[l] = std::fabs(a[l]);
    return a;
}
inline bool any(Mask m) {
    for (int l = 0; l < kLanes; ++l)
        if (m[l]) return true;
    return false;
}

struct V3 {
    Lanes x, y, z;
};
inline Lanes dot(const V3& a, const V3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline V3 cross(const V3& a, const V3& b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline V3 select(Mask m, const V3& a, const V3& b) { return {m ? a.x : b.x, m ? a.y : b.y, m ? a.z : b.z}; }
// normalize (math.h): a / |a|, zero for a zero vector.
inline V3 normalize(const V3& a) {
    const Lanes l = lanesSqrt(dot(a, a));
    const Mask positive = l > splat(0);
    const Lanes zero = splat(0);
    return {positive ? a.x / l : zero, positive ? a.y / l : zero, positive ? a.z / l : zero};
}
struct M3 {
    Lanes m[3][3];
};
inline V3 column(const M3& a, int j) { return {a.m[0][j], a.m[1][j], a.m[2][j]}; }
inline V3 row(const M3& a, int i) { return {a.m[i][0], a.m[i][1], a.m[i][2]}; }
inline V3 times(const M3& a, const V3& v) {
    return {a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z, a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
            a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z};
}

// symmetricEigen (tet_math_hd.h) on every lane.
inline void symmetricEigen(M3 A, V3& d, M3& V) {
    const Lanes zero = splat(0), one = splat(1);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) V.m[i][j] = i == j ? one : zero;
    Mask active = zero == zero;
    for (int sweep = 0; sweep < 12; ++sweep) {
        const Lanes off = A.m[0][1] * A.m[0][1] + A.m[0][2] * A.m[0][2] + A.m[1][2] * A.m[1][2];
        const Lanes scale = A.m[0][0] * A.m[0][0] + A.m[1][1] * A.m[1][1] + A.m[2][2] * A.m[2][2];
        active = active & ~((off <= splat(Real(1e-30)) * scale) | (off == zero));
        if (!any(active)) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                const Lanes apq = A.m[p][q];
                const Mask rotate = active & (apq != zero);
                if (!any(rotate)) continue;
                const Lanes tau = (A.m[q][q] - A.m[p][p]) / (splat(2) * apq);
                const Lanes t = (tau >= zero ? one : -one) / (lanesFabs(tau) + lanesSqrt(one + tau * tau));
                const Lanes c = one / lanesSqrt(one + t * t), s = t * c;
                for (int k = 0; k < 3; ++k) {   // A <- A G (columns p, q)
                    const Lanes akp = A.m[k][p], akq = A.m[k][q];
                    A.m[k][p] = rotate ? c * akp - s * akq : akp;
                    A.m[k][q] = rotate ? s * akp + c * akq : akq;
                }
                for (int k = 0; k < 3; ++k) {   // A <- G^T A (rows p, q)
                    const Lanes apk = A.m[p][k], aqk = A.m[q][k];
                    A.m[p][k] = rotate ? c * apk - s * aqk : apk;
                    A.m[q][k] = rotate ? s * apk + c * aqk : aqk;
                }
                for (int k = 0; k < 3; ++k) {
                    const Lanes vkp = V.m[k][p], vkq = V.m[k][q];
                    V.m[k][p] = rotate ? c * vkp - s * vkq : vkp;
                    V.m[k][q] = rotate ? s * vkp + c * vkq : vkq;
                }
            }
    }
    d = {A.m[0][0], A.m[1][1], A.m[2][2]};
}

// svd3 on every lane.
inline void svd3(const M3& F, M3& U, V3& s, M3& V) {
    const Lanes zero = splat(0), one = splat(1);
    M3 FtF;   // transpose(F) * F, math.h's order
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            FtF.m[i][j] = F.m[0][i] * F.m[0][j] + F.m[1][i] * F.m[1][j] + F.m[2][i] * F.m[2][j];
    V3 dv;
    symmetricEigen(FtF, dv, V);
    Lanes d[3] = {dv.x, dv.y, dv.z};
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2 - i; ++j) {
            const Mask swap = d[j] < d[j + 1];
            const Lanes a = d[j], b = d[j + 1];
            d[j] = swap ? b : a;
            d[j + 1] = swap ? a : b;
            for (int k = 0; k < 3; ++k) {
                const Lanes va = V.m[k][j], vb = V.m[k][j + 1];
                V.m[k][j] = swap ? vb : va;
                V.m[k][j + 1] = swap ? va : vb;
            }
        }
    const Mask flip = dot(row(V, 0), cross(row(V, 1), row(V, 2))) < zero;
    for (int k = 0; k < 3; ++k) V.m[k][2] = flip ? -V.m[k][2] : V.m[k][2];
    Lanes st[3];
    for (int i = 0; i < 3; ++i) st[i] = lanesSqrt(d[i] > zero ? d[i] : zero);
    V3 u0 = times(F, column(V, 0)), u1 = times(F, column(V, 1));
    u0 = select(st[0] > splat(Real(1e-12)), V3{u0.x / st[0], u0.y / st[0], u0.z / st[0]}, V3{one, zero, zero});
    const Lanes u1u0 = dot(u1, u0);
    u1 = V3{u1.x - u1u0 * u0.x, u1.y - u1u0 * u0.y, u1.z - u1u0 * u0.z};
    const Mask ordinary = dot(u1, u1) > splat(Real(1e-24));
    const V3 t = select(lanesFabs(u0.x) < splat(Real(0.9)), V3{one, zero, zero}, V3{zero, one, zero});
    u1 = select(ordinary, normalize(u1), normalize(cross(u0, t)));
    const V3 u2 = cross(u0, u1);
    for (int k = 0; k < 3; ++k) {
        U.m[k][0] = k == 0 ? u0.x : k == 1 ? u0.y : u0.z;
        U.m[k][1] = k == 0 ? u1.x : k == 1 ? u1.y : u1.z;
        U.m[k][2] = k == 0 ? u2.x : k == 1 ? u2.y : u2.z;
    }
    s = {st[0], st[1], dot(u2, times(F, column(V, 2)))};
}

}  // namespace svd3lanes

// out[i] = svd3(F[i]) for i < n, bitwise.
inline void svd3Many(const Mat3* F, int n, TetSvd* out) {
    using namespace svd3lanes;
    for (int base = 0; base < n; base += kLanes) {
        M3 f;
        for (int l = 0; l < kLanes; ++l) {
            const Mat3& a = F[base + l < n ? base + l : n - 1];   // the last matrix again past the end
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) f.m[i][j][l] = a.m[i][j];
        }
        M3 U, V;
        V3 s;
        svd3lanes::svd3(f, U, s, V);
        for (int l = 0; l < kLanes && base + l < n; ++l) {
            TetSvd& o = out[base + l];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) {
                    o.U.m[i][j] = U.m[i][j][l];
                    o.V.m[i][j] = V.m[i][j][l];
                }
            o.s = Vec3{s.x[l], s.y[l], s.z[l]};
        }
    }
}

// femTetWarmImpulses(r[l], stored[l], lambda[l]) for l < m <= svd3lanes::kLanes, bitwise; every
// r[l].count must be kFemMaxRows (else the scalar function, one tet at a time).
inline void femTetWarmImpulsesLanes(const FemTetStepRows* r, const Real* const* stored, Real (*lambda)[kFemMaxRows],
                                    int m) {
    using namespace svd3lanes;
    bool full = true;
    for (int l = 0; l < m; ++l) full = full && r[l].count == kFemMaxRows;
    if (!full) {
        for (int l = 0; l < m; ++l) femTetWarmImpulses(r[l], stored[l], lambda[l]);
        return;
    }
    constexpr int n = kFemMaxRows;
    const Lanes zero = splat(0);
    V3 jac[n][4], f[4];
    M3 rotation;
    V3 s[3];
    for (int l = 0; l < kLanes; ++l) {
        const int src = l < m ? l : m - 1;   // the last tet again past the end
        const FemTetStepRows& a = r[src];
        for (int k = 0; k < n; ++k)
            for (int j = 0; j < 4; ++j) {
                jac[k][j].x[l] = a.jacobian[k][j].x;
                jac[k][j].y[l] = a.jacobian[k][j].y;
                jac[k][j].z[l] = a.jacobian[k][j].z;
            }
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) rotation.m[i][j][l] = a.rotation.m[i][j];
        for (int j = 0; j < 3; ++j) {
            s[j].x[l] = stored[src][3 * j];
            s[j].y[l] = stored[src][3 * j + 1];
            s[j].z[l] = stored[src][3 * j + 2];
        }
    }
    for (int j = 0; j < 3; ++j) f[j + 1] = times(rotation, s[j]);
    const V3 sum{f[1].x + f[2].x + f[3].x, f[1].y + f[2].y + f[3].y, f[1].z + f[2].z + f[3].z};
    f[0] = V3{-sum.x, -sum.y, -sum.z};
    Lanes a[n][n], b[n], x[n];
    Lanes largest = zero;
    for (int k = 0; k < n; ++k) {
        b[k] = zero;
        for (int j = 0; j < 4; ++j) b[k] += dot(jac[k][j], f[j]);
        for (int l = 0; l <= k; ++l) {
            Lanes g = zero;
            for (int j = 0; j < 4; ++j) g += dot(jac[k][j], jac[l][j]);
            a[k][l] = g;
        }
        largest = a[k][k] > largest ? a[k][k] : largest;
    }
    Mask kept[n];
    for (int k = 0; k < n; ++k) {
        Lanes d = a[k][k];
        for (int q = 0; q < k; ++q) d -= a[k][q] * a[k][q];
        kept[k] = d > splat(Real(1e-12)) * largest;
        a[k][k] = kept[k] ? lanesSqrt(d) : zero;
        for (int l = k + 1; l < n; ++l) {
            Lanes e = a[l][k];
            for (int q = 0; q < k; ++q) e -= a[l][q] * a[k][q];
            a[l][k] = kept[k] ? e / a[k][k] : zero;
        }
    }
    for (int k = 0; k < n; ++k) {   // L y = b
        Lanes y = b[k];
        for (int q = 0; q < k; ++q) y -= a[k][q] * x[q];
        x[k] = kept[k] ? y / a[k][k] : zero;
    }
    for (int k = n - 1; k >= 0; --k) {   // L^T x = y
        Lanes v = x[k];
        for (int q = k + 1; q < n; ++q) v -= a[q][k] * x[q];
        x[k] = kept[k] ? v / a[k][k] : zero;
    }
    for (int l = 0; l < m; ++l)
        for (int k = 0; k < n; ++k) lambda[l][k] = x[k][l];
}

}  // namespace cs
