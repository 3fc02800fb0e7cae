// Sweep and prune (see broad_phase.h for the design).
#include "engine/collision/broad_phase.h"

#include <algorithm>

#include "engine/collision/shape_pair_hd.h"

namespace cs {

Transform shapeWorldTransform(const Model& model, const State& state, int shape) {
    int b = model.shapeBody[shape];
    return composeShapeTransform(state.pos[b], state.rot[b], model.shapeLocal[shape]);
}

Aabb computeShapeAabb(const Model& model, const State& state, int shape, Real margin) {
    Transform X = shapeWorldTransform(model, state, shape);
    if (model.shapeType[shape] == ShapeType::Sphere) return sphereAabb(X.pos, model.shapeRadius[shape], margin);
    // |R| applied to the local box of the vertices would be cheaper but loose for rotated
    // parts; the exact box of the transformed vertices keeps the pair count honest.
    const ConvexPolytope& p = model.polytopes[model.shapePolytope[shape]];
    return polytopeAabb(p.vertices.data(), p.vertexCount(), X, margin);
}

void computeShapeAabbs(const Model& model, const State& state, Real margin, std::vector<Aabb>& out) {
    out.resize(model.shapeCount());
    for (int s = 0; s < model.shapeCount(); ++s) out[s] = computeShapeAabb(model, state, s, margin);
}

namespace {

// The pair filter shared by the sweep and the brute-force reference.
bool pairAllowed(const Model& model, const uint8_t* bodyActive, int sa, int sb) {
    int ba = model.shapeBody[sa], bb = model.shapeBody[sb];
    if (ba == bb) return false;
    if (model.isStatic(ba) && model.isStatic(bb)) return false;
    if (bodyActive && (!bodyActive[ba] || !bodyActive[bb])) return false;
    return true;
}

// Axis of largest variance of the box centres (ties: lowest axis index).
int sweepAxis(const std::vector<Aabb>& aabbs) {
    Real sum[3] = {0, 0, 0}, sumSq[3] = {0, 0, 0};
    for (const Aabb& b : aabbs) {
        for (int k = 0; k < 3; ++k) {
            Real c = Real(0.5) * (b.lo[k] + b.hi[k]);
            sum[k] += c;
            sumSq[k] += c * c;
        }
    }
    Real n = Real(aabbs.size() > 0 ? aabbs.size() : 1);
    int axis = 0;
    Real best = -1;
    for (int k = 0; k < 3; ++k) {
        Real var = sumSq[k] / n - (sum[k] / n) * (sum[k] / n);
        if (var > best) { best = var; axis = k; }
    }
    return axis;
}

}  // namespace

void findPairs(const Model& model, const std::vector<Aabb>& aabbs, const uint8_t* bodyActive,
               std::vector<ShapePair>& out) {
    out.clear();
    const int n = (int)aabbs.size();
    if (n < 2) return;
    const int axis = sweepAxis(aabbs);

    // Endpoints on the sweep axis, sorted by the low end; ties by index keep it deterministic.
    // Dormant shapes never pair, so they are left out of the sweep altogether. The sweep reads
    // this contiguous array front to back.
    struct Interval {
        Real lo, hi;
        int shape;
        Aabb box;   // copied so that the sweep reads memory in order
    };
    std::vector<Interval> order;
    order.reserve(n);
    for (int s = 0; s < n; ++s) {
        if (bodyActive && !bodyActive[model.shapeBody[s]]) continue;
        order.push_back({aabbs[s].lo[axis], aabbs[s].hi[axis], s, aabbs[s]});
    }
    std::sort(order.begin(), order.end(), [](const Interval& a, const Interval& b) {
        return a.lo != b.lo ? a.lo < b.lo : a.shape < b.shape;
    });

    // Sweep: every box meets the boxes whose low end lies within its extent on the axis.
    const int m = (int)order.size();
    for (int i = 0; i < m; ++i) {
        const int a = order[i].shape;
        const Real hiA = order[i].hi;
        const Aabb& A = order[i].box;
        for (int j = i + 1; j < m && order[j].lo <= hiA; ++j) {
            if (!aabbOverlap(A, order[j].box)) continue;
            const int b = order[j].shape;
            if (!pairAllowed(model, bodyActive, a, b)) continue;
            out.push_back(a < b ? ShapePair{a, b} : ShapePair{b, a});
        }
    }
    std::sort(out.begin(), out.end());
}

void findPairsBruteForce(const Model& model, const std::vector<Aabb>& aabbs,
                         const uint8_t* bodyActive, std::vector<ShapePair>& out) {
    out.clear();
    const int n = (int)aabbs.size();
    for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b)
            if (aabbOverlap(aabbs[a], aabbs[b]) && pairAllowed(model, bodyActive, a, b))
                out.push_back({a, b});
}

}  // namespace cs
