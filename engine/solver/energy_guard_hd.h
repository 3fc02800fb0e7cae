// The energy guard's per-body, per-tet and per-row terms, shared by World::substep (through
// energy_guard.cpp) and the device pipeline (engine/exec/pipeline_energy.h). What they add up to,
// and why, is in energy_guard.h.
#pragma once

#include "engine/core/math.h"
#include "engine/fem/fem_material_hd.h"
#include "engine/fem/tet_math_hd.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/integrate.h"

namespace cs {

constexpr Real kEnergyFactor = 4;             // F of energy_guard.h
constexpr Real kFemEnergySlack = Real(0.25);  // S of energy_guard.h
constexpr Real kEnergyFloor = Real(1e-6);     // J
constexpr Real kEnergyFloorRelative = Real(1e-6);
constexpr Real kEnergyRunFactor = 10;         // the account over the run (energy_guard.h)

// What a step may add (J), energy_guard.h's allowed: F (G + R) + S (|V| + T_fem) + floor, from the
// energy at the start (T + V), the gravity bound G, the rows' bound R and the FEM bodies' energy
// scale `fem` (the tets' |V| summed and the nodes' kinetic energy T_fem).
CS_HD Real energyAllowed(Real start, Real gravity, Real constraints, Real fem) {
    return kEnergyFactor * (gravity + constraints) + kFemEnergySlack * fem + kEnergyFloor +
           kEnergyFloorRelative * (start < 0 ? -start : start);
}

// T = 1/2 m |v|^2 + 1/2 w . R I R^T w of a rigid body at orientation q (I from the body-frame
// inverse inertia, which both backends hold). 0 for a static body.
CS_HD Real rigidKineticEnergy(Real invMass, const Mat3& invInertiaLocal, Quat q, Vec3 v, Vec3 w) {
    if (invMass == Real(0)) return 0;
    const Vec3 wb = rotateInv(q, w);
    return Real(0.5) * (lengthSq(v) / invMass + dot(wb, inverse3(invInertiaLocal) * wb));
}

// What gravity g can add to the kinetic energy of a mass m moving at v over a step h: with
// u~ = v + h g, 1/2 m |u~|^2 - 1/2 m |v|^2 = m (h g.v + h^2 |g|^2 / 2), taken at twice its second
// term and never below zero. The start velocity's, so a PLUS impact that turns a falling body
// round within the step does not hide what gravity gave it before.
CS_HD Real gravityEnergyBound(Real mass, Vec3 v, Vec3 g, Real h) {
    const Real e = mass * (h * dot(g, v) + h * h * lengthSq(g));
    return e > 0 ? e : Real(0);
}

// One rigid body's share of the step: T at the start (u-, q-), T at the end (u+ at the orientation
// the integration will give it: integrate.h rotationRate and integrateBody, so that a free body's
// 1/2 w.I w, which the gyroscopic step keeps in the turning frame, reads unchanged), and the
// bound on what gravity and the free motion add: gravityEnergyBound, and what the gyroscopic step
// alone adds to the rotation's T where its Newton iteration stops short (integrate.h: |L| is kept
// then, the energy not; a brick at 1000 rad/s and h = 1/60 s gains 32% in one step).
// x: T(u-), y: T(u+) - T(u-), z: the bound.
CS_HD Vec3 rigidStepEnergy(Real invMass, const Mat3& invInertiaLocal, Quat q, Vec3 v, Vec3 w, const Spatial& u,
                           Vec3 g, Real h) {
    if (invMass == Real(0)) return Vec3{0, 0, 0};
    const GyroscopicStep free = gyroscopicStep(w, q, invInertiaLocal, h);
    Vec3 x{0, 0, 0};
    Quat qEnd = q, qFree = q;
    integrateBody(x, qEnd, u.lin, u.ang - (free.angVel - free.rotation), h);   // rotationRate's
    integrateBody(x, qFree, Vec3{0, 0, 0}, free.rotation, h);
    const Real start = rigidKineticEnergy(invMass, invInertiaLocal, q, v, w);
    const Real end = rigidKineticEnergy(invMass, invInertiaLocal, qEnd, u.lin, u.ang);
    const Real spin = rigidKineticEnergy(invMass, invInertiaLocal, qFree, Vec3{0, 0, 0}, free.angVel) -
                      rigidKineticEnergy(invMass, invInertiaLocal, q, Vec3{0, 0, 0}, w);
    return Vec3{start, end - start, gravityEnergyBound(Real(1) / invMass, v, g, h) + (spin > 0 ? spin : Real(0))};
}

// The same for a FEM node (a point mass; 0 when pinned): v- and v+.
CS_HD Vec3 nodeStepEnergy(Real invMass, Vec3 v, Vec3 vEnd, Vec3 g, Real h) {
    if (invMass == Real(0)) return Vec3{0, 0, 0};
    const Real m = Real(1) / invMass;
    return Vec3{Real(0.5) * m * lengthSq(v), Real(0.5) * m * (lengthSq(vEnd) - lengthSq(v)), gravityEnergyBound(m, v, g, h)};
}

// A tet's potential energy (J) at F: V = vol (Psi(F) - Psi(I)) less the activation's work, which
// fem_material_hd.h's stretch derivatives take as -a (J - 1) (stable neo-Hookean) and
// -a sum_i (s_i - 1) (corotated linear), a the internal pressure (Pa). Within a step a is fixed,
// so the rows' elastic and pressure forces are this V's gradient.
// From the principal stretches s of svd3.
CS_HD Real tetPotentialFromStretches(const FemMaterial& m, const TetRest& r, Vec3 s, Real activation) {
    const Real work = m.type == FemMaterialType::CorotatedLinear ? (s.x - 1) + (s.y - 1) + (s.z - 1) : s.x * s.y * s.z - 1;
    return r.volume * (femStretchEnergyDensity(m, s) - femStretchEnergyDensity(m, Vec3{1, 1, 1}) - activation * work);
}

// The same at F. One SVD for both terms: the guard runs this twice per element per step, and with
// an SVD inside femEnergyDensity too its SVDs were 23 % of pneunet_finger's step (perf).
CS_HD Real tetPotentialEnergy(const FemMaterial& m, const TetRest& r, const Mat3& F, Real activation) {
    Mat3 U, V;
    Vec3 s;
    svd3(F, U, s, V);
    return tetPotentialFromStretches(m, r, s, activation);
}

// One tet's share: x: V at the start positions, y: V at the end (x + h v+) less V at the start,
// z: |V| at the start (V is negative where a pressure has done more work than the strain stores).
CS_HD Vec3 tetStepEnergy(const FemMaterial& m, const TetRest& r, Real activation, const Vec3 x[4], const Vec3 v[4],
                         Real h) {
    const Real start = tetPotentialEnergy(m, r, deformationGradient(r, x[0], x[1], x[2], x[3]), activation);
    const Mat3 F = deformationGradient(r, x[0] + h * v[0], x[1] + h * v[1], x[2] + h * v[2], x[3] + h * v[3]);
    return Vec3{start, tetPotentialEnergy(m, r, F, activation) - start, start < 0 ? -start : start};
}

// The same from the stretches of F at the start and at the end positions (svd3's s of each).
CS_HD Vec3 tetStepEnergyOfStretches(const FemMaterial& m, const TetRest& r, Real activation, Vec3 sStart, Vec3 sEnd) {
    const Real start = tetPotentialFromStretches(m, r, sStart, activation);
    return Vec3{start, tetPotentialFromStretches(m, r, sEnd, activation) - start, start < 0 ? -start : start};
}

// The rows' bodies, Jacobians and impulses (constraint_rows.h; bodyC, bodyD null for two-body rows).
struct RowWorkView {
    const int *bodyA, *bodyB, *bodyC, *bodyD;
    const Spatial *jacobianA, *jacobianB, *jacobianC, *jacobianD;
    const Real* lambda;
};

// The work of row i over the step, lambda_i J_i (u+ + u~) / 2 (energy_guard.h: with
// M (u+ - u~) = J^T lambda these sum to T(u+) - T(u~); one row's share depends on the others',
// the sum does not).
CS_HD Real rowWork(const RowWorkView& r, int i, const Spatial* uEnd, const Spatial* uFree) {
    Real v = 0;
    const int bodies[4] = {r.bodyA[i], r.bodyB[i], r.bodyC ? r.bodyC[i] : -1, r.bodyD ? r.bodyD[i] : -1};
    const Spatial* jacobians[4] = {r.jacobianA, r.jacobianB, r.jacobianC, r.jacobianD};
    for (int k = 0; k < 4; ++k)
        if (bodies[k] >= 0) v += dot(jacobians[k][i], uEnd[bodies[k]] + uFree[bodies[k]]);
    return Real(0.5) * r.lambda[i] * v;
}

// What row i's impulse does against gravity g over the step, -h g . (J_i^T lambda_i) (its linear
// parts): with rowWork, the row's share of the change of T + V_g, V_g = -sum m g.x, under
// x+ = x + h u+ (energy_guard.h's account; a drag lifting a box at rest first takes back the h g
// that u~ gave it, which rowWork alone books against gravity).
CS_HD Real rowGravityWork(const RowWorkView& r, int i, Vec3 g, Real h) {
    Real v = 0;
    const int bodies[4] = {r.bodyA[i], r.bodyB[i], r.bodyC ? r.bodyC[i] : -1, r.bodyD ? r.bodyD[i] : -1};
    const Spatial* jacobians[4] = {r.jacobianA, r.jacobianB, r.jacobianC, r.jacobianD};
    for (int k = 0; k < 4; ++k)
        if (bodies[k] >= 0) v += dot(g, jacobians[k][i].lin);
    return -h * r.lambda[i] * v;
}

// The most row i can put into the bodies: its impulse times the speed it drives its constraint
// at. A normal or group row closes an overlap (bias: the stabilized gap psi, m; standard_rows_hd.h)
// at -psi / h at most; a bilateral row (joint, coupling, drive, the drag, a FEM attachment;
// bias in m/s) at |bias|, and a row at a force limit (the drag, a force-limited joint: maxImpulse)
// is a force that no longer holds its constraint, whose work (rowWork, `work`) counts as it is;
// friction rows only take energy out.
CS_HD Real rowEnergyBound(int kind, Real lambda, Real bias, Real maxImpulse, Real work, Real h) {
    const Real l = lambda < 0 ? -lambda : lambda;
    if (kind == int(RowKind::Normal) || kind == int(RowKind::Group)) return bias < 0 ? l * (-bias / h) : Real(0);
    if (kind != int(RowKind::Bilateral)) return 0;
    const Real drive = l * (bias < 0 ? -bias : bias);
    return maxImpulse < kNoImpulseLimit && work > drive ? work : drive;
}

}  // namespace cs
