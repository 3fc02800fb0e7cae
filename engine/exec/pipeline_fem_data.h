// The deformable bodies' data of the step pipeline (engine/fem/ on the executor): the flat FEM
// model, the nodes' state and the rows on up to four bodies, structures of arrays in the
// executor's memory.
//
// Index spaces are World::step's (engine/fem/fem_step.h): FEM node n is solver body
// bodies + n, a point mass (inverse mass 1/m, 0 when pinned; inverse inertia zero). The FEM rows
// follow the contact rows, as buildFemRows appends them after buildContactRows: every tet's rows
// (tetRowStart), then three per attachment; their impulses are the FEM warm start (State::femWarm).
// The third and fourth body columns (bodyC, bodyD) exist only when the model has tets (or a
// coupling on more than two bodies, or a drag of a deformable body, which has tets); the
// solver's views then carry them for every row (-1 for the two-body rows), as ConstraintRows
// does once wideRows > 0.
#pragma once

#include <vector>

#include "engine/collision/broad_phase.h"
#include "engine/collision/potential_contact.h"
#include "engine/fem/fem_contact.h"
#include "engine/fem/fem_material_hd.h"
#include "engine/fem/fem_rows_hd.h"
#include "engine/model.h"

namespace cs {

template <class Exec>
struct PipelineFem {
    template <class T>
    using Buffer = typename Exec::template Buffer<T>;

    int nodes = 0, tets = 0, attachments = 0, femBodies = 0;
    int tetRows = 0;             // rows of all tets
    int rows = 0;                // tetRows + 3 * attachments
    int warmSize = 0;            // kFemWarmPerTet * tets + 3 * attachments (State::femWarm's layout)
    bool wideJoints = false;     // a mimic coupling on three or four bodies (pipeline_joints_data.h)
    bool wide() const { return tets > 0 || wideJoints; }

    // ---- model ----
    Buffer<Real> nodeInvMass;                  // (nodes) 0: pinned
    Buffer<int> tetNodes;                      // (4 tets) global node indices
    Buffer<int> tetBody, tetRowStart;          // (tets) FEM body; first row among the FEM rows
    Buffer<TetRest> tetRest;                   // (tets)
    Buffer<Real> tetActivation;                // (tets) weight of the body's activation stress
    Buffer<FemMaterial> material;              // (femBodies)
    Buffer<Real> damping;                      // (femBodies) Rayleigh beta, s
    Buffer<Real> activation;                   // (femBodies) Pa: State::femActivation, sent every step
    Buffer<int> attachNode, attachBody;        // (attachments)
    Buffer<Vec3> attachLocal;                  // (attachments) the point in the body's COM frame

    // ---- state, its copies at the step's and the substep's start ----
    Buffer<Vec3> pos, vel, startPos, startVel, goodPos;   // (nodes)
    Buffer<Real> warm, warmAtStart;            // (warmSize) last substep's FEM impulses (fem_step.h storeFemWarm)
    Buffer<Mat3> tetRotation;                  // (tets) the polar rotation the step's rows were built at

    // ---- rows on four bodies (row capacity) ----
    Buffer<int> bodyC, bodyD;
    Buffer<Spatial> jacobianC, jacobianD, minvJC, minvJD;

