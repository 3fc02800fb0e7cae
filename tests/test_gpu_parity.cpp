// The CUDA backend: its shared math through the CPU, and parity with the CPU backend on a GPU.
//
// The device kernels are thin wrappers over CS_HD functions (engine/exec/flat_model.h, engine/exec/step_hd.h,
// engine/collision/shape_pair_hd.h, engine/contact/standard_rows_hd.h). The first test cases
// run those functions on the CPU exactly as the kernels arrange them (flattened model, per-shape
// world arrays, count-scan-write sweep, per-pair sinks, keep-scan rows, sorted per-body scatter,
// colouring rounds) and require bit-identical results to the CPU backend's own pipeline on
// every library scene. They need no GPU and run in every build.
// The last cases step every library scene on both backends (GpuWorld runs the step pipeline of
// engine/exec/ on the CUDA executor; the same pipeline on the host executor is checked against the
// CPU bit for bit in tests/test_exec_parity.cpp); without a GPU they print a SKIP message and pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/collision/narrow_phase.h"
#include "engine/contact/contact_model.h"
#include "engine/exec/step_hd.h"
#include "engine/scene/scene_loader.h"
#include "gpu/gpu_backend.h"

using namespace cs;

namespace {

World loadWorld(const std::string& name) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    REQUIRE_MESSAGE(loadScene(name, model, settings, info, &error), error);
    // Row culling off: the device culls as the CPU does (pipeline_collide.h), but its sums differ in the
    // last bits, so a contact on the predictor's edge may be left out on one side and not the other;
    // every row on both sides keeps this comparison to round-off (the host executor compares the
    // culled path bit for bit: test_exec_parity.cpp).
    // Narrow-phase reuse stays on: both sides reuse (feature_cache_hd.h), and a pair's decision on
    // the edge of the bound may differ by round-off, but the contacts are the full search's either way.
    settings.solver.cullRows = false;
    return World(std::move(model), settings);
}

