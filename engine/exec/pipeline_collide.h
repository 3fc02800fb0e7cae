// The pipeline from the state to the constraint rows: World::substep up to the solve, for the
// standard contact model, over the executor verbs (executor.h).
//
//   prepare     per body: activity, inverse mass and inertia, u~ (engine/exec/step_hd.h prepareBody)
//   broad       shapes into the world (flat_model.h shapeToWorld; boxes grown by the margin and,
//               with settings.speculative, each part's reach); the sweep axis of largest
//               variance; shapes sorted by the low end of their box; one sorted shape per thread
//               counts its pairs, a scan gives offsets, the same thread writes them; pairs sorted
//               by (shapeA, shapeB): the CPU's findPairs, as a set and in the same order
//   narrow      one pair per thread into its slots (collideShapePair, speculative widening per
//               pair as the CPU's pairSettings), a scan of the counts
//               compacts them in pair order, i.e. in ContactKey order as on the CPU; with
//               narrow-phase reuse (WorldSettings::narrowReuse), a polytope pair at rest runs the
//               exact tests on its candidates of an earlier substep (collideReusingPair: the CPU's
//               decision and tests, feature_cache_hd.h)
//   rows        the standard model's duplicate merge (a keep flag per contact, a scan) and three
//               rows per kept contact, warm impulses found in last substep's sorted cache; with
//               row culling (engine/contact/row_culling.h), the contacts that cannot close within
//               the step get no rows (their flag in `culled`, for recordCullCheck after the solve)
// Counts past a buffer set counters.overflow and the size needed; a count that overflowed is
// set to 0 so that no later stage reads past what was written (the step is run again anyway).
#pragma once

#include "engine/contact/row_culling_hd.h"
#include "engine/exec/pipeline_data.h"
#include "engine/solver/speed_guard_hd.h"

namespace cs {

// Row culling runs on this pipeline (World::substep's condition but State::lastSolveConverged,
// which the step reads from its counters): the setting and the standard model. The FEM node-part
// contacts are culled with the rigid ones (pipeline_fem_contact.h recordFemCull), as World::substep
// culls them (fem_contact.h).
template <class Exec>
bool pipelineCulls(const PipelineData<Exec>&, const WorldSettings& ws) {
    return ws.solver.cullRows && ws.solver.contactModel == ContactModelType::Standard;
}

// The narrow phase's settings for one substep (with the speculative scale, step and |g| that
// partMotionReach and widenedPairSettings read, feature_pairs.h).
inline NarrowPhaseSettings substepNarrowSettings(const WorldSettings& ws) {
    return narrowPhaseSettings(ws, ws.dt / (ws.substeps > 0 ? ws.substeps : 1));
}

template <class Exec>
void recordPrepare(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    const Vec3 *pos = d.pos.data(), *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const Quat* rot = d.rot.data();
    uint8_t* active = d.active.data();
    Real* invMass = d.bodyInvMass.data();
    Mat3* invInertia = d.bodyInvInertia.data();
    Spatial* unconstrained = d.unconstrained.data();
    Vec3* goodPos = d.goodPos.data();
    Quat* goodRot = d.goodRot.data();
    const Vec3 gravity = ws.gravity;
    const int culls = pipelineCulls(d, ws) ? 1 : 0;
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->bad = 0;
        c->pairCount = c->contactCount = c->keptContacts = c->rowCount = 0;
        c->cullOn = culls && c->lastConverged;   // culling follows a converged solve (row_culling.h)
        c->cullFailed = c->cullRetry = c->culledContacts = c->cullResolves = c->femCulled = 0;
    });
    ex.forEach(d.bodies, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        prepareBody(m, rot, linVel, angVel, gravity, h, c->time, b, active, invMass, invInertia, unconstrained);
        goodPos[b] = pos[b];
        goodRot[b] = rot[b];
    });
    // The speed guard's scale at the substep's start (World::speedGuard): the fastest point of an
    // active dynamic body and the fastest FEM node.
    const Vec3* nodeVel = d.fem.vel.data();
    const Real g = length(gravity), maxPushoutSpeed = ws.solver.maxPushoutSpeed;
    ex.max(&c->bodies, nullptr, &c->fastest, [=] CS_LAMBDA(int b) {
        return active[b] && m.invMass[b] != Real(0) ? bodyPointSpeed(linVel[b], angVel[b], m.reach[b]) : Real(0);
    });
    ex.max(&c->femNodes, nullptr, &c->fastestNode, [=] CS_LAMBDA(int n) { return length(nodeVel[n]); });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        const Real scale = speedScaleOf(fmax(c->fastest, c->fastestNode), g, h, maxPushoutSpeed) + c->dragSpeed;
        c->speedLimit = sceneSpeedLimit(scale);
    });
}

