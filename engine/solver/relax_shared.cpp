// The relaxation methods' shared stages (relax_shared.h), moved from soft_step.cpp unchanged.
#include "engine/solver/relax_shared.h"

#include <algorithm>
#include <cmath>

#include "engine/contact/contact_model.h"
#include "engine/contact/standard_rows_hd.h"
#include "engine/solver/integrate.h"

namespace cs {

namespace {

// Contacts of one shape pair whose normals are this close (cosine) form one manifold (2.6 deg).
constexpr Real kManifoldNormalCos = Real(0.999);

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

void setLane(SoftLaneVec3& to, int l, Vec3 v) {
    to.x[l] = v.x;
    to.y[l] = v.y;
    to.z[l] = v.z;
}

Real effectiveMass(Real invMassA, const Mat3& invIA, Vec3 rA, Real invMassB, const Mat3& invIB, Vec3 rB, Vec3 dir) {
    const Vec3 ra = cross(rA, dir), rb = cross(rB, dir);
    const Real k = invMassA + invMassB + dot(ra, invIA * ra) + dot(rb, invIB * rb);
    return k > 0 ? Real(1) / k : Real(0);
}

// A manifold from contacts pick[0..count) of the potential list, all of one shape pair, normal n.
void buildManifold(const SoftStepInput& in, const State& state, const SoftStepScratch& s, const RelaxFrame& f,
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
    Real gap = m.points[0].separation, reachA2 = 0, reachB2 = 0;
    for (int k = 0; k < count; ++k) {
        const SoftPoint& p = m.points[k];
        gap = p.separation < gap ? p.separation : gap;
        reachA2 = lengthSq(p.rA) > reachA2 ? lengthSq(p.rA) : reachA2;
        reachB2 = lengthSq(p.rB) > reachB2 ? lengthSq(p.rB) : reachB2;
    }
    m.openGap = gap > 0 ? gap : Real(0);
    m.reachA = std::sqrt(reachA2);
    m.reachB = std::sqrt(reachB2);
    m.stale = false;
    m.quiet = softQuiet(m);
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
void colourAndBuild(const SoftStepInput& in, const State& state, SoftStepScratch& s, const RelaxFrame& f,
                    SoftStepResult& result) {
    const int n = (int)s.picks.size();
    s.bodyColours.assign(s.bodies.size(), 0);
    s.slot.resize(n);
    int count[kRelaxColours + 1] = {};
    for (int i = 0; i < n; ++i) {
        const SoftStepScratch::Pick& m = s.picks[i];
        const uint32_t used = (m.bodyA >= 0 ? s.bodyColours[m.bodyA] : 0u) | (m.bodyB >= 0 ? s.bodyColours[m.bodyB] : 0u);
        int c = 0;
        while (c < kRelaxColours && (used >> c) & 1u) ++c;
        if (c < kRelaxColours) {
            if (m.bodyA >= 0) s.bodyColours[m.bodyA] |= 1u << c;
            if (m.bodyB >= 0) s.bodyColours[m.bodyB] |= 1u << c;
        }
        s.slot[i] = c;
        ++count[c];
    }
    s.colourStart[0] = 0;
    for (int c = 0; c <= kRelaxColours; ++c) s.colourStart[c + 1] = s.colourStart[c] + count[c];
    int next[kRelaxColours + 1];
    for (int c = 0; c <= kRelaxColours; ++c) next[c] = s.colourStart[c];
    for (int i = 0; i < n; ++i) s.slot[i] = next[s.slot[i]]++;
    s.sweep.resize(n);
    for (int i = 0; i < n; ++i) {
        const SoftStepScratch::Pick& m = s.picks[i];
        buildManifold(in, state, s, f, m.contact, m.count, m.normal, s.sweep[s.slot[i]]);
    }
    result.colours = 0;
    for (int c = 0; c < kRelaxColours; ++c) result.colours += count[c] > 0 ? 1 : 0;
    result.overflow = count[kRelaxColours];
}

}  // namespace

void relaxPrepareBodies(const SoftStepInput& in, const State& state, SoftStepScratch& s) {
    const Model& model = in.model;
    const int nb = model.bodyCount();
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
}

// Warm-start indices by one merge of two key-sorted lists (the narrow phase lists contacts in
// key order, State::warm is sorted); a contact below the largest key merged so far is looked
// up by binary search instead.
void relaxWarmIndices(const SoftStepInput& in, const RelaxFrame& frame, SoftStepScratch& s) {
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
}

void relaxGatherManifolds(const SoftStepInput& in, const State& state, SoftStepScratch& s, const RelaxFrame& frame,
                          SoftStepResult& result) {
    pickManifolds(in, s);
    colourAndBuild(in, state, s, frame, result);
    result.manifolds = (int)s.sweep.size();
}

SoftDrag relaxMakeDrag(const SoftStepInput& in, const State& state, const SoftStepScratch& s, Real h, int warmDivisor,
                       SoftStepResult& result) {
    const int nb = in.model.bodyCount();
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
        drag.impulse = in.settings.solver.warmStart ? in.dragWarm / Real(warmDivisor) : Vec3{0, 0, 0};
        const Real normWarm = length(drag.impulse);
        if (normWarm > drag.maxImpulse) drag.impulse = (drag.maxImpulse / normWarm) * drag.impulse;
        Real maxDiag = 0;
        for (int a = 0; a < 3; ++a) maxDiag = std::fmax(maxDiag, k.m[a][a]);
        result.dragEffectiveMass = maxDiag > 0 ? 1 / maxDiag : 0;
    }
    return drag;
}

// Joints: the Newton path's rows (joint_rows_hd.h), warm-started from State::jointWarm (step
// impulses, as the Newton path stores them) when the row count matches.
int relaxPrepareJoints(const SoftStepInput& in, const State& state, SoftStepScratch& s, int warmDivisor) {
    const Model& model = in.model;
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
                                        ? state.jointWarm[s.joints[k].warmFirst + r] / Real(warmDivisor) : Real(0);
    return jointRows;
}

// Each colour's manifolds go into blocks in their order, those open at the step's start last, so
// that the manifolds the sweeps can skip share blocks (softWideIdle).
void relaxBuildBlocks(SoftStepScratch& s) {
    int count = 0;
    for (int c = 0; c < kRelaxColours; ++c)
        count += (s.colourStart[c + 1] - s.colourStart[c] + kSoftLanes - 1) / kSoftLanes;
    s.blocks.resize(count);
    int next = 0;
    for (int c = 0; c < kRelaxColours; ++c) {
        s.blockStart[c] = next;
        s.order.clear();
        for (int open = 0; open < 2; ++open)
            for (int i = s.colourStart[c]; i < s.colourStart[c + 1]; ++i)
                if ((s.sweep[i].openGap > 0) == (open == 1)) s.order.push_back(i);
        for (size_t first = 0; first < s.order.size(); first += kSoftLanes) {
            SoftWideBlock& k = s.blocks[next++];
            k.pointCount = 0;
            k.stale = false;
            k.quiet = true;
            k.restitution = false;
            for (int l = 0; l < kSoftLanes; ++l) {
                const int i = first + l < s.order.size() ? s.order[first + l] : -1;
                const SoftContact* m = i >= 0 ? &s.sweep[i] : nullptr;
                k.manifold[l] = i;
                k.bodyA[l] = m ? m->bodyA : -1;
                k.bodyB[l] = m ? m->bodyB : -1;
                const int points = m ? m->pointCount : 0;
                k.pointCount = points > k.pointCount ? points : k.pointCount;
                k.quiet = k.quiet && (!m || m->quiet);
                k.restitution = k.restitution || (m && m->restitution != 0);
                k.openGap[l] = m ? m->openGap : Real(0);
                k.reachA[l] = m ? m->reachA : Real(0);
                k.reachB[l] = m ? m->reachB : Real(0);
                k.invMassA[l] = m ? m->invMassA : Real(0);
                k.invMassB[l] = m ? m->invMassB : Real(0);
                const Vec3 zero{0, 0, 0};
                setLane(k.normal, l, m ? m->normal : zero);
                for (int t = 0; t < 2; ++t) setLane(k.tangent[t], l, m ? m->tangent[t] : zero);
                k.friction[l] = m ? m->friction : Real(0);
                k.restitutionCoef[l] = m ? m->restitution : Real(0);
                k.biasRate[l] = m ? m->softness.biasRate : Real(0);
                k.massScale[l] = m ? m->softness.massScale : Real(1);
                k.impulseScale[l] = m ? m->softness.impulseScale : Real(0);
                for (int j = 0; j < kSoftMaxPoints; ++j) {
                    SoftWidePoint& q = k.points[j];
                    // A padding point: open, no mass, so that it takes no impulse.
                    const SoftPoint pad{{0, 0, 0}, {0, 0, 0}, 1, 1, 0, {0, 0}, 0, {0, 0}, 0, 0, -1};
                    const SoftPoint& p = j < points ? m->points[j] : pad;
                    setLane(q.rA, l, p.rA);
                    setLane(q.rB, l, p.rB);
                    q.baseSeparation[l] = p.baseSeparation;
                    q.separation[l] = p.separation;
                    q.normalMass[l] = p.normalMass;
                    q.normalImpulse[l] = p.normalImpulse;
                    q.totalNormalImpulse[l] = p.totalNormalImpulse;
                    q.relativeVelocity[l] = p.relativeVelocity;
                    q.split[l] = 0;
                    for (int t = 0; t < 2; ++t) {
                        q.tangentMass[t][l] = p.tangentMass[t];
                        q.tangentImpulse[t][l] = p.tangentImpulse[t];
                    }
                }
            }
        }
    }
    s.blockStart[kRelaxColours] = next;
}

void relaxScatterBlocks(SoftStepScratch& s) {
    for (const SoftWideBlock& k : s.blocks)
        for (int l = 0; l < kSoftLanes; ++l) {
            if (k.manifold[l] < 0) continue;
            SoftContact& m = s.sweep[k.manifold[l]];
            for (int j = 0; j < m.pointCount; ++j) {
                SoftPoint& p = m.points[j];
                const SoftWidePoint& q = k.points[j];
                p.separation = q.separation[l];
                p.normalImpulse = q.normalImpulse[l];
                p.totalNormalImpulse = q.totalNormalImpulse[l];
                p.tangentImpulse[0] = q.tangentImpulse[0][l];
                p.tangentImpulse[1] = q.tangentImpulse[1][l];
            }
        }
}

void relaxStore(const SoftStepInput& in, State& state, SoftStepScratch& s, int substeps, const SoftDrag& drag,
                int jointRows, std::vector<Contact>& contacts, SoftStepResult& result) {
    const int ns = (int)s.bodyOf.size();
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
    // In manifold (contact list) order, not colour order: the potential contacts are read in
    // order, and the warm list comes out in key order (the narrow phase lists contacts by key),
    // so the sort below is a check except where the narrow phase's order has exceptions.
    int points = 0;
    for (const SoftContact& m : s.sweep) points += m.pointCount;
    contacts.resize(points);
    s.warm.resize(points);
    Real residual2 = 0;
    const SoftBody still = softStill();
    const int nm = (int)s.sweep.size();
    int out = 0;
    for (int i = 0; i < nm; ++i) {
        const SoftContact& m = s.sweep[s.slot[i]];
        const SoftBody& a = m.bodyA >= 0 ? s.bodies[m.bodyA] : still;
        const SoftBody& b = m.bodyB >= 0 ? s.bodies[m.bodyB] : still;
        for (int j = 0; j < m.pointCount; ++j, ++out) {
            const SoftPoint& p = m.points[j];
            const PotentialContact& g = in.potential[p.contact];
            Contact& c = contacts[out];
            c = Contact{};
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
            s.warm[out] = WarmImpulse{contactKeyOf(g), Real(substeps) * p.normalImpulse,
                                      Real(substeps) * (p.tangentImpulse[0] * m.tangent[0] + p.tangentImpulse[1] * m.tangent[1])};
            // The normal rows' NCP merit at the step's end ([NSN] eqs. 20-30 with the minimum map):
            // min(s, r lambda) / h, r = h / m_n, s the end separation and lambda the step's impulse.
            const Real sEnd = p.baseSeparation + dot(a.dp - b.dp + rotate(a.dq, p.rA) - rotate(b.dq, p.rB), m.normal);
            const Real r = p.normalMass > 0 ? in.h / p.normalMass : Real(0);
            const Real phi = std::fmin(sEnd, r * p.totalNormalImpulse) / in.h;
            residual2 += phi * phi;
        }
    }
    result.points = points;
    result.residual = std::sqrt(residual2);
    // Nearly sorted (a shape pair's points come grouped by manifold): an insertion sort, which
    // gives way to a full sort if the list turns out far from sorted.
    auto keyLess = [](const WarmImpulse& x, const WarmImpulse& y) { return x.key < y.key; };
    long moves = 0;
    const long budget = 8 * long(points) + 64;
    for (int i = 1; i < points && moves <= budget; ++i) {
        if (!keyLess(s.warm[i], s.warm[i - 1])) continue;
        const WarmImpulse w = s.warm[i];
        int k = i;
        for (; k > 0 && keyLess(w, s.warm[k - 1]); --k) s.warm[k] = s.warm[k - 1];
        s.warm[k] = w;
        moves += i - k;
    }
    if (moves > budget) std::sort(s.warm.begin(), s.warm.end(), keyLess);
    state.warm.swap(s.warm);
}

}  // namespace cs
