// Narrow phase: the potential contacts of a pair of convex parts, as feature pairs.
//
// [PEG] sections 4-5: a contact model must see contacts *before* they happen, within a margin,
// as pairs of features (vertex, edge, face) with a gap psi that it can linearize
// (psi^{l+1} ~ psi^l + h G^T nu, [PEG] eqs. 5-9) and, for PEG, group into I- and X-constraints
// by the features they share (vertex-edge: one vertex against the two faces of an edge;
// vertex-vertex: one vertex against the faces around the other vertex, both ways).
// So this stage does not reduce the contact to a manifold: it lists every feature pair that is
// close, feasible and applicable, and leaves the choice of constraints to the contact model.
//
// Conventions (PotentialContact, potential_contact.h):
//   - shapeA/bodyA are the first argument of collideShapes, shapeB/bodyB the second; featureA is
//     a feature of shape A, featureB of shape B, both made with makeFeatureId(kind, index) where
//     index is the polytope's vertex/edge/face index, and 0 for a sphere (FeatureKind::Sphere).
//   - normal is a world unit vector from B towards A: A moving along +normal separates.
//   - gap = dot(pointA - pointB, normal), negative when overlapping.
//   - pointA lies on A, pointB on B (world). For plane gaps (vertex-face) the point on the face
//     side is the projection of the vertex onto the face plane, which may lie just outside the
//     face polygon (within the feasibility widening).
//
// Polytope-polytope feature pairs (type: features):
//   VertexFace (Vertex, Face) or (Face, Vertex): gap = signed distance of the vertex from the face
//     plane, normal = the face normal (negated when the face is A's). Emitted when
//       gap <= margin and gap >= maxGap(v) - faceWindow, maxGap(v) the largest gap of v over all
//         faces of the face's polytope (for a vertex inside the other body, the least
//         penetrated faces only; for a vertex outside, faces whose plane is nearly the closest),
//         and maxGap(v) <= margin (maxGap(v) is a lower bound of v's distance to that body),
//       the vertex's projection is inside the face polygon widened by regionWidening (feasible),
//       and min over the vertex's edges of eta . (w - v)/|w - v| >= -epsTheta (applicable).
//   EdgeEdge (Edge, Edge): normal = +-(e_a x e_b)/|e_a x e_b|, the sign for which the normal lies in
//     the normal cone of e_b and its negative in that of e_a (edge tangents t_k, [PEG] eqs. 31-32,
//     relaxed by epsTheta); gap = dot(p_a - p_b, normal) with p_a, p_b the closest points of the
//     edge lines, which must be interior to both segments (farther than endpointTol from every
//     end: a crossing at an end is the vertex's contact); -maxEdgeDepth <= gap <= margin, and gap
//     >= the face-axis separation of the two polytopes - faceWindow (edges crossing deep inside
//     both bodies are not contacts: shape_pair_hd.h edgeEdgePass); edges
//     closer to parallel than parallelSin are skipped (their contact is vertex-face).
//   VertexEdge (Vertex, Edge) or (Edge, Vertex): a vertex outside the other body in the Voronoi
//     region of an edge (relaxed by epsTheta) at distance <= margin, and applicable; gap is the
//     Euclidean distance, normal the unit vector from the edge point to the vertex. Emitted only
//     when neither face of that edge has a VertexFace contact with this vertex.
//   VertexVertex (Vertex, Vertex): two vertices in each other's Voronoi regions (tip to tip),
//     distance <= margin, emitted only when no VertexFace/VertexEdge contact already pairs either
//     vertex with a face or edge around the other.
// Speculative contacts (NarrowPhaseSettings::motionScale, WorldSettings::speculative): the
// margin, regionWidening and epsTheta above grow with each pair's motion within the step
// (pairSettings), and the broad phase's boxes with each shape's (computeContactAabbs).
// So a box resting on a larger box gives exactly its 4 bottom vertices against the top face; two
// equal boxes stacked face to face give 8 VertexFace contacts: the upper box's 4 bottom vertices
// on the lower box's top face (normal +up) and the lower box's 4 top vertices on the upper box's
// bottom face (normal +up too, from B to A), coincident vertices reported as vertex-face both ways.
//
// Sphere pairs: one contact each, on the Voronoi feature of the polytope closest to the centre
// (SphereFace / SphereEdge / SphereVertex; a centre inside the polytope uses the least
// penetrated face), and SphereSphere. The sphere may be A or B: look at featureKind().
//
// Output order: the contacts of one call are sorted by (featureA, featureB); callers that run
// pairs in ShapePair order therefore get the whole list in ContactKey order (state.h).
// collidePairs splits the pair list into contiguous slices over OpenMP threads and joins them
// in order, so its output does not depend on the thread count.
//
// The tuning parameters (NarrowPhaseSettings) and the per-feature-pair tests are CS_HD code in
// feature_pairs.h; the geometric primitives ([PEG] section 4) in feature_geometry.h.
#pragma once