template <class Exec>
void recordBroadPhase(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws) {
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    const int shapes = d.shapes, capacity = d.pairCapacity;
    const Vec3* pos = d.pos.data();
    const Quat* rot = d.rot.data();
    const Vec3 *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const Real margin = ws.contactMargin;
    const NarrowPhaseSettings narrow = substepNarrowSettings(ws);
    const ShapeWorldView world{d.pose.data(), d.aabb.data(), d.centroid.data(), d.worldVertices.data(),
                               d.worldEdges.data(), d.worldFaces.data()};
    const Aabb* aabb = d.aabb.data();
    const uint8_t* active = d.active.data();
    Real *key = d.sortKey.data(), *sortedLo = d.sortKeyOut.data();
    int *shape = d.sortShape.data(), *sortedShape = d.sortShapeOut.data();
    int *count = d.sweepCount.data(), *offset = d.sweepOffset.data();
    uint64_t *pairs = d.pairKeys.data(), *sortedPairs = d.pairKeysOut.data();

    ex.forEach(shapes, nullptr, nullptr, [=] CS_LAMBDA(int s) {   // boxes grown by the margin and the speculative reach
        const int b = m.shapeBody[s];   // (computeContactAabbs)
        const Real arm = partArm(m.shapeLocal[s], m.shapeRadius[s]);
        const Real reach = partMotionReach(narrow, m.invMass[b] != Real(0), linVel[b], angVel[b], arm);
        shapeToWorld(m, pos, rot, margin + reach, s, world);
    });
    // Sweep axis: largest variance of the box centres (broad_phase.cpp sweepAxis; ties: lowest axis).
    ex.sum(&c->shapes, nullptr, kBlockedSum, &c->centreSum, [=] CS_LAMBDA(int s) {
        return Real(0.5) * (aabb[s].lo + aabb[s].hi);
    });
    ex.sum(&c->shapes, nullptr, kBlockedSum, &c->centreSumSq, [=] CS_LAMBDA(int s) {
        const Vec3 x = Real(0.5) * (aabb[s].lo + aabb[s].hi);
        return Vec3{x.x * x.x, x.y * x.y, x.z * x.z};
    });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        const Real n = Real(c->shapes > 0 ? c->shapes : 1);
        Real best = -1;
        c->axis = 0;
        for (int k = 0; k < 3; ++k) {
            const Real mean = c->centreSum[k] / n, var = c->centreSumSq[k] / n - mean * mean;
            if (var > best) {
                best = var;
                c->axis = k;
            }
        }
    });
    ex.forEach(shapes, nullptr, nullptr, [=] CS_LAMBDA(int s) {
        key[s] = active[m.shapeBody[s]] ? aabb[s].lo[c->axis] : kHuge;   // dormant shapes sort last
        shape[s] = s;
    });
    ex.sortPairs(key, shape, sortedLo, sortedShape, shapes);
    ex.forEach(shapes, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        count[i] = sweepShape(m, active, aabb, sortedLo, sortedShape, shapes, c->axis, i, nullptr);
    });
    ex.exclusiveScan(count, offset, shapes);
    ex.serial(nullptr, [=] CS_LAMBDA() {
        const int total = shapes > 0 ? offset[shapes - 1] + count[shapes - 1] : 0;
        c->neededPairs = total > c->neededPairs ? total : c->neededPairs;
        c->pairCount = total <= capacity ? total : 0;
        if (total > capacity) c->overflow = 1;
    });
    ex.forEach(shapes, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        if (offset[i] + count[i] <= capacity) sweepShape(m, active, aabb, sortedLo, sortedShape, shapes, c->axis, i, pairs + offset[i]);
    });
    ex.forEach(capacity, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        if (i >= c->pairCount) pairs[i] = ~uint64_t(0);   // unused slots sort last
    });
    ex.sortKeys(pairs, sortedPairs, capacity);
}

// Narrow-phase reuse on the pipeline's data: the last substep's entries (in pair order, the keys
// sorted) and candidates, this substep's, and the count of the new pool's candidates handed out.
struct PairCacheView {
    const PairCacheEntry* last;
    const FeatureCandidate* lastCandidates;
    PairCacheEntry* next;
    FeatureCandidate* nextCandidates;
    int lastCount, capacity;
    int* used;
};

