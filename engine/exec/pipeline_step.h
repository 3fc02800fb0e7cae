// The step pipeline: World::step for the standard contact model, written once over the executor
// verbs (executor.h) and run by the host executor (host_executor.h: every build, every test) and
// by the CUDA executor (gpu/cuda_executor.cuh, GpuWorld). The one place its stages are ordered:
//
//   prepare      per body: activity, inverse mass and inertia, u~          pipeline_collide.h
//   broad        shapes into the world, sweep and prune                      pipeline_collide.h
//   narrow       feature pairs per shape pair (reusing the candidates of    pipeline_collide.h
//                pairs at rest: feature_cache_hd.h), compacted in pair order
//   rows         joints, couplings and the drag first                         pipeline_joints.h
//                the standard model's merge and rows, warm impulses         pipeline_collide.h
//   solve        non-smooth Newton with Jacobi / Gauss-Seidel / PCG / PCR   pipeline_newton.h
//                (the CCP model's PJ / PGS / APGD: pipeline_ccp.h, pipeline_ccp_solve.h; its
//                Newton with the APGD fallback: pipeline_ccp_newton.h)
//   cull check   row culling's check (rigid and FEM node-part contacts); if   recordCullCheck
//                the reduced solve does not stand, the rows (FEM's too) and the solve again
//                with every contact (a gated stretch, setGate)
//   energy       the energy guard (engine/solver/energy_guard.h)            pipeline_energy.h
//   integrate    the velocity guard (roll back the substep), integration, the warm-start cache
//   (sleeping)   waking on touch after the broad phase; the sleeping islands'  pipeline_islands.h
//                warm impulses kept across the store; islands, sleep clocks, falling asleep
//   (FEM)        nodes, element and attachment rows, node integration       pipeline_fem.h
//                boundary nodes against rigid parts                          pipeline_fem_contact.h
//                boundary nodes against FEM triangles (FEM-FEM, self)        pipeline_fem_femcontact.h
//
// World::step stays beside it as the CPU reference: it also runs what this pipeline does not
// (PEG, PLUS, compliant, projection, redetection, partial waking's load check), and it is the outside check
// of the parity test (tests/test_exec_parity.cpp). PipelineWorld drives the pipeline on a World:
// it uploads the world when the host changed it, records one step (all substeps), and makes ONE
// synchronization, after which the counters and the state are on the host. When a count outgrew
// its buffer the buffers grow and the step is run again from its start, so nothing is dropped.
#pragma once

#include <string>
#include <vector>

#include "engine/exec/pipeline_collide.h"
#include "engine/exec/pipeline_ccp_newton.h"
#include "engine/exec/pipeline_energy.h"
#include "engine/exec/pipeline_fem.h"
#include "engine/exec/pipeline_fem_contact.h"
#include "engine/exec/pipeline_islands.h"
#include "engine/exec/pipeline_joints.h"
#include "engine/exec/pipeline_newton.h"

namespace cs {

// What the buffers held in the last step, and how often a step ran again after one grew.
struct PipelineBufferStats {
    int pairs = 0, contacts = 0, rows = 0;             // last step's counts
    int pairCapacity = 0, contactCapacity = 0, rowCapacity = 0, pairContactCapacity = 0;
    long long growthEvents = 0;                        // steps re-run after a buffer grew
};

// The guard of World::substep (the speed guard of engine/solver/speed_guard_hd.h, the limits set by
// recordPrepare, or the energy guard before it, pipeline_energy.h: roll back to the substep's
// start with zero velocities), the integration
// ([NSN] eq. 63), and the warm-start cache of the next substep (storeStandardResults: one entry
// per kept contact, already in key order).
template <class Exec>
void recordIntegrate(Exec& ex, PipelineData<Exec>& d, Real h, Real newtonTolerance) {
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    const uint8_t* active = d.active.data();
    const Spatial* u = d.velocity.data();
    Vec3 *pos = d.pos.data(), *linVel = d.linVel.data(), *angVel = d.angVel.data();
    Quat* rot = d.rot.data();
    const Vec3* goodPos = d.goodPos.data();
    const Quat* goodRot = d.goodRot.data();
    ex.forEach(d.bodies, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        if (!active[b] || m.invMass[b] == Real(0)) return;
        const Real limit = m.jointed[b] ? kMaxSpeed : c->speedLimit;
        if (speedBeyond(bodyPointSpeed(u[b].lin, u[b].ang, m.reach[b]), limit)) atomicSetFlag(&c->bad);
    });
    ex.forEach(d.bodies, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        if (c->bad) {
            pos[b] = goodPos[b];
            rot[b] = goodRot[b];
            linVel[b] = angVel[b] = Vec3{0, 0, 0};
            return;
        }
        if (!active[b] || m.invMass[b] == Real(0)) return;
        const Vec3 rate = rotationRate(u[b].ang, angVel[b], rot[b], m.invInertiaLocal[b], h);   // integrate.h
        linVel[b] = u[b].lin;
        angVel[b] = u[b].ang;
        integrateBody(pos[b], rot[b], u[b].lin, rate, h);
    });

    const PotentialContact* contacts = d.contacts.data();
    const int *keep = d.keep.data(), *keepOffset = d.keepOffset.data();
    const Real* lambda = d.lambda.data();
    WarmImpulse *warm = d.warm.data(), *warmNext = d.warmNext.data();
    Real* penetration = d.penetration.data();
    const int first = d.joints.leadingRows();
    ex.forEach(d.contactCapacity, &c->contactCount, nullptr, [=] CS_LAMBDA(int i) {
        if (c->bad || !keep[i]) return;
        const int slot = keepOffset[i], n = first + 3 * slot;
        Vec3 t[2];
        tangentBasis(contacts[i].normal, t[0], t[1]);
        warmNext[slot] = WarmImpulse{contactKeyOf(contacts[i]), lambda[n], lambda[n + 1] * t[0] + lambda[n + 2] * t[1]};
        penetration[slot] = -contacts[i].gap;
    });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        if (c->bad) c->failedSteps++;
        else c->lastConverged = c->merit <= newtonTolerance;   // a rolled-back substep keeps the start's
        c->warmCount = c->bad ? 0 : c->keptContacts;
        c->time += h;
    });
    ex.max(&c->keptContacts, nullptr, &c->maxPenetration, [=] CS_LAMBDA(int i) { return penetration[i]; });
    ex.forEach(d.contactCapacity, &c->warmCount, nullptr, [=] CS_LAMBDA(int i) { warm[i] = warmNext[i]; });
}

