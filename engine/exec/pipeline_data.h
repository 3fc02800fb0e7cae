// The step pipeline's data: the flat model, the state, the scratch of one step and its counters,
// all in the executor's memory (host vectors or device buffers), structures of arrays.
//
// Model (engine/exec/flat_model.h FlatModel, uploaded when the world's bodies change), state (positions,
// orientations, velocities, the warm-start cache: uploaded when the host changed the world,
// downloaded after each step), scratch (rebuilt each substep: shapes in the world, pairs,
// contacts, rows, the solver's vectors). Every count a stage produces goes to StepCounters in
// the executor's memory; stages read their bounds from there, so no count makes a round trip
// to the host within a step. A count past its buffer's capacity sets `overflow` and the
// needed size; the step is then run again from its start with larger buffers (pipeline_step.h).
#pragma once

#include <algorithm>
#include <vector>

#include "engine/collision/feature_cache_hd.h"
#include "engine/exec/condensed_solve.h"
#include "engine/exec/executor.h"
#include "engine/exec/pipeline_fem_data.h"
#include "engine/exec/pipeline_islands_data.h"
#include "engine/exec/pipeline_joints_data.h"
#include "engine/exec/step_hd.h"
#include "engine/world.h"

namespace cs {

constexpr int kMaxNewtonHistory = 64;          // merit history entries per step
constexpr int kMaxColours = kGpuMaxColours;    // Gauss-Seidel colours (engine/exec/step_hd.h)

// Scalars of one step, in the executor's memory; copied to the host once per step.
struct StepCounters {
    Real time;                 // World's state.time
    int bodies, shapes;        // the model's counts (bounds of per-body and per-shape loops)
    int pairCount;             // broad phase pairs
    int contactCount;          // potential contacts
    int keptContacts;          // after the standard model's duplicate merge, less those culled: the contacts with rows
    int rowCount;              // 3 * keptContacts
    // Row culling (engine/contact/row_culling.h; recordContactRows, recordCullCheck)
    int lastConverged;         // State::lastSolveConverged: the last substep's Newton reached its tolerance
    int cullOn;                // this solve leaves out the contacts that cannot close
    int cullAny;               // some contact was left out
    int cullFailed;            // a left-out contact would have closed
    int cullRetry;             // the reduced solve does not stand: solved again with every row
    int culledContacts;        // contacts left out of the solve that stood
    int cullResolves;          // solves repeated with every row, this substep
    Real cullPushout;          // v_push of the substep (m/s)
    int femCulled;             // of culledContacts, the FEM node-part contacts (recordFemContacts)
    Real femCullPushout;       // v_push of the FEM contacts: the larger of cullPushout and their own (m/s)
    // The speed guard (engine/solver/speed_guard_hd.h; recordPrepare, recordIntegrate, recordFemGuard)
    Real fastest, fastestNode; // m/s, the fastest body point and FEM node at the substep's start
    Real dragSpeed;            // m/s, what the drag's force limit adds to the scale in one substep
    Real speedLimit;           // m/s, the limit of bodies in no joint and of FEM nodes
    int warmCount;             // entries of the warm-start cache (sorted by key)
    int femWarm;               // 1: fem.warm holds last substep's FEM row impulses
    int jointWarm;             // 1: joints.warm holds last substep's joint and coupling impulses
    int femContacts, femContactWarm, neededFemContacts;   // FEM contacts (node-part, then node-triangle), their warm cache
    int femTriContacts;        // of the femContacts, the node-triangle ones (FEM-FEM and self contact)
    int bad;                   // the guard fired in this substep
    int femNodes, femTets;     // the model's FEM counts (bounds of the energy guard's sums)
    Vec3 energyBodies, energyNodes, energyTets;   // the energy guard's sums (pipeline_energy.h)
    Real energyRows;
    int energyFailed;          // the energy guard fired in this substep
    Real energyRise, energyAllowed;   // J: its step's rise and what could supply it
    int failedSteps;           // substeps rolled back by the guard in this step
    int overflow;              // a count exceeded its buffer: grow and run the step again
    int neededPairs, neededContacts, neededSlots;   // the largest counts of the step
    int axis;                  // sweep axis
    Vec3 centreSum, centreSumSq;   // of the AABB centres (the sweep axis)
    Real maxPenetration;       // m, max over kept contacts of -gap
    // Narrow-phase reuse (engine/collision/feature_cache_hd.h; recordNarrowPhase)
    int reuseSide;             // pairCache[reuseSide] and candidates[reuseSide]: the last substep's entries
    int reusePairs;            // how many (0: none, as after an upload, a re-run of several substeps, or reuse off)
    int candidatesUsed;        // candidates this substep's entries asked for (past the pool: overflow)
    int neededCandidates;      // the most of the step
    int reusedPairs, rebuiltPairs, fullPairs;   // this substep's decisions (FeatureCache's counts)
    int colourEntries;         // 2 * rowCapacity: the scatter entries sorted
    // Newton ([NSN] Algorithm 1)
    int newtonActive;          // 1 while the merit is above the tolerance and iterations are left
    Real newtonStep;           // this iteration's step t: the damping, cut at a force limit (pipeline_joints.h)
    int ncpSideChanged;        // 1: a row changed its NCP side since the last iteration (fullStepStableSet)
    int newtonIterations, linearIterations;
    Real meritSq, merit;
    Real newtonResidual[kMaxNewtonHistory];
    // the safeguards of newton_steps_hd.h
    Real linearTolerance;      // the linear solve's relative tolerance (eta_k with forcing)
    Real previousMerit;        // the merit the last Newton step started from
    Real bestMerit;            // the least merit of the step; newtonBest holds its impulses
    int bestImproved;          // 1: this iterate is the best so far (copy it)
    int cutActive;             // 1: the step is being halved
    int restoredBest;          // 1: the best iterate was returned
    Real meritAtCap;           // the far Newton cap: the merit after newtonIterations iterations
    int restoredCap;           // 1: the far iterations ran away and the cap's iterate was returned
};

// Scalars of one linear solve (krylov_steps_hd.h's recurrences run on these).
struct LinearControl {
    int active;                // 1 while the solve goes on
    int iterations;
    int copyBest;              // PCG: this iteration's x is the best so far
    int powerActive;           // Jacobi: the power iteration goes on
    Real target, residual, bestResidual;
    Real bb, rr, rz, rzNext, pap, qap, qr, rho, rhoNext, normSq, alpha, beta;
    Real lambdaMax, omega;     // Jacobi's relaxation
};

// Scalars of the CCP model's first-order solvers (pipeline_ccp.h; ccp_steps_hd.h's recurrences).
struct CcpControl {
    int active;                // 1 while the solver goes on
    int powerActive;           // PJ: the power iteration goes on
    int accepted, refresh;     // APGD: this trial was taken; y moved and needs g_y
    int improved, restart;     // APGD: the trial has the least merit so far; gradient restart
    int iterations, doublings; // iterations done; APGD's doublings of L in a row
    int outer, fallback, revert;   // Newton (pipeline_ccp_newton.h): going on; this step replaced by
                                   // APGD; the impulses set back to those before the step
    int useNewton;                 // Newton: APGD improved on neither iterate, the step is taken
    int outerIterations, fallbacks;
    Real before, start;            // Newton: the CCP merit before the step; at APGD's start
    Real merit, meritSq, bestMerit;
    Real omega, estimate, normSq, xnormSq, norm;          // PJ's relaxation by power iteration
    Real lipschitz, theta, beta, fy, fx, gStep, dist, progress, num;   // APGD
};

// A pair's narrow-phase reuse entry (feature_cache_hd.h), one per pair of a substep in pair order.
struct PairCacheEntry {
    uint64_t key;              // shapeA << 32 | shapeB, as the pair's
    int first, count;          // its candidates in the side's pool; count < 0: no entry (the plain search)
    CandidateFrame frame;      // P0, C, s, the separation at P0
};

// What the pipeline runs with, beside the world's settings.
struct PipelineOptions {
    bool deterministic = true;     // CUDA: the sorted scatter (no float atomics); the host is always so
    int initialPairs = 0;          // first capacities; 0: 8 per shape (tests force them small)
    int initialContacts = 0;
    int initialSlots = 16;         // contacts one pair may store before the step re-runs
    int initialCandidates = 0;     // narrow-phase reuse's candidate pool; 0: 16 per pair
    bool sleepingWarm = true;      // sleeping: keep the sleeping islands' warm impulses (off: tests show what they change)
};

template <class Exec>
struct PipelineData {
    template <class T>
    using Buffer = typename Exec::template Buffer<T>;

