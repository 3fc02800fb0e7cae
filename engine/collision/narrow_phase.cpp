// Narrow phase: dispatch on the shape types, the smooth (sphere) cases, and the batch over
// pairs. The polytope-polytope feature pairs are in polytope_contacts.cpp; conventions in
// narrow_phase.h.
#include "engine/collision/narrow_phase.h"

#include <algorithm>

#include "engine/collision/box_contacts.h"
#include "engine/collision/feature_cache.h"
#include "engine/collision/shape_pair_hd.h"
#include "engine/collision/world_polytope.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace cs {

void collideSpheres(Vec3 centerA, Real radiusA, Vec3 centerB, Real radiusB,
                    const NarrowPhaseSettings& s, std::vector<PotentialContact>& out) {
    PotentialContact c;
    if (sphereSphereContact(centerA, radiusA, centerB, radiusB, s, c)) out.push_back(c);
}

void collideSpherePolytope(Vec3 center, Real radius, bool sphereIsA, const ConvexPolytope& p,
                           const Transform& Xp, const NarrowPhaseSettings& s,
                           std::vector<PotentialContact>& out) {
    if (!boundsMayTouch(transformPoint(Xp, p.centroid), p.boundingRadius, center, radius, s.margin)) return;
    thread_local WorldPolytope scratch;
    scratch.assign(p, Xp);
    PotentialContact c;
    ContactSink sink{&c, 1, 0};
    collideSpherePolytopePair(center, radius, sphereIsA, scratch.view(), s, sink);
    if (sink.count == 1) out.push_back(c);
}

Real shapeMotionReach(const Model& model, const State& state, int shape, const NarrowPhaseSettings& s) {
    const int b = model.shapeBody[shape];
    return partMotionReach(s, !model.isStatic(b), state.linVel[b], state.angVel[b],   // feature_pairs.h
                           partArm(model.shapeLocal[shape], model.shapeRadius[shape]));
}

Real shapeClosingPad(const Model& model, const State& state, int shape, const NarrowPhaseSettings& s) {
    const Real reach = shapeMotionReach(model, state, shape, s);
    const Real full = s.margin + reach;
    if (s.closingSlop < 0 || model.shapeType[shape] == ShapeType::Sphere) return full;
    const int b = model.shapeBody[shape];
    const Real close = closingPartPad(s, !model.isStatic(b), state.linVel[b], state.angVel[b],   // feature_pairs.h
                                      partArm(model.shapeLocal[shape], model.shapeRadius[shape]));
    const Real pad = close > reach ? close : reach;
    return pad < full ? pad : full;
}

void computeContactAabbs(const Model& model, const State& state, const NarrowPhaseSettings& s,
                         std::vector<Aabb>& out) {
    out.resize(model.shapeCount());
    for (int k = 0; k < model.shapeCount(); ++k)
        out[k] = computeShapeAabb(model, state, k, shapeClosingPad(model, state, k, s));
}

NarrowPhaseSettings pairSettings(const Model& model, const State& state, int shapeA, int shapeB,
                                 const NarrowPhaseSettings& s) {
    if (!(s.motionScale > 0)) return s;
    const int a = model.shapeBody[shapeA], b = model.shapeBody[shapeB];
    const Real armA = partArm(model.shapeLocal[shapeA], model.shapeRadius[shapeA]);   // feature_pairs.h
    const Real armB = partArm(model.shapeLocal[shapeB], model.shapeRadius[shapeB]);
    return widenedPairSettings(s, !model.isStatic(a), state.linVel[a], state.angVel[a], armA,
                               !model.isStatic(b), state.linVel[b], state.angVel[b], armB);
}

void collideShapes(const Model& model, const State& state, int shapeA, int shapeB,
                   const NarrowPhaseSettings& baseSettings, std::vector<PotentialContact>& out) {
    const NarrowPhaseSettings settings = pairSettings(model, state, shapeA, shapeB, baseSettings);
    const size_t first = out.size();
    const Transform Xa = shapeWorldTransform(model, state, shapeA);
    const Transform Xb = shapeWorldTransform(model, state, shapeB);
    const bool sphereA = model.shapeType[shapeA] == ShapeType::Sphere;
    const bool sphereB = model.shapeType[shapeB] == ShapeType::Sphere;
    if (sphereA && sphereB) {
        collideSpheres(Xa.pos, model.shapeRadius[shapeA], Xb.pos, model.shapeRadius[shapeB],
                       settings, out);
    } else if (sphereA) {
        collideSpherePolytope(Xa.pos, model.shapeRadius[shapeA], true,
                              model.polytopes[model.shapePolytope[shapeB]], Xb, settings, out);
    } else if (sphereB) {
        collideSpherePolytope(Xb.pos, model.shapeRadius[shapeB], false,
                              model.polytopes[model.shapePolytope[shapeA]], Xa, settings, out);
    } else {
        collidePolytopes(model.polytopes[model.shapePolytope[shapeA]], Xa,
                         model.polytopes[model.shapePolytope[shapeB]], Xb, settings, out);
    }
    for (size_t i = first; i < out.size(); ++i) {
        out[i].shapeA = shapeA;
        out[i].shapeB = shapeB;
        out[i].bodyA = model.shapeBody[shapeA];
        out[i].bodyB = model.shapeBody[shapeB];
    }
}

