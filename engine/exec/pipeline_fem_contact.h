// FEM contacts on the step pipeline: fem_contact.cpp's buildFemContactRows over the executor
// verbs. Boundary nodes against rigid parts here, the geometry being the same CS_HD function
// (fem_contact_hd.h femNodePartContact) and the rows the standard model's (standard_rows_hd.h);
// boundary nodes against boundary triangles of FEM bodies (FEM-FEM, self contact) in
// pipeline_fem_femcontact.h, their contacts following these as the CPU orders them.
//
//   boxes       per FEM body, the box of its boundary nodes (one thread per FEM body)
//   candidates  one thread per (FEM body, shape, boundary node), in the CPU's loop order: the
//               part active, its box (the broad phase's, grown by the margin) overlapping the
//               FEM body's and holding the node, the gap within the margin; a scan of the hits
//               gives each contact its slot, so they are compacted in the CPU's order
//   cull        with row culling (pipelineCulls, after a converged substep): the node-part contacts
//               that cannot close within the step (row_culling_hd.h, as fem_contact.cpp) go to
//               fem.culled for recordCullCheck; the kept ones move up in order (recordFemCull)
//   rows        three per contact after the FEM rows (normal, two friction rows: node as body A,
//               lever arm zero; against a triangle, its three nodes with the barycentric weights),
//               warm impulses from last substep's cache
//   store       after integration: the cache sorted by key (fem_contact.cpp storeFemContacts)
// More contacts than the buffers hold set counters.overflow and the step runs again, larger.
#pragma once

#include "engine/contact/row_culling_hd.h"
#include "engine/exec/pipeline_collide.h"
#include "engine/exec/pipeline_fem_femcontact.h"
#include "engine/fem/fem_contact_hd.h"

