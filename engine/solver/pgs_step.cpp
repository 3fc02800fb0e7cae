// Sequential impulses (pgs_step.h) over the relaxation methods' shared stages (relax_shared.h).
#include "engine/solver/pgs_step.h"

#include <cmath>

#include "engine/solver/integrate.h"
#include "engine/solver/pgs_step_hd.h"
#include "engine/solver/relax_shared.h"

namespace cs {

struct PgsStepScratch {
    SoftStepScratch base;          // bodies, manifolds, colours, joints, warm start
    std::vector<SoftBody> push;    // (solver bodies) split impulse's pseudo velocities (v, w)
    std::vector<Real> split;       // (manifolds x kSoftMaxPoints) accumulated pseudo impulses
};

std::shared_ptr<PgsStepScratch> makePgsStepScratch() { return std::make_shared<PgsStepScratch>(); }

bool pgsStepSupports(const Model& model, const WorldSettings& settings, std::string* why) {
    return relaxStepSupports("sequential impulses (--method pgs)", model, settings, why);
}

void pgsStep(const SoftStepInput& in, State& state, PgsStepScratch& scratch, std::vector<Contact>& contacts,
             SoftStepResult& result) {
    const Model& model = in.model;
    const PgsSettings& pgs = in.settings.solver.pgs;
    SoftStepScratch& s = scratch.base;
    const Real h = in.h, invH = 1 / h;
    result = SoftStepResult{};

    // ---- prepare ----
    relaxPrepareBodies(in, state, s);
    const int ns = (int)s.bodyOf.size();
    const SoftParams rigid = makeSoft(0, 0, h);   // unused by the PGS rows
    RelaxFrame frame{in.settings.frictionScale, rigid, rigid, state.warm.data(),
                     in.settings.solver.warmStart ? (int)state.warm.size() : 0, Real(1)};
    relaxWarmIndices(in, frame, s);
    relaxGatherManifolds(in, state, s, frame, result);
    relaxBuildBlocks(s);
    const int nm = (int)s.sweep.size();
    SoftDrag drag = relaxMakeDrag(in, state, s, h, 1, result);
    const int nj = (int)model.joints.size();
    const int jointRows = relaxPrepareJoints(in, state, s, 1);
    const SoftParams jointBias = pgsJointBias(pgs.erp, h);
    const bool split = pgs.splitImpulse && pgs.splitIterations > 0;
    const PgsParams params{invH, split ? Real(0) : pgs.erp, pgs.slop, pgs.maxBiasSpeed, pgs.restitutionThreshold};

    HostExecutor& ex = s.exec;
    SoftBody* bodies = s.bodies.data();
    const Mat3* invInertia = s.invInertia.data();
    const int* bodyOf = s.bodyOf.data();
    const Quat* rot0 = state.rot.data();
    const Mat3* invInertiaLocal = model.invInertiaLocal.data();
    const Vec3 gravity = in.settings.gravity;
    SoftDrag* dragPtr = &drag;
    SoftJoint* joints = s.joints.data();
    const Vec3* pos = s.pos.data();
    const Quat* rot = s.rot.data();

    // ---- velocities, the joints' rows, warm start ----
    ex.forEach(ns, nullptr, nullptr, [=] CS_LAMBDA(int k) {
        SoftBody& b = bodies[k];
        const Spatial u = unconstrainedVelocity(b.v, b.w, rot0[bodyOf[k]], invInertiaLocal[bodyOf[k]], gravity, h);
        b.v = u.lin;
        b.w = u.ang;
    });
    ex.forEach(nj, nullptr, nullptr, [=] CS_LAMBDA(int k) { softPrepareJoint(joints[k], pos, rot, h); });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        for (int k = 0; k < nj; ++k) softWarmStartJoint(joints[k], bodies);
        softWarmStartDrag(*dragPtr, bodies);
    });
    sweepBlocks(ex, s, [=] CS_LAMBDA(SoftWideBlock& k) { softWideWarmStart(k, bodies, invInertia); },
                [=] CS_LAMBDA(SoftContact& m, int) { softWarmStart(m, bodies, invInertia); });

    // ---- velocity iterations ----
    for (int it = 0; it < pgs.iterations; ++it) {
        ex.serial(nullptr, [=] CS_LAMBDA() {
            for (int k = 0; k < nj; ++k) softSolveJoint(joints[k], bodies, jointBias, h, true);
            softSolveDrag(*dragPtr, bodies);
        });
        sweepBlocks(ex, s, [=] CS_LAMBDA(SoftWideBlock& k) { pgsWideSolve(k, bodies, invInertia, params); },
                    [=] CS_LAMBDA(SoftContact& m, int) { pgsSolveContact(m, bodies, invInertia, params); });
    }
    result.sweeps = pgs.iterations;

    // ---- split impulse: pseudo velocities for the position error ----
    scratch.push.assign(ns, softStill());
    SoftBody* push = scratch.push.data();
    if (split) {
        scratch.split.assign(size_t(nm) * kSoftMaxPoints, Real(0));
        Real* splitImpulse = scratch.split.data();
        const Real rate = pgs.splitErp * invH, slop = pgs.slop;
        for (int it = 0; it < pgs.splitIterations; ++it)
            sweepBlocks(ex, s, [=] CS_LAMBDA(SoftWideBlock& k) { pgsWideSplit(k, push, invInertia, rate, slop); },
                        [=] CS_LAMBDA(SoftContact& m, int i) {
                            pgsSplitContact(m, push, invInertia, splitImpulse + size_t(i) * kSoftMaxPoints, rate, slop);
                        });
        result.sweeps += pgs.splitIterations;
    }

    // ---- positions: x += h (v + v'), q by h (w + w') ----
    ex.forEach(ns, nullptr, nullptr, [=] CS_LAMBDA(int k) {
        SoftBody& b = bodies[k];
        const Vec3 v = b.v + push[k].v, w = b.w + push[k].w;
        Vec3 zero{0, 0, 0};
        integrateBody(zero, b.dq, v, w, h);
        b.dp = h * v;
    });

    // ---- store: poses, velocities, contacts, warm start ----
    relaxScatterBlocks(s);
    relaxStore(in, state, s, 1, drag, jointRows, contacts, result);
}

}  // namespace cs