    // ---- model ----
    FlatModel host;
    FlatModelView model;
    Buffer<Real> invMass, friction, spawnTime, shapeRadius, reach;
    Buffer<int> jointed;
    Buffer<Mat3> invInertiaLocal;
    Buffer<int> shapeType, shapeBody, shapePolytope, shapeFirstVertex, shapeFirstEdge, shapeFirstFace;
    Buffer<int> faceEdges, faceVertices, vertexEdgeStart, vertexEdges, jointBodies;
    Buffer<Transform> shapeLocal;
    Buffer<FlatPolytope> polytopes;
    Buffer<Vec3> vertices;
    Buffer<PolytopeEdge> edges;
    Buffer<PolytopeFace> faces;
    int bodies = -1, shapes = 0;

    // ---- state, its copy at the step's start, per-body step data ----
    Buffer<Vec3> pos, linVel, angVel, goodPos, startPos, startLinVel, startAngVel;
    Buffer<Quat> rot, goodRot, startRot;
    Buffer<uint8_t> active;
    Buffer<Real> bodyInvMass;
    Buffer<Mat3> bodyInvInertia;
    Buffer<Spatial> unconstrained, velocity, w;
    Buffer<int> bodyStart;                     // (bodies + 1) sorted scatter entries per body
    int solverBodies = 0;                      // bodies + FEM nodes: the solve's bodies (the
                                               // per-body buffers above from bodyInvMass on)