// Row culling's check after the solve (engine/contact/row_culling.h, World::substep's
// culledSolveStands): the reduced solve stands when nothing was left out, or when it converged
// and every left-out contact has g/h + J u+ >= 0; otherwise cullRetry: the rows are built again
// with every contact and solved again (recordStep).
template <class Exec>
void recordCullCheck(Exec& ex, PipelineData<Exec>& d, const SolverSettings& settings, Real h) {
    StepCounters* c = d.counters.data();
    const PotentialContact* contacts = d.contacts.data();
    const int* culled = d.culled.data();
    const Vec3* pos = d.pos.data();
    const Spatial* u = d.velocity.data();
    const Real tolerance = settings.newtonTolerance;
    ex.forEach(d.contactCapacity, &c->contactCount, &c->culledContacts, [=] CS_LAMBDA(int i) {
        if (culled[i] && !cullContactStayedOpen(contacts[i], pos, u, h)) atomicSetFlag(&c->cullFailed);
    });
    const PotentialContact* femCulled = d.fem.culled.data();   // node-part contacts: the node is body A
    ex.forEach(d.fem.contactCapacity, &c->femCulled, nullptr, [=] CS_LAMBDA(int i) {
        const PotentialContact& k = femCulled[i];
        if (!cullNodeContactStayedOpen(k, u[k.bodyA].lin, pos, u, h)) atomicSetFlag(&c->cullFailed);
    });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->cullRetry = c->culledContacts > 0 && !(c->merit <= tolerance && !c->cullFailed);
        if (!c->cullRetry) return;
        c->cullOn = 0;
        c->culledContacts = 0;
        c->femCulled = 0;
        c->cullResolves += 1;
    });
}

// The CCP model with a first-order solver (PJ, PGS, APGD) rather than the Newton iteration.
inline bool ccpFirstOrder(const SolverSettings& s) {
    return s.contactModel == ContactModelType::CCP && s.ccp.solver != CcpSolverType::Newton;
}

// One step (settings.substeps substeps) into the executor's queue. Stamps 5 s .. 5 s + 5 bound
// the stages of substep s: broad (with prepare), narrow, contact rows, solve, integrate.
template <class Exec>
void recordStep(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, bool sorted) {
    const int substeps = ws.substeps > 0 ? ws.substeps : 1;
    const Real h = ws.dt / substeps;
    ex.stamp(0);
    for (int s = 0; s < substeps; ++s) {
        const int t = 5 * s;
        recordPrepare(ex, d, ws, h);
        recordFemPrepare(ex, d, ws, h);
        recordBroadPhase(ex, d, ws);
        recordWakeTouched(ex, d);   // sleeping: waking on touch, the sleeping pairs and bodies out
        ex.stamp(t + 1);
        recordNarrowPhase(ex, d, ws);
        ex.stamp(t + 2);
        recordJointRows(ex, d, ws, h);   // the first rows, as World::substep orders them
        recordContactRows(ex, d, ws, h);
        recordFemRows(ex, d, ws, h);   // after the contact rows, as World::substep orders them
        recordFemContacts(ex, d, ws, h);
        ex.stamp(t + 3);
        if (ccpFirstOrder(ws.solver)) recordCcpSolve(ex, d, ws.solver, h, sorted);
        else if (ccpNewtonSolve(ws.solver)) recordCcpNewton(ex, d, ws.solver, h, sorted);
        else recordSolve(ex, d, ws.solver, h, sorted);
        if (pipelineCulls(d, ws)) {   // the reduced solve did not stand: every row, solved again
            recordCullCheck(ex, d, ws.solver, h);
            if (!ex.stopped(&d.counters.data()->cullRetry)) {
                ex.setGate(&d.counters.data()->cullRetry);
                recordJointRows(ex, d, ws, h);
                recordContactRows(ex, d, ws, h);
                recordFemRows(ex, d, ws, h);
                recordFemContacts(ex, d, ws, h);
                recordSolve(ex, d, ws.solver, h, sorted);
                ex.setGate(nullptr);
            }
        }
        ex.stamp(t + 4);
        recordFemGuard(ex, d);
        recordEnergyGuard(ex, d, ws, h);
        recordKeepSleepingWarm(ex, d);
        recordIntegrate(ex, d, h, ws.solver.newtonTolerance);
        recordMergeSleepingWarm(ex, d);
        recordUpdateSleep(ex, d, h);
        recordFemIntegrate(ex, d, h);
        recordJointStore(ex, d);
        recordFemContactStore(ex, d);
        ex.stamp(t + 5);
    }
}

// True when the pipeline covers the world as it is set up now (the standard contact model, or
// CCP without joints, drag or FEM; speculative widening without redetection; no projection, no
// sleeping); otherwise false with the reason.
bool pipelineSupports(const World& world, std::string* why);

}  // namespace cs
