// GpuWorld (gpu_backend.h): World::step on the device, data resident between steps.
//
// One step = settings.substeps substeps, each World::substep's pipeline:
//   prepare     per body: activity, inverse mass and inertia, u~ (gpu/step_hd.h prepareBody)
//   collide     shapes, broad phase, narrow phase, the standard model's rows (gpu_collision.cu)
//   solve       non-smooth Newton, one CUDA graph (gpu_solver.cu)
//   integrate   the guard and integrateBody per body; warm-start cache for the next substep
// then ONE host synchronization: the counters, the state and the stage timings come back
// together. If a count exceeded its buffer, the buffers grow (counted in GpuBufferStats) and the
// step runs again from its start, so no pair, contact or row is dropped.
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstring>

#include "gpu/device_world.cuh"

namespace cs {
namespace gpu {
namespace {

__global__ void substepStartKernel(StepCounters* c) {
    c->bad = 0;
    c->pairCount = c->contactCount = c->keptContacts = c->rowCount = 0;
}

__global__ void prepareKernel(FlatModelView m, const Vec3* pos, const Quat* rot, const Vec3* linVel, const Vec3* angVel,
                              Vec3 gravity, Real h, const StepCounters* c, uint8_t* active, Real* invMass,
                              Mat3* invInertia, Spatial* unconstrained, Vec3* goodPos, Quat* goodRot) {
    const int b = threadIndex();
    if (b >= m.bodyCount) return;
    prepareBody(m, rot, linVel, angVel, gravity, h, c->time, b, active, invMass, invInertia, unconstrained);
    goodPos[b] = pos[b];
    goodRot[b] = rot[b];
}

__global__ void guardKernel(FlatModelView m, const uint8_t* active, const Spatial* u, StepCounters* c) {
    const int b = threadIndex();
    if (b < m.bodyCount && active[b] && m.invMass[b] != Real(0) && velocityExploded(u[b])) c->bad = 1;   // all store 1
}

// World::substep's integration; when the guard fired, the substep's start state with zero
// velocities instead (the CPU's roll-back).
__global__ void integrateKernel(FlatModelView m, const uint8_t* active, const Spatial* u, const StepCounters* c, Real h,
                                Vec3* pos, Quat* rot, Vec3* linVel, Vec3* angVel, const Vec3* goodPos,
                                const Quat* goodRot) {
    const int b = threadIndex();
    if (b >= m.bodyCount) return;
    if (c->bad) {
        pos[b] = goodPos[b];
        rot[b] = goodRot[b];
        linVel[b] = angVel[b] = Vec3{0, 0, 0};
        return;
    }
    if (!active[b] || m.invMass[b] == Real(0)) return;
    const Vec3 rate = rotationRate(u[b].ang, angVel[b], rot[b], m.invInertiaLocal[b], h);
    linVel[b] = u[b].lin;
    angVel[b] = u[b].ang;
    integrateBody(pos[b], rot[b], u[b].lin, rate, h);
}

// storeStandardResults' cache entry and the penetration of each kept contact.
__global__ void storeWarmKernel(const StepCounters* c, int capacity, const PotentialContact* contacts, const int* keep,
                                const int* keepOffset, const Real* lambda, WarmImpulse* warm, Real* penetration) {
    const int i = threadIndex();
    if (i >= capacity || i >= c->contactCount || !keep[i] || c->rowCount == 0) return;
    const int slot = keepOffset[i], n = 3 * slot;
    Vec3 t[2];
    tangentBasis(contacts[i].normal, t[0], t[1]);
    warm[slot] = WarmImpulse{contactKeyOf(contacts[i]), lambda[n], lambda[n + 1] * t[0] + lambda[n + 2] * t[1]};
    penetration[slot] = -contacts[i].gap;
}

__global__ void substepEndKernel(StepCounters* c, Real h) {
    if (c->bad) c->failedSteps++;
    c->warmCount = c->bad ? 0 : c->keptContacts;
    c->time += h;
}

}  // namespace
}  // namespace gpu

using namespace gpu;

bool gpuAvailable(std::string* why) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        if (why)
            *why = err != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err) + " (error " +
                                            std::to_string(int(err)) + ")"
                                      : "no CUDA device";
        cudaGetLastError();   // clear the sticky error
        return false;
    }
    cudaFuncAttributes attributes;   // is there an image of this build for the device?
    err = cudaFuncGetAttributes(&attributes, substepEndKernel);
    if (err != cudaSuccess) {
        if (why) *why = std::string("the device cannot run this build: ") + cudaGetErrorString(err) +
                        " (add its architecture to CMAKE_CUDA_ARCHITECTURES)";
        cudaGetLastError();
        return false;
    }
    return true;
}

