// The step pipeline's island and sleep data (engine/exec/pipeline_islands.h), in the executor's
// memory: the sleep state of the bodies (State::sleepTime, sleepIsland, wokeAlone: sent up before
// each step and down after it, World's state staying the source), the islands' labels, and the
// sleeping islands' warm impulses kept across the warm cache's store.
#pragma once

#include <algorithm>
#include <vector>

#include "engine/model.h"
#include "engine/solver/islands.h"
#include "engine/state.h"
#include "engine/world.h"

namespace cs {

// Scalars of the island stages, in the executor's memory.
struct SleepCounters {
    int keepAwake;      // the dragged body (-1: none): never sleeps; with partial waking in no island
    int partial;        // WorldSettings::partialWake: bodies woken alone wake nothing by touching
    int loop;           // a gated loop goes on (waking on touch, label propagation)
    int any;            // this pass marked an island (waking on touch) / changed a label (labels)
    int asleep;         // some body sleeps (after waking on touch)
    int dropped;        // pairs with no awake dynamic body, dropped after the broad phase
    int keptWarm;       // entries of the sleeping islands' warm impulses kept across the store
    int fellAsleep;     // some island fell asleep in this substep
};

template <class Exec>
struct PipelineSleep {
    template <class T>
    using Buffer = typename Exec::template Buffer<T>;
    bool on = false;                       // sleepingApplies() (islands.h), set by PipelineWorld per step
    bool keepWarm = true;                  // PipelineOptions::sleepingWarm
    int bodies = 0, warmCapacity = 0;
    Buffer<Real> sleepTime, startTime;     // (bodies) State::sleepTime, and at the substep's start
    Buffer<int> island, startIsland;       // (bodies) State::sleepIsland (-1: awake), and at the start
    Buffer<uint8_t> wokeAlone, startAlone; // (bodies) State::wokeAlone, and at the start
    Buffer<int> driven;                    // (bodies) 1: in a joint with a drive (never a candidate)
    Buffer<int> couplingEdges;             // (2 per edge) the bodies a joint coupling's rows tie together
    int couplingEdgeCount = 0;
    Buffer<int> label;                     // (bodies) island label: its lowest body index; -1: no member
    Buffer<int> notReady;                  // (bodies, by label) 1: a member has slept less than kTimeToSleep
    Buffer<int> marked;                    // (bodies, by island) waking on touch: the island wakes
    Buffer<int> keepFlag, keepOffset;      // (warm capacity) the sleeping islands' entries of the cache
    Buffer<WarmImpulse> keptWarm;          // (warm capacity) those entries, in key order
    Buffer<SleepCounters> counters;
    std::vector<Real> hostTime;            // the sleep state at the step's start (a step run again
    std::vector<int> hostIsland;           // after a buffer grew starts from it)
    std::vector<uint8_t> hostAlone;
};

// Sizes the per-body buffers to the model (the drive flags from its joints) and the warm buffers to
// the contact capacity. Returns whether a buffer moved (a recorded graph is then stale).
template <class Exec>
bool reserveSleep(PipelineSleep<Exec>& s, const Model& model, int contactCapacity) {
    bool moved = false;
    const int nb = model.bodyCount();
    if (s.bodies != nb || s.counters.capacity() == 0) {
        s.bodies = nb;
        const size_t n = std::max(nb, 1);
        for (auto* b : {&s.sleepTime, &s.startTime}) b->reserve(n);
        for (auto* b : {&s.island, &s.startIsland, &s.driven, &s.label, &s.notReady, &s.marked}) b->reserve(n);
        for (auto* b : {&s.wokeAlone, &s.startAlone}) b->reserve(n);
        s.counters.reserve(1);
        moved = true;
    }
    if (s.warmCapacity < contactCapacity) {
        s.warmCapacity = contactCapacity;
        for (auto* b : {&s.keepFlag, &s.keepOffset}) b->reserve(contactCapacity);
        s.keptWarm.reserve(contactCapacity);
        moved = true;
    }
    return moved;
}

}  // namespace cs