void collideShapes(const Model& model, const State& state, int shapeA, int shapeB, Real margin,
                   std::vector<PotentialContact>& out) {
    NarrowPhaseSettings settings;
    settings.margin = margin;
    collideShapes(model, state, shapeA, shapeB, settings, out);
}

namespace {

// collidePairs' world frame: each shape named by a pair moved into the world once per call
// (a box beside eight neighbours was transformed eight times), with the same arithmetic as
// collideShapes, so the contacts are the same bits. Filled before the pairs run, read-only
// while threads run them.
struct WorldShapes {
    std::vector<WorldPolytope> polytopes;   // (shapes) polytopes only
    std::vector<Transform> pose;            // (shapes)
    std::vector<uint8_t> ready;             // (shapes)
    std::vector<BoxFaces> boxes;            // (polytopes) which are boxes: the soft step's only (boxClip)

    void assign(const Model& model, const State& state, const std::vector<ShapePair>& pairs, bool boxClip) {
        const int n = model.shapeCount();
        polytopes.resize(n);
        pose.resize(n);
        ready.assign(n, 0);
        for (const ShapePair& p : pairs) ready[p.shapeA] = ready[p.shapeB] = 1;
        boxes.assign(boxClip ? model.polytopes.size() : 0, BoxFaces{});
        for (size_t k = 0; k < boxes.size(); ++k) boxes[k] = detectBox(model.polytopes[k]);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (n >= 256)
#endif
        for (int k = 0; k < n; ++k) {
            if (!ready[k]) continue;
            pose[k] = shapeWorldTransform(model, state, k);
            if (model.shapeType[k] != ShapeType::Sphere)
                polytopes[k].assign(model.polytopes[model.shapePolytope[k]], pose[k]);
        }
    }
};

// What a polytope pair does with the feature cache (feature_cache.h): nothing (no cache, or a
// pair that moves), run its candidates (delta: its motion since they were built), or search in
// full and build new ones.
struct PairReuse {
    FeatureCacheEntry* entry = nullptr;
    ReuseMode mode = ReuseMode::Full;   // feature_cache_hd.h
    Real delta = 0;
};

// apartChecked: no face plane keeps the two apart by more than a margin <= s.margin (collideCandidates).
void collideWorldPolytopes(const WorldPolytope& wa, const WorldPolytope& wb, const NarrowPhaseSettings& s,
                           std::vector<PotentialContact>& out, const PairReuse& reuse = PairReuse{},
                           bool apartChecked = false) {
    if (!boundsMayTouch(wa.centroid, wa.source->boundingRadius, wb.centroid, wb.source->boundingRadius, s.margin))
        return;
    thread_local std::vector<PotentialContact> buffer(32);
    for (;;) {   // a sink too small for the pair: grow it and run the pair again
        ContactSink sink{buffer.data(), (int)buffer.size(), 0};
        if (reuse.mode == ReuseMode::Full) collidePolytopePair(wa.view(), wb.view(), s, sink);
        else collideCandidates(wa.view(), wb.view(), s, *reuse.entry, reuse.delta, sink, apartChecked);
        if (sink.count <= sink.capacity) {
            out.insert(out.end(), buffer.begin(), buffer.begin() + sink.count);
            return;
        }
        buffer.resize(2 * size_t(sink.count));
    }
}

void collideSphereWorld(Vec3 center, Real radius, bool sphereIsA, const WorldPolytope& q, const NarrowPhaseSettings& s,
                        std::vector<PotentialContact>& out) {
    if (!boundsMayTouch(q.centroid, q.source->boundingRadius, center, radius, s.margin)) return;
    PotentialContact c;
    ContactSink sink{&c, 1, 0};
    collideSpherePolytopePair(center, radius, sphereIsA, q.view(), s, sink);
    if (sink.count == 1) out.push_back(c);
}

// One side of a pair for the cache's rest test (feature_cache_hd.h pairStepMotion).
PairSide pairSide(const Model& model, const State& state, int shape) {
    const int b = model.shapeBody[shape];
    return PairSide{!model.isStatic(b), state.linVel[b], state.angVel[b],
                    partArm(model.shapeLocal[shape], model.shapeRadius[shape])};
}

// The cache's decision for a polytope pair (feature_cache_hd.h decidePairReuse): its entry's
// candidates when they hold at the current poses, new ones when the pair is at rest, else the
// plain search (and the entry dropped).
PairReuse decideReuse(const Model& model, const State& state, const WorldShapes& world, int shapeA, int shapeB,
                      const NarrowPhaseSettings& settings, const NarrowPhaseSettings& base, FeatureCacheEntry* entry) {
    PairReuse r;
    if (!entry) return r;
    const ConvexPolytope& a = *world.polytopes[shapeA].source;
    const ConvexPolytope& b = *world.polytopes[shapeB].source;
    const bool held = entry->pair == ShapePair{shapeA, shapeB} && entry->polytopeA == &a && entry->polytopeB == &b;
    r.mode = decidePairReuse(held ? &entry->frame : nullptr, LocalBounds{a.centroid, a.boundingRadius},
                             LocalBounds{b.centroid, b.boundingRadius}, world.pose[shapeA], world.pose[shapeB], settings,
                             base.margin, pairSide(model, state, shapeA), pairSide(model, state, shapeB), r.delta);
    if (r.mode == ReuseMode::Full) {
        entry->pair = ShapePair{-1, -1};   // no entry: the plain search
        return PairReuse{};
    }
    r.entry = entry;
    if (r.mode == ReuseMode::Rebuild) {
        entry->pair = ShapePair{shapeA, shapeB};
        entry->polytopeA = &a;
        entry->polytopeB = &b;
    }
    return r;
}

// collideShapes over the world frame of `world`; entry: the pair's slot in the feature cache
// (null: no cache).
// Returns what the pair did (ReuseMode).
ReuseMode collideCachedPair(const Model& model, const State& state, const WorldShapes& world, int shapeA, int shapeB,
                            const NarrowPhaseSettings& baseSettings, std::vector<PotentialContact>& out,
                            FeatureCacheEntry* entry) {
    const NarrowPhaseSettings settings = pairSettings(model, state, shapeA, shapeB, baseSettings);
    const size_t first = out.size();
    const bool sphereA = model.shapeType[shapeA] == ShapeType::Sphere;
    const bool sphereB = model.shapeType[shapeB] == ShapeType::Sphere;
    const Real ra = model.shapeRadius[shapeA], rb = model.shapeRadius[shapeB];
    ReuseMode mode = ReuseMode::Full;
    if (sphereA && sphereB) collideSpheres(world.pose[shapeA].pos, ra, world.pose[shapeB].pos, rb, settings, out);
    else if (sphereA) collideSphereWorld(world.pose[shapeA].pos, ra, true, world.polytopes[shapeB], settings, out);
    else if (sphereB) collideSphereWorld(world.pose[shapeB].pos, rb, false, world.polytopes[shapeA], settings, out);
    else {
        const WorldPolytope& wa = world.polytopes[shapeA];
        const WorldPolytope& wb = world.polytopes[shapeB];
        // The relaxation methods (closingSlop >= 0): a pair that a face plane keeps apart by more
        // than the gap its bodies can close in the step lists nothing (feature_pairs.h closingPairMargin).
        // Not apart by more than close <= margin: not by more than the margin either, so the
        // candidates' own face-plane test (collideCandidates) is skipped.
        bool apartChecked = false;
        bool boxes = false;
        if (settings.closingSlop >= 0) {
            const int a = model.shapeBody[shapeA], b = model.shapeBody[shapeB];
            const Real close = closingPairMargin(
                settings, !model.isStatic(a), state.linVel[a], state.angVel[a],
                partArm(model.shapeLocal[shapeA], ra), !model.isStatic(b), state.linVel[b], state.angVel[b],
                partArm(model.shapeLocal[shapeB], rb));
            // The soft step's box pairs: the separating axes and one face clip (box_contacts.h),
            // no feature cache.
            boxes = settings.boxClip && world.boxes[model.shapePolytope[shapeA]].box &&
                    world.boxes[model.shapePolytope[shapeB]].box;
            if (boxes) {
                const BoxFaces& ba = world.boxes[model.shapePolytope[shapeA]];
                const BoxFaces& bb = world.boxes[model.shapePolytope[shapeB]];
                if (entry) entry->pair = ShapePair{-1, -1};
                PotentialContact buffer[kBoxMaxPoints];
                ContactSink sink{buffer, kBoxMaxPoints, 0};
                if (!collideBoxes(wa.view(), ba, wb.view(), bb, settings, close, sink)) return ReuseMode::Full;
                for (int i = 0; i < sink.stored(); ++i) out.push_back(buffer[i]);
            } else {
                if (separatedByFace(wa.view(), wb.view(), close) || separatedByFace(wb.view(), wa.view(), close))
                    return ReuseMode::Full;
                apartChecked = close <= settings.margin;
            }
        }
        if (!boxes) {
            const PairReuse reuse = decideReuse(model, state, world, shapeA, shapeB, settings, baseSettings, entry);
            if (reuse.mode == ReuseMode::Rebuild)
                buildCandidates(wa.view(), wb.view(), world.pose[shapeA], world.pose[shapeB], settings,
                                kSlackFraction * baseSettings.margin, *reuse.entry);
            collideWorldPolytopes(wa, wb, settings, out, reuse, apartChecked);
            mode = reuse.mode;
        }
    }
    for (size_t i = first; i < out.size(); ++i) {
        out[i].shapeA = shapeA;
        out[i].shapeB = shapeB;
        out[i].bodyA = model.shapeBody[shapeA];
        out[i].bodyB = model.shapeBody[shapeB];
    }
    return mode;
}

// The cache's slots for this call, one per pair in order: each pair's entry of the last call
// moved over (the old list is sorted by pair), or an empty one. Serial; the pairs' threads then
// write their own slots only.
void alignCache(const std::vector<ShapePair>& pairs, FeatureCache& cache, std::vector<FeatureCacheEntry>& slots) {
    std::vector<FeatureCacheEntry>& old = cache.entries;
    slots.resize(pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) {
        auto it = std::lower_bound(old.begin(), old.end(), pairs[i],
                                   [](const FeatureCacheEntry& e, const ShapePair& p) { return e.pair < p; });
        if (it != old.end() && it->pair == pairs[i]) slots[i] = std::move(*it);
        else slots[i].pair = ShapePair{-1, -1};
    }
}

// Keeps the slots that hold candidates, sorted by pair, and counts what the call did.
void storeCache(const std::vector<ShapePair>& pairs, const std::vector<uint8_t>& modes, FeatureCache& cache,
                std::vector<FeatureCacheEntry>& slots) {
    cache.entries.clear();
    cache.reusedPairs = cache.rebuiltPairs = cache.fullPairs = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
        cache.reusedPairs += modes[i] == uint8_t(ReuseMode::Reuse);
        cache.rebuiltPairs += modes[i] == uint8_t(ReuseMode::Rebuild);
        cache.fullPairs += modes[i] == uint8_t(ReuseMode::Full);
        if (slots[i].pair == pairs[i]) cache.entries.push_back(std::move(slots[i]));
    }
    if (!std::is_sorted(cache.entries.begin(), cache.entries.end(),
                        [](const FeatureCacheEntry& a, const FeatureCacheEntry& b) { return a.pair < b.pair; }))
        std::sort(cache.entries.begin(), cache.entries.end(),
                  [](const FeatureCacheEntry& a, const FeatureCacheEntry& b) { return a.pair < b.pair; });
}

}  // namespace

