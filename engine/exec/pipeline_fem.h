// The deformable bodies' stages of the step pipeline: World::step's FEM part (engine/fem/
// fem_step.cpp) over the executor verbs, the per-element math being the same CS_HD functions
// (fem_rows_hd.h femTetStepRows, femAttachmentRows).
//
//   prepare     per node: the solve's body data (inverse mass, zero inertia) and u~ = {v + h g, 0}
//               ([NSN] eq. 54 for particles; appendFemNodes); the substep's start positions
//   rows        after the contact rows: every tet's rows (one thread per tet, at its fixed row
//               offset), then three per attachment (buildFemRows); warm impulses from the last
//               substep's (femTetWarmImpulses: node impulses turned with the element; on the
//               host several tets at once, femTetWarmImpulsesLanes)
//   guard       a node too fast (NaN) rolls the substep back, with the rigid bodies
//   integrate   x+ = x + h v+ ([NSN] eq. 63 with G = 1, section 9.3), or the roll back; the FEM
//               rows' impulses kept for the next substep's warm start (storeFemWarm's layout,
//               State::femWarm)
// Each stage records nothing when the model has no FEM nodes.
#pragma once

#include "engine/exec/pipeline_data.h"
#include "engine/fem/fem_rows_hd.h"

namespace cs {

template <class Exec>
void recordFemPrepare(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    PipelineFem<Exec>& f = d.fem;
    if (f.nodes == 0) return;
    const int nb = d.bodies;
    const Real* nodeInvMass = f.nodeInvMass.data();
    const Vec3 *pos = f.pos.data(), *vel = f.vel.data();
    Vec3* goodPos = f.goodPos.data();
    Real* invMass = d.bodyInvMass.data();
    Mat3* invInertia = d.bodyInvInertia.data();
    Spatial* unconstrained = d.unconstrained.data();
    const Vec3 gravity = ws.gravity;
    ex.forEach(f.nodes, nullptr, nullptr, [=] CS_LAMBDA(int n) {
        const Real w = nodeInvMass[n];
        invMass[nb + n] = w;
        invInertia[nb + n] = mat3Zero();
        unconstrained[nb + n] = w > 0 ? Spatial{vel[n] + h * gravity, {0, 0, 0}} : Spatial{{0, 0, 0}, {0, 0, 0}};
        goodPos[n] = pos[n];
    });
}

template <class Exec>
void recordFemRows(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    PipelineFem<Exec>& f = d.fem;
    if (f.rows == 0) return;
    StepCounters* c = d.counters.data();
    const int nb = d.bodies, tetRows = f.tetRows, femRows = f.rows;
    const bool warmStart = ws.solver.warmStart;
    const FlatRows rows{d.kind.data(), d.rowBodyA.data(), d.rowBodyB.data(), d.jacobianA.data(), d.jacobianB.data(),
                        d.bias.data(), d.softness.data(), d.mu.data(), d.normalRow.data(), d.maxImpulse.data(),
                        d.lambda.data(), d.owner.data()};
    int *bodyC = f.wide() ? f.bodyC.data() : nullptr, *bodyD = f.bodyD.data();
    Spatial *jacobianC = f.jacobianC.data(), *jacobianD = f.jacobianD.data();
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};

    const Vec3* pos = f.pos.data();
    const int *tetNodes = f.tetNodes.data(), *tetBody = f.tetBody.data(), *tetRowStart = f.tetRowStart.data();
    const TetRest* rest = f.tetRest.data();
    const Real *tetActivation = f.tetActivation.data(), *activation = f.activation.data();
    const Real *damping = f.damping.data(), *warm = f.warm.data();
    const FemMaterial* material = f.material.data();
    Mat3* tetRotation = f.tetRotation.data();
    const TetSvd* svd = nullptr;   // the host: every tet's SVD first, several at once (the same bits)
    if constexpr (Exec::kRowKernels)
        svd = ex.tetSvds(0, f.tets, [=](int t) {
            const int* v = tetNodes + 4 * t;
            return deformationGradient(rest[t], pos[v[0]], pos[v[1]], pos[v[2]], pos[v[3]]);
        });
    // Tet t's rows (tetStepRows), then written at its fixed row offset with their warm impulses.
    auto tetStepRows = [=] CS_LAMBDA(int t, FemTetStepRows& r) {
        const int* v = tetNodes + 4 * t;
        const int body = tetBody[t];
        femTetStepRows(material[body], rest[t], pos[v[0]], pos[v[1]], pos[v[2]], pos[v[3]],
                       tetActivation[t] * activation[body], damping[body], h, r, svd ? svd + t : nullptr);
        tetRotation[t] = r.rotation;
    };
    auto writeTetRows = [=] CS_LAMBDA(int t, const FemTetStepRows& r, const Real* lambda) {
        const int* v = tetNodes + 4 * t;
        for (int k = 0; k < r.count; ++k) {
            const int j = tetRowStart[t] + k, i = c->rowCount + j;
            writeBilateralRow(rows, i, nb + v[0], nb + v[1], Spatial{r.jacobian[k][0], {0, 0, 0}},
                              Spatial{r.jacobian[k][1], {0, 0, 0}}, r.bias[k], r.softness[k], Real(1e30), lambda[k],
                              -1);
            bodyC[i] = nb + v[2];
            bodyD[i] = nb + v[3];
            jacobianC[i] = Spatial{r.jacobian[k][2], {0, 0, 0}};
            jacobianD[i] = Spatial{r.jacobian[k][3], {0, 0, 0}};
        }
    };
    if constexpr (Exec::kRowKernels) {   // the host: a block of tets at a time, their warm impulses together
        ex.forEachTetBlock(f.tets, [=](int t0, int m) {
            FemTetStepRows r[Exec::kTetBlock];
            const Real* stored[Exec::kTetBlock];
            Real lambda[Exec::kTetBlock][kFemMaxRows] = {};
            for (int l = 0; l < m; ++l) {
                tetStepRows(t0 + l, r[l]);
                stored[l] = warm + kFemWarmPerTet * (t0 + l);
            }
            if (warmStart && c->femWarm) Exec::tetWarmImpulses(r, stored, lambda, m);
            for (int l = 0; l < m; ++l) writeTetRows(t0 + l, r[l], lambda[l]);
        });
    } else {
        ex.forEach(f.tets, nullptr, nullptr, [=] CS_LAMBDA(int t) {
            FemTetStepRows r;
            tetStepRows(t, r);
            Real lambda[kFemMaxRows] = {0, 0, 0, 0, 0, 0};
            if (warmStart && c->femWarm) femTetWarmImpulses(r, warm + kFemWarmPerTet * t, lambda);
            writeTetRows(t, r, lambda);
        });
    }

