// GpuWorld (gpu_backend.h): the step pipeline (engine/exec/pipeline_*.h) run by the CUDA
// executor (cuda_executor.cuh), data resident on the device between steps.
//
// The pipeline is the same text the host executor runs in every test (tests/test_exec_parity.cpp
// checks it against World::step on every library scene); this file only decides where a step
// runs: on the device when there is a usable GPU and the pipeline covers the world
// (pipelineSupports), else World::step with the reason in fallbackReason().
#include <cstdio>

#include "engine/exec/pipeline_world.h"
#include "gpu/cuda_executor.cuh"
#include "gpu/gpu_backend.h"

namespace cs {

using gpu::CudaExecutor;

namespace {
__global__ void probeKernel() {}
}  // namespace

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
    err = cudaFuncGetAttributes(&attributes, probeKernel);
    if (err != cudaSuccess) {
        if (why) *why = std::string("the device cannot run this build: ") + cudaGetErrorString(err) +
                        " (add its architecture to CMAKE_CUDA_ARCHITECTURES)";
        cudaGetLastError();
        return false;
    }
    return true;
}

bool gpuSupports(const World& world, std::string* why) { return pipelineSupports(world, why); }

struct GpuWorld::Impl {
    World& world;
    GpuSettings settings;
    std::unique_ptr<PipelineWorld<CudaExecutor>> pipeline;
    bool onGpu = false;
    bool broken = false;          // a CUDA error: the device is not tried again
    std::string reason;
    std::string deviceName;
    StepProfile profile;
    SolveStats stats;
    GpuBufferStats buffers;
    int contacts = 0;
    Real maxPenetration = 0;
    bool failed = false;

    Impl(World& w, GpuSettings s) : world(w), settings(s) {}

    void fallBack(const std::string& why) {
        if (onGpu || reason != why) std::fprintf(stderr, "cs: GPU backend: %s; stepping on the CPU\n", why.c_str());
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
        if (pipeline) pipeline->sync();   // the device copy is stale now
    }
    void stepOnGpu() {
        PipelineWorld<CudaExecutor>& p = *pipeline;
        p.step();
        profile = p.profile();
        stats = p.solveStats();
        contacts = p.contactCount();
        maxPenetration = p.maxPenetration();
        failed = p.lastStepFailed();
        const PipelineBufferStats& b = p.bufferStats();
        buffers = GpuBufferStats{b.pairs, b.contacts, b.rows, b.pairCapacity, b.contactCapacity, b.rowCapacity,
                                 b.pairContactCapacity, b.growthEvents};
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
        PipelineOptions options;
        options.deterministic = settings.deterministic;
        impl_->pipeline = std::make_unique<PipelineWorld<CudaExecutor>>(world, options);
        impl_->onGpu = true;
    } catch (const std::exception& e) {
        impl_->fallBack(e.what());
    }
}

GpuWorld::~GpuWorld() = default;

void GpuWorld::step() {
    Impl& m = *impl_;
    std::string why;
    if (!m.pipeline || m.broken) return m.stepOnCpu();
    if (!gpuSupports(m.world, &why)) {
        m.fallBack(why);
        return m.stepOnCpu();
    }
    try {
        m.stepOnGpu();
        m.onGpu = true;
        m.reason.clear();
    } catch (const std::exception& e) {
        m.fallBack(e.what());
        m.broken = true;
        m.stepOnCpu();
    }
}

void GpuWorld::sync() {
    if (impl_->pipeline) impl_->pipeline->sync();
}
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
