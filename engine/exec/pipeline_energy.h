// The energy guard of World::substep (engine/solver/energy_guard.h) over the executor verbs:
// after the solve and the velocity guard, before the integration, the substep's energy rise
// against what could supply it, summed from the same CS_HD terms (energy_guard_hd.h): per body
// (T at the start, T at the end, the gravity bound), per FEM node, per tet (the elements'
// potential), per row (impulse times drive speed, but for the tets' own rows). A step beyond the
// bound sets c->bad, so recordIntegrate and recordFemIntegrate roll it back as the velocity
// guard's (start positions, zero velocities, no warm start) and count it in c->failedSteps.
// The pipeline runs no compliant model, the one model World::substep leaves unguarded.
// The account over the run (energy_guard.h, State::energyBudget) stays World::step's: it is
// checked at the step's end against the rows' work, which this pipeline does not sum, and it
// would have to travel in and out with the state at every upload; a world stepped here keeps the
// account it had, and World::step counts what changed meanwhile as entered between steps.
#pragma once

#include "engine/exec/pipeline_data.h"
#include "engine/solver/energy_guard_hd.h"

namespace cs {

template <class Exec>
void recordEnergyGuard(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    const uint8_t* active = d.active.data();
    const Spatial* u = d.velocity.data();
    const Vec3 *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const Quat* rot = d.rot.data();
    const Vec3 g = ws.gravity;
    ex.sum(&c->bodies, nullptr, kSerialSum, &c->energyBodies, [=] CS_LAMBDA(int b) {
        return active[b] ? rigidStepEnergy(m.invMass[b], m.invInertiaLocal[b], rot[b], linVel[b], angVel[b], u[b], g, h)
                         : Vec3{0, 0, 0};
    });

    PipelineFem<Exec>& f = d.fem;
    const int nb = d.bodies;
    const Real* nodeInvMass = f.nodeInvMass.data();
    const Vec3 *pos = f.pos.data(), *vel = f.vel.data();
    ex.sum(&c->femNodes, nullptr, kSerialSum, &c->energyNodes, [=] CS_LAMBDA(int n) {
        return nodeStepEnergy(nodeInvMass[n], vel[n], u[nb + n].lin, g, h);
    });
    const int* tetNodes = f.tetNodes.data();
    const int* tetBody = f.tetBody.data();
    const TetRest* rest = f.tetRest.data();
    const FemMaterial* material = f.material.data();
    const Real *tetActivation = f.tetActivation.data(), *activation = f.activation.data();
    // The host: the SVDs at the start and at the end positions first, several tets at once (the
    // same bits), then tetStepEnergy's terms from their stretches.
    const TetSvd *svdStart = nullptr, *svdEnd = nullptr;
    if constexpr (Exec::kRowKernels) {
        svdStart = ex.tetSvds(0, f.tets, [=](int t) {
            const int* v = tetNodes + 4 * t;
            return deformationGradient(rest[t], pos[v[0]], pos[v[1]], pos[v[2]], pos[v[3]]);
        });
        svdEnd = ex.tetSvds(1, f.tets, [=](int t) {
            Vec3 x[4];
            for (int j = 0; j < 4; ++j) x[j] = pos[tetNodes[4 * t + j]] + h * u[nb + tetNodes[4 * t + j]].lin;
            return deformationGradient(rest[t], x[0], x[1], x[2], x[3]);
        });
    }
    ex.sum(&c->femTets, nullptr, kSerialSum, &c->energyTets, [=] CS_LAMBDA(int t) {
        const int body = tetBody[t];
        const Real a = tetActivation[t] * activation[body];
        if (svdStart) return tetStepEnergyOfStretches(material[body], rest[t], a, svdStart[t].s, svdEnd[t].s);
        Vec3 x[4], v[4];
        for (int j = 0; j < 4; ++j) {
            x[j] = pos[tetNodes[4 * t + j]];
            v[j] = u[nb + tetNodes[4 * t + j]].lin;
        }
        return tetStepEnergy(material[body], rest[t], a, x, v, h);
    });

    // Rows: the tets' own rows (their energy is V's) follow the contact rows, before the FEM
    // contacts' three rows each (pipeline_fem.h).
    const int* kind = d.kind.data();
    const Real *lambda = d.lambda.data(), *bias = d.bias.data(), *maxImpulse = d.maxImpulse.data();
    const RowWorkView view{d.rowBodyA.data(), d.rowBodyB.data(), f.wide() ? f.bodyC.data() : nullptr,
                           f.wide() ? f.bodyD.data() : nullptr, d.jacobianA.data(), d.jacobianB.data(),
                           f.jacobianC.data(), f.jacobianD.data(), lambda};
    const Spatial* uFree = d.unconstrained.data();
    const int femRows = f.rows, tetRows = f.tetRows;
    ex.sum(&c->rowCount, nullptr, kSerialSum, &c->energyRows, [=] CS_LAMBDA(int i) {
        const int tetFirst = c->rowCount - 3 * c->femContacts - femRows;
        if (i >= tetFirst && i < tetFirst + tetRows) return Real(0);
        return rowEnergyBound(kind[i], lambda[i], bias[i], maxImpulse[i], rowWork(view, i, u, uFree), h);
    });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        const Vec3 b = c->energyBodies + c->energyNodes;
        c->energyRise = b.y + c->energyTets.y;
        c->energyAllowed = energyAllowed(b.x + c->energyTets.x, b.z, c->energyRows, c->energyTets.z + c->energyNodes.x);
        c->energyFailed = !c->bad && c->energyRise > c->energyAllowed ? 1 : 0;   // NaN: the velocity guard's
        if (c->energyFailed) c->bad = 1;
    });
}

}  // namespace cs
