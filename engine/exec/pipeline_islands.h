// Islands and sleeping on the step pipeline: World::substep's calls into engine/solver/islands.h
// (wakeTouchedIslands after the broad phase, keepSleepingWarm / mergeSleepingWarm around the warm
// cache's store, updateSleep after integration) over the executor verbs (executor.h), so that the
// host executor gives the CPU's bits and a device runs the same text.
//
//   wake on touch   each pass marks every sleeping island that a pair or a joint ties to an awake
//                   dynamic body (not one woken alone, with partial waking) and wakes the marked;
//                   a gated loop of passes until one marks none (each pass wakes an island, so
//                   at most bodies + 1). Then the pairs with no awake dynamic body get the unused
//                   key and a stable sort moves them past the end (the kept ones in their order,
//                   the CPU's erase_if), and the sleeping bodies leave the solve (active 0, zero
//                   inverse mass and inertia and u~: World's active flags).
//   warm            before the store the cache's entries whose shapes are all static or asleep
//                   (a flag, a scan, a compaction), after it merged back by key (each entry's
//                   place: its index plus the number of the other list's keys below its own).
//   islands         labels by min-label propagation with pointer jumping: each member body (active,
//                   dynamic; the dragged body not with partial waking) starts as its own label; each
//                   pass lowers the label of the larger label to the smaller over every edge (the
//                   pairs, the rows' bodies, the joints; an atomic min) and sets label[b] =
//                   label[label[b]], until a pass changes none (a gated loop). The fixed point
//                   is unique: every body of an island is labelled with the island's lowest index,
//                   the root of the CPU's union-find, so State::sleepIsland is the CPU's.
//   sleep           per member the sleep clock (islands_hd.h), a flag on its label where it is
//                   below kTimeToSleep (the CPU's least clock of the island, order-free), then the
//                   members of unflagged labels asleep, their velocities zero.
//
// Not here yet: partial waking's load check and re-solves (wakeDisturbed), and the rest impulses
// it compares with (State::restImpulses): pipelineSupports refuses a world in which a body was
// woken alone (a drag with partial waking), where they decide.
#pragma once

#include "engine/exec/pipeline_data.h"
#include "engine/solver/islands_hd.h"

