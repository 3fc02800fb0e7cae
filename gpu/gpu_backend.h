// The CUDA backend as seen from host code: usable from any C++ file, with or without CUDA.
//
//   std::string why;
//   if (!cs::gpuAvailable(&why)) std::printf("no GPU: %s\n", why.c_str());
//   cs::GpuWorld gpu(world);          // steps `world` on the device when it can, else on the CPU
//   gpu.step();                       // instead of world.step(); world.state() is updated
//   if (!gpu.onGpu()) std::printf("%s\n", gpu.fallbackReason().c_str());
//
// GpuWorld runs World::step's pipeline on the device ([NSN] non-smooth Newton over the
// standard contact model, gpu/*.cu) with the data resident between steps, and copies the state
// back into the World once per step (one host synchronization per step). When there is no
// usable GPU or driver, the build has no CUDA, or the world uses something the device path does
// not cover (gpuSupports), it calls world.step() instead and says why in fallbackReason().
// After the host changes the world between steps (reset, addBody, a scene edit), call sync().
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "engine/world.h"

namespace cs {

struct GpuSettings {
    // No float atomics anywhere in what feeds the state: the scatter w = H^-1 J^T x is summed per
    // body in row order (sort, then reduce) instead of with atomicAdd; results are then the same
    // bits run after run. Reductions and the narrow phase are deterministic in both modes.
    bool deterministic = false;
};

// Counts of the device buffers' growth: a buffer too small for this step's pairs, contacts or
// rows is grown and the step is run again from its start state, so nothing is dropped.
struct GpuBufferStats {
    int pairs = 0, contacts = 0, rows = 0;             // last step's counts
    int pairCapacity = 0, contactCapacity = 0, rowCapacity = 0, pairContactCapacity = 0;
    long long growthEvents = 0;                        // steps re-run after a buffer grew
};

// True when a CUDA device and a driver that can run this build are present; otherwise false
// with a one-line reason ("no CUDA-capable device is detected", "built without CUDA", ...).
bool gpuAvailable(std::string* why);

// True when the device path covers the world as it is set up now (engine/exec pipelineSupports:
// the standard contact model with joints, the drag and FEM bodies; CCP without them). Otherwise
// false with the reason.
bool gpuSupports(const World& world, std::string* why);

class GpuWorld {
public:
    explicit GpuWorld(World& world, GpuSettings settings = {});
    ~GpuWorld();
    GpuWorld(const GpuWorld&) = delete;
    GpuWorld& operator=(const GpuWorld&) = delete;

    void step();                              // one World::step (settings.dt, substeps)
    void sync();                              // the host changed the world: upload it again
    bool onGpu() const;                       // false: the last step ran on the CPU
    const std::string& fallbackReason() const;  // why it runs on the CPU ("" on the GPU)

    // The last step, as World's accessors report it for the CPU backend.
    const StepProfile& profile() const;
    const SolveStats& solveStats() const;
    int contactCount() const;                 // standard contacts (rows / 3) of the last step
    Real maxPenetration() const;              // m, max over the last step's contacts of -gap
    const GpuBufferStats& bufferStats() const;
    bool lastStepFailed() const;              // the guard rolled a substep back (World::lastStepFailed)
    const char* deviceName() const;           // "" when none

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// `sandbox bench-gpu`: ms per step by stage against body count (pyramid and pile of boxes), CPU
// and GPU in the same run, in this build's precision. Prints a clear line when there is no GPU
// and still measures the CPU rows. Returns the process exit status.
int gpuBenchCommand(int argc, char** argv);

#if !defined(CS_HAVE_CUDA) && !defined(__CUDACC__)
// Built without CUDA (no nvcc at configure time): the same API, every step on the CPU.
inline bool gpuAvailable(std::string* why) {
    if (why) *why = "built without CUDA (no nvcc at configure time)";
    return false;
}
inline bool gpuSupports(const World&, std::string* why) { return gpuAvailable(why); }
struct GpuWorld::Impl {
    World& world;
    std::string reason = "built without CUDA (no nvcc at configure time)";
    GpuBufferStats buffers;
};
inline GpuWorld::GpuWorld(World& world, GpuSettings) : impl_(new Impl{world}) {}
inline GpuWorld::~GpuWorld() = default;
inline void GpuWorld::step() { impl_->world.step(); }
inline void GpuWorld::sync() {}
inline bool GpuWorld::onGpu() const { return false; }
inline const std::string& GpuWorld::fallbackReason() const { return impl_->reason; }
inline const StepProfile& GpuWorld::profile() const { return impl_->world.profile(); }
inline const SolveStats& GpuWorld::solveStats() const { return impl_->world.solveStats(); }
inline int GpuWorld::contactCount() const { return (int)impl_->world.contacts().size(); }
inline Real GpuWorld::maxPenetration() const { return impl_->world.maxPenetration(); }
inline const GpuBufferStats& GpuWorld::bufferStats() const { return impl_->buffers; }
inline bool GpuWorld::lastStepFailed() const { return impl_->world.lastStepFailed(); }
inline const char* GpuWorld::deviceName() const { return ""; }
inline int gpuBenchCommand(int, char**) {
    std::printf("bench-gpu: built without CUDA (no nvcc at configure time): no GPU rows\n");
    return 0;
}
#endif

}  // namespace cs