    // ---- deformable bodies (pipeline_fem_data.h) ----
    PipelineFem<Exec> fem;

    // ---- joints, couplings, the drag: the first rows (pipeline_joints_data.h) ----
    PipelineJoints<Exec> joints;

    // ---- shapes in the world ----
    Buffer<Transform> pose;
    Buffer<Aabb> aabb;
    Buffer<Vec3> centroid, worldVertices;
    Buffer<PolytopeEdge> worldEdges;
    Buffer<PolytopeFace> worldFaces;

    // ---- broad and narrow phase, contact model ----
    Buffer<Real> sortKey, sortKeyOut;
    Buffer<int> sortShape, sortShapeOut, sweepCount, sweepOffset;
    Buffer<uint64_t> pairKeys, pairKeysOut;
    Buffer<PotentialContact> slots, contacts;
    Buffer<int> pairContactCount, pairContactOffset, contactPairFirst, keep, keepOffset;
    Buffer<int> culled;                        // (contacts) 1: left out by row culling (row_culling.h)
    Buffer<Real> penetration;
    Buffer<WarmImpulse> warm, warmNext, warmAtStart;
    int pairCapacity = 0, contactCapacity = 0, rowCapacity = 0, pairSlots = 0;
    // Narrow-phase reuse: two sides, the last substep's entries (read) and this substep's (written),
    // StepCounters::reuseSide says which is which; (pairs) entries, (candidateCapacity) candidates.
    Buffer<PairCacheEntry> pairCache[2];
    Buffer<FeatureCandidate> candidates[2];
    int candidateCapacity = 0;

