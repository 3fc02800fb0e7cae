// FEM boundary nodes against FEM boundary triangles on the step pipeline: fem_contact.cpp's
// nodesAgainstTriangles (FEM-FEM, and self contact where a body has it) over the executor verbs.
// The per-(node, triangle) test is the CPU's (fem_contact_hd.h femNodeTriangleContact, femFacing,
// femSelfCandidate), the rows are the four-body vertex-triangle rows of fem_contact.h.
//
//   normals     every boundary node's pseudo-normal (femNodeNormal), for the facing test
//   cells       per FEM body b, the grid cell of its triangles: the largest side of a triangle's
//               box (ex.max) + 2 margin; per triangle, its box grown by the margin in cells
//   search      one thread per (pair (a, b), boundary node of a), in the CPU's loop order: the
//               pair's boxes meeting (a != b), then every triangle of b in ascending index whose
//               cell range holds the node's cell, the best one kept as the CPU keeps it (largest
//               gap, a later triangle winning a tie); a scan of the hits gives each its slot
//               after the node-part contacts (pipeline_fem_contact.h)
//   fill        the contacts, their triangles and barycentric weights into those slots
//   rows        storeFemTriangleRows, called by recordFemContacts' row pass
//
// Why a loop over all of b's triangles gives the CPU grid's answer: the CPU enters triangle t
// into every cell of its grown range and a node looks at the one list of its own cell (by hash
// key), the list ascending in t (t's cells are entered before t + 1's). So the triangles the node
// sees are exactly those whose range holds its cell's key (femGridRangeHolds, per axis, the key's
// 21-bit wrap included), visited in ascending t; a triangle listed twice in that list (a range
// wider than the wrap) is visited twice in a row, and its second visit changes nothing (an equal
// gap replaces the best with itself). The same set in the same order with the same test gives
// the same triangle, bit for bit. The cost is O(nodes x triangles) per pair, against the grid's
// O(nodes x triangles per cell): cheap at the sizes self contact and stacked bodies have here.
#pragma once

#include "engine/collision/feature_pairs.h"
#include "engine/exec/pipeline_data.h"
#include "engine/fem/fem_contact_hd.h"

namespace cs {

// Candidate k's pair (the last whose first candidate is at most k) and boundary node.
CS_HD void femTriangleCandidate(const int* pairStart, const int* pairA, const int* surfaceStart,
                                const int* surfaceNodes, int pairs, int k, int& pair, int& node) {
    int lo = 0, hi = pairs - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (pairStart[mid] <= k) lo = mid;
        else hi = mid - 1;
    }
    pair = lo;
    node = surfaceNodes[surfaceStart[pairA[pair]] + k - pairStart[pair]];
}

// The warm cache's key of FEM contact ct (its triangle tri, or -1 for a rigid part).
CS_HD ContactKey femContactKeyOf(const PotentialContact& ct, int tri, int nb) {
    return tri >= 0 ? femContactKey(ct.bodyA - nb, -1, tri, 0) : femContactKey(ct.bodyA - nb, ct.shapeB, -1, ct.featureB);
}

// The three rows of node-triangle contact ct at rows n, n + 1, n + 2 (fem_contact.cpp Builder::add):
// per direction d in {n, t1, t2}, J = [d | -w_a d | -w_b d | -w_c d] on (node, a, b, c).
CS_HD void storeFemTriangleRows(const FlatRows& rows, int n, const PotentialContact& ct, const int* tri, Vec3 w,
                                int nb, StandardContactRows r, const Real lambda[3], Real mu, int* bodyC, int* bodyD,
                                Spatial* jacobianC, Spatial* jacobianD) {
    const Vec3 zero{0, 0, 0};
    const Vec3 dirs[3] = {ct.normal, r.tangent[0], r.tangent[1]};
    for (int k = 0; k < 3; ++k) {
        const Vec3 d = dirs[k];
        r.jacobianA[k] = Spatial{d, zero};
        r.jacobianB[k] = Spatial{-w[0] * d, zero};
        bodyC[n + k] = nb + tri[1];
        bodyD[n + k] = nb + tri[2];
        jacobianC[n + k] = Spatial{-w[1] * d, zero};
        jacobianD[n + k] = Spatial{-w[2] * d, zero};
    }
    storeContactRows(rows, n, ct.bodyA, nb + tri[0], r, lambda, Real(0), mu, -1);
}

