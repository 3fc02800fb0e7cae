// The overlap volume metric (world_metrics.h).
#include "engine/world_metrics.h"

#include "engine/geometry/overlap_volume.h"

namespace cs {

namespace {

// Some face plane of a separates the placed parts (every vertex of b on its outer side).
bool separatedByFace(const ConvexPolytope& a, const Transform& ta, const ConvexPolytope& b, const Transform& tb) {
    for (const PolytopeFace& f : a.faces) {
        Vec3 n = rotate(ta.rot, f.normal);
        Real offset = f.offset + dot(n, ta.pos);
        bool all = true;
        for (const Vec3& v : b.vertices)
            if (dot(n, transformPoint(tb, v)) < offset) { all = false; break; }
        if (all) return true;
    }
    return false;
}

}  // namespace

double totalOverlapVolume(const World& world) {
    const Model& m = world.model();
    std::vector<ShapePair> pairs;
    world.overlappingPairs(pairs);
    double total = 0;
    for (const ShapePair& p : pairs) {
        const int i = p.shapeA, j = p.shapeB;
        const Transform xi = world.shapeTransform(i), xj = world.shapeTransform(j);
        const bool si = m.shapeType[i] == ShapeType::Sphere, sj = m.shapeType[j] == ShapeType::Sphere;
        if (si && sj) {
            total += sphereSphereOverlapVolume(m.shapeRadius[i], xi.pos, m.shapeRadius[j], xj.pos);
        } else if (si || sj) {
            const int s = si ? i : j, q = si ? j : i;
            const Transform xs = si ? xi : xj, xq = si ? xj : xi;
            total += spherePolytopeOverlapVolume(m.shapeRadius[s], xs.pos, m.polytopes[m.shapePolytope[q]], xq);
        } else {
            const ConvexPolytope& a = m.polytopes[m.shapePolytope[i]];
            const ConvexPolytope& b = m.polytopes[m.shapePolytope[j]];
            if (separatedByFace(a, xi, b, xj) || separatedByFace(b, xj, a, xi)) continue;
            total += overlapVolume(a, xi, b, xj);
        }
    }
    return total;
}

}  // namespace cs
