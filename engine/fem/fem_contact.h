// Contacts of deformable bodies, as rows of the same Newton iteration as every other contact.
//
// A boundary node of a FEM body is a point: against a rigid part (polytope or sphere) it is the
// standard model's contact exactly (standard_rows_hd.h: one normal row, two friction rows, the
// same NCP and friction linearization of [NSN] sections 4.1-4.3 and the same warm start), with
// the node as body A (lever arm zero) and the rigid body as body B. Against a boundary triangle
// (a, b, c) of another FEM body it is a vertex-triangle contact on four bodies: with q the
// closest point of the triangle, q = w_a x_a + w_b x_b + w_c x_c (barycentric weights) and n the
// triangle's outward normal, the gap is n . (p - q) and, per direction d in {n, t1, t2},
//     J = [ d | -w_a d | -w_b d | -w_c d ]   (node, a, b, c; linear parts only).
// A node attached to a rigid body has no contact with it (fem_contact_hd.h femNodeAttachedTo).
// Candidates: rigid parts by their broad-phase boxes (grown by the contact margin); triangles by
// a uniform grid over each body's triangles. The contacts are ordered: every node-part contact
// (by FEM body, shape, node), then the node-triangle ones (by body pair (a, b), node of a).
// Self contact (opt-in per body, FemBodyInfo::selfContact): a boundary node against its own
// body's boundary triangles, the same rows. A triangle with a node sharing a tet with node n is
// never a candidate, and with l_n the longest rest edge of the tets holding n and d_rest the
// triangle's rest distance to n, a gap below -min(d_rest, l_n) / 2 is taken as the far side of a
// part, not a penetration (fem_contact_hd.h femSelfCandidate).
// Every node-triangle pair (self contact or two bodies) also needs the node's projection in the
// closed triangle and the node's surface facing the triangle (fem_contact_hd.h femFacing: the
// node's angle-weighted normal and the triangle's more than 120 degrees apart).
// Under PEG and PLUS these contacts still use the standard model (World::step says so once).
#pragma once

#include <unordered_map>
#include <vector>

#include "engine/collision/broad_phase.h"
#include "engine/contact/row_culling.h"
#include "engine/settings.h"
#include "engine/solver/newton.h"
#include "engine/step_types.h"

namespace cs {

struct FemContactRecord {
    PotentialContact geometry;   // pointA: the node; pointB on the rigid part or triangle
    int node = -1;               // FEM node
    int tri = -1;                // FEM boundary triangle, or -1 (a rigid part)
    int row = -1;                // its normal row; the friction rows follow
    Real mu = 0;
    Vec3 tangent[2];
    Real barycentric[3] = {0, 0, 0};
    ContactKey key;
};

struct FemContactScratch {
    std::vector<FemContactRecord> contacts;
    std::vector<FemContactRecord> culled;                  // left out by row culling (no rows)
    std::vector<int> surfaceNodes;                         // nodes on some boundary triangle
    std::unordered_map<uint64_t, std::vector<int>> grid;   // triangle grid of one body
    std::vector<Real> restReach;                           // (nnode) l_n of self contact, or empty
    std::vector<int> nbrStart, nbrs;                       // with self contact: femNodeNeighbours
    std::vector<int> attachStart, attachBodies;            // femNodeAttachments
    std::vector<int> nodeTriStart, nodeTris;               // boundary triangles per node (femNodeTriangles)
    std::vector<int> triNodes;                             // (3 ntri) model.femTris flat
    std::vector<Vec3> nodeNormal;                          // (nnode) femNodeNormal at this step, boundary nodes
};

// Appends the rows of every FEM contact of the step at state (shapeBoxes: the broad phase's
// boxes, world frame, grown by the margin). Warm impulses from state.femContactWarm.
// cull (optional): row culling (row_culling.h) of the FEM contacts too: those that cannot close
// within the step by its predictor get no rows and go to scratch.culled, for
// femCulledContactsStayOpen after the solve. cull->pushoutSpeed: the rigid contacts' v_push.
void buildFemContactRows(const Model& model, const WorldSettings& settings, const State& state,
                         const std::vector<Aabb>& shapeBoxes, Real h, FemContactScratch& scratch, ConstraintRows& rows,
                         const RowCull* cull = nullptr);

// row_culling.h's check for the culled FEM contacts: g/h + J u+ >= 0 at the solved velocities.
bool femCulledContactsStayOpen(const FemContactScratch& scratch, const Model& model, const State& state,
                               const BodyVelocities& bodies, Real h);

// l_n of self contact per node: the longest rest edge of the tets holding it (0 for a node in no tet).
void femRestReach(const Model& model, std::vector<Real>& reach);

// Each node's tet neighbours and itself, ascending: node n's are nbrs[start[n] .. start[n + 1]).
void femNodeNeighbours(const Model& model, std::vector<int>& start, std::vector<int>& nbrs);

// The rigid bodies each node is attached to: node n's are bodies[start[n] .. start[n + 1]).
void femNodeAttachments(const Model& model, std::vector<int>& start, std::vector<int>& bodies);

// The boundary triangles holding each node, ascending: node n's are tris[start[n] .. start[n + 1]).
void femNodeTriangles(const Model& model, std::vector<int>& start, std::vector<int>& tris);

// The solved contacts appended to `contacts` (World::contacts()) and their impulses, sorted by
// key, into `warm`.
void storeFemContacts(const FemContactScratch& scratch, const ConstraintRows& rows, const BodyVelocities& bodies,
                      std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);

}  // namespace cs