void collidePairs(const Model& model, const State& state, const std::vector<ShapePair>& pairs,
                  const NarrowPhaseSettings& settings, std::vector<PotentialContact>& out, FeatureCache* featureCache) {
    out.clear();
    const int n = (int)pairs.size();
    thread_local WorldShapes cache;   // this thread's; the pairs' threads read it through `world`
    WorldShapes& world = cache;
    world.assign(model, state, pairs, settings.boxClip);
    // This thread's; the pairs' threads reach them through these references (a thread_local
    // named inside the parallel region would be the worker's own, empty one).
    thread_local std::vector<FeatureCacheEntry> slotStore;
    thread_local std::vector<uint8_t> modeStore;
    std::vector<FeatureCacheEntry>& slots = slotStore;
    std::vector<uint8_t>& modes = modeStore;
    if (featureCache) alignCache(pairs, *featureCache, slots);
    modes.assign(n, uint8_t(ReuseMode::Full));
    auto runPair = [&](int i, std::vector<PotentialContact>& sink) {
        modes[i] = (uint8_t)collideCachedPair(model, state, world, pairs[i].shapeA, pairs[i].shapeB, settings, sink,
                                              featureCache ? &slots[i] : nullptr);
    };
#if defined(_OPENMP)
    // Threads take contiguous slices of the pair list and the slices are joined in order, so
    // the output is the serial output whatever the thread count (no atomics, no reordering).
    constexpr int kMinParallelPairs = 256;
    const int threads = omp_get_max_threads();
    if (n >= kMinParallelPairs && threads > 1) {
        std::vector<std::vector<PotentialContact>> slices(threads);
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const int lo = int(int64_t(n) * t / nt), hi = int(int64_t(n) * (t + 1) / nt);
            for (int i = lo; i < hi; ++i) runPair(i, slices[t]);
        }
        for (const auto& slice : slices) out.insert(out.end(), slice.begin(), slice.end());
    } else
#endif
    {
        for (int i = 0; i < n; ++i) runPair(i, out);
    }
    if (featureCache) storeCache(pairs, modes, *featureCache, slots);
}

}  // namespace cs
