// PEG's relaxed geometric tests ([PEG] Williams, Lu, Trinkle 2016, section 4), as CS_HD
// functions over world-frame PolytopeViews (engine/collision/feature_geometry.h).
//
// Used terms: eta_f the outward unit normal of face f, omega(v) the vertices joined to v by an
// edge, t_1, t_2 the edge tangents of eq. 25, eps_theta the applicability relaxation, phi and
// delta the feasibility widening (angle and distance), eps the edge-edge feasibility distance.
//
// Applicability depends on orientation only: it says whether a feature pair *could* touch
// first if the bodies translated towards each other. [PEG] relaxes it (returns a score instead
// of a boolean, accepted at >= -eps_theta) so that rotation within the step is allowed for.
// Feasibility depends on position: it says whether the contact could occur within the step.
// The contact model (peg_model.cpp) uses both to choose the primary contact of an I-constraint
// (an applicable and feasible contact) and to form X-constraints.
#pragma once

#include "engine/collision/feature_geometry.h"

namespace cs {

// Vertex-face applicability (eqs. 28-30): APPL(v, f) = min_{w in omega(v)} eta . (w - v)/|w - v|
// with eta the face's outward normal pointing towards the vertex's body. Applicable when
// APPL >= -eps_theta.
CS_HD Real pegVertexFaceApplicability(const PolytopeView& P, int v, Vec3 eta) {
    return vertexApplicability(P, v, eta);
}

CS_HD bool pegApplicable(Real score, Real epsTheta) { return score >= -epsTheta; }

// Vertex-face feasibility ([PEG] section 4): vertex p lies within delta of the plane of face f
// of Q (on its outer side; any depth below it, the penetrated case, stays feasible) and its
// projection lies within the face polygon widened by delta plus the angle phi, the widening
// growing with the distance from the plane (a cone of half-angle phi about the face's prism).
// Returns the smaller of the two slacks: >= 0 feasible.
CS_HD Real pegVertexFaceFeasibility(const PolytopeView& Q, int f, Vec3 p, Real tanPhi, Real delta) {
    Real gap = vertexFaceGap(p, Q.faces[f]);
    Real height = gap < 0 ? -gap : gap;
    Real region = tanPhi * height + delta - faceRegionExcess(Q, f, p);
    Real plane = delta - gap;
    return region < plane ? region : plane;
}

// Edge-edge applicability (eqs. 31-32): n = e_a x e_b has no known sign, so both signs are
// scored and the better kept; n must lie in e_b's normal cone and -n in e_a's.
CS_HD Real pegEdgeEdgeApplicability(const PolytopeEdge& ea, Vec3 da, const PolytopeEdge& eb, Vec3 db) {
    Vec3 n = cross(da, db);
    Real len = length(n);
    if (len <= Real(0)) return -Real(1);
    n = (Real(1) / len) * n;
    Real s0 = edgeEdgeApplicability(ea, eb, n), s1 = edgeEdgeApplicability(ea, eb, -n);
    return s0 > s1 ? s0 : s1;
}

// Edge-edge feasibility: the nearest points of the two segments are within eps. Returns
// eps - distance (>= 0 feasible).
CS_HD Real pegEdgeEdgeFeasibility(Vec3 a0, Vec3 a1, Vec3 b0, Vec3 b1, Real eps) {
    Real s, t;
    Real d2 = segmentSegmentClosest(a0, a1, b0, b1, s, t);
    return eps - std::sqrt(d2);
}

// Edge orientation of e_a against edge e_b ([PEG] eq. 26, Figure 18): which of e_b's two faces
// the direction d (of an edge leaving the vertex near e_b) heads towards. Returns 0 or 1, the
// index k of e_b's face whose outward normal has the larger component along d: an edge that
// crosses e_b heading out of face k's plane while its vertex is behind that plane is the
// configuration the X-constraint max(psi(v, f_k), psi(e_a, e_b)) >= 0 forbids (eq. 36).
CS_HD int pegEdgeOrientationFace(Vec3 d, Vec3 etaFace0, Vec3 etaFace1) {
    return dot(d, etaFace1) > dot(d, etaFace0) ? 1 : 0;
}

}  // namespace cs