template <class T>
bool sameBits(const T& a, const T& b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

bool sameContact(const PotentialContact& a, const PotentialContact& b) {
    return a.shapeA == b.shapeA && a.shapeB == b.shapeB && a.bodyA == b.bodyA && a.bodyB == b.bodyB &&
           a.featureA == b.featureA && a.featureB == b.featureB && a.type == b.type && sameBits(a.pointA, b.pointA) &&
           sameBits(a.pointB, b.pointB) && sameBits(a.normal, b.normal) && sameBits(a.gap, b.gap);
}

// World::substep's broad phase on the CPU (findPairs, then pairs of jointed bodies removed).
std::vector<uint64_t> cpuPairs(const World& w, std::vector<uint8_t>& active) {
    const Model& m = w.model();
    active.assign(m.bodyCount(), 0);
    for (int b = 0; b < m.bodyCount(); ++b) active[b] = w.isActive(b) ? 1 : 0;
    std::vector<Aabb> aabbs;
    std::vector<ShapePair> pairs;
    computeShapeAabbs(m, w.state(), w.settings.contactMargin, aabbs);
    findPairs(m, aabbs, active.data(), pairs);
    std::vector<uint64_t> keys;
    for (const ShapePair& p : pairs) {
        const int a = m.shapeBody[p.shapeA], b = m.shapeBody[p.shapeB];
        bool jointed = false;
        for (const Joint& j : m.joints) jointed |= (j.bodyA == a && j.bodyB == b) || (j.bodyA == b && j.bodyB == a);
        if (!jointed) keys.push_back((uint64_t(p.shapeA) << 32) | uint32_t(p.shapeB));
    }
    return keys;
}

// The device's collision stages, run on the CPU in the kernels' arrangement.
struct FlatCollision {
    FlatModel flat;
    std::vector<Transform> pose;
    std::vector<Aabb> aabb;
    std::vector<Vec3> centroid, vertices;
    std::vector<PolytopeEdge> edges;
    std::vector<PolytopeFace> faces;
    ShapeWorldView view{};

    explicit FlatCollision(const Model& m) : flat(flattenModel(m)) {
        const size_t n = m.shapeCount();
        pose.resize(n); aabb.resize(n); centroid.resize(n);
        vertices.resize(flat.worldVertexCount); edges.resize(flat.worldEdgeCount); faces.resize(flat.worldFaceCount);
        view = ShapeWorldView{pose.data(), aabb.data(), centroid.data(), vertices.data(), edges.data(), faces.data()};
    }
    void shapes(const State& s, Real margin) {   // shapesKernel
        for (int i = 0; i < flat.view().shapeCount; ++i) shapeToWorld(flat.view(), s.pos.data(), s.rot.data(), margin, i, view);
    }
    // sortKeysKernel + radix sort (stable) + sweepKernel (count, scan, write) + key sort.
    std::vector<uint64_t> pairs(const std::vector<uint8_t>& active, int axis) {
        const FlatModelView m = flat.view();
        std::vector<std::pair<Real, int>> order;
        for (int s = 0; s < m.shapeCount; ++s) order.push_back({active[m.shapeBody[s]] ? aabb[s].lo[axis] : kHuge, s});
        std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first < b.first; });
        std::vector<Real> lo;
        std::vector<int> shape;
        for (auto& o : order) { lo.push_back(o.first); shape.push_back(o.second); }
        std::vector<int> count(m.shapeCount), offset(m.shapeCount + 1, 0);
        for (int i = 0; i < m.shapeCount; ++i)
            count[i] = sweepShape(m, active.data(), aabb.data(), lo.data(), shape.data(), m.shapeCount, axis, i, nullptr);
        for (int i = 0; i < m.shapeCount; ++i) offset[i + 1] = offset[i] + count[i];
        std::vector<uint64_t> keys(offset[m.shapeCount]);
        for (int i = 0; i < m.shapeCount; ++i)
            sweepShape(m, active.data(), aabb.data(), lo.data(), shape.data(), m.shapeCount, axis, i, keys.data() + offset[i]);
        std::sort(keys.begin(), keys.end());
        return keys;
    }
    // narrowKernel + compactKernel; false when a sink of `slots` was too small for some pair.
    bool contacts(const std::vector<uint64_t>& pairs, Real margin, int slots, std::vector<PotentialContact>& out,
                  std::vector<int>& pairFirst) {
        NarrowPhaseSettings s;
        s.margin = margin;
        std::vector<PotentialContact> slot(slots);
        out.clear();
        pairFirst.clear();
        bool fits = true;
        for (uint64_t key : pairs) {
            ContactSink sink{slot.data(), slots, 0};
            collideShapePair(flat.view(), view, int(key >> 32), int(uint32_t(key)), s, sink);
            fits &= sink.count <= slots;
            const int first = (int)out.size();
            for (int k = 0; k < sink.stored(); ++k) {
                out.push_back(slot[k]);
                pairFirst.push_back(first);
            }
        }
        return fits;
    }
};

}  // namespace

TEST_CASE("gpu shared math: flat broad and narrow phase equal the CPU's, bit for bit, on every library scene") {
    for (const std::string& name : listScenes()) {
        CAPTURE(name);
        World world = loadWorld(name);
        FlatCollision flat(world.model());
        for (int step = 0; step < 5; ++step) {
            if (step > 0) world.step();
            if (step % 4 != 0) continue;
            CAPTURE(step);
            const Real margin = world.settings.contactMargin;
            std::vector<uint8_t> active;
            const std::vector<uint64_t> expectedPairs = cpuPairs(world, active);
            flat.shapes(world.state(), margin);
            std::vector<Aabb> aabbs;
            computeShapeAabbs(world.model(), world.state(), margin, aabbs);
            for (size_t s = 0; s < aabbs.size(); ++s) REQUIRE(sameBits(aabbs[s], flat.aabb[s]));
            for (int axis = 0; axis < 3; ++axis) REQUIRE(flat.pairs(active, axis) == expectedPairs);

            std::vector<ShapePair> pairs;
            for (uint64_t k : expectedPairs) pairs.push_back({int(k >> 32), int(uint32_t(k))});
            NarrowPhaseSettings s;
            s.margin = margin;
            std::vector<PotentialContact> expected, got;
            std::vector<int> pairFirst;
            collidePairs(world.model(), world.state(), pairs, s, expected);
            REQUIRE(flat.contacts(expectedPairs, margin, 64, got, pairFirst));
            REQUIRE(got.size() == expected.size());
            for (size_t i = 0; i < got.size(); ++i) REQUIRE(sameContact(got[i], expected[i]));
        }
    }
}

