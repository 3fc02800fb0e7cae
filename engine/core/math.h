// Small vector/quaternion math shared by the CPU and CUDA backends.
//
// Every function here is CS_HD: callable from host code and from CUDA kernels, so the
// per-element math of the engine is written once for both backends. Plain structs,
// no constructors with side effects, no std containers.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define CS_HD __host__ __device__ inline
#else
#define CS_HD inline
#endif

namespace cs {

// Scalar precision is chosen at configure time (CS_REAL_FLOAT selects float); every
// reported figure names it through kPrecisionName.
#if defined(CS_REAL_FLOAT)
using Real = float;
constexpr const char* kPrecisionName = "float";
#else
using Real = double;
constexpr const char* kPrecisionName = "double";
#endif

struct Vec3 {
    Real x, y, z;
    CS_HD Real& operator[](int i) { return (&x)[i]; }
    CS_HD Real operator[](int i) const { return (&x)[i]; }
};

CS_HD Vec3 vec3(Real x, Real y, Real z) { return Vec3{x, y, z}; }
CS_HD Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
CS_HD Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
CS_HD Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
CS_HD Vec3 operator*(Real s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
CS_HD Vec3 operator*(Vec3 a, Real s) { return {s * a.x, s * a.y, s * a.z}; }
CS_HD Vec3 operator/(Vec3 a, Real s) { return {a.x / s, a.y / s, a.z / s}; }
CS_HD Vec3& operator+=(Vec3& a, Vec3 b) { a = a + b; return a; }
CS_HD Vec3& operator-=(Vec3& a, Vec3 b) { a = a - b; return a; }
CS_HD Vec3& operator*=(Vec3& a, Real s) { a = a * s; return a; }
CS_HD Real dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
CS_HD Vec3 cross(Vec3 a, Vec3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
CS_HD Real lengthSq(Vec3 a) { return dot(a, a); }
CS_HD Real length(Vec3 a) { return std::sqrt(dot(a, a)); }
CS_HD Vec3 normalize(Vec3 a) {
    Real l = length(a);
    return l > Real(0) ? a / l : Vec3{0, 0, 0};
}
CS_HD Vec3 cwiseMul(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
CS_HD Vec3 vmin(Vec3 a, Vec3 b) { return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z}; }
CS_HD Vec3 vmax(Vec3 a, Vec3 b) { return {a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z}; }

// Two unit tangents completing the unit normal n to a right-handed frame (t1, t2, n).
CS_HD void tangentBasis(Vec3 n, Vec3& t1, Vec3& t2) {
    // Branch-free frame (Duff et al. 2017, "Building an orthonormal basis, revisited").
    Real s = n.z >= Real(0) ? Real(1) : Real(-1);
    Real a = Real(-1) / (s + n.z);
    Real b = n.x * n.y * a;
    t1 = Vec3{Real(1) + s * n.x * n.x * a, s * b, -s * n.x};
    t2 = Vec3{b, s + n.y * n.y * a, -n.y};
}

// Row-major 3x3 matrix.
struct Mat3 {
    Real m[3][3];
};

CS_HD Mat3 mat3Zero() { return Mat3{{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}; }
CS_HD Mat3 mat3Identity() { return Mat3{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}; }
CS_HD Mat3 mat3Diag(Vec3 d) { return Mat3{{{d.x, 0, 0}, {0, d.y, 0}, {0, 0, d.z}}}; }
CS_HD Vec3 operator*(const Mat3& a, Vec3 v) {
    return {a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
            a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
            a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z};
}
CS_HD Mat3 operator*(const Mat3& a, const Mat3& b) {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return r;
}
CS_HD Mat3 operator+(const Mat3& a, const Mat3& b) {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][j] + b.m[i][j];
    return r;
}
CS_HD Mat3 operator*(Real s, const Mat3& a) {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = s * a.m[i][j];
    return r;
}
CS_HD Mat3 transpose(const Mat3& a) {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[j][i];
    return r;
}
// Skew-symmetric cross-product matrix: skew(a) * b == cross(a, b).
CS_HD Mat3 skew(Vec3 a) { return Mat3{{{0, -a.z, a.y}, {a.z, 0, -a.x}, {-a.y, a.x, 0}}}; }

// Unit quaternion (w, x, y, z) for orientations.
struct Quat {
    Real w, x, y, z;
};

CS_HD Quat quatIdentity() { return Quat{1, 0, 0, 0}; }
CS_HD Quat operator*(Quat a, Quat b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
CS_HD Quat conjugate(Quat q) { return {q.w, -q.x, -q.y, -q.z}; }
CS_HD Quat normalize(Quat q) {
    Real l = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    return l > Real(0) ? Quat{q.w / l, q.x / l, q.y / l, q.z / l} : quatIdentity();
}
CS_HD Quat quatFromAxisAngle(Vec3 axis, Real angle) {
    Vec3 a = normalize(axis);
    Real s = std::sin(angle * Real(0.5));
    return {std::cos(angle * Real(0.5)), a.x * s, a.y * s, a.z * s};
}
CS_HD Vec3 rotate(Quat q, Vec3 v) {
    // v' = v + 2 w (u x v) + 2 u x (u x v), u the vector part.
    Vec3 u{q.x, q.y, q.z};
    Vec3 t = Real(2) * cross(u, v);
    return v + q.w * t + cross(u, t);
}
CS_HD Vec3 rotateInv(Quat q, Vec3 v) { return rotate(conjugate(q), v); }
CS_HD Mat3 toMat3(Quat q) {
    Real xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    Real xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    Real wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    return Mat3{{{1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)},
                 {2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)},
                 {2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)}}};
}

// A rigid transform x_world = rot * x_local + pos.
struct Transform {
    Vec3 pos;
    Quat rot;
};
CS_HD Vec3 transformPoint(const Transform& t, Vec3 p) { return rotate(t.rot, p) + t.pos; }
CS_HD Vec3 invTransformPoint(const Transform& t, Vec3 p) { return rotateInv(t.rot, p - t.pos); }

// Six-component spatial vector (linear, angular) used for body velocities and
// the per-body blocks of the constraint Jacobian.
struct Spatial {
    Vec3 lin, ang;
};
CS_HD Spatial operator+(Spatial a, Spatial b) { return {a.lin + b.lin, a.ang + b.ang}; }
CS_HD Spatial operator-(Spatial a, Spatial b) { return {a.lin - b.lin, a.ang - b.ang}; }
CS_HD Spatial operator*(Real s, Spatial a) { return {s * a.lin, s * a.ang}; }
CS_HD Real dot(Spatial a, Spatial b) { return dot(a.lin, b.lin) + dot(a.ang, b.ang); }

}  // namespace cs