#include <vector>

#include "engine/collision/broad_phase.h"
#include "engine/collision/feature_pairs.h"
#include "engine/collision/potential_contact.h"
#include "engine/model.h"
#include "engine/state.h"

namespace cs {

struct FeatureCache;

// Appends the potential contacts of shapes shapeA and shapeB (any order of indices; A is the
// first argument) at the state's poses to out.
void collideShapes(const Model& model, const State& state, int shapeA, int shapeB,
                   const NarrowPhaseSettings& settings, std::vector<PotentialContact>& out);

// As above with default settings except the margin.
void collideShapes(const Model& model, const State& state, int shapeA, int shapeB, Real margin,
                   std::vector<PotentialContact>& out);

// Distance a point of the shape can travel within the step at the state's velocities, scaled by
// settings.motionScale: motionScale * dt * (|v| + |g| dt + |w| R), R the part's farthest point
// from the body's centre of mass. 0 for static bodies or motionScale 0.
Real shapeMotionReach(const Model& model, const State& state, int shape, const NarrowPhaseSettings& settings);

// The settings a pair of shapes is tested with: `settings` widened by the pair's motion within
// the step (NarrowPhaseSettings::motionScale; unchanged when it is 0).
NarrowPhaseSettings pairSettings(const Model& model, const State& state, int shapeA, int shapeB,
                                 const NarrowPhaseSettings& settings);

// A shape's pad in the broad phase: the margin plus its shapeMotionReach; under the relaxation
// methods' pair filter (settings.closingSlop >= 0) a polytope's is its part of the closing gap
// instead (feature_pairs.h closingPartPad, no less than its reach, no more than the margin plus
// it): two polytopes whose boxes so padded do not overlap are farther apart than
// closingPairMargin, the gap their bodies can close within the step, and list nothing. Spheres
// keep the full pad, so their pairs are all kept.
Real shapeClosingPad(const Model& model, const State& state, int shape, const NarrowPhaseSettings& settings);

// The broad phase's boxes for these settings: every shape's AABB grown by shapeClosingPad (the
// margin and its shapeMotionReach, so that the pairs the narrow phase may widen to are all kept;
// under the relaxation methods' pair filter, a polytope's part of the closing gap).
void computeContactAabbs(const Model& model, const State& state, const NarrowPhaseSettings& settings,
                         std::vector<Aabb>& out);

// All pairs in order; out is cleared first. With a feature cache (feature_cache.h), polytope
// pairs at rest run the exact tests on their cached candidate feature pairs; the output is the same.
void collidePairs(const Model& model, const State& state, const std::vector<ShapePair>& pairs,
                  const NarrowPhaseSettings& settings, std::vector<PotentialContact>& out,
                  FeatureCache* featureCache = nullptr);

// The polytope-polytope and sphere cases on world-frame transforms (no Model needed); the
// contacts' shape and body fields are left -1 for the caller to fill.
void collidePolytopes(const ConvexPolytope& a, const Transform& Xa, const ConvexPolytope& b,
                      const Transform& Xb, const NarrowPhaseSettings& settings,
                      std::vector<PotentialContact>& out);
void collideSpherePolytope(Vec3 center, Real radius, bool sphereIsA, const ConvexPolytope& p,
                           const Transform& Xp, const NarrowPhaseSettings& settings,
                           std::vector<PotentialContact>& out);
void collideSpheres(Vec3 centerA, Real radiusA, Vec3 centerB, Real radiusB,
                    const NarrowPhaseSettings& settings, std::vector<PotentialContact>& out);

}  // namespace cs