TEST_CASE("gpu shared math: a contact sink too small counts what it cannot store") {
    World world = loadWorld("pyramid");
    FlatCollision flat(world.model());
    std::vector<uint8_t> active;
    const std::vector<uint64_t> pairs = cpuPairs(world, active);
    flat.shapes(world.state(), world.settings.contactMargin);
    std::vector<PotentialContact> full, small;
    std::vector<int> first;
    REQUIRE(flat.contacts(pairs, world.settings.contactMargin, 64, full, first));
    REQUIRE(full.size() > 2 * pairs.size());   // face-to-face boxes: several contacts per pair
    CHECK_FALSE(flat.contacts(pairs, world.settings.contactMargin, 2, small, first));   // overflow reported
    // Run again with the size asked for: the same contacts as with room to spare.
    int need = 0;
    for (uint64_t key : pairs) {
        std::vector<PotentialContact> slot(1);
        NarrowPhaseSettings s;
        s.margin = world.settings.contactMargin;
        ContactSink sink{slot.data(), 1, 0};
        collideShapePair(flat.flat.view(), flat.view, int(key >> 32), int(uint32_t(key)), s, sink);
        need = std::max(need, sink.count);
    }
    REQUIRE(flat.contacts(pairs, world.settings.contactMargin, need, small, first));
    REQUIRE(small.size() == full.size());
    for (size_t i = 0; i < small.size(); ++i) CHECK(sameContact(small[i], full[i]));
}