bool gpuSupports(const World& world, std::string* why) {
    const char* reason = nullptr;
    if (world.settings.solver.contactModel != ContactModelType::Standard)
        reason = "the GPU path implements the standard contact model only";
    else if (!world.model().joints.empty())
        reason = "the GPU path has no joint rows yet";
    else if (world.drag().body >= 0)
        reason = "the GPU path has no mouse-drag rows yet";
    else if (world.settings.speculative > 0)
        reason = "the GPU narrow phase has no speculative widening yet (settings.speculative)";
    else if (world.settings.projectionPasses > 0)
        reason = "the GPU path has no position projection yet (settings.projectionPasses)";
    if (reason && why) *why = reason;
    return reason == nullptr;
}

struct GpuWorld::Impl {
    World& world;
    GpuSettings settings;
    bool onGpu = false;
    std::string reason;
    std::string deviceName;
    DeviceWorld d;
    bool uploaded = false;
    bool broken = false;          // a CUDA error: the device is not tried again
    int uploadedBodies = -1;
    Real lastTime = -1;           // state.time after the last device step (a reset changes it)
    bool failed = false;
    StepProfile profile;
    SolveStats stats;
    GpuBufferStats buffers;
    int contacts = 0;
    Real maxPenetration = 0;
    std::vector<cudaEvent_t> events;
    Vec3 *hostPos = nullptr, *hostLinVel = nullptr, *hostAngVel = nullptr;
    Quat* hostRot = nullptr;

    Impl(World& w, GpuSettings s) : world(w), settings(s) {}
    ~Impl() {
        releaseSolveGraph(d);
        for (cudaEvent_t e : events) cudaEventDestroy(e);
        for (void* p : {(void*)hostPos, (void*)hostLinVel, (void*)hostAngVel, (void*)hostRot, (void*)d.hostCounters})
            if (p) cudaFreeHost(p);
        if (d.stream) cudaStreamDestroy(d.stream);
    }

    void reserveContacts(int pairs, int slots, int contacts) {
        d.pairCapacity = pairs;
        d.pairSlots = slots;
        d.contactCapacity = contacts;
        d.rowCapacity = 3 * contacts;
        d.pairKeys.reserve(pairs); d.pairKeysOut.reserve(pairs);
        d.pairContactCount.reserve(pairs); d.pairContactOffset.reserve(pairs);
        d.slots.reserve(size_t(pairs) * slots);
        for (auto* b : {&d.contactPairFirst, &d.keep, &d.keepOffset}) b->reserve(contacts);
        d.contacts.reserve(contacts);
        d.penetration.reserve(contacts);
        for (auto* b : {&d.warm, &d.warmNext, &d.warmStepStart}) b->reserve(contacts);
        const int rows = d.rowCapacity;
        for (auto* b : {&d.kind, &d.rowBodyA, &d.rowBodyB, &d.normalRow, &d.owner, &d.colour, &d.colourRound, &d.colourRows,
                        &d.colourKeys, &d.colourKeysOut})
            b->reserve(rows);
        for (auto* b : {&d.jacobianA, &d.jacobianB, &d.minvJA, &d.minvJB}) b->reserve(rows);
        for (auto* b : {&d.bias, &d.softness, &d.mu, &d.maxImpulse, &d.lambda, &d.lambdaStart, &d.dlambda, &d.rhs,
                        &d.jv, &d.diagA, &d.compliance, &d.residual, &d.merit, &d.invDiag, &d.r, &d.z, &d.p, &d.q,
                        &d.ap, &d.az, &d.best})
            b->reserve(rows);
        d.entryKeys.reserve(2 * size_t(rows));
        d.entryKeysOut.reserve(2 * size_t(rows));
        releaseSolveGraph(d);   // the graph holds the old pointers
    }

