// Everything the CUDA step keeps on the device between steps, shared by gpu_world.cu (upload,
// collision, contact rows, integration, the one synchronization per step) and gpu_solver.cu
// (the non-smooth Newton iteration and the four linear solvers, captured in a CUDA graph).
#pragma once

#include "engine/world.h"
#include "gpu/cuda_util.cuh"
#include "gpu/gpu_backend.h"
#include "gpu/step_hd.h"

namespace cs::gpu {

constexpr int kMaxNewtonHistory = 64;   // merit history entries copied back per step
constexpr int kMaxColours = kGpuMaxColours;   // device Gauss-Seidel colours (step_hd.h)

// Scalars of one step, in device memory; copied to the host once per step.
struct StepCounters {
    Real time;                 // World's state.time
    int pairCount;             // broad phase pairs (may exceed the capacity: then the step re-runs)
    int contactCount;          // potential contacts
    int keptContacts;          // after the standard model's duplicate merge
    int rowCount;              // 3 * keptContacts
    int maxPairContacts;       // the most contacts of one pair (a sink larger than its slot: re-run)
    int warmCount;             // entries of the warm-start cache (sorted by key)
    int warmCountStepStart;    // the same at the start of the step (restored when a step re-runs)
    int bad;                   // the guard fired in this substep
    int failedSteps;           // substeps rolled back by the guard during this step
    int overflow;              // some count exceeded its buffer in this step: grow, run it again
    int neededPairs, neededContacts, neededRows, neededSlots;   // the largest counts of the step
    int axis;                  // sweep axis
    Real maxPenetration;
    // Newton bookkeeping (gpu_solver.cu)
    int one;                   // always 1: the gate of launches that always run
    int newtonActive;          // 1 while the merit is above the tolerance
    int newtonIterations;
    int linearIterations;
    Real merit;
    Real newtonResidual[kMaxNewtonHistory];
};

// Settings of the solve read by the kernels at run time, so that a change of h or of a tolerance
// does not invalidate the captured graph (only the loop shape does).
struct SolveParams {
    Real h, damping, regularization, newtonTolerance, linearTolerance, jacobiOmega;
    int ncp, precondition;
};

// Scalars of one linear solve (gpu_solver.cu).
struct LinearControl {
    int active;                // 0 once the solve has stopped (converged, broke down or done)
    int iterations;
    int copyBest;              // PCG: this iteration's x is the best so far
    Real target;               // tolerance * ||b|| (< 0: never)
    Real residual, bestResidual;
    Real dot0, dot1, dot2;     // reduction outputs
    Real rz, rho, beta, alpha, normSq;
};

struct DeviceWorld {
    cudaStream_t stream = nullptr;
    FlatModel host;            // flattened model (host copy)
    FlatModelView model;       // device pointers
    int bodies = 0, shapes = 0;

    // ---- model, uploaded by sync() ----
    DeviceBuffer<Real> invMass, friction, spawnTime, shapeRadius;
    DeviceBuffer<Mat3> invInertiaLocal;
    DeviceBuffer<int> shapeType, shapeBody, shapePolytope, shapeFirstVertex, shapeFirstEdge, shapeFirstFace;
    DeviceBuffer<int> faceEdges, faceVertices, vertexEdgeStart, vertexEdges, jointBodies;
    DeviceBuffer<Transform> shapeLocal;
    DeviceBuffer<FlatPolytope> polytopes;
    DeviceBuffer<Vec3> vertices;
    DeviceBuffer<PolytopeEdge> edges;
    DeviceBuffer<PolytopeFace> faces;

    // ---- state and per-body step data ----
    DeviceBuffer<Vec3> pos, linVel, angVel, goodPos;
    DeviceBuffer<Quat> rot, goodRot;
    DeviceBuffer<uint8_t> active;
    DeviceBuffer<Real> bodyInvMass;
    DeviceBuffer<Mat3> bodyInvInertia;
    DeviceBuffer<Spatial> unconstrained, velocity, w;
    DeviceBuffer<int> bodyStart;                 // (bodies + 1) deterministic scatter / colouring