TEST_CASE("gpu shared math: rows, sorted scatter and colouring agree with the CPU backend") {
    for (const std::string& name : listScenes()) {
        World world = loadWorld(name);
        if (world.settings.solver.contactModel != ContactModelType::Standard) continue;
        CAPTURE(name);
        for (int i = 0; i < 3; ++i) world.step();   // a warm-start cache to look up
        const Model& m = world.model();
        const Real h = world.settings.dt / std::max(1, world.settings.substeps);
        std::vector<uint8_t> active;
        const std::vector<uint64_t> keys = cpuPairs(world, active);
        std::vector<ShapePair> pairs;
        for (uint64_t k : keys) pairs.push_back({int(k >> 32), int(uint32_t(k))});
        NarrowPhaseSettings s;
        s.margin = world.settings.contactMargin;
        std::vector<PotentialContact> potential;
        collidePairs(m, world.state(), pairs, s, potential);

        // CPU: the standard model's rows.
        ContactStageInput in{m, world.settings, world.state(), potential, h};
        ConstraintRows expected;
        buildContactRows(in, expected);

        // Device arrangement: keep flags, exclusive scan, three rows per kept contact.
        FlatModel flat = flattenModel(m);
        const int n = (int)potential.size();
        std::vector<int> pairFirst(n), keep(n), offset(n + 1, 0);
        for (int i = 0; i < n; ++i)
            pairFirst[i] = i > 0 && potential[i].shapeA == potential[i - 1].shapeA &&
                                   potential[i].shapeB == potential[i - 1].shapeB ? pairFirst[i - 1] : i;
        for (int i = 0; i < n; ++i) keep[i] = !duplicateOfEarlierContact(potential.data(), i, pairFirst[i]);
        for (int i = 0; i < n; ++i) offset[i + 1] = offset[i] + keep[i];
        const int rowCount = 3 * offset[n];
        REQUIRE(rowCount == expected.size());
        std::vector<int> kind(rowCount), bodyA(rowCount), bodyB(rowCount), normalRow(rowCount), owner(rowCount);
        std::vector<Spatial> jA(rowCount), jB(rowCount);
        std::vector<Real> bias(rowCount), soft(rowCount), mu(rowCount), maxImpulse(rowCount), lambda(rowCount);
        FlatRows rows{kind.data(), bodyA.data(), bodyB.data(), jA.data(), jB.data(), bias.data(), soft.data(),
                      mu.data(), normalRow.data(), maxImpulse.data(), lambda.data(), owner.data()};
        const std::vector<WarmImpulse>& warm = world.state().warm;
        for (int i = 0; i < n; ++i)
            if (keep[i])
                writeStandardContactRows(flat.view(), potential[i], i, world.state().pos.data(),
                                         world.settings.solver.stabilization,
                                         world.settings.solver.maxPushoutSpeed * world.settings.dt,
                                         world.settings.frictionScale, warm.data(),
                                         (int)warm.size(), world.settings.solver.warmStart, 3 * offset[i], rows);
        for (int i = 0; i < rowCount; ++i) {
            CAPTURE(i);
            REQUIRE(kind[i] == expected.kind[i]);
            REQUIRE(bodyA[i] == expected.bodyA[i]);
            REQUIRE(bodyB[i] == expected.bodyB[i]);
            REQUIRE(sameBits(jA[i], expected.jacobianA[i]));
            REQUIRE(sameBits(jB[i], expected.jacobianB[i]));
            REQUIRE(sameBits(bias[i], expected.bias[i]));
            REQUIRE(sameBits(mu[i], expected.mu[i]));
            REQUIRE(normalRow[i] == expected.normalRow[i]);
            REQUIRE(sameBits(lambda[i], expected.lambda[i]));
            REQUIRE(owner[i] == expected.owner[i]);
        }
        if (rowCount == 0) continue;

        // Per-body data of the step (prepareBody) and the system view of newton.cpp.
        const int nb = m.bodyCount();
        std::vector<uint8_t> act(nb);
        std::vector<Real> invMass(nb);
        std::vector<Mat3> invInertia(nb);
        std::vector<Spatial> u(nb);
        for (int b = 0; b < nb; ++b)
            prepareBody(flat.view(), world.state().rot.data(), world.state().linVel.data(), world.state().angVel.data(),
                        world.settings.gravity, h, world.state().time, b, act.data(), invMass.data(),
                        invInertia.data(), u.data());
        RowSystemView v;
        v.rowCount = rowCount;
        v.bodyCount = nb;
        v.bodyA = bodyA.data();
        v.bodyB = bodyB.data();
        v.jacobianA = jA.data();
        v.jacobianB = jB.data();
        v.compliance = soft.data();
        v.invMass = invMass.data();
        v.invInertia = invInertia.data();

        // Sorted per-body scatter == serial scatterRow in row order, bit for bit.
        std::vector<Spatial> serial(nb, Spatial{{0, 0, 0}, {0, 0, 0}});
        for (int i = 0; i < rowCount; ++i) scatterRow(v, i, lambda[i], serial.data());
        std::vector<uint64_t> entries;
        for (int i = 0; i < rowCount; ++i) {
            if (bodyA[i] >= 0 && invMass[bodyA[i]] > 0) entries.push_back(scatterEntryKey(bodyA[i], i));
            if (bodyB[i] >= 0 && invMass[bodyB[i]] > 0) entries.push_back(scatterEntryKey(bodyB[i], i));
        }
        std::sort(entries.begin(), entries.end());
        std::vector<int> start(nb + 1);
        for (int b = 0; b <= nb; ++b) start[b] = scatterEntryStart(entries.data(), (int)entries.size(), b);
        for (int b = 0; b < nb; ++b) {
            CAPTURE(b);
            const Spatial w = gatherBodyImpulse(v, entries.data(), start[b], start[b + 1], b, lambda.data());
            if (invMass[b] > 0) REQUIRE(sameBits(w, serial[b]));
        }

        // Colouring rounds (each round decides on the state at its start, as on the device): rows
        // of one colour share no dynamic body (required: the sweep's correctness). How many rows
        // are left to the serial sweep is a matter of speed only; it is reported next to the CPU
        // greedy colouring's overflow (same 64-colour cap) and bounded loosely: the pyramid has
        // bodies with more than 64 rows, and colouring rows instead of contacts (3 rows each)
        // leaves about a quarter of them to the serial sweep.
        std::vector<int> colour(rowCount, -1), round(rowCount, -1);
        for (int k = 0; k < kGpuColourRounds; ++k) {
            std::vector<int> nextColour = colour, nextRound = round;
            for (int i = 0; i < rowCount; ++i) {
                if (round[i] >= 0) continue;
                const int c = colourRowInRound(v, entries.data(), start.data(), round.data(), colour.data(), i, k);
                if (c >= 0) { nextColour[i] = c; nextRound[i] = k; }
            }
            colour = nextColour;
            round = nextRound;
        }
        std::vector<std::vector<int>> bodyColours(nb);
        int left = 0;
        for (int i = 0; i < rowCount; ++i) {
            if (colour[i] < 0 || colour[i] >= kGpuMaxColours) { ++left; continue; }
            for (int b : {bodyA[i], bodyB[i]}) {
                if (b < 0 || invMass[b] == 0) continue;
                REQUIRE(std::find(bodyColours[b].begin(), bodyColours[b].end(), colour[i]) == bodyColours[b].end());
                bodyColours[b].push_back(colour[i]);
            }
        }
        ConstraintRows cpuRows = expected;
        std::vector<int> cpuStart, cpuOrder;
        colourRows(cpuRows, invMass, cpuStart, cpuOrder);
        const int cpuLeft = (int)cpuStart.size() - 1 > kGpuMaxColours ? cpuStart.back() - cpuStart[kGpuMaxColours] : 0;
        MESSAGE(name << ": " << rowCount << " rows; serial sweep: " << left << " rows after " << kGpuColourRounds
                     << " rounds (CPU greedy colouring: " << cpuLeft << ")");
        CHECK(left <= cpuLeft + rowCount / 3);
    }
}