    // Model (when the body count changed), state, time and warm-start cache to the device.
    void upload() {
        const Model& model = world.model();
        const State& state = world.state();
        const int n = model.bodyCount();
        cudaStream_t st = d.stream;
        if (n != uploadedBodies) {
            d.host = flattenModel(model);
            const FlatModel& f = d.host;
            d.bodies = n;
            d.shapes = model.shapeCount();
            d.invMass.upload(f.invMass, st); d.friction.upload(f.friction, st); d.spawnTime.upload(f.spawnTime, st);
            d.shapeRadius.upload(f.shapeRadius, st); d.invInertiaLocal.upload(f.invInertiaLocal, st);
            d.shapeType.upload(f.shapeType, st); d.shapeBody.upload(f.shapeBody, st);
            d.shapePolytope.upload(f.shapePolytope, st); d.shapeFirstVertex.upload(f.shapeFirstVertex, st);
            d.shapeFirstEdge.upload(f.shapeFirstEdge, st); d.shapeFirstFace.upload(f.shapeFirstFace, st);
            d.faceEdges.upload(f.faceEdges, st); d.faceVertices.upload(f.faceVertices, st);
            d.vertexEdgeStart.upload(f.vertexEdgeStart, st); d.vertexEdges.upload(f.vertexEdges, st);
            d.jointBodies.upload(f.jointBodies, st); d.shapeLocal.upload(f.shapeLocal, st);
            d.polytopes.upload(f.polytopes, st); d.vertices.upload(f.vertices, st); d.edges.upload(f.edges, st);
            d.faces.upload(f.faces, st);
            FlatModelView v = f.view();   // the same view with device pointers
            v.invMass = d.invMass.data(); v.friction = d.friction.data(); v.spawnTime = d.spawnTime.data();
            v.shapeRadius = d.shapeRadius.data(); v.invInertiaLocal = d.invInertiaLocal.data();
            v.shapeType = d.shapeType.data(); v.shapeBody = d.shapeBody.data(); v.shapePolytope = d.shapePolytope.data();
            v.shapeFirstVertex = d.shapeFirstVertex.data(); v.shapeFirstEdge = d.shapeFirstEdge.data();
            v.shapeFirstFace = d.shapeFirstFace.data(); v.faceEdges = d.faceEdges.data();
            v.faceVertices = d.faceVertices.data(); v.vertexEdgeStart = d.vertexEdgeStart.data();
            v.vertexEdges = d.vertexEdges.data(); v.jointBodies = d.jointBodies.data(); v.shapeLocal = d.shapeLocal.data();
            v.polytopes = d.polytopes.data(); v.vertices = d.vertices.data(); v.edges = d.edges.data();
            v.faces = d.faces.data();
            d.model = v;
            const size_t nb = std::max(n, 1), ns = std::max(d.shapes, 1);
            for (auto* b : {&d.pos, &d.linVel, &d.angVel, &d.goodPos}) b->reserve(nb);
            for (auto* b : {&d.rot, &d.goodRot}) b->reserve(nb);
            d.active.reserve(nb); d.bodyInvMass.reserve(nb); d.bodyInvInertia.reserve(nb);
            for (auto* b : {&d.unconstrained, &d.velocity, &d.w}) b->reserve(nb);
            d.bodyStart.reserve(nb + 1);
            d.pose.reserve(ns); d.aabb.reserve(ns); d.centroid.reserve(ns);
            d.worldVertices.reserve(std::max(f.worldVertexCount, 1));
            d.worldEdges.reserve(std::max(f.worldEdgeCount, 1));
            d.worldFaces.reserve(std::max(f.worldFaceCount, 1));
            d.shapeWorld = ShapeWorldView{d.pose.data(), d.aabb.data(), d.centroid.data(), d.worldVertices.data(),
                                          d.worldEdges.data(), d.worldFaces.data()};
            for (auto* b : {&d.sortKey, &d.sortKeyOut}) b->reserve(ns);
            for (auto* b : {&d.sortShape, &d.sortShapeOut, &d.sweepCount, &d.sweepOffset}) b->reserve(ns);
            d.partial.reserve(2 * kReduceBlocks);
            d.linear.reserve(1);
            d.params.reserve(1);
            d.colourStart.reserve(kMaxColours + 2);
            if (d.pairCapacity == 0) reserveContacts(8 * (d.shapes + 8), 16, 8 * (d.shapes + 8));
            for (Vec3** p : {&hostPos, &hostLinVel, &hostAngVel}) {
                if (*p) cudaFreeHost(*p);
                CS_CUDA(cudaMallocHost(p, nb * sizeof(Vec3)));
            }
            if (hostRot) cudaFreeHost(hostRot);
            CS_CUDA(cudaMallocHost(&hostRot, nb * sizeof(Quat)));
            releaseSolveGraph(d);
            uploadedBodies = n;
        }
        d.pos.upload(state.pos, st); d.rot.upload(state.rot, st);
        d.linVel.upload(state.linVel, st); d.angVel.upload(state.angVel, st);
        StepCounters& hc = *d.hostCounters;
        std::memset(&hc, 0, sizeof(hc));
        hc.time = state.time;
        hc.warmCount = world.settings.solver.warmStart ? std::min<int>((int)state.warm.size(), d.contactCapacity) : 0;
        if (hc.warmCount) d.warm.upload(state.warm.data(), hc.warmCount, st);
        CS_CUDA(cudaMemcpyAsync(d.counters.data(), &hc, sizeof(hc), cudaMemcpyHostToDevice, st));
        CS_CUDA(cudaStreamSynchronize(st));
        uploaded = true;
    }