namespace cs {

// *to = min(*to, value) from many threads.
CS_HD void atomicMinInt(int* to, int value) {
#if defined(__CUDA_ARCH__)
    atomicMin(to, value);
#else
    int seen = __atomic_load_n(to, __ATOMIC_RELAXED);
    while (seen > value && !__atomic_compare_exchange_n(to, &seen, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
#endif
}

CS_HD int loadInt(const int* from) {
#if defined(__CUDA_ARCH__)
    return *(const volatile int*)from;
#else
    return __atomic_load_n(from, __ATOMIC_RELAXED);
#endif
}

CS_HD bool warmKeyBefore(const ContactKey& a, const ContactKey& b) {
    return a.shapes != b.shapes ? a.shapes < b.shapes : a.features < b.features;
}

// How many of the n sorted entries have a key below k.
CS_HD int warmKeysBelow(const WarmImpulse* entries, int n, const ContactKey& k) {
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (warmKeyBefore(entries[mid].key, k)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// After the broad phase: waking on touch, the pairs of sleeping islands dropped, the sleeping
// bodies out of the solve (World::findShapePairs' wakeTouchedIslands and active flags).
template <class Exec>
void recordWakeTouched(Exec& ex, PipelineData<Exec>& d) {
    PipelineSleep<Exec>& s = d.sleep;
    if (!s.on) return;
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    SleepCounters* sc = s.counters.data();
    const int nb = d.bodies;
    int* island = s.island.data();
    int* marked = s.marked.data();
    Real* sleepTime = s.sleepTime.data();
    uint8_t* alone = s.wokeAlone.data();
    const uint64_t* pairs = d.pairKeysOut.data();
    // a awake and dynamic (not woken alone, with partial waking), b asleep: b's island is marked
    auto touch = [=] CS_LAMBDA(int a, int b) {
        for (int k = 0; k < 2; ++k) {
            const bool awake = a >= 0 && m.invMass[a] != Real(0) && island[a] < 0 && !(sc->partial && alone[a]);
            if (awake && b >= 0 && island[b] >= 0 && !marked[island[b]]) {
                marked[island[b]] = 1;   // every writer writes 1
                atomicSetFlag(&sc->any);
            }
            const int t = a;
            a = b;
            b = t;
        }
    };
    ex.copy(s.startIsland.data(), island, nb);   // a substep the guard rolls back keeps these (World::rollBack)
    ex.copy(s.startTime.data(), sleepTime, nb);
    ex.copy(s.startAlone.data(), alone, nb);
    ex.forEach(nb, nullptr, nullptr, [=] CS_LAMBDA(int b) { marked[b] = 0; });
    ex.serial(nullptr, [=] CS_LAMBDA() { sc->loop = 1; });
    for (int pass = 0; pass <= nb; ++pass) {
        ex.serial(&sc->loop, [=] CS_LAMBDA() { sc->any = 0; });
        ex.forEach(d.pairCapacity, &c->pairCount, &sc->loop, [=] CS_LAMBDA(int p) {
            touch(m.shapeBody[int(pairs[p] >> 32)], m.shapeBody[int(uint32_t(pairs[p]))]);
        });
        ex.forEach(m.jointCount, nullptr, &sc->loop,
                   [=] CS_LAMBDA(int j) { touch(m.jointBodies[2 * j], m.jointBodies[2 * j + 1]); });
        ex.forEach(nb, nullptr, &sc->loop, [=] CS_LAMBDA(int b) {
            if (island[b] >= 0 && marked[island[b]]) {
                island[b] = -1;
                sleepTime[b] = 0;
                alone[b] = 0;
            }
        });
        ex.serial(&sc->loop, [=] CS_LAMBDA() { sc->loop = sc->any; });
        if (ex.stopped(&sc->loop)) break;
    }

    // The pairs with no awake dynamic body, and the sleeping bodies, out of the step.
    uint8_t* active = d.active.data();
    Real* invMass = d.bodyInvMass.data();
    Mat3* invInertia = d.bodyInvInertia.data();
    Spatial* unconstrained = d.unconstrained.data();
    ex.serial(nullptr, [=] CS_LAMBDA() { sc->asleep = sc->dropped = 0; });
    ex.forEach(nb, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        if (island[b] < 0) return;
        atomicSetFlag(&sc->asleep);
        active[b] = 0;
        invMass[b] = 0;
        invInertia[b] = mat3Zero();
        unconstrained[b] = Spatial{{0, 0, 0}, {0, 0, 0}};
    });
    if (ex.stopped(&sc->asleep)) return;
    uint64_t* sortedPairs = d.pairKeysOut.data();
    uint64_t* scratch = d.pairKeys.data();
    ex.setGate(&sc->asleep);
    ex.forEach(d.pairCapacity, &c->pairCount, nullptr, [=] CS_LAMBDA(int p) {
        const int a = m.shapeBody[int(sortedPairs[p] >> 32)], b = m.shapeBody[int(uint32_t(sortedPairs[p]))];
        const bool awakeA = a >= 0 && m.invMass[a] != Real(0) && island[a] < 0;
        const bool awakeB = b >= 0 && m.invMass[b] != Real(0) && island[b] < 0;
        if (awakeA || awakeB) return;
        sortedPairs[p] = ~uint64_t(0);   // unused slots sort last
        atomicAddInt(&sc->dropped, 1);
    });
    ex.setGate(nullptr);
    ex.sortKeys(sortedPairs, scratch, d.pairCapacity);   // stable: the kept pairs in their order
    ex.copy(sortedPairs, scratch, d.pairCapacity);
    ex.serial(&sc->asleep, [=] CS_LAMBDA() { c->pairCount -= sc->dropped; });
}

// Before the warm cache's store (recordIntegrate): its entries whose shapes are all static or
// asleep (keepSleepingWarm), in key order.
template <class Exec>
void recordKeepSleepingWarm(Exec& ex, PipelineData<Exec>& d) {
    PipelineSleep<Exec>& s = d.sleep;
    if (!s.on) return;
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    SleepCounters* sc = s.counters.data();
    const int* island = s.island.data();
    const WarmImpulse* warm = d.warm.data();
    int *flag = s.keepFlag.data(), *offset = s.keepOffset.data();
    WarmImpulse* kept = s.keptWarm.data();
    const int capacity = d.contactCapacity, shapes = d.shapes;
    ex.serial(nullptr, [=] CS_LAMBDA() { sc->keptWarm = 0; });
    if (!s.keepWarm || ex.stopped(&sc->asleep)) return;
    ex.forEach(capacity, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        flag[i] = 0;
        if (i >= c->warmCount || c->bad) return;
        const uint64_t sa = warm[i].key.shapes >> 32, sb = warm[i].key.shapes & 0xffffffffu;
        auto sleeper = [=](uint64_t shape) {   // a shape of a sleeping or static body
            if (shape >= uint64_t(shapes)) return false;
            const int b = m.shapeBody[shape];
            return b < 0 || m.invMass[b] == Real(0) || island[b] >= 0;
        };
        flag[i] = sleeper(sa) && sleeper(sb) ? 1 : 0;
    });
    ex.exclusiveScan(flag, offset, capacity);
    ex.forEach(capacity, &c->warmCount, nullptr, [=] CS_LAMBDA(int i) {
        if (flag[i]) kept[offset[i]] = warm[i];
    });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        sc->keptWarm = capacity > 0 ? offset[capacity - 1] + flag[capacity - 1] : 0;
    });
}

// After the store: the kept entries merged back by key (mergeSleepingWarm). Past the cache's
// capacity: overflow (the step runs again with a larger one).
template <class Exec>
void recordMergeSleepingWarm(Exec& ex, PipelineData<Exec>& d) {
    PipelineSleep<Exec>& s = d.sleep;
    if (!s.on) return;
    StepCounters* c = d.counters.data();
    SleepCounters* sc = s.counters.data();
    WarmImpulse *warm = d.warm.data(), *merged = d.warmNext.data();
    const WarmImpulse* kept = s.keptWarm.data();
    const int capacity = d.contactCapacity;
    if (ex.stopped(&sc->keptWarm)) return;
    ex.serial(&sc->keptWarm, [=] CS_LAMBDA() {
        const int total = c->warmCount + sc->keptWarm;
        if (total <= capacity) return;
        c->overflow = 1;
        c->neededContacts = total > c->neededContacts ? total : c->neededContacts;
        sc->keptWarm = 0;   // nothing merged: the step runs again
    });
    ex.forEach(capacity, &c->warmCount, &sc->keptWarm, [=] CS_LAMBDA(int i) {
        merged[i + warmKeysBelow(kept, sc->keptWarm, warm[i].key)] = warm[i];
    });
    ex.forEach(capacity, &sc->keptWarm, &sc->keptWarm, [=] CS_LAMBDA(int i) {
        merged[i + warmKeysBelow(warm, c->warmCount, kept[i].key)] = kept[i];
    });
    ex.serial(&sc->keptWarm, [=] CS_LAMBDA() { c->warmCount += sc->keptWarm; });
    ex.forEach(capacity, &c->warmCount, &sc->keptWarm, [=] CS_LAMBDA(int i) { warm[i] = merged[i]; });
}

// After integration (and the store): the islands of the awake bodies, their sleep clocks, and the
// islands whose every body has been a candidate for kTimeToSleep asleep (updateSleep). Not after a
// substep the guard rolled back (World::substep returns before it): that restores the sleep state
// of the substep's start (World::rollBack restores the whole state, the islands woken by touch too).
template <class Exec>
void recordUpdateSleep(Exec& ex, PipelineData<Exec>& d, Real h) {
    PipelineSleep<Exec>& s = d.sleep;
    if (!s.on) return;
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    SleepCounters* sc = s.counters.data();
    const int nb = d.bodies;
    const uint8_t* active = d.active.data();
    int *label = s.label.data(), *notReady = s.notReady.data(), *island = s.island.data();
    const int* driven = s.driven.data();
    Real* sleepTime = s.sleepTime.data();
    uint8_t* alone = s.wokeAlone.data();
    Vec3 *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const uint64_t* pairs = d.pairKeysOut.data();
    const int *rowBodyA = d.rowBodyA.data(), *rowBodyB = d.rowBodyB.data();
    const int* coupling = s.couplingEdges.data();
    auto member = [=] CS_LAMBDA(int b) {
        return b >= 0 && b < nb && active[b] && m.invMass[b] != Real(0) && !(sc->partial && b == sc->keepAwake);
    };
    auto join = [=] CS_LAMBDA(int a, int b) {   // the larger label lowered to the smaller
        if (!member(a) || !member(b)) return;
        const int la = loadInt(&label[a]), lb = loadInt(&label[b]);
        if (la == lb) return;
        atomicMinInt(&label[la > lb ? la : lb], la < lb ? la : lb);
        atomicSetFlag(&sc->any);
    };
    const int* startIsland = s.startIsland.data();
    const Real* startTime = s.startTime.data();
    const uint8_t* startAlone = s.startAlone.data();
    ex.forEach(nb, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        label[b] = !c->bad && member(b) ? b : -1;
        notReady[b] = 0;
        if (!c->bad) return;
        island[b] = startIsland[b];   // rolled back: the sleep state of the substep's start, too
        sleepTime[b] = startTime[b];
        alone[b] = startAlone[b];
    });
    ex.serial(nullptr, [=] CS_LAMBDA() {
        sc->loop = c->bad ? 0 : 1;
        sc->fellAsleep = 0;
    });
    for (int pass = 0; pass <= nb; ++pass) {
        ex.serial(&sc->loop, [=] CS_LAMBDA() { sc->any = 0; });
        ex.forEach(d.pairCapacity, &c->pairCount, &sc->loop, [=] CS_LAMBDA(int p) {
            join(m.shapeBody[int(pairs[p] >> 32)], m.shapeBody[int(uint32_t(pairs[p]))]);
        });
        ex.forEach(d.rowCapacity, &c->rowCount, &sc->loop, [=] CS_LAMBDA(int r) { join(rowBodyA[r], rowBodyB[r]); });
        ex.forEach(m.jointCount, nullptr, &sc->loop,
                   [=] CS_LAMBDA(int j) { join(m.jointBodies[2 * j], m.jointBodies[2 * j + 1]); });
        ex.forEach(s.couplingEdgeCount, nullptr, &sc->loop,
                   [=] CS_LAMBDA(int e) { join(coupling[2 * e], coupling[2 * e + 1]); });
        ex.forEach(nb, nullptr, &sc->loop, [=] CS_LAMBDA(int b) {   // pointer jumping
            const int l = loadInt(&label[b]);
            if (l < 0) return;
            const int ll = loadInt(&label[l]);
            if (ll < l) {
                atomicMinInt(&label[b], ll);
                atomicSetFlag(&sc->any);
            }
        });
        ex.serial(&sc->loop, [=] CS_LAMBDA() { sc->loop = sc->any; });
        if (ex.stopped(&sc->loop)) break;
    }
    ex.forEach(nb, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        if (label[b] < 0) return;
        const bool slow = belowSleepSpeeds(linVel[b], angVel[b]);
        sleepTime[b] = advancedSleepTime(sleepTime[b], slow, b != sc->keepAwake && !driven[b], h);
        if (!(sleepTime[b] >= kTimeToSleep)) notReady[label[b]] = 1;   // every writer writes 1
    });
    ex.forEach(nb, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        if (label[b] < 0 || notReady[label[b]]) return;
        island[b] = label[b];
        linVel[b] = angVel[b] = Vec3{0, 0, 0};
        alone[b] = 0;
        atomicSetFlag(&sc->fellAsleep);
    });
}

}  // namespace cs