TEST_CASE("gpu backend: without a GPU, GpuWorld says why and steps on the CPU") {
    std::string why;
    if (gpuAvailable(&why)) {
        MESSAGE("a GPU is present: the fallback is exercised by the parity test instead");
        return;
    }
    MESSAGE("no GPU: " << why);
    CHECK_FALSE(why.empty());
    World cpu = loadWorld("heavy_stack");
    World host = loadWorld("heavy_stack");
    GpuWorld gpu(host);
    CHECK_FALSE(gpu.onGpu());
    CHECK_FALSE(gpu.fallbackReason().empty());
    for (int i = 0; i < 5; ++i) {
        cpu.step();
        gpu.step();
    }
    CHECK(gpu.contactCount() == (int)cpu.contacts().size());
    for (int b = 0; b < cpu.model().bodyCount(); ++b) CHECK(sameBits(cpu.state().pos[b], host.state().pos[b]));
}

// Parity: every library scene stepped on both backends with the same settings. Stated
// tolerances over kParitySteps steps: identical contact counts for the first kCountSteps steps
// (later, a chaotic pile may legitimately differ by a contact at the margin), and every body
// within kPositionTolerance of the CPU trajectory (FMA contraction and the atomic scatter round
// differently from the CPU, so bits are not expected).
TEST_CASE("gpu parity: every library scene on the CPU and the GPU backend") {
    std::string why;
    if (!gpuAvailable(&why)) {
        MESSAGE("SKIP gpu parity: no GPU (" << why << "); the device path was compiled but not run");
        return;
    }
    constexpr int kParitySteps = 60, kCountSteps = 20;
    const Real kPositionTolerance = kPrecisionName[0] == 'f' ? Real(1e-2) : Real(1e-4);   // m
    for (const std::string& name : listScenes())
    for (Preconditioner pc : {Preconditioner::Diagonal, Preconditioner::Block}) {   // PCG and PCR's M
        CAPTURE(name);
        CAPTURE(std::string(preconditionerName(pc)));
        World cpu = loadWorld(name);
        World host = loadWorld(name);
        cpu.settings.solver.preconditioner = host.settings.solver.preconditioner = pc;
        if (!gpuSupports(host, &why)) {
            MESSAGE("SKIP gpu parity for " << name << ": " << why);
            continue;
        }
        GpuWorld gpu(host);
        Real worst = 0;
        for (int i = 0; i < kParitySteps; ++i) {
            cpu.step();
            gpu.step();
            REQUIRE(gpu.onGpu());
            if (i < kCountSteps) CHECK(gpu.contactCount() == (int)cpu.contacts().size());
            for (int b = 0; b < cpu.model().bodyCount(); ++b)
                worst = std::max(worst, length(cpu.state().pos[b] - host.state().pos[b]));
        }
        MESSAGE(name << " (" << preconditionerName(pc) << "): largest position difference " << worst << " m over "
                     << kParitySteps << " steps");
        CHECK(worst <= kPositionTolerance);
    }
    // Deterministic mode: two runs, the same bits.
    World a = loadWorld("pyramid"), b = loadWorld("pyramid");
    GpuSettings det;
    det.deterministic = true;
    GpuWorld ga(a, det), gb(b, det);
    for (int i = 0; i < 30; ++i) {
        ga.step();
        gb.step();
    }
    for (int i = 0; i < a.model().bodyCount(); ++i) CHECK(sameBits(a.state().pos[i], b.state().pos[i]));
}