    cudaEvent_t event(size_t i) {
        while (events.size() <= i) {
            cudaEvent_t e;
            CS_CUDA(cudaEventCreate(&e));
            events.push_back(e);
        }
        return events[i];
    }

    // Records one step on the stream; returns after the one synchronization.
    void runStep() {
        const WorldSettings& ws = world.settings;
        const int substeps = ws.substeps > 0 ? ws.substeps : 1;
        const Real h = ws.dt / substeps;
        cudaStream_t st = d.stream;
        StepCounters* c = d.deviceCounters();
        const int warmAtStart = d.hostCounters->warmCount;
        if (warmAtStart)   // kept for a step that has to run again
            CS_CUDA(cudaMemcpyAsync(d.warmStepStart.data(), d.warm.data(), warmAtStart * sizeof(WarmImpulse),
                                    cudaMemcpyDeviceToDevice, st));
        CS_CUDA(cudaEventRecord(event(0), st));
        for (int s = 0; s < substeps; ++s) {
            const size_t e = 1 + 5 * size_t(s);
            substepStartKernel<<<1, 1, 0, st>>>(c);
            launchKernel("prepare", Launch::Body, d.bodies, st, prepareKernel, d.model, (const Vec3*)d.pos.data(),
                         (const Quat*)d.rot.data(), (const Vec3*)d.linVel.data(), (const Vec3*)d.angVel.data(),
                         ws.gravity, h, (const StepCounters*)c, d.active.data(), d.bodyInvMass.data(),
                         d.bodyInvInertia.data(), d.unconstrained.data(), d.goodPos.data(), d.goodRot.data());
            collideOnDevice(d, ws, h, event(e), event(e + 1), event(e + 2));
            solveOnDevice(d, ws.solver, h, settings.deterministic);
            CS_CUDA(cudaEventRecord(event(e + 3), st));
            launchKernel("guard", Launch::Body, d.bodies, st, guardKernel, d.model, (const uint8_t*)d.active.data(),
                         (const Spatial*)d.velocity.data(), c);
            launchKernel("integrate", Launch::Body, d.bodies, st, integrateKernel, d.model,
                         (const uint8_t*)d.active.data(), (const Spatial*)d.velocity.data(), (const StepCounters*)c,
                         h, d.pos.data(), d.rot.data(), d.linVel.data(), d.angVel.data(), (const Vec3*)d.goodPos.data(),
                         (const Quat*)d.goodRot.data());
            launchKernel("storeWarm", Launch::Contact, d.contactCapacity, st, storeWarmKernel, (const StepCounters*)c,
                         d.contactCapacity, (const PotentialContact*)d.contacts.data(), (const int*)d.keep.data(),
                         (const int*)d.keepOffset.data(), (const Real*)d.lambda.data(), d.warmNext.data(),
                         d.penetration.data());
            deviceReduce<ReduceOp::Max>(d.penetration.data(), nullptr, &c->maxPenetration, nullptr, nullptr, nullptr,
                                        &c->keptContacts, nullptr, d.partial.data(), st);
            substepEndKernel<<<1, 1, 0, st>>>(c, h);
            d.warm.swap(d.warmNext);   // the rows of the next substep read this one's cache
            CS_CUDA(cudaEventRecord(event(e + 4), st));
        }
        const int n = d.bodies;
        CS_CUDA(cudaMemcpyAsync(d.hostCounters, c, sizeof(StepCounters), cudaMemcpyDeviceToHost, st));
        d.pos.download(hostPos, n, st);
        d.rot.download(hostRot, n, st);
        d.linVel.download(hostLinVel, n, st);
        d.angVel.download(hostAngVel, n, st);
        CS_CUDA(cudaStreamSynchronize(st));   // the one synchronization of the step

        StepCounters& hc = *d.hostCounters;
        if (hc.overflow) {   // grow what was too small and run the step again from its start
            buffers.growthEvents++;
            const int pairs = std::max(d.pairCapacity, 2 * hc.neededPairs);
            const int slots = std::max(d.pairSlots, 2 * hc.neededSlots);
            const int contacts = std::max(d.contactCapacity, 2 * std::max(hc.neededContacts, hc.neededRows / 3));
            // The cache of the step's start goes through the host: growing reallocates the buffers.
            world.state().warm.resize(warmAtStart);
            d.warmStepStart.download(world.state().warm.data(), warmAtStart, st);
            CS_CUDA(cudaStreamSynchronize(st));
            reserveContacts(pairs, slots, contacts);
            upload();   // state, time, cache and counters of the step's start (the host still has them)
            return runStep();
        }

        State& state = world.state();
        std::copy(hostPos, hostPos + n, state.pos.begin());
        std::copy(hostRot, hostRot + n, state.rot.begin());
        std::copy(hostLinVel, hostLinVel + n, state.linVel.begin());
        std::copy(hostAngVel, hostAngVel + n, state.angVel.begin());
        state.time = hc.time;
        state.warm.clear();   // the cache lives on the device (sync() uploads the host's)
        lastTime = hc.time;
        failed = hc.failedSteps > 0;

        float ms[5] = {0, 0, 0, 0, 0};
        for (int s = 0; s < substeps; ++s) {
            const size_t e = 5 * size_t(s);
            for (int k = 0; k < 5; ++k) {
                float t = 0;
                CS_CUDA(cudaEventElapsedTime(&t, event(e + k), event(e + k + 1)));
                ms[k] += t;
            }
        }
        float total = 0;
        CS_CUDA(cudaEventElapsedTime(&total, event(0), event(5 * size_t(substeps))));
        // Stages: broad (incl. body set-up and shapes), narrow, contact model, solve, integrate.
        profile = StepProfile{ms[0] * 1e-3, ms[1] * 1e-3, ms[2] * 1e-3, ms[3] * 1e-3, ms[4] * 1e-3, total * 1e-3};
        stats.newtonIterations = hc.newtonIterations;
        stats.linearIterations = hc.linearIterations;
        stats.residualFinal = hc.merit;
        stats.newtonResidual.assign(hc.newtonResidual,
                                    hc.newtonResidual + (hc.rowCount > 0 ? std::min(hc.newtonIterations + 1, kMaxNewtonHistory) : 0));
        stats.linearResidual.clear();
        contacts = hc.keptContacts;
        maxPenetration = hc.maxPenetration;
        buffers.pairs = hc.pairCount;
        buffers.contacts = hc.contactCount;
        buffers.rows = hc.rowCount;
        buffers.pairCapacity = d.pairCapacity;
        buffers.contactCapacity = d.contactCapacity;
        buffers.rowCapacity = d.rowCapacity;
        buffers.pairContactCapacity = d.pairSlots;
        // reset the per-step counters on the device for the next step
        hc.failedSteps = 0;
        hc.overflow = 0;
        hc.neededPairs = hc.neededContacts = hc.neededRows = hc.neededSlots = 0;
        CS_CUDA(cudaMemcpyAsync(c, &hc, sizeof(hc), cudaMemcpyHostToDevice, st));
    }