    const int *attachNode = f.attachNode.data(), *attachBody = f.attachBody.data();
    const Vec3* attachLocal = f.attachLocal.data();
    const Vec3* bodyPos = d.pos.data();
    const Quat* bodyRot = d.rot.data();
    const int tetWarm = kFemWarmPerTet * f.tets;
    ex.forEach(f.attachments, nullptr, nullptr, [=] CS_LAMBDA(int a) {
        FemAttachmentRows r;
        const int node = attachNode[a], body = attachBody[a];
        femAttachmentRows(pos[node], bodyPos[body], bodyRot[body], attachLocal[a], h, r);
        for (int k = 0; k < 3; ++k) {
            const int j = tetRows + 3 * a + k, i = c->rowCount + j;
            writeBilateralRow(rows, i, nb + node, body, r.jacobianNode[k], r.jacobianBody[k], r.bias[k], 0,
                              Real(1e30), warmStart && c->femWarm ? warm[tetWarm + 3 * a + k] : Real(0), -1);
            if (!bodyC) continue;
            bodyC[i] = bodyD[i] = -1;
            jacobianC[i] = jacobianD[i] = zero;
        }
    });
    ex.serial(nullptr, [=] CS_LAMBDA() { c->rowCount += femRows; });   // rows fit: rowCapacity counts them
}

// Before recordIntegrate: a node's velocity is checked with the bodies' (World::substep's guard).
template <class Exec>
void recordFemGuard(Exec& ex, PipelineData<Exec>& d) {
    if (d.fem.nodes == 0) return;
    StepCounters* c = d.counters.data();
    const Spatial* u = d.velocity.data() + d.bodies;
    ex.forEach(d.fem.nodes, nullptr, nullptr, [=] CS_LAMBDA(int n) {   // World::substep's node guard
        if (speedBeyond(length(u[n].lin), c->speedLimit)) atomicSetFlag(&c->bad);
    });
}

// After recordIntegrate (which left c->bad as the guard found it).
template <class Exec>
void recordFemIntegrate(Exec& ex, PipelineData<Exec>& d, Real h) {
    PipelineFem<Exec>& f = d.fem;
    if (f.nodes == 0) return;
    StepCounters* c = d.counters.data();
    const Spatial* u = d.velocity.data() + d.bodies;
    Vec3 *pos = f.pos.data(), *vel = f.vel.data();
    const Vec3* goodPos = f.goodPos.data();
    ex.forEach(f.nodes, nullptr, nullptr, [=] CS_LAMBDA(int n) {
        if (c->bad) {   // World::rollBack: the substep's start positions, velocities zero
            pos[n] = goodPos[n];
            vel[n] = Vec3{0, 0, 0};
            return;
        }
        const Vec3 v = u[n].lin;
        vel[n] = v;
        pos[n] += h * v;
    });
    // The warm start (fem_step.h storeFemWarm): each tet's node impulses in its polar frame, then
    // the attachments' row impulses. The FEM contact rows follow the FEM rows.
    const int femRows = f.rows, tetRows = f.tetRows, tetWarm = kFemWarmPerTet * f.tets;
    const Real* lambda = d.lambda.data();
    const Spatial *jacobianB = d.jacobianB.data(), *jacobianC = f.jacobianC.data(), *jacobianD = f.jacobianD.data();
    const int* tetRowStart = f.tetRowStart.data();
    const Mat3* tetRotation = f.tetRotation.data();
    Real* warm = f.warm.data();
    ex.forEach(f.tets, nullptr, nullptr, [=] CS_LAMBDA(int t) {
        if (c->bad) return;
        const int i = c->rowCount - 3 * c->femContacts - femRows + tetRowStart[t];
        femTetWarmStore(kFemMaxRows, jacobianB + i, jacobianC + i, jacobianD + i, lambda + i, tetRotation[t],
                        warm + kFemWarmPerTet * t);
    });
    ex.forEach(femRows - tetRows, nullptr, nullptr, [=] CS_LAMBDA(int j) {
        if (!c->bad) warm[tetWarm + j] = lambda[c->rowCount - 3 * c->femContacts - femRows + tetRows + j];
    });
    ex.serial(nullptr, [=] CS_LAMBDA() { c->femWarm = c->bad ? 0 : 1; });
}

}  // namespace cs