TEST_CASE("gpu parity: the condensed FEM solve on the GPU against World::step with it") {
    std::string why;
    if (!gpuAvailable(&why)) {
        MESSAGE("SKIP gpu condensed parity: no GPU (" << why << "); the device path was compiled but not run");
        return;
    }
    // The same CondensedSolve (engine/exec/condensed_solve.h) on cuSOLVER against CHOLMOD and
    // Eigen: backward-stable factorizations with other sum orders, so the states agree to
    // round-off carried through the steps: 1e-6 m in double (1e-3 in float), and the same Newton
    // iteration counts (each iteration is one direct solve on both sides).
    const Real tolerance = kPrecisionName[0] == 'f' ? Real(1e-3) : Real(1e-6);
    for (const char* name : {"fem_cantilever", "hand_ball_fem"}) {
        CAPTURE(name);
        World cpu = loadWorld(name), host = loadWorld(name);
        for (World* w : {&cpu, &host}) {
            w->settings.solver.condenseCompliantRows = true;
            w->settings.solver.cullRows = false;
            w->settings.narrowReuse = false;
        }
        REQUIRE_MESSAGE(gpuSupports(host, &why), why);
        GpuWorld gpu(host);
        Real worst = 0;
        int mismatches = 0;
        for (int i = 0; i < 30; ++i) {
            cpu.step();
            gpu.step();
            REQUIRE(gpu.onGpu());
            mismatches += cpu.solveStats().newtonIterations != gpu.solveStats().newtonIterations;
            for (size_t n = 0; n < cpu.state().femPos.size(); ++n)
                worst = std::max(worst, length(cpu.state().femPos[n] - host.state().femPos[n]));
        }
        MESSAGE(name << ": largest node position difference " << worst << " m over 30 steps; Newton count mismatches "
                     << mismatches);
        CHECK(worst <= tolerance);
        CHECK(mismatches == 0);
    }
}