    // ---- boundary nodes against rigid parts (pipeline_fem_contact.h) ----
    int surfaceCount = 0;                      // boundary nodes, grouped by FEM body, ascending
    int candidates = 0;                        // sum over FEM bodies of shapes x their boundary nodes
    int contactCapacity = 0;                   // FEM contacts the buffers hold (grows)
    Buffer<int> surfaceNodes;                  // (surfaceCount)
    Buffer<int> surfaceStart, candidateStart;  // (femBodies + 1)
    Buffer<Real> friction;                     // (femBodies) mu against other bodies
    Buffer<int> attachStart, attachBodies;     // (nodes + 1), (attachments): femNodeAttachments
    Buffer<Aabb> box;                          // (femBodies) of the boundary nodes, this substep
    Buffer<int> hit, hitOffset;                // (candidates) in the margin; its contact slot
    Buffer<PotentialContact> contacts;         // (contactCapacity) node = side A
    Buffer<Real> contactMu;
    Buffer<uint64_t> contactPair, contactPairOut;      // key.shapes, for the warm cache's order
    Buffer<int> contactIndex, contactIndexOut;
    Buffer<WarmImpulse> contactWarm, contactWarmNext, contactWarmAtStart;   // sorted by key
    Buffer<int> contactTri;                    // (contactCapacity) the boundary triangle, or -1 (a rigid part)
    Buffer<Vec3> contactWeight;                // (contactCapacity) its barycentric weights
    // row culling of the node-part contacts (recordFemContacts): the contacts left out, and the
    // kept ones on their way back to the front of contacts, contactMu, contactTri, contactWeight
    Buffer<int> cut, cutOffset;                // (contactCapacity) 1: left out; how many before it
    Buffer<PotentialContact> culled;           // (contactCapacity) the left-out contacts, in order
    Buffer<PotentialContact> keptContacts;     // (contactCapacity)
    Buffer<Real> keptMu;
    Buffer<int> keptTri;
    Buffer<Vec3> keptWeight;

    // ---- boundary nodes against boundary triangles (pipeline_fem_femcontact.h) ----
    int tris = 0;                              // boundary triangles, all FEM bodies
    int femPairs = 0;                          // ordered pairs (a, b): a != b, or a == b with self contact
    int triCandidates = 0;                     // sum over the pairs of a's boundary nodes
    bool selfContact = false;                  // some body has self contact (restPos, restReach are sent)
    Buffer<int> triNodes;                      // (3 tris) global node indices
    Buffer<int> triFirst, triCount;            // (femBodies) body b's triangles
    Buffer<int> pairA, pairB, pairStart;       // (femPairs), pairStart (femPairs + 1): first candidate
    Buffer<Vec3> restPos;                      // (nodes) with self contact
    Buffer<Real> restReach;                    // (nodes) l_n, with self contact
    Buffer<int> nbrStart, nbrs;                // with self contact: each node's tet neighbours (femNodeNeighbours)
    Buffer<int> nodeTriStart, nodeTris;        // (nodes + 1), (3 tris): each node's boundary triangles (femNodeTriangles)
    Buffer<Vec3> nodeNormal;                   // (nodes) boundary nodes' femNodeNormal, this substep
    Buffer<Real> cell;                         // (femBodies) grid cell of body b's triangles, this substep
    Buffer<int> triCells;                      // (6 tris) grown cell range (lo xyz, hi xyz), this substep
    Buffer<int> triBest, triHit, triHitOffset; // (triCandidates) the node's triangle or -1; 1 if one; its slot

