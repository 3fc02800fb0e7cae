// Broad phase, narrow phase and the standard contact model on the device: World::substep from
// the shape AABBs to the constraint rows, with the same output order as the CPU.
//
//   shapes      shapeToWorld per shape (gpu/flat_model.h): pose, AABB, world polytope
//   broad       sort-based sweep (broad_phase.cpp): shapes sorted by the low end of their AABB on
//               the axis of largest variance, one thread per sorted shape counts and then writes
//               its pairs (count, scan, write: no atomics), pairs sorted by (shapeA, shapeB)
//   narrow      one thread per pair runs collideShapePair into its slot of pairSlots contacts;
//               a scan of the counts compacts them in pair order, i.e. in ContactKey order
//   rows        the standard model's duplicate merge and three rows per kept contact, with
//               the warm impulses found by binary search in last step's sorted cache
// Every count that can exceed its buffer is written to StepCounters; the host grows the buffer
// and runs the step again (gpu_world.cu), so no pair or contact is ever dropped.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "gpu/device_world.cuh"

namespace cs::gpu {
namespace {

__global__ void shapesKernel(FlatModelView m, const Vec3* pos, const Quat* rot, Real margin, ShapeWorldView w) {
    const int s = threadIndex();
    if (s < m.shapeCount) shapeToWorld(m, pos, rot, margin, s, w);
}

// The sweep axis of broad_phase.cpp (largest variance of the box centres), in one block with a
// fixed summation order.
__global__ void sweepAxisKernel(const Aabb* aabb, int n, StepCounters* c) {
    __shared__ Real shared[kReduceThreads];
    Real sum[3] = {0, 0, 0}, sumSq[3] = {0, 0, 0};
    for (int i = int(threadIdx.x); i < n; i += kReduceThreads)
        for (int k = 0; k < 3; ++k) {
            const Real x = Real(0.5) * (aabb[i].lo[k] + aabb[i].hi[k]);
            sum[k] += x;
            sumSq[k] += x * x;
        }
    Real var[3];
    for (int k = 0; k < 3; ++k) {
        const Real s = blockReduce<ReduceOp::Dot>(sum[k], shared);
        const Real s2 = blockReduce<ReduceOp::Dot>(sumSq[k], shared);
        const Real count = Real(n > 0 ? n : 1);
        var[k] = s2 / count - (s / count) * (s / count);
    }
    if (threadIdx.x == 0) c->axis = var[1] > var[0] ? (var[2] > var[1] ? 2 : 1) : (var[2] > var[0] ? 2 : 0);
}

__global__ void sortKeysKernel(FlatModelView m, const uint8_t* active, const Aabb* aabb, const StepCounters* c,
                               Real* key, int* shape) {
    const int s = threadIndex();
    if (s >= m.shapeCount) return;
    key[s] = active[m.shapeBody[s]] ? aabb[s].lo[c->axis] : kHuge;   // dormant shapes sort last
    shape[s] = s;
}

__global__ void sweepKernel(FlatModelView m, const uint8_t* active, const Aabb* aabb, const Real* sortedLo,
                            const int* sortedShape, const StepCounters* c, const int* offset, int capacity,
                            int* count, uint64_t* pairs) {
    const int i = threadIndex();
    if (i >= m.shapeCount) return;
    if (!offset) {
        count[i] = sweepShape(m, active, aabb, sortedLo, sortedShape, m.shapeCount, c->axis, i, nullptr);
    } else if (offset[i] + count[i] <= capacity) {
        sweepShape(m, active, aabb, sortedLo, sortedShape, m.shapeCount, c->axis, i, pairs + offset[i]);
    }
}

// total = last offset + last count of an exclusive scan; the need and the overflow are recorded.
__global__ void scanTotalKernel(const int* offset, const int* count, int n, int capacity, int* total, int* needed,
                                StepCounters* c) {
    const int t = n > 0 ? offset[n - 1] + count[n - 1] : 0;
    *total = t;
    if (needed && t > *needed) *needed = t;
    if (t > capacity) c->overflow = 1;
}

__global__ void padPairsKernel(const StepCounters* c, int capacity, uint64_t* pairs) {
    const int i = threadIndex();
    if (i < capacity && i >= c->pairCount) pairs[i] = ~uint64_t(0);
}

__global__ void narrowKernel(FlatModelView m, ShapeWorldView w, NarrowPhaseSettings settings, const uint64_t* pairs,
                             int capacity, int slots, StepCounters* c, PotentialContact* slot, int* count) {
    const int p = threadIndex();
    if (p >= capacity) return;
    if (p >= c->pairCount) {
        count[p] = 0;
        return;
    }
    ContactSink sink{slot + size_t(p) * slots, slots, 0};
    collideShapePair(m, w, int(pairs[p] >> 32), int(uint32_t(pairs[p])), settings, sink);
    count[p] = sink.stored();
    if (sink.count > slots) {
        atomicMax(&c->neededSlots, sink.count);   // integer max: order-independent
        c->overflow = 1;
    }
}

__global__ void compactKernel(const StepCounters* c, int pairCapacity, int slots, int contactCapacity,
                              const PotentialContact* slot, const int* count, const int* offset,
                              PotentialContact* contacts, int* pairFirst) {
    const int p = threadIndex();
    if (p >= pairCapacity || p >= c->pairCount || offset[p] + count[p] > contactCapacity) return;
    for (int k = 0; k < count[p]; ++k) {
        contacts[offset[p] + k] = slot[size_t(p) * slots + k];
        pairFirst[offset[p] + k] = offset[p];
    }
}

__global__ void keepKernel(const StepCounters* c, int capacity, const PotentialContact* contacts, const int* pairFirst,
                           int* keep) {
    const int i = threadIndex();
    if (i >= capacity) return;
    keep[i] = i < c->contactCount && i < capacity && !duplicateOfEarlierContact(contacts, i, pairFirst[i]) ? 1 : 0;
}

__global__ void rowCountKernel(StepCounters* c, int rowCapacity) {
    c->rowCount = 3 * c->keptContacts;
    if (c->rowCount > c->neededRows) c->neededRows = c->rowCount;
    if (c->rowCount > rowCapacity) {
        c->overflow = 1;
        c->rowCount = 0;   // nothing is solved in a step that runs again
    }
}

__global__ void rowsKernel(FlatModelView m, const StepCounters* c, int contactCapacity, const PotentialContact* contacts,
                           const int* keep, const int* keepOffset, const Vec3* pos, Real stabilization,
                           Real maxPushout, Real frictionScale, const WarmImpulse* warm, bool warmStart, FlatRows rows) {
    const int i = threadIndex();
    if (i >= contactCapacity || i >= c->contactCount || !keep[i] || c->rowCount == 0) return;
    writeStandardContactRows(m, contacts[i], i, pos, stabilization, maxPushout, frictionScale, warm, c->warmCount, warmStart,
                             3 * keepOffset[i], rows);
}

template <class T>
void exclusiveSum(DeviceWorld& d, const T* in, T* out, int n) {
    size_t bytes = 0;
    CS_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, d.stream));
    CS_CUDA(cub::DeviceScan::ExclusiveSum(d.cubScratch(bytes), bytes, in, out, n, d.stream));
}

}  // namespace