// Cells and search: triHit and triHitOffset of every candidate (after the boxes of fem.box).
template <class Exec>
void recordFemTriangleSearch(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws) {
    PipelineFem<Exec>& f = d.fem;
    if (f.triCandidates == 0) return;
    const Real margin = ws.contactMargin;
    const Vec3* pos = f.pos.data();
    const int *triNodes = f.triNodes.data(), *triFirst = f.triFirst.data(), *triCount = f.triCount.data();
    Real* cell = f.cell.data();
    for (int b = 0; b < f.femBodies; ++b)
        ex.max(triCount + b, nullptr, cell + b, [=] CS_LAMBDA(int i) {
            const int* v = triNodes + 3 * (triFirst[b] + i);
            Vec3 lo, hi;
            femTriangleBounds(pos[v[0]], pos[v[1]], pos[v[2]], lo, hi);
            return fmax(fmax(hi.x - lo.x, hi.y - lo.y), hi.z - lo.z);
        });
    const int femBodies = f.femBodies;
    ex.forEach(femBodies, nullptr, nullptr, [=] CS_LAMBDA(int b) { cell[b] += 2 * margin; });
    Vec3* nodeNormal = f.nodeNormal.data();
    const int *nodeTriStart = f.nodeTriStart.data(), *nodeTris = f.nodeTris.data();
    const int* surface = f.surfaceNodes.data();
    ex.forEach(f.surfaceCount, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        const int n = surface[i];
        nodeNormal[n] = femNodeNormal(n, nodeTriStart, nodeTris, triNodes, pos);
    });
    int* triCells = f.triCells.data();
    ex.forEach(femBodies, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        for (int t = triFirst[b]; t < triFirst[b] + triCount[b]; ++t) {
            const int* v = triNodes + 3 * t;
            Vec3 lo, hi;
            femTriangleBounds(pos[v[0]], pos[v[1]], pos[v[2]], lo, hi);
            for (int k = 0; k < 3; ++k) {
                triCells[6 * t + k] = femGridCell(lo[k] - margin, cell[b]);
                triCells[6 * t + 3 + k] = femGridCell(hi[k] + margin, cell[b]);
            }
        }
    });

    const int pairs = f.femPairs, candidates = f.triCandidates;
    const int *pairStart = f.pairStart.data(), *pairA = f.pairA.data(), *pairB = f.pairB.data();
    const int *surfaceStart = f.surfaceStart.data(), *surfaceNodes = f.surfaceNodes.data();
    const Aabb* box = f.box.data();
    const Vec3* restPos = f.restPos.data();
    const Real* restReach = f.restReach.data();
    const int *nbrStart = f.nbrStart.data(), *nbrs = f.nbrs.data();
    int *best = f.triBest.data(), *hit = f.triHit.data();
    ex.forEach(candidates, nullptr, nullptr, [=] CS_LAMBDA(int k) {
        int pair, node;
        femTriangleCandidate(pairStart, pairA, surfaceStart, surfaceNodes, pairs, k, pair, node);
        const int a = pairA[pair], b = pairB[pair];
        best[k] = -1;
        hit[k] = 0;
        if (a != b)   // fem_contact.cpp: the boxes of a's and b's boundary nodes within the margin
            for (int j = 0; j < 3; ++j)
                if (box[a].lo[j] > box[b].hi[j] + margin || box[b].lo[j] > box[a].hi[j] + margin) return;
        const Vec3 p = pos[node];
        const int cx = femGridCell(p.x, cell[b]), cy = femGridCell(p.y, cell[b]), cz = femGridCell(p.z, cell[b]);
        Real bestGap = -2 * margin;
        for (int t = triFirst[b]; t < triFirst[b] + triCount[b]; ++t) {
            const int* c = triCells + 6 * t;
            if (!femGridRangeHolds(c[0], c[3], cx) || !femGridRangeHolds(c[1], c[4], cy) ||
                !femGridRangeHolds(c[2], c[5], cz))
                continue;
            const int* v = triNodes + 3 * t;
            FemTriangleContact q;
            if (!femNodeTriangleContact(p, pos[v[0]], pos[v[1]], pos[v[2]], margin, bestGap, q)) continue;
            if (!femFacing(nodeNormal[node], q.normal)) continue;
            if (a == b && !femSelfCandidate(node, v, nbrStart, nbrs, restPos[node], restReach[node], restPos[v[0]],
                                            restPos[v[1]], restPos[v[2]], q.gap))
                continue;
            best[k] = t;
            bestGap = q.gap;
        }
        hit[k] = best[k] >= 0 ? 1 : 0;
    });
    ex.exclusiveScan(hit, f.triHitOffset.data(), candidates);
}

// The node-triangle contacts into slots femContacts - femTriContacts + offset (nothing after an
// overflow: femContacts is 0 then).
template <class Exec>
void recordFemTriangleFill(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws) {
    PipelineFem<Exec>& f = d.fem;
    if (f.triCandidates == 0) return;
    StepCounters* c = d.counters.data();
    const Real margin = ws.contactMargin, frictionScale = ws.frictionScale;
    const int pairs = f.femPairs, nb = d.bodies;
    const int *pairStart = f.pairStart.data(), *pairA = f.pairA.data(), *pairB = f.pairB.data();
    const int *surfaceStart = f.surfaceStart.data(), *surfaceNodes = f.surfaceNodes.data();
    const int *best = f.triBest.data(), *offset = f.triHitOffset.data(), *triNodes = f.triNodes.data();
    const Vec3* pos = f.pos.data();
    const Real* friction = f.friction.data();
    PotentialContact* contacts = f.contacts.data();
    Real* contactMu = f.contactMu.data();
    int* contactTri = f.contactTri.data();
    Vec3* contactWeight = f.contactWeight.data();
    ex.forEach(f.triCandidates, nullptr, nullptr, [=] CS_LAMBDA(int k) {
        const int t = best[k];
        if (t < 0 || c->femTriContacts == 0) return;
        int pair, node;
        femTriangleCandidate(pairStart, pairA, surfaceStart, surfaceNodes, pairs, k, pair, node);
        const int* v = triNodes + 3 * t;
        FemTriangleContact q{};
        femNodeTriangleContact(pos[node], pos[v[0]], pos[v[1]], pos[v[2]], margin, -kHuge, q);   // the search's values
        const int slot = c->femContacts - c->femTriContacts + offset[k];
        PotentialContact& out = contacts[slot];
        out = makePotentialContact(PairType::VertexFace, makeFeatureId(FeatureKind::Vertex, node),
                                   makeFeatureId(FeatureKind::Face, t), pos[node], q.point, q.normal, q.gap);
        out.bodyA = nb + node;
        contactMu[slot] = mixFrictionCoefficient(friction[pairA[pair]], friction[pairB[pair]], frictionScale);
        contactTri[slot] = t;
        contactWeight[slot] = Vec3{q.w[0], q.w[1], q.w[2]};
    });
}

}  // namespace cs
