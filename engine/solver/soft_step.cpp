// The soft step (soft_step.h): the substep sweeps over the shared stages of relax_shared.h.
#include "engine/solver/soft_step.h"

#include <algorithm>
#include <cmath>

#include "engine/exec/host_executor.h"
#include "engine/solver/integrate.h"
#include "engine/solver/relax_shared.h"
#include "engine/solver/soft_step_hd.h"

namespace cs {

std::shared_ptr<SoftStepScratch> makeSoftStepScratch() { return std::make_shared<SoftStepScratch>(); }

const char* solveMethodName(SolveMethod method) {
    switch (method) {
        case SolveMethod::Soft: return "soft";
        case SolveMethod::Pgs: return "pgs";
        case SolveMethod::Newton: break;
    }
    return "newton";
}

bool parseSolveMethodName(const std::string& name, SolveMethod& out) {
    for (SolveMethod m : kSolveMethods)
        if (name == solveMethodName(m)) {
            out = m;
            return true;
        }
    return false;
}

bool softStepSupports(const Model& model, const WorldSettings& settings, std::string* why) {
    return relaxStepSupports("the soft step (--method soft)", model, settings, why);
}

bool relaxStepSupports(const char* method, const Model& model, const WorldSettings& settings, std::string* why) {
    auto no = [&](const std::string& what) {
        if (why) *why = std::string(method) + " " + what;
        return false;
    };
    if (settings.solver.contactModel != ContactModelType::Standard)
        return no("solves the standard contact model only, not " +
                  std::string(settings.solver.contactModel == ContactModelType::PEG ? "peg" :
                              settings.solver.contactModel == ContactModelType::PLUS ? "plus" :
                              settings.solver.contactModel == ContactModelType::CCP ? "ccp" : "compliant"));
    if (model.femNodeCount() > 0) return no("has no deformable bodies yet (this scene has " +
                                            std::to_string(model.femBodies.size()) + ")");
    if (!model.couplings.empty())
        return no("handles fixed, ball, revolute and prismatic joints, not mimic couplings yet (this scene has " +
                  std::to_string(model.couplings.size()) + ")");
    return true;
}

void softStep(const SoftStepInput& in, State& state, SoftStepScratch& s, std::vector<Contact>& contacts,
              SoftStepResult& result) {
    const Model& model = in.model;
    const SoftSettings& soft = in.settings.solver.soft;
    const int substeps = soft.substeps > 0 ? soft.substeps : 1;
    const Real h = in.h / substeps, invH = 1 / h;
    result = SoftStepResult{};

    // ---- prepare: solver bodies, manifolds, colours ----
    relaxPrepareBodies(in, state, s);
    const int ns = (int)s.bodyOf.size();
    // Box2D's contact stiffness: at most a quarter of the substep rate, so that a contact's spring
    // is resolved by at least four substeps per period; twice as stiff against a body that does
    // not move (which cannot give way).
    const Real hertz = std::fmin(soft.contactHertz, Real(0.25) / h);
    RelaxFrame frame{in.settings.frictionScale, makeSoft(hertz, soft.contactDampingRatio, h),
                    makeSoft(2 * hertz, soft.contactDampingRatio, h), state.warm.data(),
                    in.settings.solver.warmStart ? (int)state.warm.size() : 0, Real(1) / substeps};
    relaxWarmIndices(in, frame, s);
    relaxGatherManifolds(in, state, s, frame, result);
    relaxBuildBlocks(s);

    SoftDrag drag = relaxMakeDrag(in, state, s, h, substeps, result);
    // Joints: the Newton path's rows (joint_rows_hd.h) at every substep's pose.
    const int nj = (int)model.joints.size();
    const int jointRows = relaxPrepareJoints(in, state, s, substeps);
    // Box2D's joint stiffness: twice the contacts', at most half the substep rate.
    const SoftParams jointSoftness = makeSoft(std::fmin(soft.jointHertz, Real(0.5) / h), soft.jointDampingRatio, h);

    // ---- substeps ----
    HostExecutor& ex = s.exec;
    SoftBody* bodies = s.bodies.data();
    const Mat3* invInertia = s.invInertia.data();
    const int* bodyOf = s.bodyOf.data();
    const Vec3* pos0 = state.pos.data();
    const Quat* rot0 = state.rot.data();
    const Mat3* invInertiaLocal = model.invInertiaLocal.data();
    const Vec3 gravity = in.settings.gravity;
    const Real contactSpeed = soft.contactSpeed;
    SoftDrag* dragPtr = &drag;
    SoftJoint* joints = s.joints.data();
    Vec3* pos = s.pos.data();
    Quat* rot = s.rot.data();
    // The joints are few beside the contacts: one serial pass each sweep (not coloured yet).
    auto solveJoints = [=, &ex](bool useBias) {
        ex.serial(nullptr, [=] CS_LAMBDA() {
            for (int k = 0; k < nj; ++k) softSolveJoint(joints[k], bodies, jointSoftness, h, useBias);
        });
    };
    for (int step = 0; step < substeps; ++step) {
        // integrate velocities: v += h g; w by the implicit gyroscopic step at the current pose
        ex.forEach(ns, nullptr, nullptr, [=] CS_LAMBDA(int k) {
            SoftBody& b = bodies[k];
            const Quat q = normalize(b.dq * rot0[bodyOf[k]]);
            const Spatial u = unconstrainedVelocity(b.v, b.w, q, invInertiaLocal[bodyOf[k]], gravity, h);
            b.v = u.lin;
            b.w = u.ang;
        });
        // the joints' rows at this substep's pose
        ex.forEach(nj, nullptr, nullptr, [=] CS_LAMBDA(int k) { softPrepareJoint(joints[k], pos, rot, h); });
        // warm start (the joints and the drag first, serially)
        ex.serial(nullptr, [=] CS_LAMBDA() {
            for (int k = 0; k < nj; ++k) softWarmStartJoint(joints[k], bodies);
            softWarmStartDrag(*dragPtr, bodies);
        });
        sweepBlocks(ex, s, [=] CS_LAMBDA(SoftWideBlock& k) { softWideWarmStart(k, bodies, invInertia); },
              [=] CS_LAMBDA(SoftContact& m, int) { softWarmStart(m, bodies, invInertia); });
        // solve with the soft bias
        solveJoints(true);
        ex.serial(nullptr, [=] CS_LAMBDA() { softSolveDrag(*dragPtr, bodies); });
        const bool moved = soft.relaxIterations == 0 && step > 0;   // else the relax sweep updated the separations
        sweepBlocks(ex, s, [=] CS_LAMBDA(SoftWideBlock& k) { softWideSolve(k, bodies, invInertia, invH, contactSpeed, true, moved); },
              [=] CS_LAMBDA(SoftContact& m, int) { softSolveContact(m, bodies, invInertia, invH, contactSpeed, true, moved); });
        // integrate positions: dp += h v, dq <- normalize(dq + h/2 (0, w) dq) ([NSN] eq. 63's map)
        ex.forEach(ns, nullptr, nullptr, [=] CS_LAMBDA(int k) {
            SoftBody& b = bodies[k];
            Vec3 zero{0, 0, 0};
            integrateBody(zero, b.dq, b.v, b.w, h);
            b.dp += h * b.v;
            pos[bodyOf[k]] = pos0[bodyOf[k]] + b.dp;
            rot[bodyOf[k]] = normalize(b.dq * rot0[bodyOf[k]]);
        });
        // relax: no bias, the push-out velocity taken out again
        for (int it = 0; it < soft.relaxIterations; ++it) {
            solveJoints(false);
            ex.serial(nullptr, [=] CS_LAMBDA() { softSolveDrag(*dragPtr, bodies); });
            const bool moved = it == 0;
            sweepBlocks(ex, s, [=] CS_LAMBDA(SoftWideBlock& k) { softWideSolve(k, bodies, invInertia, invH, contactSpeed, false, moved); },
                  [=] CS_LAMBDA(SoftContact& m, int) { softSolveContact(m, bodies, invInertia, invH, contactSpeed, false, moved); });
        }
        result.sweeps += 1 + soft.relaxIterations;
    }
    const Real threshold = soft.restitutionThreshold;
    sweepBlocks(ex, s, [=] CS_LAMBDA(SoftWideBlock& k) { softWideRestitution(k, bodies, invInertia, threshold); },
          [=] CS_LAMBDA(SoftContact& m, int) { softRestitution(m, bodies, invInertia, threshold); });
    ++result.sweeps;
    relaxScatterBlocks(s);

    // ---- store: poses, velocities, contacts, warm start ----
    relaxStore(in, state, s, substeps, drag, jointRows, contacts, result);
}

}  // namespace cs