    bool anyContacts() const { return candidates > 0 || triCandidates > 0; }
};

template <class Exec, class T>
void uploadFemVector(Exec& ex, typename Exec::template Buffer<T>& to, const std::vector<T>& from) {
    to.reserve(from.size() > 0 ? from.size() : 1);
    if (!from.empty()) ex.upload(to.data(), from.data(), from.size());
}

// The boundary triangles and the body pairs of FEM-FEM and self contact, in fem_contact.cpp's
// order (pairs by a, then b; candidates by pair, then a's boundary nodes ascending).
template <class Exec>
void uploadFemTriangles(Exec& ex, PipelineFem<Exec>& f, const Model& model, const std::vector<int>& surfaceStart) {
    f.tris = (int)model.femTris.size();
    std::vector<int> triNodes(3 * size_t(f.tris)), first(f.femBodies), count(f.femBodies);
    for (int t = 0; t < f.tris; ++t)
        for (int j = 0; j < 3; ++j) triNodes[3 * size_t(t) + j] = model.femTris[t][j];
    std::vector<int> pairA, pairB, pairStart{0};
    f.selfContact = false;
    for (int a = 0; a < f.femBodies; ++a) {
        first[a] = model.femBodies[a].firstTri;
        count[a] = model.femBodies[a].triCount;
        f.selfContact = f.selfContact || model.femBodies[a].selfContact;
        for (int b = 0; b < f.femBodies; ++b) {
            if (a == b && !model.femBodies[a].selfContact) continue;
            pairA.push_back(a);
            pairB.push_back(b);
            pairStart.push_back(pairStart.back() + surfaceStart[a + 1] - surfaceStart[a]);
        }
    }
    f.femPairs = (int)pairA.size();
    f.triCandidates = pairStart.back();
    uploadFemVector(ex, f.triNodes, triNodes);
    uploadFemVector(ex, f.triFirst, first);
    uploadFemVector(ex, f.triCount, count);
    uploadFemVector(ex, f.pairA, pairA);
    uploadFemVector(ex, f.pairB, pairB);
    uploadFemVector(ex, f.pairStart, pairStart);
    std::vector<Real> reach;
    std::vector<int> nbrStart, nbrs;
    if (f.selfContact) {
        femRestReach(model, reach);
        femNodeNeighbours(model, nbrStart, nbrs);
    }
    uploadFemVector(ex, f.nbrStart, nbrStart);
    uploadFemVector(ex, f.nbrs, nbrs);
    uploadFemVector(ex, f.restPos, f.selfContact ? model.femRestPos : std::vector<Vec3>{});
    uploadFemVector(ex, f.restReach, reach);
    std::vector<int> nodeTriStart, nodeTris;
    femNodeTriangles(model, nodeTriStart, nodeTris);
    uploadFemVector(ex, f.nodeTriStart, nodeTriStart);
    uploadFemVector(ex, f.nodeTris, nodeTris);
    f.nodeNormal.reserve(model.femNodeCount() > 0 ? model.femNodeCount() : 1);
    f.cell.reserve(f.femBodies > 0 ? f.femBodies : 1);
    f.triCells.reserve(f.tris > 0 ? 6 * size_t(f.tris) : 1);
    for (auto* b : {&f.triBest, &f.triHit, &f.triHitOffset}) b->reserve(f.triCandidates > 0 ? f.triCandidates : 1);
}

// The FEM model into the executor's memory and the node buffers sized (the rows' buffers are
// sized with the contact rows: reserveFemRows).
template <class Exec>
void uploadFemModel(Exec& ex, PipelineFem<Exec>& f, const Model& model) {
    f.nodes = model.femNodeCount();
    f.tets = model.femTetCount();
    f.attachments = (int)model.femAttachments.size();
    f.femBodies = (int)model.femBodies.size();
    std::vector<int> tetNodes(4 * size_t(f.tets)), rowStart(f.tets);
    f.tetRows = 0;
    for (int t = 0; t < f.tets; ++t) {
        for (int j = 0; j < 4; ++j) tetNodes[4 * size_t(t) + j] = model.femTets[t][j];
        rowStart[t] = f.tetRows;
        f.tetRows += femRowCount(model.femBodies[model.femTetBody[t]].material.type);
    }
    f.rows = f.tetRows + 3 * f.attachments;
    f.warmSize = kFemWarmPerTet * f.tets + 3 * f.attachments;
    std::vector<FemMaterial> material(f.femBodies);
    std::vector<Real> damping(f.femBodies);
    for (int b = 0; b < f.femBodies; ++b) {
        material[b] = model.femBodies[b].material;
        damping[b] = model.femBodies[b].damping;
    }
    std::vector<int> attachNode(f.attachments), attachBody(f.attachments);
    std::vector<Vec3> attachLocal(f.attachments);
    for (int a = 0; a < f.attachments; ++a) {
        attachNode[a] = model.femAttachments[a].node;
        attachBody[a] = model.femAttachments[a].body;
        attachLocal[a] = model.femAttachments[a].localPoint;
    }
    uploadFemVector(ex, f.nodeInvMass, model.femNodeInvMass);
    uploadFemVector(ex, f.tetNodes, tetNodes);
    uploadFemVector(ex, f.tetBody, model.femTetBody);
    uploadFemVector(ex, f.tetRowStart, rowStart);
    uploadFemVector(ex, f.tetRest, model.femTetRest);
    uploadFemVector(ex, f.tetActivation, model.femTetActivation);
    uploadFemVector(ex, f.material, material);
    uploadFemVector(ex, f.damping, damping);
    f.activation.reserve(f.femBodies > 0 ? f.femBodies : 1);
    uploadFemVector(ex, f.attachNode, attachNode);
    uploadFemVector(ex, f.attachBody, attachBody);
    uploadFemVector(ex, f.attachLocal, attachLocal);
    const size_t n = f.nodes > 0 ? f.nodes : 1;
    for (auto* b : {&f.pos, &f.vel, &f.startPos, &f.startVel, &f.goodPos}) b->reserve(n);
    f.warm.reserve(f.warmSize > 0 ? f.warmSize : 1);
    f.warmAtStart.reserve(f.warmSize > 0 ? f.warmSize : 1);
    f.tetRotation.reserve(f.tets > 0 ? f.tets : 1);

    // Boundary nodes in fem_contact.cpp's order: by FEM body, ascending within one.
    std::vector<uint8_t> onSurface(f.nodes, 0);
    for (const auto& tri : model.femTris)
        for (int v : tri) onSurface[v] = 1;
    std::vector<int> surface, surfaceStart(f.femBodies + 1, 0), candidateStart(f.femBodies + 1, 0);
    for (int b = 0; b < f.femBodies; ++b) {
        surfaceStart[b] = (int)surface.size();
        for (int n = 0; n < f.nodes; ++n)
            if (onSurface[n] && model.femNodeBody[n] == b) surface.push_back(n);
        candidateStart[b + 1] = candidateStart[b] + model.shapeCount() * ((int)surface.size() - surfaceStart[b]);
    }
    surfaceStart[f.femBodies] = (int)surface.size();
    f.surfaceCount = (int)surface.size();
    f.candidates = candidateStart[f.femBodies];
    std::vector<Real> friction(f.femBodies);
    for (int b = 0; b < f.femBodies; ++b) friction[b] = model.femBodies[b].contact.friction;
    uploadFemVector(ex, f.surfaceNodes, surface);
    uploadFemVector(ex, f.surfaceStart, surfaceStart);
    uploadFemVector(ex, f.candidateStart, candidateStart);
    uploadFemVector(ex, f.friction, friction);
    std::vector<int> attachStart, attachBodies;
    femNodeAttachments(model, attachStart, attachBodies);
    uploadFemVector(ex, f.attachStart, attachStart);
    uploadFemVector(ex, f.attachBodies, attachBodies);
    f.box.reserve(f.femBodies > 0 ? f.femBodies : 1);
    f.hit.reserve(f.candidates > 0 ? f.candidates : 1);
    f.hitOffset.reserve(f.candidates > 0 ? f.candidates : 1);
    uploadFemTriangles(ex, f, model, surfaceStart);
}

// The FEM contacts' buffers for `contacts` contacts (contents kept).
template <class Exec>
void reserveFemContacts(PipelineFem<Exec>& f, int contacts) {
    f.contactCapacity = contacts;
    const size_t n = contacts > 0 ? contacts : 1;
    f.contacts.reserve(n);
    f.contactMu.reserve(n);
    for (auto* b : {&f.contactPair, &f.contactPairOut}) b->reserve(n);
    for (auto* b : {&f.contactIndex, &f.contactIndexOut}) b->reserve(n);
    for (auto* b : {&f.contactWarm, &f.contactWarmNext, &f.contactWarmAtStart}) b->reserve(n);
    f.contactTri.reserve(n);
    f.contactWeight.reserve(n);
    for (auto* b : {&f.cut, &f.cutOffset, &f.keptTri}) b->reserve(n);
    for (auto* b : {&f.culled, &f.keptContacts}) b->reserve(n);
    f.keptMu.reserve(n);
    f.keptWeight.reserve(n);
}

// The third and fourth body columns for `rows` rows (only when the model has tets).
template <class Exec>
void reserveFemRows(PipelineFem<Exec>& f, size_t rows) {
    if (!f.wide()) return;
    f.bodyC.reserve(rows);
    f.bodyD.reserve(rows);
    for (auto* b : {&f.jacobianC, &f.jacobianD, &f.minvJC, &f.minvJD}) b->reserve(rows);
}

}  // namespace cs