namespace cs {

// Candidate k's FEM body, shape and boundary node (fem.candidateStart's order).
CS_HD void femCandidate(const int* candidateStart, const int* surfaceStart, const int* surfaceNodes, int femBodies,
                        int k, int& femBody, int& shape, int& node) {
    femBody = 0;
    while (femBody + 1 < femBodies && candidateStart[femBody + 1] <= k) ++femBody;
    const int local = k - candidateStart[femBody], count = surfaceStart[femBody + 1] - surfaceStart[femBody];
    shape = local / count;
    node = surfaceNodes[surfaceStart[femBody] + local % count];
}

CS_HD bool aabbHolds(const Aabb& b, Vec3 p) {
    return p.x >= b.lo.x && p.x <= b.hi.x && p.y >= b.lo.y && p.y <= b.hi.y && p.z >= b.lo.z && p.z <= b.hi.z;
}
CS_HD bool aabbsMeet(const Aabb& a, const Aabb& b) {
    for (int k = 0; k < 3; ++k)
        if (a.lo[k] > b.hi[k] || b.lo[k] > a.hi[k]) return false;
    return true;
}

// Row culling of the FEM contacts (fem_contact.cpp's emit with a RowCull): v_push is the larger
// of the rigid contacts' (recordContactRows) and the FEM contacts' own, from their deepest
// overlap; a node-part contact that cannot close within the step by the predictor is left out
// (to fem.culled, for recordCullCheck), and the others keep their order, moved up to the front of
// contacts, contactMu, contactTri and contactWeight, so the rows, the guards and the warm cache
// see the kept contacts only (counters.femContacts). Node-triangle contacts are all kept, as on
// the CPU (fem_contact.cpp says why).
template <class Exec>
void recordFemCull(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    PipelineFem<Exec>& f = d.fem;
    StepCounters* c = d.counters.data();
    if (ex.stopped(&c->cullOn)) return;   // the host skips what the gates below would
    const FlatModelView m = d.model;
    const int capacity = f.contactCapacity, nb = d.bodies;
    PotentialContact* contacts = f.contacts.data();
    const Real stabilization = ws.solver.stabilization, maxPushoutSpeed = ws.solver.maxPushoutSpeed;
    ex.max(&c->femContacts, &c->cullOn, &c->femCullPushout, [=] CS_LAMBDA(int i) { return -contacts[i].gap; });
    ex.serial(&c->cullOn, [=] CS_LAMBDA() {
        c->femCullPushout = fmax(c->cullPushout, cullPushoutSpeedOf(c->femCullPushout, stabilization, maxPushoutSpeed, h));
    });
    int *cut = f.cut.data(), *cutOffset = f.cutOffset.data();
    Real* mu = f.contactMu.data();
    int* tri = f.contactTri.data();
    Vec3* weight = f.contactWeight.data();
    const Vec3* nodeVel = f.vel.data();   // the step's start, as the bodies' below
    const Vec3 *pos = d.pos.data(), *linVel = d.linVel.data(), *angVel = d.angVel.data();
    const Vec3 gravity = ws.gravity;
    ex.forEach(capacity, nullptr, &c->cullOn, [=] CS_LAMBDA(int i) {
        cut[i] = 0;
        if (i >= c->femContacts || tri[i] >= 0) return;
        const PotentialContact& k = contacts[i];
        const int b = k.bodyB;
        const bool dynamic = b >= 0 && m.invMass[b] != Real(0);
        const Vec3 zero{0, 0, 0};
        cut[i] = cullNodeContactCannotClose(k, nodeVel[k.bodyA - nb], dynamic, dynamic ? linVel[b] : zero,
                                            dynamic ? angVel[b] : zero, dynamic ? pos[b] : zero, gravity,
                                            c->femCullPushout, h)
                     ? 1
                     : 0;
    });
    ex.exclusiveScan(cut, cutOffset, capacity);
    PotentialContact *culled = f.culled.data(), *kept = f.keptContacts.data();
    Real* keptMu = f.keptMu.data();
    int* keptTri = f.keptTri.data();
    Vec3* keptWeight = f.keptWeight.data();
    ex.forEach(capacity, &c->femContacts, &c->cullOn, [=] CS_LAMBDA(int i) {
        if (cut[i]) {
            culled[cutOffset[i]] = contacts[i];
            return;
        }
        const int j = i - cutOffset[i];
        kept[j] = contacts[i];
        keptMu[j] = mu[i];
        keptTri[j] = tri[i];
        keptWeight[j] = weight[i];
    });
    ex.serial(&c->cullOn, [=] CS_LAMBDA() {
        const int n = c->femContacts;
        c->femCulled = n > 0 ? cutOffset[n - 1] + cut[n - 1] : 0;
        c->femContacts = n - c->femCulled;
        c->culledContacts += c->femCulled;
    });
    ex.forEach(capacity, &c->femContacts, &c->cullOn, [=] CS_LAMBDA(int i) {
        contacts[i] = kept[i];
        mu[i] = keptMu[i];
        tri[i] = keptTri[i];
        weight[i] = keptWeight[i];
    });
}

template <class Exec>
void recordFemContacts(Exec& ex, PipelineData<Exec>& d, const WorldSettings& ws, Real h) {
    PipelineFem<Exec>& f = d.fem;
    if (!f.anyContacts()) return;
    const FlatModelView m = d.model;
    StepCounters* c = d.counters.data();
    const int femBodies = f.femBodies, candidates = f.candidates, capacity = f.contactCapacity, nb = d.bodies;
    const int *surfaceNodes = f.surfaceNodes.data(), *surfaceStart = f.surfaceStart.data();
    const int* candidateStart = f.candidateStart.data();
    const Vec3* pos = f.pos.data();
    Aabb* box = f.box.data();
    ex.forEach(femBodies, nullptr, nullptr, [=] CS_LAMBDA(int b) {
        Aabb x{{kHuge, kHuge, kHuge}, {-kHuge, -kHuge, -kHuge}};
        for (int j = surfaceStart[b]; j < surfaceStart[b + 1]; ++j)
            for (int k = 0; k < 3; ++k) {
                x.lo[k] = fmin(x.lo[k], pos[surfaceNodes[j]][k]);
                x.hi[k] = fmax(x.hi[k], pos[surfaceNodes[j]][k]);
            }
        box[b] = x;
    });

    const ShapeWorldView world{d.pose.data(), d.aabb.data(), d.centroid.data(), d.worldVertices.data(),
                               d.worldEdges.data(), d.worldFaces.data()};
    const uint8_t* active = d.active.data();
    const Real margin = ws.contactMargin;
    const int *attachStart = f.attachStart.data(), *attachBodies = f.attachBodies.data();
    // Candidate k as a contact (false: none); the same test in both passes.
    auto contact = [=] CS_LAMBDA(int k, PotentialContact& out) {
        int femBody, shape, node;
        femCandidate(candidateStart, surfaceStart, surfaceNodes, femBodies, k, femBody, shape, node);
        const int body = m.shapeBody[shape];
        const Aabb part = world.aabb[shape];
        if (!active[body] || !aabbsMeet(part, box[femBody]) || !aabbHolds(part, pos[node])) return false;
        if (femNodeAttachedTo(node, body, attachStart, attachBodies)) return false;
        const bool sphere = m.shapePolytope[shape] < 0;
        const PolytopeView view = sphere ? PolytopeView{} : shapePolytopeView(m, world, shape);
        return femNodePartContact(node, nb + node, shape, body, pos[node], sphere ? nullptr : &view,
                                  world.pose[shape].pos, m.shapeRadius[shape], margin, out);
    };
    int *hit = f.hit.data(), *offset = f.hitOffset.data();
    if (candidates > 0) {
        ex.forEach(candidates, nullptr, nullptr, [=] CS_LAMBDA(int k) {
            PotentialContact scratch;
            hit[k] = contact(k, scratch) ? 1 : 0;
        });
        ex.exclusiveScan(hit, offset, candidates);
    }
    recordFemTriangleSearch(ex, d, ws);
    const int triCandidates = f.triCandidates;
    const int *triHit = f.triHit.data(), *triOffset = f.triHitOffset.data();
    ex.serial(nullptr, [=] CS_LAMBDA() {
        const int parts = candidates > 0 ? offset[candidates - 1] + hit[candidates - 1] : 0;
        const int tris = triCandidates > 0 ? triOffset[triCandidates - 1] + triHit[triCandidates - 1] : 0;
        const int total = parts + tris;
        c->neededFemContacts = total > c->neededFemContacts ? total : c->neededFemContacts;
        c->femContacts = total <= capacity ? total : 0;
        c->femTriContacts = total <= capacity ? tris : 0;
        if (total > capacity) c->overflow = 1;
    });
    PotentialContact* contacts = f.contacts.data();
    Real* contactMu = f.contactMu.data();
    int* contactTri = f.contactTri.data();
    const Real *friction = f.friction.data(), frictionScale = ws.frictionScale;
    if (candidates > 0)
        ex.forEach(candidates, nullptr, nullptr, [=] CS_LAMBDA(int k) {
            if (!hit[k] || offset[k] >= c->femContacts - c->femTriContacts) return;
            PotentialContact& out = contacts[offset[k]];
            contact(k, out);
            int femBody, shape, node;
            femCandidate(candidateStart, surfaceStart, surfaceNodes, femBodies, k, femBody, shape, node);
            contactMu[offset[k]] = mixFrictionCoefficient(friction[femBody], m.friction[out.bodyB], frictionScale);
            contactTri[offset[k]] = -1;
        });
    recordFemTriangleFill(ex, d, ws);
    if (pipelineCulls(d, ws)) recordFemCull(ex, d, ws, h);

    const FlatRows rows{d.kind.data(), d.rowBodyA.data(), d.rowBodyB.data(), d.jacobianA.data(), d.jacobianB.data(),
                        d.bias.data(), d.softness.data(), d.mu.data(), d.normalRow.data(), d.maxImpulse.data(),
                        d.lambda.data(), d.owner.data()};
    int *bodyC = f.bodyC.data(), *bodyD = f.bodyD.data();
    Spatial *jacobianC = f.jacobianC.data(), *jacobianD = f.jacobianD.data();
    const Vec3* bodyPos = d.pos.data();
    const WarmImpulse* warm = f.contactWarm.data();
    const Real stabilization = ws.solver.stabilization, maxPushout = ws.solver.maxPushoutSpeed * h;
    const bool warmStart = ws.solver.warmStart;
    const int* triNodes = f.triNodes.data();
    const Vec3* weight = f.contactWeight.data();
    ex.forEach(capacity, &c->femContacts, nullptr, [=] CS_LAMBDA(int i) {
        const PotentialContact& ct = contacts[i];
        const Vec3 zero{0, 0, 0};
        const StandardContactRows r = standardContactRows(ct, ct.pointA, ct.bodyB >= 0 ? bodyPos[ct.bodyB] : zero,
                                                          stabilization, maxPushout);
        Real lambda[3] = {0, 0, 0};
        if (warmStart) {
            const int w = findWarmIndex(warm, c->femContactWarm, femContactKeyOf(ct, contactTri[i], nb));
            if (w >= 0) warmRowImpulses(warm[w], r, lambda);
        }
        const int n = c->rowCount + 3 * i;
        if (contactTri[i] >= 0) {
            storeFemTriangleRows(rows, n, ct, triNodes + 3 * contactTri[i], weight[i], nb, r, lambda, contactMu[i], bodyC,
                                 bodyD, jacobianC, jacobianD);
            return;
        }
        storeContactRows(rows, n, ct.bodyA, ct.bodyB, r, lambda, Real(0), contactMu[i], -1);
        for (int row = n; row < n + 3; ++row) {
            bodyC[row] = bodyD[row] = -1;
            jacobianC[row] = jacobianD[row] = Spatial{zero, zero};
        }
    });
    ex.serial(nullptr, [=] CS_LAMBDA() { c->rowCount += 3 * c->femContacts; });
}

// After integration: the contacts' impulses as next substep's warm cache, sorted by key (their
// pair words differ: one contact per node and part or triangle), or none after a roll back.
template <class Exec>
void recordFemContactStore(Exec& ex, PipelineData<Exec>& d) {
    PipelineFem<Exec>& f = d.fem;
    if (!f.anyContacts()) return;
    StepCounters* c = d.counters.data();
    const int capacity = f.contactCapacity, nb = d.bodies;
    const PotentialContact* contacts = f.contacts.data();
    const int* contactTri = f.contactTri.data();
    uint64_t *pair = f.contactPair.data(), *pairOut = f.contactPairOut.data();
    int *index = f.contactIndex.data(), *indexOut = f.contactIndexOut.data();
    ex.forEach(capacity, nullptr, nullptr, [=] CS_LAMBDA(int i) {
        const bool used = i < c->femContacts;
        pair[i] = used ? femContactKeyOf(contacts[i], contactTri[i], nb).shapes : ~uint64_t(0);
        index[i] = i;
    });
    ex.sortPairs(pair, index, pairOut, indexOut, capacity);
    const Real* lambda = d.lambda.data();
    WarmImpulse *warm = f.contactWarm.data(), *next = f.contactWarmNext.data();
    ex.forEach(capacity, &c->femContacts, nullptr, [=] CS_LAMBDA(int i) {
        const int j = indexOut[i], n = c->rowCount - 3 * c->femContacts + 3 * j;
        const PotentialContact& ct = contacts[j];
        Vec3 t[2];
        tangentBasis(ct.normal, t[0], t[1]);
        next[i] = WarmImpulse{femContactKeyOf(ct, contactTri[j], nb), lambda[n],
                              lambda[n + 1] * t[0] + lambda[n + 2] * t[1]};
    });
    ex.serial(nullptr, [=] CS_LAMBDA() { c->femContactWarm = c->bad ? 0 : c->femContacts; });
    ex.forEach(capacity, &c->femContactWarm, nullptr, [=] CS_LAMBDA(int i) { warm[i] = next[i]; });
}

}  // namespace cs