// The last substep's entry of pair `key`, or null (no entry, or the pair had none).
CS_HD const PairCacheEntry* findPairCacheEntry(const PairCacheEntry* entries, int count, uint64_t key) {
    int lo = 0, hi = count;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (entries[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < count && entries[lo].key == key && entries[lo].count >= 0 ? &entries[lo] : nullptr;
}

// A contiguous stretch of n candidates of the new pool, or -1 when it is full (the step then runs
// again with a larger one: recordNarrowPhase).
CS_HD int takeCandidates(const PairCacheView& cache, int n) {
    const int at = atomicAddInt(cache.used, n);
    return at + n <= cache.capacity ? at : -1;
}

// Pair p (shapes sa < sb, pair settings s) with narrow-phase reuse, as collidePairs does on the
// CPU with a FeatureCache (narrow_phase.cpp collideCachedPair): the decision of decidePairReuse on
// the pair's last entry; Reuse runs the exact tests on those candidates and keeps them for the
// next substep; Rebuild lists new ones at the current poses (counted first, then written into
// the pool) and runs the tests on them; Full (a moving pair, or a sphere) runs the plain search and
// keeps no entry. A pool too small for the candidates: the plain search, the same contacts
// (feature_cache.h), and overflow set by the caller. Returns the decision.
CS_HD ReuseMode collideReusingPair(const FlatModelView& m, const ShapeWorldView& w, const PairCacheView& cache, int p,
                                   uint64_t key, int sa, int sb, const NarrowPhaseSettings& s, Real baseMargin,
                                   const PairSide& sideA, const PairSide& sideB, ContactSink& sink) {
    PairCacheEntry& entry = cache.next[p];
    entry.key = key;
    entry.count = -1;
    if (m.shapePolytope[sa] < 0 || m.shapePolytope[sb] < 0) {
        collideShapePair(m, w, sa, sb, s, sink);
        return ReuseMode::Full;
    }
    const FlatPolytope& pa = m.polytopes[m.shapePolytope[sa]];
    const FlatPolytope& pb = m.polytopes[m.shapePolytope[sb]];
    const PairCacheEntry* last = findPairCacheEntry(cache.last, cache.lastCount, key);
    Real delta = 0;
    const ReuseMode mode = decidePairReuse(last ? &last->frame : nullptr, LocalBounds{pa.centroid, pa.boundingRadius},
                                           LocalBounds{pb.centroid, pb.boundingRadius}, w.pose[sa], w.pose[sb], s,
                                           baseMargin, sideA, sideB, delta);
    const PolytopeView A = shapePolytopeView(m, w, sa), B = shapePolytopeView(m, w, sb);
    const FeatureCandidate* candidates = nullptr;
    const CandidateFrame* frame = nullptr;
    int n = 0;
    if (mode == ReuseMode::Reuse) {
        candidates = cache.lastCandidates + last->first;
        n = last->count;
        frame = &last->frame;
        const int at = takeCandidates(cache, n);
        if (at >= 0) {
            for (int k = 0; k < n; ++k) cache.nextCandidates[at + k] = candidates[k];
            entry.first = at;
            entry.count = n;
            entry.frame = last->frame;
        }
    } else if (mode == ReuseMode::Rebuild) {
        const Real slack = kSlackFraction * baseMargin;
        CandidateSink counted{nullptr, 0, 0};
        buildCandidates(A, B, w.pose[sa], w.pose[sb], s, slack, entry.frame, counted);
        const int at = takeCandidates(cache, counted.count);
        if (at >= 0) {
            CandidateSink into{cache.nextCandidates + at, counted.count, 0};
            buildCandidates(A, B, w.pose[sa], w.pose[sb], s, slack, entry.frame, into);
            entry.first = at;
            entry.count = into.count;
            candidates = into.out;
            n = into.count;
            frame = &entry.frame;
        }
    }
    const int first = sink.count;
    if (!frame) collidePolytopePair(A, B, s, sink);
    else if (boundsMayTouch(A.centroid, A.boundingRadius, B.centroid, B.boundingRadius, s.margin))
        collideCandidates(A, B, s, *frame, candidates, n, delta, sink);
    for (int i = first, stored = sink.stored(); i < stored; ++i) {
        sink.out[i].shapeA = sa;
        sink.out[i].shapeB = sb;
        sink.out[i].bodyA = m.shapeBody[sa];
        sink.out[i].bodyB = m.shapeBody[sb];
    }
    return mode;
}

template <class Exec>
void recordNarrowPhase(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws) {
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    const ShapeWorldView world{d.pose.data(), d.aabb.data(), d.centroid.data(), d.worldVertices.data(),
                               d.worldEdges.data(), d.worldFaces.data()};
    const int pairCapacity = d.pairCapacity, slots = d.pairSlots, contactCapacity = d.contactCapacity;
    const uint64_t* pairs = d.pairKeysOut.data();
    PotentialContact *slot = d.slots.data(), *contacts = d.contacts.data();
    int *count = d.pairContactCount.data(), *offset = d.pairContactOffset.data(), *pairFirst = d.contactPairFirst.data();
    const Vec3 *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const NarrowPhaseSettings narrow = substepNarrowSettings(ws);
    const bool reuse = ws.narrowReuse;
    PairCacheEntry *entries0 = d.pairCache[0].data(), *entries1 = d.pairCache[1].data();
    FeatureCandidate *pool0 = d.candidates[0].data(), *pool1 = d.candidates[1].data();
    const int candidateCapacity = d.candidateCapacity;

    if (reuse) ex.serial(nullptr, [=] CS_LAMBDA() { c->candidatesUsed = c->reusedPairs = c->rebuiltPairs = c->fullPairs = 0; });
    ex.forEach(pairCapacity, nullptr, nullptr, [=] CS_LAMBDA(int p) {
        if (p >= c->pairCount) {
            count[p] = 0;
            return;
        }
        ContactSink sink{slot + size_t(p) * slots, slots, 0};
        const int sa = int(pairs[p] >> 32), sb = int(uint32_t(pairs[p]));
        const int ba = m.shapeBody[sa], bb = m.shapeBody[sb];   // speculative widening (pairSettings)
        const Real armA = partArm(m.shapeLocal[sa], m.shapeRadius[sa]), armB = partArm(m.shapeLocal[sb], m.shapeRadius[sb]);
        const bool dynamicA = m.invMass[ba] != Real(0), dynamicB = m.invMass[bb] != Real(0);
        const NarrowPhaseSettings ps = widenedPairSettings(narrow, dynamicA, linVel[ba], angVel[ba], armA,
                                                           dynamicB, linVel[bb], angVel[bb], armB);
        if (reuse) {
            const int side = c->reuseSide;
            const PairCacheView cache{side ? entries1 : entries0, side ? pool1 : pool0, side ? entries0 : entries1,
                                      side ? pool0 : pool1, c->reusePairs, candidateCapacity, &c->candidatesUsed};
            const ReuseMode mode = collideReusingPair(m, world, cache, p, pairs[p], sa, sb, ps, narrow.margin,
                                                      PairSide{dynamicA, linVel[ba], angVel[ba], armA},
                                                      PairSide{dynamicB, linVel[bb], angVel[bb], armB}, sink);
            atomicAddInt(mode == ReuseMode::Reuse ? &c->reusedPairs
                         : mode == ReuseMode::Rebuild ? &c->rebuiltPairs : &c->fullPairs, 1);
        } else {
            collideShapePair(m, world, sa, sb, ps, sink);
        }
        count[p] = sink.stored();
        if (sink.count > slots) {   // a sink too small: the step runs again with larger slots
            atomicMaxInt(&c->neededSlots, sink.count);
            atomicSetFlag(&c->overflow);
        }
    });
    if (reuse)   // this substep's entries become the last ones; a pool too small: grow, run again
        ex.serial(nullptr, [=] CS_LAMBDA() {
            c->reuseSide ^= 1;
            c->reusePairs = c->pairCount;
            c->neededCandidates = c->candidatesUsed > c->neededCandidates ? c->candidatesUsed : c->neededCandidates;
            if (c->candidatesUsed > candidateCapacity) c->overflow = 1;
        });
    ex.exclusiveScan(count, offset, pairCapacity);
    ex.serial(nullptr, [=] CS_LAMBDA() {
        const int total = pairCapacity > 0 ? offset[pairCapacity - 1] + count[pairCapacity - 1] : 0;
        c->neededContacts = total > c->neededContacts ? total : c->neededContacts;
        c->contactCount = total <= contactCapacity ? total : 0;
        if (total > contactCapacity) c->overflow = 1;
    });
    ex.forEach(pairCapacity, &c->pairCount, nullptr, [=] CS_LAMBDA(int p) {
        if (c->contactCount == 0) return;
        for (int k = 0; k < count[p]; ++k) {
            contacts[offset[p] + k] = slot[size_t(p) * slots + k];
            pairFirst[offset[p] + k] = offset[p];
        }
    });
}

template <class Exec>
void recordContactRows(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    const int capacity = d.contactCapacity;
    const PotentialContact* contacts = d.contacts.data();
    const int* pairFirst = d.contactPairFirst.data();
    int *keep = d.keep.data(), *keepOffset = d.keepOffset.data();
    const Vec3* pos = d.pos.data();
    const WarmImpulse* warm = d.warm.data();
    const Real stabilization = ws.solver.stabilization, maxPushout = ws.solver.maxPushoutSpeed * h;
    const Real frictionScale = ws.frictionScale;
    const bool warmStart = ws.solver.warmStart;
    const bool ccpRelaxed = ws.solver.contactModel == ContactModelType::CCP;
    const FlatRows rows{d.kind.data(), d.rowBodyA.data(), d.rowBodyB.data(), d.jacobianA.data(), d.jacobianB.data(),
                        d.bias.data(), d.softness.data(), d.mu.data(), d.normalRow.data(), d.maxImpulse.data(),
                        d.lambda.data(), d.owner.data()};

    // Row culling (World::substep's buildStandardRows with a RowCull): v_push from the deepest
    // overlap, then the predictor per merged contact, at the step's start state.
    int* culled = d.culled.data();
    const Vec3 *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const Vec3 gravity = ws.gravity;
    const bool culls = pipelineCulls(d, ws);
    if (culls) {
        const Real maxPushoutSpeed = ws.solver.maxPushoutSpeed;
        ex.max(&c->contactCount, &c->cullOn, &c->cullPushout, [=] CS_LAMBDA(int i) { return -contacts[i].gap; });
        ex.serial(&c->cullOn, [=] CS_LAMBDA() {
            c->cullPushout = cullPushoutSpeedOf(c->cullPushout, stabilization, maxPushoutSpeed, h);
        });
    }
    ex.forEach(capacity, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        const bool merged = i < c->contactCount && !duplicateOfEarlierContact(contacts, i, pairFirst[i]);
        bool out = false;
        if (merged && c->cullOn) {
            const PotentialContact& k = contacts[i];
            out = cullContactCannotClose(k, k.bodyA >= 0 && m.invMass[k.bodyA] != Real(0),
                                         k.bodyB >= 0 && m.invMass[k.bodyB] != Real(0), pos, linVel, angVel, gravity,
                                         c->cullPushout, h);
        }
        keep[i] = merged && !out ? 1 : 0;
        culled[i] = out ? 1 : 0;
    });
    if (culls)
        ex.sum(&c->contactCount, &c->cullOn, kSerialSum, &c->culledContacts, [=] CS_LAMBDA(int i) { return culled[i]; });
    ex.exclusiveScan(keep, keepOffset, capacity);
    const int first = d.joints.leadingRows();   // after the joints' and the drag's rows
    ex.serial(nullptr, [=] CS_LAMBDA() {
        c->keptContacts = capacity > 0 ? keepOffset[capacity - 1] + keep[capacity - 1] : 0;
        c->rowCount = first + 3 * c->keptContacts;   // kept <= contacts <= capacity: rows fit
    });
    int *bodyC = d.fem.wide() ? d.fem.bodyC.data() : nullptr, *bodyD = d.fem.bodyD.data();
    Spatial *jacobianC = d.fem.jacobianC.data(), *jacobianD = d.fem.jacobianD.data();
    ex.forEach(capacity, &c->contactCount, nullptr, [=] CS_LAMBDA(int i) {
        if (!keep[i]) return;
        const int n = first + 3 * keepOffset[i];
        writeStandardContactRows(m, contacts[i], i, pos, stabilization, maxPushout, frictionScale, warm, c->warmCount,
                                 warmStart, n, rows, ccpRelaxed);
        if (!bodyC) return;   // rows on four bodies elsewhere: the contacts' C and D columns empty
        for (int k = n; k < n + 3; ++k) {
            bodyC[k] = bodyD[k] = -1;
            jacobianC[k] = jacobianD[k] = Spatial{{0, 0, 0}, {0, 0, 0}};
        }
    });
}

}  // namespace cs