    void fallBack(const std::string& why) {
        if (onGpu || reason.empty()) std::fprintf(stderr, "cs: GPU backend: %s; stepping on the CPU\n", why.c_str());
        onGpu = false;
        reason = why;
    }

    void stepOnCpu() {
        world.step();
        profile = world.profile();
        stats = world.solveStats();
        contacts = (int)world.contacts().size();
        maxPenetration = world.maxPenetration();
        failed = world.lastStepFailed();
        uploaded = false;   // the device copy is stale now
    }
};

GpuWorld::GpuWorld(World& world, GpuSettings settings) : impl_(std::make_unique<Impl>(world, settings)) {
    std::string why;
    if (!gpuAvailable(&why)) {
        impl_->fallBack(why);
        return;
    }
    try {
        cudaDeviceProp prop;
        CS_CUDA(cudaGetDeviceProperties(&prop, 0));
        impl_->deviceName = prop.name;
        CS_CUDA(cudaStreamCreateWithFlags(&impl_->d.stream, cudaStreamNonBlocking));
        CS_CUDA(cudaMallocHost(&impl_->d.hostCounters, sizeof(StepCounters)));
        impl_->d.counters.reserve(1);
        impl_->onGpu = true;
    } catch (const std::exception& e) {
        impl_->fallBack(e.what());
    }
}

