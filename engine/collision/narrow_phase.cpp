// Narrow phase: dispatch on the shape types, the smooth (sphere) cases, and the batch over
// pairs. The polytope-polytope feature pairs are in polytope_contacts.cpp; conventions in
// narrow_phase.h.
#include "engine/collision/narrow_phase.h"

#include "engine/collision/world_polytope.h"

namespace cs {

namespace {

PotentialContact makeContact(PairType type, uint32_t fa, uint32_t fb, Vec3 pA, Vec3 pB, Vec3 n,
                             Real gap) {
    PotentialContact c;
    c.shapeA = c.shapeB = c.bodyA = c.bodyB = -1;
    c.featureA = fa;
    c.featureB = fb;
    c.type = type;
    c.pointA = pA;
    c.pointB = pB;
    c.normal = n;
    c.gap = gap;
    return c;
}

}  // namespace

void collideSpheres(Vec3 centerA, Real radiusA, Vec3 centerB, Real radiusB,
                    const NarrowPhaseSettings& s, std::vector<PotentialContact>& out) {
    // psi = |c_A - c_B| - r_A - r_B along n = (c_A - c_B)/|c_A - c_B|.
    const Vec3 d = centerA - centerB;
    const Real dist = length(d);
    const Real gap = dist - radiusA - radiusB;
    if (gap > s.margin) return;
    const Vec3 n = dist > Real(1e-12) ? d / dist : Vec3{0, 0, 1};   // concentric: any axis
    const uint32_t id = makeFeatureId(FeatureKind::Sphere, 0);
    out.push_back(makeContact(PairType::SphereSphere, id, id, centerA - radiusA * n,
                              centerB + radiusB * n, n, gap));
}

void collideSpherePolytope(Vec3 center, Real radius, bool sphereIsA, const ConvexPolytope& p,
                           const Transform& Xp, const NarrowPhaseSettings& s,
                           std::vector<PotentialContact>& out) {
    thread_local WorldPolytope scratch;
    const Real reach = p.boundingRadius + radius + s.margin;
    if (lengthSq(transformPoint(Xp, p.centroid) - center) > reach * reach) return;
    scratch.assign(p, Xp);
    const PolytopeView P = scratch.view();

    // Closest Voronoi feature of the polytope to the centre. Outside: exact Euclidean closest
    // point, psi = |c - q| - r. Inside: the least penetrated face, psi = maxGap - r.
    Real maxGap;
    PolygonClosest q = pointPolytopeClosest(P, center, maxGap);
    if (maxGap - radius > s.margin) return;
    Vec3 m;       // unit, from the polytope towards the sphere centre
    Real dist;    // signed distance of the centre from the polytope
    if (maxGap <= Real(0)) {
        m = P.faces[q.index].normal;
        dist = maxGap;
    } else {
        dist = std::sqrt(q.distSq);
        if (dist - radius > s.margin) return;
        m = dist > Real(1e-12) ? (center - q.point) / dist : P.faces[0].normal;
        if (q.kind == 2) m = P.faces[q.index].normal;   // exact, no cancellation
    }
    const PairType type = q.kind == 2 ? PairType::SphereFace
                        : q.kind == 1 ? PairType::SphereEdge : PairType::SphereVertex;
    const uint32_t polyId = makeFeatureId(FeatureKind(q.kind), q.index);
    const uint32_t sphereId = makeFeatureId(FeatureKind::Sphere, 0);
    const Vec3 onSphere = center - radius * m;
    const Real gap = dist - radius;
    if (sphereIsA)
        out.push_back(makeContact(type, sphereId, polyId, onSphere, q.point, m, gap));
    else
        out.push_back(makeContact(type, polyId, sphereId, q.point, onSphere, -m, gap));
}

void collideShapes(const Model& model, const State& state, int shapeA, int shapeB,
                   const NarrowPhaseSettings& settings, std::vector<PotentialContact>& out) {
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

void collidePairs(const Model& model, const State& state, const std::vector<ShapePair>& pairs,
                  const NarrowPhaseSettings& settings, std::vector<PotentialContact>& out) {
    out.clear();
    for (const ShapePair& p : pairs) collideShapes(model, state, p.shapeA, p.shapeB, settings, out);
}

}  // namespace cs
