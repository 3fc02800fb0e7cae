// The soft step (soft_step.h): prepare, colour, the substep sweeps over the executor, store.
#include "engine/solver/soft_step.h"

#include <algorithm>
#include <cmath>

#include "engine/contact/contact_model.h"
#include "engine/contact/standard_rows_hd.h"
#include "engine/exec/host_executor.h"
#include "engine/solver/integrate.h"
#include "engine/solver/soft_step_hd.h"

namespace cs {

namespace {

// Colours a manifold may take (Box2D uses 24); a manifold whose bodies already use all of them
// goes to the overflow colour, solved serially after the others.
constexpr int kSoftColours = 32;
// Contacts of one shape pair whose normals are this close (cosine) form one manifold (2.6 deg).
constexpr Real kManifoldNormalCos = Real(0.999);

}  // namespace

struct SoftStepScratch {
    HostExecutor exec;
    std::vector<int> solverIndex;        // (bodies) solver body, -1: does not move this step
    std::vector<int> bodyOf;             // (solver bodies) model body
    std::vector<SoftBody> bodies;        // (solver bodies)
    std::vector<Real> invMass;           // (solver bodies)
    std::vector<Mat3> invInertia;        // (solver bodies) world, at the step's start
    struct Pick {                        // a manifold before it is built: its contacts and normal
        int bodyA, bodyB;                // solver bodies
        int count;
        int contact[kSoftMaxPoints];
        Vec3 normal;
    };
    std::vector<Pick> picks;             // manifolds in contact order
    std::vector<int> slot;               // (manifolds) place in `sweep`, by colour
    std::vector<uint32_t> bodyColours;   // (solver bodies) bit c: a manifold of colour c moves it
    int colourStart[kSoftColours + 2] = {};   // manifolds of colour c: [colourStart[c], colourStart[c + 1]);
                                              //   colour kSoftColours is the overflow
    std::vector<SoftContact> sweep;      // manifolds by colour, contiguous
    std::vector<int> run, cluster;       // one shape pair's contacts; one manifold's before reduction
    std::vector<uint8_t> taken;
    std::vector<WarmImpulse> warm;       // the step's warm start written here, then swapped in
    std::vector<int> warmIndex;          // (potential contacts) index into State::warm, -1: none
    std::vector<SoftJoint> joints;       // (joints)
    std::vector<Vec3> pos;               // (bodies) poses within the step, for the joints' rows
    std::vector<Quat> rot;
};

std::shared_ptr<SoftStepScratch> makeSoftStepScratch() { return std::make_shared<SoftStepScratch>(); }

const char* solveMethodName(SolveMethod method) { return method == SolveMethod::Soft ? "soft" : "newton"; }

bool parseSolveMethodName(const std::string& name, SolveMethod& out) {
    if (name == "newton") out = SolveMethod::Newton;
    else if (name == "soft") out = SolveMethod::Soft;
    else return false;
    return true;
}

bool softStepSupports(const Model& model, const WorldSettings& settings, std::string* why) {
    auto no = [&](const std::string& what) {
        if (why) *why = "the soft step (--method soft) " + what;
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

namespace {

Vec3 contactPoint(const PotentialContact& c) { return Real(0.5) * (c.pointA + c.pointB); }

// Keeps at most kSoftMaxPoints of the contacts in `idx` (one shape pair, one normal n): the
// deepest, the farthest from it, the one that makes the largest triangle with those two, and the
// one farthest outside that triangle, so that the points span the contact patch.
int reduceManifold(const PotentialContact* pc, const int* idx, int count, Vec3 n, int out[kSoftMaxPoints]) {
    if (count <= kSoftMaxPoints) {
        for (int k = 0; k < count; ++k) out[k] = idx[k];
        return count;
    }
    int best = 0;
    for (int k = 1; k < count; ++k)
        if (pc[idx[k]].gap < pc[idx[best]].gap) best = k;
    const Vec3 p1 = contactPoint(pc[idx[best]]);
    int second = -1;
    Real far = -1;
    for (int k = 0; k < count; ++k) {
        const Real d = lengthSq(contactPoint(pc[idx[k]]) - p1);
        if (k != best && d > far) far = d, second = k;
    }
    const Vec3 p2 = contactPoint(pc[idx[second]]);
    int third = -1;
    Real area = -1;
    for (int k = 0; k < count; ++k) {
        const Real a = std::fabs(dot(cross(contactPoint(pc[idx[k]]) - p1, p2 - p1), n));
        if (k != best && k != second && a > area) area = a, third = k;
    }
    const Vec3 p3 = contactPoint(pc[idx[third]]);
    // Outside the triangle: the largest area on the far side of one of its edges (oriented about n).
    const Real sign = dot(cross(p2 - p1, p3 - p1), n) >= 0 ? Real(1) : Real(-1);
    const Vec3 corner[3] = {p1, p2, p3};
    int fourth = -1;
    Real outside = 0;
    for (int k = 0; k < count; ++k) {
        if (k == best || k == second || k == third) continue;
        const Vec3 p = contactPoint(pc[idx[k]]);
        for (int e = 0; e < 3; ++e) {
            const Vec3 a = corner[e], b = corner[(e + 1) % 3];
            const Real o = -sign * dot(cross(b - a, p - a), n);
            if (o > outside) outside = o, fourth = k;
        }
    }
    out[0] = idx[best];
    out[1] = idx[second];
    out[2] = idx[third];
    if (fourth < 0) return 3;
    out[3] = idx[fourth];
    return 4;
}

Real effectiveMass(Real invMassA, const Mat3& invIA, Vec3 rA, Real invMassB, const Mat3& invIB, Vec3 rB, Vec3 dir) {
    const Vec3 ra = cross(rA, dir), rb = cross(rB, dir);
    const Real k = invMassA + invMassB + dot(ra, invIA * ra) + dot(rb, invIB * rb);
    return k > 0 ? Real(1) / k : Real(0);
}

struct SoftFrame {   // the step's constants every manifold is built with
    Real frictionScale;
    SoftParams moving, still;   // softness between two moving bodies, and against one that does not move
    const WarmImpulse* warm;
    int warmCount;
    Real warmScale;  // step impulses (State::warm) to substep impulses
};

// A manifold from contacts pick[0..count) of the potential list, all of one shape pair, normal n.
void buildManifold(const SoftStepInput& in, const State& state, const SoftStepScratch& s, const SoftFrame& f,
                   const int* pick, int count, Vec3 n, SoftContact& m) {
    const Model& model = in.model;
    const PotentialContact& first = in.potential[pick[0]];
    const int a = first.bodyA, b = first.bodyB;
    m.bodyA = s.solverIndex[a];
    m.bodyB = s.solverIndex[b];
    m.invMassA = m.bodyA >= 0 ? s.invMass[m.bodyA] : Real(0);
    m.invMassB = m.bodyB >= 0 ? s.invMass[m.bodyB] : Real(0);
    const Mat3 invInertiaA = m.bodyA >= 0 ? s.invInertia[m.bodyA] : mat3Zero();
    const Mat3 invInertiaB = m.bodyB >= 0 ? s.invInertia[m.bodyB] : mat3Zero();
    m.normal = n;
    tangentBasis(n, m.tangent[0], m.tangent[1]);
    m.friction = mixFriction(model, a, b, f.frictionScale);
    // Box2D's mixing rule for restitution: the larger of the two.
    const Real ea = model.materials[model.bodyMaterial[a]].restitution, eb = model.materials[model.bodyMaterial[b]].restitution;
    m.restitution = ea > eb ? ea : eb;
    m.softness = m.bodyA >= 0 && m.bodyB >= 0 ? f.moving : f.still;
    m.pointCount = count;
    const SoftBody still = softStill();
    const SoftBody& va = m.bodyA >= 0 ? s.bodies[m.bodyA] : still;
    const SoftBody& vb = m.bodyB >= 0 ? s.bodies[m.bodyB] : still;
    for (int k = 0; k < count; ++k) {
        const PotentialContact& c = in.potential[pick[k]];
        SoftPoint& p = m.points[k];
        p.contact = pick[k];
        p.rA = c.pointA - state.pos[a];
        p.rB = c.pointB - state.pos[b];
        p.baseSeparation = c.gap - dot(p.rA - p.rB, n);
        p.separation = c.gap;
        p.normalMass = effectiveMass(m.invMassA, invInertiaA, p.rA, m.invMassB, invInertiaB, p.rB, n);
        for (int t = 0; t < 2; ++t)
            p.tangentMass[t] = effectiveMass(m.invMassA, invInertiaA, p.rA, m.invMassB, invInertiaB, p.rB, m.tangent[t]);
        p.normalImpulse = p.tangentImpulse[0] = p.tangentImpulse[1] = 0;
        const int w = s.warmIndex[pick[k]];
        if (w >= 0) {
            p.normalImpulse = f.warm[w].normal > 0 ? f.warmScale * f.warm[w].normal : Real(0);
            for (int t = 0; t < 2; ++t) p.tangentImpulse[t] = f.warmScale * dot(f.warm[w].tangent, m.tangent[t]);
        }
        p.totalNormalImpulse = 0;
        p.relativeVelocity = dot(softRelativeVelocity(va, vb, p.rA, p.rB), n);
    }
}

// Potential contacts -> manifolds' contacts in s.picks, in the order of the contact list.
void pickManifolds(const SoftStepInput& in, SoftStepScratch& s) {
    s.picks.clear();
    const PotentialContact* pc = in.potential.data();
    const int total = (int)in.potential.size();
    for (int first = 0; first < total;) {
        int end = first + 1;
        while (end < total && pc[end].shapeA == pc[first].shapeA && pc[end].shapeB == pc[first].shapeB) ++end;
        s.run.clear();
        for (int ci = first; ci < end; ++ci) {
            const PotentialContact& c = pc[ci];
            if (c.bodyA < 0 || c.bodyB < 0) continue;                                // a deformable node's
            if (s.solverIndex[c.bodyA] < 0 && s.solverIndex[c.bodyB] < 0) continue;   // nothing moves
            if (duplicateOfEarlierContact(pc, ci, first)) continue;
            s.run.push_back(ci);
        }
        // Group by normal: each manifold takes the first remaining contact's normal.
        s.taken.assign(s.run.size(), 0);
        for (size_t k = 0; k < s.run.size(); ++k) {
            if (s.taken[k]) continue;
            const Vec3 n = pc[s.run[k]].normal;
            s.cluster.clear();
            for (size_t q = k; q < s.run.size(); ++q)
                if (!s.taken[q] && dot(pc[s.run[q]].normal, n) >= kManifoldNormalCos) {
                    s.taken[q] = 1;
                    s.cluster.push_back(s.run[q]);
                }
            SoftStepScratch::Pick p;
            p.bodyA = s.solverIndex[pc[s.run[k]].bodyA];
            p.bodyB = s.solverIndex[pc[s.run[k]].bodyB];
            p.normal = n;
            p.count = reduceManifold(pc, s.cluster.data(), (int)s.cluster.size(), n, p.contact);
            s.picks.push_back(p);
        }
        first = end;
    }
}

// Greedy colouring in manifold order (deterministic), then each manifold built in its colour's
// place. A body that does not move (-1) takes no colour: manifolds against the ground share colours.
void colourAndBuild(const SoftStepInput& in, const State& state, SoftStepScratch& s, const SoftFrame& f,
                    SoftStepResult& result) {
    const int n = (int)s.picks.size();
    s.bodyColours.assign(s.bodies.size(), 0);
    s.slot.resize(n);
    int count[kSoftColours + 1] = {};
    for (int i = 0; i < n; ++i) {
        const SoftStepScratch::Pick& m = s.picks[i];
        const uint32_t used = (m.bodyA >= 0 ? s.bodyColours[m.bodyA] : 0u) | (m.bodyB >= 0 ? s.bodyColours[m.bodyB] : 0u);
        int c = 0;
        while (c < kSoftColours && (used >> c) & 1u) ++c;
        if (c < kSoftColours) {
            if (m.bodyA >= 0) s.bodyColours[m.bodyA] |= 1u << c;
            if (m.bodyB >= 0) s.bodyColours[m.bodyB] |= 1u << c;
        }
        s.slot[i] = c;
        ++count[c];
    }
    s.colourStart[0] = 0;
    for (int c = 0; c <= kSoftColours; ++c) s.colourStart[c + 1] = s.colourStart[c] + count[c];
    int next[kSoftColours + 1];
    for (int c = 0; c <= kSoftColours; ++c) next[c] = s.colourStart[c];
    for (int i = 0; i < n; ++i) s.slot[i] = next[s.slot[i]]++;
    s.sweep.resize(n);
    for (int i = 0; i < n; ++i) {
        const SoftStepScratch::Pick& m = s.picks[i];
        buildManifold(in, state, s, f, m.contact, m.count, m.normal, s.sweep[s.slot[i]]);
    }
    result.colours = 0;
    for (int c = 0; c < kSoftColours; ++c) result.colours += count[c] > 0 ? 1 : 0;
    result.overflow = count[kSoftColours];
}

// One sweep: each colour's manifolds in a forEach (they share no moving body), the overflow serially.
template <class Exec, class F>
void sweepColours(Exec& ex, const SoftStepScratch& s, SoftContact* manifolds, const F& f) {
    for (int c = 0; c < kSoftColours; ++c) {
        const int begin = s.colourStart[c], n = s.colourStart[c + 1] - begin;
        if (n == 0) continue;
        SoftContact* m = manifolds + begin;
        ex.forEach(n, nullptr, nullptr, [=] CS_LAMBDA(int i) { f(m[i]); });
    }
    const int begin = s.colourStart[kSoftColours], n = s.colourStart[kSoftColours + 1] - begin;
    if (n == 0) return;
    SoftContact* m = manifolds + begin;
    ex.serial(nullptr, [=] CS_LAMBDA() {
        for (int i = 0; i < n; ++i) f(m[i]);
    });
}

}  // namespace

void softStep(const SoftStepInput& in, State& state, SoftStepScratch& s, std::vector<Contact>& contacts,
              SoftStepResult& result) {
    const Model& model = in.model;
    const SoftSettings& soft = in.settings.solver.soft;
    const int nb = model.bodyCount();
    const int substeps = soft.substeps > 0 ? soft.substeps : 1;
    const Real h = in.h / substeps, invH = 1 / h;
    result = SoftStepResult{};

    // ---- prepare: solver bodies, manifolds, colours ----
    s.solverIndex.assign(nb, -1);
    s.bodyOf.clear();
    for (int b = 0; b < nb; ++b)
        if (in.active[b] && !model.isStatic(b)) {
            s.solverIndex[b] = (int)s.bodyOf.size();
            s.bodyOf.push_back(b);
        }
    const int ns = (int)s.bodyOf.size();
    s.bodies.resize(ns);
    s.invMass.resize(ns);
    s.invInertia.resize(ns);
    for (int k = 0; k < ns; ++k) {
        const int b = s.bodyOf[k];
        s.bodies[k] = SoftBody{state.linVel[b], state.angVel[b], {0, 0, 0}, quatIdentity()};
        s.invMass[k] = model.invMass[b];
        s.invInertia[k] = worldInverseInertia(state.rot[b], model.invInertiaLocal[b]);
    }
    // Box2D's contact stiffness: at most a quarter of the substep rate, so that a contact's spring
    // is resolved by at least four substeps per period; twice as stiff against a body that does
    // not move (which cannot give way).
    const Real hertz = std::fmin(soft.contactHertz, Real(0.25) / h);
    SoftFrame frame{in.settings.frictionScale, makeSoft(hertz, soft.contactDampingRatio, h),
                    makeSoft(2 * hertz, soft.contactDampingRatio, h), state.warm.data(),
                    in.settings.solver.warmStart ? (int)state.warm.size() : 0, Real(1) / substeps};
    // Warm-start indices by one merge of two key-sorted lists (the narrow phase lists contacts in
    // key order, State::warm is sorted); a contact below the largest key merged so far is looked
    // up by binary search instead.
    const int np = (int)in.potential.size();
    s.warmIndex.resize(np);
    ContactKey merged{0, 0};
    for (int ci = 0, w = 0; ci < np; ++ci) {
        const ContactKey key = contactKeyOf(in.potential[ci]);
        if (frame.warmCount == 0) {
            s.warmIndex[ci] = -1;
        } else if (contactKeyLess(key, merged)) {
            s.warmIndex[ci] = findWarmIndex(frame.warm, frame.warmCount, key);
        } else {
            while (w < frame.warmCount && contactKeyLess(frame.warm[w].key, key)) ++w;
            s.warmIndex[ci] = w < frame.warmCount && frame.warm[w].key == key ? w : -1;
            merged = key;
        }
    }
    pickManifolds(in, s);
    colourAndBuild(in, state, s, frame, result);
    result.manifolds = (int)s.sweep.size();

    SoftDrag drag{};
    drag.body = in.drag.body >= 0 && in.drag.body < nb ? s.solverIndex[in.drag.body] : -1;
    if (drag.body >= 0) {
        const int b = in.drag.body;
        drag.r = rotate(state.rot[b], in.drag.localPoint);
        drag.target = in.drag.target;
        drag.start = state.pos[b] + drag.r - drag.target;
        drag.invMass = s.invMass[drag.body];
        drag.invInertia = s.invInertia[drag.body];
        // K = 1/m I - [r]x I^-1 [r]x, the point's inverse effective mass.
        const Mat3 k = drag.invMass * mat3Identity() + Real(-1) * (skew(drag.r) * drag.invInertia * skew(drag.r));
        drag.mass = inverse3(k);
        drag.softness = makeSoft(in.dragSettings.frequencyHz, in.dragSettings.dampingRatio, h);
        drag.maxImpulse = in.dragSettings.maxForce * h;
        drag.impulse = in.settings.solver.warmStart ? in.dragWarm / Real(substeps) : Vec3{0, 0, 0};
        const Real normWarm = length(drag.impulse);
        if (normWarm > drag.maxImpulse) drag.impulse = (drag.maxImpulse / normWarm) * drag.impulse;
        Real maxDiag = 0;
        for (int a = 0; a < 3; ++a) maxDiag = std::fmax(maxDiag, k.m[a][a]);
        result.dragEffectiveMass = maxDiag > 0 ? 1 / maxDiag : 0;
    }

    // Joints: the Newton path's rows (joint_rows_hd.h) at every substep's pose, warm-started from
    // State::jointWarm (step impulses, as the Newton path stores them) when the row count matches.
    const int nj = (int)model.joints.size();
    s.joints.resize(nj);
    s.pos.assign(state.pos.begin(), state.pos.end());
    s.rot.assign(state.rot.begin(), state.rot.end());
    int jointRows = 0;
    for (int k = 0; k < nj; ++k) {
        SoftJoint& j = s.joints[k];
        j.params = jointParams(model.joints[k]);
        j.bodyA = j.params.bodyA >= 0 ? s.solverIndex[j.params.bodyA] : -1;
        j.bodyB = j.params.bodyB >= 0 ? s.solverIndex[j.params.bodyB] : -1;
        j.invMassA = j.bodyA >= 0 ? s.invMass[j.bodyA] : Real(0);
        j.invMassB = j.bodyB >= 0 ? s.invMass[j.bodyB] : Real(0);
        j.invInertiaA = j.bodyA >= 0 ? s.invInertia[j.bodyA] : mat3Zero();
        j.invInertiaB = j.bodyB >= 0 ? s.invInertia[j.bodyB] : mat3Zero();
        j.warmFirst = jointRows;
        jointRows += jointRowCountOf(j.params);
    }
    const bool jointWarm = in.settings.solver.warmStart && (int)state.jointWarm.size() == jointRows;
    for (int k = 0; k < nj; ++k)
        for (int r = 0; r < kMaxJointRows; ++r)
            s.joints[k].lambda[r] = jointWarm && r < jointRowCountOf(s.joints[k].params)
                                        ? state.jointWarm[s.joints[k].warmFirst + r] / Real(substeps) : Real(0);
    // Box2D's joint stiffness: twice the contacts', at most half the substep rate.
    const SoftParams jointSoftness = makeSoft(std::fmin(soft.jointHertz, Real(0.5) / h), soft.jointDampingRatio, h);

    // ---- substeps ----
    HostExecutor& ex = s.exec;
    SoftBody* bodies = s.bodies.data();
    SoftContact* manifolds = s.sweep.data();
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
        sweepColours(ex, s, manifolds, [=] CS_LAMBDA(SoftContact& m) { softWarmStart(m, bodies, invInertia); });
        // solve with the soft bias
        solveJoints(true);
        ex.serial(nullptr, [=] CS_LAMBDA() { softSolveDrag(*dragPtr, bodies); });
        const bool moved = soft.relaxIterations == 0 && step > 0;   // else the relax sweep updated the separations
        sweepColours(ex, s, manifolds, [=] CS_LAMBDA(SoftContact& m) {
            softSolveContact(m, bodies, invInertia, invH, contactSpeed, true, moved);
        });
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
            sweepColours(ex, s, manifolds, [=] CS_LAMBDA(SoftContact& m) {
                softSolveContact(m, bodies, invInertia, invH, contactSpeed, false, moved);
            });
        }
        result.sweeps += 1 + soft.relaxIterations;
    }
    const Real threshold = soft.restitutionThreshold;
    sweepColours(ex, s, manifolds, [=] CS_LAMBDA(SoftContact& m) { softRestitution(m, bodies, invInertia, threshold); });
    ++result.sweeps;

    // ---- store: poses, velocities, contacts, warm start ----
    for (int k = 0; k < ns; ++k) {
        const int b = s.bodyOf[k];
        const SoftBody& sb = s.bodies[k];
        state.pos[b] += sb.dp;
        state.rot[b] = normalize(sb.dq * state.rot[b]);
        state.linVel[b] = sb.v;
        state.angVel[b] = sb.w;
    }
    if (drag.body >= 0) result.dragImpulse = Real(substeps) * drag.impulse;
    state.jointWarm.resize(jointRows);
    for (const SoftJoint& j : s.joints)
        for (int r = 0; r < j.rows.count; ++r) state.jointWarm[j.warmFirst + r] = Real(substeps) * j.lambda[r];
    contacts.clear();
    s.warm.clear();
    Real residual2 = 0;
    const SoftBody still = softStill();
    for (const SoftContact& m : s.sweep) {
        const SoftBody& a = m.bodyA >= 0 ? s.bodies[m.bodyA] : still;
        const SoftBody& b = m.bodyB >= 0 ? s.bodies[m.bodyB] : still;
        for (int j = 0; j < m.pointCount; ++j) {
            const SoftPoint& p = m.points[j];
            const PotentialContact& g = in.potential[p.contact];
            Contact c;
            c.geometry = g;
            c.mu = m.friction;
            c.normalImpulse = p.totalNormalImpulse;   // over the step, as the Newton method reports
            c.tangent[0] = m.tangent[0];
            c.tangent[1] = m.tangent[1];
            for (int t = 0; t < 2; ++t) c.tangentImpulse[t] = Real(substeps) * p.tangentImpulse[t];
            const Real tangent = std::sqrt(p.tangentImpulse[0] * p.tangentImpulse[0] + p.tangentImpulse[1] * p.tangentImpulse[1]);
            const Vec3 vr = softRelativeVelocity(a, b, p.rA, p.rB);
            const Real slip = length(vr - dot(vr, m.normal) * m.normal);
            c.sliding = p.normalImpulse > 0 && tangent >= Real(0.999) * m.friction * p.normalImpulse && slip > Real(1e-3);
            contacts.push_back(c);
            s.warm.push_back(WarmImpulse{contactKeyOf(g), Real(substeps) * p.normalImpulse,
                                         Real(substeps) * (p.tangentImpulse[0] * m.tangent[0] + p.tangentImpulse[1] * m.tangent[1])});
            // The normal rows' NCP merit at the step's end ([NSN] eqs. 20-30 with the minimum map):
            // min(s, r lambda) / h, r = h / m_n, s the end separation and lambda the step's impulse.
            const Real sEnd = p.baseSeparation + dot(a.dp - b.dp + rotate(a.dq, p.rA) - rotate(b.dq, p.rB), m.normal);
            const Real r = p.normalMass > 0 ? in.h / p.normalMass : Real(0);
            const Real phi = std::fmin(sEnd, r * p.totalNormalImpulse) / in.h;
            residual2 += phi * phi;
            ++result.points;
        }
    }
    result.residual = std::sqrt(residual2);
    std::sort(s.warm.begin(), s.warm.end(), [](const WarmImpulse& x, const WarmImpulse& y) { return x.key < y.key; });
    state.warm.swap(s.warm);
}

}  // namespace cs
