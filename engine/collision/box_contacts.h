// Box-box contacts for the relaxation methods (SolveMethod::Soft and Pgs): the separating axis
// test over the 15 axes of two boxes and one clip of the incident face against the reference
// face, once per pair, as Bullet's, ODE's and Box2D's box detectors do, in place of the
// feature-pair tests of [PEG] section 5.2 (polytope_contacts.cpp) that the Newton method needs.
//
// Output, with the narrow phase's conventions (potential_contact.h: normal from B to A, gap
// dot(pointA - pointB, normal)):
//   - face case (a face axis separates least): the incident face (the other box's face most
//     against the reference normal) clipped against the side planes of the reference face, up to
//     8 points, each kept when its gap along the reference normal is <= s.margin; the relaxation
//     methods reduce them to 4 per manifold (relax_shared.cpp). Features: an incident vertex
//     against the reference face (VertexFace), an incident edge crossing a reference side
//     (EdgeEdge), a reference corner inside the incident face (VertexFace, face of the incident
//     box); so each point keeps its key, and its warm start, while the boxes rest.
//   - edge case (a cross product of two edges separates by more than both face axes plus
//     kBoxEdgeTolerance): one point, the closest points of the two support edges (EdgeEdge).
// No contact when any axis separates the boxes by more than `close` (the relaxation methods'
// pair gap, feature_pairs.h closingPairMargin).
#pragma once

#include "engine/collision/shape_pair_hd.h"

namespace cs {

// A polytope that is a box: its three face axes (the faces whose outward normals are +axis),
// the opposite faces, and the half extents along them. box == false for anything else.
struct BoxFaces {
    bool box = false;
    int face[3] = {-1, -1, -1};       // outward normal +axis_i
    int opposite[3] = {-1, -1, -1};   // outward normal -axis_i
    Real half[3] = {0, 0, 0};
};

// Whether p (in its own frame) is a box: 8 vertices, 6 quadrilateral faces in 3 opposite pairs
// along mutually orthogonal axes, every vertex at +-half along each axis from the centroid (to
// 1e-9 of the size).
BoxFaces detectBox(const ConvexPolytope& p);

// The most points collideBoxes lists for a pair (a quadrilateral clipped by four sides has at
// most 8 corners; the rest is room).
constexpr int kBoxMaxPoints = 16;

// How far an edge axis must separate beyond the best face axis to be used (m): face
// contacts (4 points, stable) are preferred to a single edge point when the two are this close.
constexpr Real kBoxEdgeTolerance = Real(1e-3);

// The contacts of world-frame boxes A, B (views of their WorldPolytopes, ba / bb their BoxFaces)
// into sink; returns false when an axis separates them by more than `close` (nothing listed).
bool collideBoxes(const PolytopeView& A, const BoxFaces& ba, const PolytopeView& B, const BoxFaces& bb,
                  const NarrowPhaseSettings& s, Real close, ContactSink& sink);

}  // namespace cs