    // ---- rows and the solver ----
    Buffer<int> kind, rowBodyA, rowBodyB, normalRow, owner, runHead;
    Buffer<int> colour, colourRound, colourKeys, colourKeysOut, colourRows, colourRowsOut, colourStart, colourSize;
    Buffer<Spatial> jacobianA, jacobianB, minvJA, minvJB;
    Buffer<Real> bias, softness, mu, maxImpulse, lambda, lambdaStart, dlambda, dlambdaFixed, rhs;
    Buffer<Real> jv, diagA, compliance, residual, merit, invDiag, r, z, p, q, ap, az, best, power, powerOut;
    Buffer<uint64_t> entryKeys, entryKeysOut;  // (2 rows) scatter entries body << 32 | row, sorted
    Buffer<Real> newtonBest;                   // (rows) the least-merit iterate's impulses
    Buffer<Real> newtonAtCap;                  // (rows) the far Newton cap: the impulses at the cap
    Buffer<int> ncpSide;                       // (rows) ncpRowSide at the last iteration (fullStepStableSet)
    // The condensed solve of the compliant rows (condensed_solve.h; pipeline_newton.h recordSolve):
    // the Newton step is dlambdaFixed + t dlambda (dlambdaFixed zero when it does not run).
    CondensedSolve<Exec> condensed;
    // The block preconditioner (block_preconditioner_hd.h, pipeline_solve.h recordBlockPreconditioner):
    // (rows) run heads below rowCount, their exclusive scan, each row's block; (rows + 1) each run's
    // first row; (rows x kMaxBlockRows) the blocks' inverses.
    Buffer<int> blockHead, runIndex, runFirst, blockFirst, blockSize;
    Buffer<Real> blockInverse;

    // ---- the CCP model's PJ, PGS and APGD (pipeline_ccp.h) ----
    Buffer<Real> ccpOffset, ccpLinear, ccpScale;   // (rows) d_i,0, p = J u~ + offset, the block's s_k
    Buffer<Real> ccpG, ccpX, ccpY, ccpGy, ccpTrial, ccpBest;   // (rows) g and APGD's vectors
    Buffer<int> contactBodyA, contactBodyB;        // (contacts) a contact's bodies (PGS colouring)
    Buffer<uint64_t> contactKeys, contactKeysOut;  // (2 contacts) body << 32 | contact, sorted
    Buffer<int> contactBodyStart;                  // (bodies + 1)
    Buffer<Real> ccpHistory;                       // (iterations + 1) the CCP merit per iteration
    Buffer<CcpControl> ccp;

    // ---- counters ----
    Buffer<StepCounters> counters;
    Buffer<LinearControl> linear;
    StepCounters hostCounters{};               // the host's copy after the step's one sync