    // ---- shapes in the world ----
    DeviceBuffer<Transform> pose;
    DeviceBuffer<Aabb> aabb;
    DeviceBuffer<Vec3> centroid, worldVertices;
    DeviceBuffer<PolytopeEdge> worldEdges;
    DeviceBuffer<PolytopeFace> worldFaces;
    ShapeWorldView shapeWorld{};

    // ---- broad and narrow phase ----
    DeviceBuffer<Real> sortKey, sortKeyOut;
    DeviceBuffer<int> sortShape, sortShapeOut, sweepCount, sweepOffset;
    DeviceBuffer<uint64_t> pairKeys, pairKeysOut;
    DeviceBuffer<PotentialContact> slots, contacts;
    DeviceBuffer<int> pairContactCount, pairContactOffset, contactPairFirst, keep, keepOffset;
    DeviceBuffer<Real> penetration;
    int pairCapacity = 0, contactCapacity = 0, rowCapacity = 0, pairSlots = 16;

    // ---- rows and the solver ----
    DeviceBuffer<int> kind, rowBodyA, rowBodyB, normalRow, owner, colour, colourRound, colourRows, colourStart;
    DeviceBuffer<Spatial> jacobianA, jacobianB, minvJA, minvJB;
    DeviceBuffer<Real> bias, softness, mu, maxImpulse, lambda, lambdaStart, dlambda, rhs;
    DeviceBuffer<Real> jv, diagA, compliance, residual, merit, invDiag, r, z, p, q, ap, az, best, partial;
    DeviceBuffer<uint64_t> entryKeys, entryKeysOut;   // (2 rows) scatter entries, sorted
    DeviceBuffer<int> colourKeys, colourKeysOut;      // (rows) colour-sort keys
    DeviceBuffer<WarmImpulse> warm, warmNext, warmStepStart;
    DeviceBuffer<LinearControl> linear;
    DeviceBuffer<SolveParams> params;
    DeviceBuffer<char> cubTemp;      // cub's scratch outside the graph (may move between steps)
    DeviceBuffer<char> solveTemp;    // cub's scratch inside the solve graph: sized before capture

    // ---- counters: device and pinned host copy ----
    DeviceBuffer<StepCounters> counters;
    StepCounters* hostCounters = nullptr;

    // ---- the solve's CUDA graph, valid for these capacities and settings ----
    cudaGraphExec_t solveGraph = nullptr;
    int graphRowCapacity = -1, graphBodyCapacity = -1;
    int graphSolver = -1, graphNewton = -1, graphLinear = -1, graphDeterministic = -1;
    int graphNcp = -1, graphPrecondition = -1;
    Real graphH = 0;

    FlatRows rows() {
        return FlatRows{kind.data(), rowBodyA.data(), rowBodyB.data(), jacobianA.data(), jacobianB.data(),
                        bias.data(), softness.data(), mu.data(), normalRow.data(), maxImpulse.data(),
                        lambda.data(), owner.data()};
    }
    StepCounters* deviceCounters() { return counters.data(); }
    // cub's temporary storage: at least bytes.
    void* cubScratch(size_t bytes) {
        cubTemp.reserve(bytes > 0 ? bytes : 1);
        return cubTemp.data();
    }
};

// gpu_collision.cu: broad phase, narrow phase and the standard model's rows of one substep
// (World::substep up to the solve), on the stream; events mark the ends of the three stages.
void collideOnDevice(DeviceWorld& d, const WorldSettings& settings, Real h, cudaEvent_t broad, cudaEvent_t narrow,
                     cudaEvent_t rows);

// gpu_solver.cu: the solve stage of one substep (World::substep's solveNewton), on the stream.
// Rows [0, counters.rowCount) and the per-body data must be in place.
void solveOnDevice(DeviceWorld& d, const SolverSettings& settings, Real h, bool deterministic);

// gpu_solver.cu: drops the captured graph (buffers moved, or the world is going away).
void releaseSolveGraph(DeviceWorld& d);

}  // namespace cs::gpu
