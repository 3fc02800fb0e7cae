// Exact mass properties of uniform convex polytopes and spheres.
//
// The polytope is split into tetrahedra (r, a, b, c): r a reference point (the vertex mean, which
// keeps the numbers small), and a fan (v0, v_i, v_i+1) over each counter-clockwise face loop, so
// each tetrahedron has positive signed volume V = det[a - r, b - r, c - r] / 6. With the corners
// x_k relative to r and s = sum_k x_k (x_0 = 0 for r itself), the second moment of a uniform
// tetrahedron is the closed form
//     C = integral x x^T dV = V / 20 * (sum_k x_k x_k^T + s s^T),
// its centroid (r + a + b + c) / 4. Summing over tetrahedra (the divergence theorem in discrete
// form) gives the exact volume, centroid and covariance; the shift to the centroid is
//     C_com = C_r - m (c - r)(c - r)^T,
// and the inertia tensor is I = trace(C) 1 - C.
#include <cmath>

#include "engine/geometry/polytope.h"

namespace cs {

namespace {

void addOuter(Real w, Vec3 a, Vec3 b, Real c[3][3]) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) c[i][j] += w * a[i] * b[j];
}

Mat3 inertiaFromCovariance(const Real c[3][3]) {
    Real tr = c[0][0] + c[1][1] + c[2][2];
    Mat3 inertia;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) inertia.m[i][j] = (i == j ? tr : Real(0)) - c[i][j];
    return inertia;
}

}  // namespace

MassProperties polytopeMassProperties(const ConvexPolytope& p, Real density) {
    MassProperties mp;
    if (p.vertices.empty() || p.faces.empty()) return mp;
    Vec3 r{0, 0, 0};
    for (Vec3 v : p.vertices) r += v;
    r = r / Real(p.vertices.size());

    Real volume = 0;
    Vec3 moment{0, 0, 0};  // integral (x - r) dV
    Real cov[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (const PolytopeFace& f : p.faces) {
        const int* loop = &p.faceVertices[f.firstVertex];
        Vec3 a = p.vertices[loop[0]] - r;
        for (int i = 1; i + 1 < f.vertexCount; ++i) {
            Vec3 b = p.vertices[loop[i]] - r;
            Vec3 c = p.vertices[loop[i + 1]] - r;
            Real v = dot(a, cross(b, c)) / Real(6);
            Vec3 s = a + b + c;
            volume += v;
            moment += (v / Real(4)) * s;
            Real w = v / Real(20);
            addOuter(w, a, a, cov);
            addOuter(w, b, b, cov);
            addOuter(w, c, c, cov);
            addOuter(w, s, s, cov);
        }
    }
    if (!(volume > Real(0))) return mp;
    Vec3 com = moment / volume;  // relative to r
    // Shift the covariance from r to the centroid: C_com = C_r - V com com^T.
    addOuter(-volume, com, com, cov);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) cov[i][j] *= density;
    mp.mass = density * volume;
    mp.centerOfMass = r + com;
    mp.inertia = inertiaFromCovariance(cov);
    return mp;
}

// Solid sphere: m = rho 4/3 pi r^3, I = 2/5 m r^2 about every axis through the centre.
MassProperties sphereMassProperties(Real radius, Real density) {
    MassProperties mp;
    const Real pi = Real(3.14159265358979323846);
    mp.mass = density * Real(4) / Real(3) * pi * radius * radius * radius;
    Real i = Real(2) / Real(5) * mp.mass * radius * radius;
    mp.inertia = mat3Diag({i, i, i});
    return mp;
}

}  // namespace cs