    PipelineSleep<Exec> sleep;                 // islands and sleeping (pipeline_islands.h)
};

// Sizes narrow-phase reuse's candidate pools (contents kept).
template <class Exec>
void reserveCandidates(PipelineData<Exec>& d, int candidates) {
    d.candidateCapacity = candidates;
    for (auto* b : {&d.candidates[0], &d.candidates[1]}) b->reserve(std::max(candidates, 1));
}

// Sizes every buffer whose length depends on the contact capacities (contents kept).
template <class Exec>
void reserveContacts(PipelineData<Exec>& d, int pairs, int slots, int contacts) {
    d.pairCapacity = pairs;
    d.pairSlots = slots;
    d.contactCapacity = contacts;
    // joints, couplings and the drag (3), contacts, FEM, FEM contacts
    d.rowCapacity = d.joints.rows + 3 + 3 * contacts + d.fem.rows + 3 * d.fem.contactCapacity;
    const size_t rows = d.rowCapacity;
    d.pairKeys.reserve(pairs); d.pairKeysOut.reserve(pairs);
    d.pairContactCount.reserve(pairs); d.pairContactOffset.reserve(pairs);
    d.slots.reserve(size_t(pairs) * slots);
    for (auto* b : {&d.pairCache[0], &d.pairCache[1]}) b->reserve(pairs);
    for (auto* b : {&d.contactPairFirst, &d.keep, &d.keepOffset, &d.culled}) b->reserve(contacts);
    d.contacts.reserve(contacts);
    d.penetration.reserve(contacts);
    for (auto* b : {&d.warm, &d.warmNext, &d.warmAtStart}) b->reserve(contacts);
    for (auto* b : {&d.kind, &d.rowBodyA, &d.rowBodyB, &d.normalRow, &d.owner, &d.runHead, &d.colour, &d.colourRound,
                    &d.colourKeys, &d.colourKeysOut, &d.colourRows, &d.colourRowsOut})
        b->reserve(rows);
    for (auto* b : {&d.jacobianA, &d.jacobianB, &d.minvJA, &d.minvJB}) b->reserve(rows);
    for (auto* b : {&d.bias, &d.softness, &d.mu, &d.maxImpulse, &d.lambda, &d.lambdaStart, &d.dlambda, &d.dlambdaFixed, &d.rhs, &d.jv,
                    &d.diagA, &d.compliance, &d.residual, &d.merit, &d.invDiag, &d.r, &d.z, &d.p, &d.q, &d.ap, &d.az,
                    &d.best, &d.power, &d.powerOut, &d.newtonBest, &d.newtonAtCap})
        b->reserve(rows);
    d.ncpSide.reserve(rows);
    for (auto* b : {&d.blockHead, &d.runIndex, &d.blockFirst, &d.blockSize}) b->reserve(rows);
    d.runFirst.reserve(rows + 1);
    d.blockInverse.reserve(rows * kMaxBlockRows);
    const size_t columns = d.fem.wide() ? 4 : 2;   // scatter entries per row
    d.entryKeys.reserve(columns * rows);
    d.entryKeysOut.reserve(columns * rows);
    reserveFemRows(d.fem, rows);
    for (auto* b : {&d.ccpOffset, &d.ccpLinear, &d.ccpScale, &d.ccpG, &d.ccpX, &d.ccpY, &d.ccpGy, &d.ccpTrial, &d.ccpBest})
        b->reserve(rows);
    d.contactBodyA.reserve(contacts);
    d.contactBodyB.reserve(contacts);
    d.contactKeys.reserve(2 * size_t(contacts));
    d.contactKeysOut.reserve(2 * size_t(contacts));
}

template <class Exec, class T>
void uploadVector(Exec& ex, typename Exec::template Buffer<T>& to, const std::vector<T>& from) {
    to.reserve(std::max<size_t>(from.size(), 1));
    if (!from.empty()) ex.upload(to.data(), from.data(), from.size());
}

// The model into the executor's memory, and every buffer sized by bodies and shapes.
template <class Exec>
void uploadModel(Exec& ex, PipelineData<Exec>& d, const Model& model, const PipelineOptions& options) {
    d.host = flattenModel(model);
    const FlatModel& f = d.host;
    d.bodies = model.bodyCount();
    d.shapes = model.shapeCount();
    uploadVector(ex, d.invMass, f.invMass); uploadVector(ex, d.friction, f.friction);
    uploadVector(ex, d.spawnTime, f.spawnTime); uploadVector(ex, d.shapeRadius, f.shapeRadius);
    uploadVector(ex, d.reach, f.reach); uploadVector(ex, d.jointed, f.jointed);
    uploadVector(ex, d.invInertiaLocal, f.invInertiaLocal); uploadVector(ex, d.shapeType, f.shapeType);
    uploadVector(ex, d.shapeBody, f.shapeBody); uploadVector(ex, d.shapePolytope, f.shapePolytope);
    uploadVector(ex, d.shapeFirstVertex, f.shapeFirstVertex); uploadVector(ex, d.shapeFirstEdge, f.shapeFirstEdge);
    uploadVector(ex, d.shapeFirstFace, f.shapeFirstFace); uploadVector(ex, d.faceEdges, f.faceEdges);
    uploadVector(ex, d.faceVertices, f.faceVertices); uploadVector(ex, d.vertexEdgeStart, f.vertexEdgeStart);
    uploadVector(ex, d.vertexEdges, f.vertexEdges); uploadVector(ex, d.jointBodies, f.jointBodies);
    uploadVector(ex, d.shapeLocal, f.shapeLocal); uploadVector(ex, d.polytopes, f.polytopes);
    uploadVector(ex, d.vertices, f.vertices); uploadVector(ex, d.edges, f.edges); uploadVector(ex, d.faces, f.faces);
    FlatModelView v = f.view();   // the same counts, pointers into the executor's memory
    v.invMass = d.invMass.data(); v.friction = d.friction.data(); v.spawnTime = d.spawnTime.data();
    v.reach = d.reach.data(); v.jointed = d.jointed.data();
    v.shapeRadius = d.shapeRadius.data(); v.invInertiaLocal = d.invInertiaLocal.data();
    v.shapeType = d.shapeType.data(); v.shapeBody = d.shapeBody.data(); v.shapePolytope = d.shapePolytope.data();
    v.shapeFirstVertex = d.shapeFirstVertex.data(); v.shapeFirstEdge = d.shapeFirstEdge.data();
    v.shapeFirstFace = d.shapeFirstFace.data(); v.faceEdges = d.faceEdges.data();
    v.faceVertices = d.faceVertices.data(); v.vertexEdgeStart = d.vertexEdgeStart.data();
    v.vertexEdges = d.vertexEdges.data(); v.jointBodies = d.jointBodies.data(); v.shapeLocal = d.shapeLocal.data();
    v.polytopes = d.polytopes.data(); v.vertices = d.vertices.data(); v.edges = d.edges.data(); v.faces = d.faces.data();
    d.model = v;

    uploadFemModel(ex, d.fem, model);
    uploadJoints(ex, d.joints, model);
    d.fem.wideJoints = d.joints.wideCouplings;
    if (d.fem.nodes > 0 && d.fem.contactCapacity == 0)
        reserveFemContacts(d.fem, options.initialContacts > 0 ? options.initialContacts : 4 * d.fem.surfaceCount + 16);
    d.solverBodies = d.bodies + d.fem.nodes;
    const size_t nb = std::max(d.bodies, 1), ns = std::max(d.shapes, 1), nsolve = std::max(d.solverBodies, 1);
    for (auto* b : {&d.pos, &d.linVel, &d.angVel, &d.goodPos, &d.startPos, &d.startLinVel, &d.startAngVel}) b->reserve(nb);
    for (auto* b : {&d.rot, &d.goodRot, &d.startRot}) b->reserve(nb);
    d.active.reserve(nb); d.bodyInvMass.reserve(nsolve); d.bodyInvInertia.reserve(nsolve);
    for (auto* b : {&d.unconstrained, &d.velocity, &d.w}) b->reserve(nsolve);
    d.bodyStart.reserve(nsolve + 1);
    d.contactBodyStart.reserve(nb + 1);
    d.pose.reserve(ns); d.aabb.reserve(ns); d.centroid.reserve(ns);
    d.worldVertices.reserve(std::max(f.worldVertexCount, 1));
    d.worldEdges.reserve(std::max(f.worldEdgeCount, 1));
    d.worldFaces.reserve(std::max(f.worldFaceCount, 1));
    for (auto* b : {&d.sortKey, &d.sortKeyOut}) b->reserve(ns);
    for (auto* b : {&d.sortShape, &d.sortShapeOut, &d.sweepCount, &d.sweepOffset}) b->reserve(ns);
    d.colourStart.reserve(kMaxColours + 2);
    d.colourSize.reserve(kMaxColours + 1);
    d.counters.reserve(1);
    d.linear.reserve(1);
    d.ccp.reserve(1);
    if (d.pairCapacity == 0) {
        const int automatic = 8 * (d.shapes + 8);
        reserveContacts(d, options.initialPairs > 0 ? options.initialPairs : automatic, std::max(options.initialSlots, 1),
                        options.initialContacts > 0 ? options.initialContacts : automatic);
        reserveCandidates(d, options.initialCandidates > 0 ? options.initialCandidates : 16 * d.pairCapacity);
    } else {
        reserveContacts(d, d.pairCapacity, d.pairSlots, d.contactCapacity);   // the FEM rows may have changed
    }
}

}  // namespace cs