GpuWorld::~GpuWorld() = default;

void GpuWorld::step() {
    Impl& m = *impl_;
    std::string why;
    if (!m.d.stream || m.broken) return m.stepOnCpu();
    if (!gpuSupports(m.world, &why)) {
        if (m.onGpu || m.reason != why) m.fallBack(why);
        return m.stepOnCpu();
    }
    try {
        // The host changed the world since the last device step (reset, addBody, a replay).
        if (!m.uploaded || m.world.model().bodyCount() != m.uploadedBodies || m.world.state().time != m.lastTime)
            m.upload();
        m.runStep();
        m.onGpu = true;
        m.reason.clear();
    } catch (const std::exception& e) {
        m.fallBack(e.what());
        m.broken = true;
        m.stepOnCpu();
    }
}

void GpuWorld::sync() { impl_->uploaded = false; }
bool GpuWorld::onGpu() const { return impl_->onGpu; }
const std::string& GpuWorld::fallbackReason() const { return impl_->reason; }
const StepProfile& GpuWorld::profile() const { return impl_->profile; }
const SolveStats& GpuWorld::solveStats() const { return impl_->stats; }
int GpuWorld::contactCount() const { return impl_->contacts; }
Real GpuWorld::maxPenetration() const { return impl_->maxPenetration; }
const GpuBufferStats& GpuWorld::bufferStats() const { return impl_->buffers; }
bool GpuWorld::lastStepFailed() const { return impl_->failed; }
const char* GpuWorld::deviceName() const { return impl_->deviceName.c_str(); }

}  // namespace cs
