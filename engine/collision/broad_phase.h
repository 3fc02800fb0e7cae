// Broad phase: which pairs of convex parts (shapes) may touch within the contact margin.
//
// Sweep and prune over world AABBs expanded by the margin. The sweep axis is the one of largest
// variance of the box centres, and the order is sorted afresh every step (no persistent state):
// a fresh sort keeps the stage a pure function of (model, state), which makes runs, resets and
// the GPU comparison deterministic without bookkeeping, and at 10^4 shapes a sort costs about a
// millisecond, far below the narrow phase and the solve. The output is sorted, so the contact
// list built from it is in a canonical order whatever the sort did with ties.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/math.h"
#include "engine/model.h"
#include "engine/state.h"

namespace cs {

struct Aabb {
    Vec3 lo, hi;
};

// Branch-free (& not &&): in the sweep the outcome is close to random, and mispredicted
// branches cost more than the six comparisons.
CS_HD bool aabbOverlap(const Aabb& a, const Aabb& b) {
    return (a.lo.x <= b.hi.x) & (b.lo.x <= a.hi.x) & (a.lo.y <= b.hi.y) & (b.lo.y <= a.hi.y) &
           (a.lo.z <= b.hi.z) & (b.lo.z <= a.hi.z);
}

// A candidate pair of shapes, shapeA < shapeB.
struct ShapePair {
    int shapeA, shapeB;
    bool operator==(const ShapePair& o) const { return shapeA == o.shapeA && shapeB == o.shapeB; }
    bool operator<(const ShapePair& o) const {
        return shapeA != o.shapeA ? shapeA < o.shapeA : shapeB < o.shapeB;
    }
};

// World transform of a shape: body pose (state) composed with the part's local frame (model).
Transform shapeWorldTransform(const Model& model, const State& state, int shape);

// World AABB of one shape, expanded by margin on every side. Polytopes use their transformed
// vertices (tight), spheres centre +- radius.
Aabb computeShapeAabb(const Model& model, const State& state, int shape, Real margin);

// out[s] = computeShapeAabb(model, state, s, margin) for every shape.
void computeShapeAabbs(const Model& model, const State& state, Real margin, std::vector<Aabb>& out);

// Overlapping AABB pairs, filtered: shapes of the same body never pair; pairs whose bodies are
// both static are skipped; pairs with a body whose bodyActive[b] == 0 (dormant: not yet spawned
// or asleep) are skipped. bodyActive may be null (all active); static bodies that take part
// (the ground) must be marked active. out is cleared and filled sorted by (shapeA, shapeB).
void findPairs(const Model& model, const std::vector<Aabb>& aabbs, const uint8_t* bodyActive,
               std::vector<ShapePair>& out);

// Reference O(n^2) version with the same filter, for tests.
void findPairsBruteForce(const Model& model, const std::vector<Aabb>& aabbs,
                         const uint8_t* bodyActive, std::vector<ShapePair>& out);

}  // namespace cs