void collideOnDevice(DeviceWorld& d, const WorldSettings& settings, Real h, cudaEvent_t broadDone,
                     cudaEvent_t narrowDone, cudaEvent_t rowsDone) {
    const FlatModelView& m = d.model;
    StepCounters* c = d.deviceCounters();
    const int shapes = d.shapes;
    cudaStream_t st = d.stream;

    // ---- broad phase ----
    launchKernel("shapes", Launch::Shape, shapes, st, shapesKernel, m, (const Vec3*)d.pos.data(),
                 (const Quat*)d.rot.data(), settings.contactMargin, d.shapeWorld);
    sweepAxisKernel<<<1, kReduceThreads, 0, st>>>(d.aabb.data(), shapes, c);
    check(cudaGetLastError(), "sweepAxisKernel", __FILE__, __LINE__);
    launchKernel("sortKeys", Launch::Shape, shapes, st, sortKeysKernel, m, (const uint8_t*)d.active.data(),
                 (const Aabb*)d.aabb.data(), (const StepCounters*)c, d.sortKey.data(), d.sortShape.data());
    size_t bytes = 0;
    CS_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, d.sortKey.data(), d.sortKeyOut.data(), d.sortShape.data(),
                                            d.sortShapeOut.data(), shapes, 0, int(sizeof(Real) * 8), st));
    CS_CUDA(cub::DeviceRadixSort::SortPairs(d.cubScratch(bytes), bytes, d.sortKey.data(), d.sortKeyOut.data(),
                                            d.sortShape.data(), d.sortShapeOut.data(), shapes, 0,
                                            int(sizeof(Real) * 8), st));
    launchKernel("sweepCount", Launch::Shape, shapes, st, sweepKernel, m, (const uint8_t*)d.active.data(),
                 (const Aabb*)d.aabb.data(), (const Real*)d.sortKeyOut.data(), (const int*)d.sortShapeOut.data(),
                 (const StepCounters*)c, (const int*)nullptr, d.pairCapacity, d.sweepCount.data(), d.pairKeys.data());
    exclusiveSum(d, d.sweepCount.data(), d.sweepOffset.data(), shapes);
    scanTotalKernel<<<1, 1, 0, st>>>(d.sweepOffset.data(), d.sweepCount.data(), shapes, d.pairCapacity,
                                     &c->pairCount, &c->neededPairs, c);
    launchKernel("sweepWrite", Launch::Shape, shapes, st, sweepKernel, m, (const uint8_t*)d.active.data(),
                 (const Aabb*)d.aabb.data(), (const Real*)d.sortKeyOut.data(), (const int*)d.sortShapeOut.data(),
                 (const StepCounters*)c, (const int*)d.sweepOffset.data(), d.pairCapacity, d.sweepCount.data(),
                 d.pairKeys.data());
    launchKernel("padPairs", Launch::Pair, d.pairCapacity, st, padPairsKernel, (const StepCounters*)c, d.pairCapacity,
                 d.pairKeys.data());
    bytes = 0;
    CS_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, bytes, d.pairKeys.data(), d.pairKeysOut.data(), d.pairCapacity,
                                           0, 64, st));
    CS_CUDA(cub::DeviceRadixSort::SortKeys(d.cubScratch(bytes), bytes, d.pairKeys.data(), d.pairKeysOut.data(),
                                           d.pairCapacity, 0, 64, st));
    CS_CUDA(cudaEventRecord(broadDone, st));

    // ---- narrow phase ----
    NarrowPhaseSettings narrow;
    narrow.margin = settings.contactMargin;
    narrow.hyperplane = settings.hyperplaneFaces;
    launchKernel("narrow", Launch::Pair, d.pairCapacity, st, narrowKernel, m, d.shapeWorld, narrow,
                 (const uint64_t*)d.pairKeysOut.data(), d.pairCapacity, d.pairSlots, c, d.slots.data(),
                 d.pairContactCount.data());
    exclusiveSum(d, d.pairContactCount.data(), d.pairContactOffset.data(), d.pairCapacity);
    scanTotalKernel<<<1, 1, 0, st>>>(d.pairContactOffset.data(), d.pairContactCount.data(), d.pairCapacity,
                                     d.contactCapacity, &c->contactCount, &c->neededContacts, c);
    launchKernel("compact", Launch::Pair, d.pairCapacity, st, compactKernel, (const StepCounters*)c, d.pairCapacity,
                 d.pairSlots, d.contactCapacity, (const PotentialContact*)d.slots.data(),
                 (const int*)d.pairContactCount.data(), (const int*)d.pairContactOffset.data(), d.contacts.data(),
                 d.contactPairFirst.data());
    CS_CUDA(cudaEventRecord(narrowDone, st));

    // ---- contact model: the standard model's rows ----
    launchKernel("keep", Launch::Contact, d.contactCapacity, st, keepKernel, (const StepCounters*)c,
                 d.contactCapacity, (const PotentialContact*)d.contacts.data(), (const int*)d.contactPairFirst.data(),
                 d.keep.data());
    exclusiveSum(d, d.keep.data(), d.keepOffset.data(), d.contactCapacity);
    scanTotalKernel<<<1, 1, 0, st>>>(d.keepOffset.data(), d.keep.data(), d.contactCapacity, d.contactCapacity,
                                     &c->keptContacts, (int*)nullptr, c);   // kept <= contacts: fits
    rowCountKernel<<<1, 1, 0, st>>>(c, d.rowCapacity);
    launchKernel("rows", Launch::Contact, d.contactCapacity, st, rowsKernel, m, (const StepCounters*)c,
                 d.contactCapacity, (const PotentialContact*)d.contacts.data(), (const int*)d.keep.data(),
                 (const int*)d.keepOffset.data(), (const Vec3*)d.pos.data(), settings.solver.stabilization,
                 settings.solver.maxPushoutSpeed * h, settings.frictionScale, (const WarmImpulse*)d.warm.data(), settings.solver.warmStart, d.rows());
    CS_CUDA(cudaEventRecord(rowsDone, st));
}

}  // namespace cs::gpu
