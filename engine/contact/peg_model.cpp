// PEG: potential contacts -> U, I and X constraints ([PEG] Williams, Lu, Trinkle 2016, 3-5).
//
// The narrow phase lists feature pairs (potential_contact.h); this stage groups those of one
// shape pair by the features they share ([PEG] section 5.2, 3D):
//   vertex-face: the contacts of one vertex v against faces of the other polytope. One face: a
//     U-constraint (eqs. 17-18, 34). Several faces (v near an edge: its two faces, eq. 36; v
//     near a vertex: the faces around it, eq. 37): an I-constraint "max over the faces' gaps
//     >= 0" with one primary contact, the only one with an impulse (eq. 24, |C_iota| = 1 as in
//     the paper's experiments). The primary is the applicable and feasible member with the
//     largest gap (section 4 heuristics); the others are secondaries (C_kappa).
//   edge-edge: a U-constraint (eq. 35), unless an X-constraint takes it (below).
//   vertex-edge, vertex-vertex (Euclidean pairs the narrow phase emits where no face of the
//     edge or vertex has a vertex-face pair), sphere pairs: U-constraints, one normal each.
//   X-constraints (eq. 36): for an I-constraint of vertex v over the two faces f_0, f_1 of an
//     edge e_b, every edge-edge pair (e_a, e_b) with e_a leaving v, applicable and feasible,
//     gives max(psi(v, f_k), psi(e_a, e_b)) >= 0 with f_k the face e_a heads towards (edge
//     orientation, peg_geometry.h). [PEG] 5.3 writes X-constraints as I-constraints without
//     an impulse and leaves the forces to the U and I constraints. A Newton iteration over NCP
//     rows needs a multiplier per inequality, so here the X-constraint *replaces* the pair's
//     U-constraint: the edge-edge contact is its primary (impulse along the edge-edge normal)
//     and the face gaps are its secondaries. Its impulse is then non-zero only where the
//     paper's constraint is active (every member's gap non-positive), which is exactly where
//     U alone would also push, and it is zero where U would over-constrain.
// Rows: a U-constraint is a RowKind::Normal row, I and X are RowKind::Group rows with gap
// members (constraint_rows.h); each gets the standard model's two friction rows on its primary.
// Edge pairs the narrow phase leaves out (crossings near an edge's end) are formed here for the
// X-constraints (StepContext::peg): without them an edge leaving a relaxed vertex could sink through
// the other body's edge (measured: pour3d at h = 1 ms reached 4.6 cm edge-edge overlap and
// exploded at t = 2.39 s).
// Vertex-vertex X-constraints (eq. 38, as we read it): addVertexVertexConstraints below
// (PegSettings::vertexVertex).
#include "engine/contact/peg_model.h"

#include <algorithm>
#include <cmath>

#include "engine/collision/broad_phase.h"
#include "engine/collision/narrow_phase.h"
#include "engine/collision/world_polytope.h"
#include "engine/contact/peg_geometry.h"
#include "engine/contact/standard_rows_hd.h"
#include "engine/contact/step_context.h"

namespace cs {

namespace {

Spatial pointJacobian(Vec3 r, Vec3 dir) { return Spatial{dir, cross(r, dir)}; }

ContactKey keyOf(const PotentialContact& c) {
    return ContactKey{(uint64_t(uint32_t(c.shapeA)) << 32) | uint32_t(c.shapeB),
                      (uint64_t(c.featureA) << 32) | c.featureB};
}

const WarmImpulse* findWarm(const std::vector<WarmImpulse>& warm, const ContactKey& key) {
    auto it = std::lower_bound(warm.begin(), warm.end(), key,
                               [](const WarmImpulse& w, const ContactKey& k) { return w.key < k; });
    return it != warm.end() && it->key == key ? &*it : nullptr;
}

// Edge-edge pairs PEG forms itself for X-constraints where the narrow phase has none: it leaves
// a crossing near an edge's end to the vertex's contacts (narrow_phase.h, endpointTol), and PEG
// relaxes exactly those. Indexed after the step's potential contacts (owner >= potential.size());
// rebuilt by buildPegRows and read by storePegResults of the same step (StepContext::peg).
std::vector<PotentialContact>& synthetic(const ContactStageInput& in) { return in.context->peg.synthetic; }

const PotentialContact& contactAt(const ContactStageInput& in, int i) {
    return i < (int)in.potential.size() ? in.potential[i] : synthetic(in)[i - in.potential.size()];
}

// Jacobian blocks of a contact's normal: J = [n, rA x n | -n, -(rB x n)].
void normalJacobians(const ContactStageInput& in, const PotentialContact& c, Spatial& ja, Spatial& jb) {
    Vec3 rA = c.bodyA >= 0 ? c.pointA - in.state.pos[c.bodyA] : Vec3{0, 0, 0};
    Vec3 rB = c.bodyB >= 0 ? c.pointB - in.state.pos[c.bodyB] : Vec3{0, 0, 0};
    ja = pointJacobian(rA, c.normal);
    jb = pointJacobian(rB, -c.normal);
}

Real stabilizedGap(const SolverSettings& s, Real gap, Real h) {
    return cs::stabilizedGap(gap, s.stabilization, s.maxPushoutSpeed * h);   // standard_rows_hd.h
}

// The primary's normal row (Normal for U, Group for I and X), its secondaries, and the two
// friction rows of the standard model on the primary.
void addConstraint(const ContactStageInput& in, ConstraintRows& rows, int primary, const int* secondary,
                   int secondaryCount) {
    const SolverSettings& solver = in.settings.solver;
    const PotentialContact& c = contactAt(in, primary);
    Spatial ja, jb;
    normalJacobians(in, c, ja, jb);
    int n = rows.add(secondaryCount > 0 ? RowKind::Group : RowKind::Normal, c.bodyA, c.bodyB, ja, jb,
                     stabilizedGap(solver, c.gap, in.h), 0, primary);
    for (int k = 0; k < secondaryCount; ++k) {
        const PotentialContact& s = contactAt(in, secondary[k]);
        Spatial sa, sb;
        normalJacobians(in, s, sa, sb);
        rows.addGapMember(n, s.bodyA, s.bodyB, sa, sb, stabilizedGap(solver, s.gap, in.h), secondary[k]);
    }
    Vec3 t[2];
    tangentBasis(c.normal, t[0], t[1]);
    Vec3 rA = c.bodyA >= 0 ? c.pointA - in.state.pos[c.bodyA] : Vec3{0, 0, 0};
    Vec3 rB = c.bodyB >= 0 ? c.pointB - in.state.pos[c.bodyB] : Vec3{0, 0, 0};
    Real mu = mixFriction(in.model, c.bodyA, c.bodyB, in.settings.frictionScale);
    for (int k = 0; k < 2; ++k) {
        int f = rows.add(RowKind::Friction, c.bodyA, c.bodyB, pointJacobian(rA, t[k]), pointJacobian(rB, -t[k]), 0,
                         0, primary);
        rows.mu[f] = mu;
        rows.normalRow[f] = n;
    }
    if (solver.warmStart) {
        if (const WarmImpulse* w = findWarm(in.state.warm, keyOf(c))) {
            rows.lambda[n] = w->normal;
            rows.lambda[n + 1] = dot(w->tangent, t[0]);
            rows.lambda[n + 2] = dot(w->tangent, t[1]);
        }
    }
}

// A vertex-face contact's vertex: side 0 (vertex of A) or 1 (of B) and its index; -1 if not VF.
int vertexSide(const PotentialContact& c) {
    if (c.type != PairType::VertexFace) return -1;
    return featureKind(c.featureA) == FeatureKind::Vertex ? 0 : 1;
}
int vertexOf(const PotentialContact& c) {
    return featureIndex(vertexSide(c) == 0 ? c.featureA : c.featureB);
}
int faceOf(const PotentialContact& c) {
    return featureIndex(vertexSide(c) == 0 ? c.featureB : c.featureA);
}

// The contact index of the pair (fa, fb) among the shape pair's potential contacts [first,
// last) and the synthetic ones formed for it since synthFirst; -1 if none.
int findPair(const ContactStageInput& in, size_t first, size_t last, size_t synthFirst, uint32_t fa, uint32_t fb) {
    for (size_t i = first; i < last; ++i)
        if (in.potential[i].featureA == fa && in.potential[i].featureB == fb) return (int)i;
    for (size_t k = synthFirst; k < synthetic(in).size(); ++k)
        if (synthetic(in)[k].featureA == fa && synthetic(in)[k].featureB == fb) return int(in.potential.size() + k);
    return -1;
}

int pushSynthetic(const PotentialContact& model, PotentialContact c, const ContactStageInput& in) {
    c.shapeA = model.shapeA; c.shapeB = model.shapeB; c.bodyA = model.bodyA; c.bodyB = model.bodyB;
    synthetic(in).push_back(c);
    return int(in.potential.size() + synthetic(in).size() - 1);
}

// How far the two bodies' surfaces can approach each other within the step, bounded from the
// start-of-step velocities: |v_A - v_B| + |g| h + |w_A| R_A + |w_B| R_B (R the shapes' bounding
// radii), times h. [PEG] section 4 defines feasibility as "the contact could occur within the
// step"; fixed distances (delta, eps) say so only while bodies move less than them per step.
// PegSettings::motionScale (0: off) widens delta and eps by motionScale times this reach, so
// that at large steps PEG neither drops the edge pairs nor misjudges the primaries that a
// margin grown with the step (the world's contactMargin) lets the narrow phase report.
Real motionReach(const ContactStageInput& in, const PotentialContact& c0, const PolytopeView& A, const PolytopeView& B) {
    const Real scale = in.settings.solver.peg.motionScale;
    if (!(scale > 0)) return 0;
    Vec3 va{0, 0, 0}, vb{0, 0, 0};
    Real spin = 0;
    if (c0.bodyA >= 0 && !in.model.isStatic(c0.bodyA)) {
        va = in.state.linVel[c0.bodyA];
        spin += length(in.state.angVel[c0.bodyA]) * A.boundingRadius;
    }
    if (c0.bodyB >= 0 && !in.model.isStatic(c0.bodyB)) {
        vb = in.state.linVel[c0.bodyB];
        spin += length(in.state.angVel[c0.bodyB]) * B.boundingRadius;
    }
    return scale * in.h * (length(va - vb) + length(in.settings.gravity) * in.h + spin);
}

// The faces around vertex v of P (each once).
void facesAt(const PolytopeView& P, int v, std::vector<int>& out) {
    out.clear();
    for (int k = P.vertexEdgeStart[v]; k < P.vertexEdgeStart[v + 1]; ++k)
        for (int f : P.edges[P.vertexEdges[k]].face)
            if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
}

// Vertex-vertex constraints ([PEG] section 5.2, figure 19, eq. 38). Eq. 38 itself was lost
// from our copy of the paper; its prose: for a vertex v_a near a vertex v_b, besides the
// I-constraints of each vertex over the other's faces, X-constraints over face pairs (f_a at
// v_a, f_b at v_b) and the edges e_ar, e_bs leaving the two vertices, enforced only for edge
// pairs with edge-edge applicability and feasibility, letting "a vertex pass on either side of
// a face". The narrow phase lists nothing for two tips passing each other whose edge lines meet
// beyond the segments' ends (measured, tests/test_peg_vertex.cpp: cubes tip to tip overlapping
// by 2 mm gave no potential contact at all), so PEG forms these contacts itself.
// What we build, and why not one X per edge pair: near two vertices the bodies are two convex
// cones, disjoint exactly when one of the candidate separating planes separates them: a face of
// B at v_b that v_a is applicable to (all of A's cone on its outer side iff v_a is), a face of
// A at v_a likewise, or an applicable edge pair (e_a at v_a, e_b at v_b). So the free space is
//     max( psi(v_a, f_b) | f_b at v_b, applicable;  psi(v_b, f_a) | f_a at v_a, applicable;
//          psi(e_a, e_b) | e_a at v_a, e_b at v_b, applicable and feasible ) >= 0
// one X-constraint over all those gaps (the union of eq. 38's face pairs): never tighter than
// the geometry (relaxed applicability only adds candidates). A first version with one X per
// edge pair, max(psi(e_a, e_b), psi(v_a, f_b), psi(v_b, f_a)) with the faces picked by edge
// orientation, was measured to over-constrain: a tip sliding past another at 0.5 m/s was
// stopped and thrown back at 0.43 m/s. The primary is the edge pair with the largest gap (the
// impulse acts along its normal; the vertices' own I-constraints push along face normals).
// psi(e_a, e_b) is the signed distance of the edge lines along n = +-(e_a x e_b), the sign
// applicability picks; feasibility: the segments within edgeEps. Vertex pairs within the margin.
// Formed only for shape pairs the narrow phase left empty (addUnlistedVertexVertex): formed for
// every pair (commit cb5e0a8), they turned the resting pyramid's coincident box corners into
// 2237 rows instead of 988 and the pyramid moved (kinetic energy 5.9 J after 1 s against 1e-7 J;
// `sandbox run pyramid --contact peg --seconds 1`); where the narrow phase lists pairs, its
// vertex-face groups and edge-edge pairs already carry the configuration.
void addVertexVertexConstraints(const ContactStageInput& in, ConstraintRows& rows, const PolytopeView& A,
                                const PolytopeView& B, const PotentialContact& c0, size_t first, size_t last,
                                size_t synthFirst) {
    const PegSettings& peg = in.settings.solver.peg;
    const Real margin = in.settings.contactMargin;
    const Real edgeEps = peg.edgeEps + motionReach(in, c0, A, B);
    thread_local std::vector<int> members, faces;
    for (int va = 0; va < A.vertexCount; ++va) {
        for (int vb = 0; vb < B.vertexCount; ++vb) {
            if (lengthSq(A.vertices[va] - B.vertices[vb]) > margin * margin) continue;
            members.clear();
            int primary = -1;
            Real primaryGap = -kHuge;
            for (int ka = A.vertexEdgeStart[va]; ka < A.vertexEdgeStart[va + 1]; ++ka) {
                for (int kb = B.vertexEdgeStart[vb]; kb < B.vertexEdgeStart[vb + 1]; ++kb) {
                    const int ia = A.vertexEdges[ka], ib = B.vertexEdges[kb];
                    const uint32_t fea = makeFeatureId(FeatureKind::Edge, ia), feb = makeFeatureId(FeatureKind::Edge, ib);
                    if (findPair(in, first, last, synthFirst, fea, feb) >= 0) continue;   // listed: its own row
                    const PolytopeEdge& ea = A.edges[ia];
                    const PolytopeEdge& eb = B.edges[ib];
                    const Vec3 pa = A.vertices[ea.tail], da = A.vertices[ea.head] - pa;
                    const Vec3 pb = B.vertices[eb.tail], db = B.vertices[eb.head] - pb;
                    Real u, w;
                    if (!edgeEdgeClosest(pa, da, pb, db, Real(1e-3), u, w)) continue;   // parallel
                    Vec3 n = normalize(cross(da, db));
                    Real score = edgeEdgeApplicability(ea, eb, n), flipped = edgeEdgeApplicability(ea, eb, -n);
                    if (flipped > score) { n = -n; score = flipped; }
                    if (!pegApplicable(score, peg.epsTheta)) continue;
                    if (pegEdgeEdgeFeasibility(pa, pa + da, pb, pb + db, edgeEps) < 0) continue;
                    const Vec3 qa = pa + u * da, qb = pb + w * db;
                    const Real gap = dot(qa - qb, n);
                    if (gap > margin || gap < -Real(0.1)) continue;
                    const int id = pushSynthetic(c0, makePotentialContact(PairType::EdgeEdge, fea, feb, qa, qb, n, gap), in);
                    if (gap > primaryGap) {
                        if (primary >= 0) members.push_back(primary);
                        primary = id;
                        primaryGap = gap;
                    } else {
                        members.push_back(id);
                    }
                }
            }
            if (primary < 0) continue;   // no edge pair: the vertices' I-constraints cover it
            // Each vertex against the other body's faces at the other vertex: v_a on B's faces
            // (normal: the face's, B to A) and v_b on A's faces (normal: minus the face's).
            auto addVertexFaces = [&](const PolytopeView& P, int vp, const PolytopeView& Q, int vq, bool vertexIsA) {
                facesAt(Q, vq, faces);
                for (int fq : faces) {
                    const Vec3 eta = Q.faces[fq].normal, p = P.vertices[vp];
                    if (!pegApplicable(pegVertexFaceApplicability(P, vp, eta), peg.epsTheta)) continue;
                    const uint32_t fv = makeFeatureId(FeatureKind::Vertex, vp), ff = makeFeatureId(FeatureKind::Face, fq);
                    const uint32_t fa = vertexIsA ? fv : ff, fb = vertexIsA ? ff : fv;
                    int id = findPair(in, first, last, synthFirst, fa, fb);
                    if (id < 0) {
                        const Real g = vertexFaceGap(p, Q.faces[fq]);
                        const Vec3 onFace = p - g * eta;
                        id = pushSynthetic(c0, vertexIsA ? makePotentialContact(PairType::VertexFace, fa, fb, p, onFace, eta, g)
                                                         : makePotentialContact(PairType::VertexFace, fa, fb, onFace, p, -eta, g),
                                           in);
                    }
                    members.push_back(id);
                }
            };
            addVertexFaces(A, va, B, vb, true);
            addVertexFaces(B, vb, A, va, false);
            addConstraint(in, rows, primary, members.data(), (int)members.size());
        }
    }
}

// Groups the contacts [first, last) of one polytope pair.
void buildPolytopePair(const ContactStageInput& in, ConstraintRows& rows, size_t first, size_t last) {
    const PegSettings& peg = in.settings.solver.peg;
    const PotentialContact& c0 = in.potential[first];
    thread_local WorldPolytope wa, wb;
    wa.assign(in.model.polytopes[in.model.shapePolytope[c0.shapeA]], shapeWorldTransform(in.model, in.state, c0.shapeA));
    wb.assign(in.model.polytopes[in.model.shapePolytope[c0.shapeB]], shapeWorldTransform(in.model, in.state, c0.shapeB));
    const PolytopeView A = wa.view(), B = wb.view();
    const Real tanPhi = std::tan(peg.feasibleAngle);
    const Real reach = motionReach(in, c0, A, B);
    const Real feasibleDelta = peg.feasibleDelta + reach, edgeEps = peg.edgeEps + reach;

    const size_t synthFirst = synthetic(in).size();

    // Vertex groups: vertex-face contacts of one vertex, in contact order (sorted by feature).
    thread_local std::vector<int> order, used, members, xSecondary;
    order.clear();
    for (size_t i = first; i < last; ++i)
        if (vertexSide(in.potential[i]) >= 0) order.push_back((int)i);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
        const PotentialContact &p = in.potential[x], &q = in.potential[y];
        int sp = vertexSide(p), sq = vertexSide(q);
        return sp != sq ? sp < sq : vertexOf(p) < vertexOf(q);
    });
    used.assign(last - first, 0);   // 1: taken by an I- or X-constraint as a secondary/primary
    // U contacts kept, for the duplicate test (two coincident vertex-face pairs of equal boxes).
    thread_local std::vector<int> single;
    single.clear();

    // Per I-constraint over an edge's two faces: the vertex, its side and the two face contacts,
    // for the X-constraints below.
    struct EdgeGroup { int side, vertex, contact[2], face[2]; };
    thread_local std::vector<EdgeGroup> edgeGroups;
    edgeGroups.clear();

    for (size_t g = 0; g < order.size();) {
        size_t e = g + 1;
        while (e < order.size() && vertexSide(in.potential[order[e]]) == vertexSide(in.potential[order[g]]) &&
               vertexOf(in.potential[order[e]]) == vertexOf(in.potential[order[g]]))
            ++e;
        const int side = vertexSide(in.potential[order[g]]);
        const PolytopeView& P = side == 0 ? A : B;   // the vertex's polytope
        const PolytopeView& Q = side == 0 ? B : A;   // the faces' polytope
        // Primary: the applicable and feasible member with the largest gap ([PEG] section 4);
        // if none is, the largest gap.
        int best = -1, bestAny = -1;
        for (size_t k = g; k < e; ++k) {
            const PotentialContact& c = in.potential[order[k]];
            const int v = vertexOf(c), f = faceOf(c);
            Vec3 eta = Q.faces[f].normal;
            bool ok = pegApplicable(pegVertexFaceApplicability(P, v, eta), peg.epsTheta) &&
                      pegVertexFaceFeasibility(Q, f, P.vertices[v], tanPhi, feasibleDelta) >= 0;
            if (bestAny < 0 || c.gap > in.potential[bestAny].gap) bestAny = order[k];
            if (ok && (best < 0 || c.gap > in.potential[best].gap)) best = order[k];
        }
        const int primary = best >= 0 ? best : bestAny;
        if (e - g == 1) {
            single.push_back(primary);
        } else {
            members.clear();
            for (size_t k = g; k < e; ++k)
                if (order[k] != primary) members.push_back(order[k]);
            addConstraint(in, rows, primary, members.data(), (int)members.size());
            for (size_t k = g; k < e; ++k) used[order[k] - first] = 1;
            // Every two faces of the group that share an edge (one pair near an edge, the pairs
            // around a vertex): remembered for the X-constraints.
            for (size_t x = g; x < e; ++x)
                for (size_t y = x + 1; y < e; ++y)
                    edgeGroups.push_back(EdgeGroup{side, vertexOf(in.potential[order[x]]), {order[x], order[y]},
                                                   {faceOf(in.potential[order[x]]), faceOf(in.potential[order[y]])}});
        }
        g = e;
    }

    // X-constraints (eq. 36) on edge-edge pairs (e_a, e_b): e_a leaves the vertex of an edge
    // group and e_b is the edge between that group's two faces.
    for (size_t i = first; i < last; ++i) {
        const PotentialContact& c = in.potential[i];
        if (c.type != PairType::EdgeEdge) continue;
        const PolytopeEdge& ea = A.edges[featureIndex(c.featureA)];
        const PolytopeEdge& eb = B.edges[featureIndex(c.featureB)];
        xSecondary.clear();
        for (const EdgeGroup& eg : edgeGroups) {
            const PolytopeEdge& ev = eg.side == 0 ? ea : eb;   // the edge that must leave the vertex
            const PolytopeEdge& ef = eg.side == 0 ? eb : ea;   // the edge between the two faces
            if (ev.tail != eg.vertex && ev.head != eg.vertex) continue;
            bool faces = (ef.face[0] == eg.face[0] && ef.face[1] == eg.face[1]) ||
                         (ef.face[0] == eg.face[1] && ef.face[1] == eg.face[0]);
            if (!faces) continue;
            const PolytopeView& P = eg.side == 0 ? A : B;
            const PolytopeView& Q = eg.side == 0 ? B : A;
            Vec3 a0 = A.vertices[ea.tail], a1 = A.vertices[ea.head], b0 = B.vertices[eb.tail], b1 = B.vertices[eb.head];
            if (!pegApplicable(pegEdgeEdgeApplicability(ea, a1 - a0, eb, b1 - b0), peg.epsTheta)) continue;
            if (pegEdgeEdgeFeasibility(a0, a1, b0, b1, edgeEps) < 0) continue;
            Vec3 d = P.vertices[ev.tail == eg.vertex ? ev.head : ev.tail] - P.vertices[eg.vertex];
            int k = pegEdgeOrientationFace(d, Q.faces[eg.face[0]].normal, Q.faces[eg.face[1]].normal);
            xSecondary.push_back(eg.contact[k]);
        }
        if (xSecondary.empty()) {
            // U-constraint (eq. 35) only when feasible: the segments' nearest points within eps
            // ([PEG] section 4). The narrow phase reports edge-edge gaps down to -maxEdgeDepth
            // along the line normal; measured on pour3d (h = 1 ms), a pair at -4.6 cm whose
            // bodies did not overlap at all was pushed apart at 46 m/s by the psi/h term.
            Vec3 a0 = A.vertices[ea.tail], a1 = A.vertices[ea.head], b0 = B.vertices[eb.tail], b1 = B.vertices[eb.head];
            if (pegEdgeEdgeFeasibility(a0, a1, b0, b1, edgeEps) >= 0) single.push_back((int)i);
        } else {
            addConstraint(in, rows, (int)i, xSecondary.data(), (int)xSecondary.size());
            used[i - first] = 1;
        }
    }

    // X-constraints on edge pairs the narrow phase did not list: e_a leaving the group's vertex
    // and e_b between its two faces, crossing within e_b and within e_a (its end at v included).
    for (const EdgeGroup& eg : edgeGroups) {
        const PolytopeView& P = eg.side == 0 ? A : B;
        const PolytopeView& Q = eg.side == 0 ? B : A;
        int eq = -1;
        for (int j = 0; j < Q.edgeCount && eq < 0; ++j)
            if ((Q.edges[j].face[0] == eg.face[0] && Q.edges[j].face[1] == eg.face[1]) ||
                (Q.edges[j].face[0] == eg.face[1] && Q.edges[j].face[1] == eg.face[0]))
                eq = j;
        if (eq < 0) continue;
        for (int k = P.vertexEdgeStart[eg.vertex]; k < P.vertexEdgeStart[eg.vertex + 1]; ++k) {
            const int ep = P.vertexEdges[k];
            const int ia = eg.side == 0 ? ep : eq, ib = eg.side == 0 ? eq : ep;   // A's edge, B's edge
            const uint32_t fa = makeFeatureId(FeatureKind::Edge, ia), fb = makeFeatureId(FeatureKind::Edge, ib);
            bool listed = false;
            for (size_t i = first; i < last && !listed; ++i)
                listed = in.potential[i].featureA == fa && in.potential[i].featureB == fb;
            if (listed) continue;
            const PolytopeEdge& ea = A.edges[ia];
            const PolytopeEdge& eb = B.edges[ib];
            const Vec3 pa = A.vertices[ea.tail], da = A.vertices[ea.head] - pa;
            const Vec3 pb = B.vertices[eb.tail], db = B.vertices[eb.head] - pb;
            Real u, w;
            if (!edgeEdgeClosest(pa, da, pb, db, Real(1e-3), u, w)) continue;
            if (u < 0 || u > 1 || w <= 0 || w >= 1) continue;
            Vec3 n = normalize(cross(da, db));
            Real score = edgeEdgeApplicability(ea, eb, n), flipped = edgeEdgeApplicability(ea, eb, -n);
            if (flipped > score) { n = -n; score = flipped; }
            if (!pegApplicable(score, peg.epsTheta)) continue;
            const Vec3 qa = pa + u * da, qb = pb + w * db;
            const Real gap = dot(qa - qb, n);
            if (gap > in.settings.contactMargin || gap < -Real(0.1)) continue;
            PotentialContact c = makePotentialContact(PairType::EdgeEdge, fa, fb, qa, qb, n, gap);
            c.shapeA = c0.shapeA; c.shapeB = c0.shapeB; c.bodyA = c0.bodyA; c.bodyB = c0.bodyB;
            const int id = int(in.potential.size() + synthetic(in).size());
            synthetic(in).push_back(c);
            Vec3 d = P.vertices[P.edges[ep].tail == eg.vertex ? P.edges[ep].head : P.edges[ep].tail] - P.vertices[eg.vertex];
            int face = pegEdgeOrientationFace(d, Q.faces[eg.face[0]].normal, Q.faces[eg.face[1]].normal);
            addConstraint(in, rows, id, &eg.contact[face], 1);
        }
    }

    (void)synthFirst;   // vertex-vertex: only for pairs the narrow phase left empty (addUnlistedVertexVertex)

    // U-constraints: everything left (single vertex-face pairs, Euclidean pairs, edge-edge not
    // taken by X). Two pairs constraining the same point along the same normal are one row.
    for (size_t i = first; i < last; ++i) {
        const PotentialContact& c = in.potential[i];
        if (used[i - first] || c.type == PairType::EdgeEdge || vertexSide(c) >= 0) continue;
        single.push_back((int)i);
    }
    std::sort(single.begin(), single.end());
    const Real tol = Real(1e-5);
    for (size_t k = 0; k < single.size(); ++k) {
        const PotentialContact& c = in.potential[single[k]];
        bool dup = false;
        for (size_t j = 0; j < k && !dup; ++j) {
            const PotentialContact& o = in.potential[single[j]];
            dup = lengthSq(o.pointA - c.pointA) < tol * tol && dot(o.normal, c.normal) > Real(0.9999);
        }
        if (!dup) addConstraint(in, rows, single[k], nullptr, 0);
    }
}

}  // namespace

// Polytope pairs within the margin (broad phase) for which the narrow phase listed no feature
// pair: two tips passing each other can overlap with none listed (addVertexVertexConstraints).
// The broad phase is run again here (AABBs and sweep and prune, cheap next to the solve) with
// the world's filter: active bodies, no jointed pairs.
static void addUnlistedVertexVertex(const ContactStageInput& in, ConstraintRows& rows) {
    const Model& model = in.model;
    thread_local std::vector<uint8_t> active;
    thread_local std::vector<Aabb> aabbs;
    thread_local std::vector<ShapePair> pairs, listed;
    const int nb = model.bodyCount();
    active.resize(nb);
    for (int b = 0; b < nb; ++b) active[b] = in.state.time + Real(1e-9) >= model.bodySpawnTime[b] ? 1 : 0;
    computeContactAabbs(model, in.state, narrowPhaseSettings(in.settings, in.h), aabbs);
    findPairs(model, aabbs, active.data(), pairs);
    listed.clear();
    for (const PotentialContact& c : in.potential) {
        listed.push_back(ShapePair{std::min(c.shapeA, c.shapeB), std::max(c.shapeA, c.shapeB)});
    }
    std::sort(listed.begin(), listed.end());
    listed.erase(std::unique(listed.begin(), listed.end()), listed.end());
    thread_local WorldPolytope wa, wb;
    for (const ShapePair& sp : pairs) {
        if (model.shapeType[sp.shapeA] != ShapeType::Polytope || model.shapeType[sp.shapeB] != ShapeType::Polytope)
            continue;
        const ShapePair key{std::min(sp.shapeA, sp.shapeB), std::max(sp.shapeA, sp.shapeB)};
        if (std::binary_search(listed.begin(), listed.end(), key)) continue;
        const int ba = model.shapeBody[sp.shapeA], bb = model.shapeBody[sp.shapeB];
        bool jointed = false;
        for (const Joint& j : model.joints)
            jointed = jointed || (j.bodyA == ba && j.bodyB == bb) || (j.bodyA == bb && j.bodyB == ba);
        if (jointed) continue;
        wa.assign(model.polytopes[model.shapePolytope[sp.shapeA]], shapeWorldTransform(model, in.state, sp.shapeA));
        wb.assign(model.polytopes[model.shapePolytope[sp.shapeB]], shapeWorldTransform(model, in.state, sp.shapeB));
        PotentialContact c0{};
        c0.shapeA = sp.shapeA; c0.shapeB = sp.shapeB; c0.bodyA = ba; c0.bodyB = bb;
        addVertexVertexConstraints(in, rows, wa.view(), wb.view(), c0, 0, 0, synthetic(in).size());
    }
}

void buildPegRows(const ContactStageInput& in, ConstraintRows& rows) {
    const std::vector<PotentialContact>& pc = in.potential;
    synthetic(in).clear();
    if (in.settings.solver.peg.vertexVertex) addUnlistedVertexVertex(in, rows);
    for (size_t first = 0; first < pc.size();) {
        size_t last = first + 1;
        while (last < pc.size() && pc[last].shapeA == pc[first].shapeA && pc[last].shapeB == pc[first].shapeB) ++last;
        const bool polytopes = in.model.shapeType[pc[first].shapeA] == ShapeType::Polytope &&
                               in.model.shapeType[pc[first].shapeB] == ShapeType::Polytope;
        if (polytopes) {
            buildPolytopePair(in, rows, first, last);
        } else {
            for (size_t i = first; i < last; ++i) addConstraint(in, rows, (int)i, nullptr, 0);
        }
        first = last;
    }
}

void storePegResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                     std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    contacts.clear();
    warm.clear();
    const Real h = in.h, trapTol = in.settings.solver.peg.trapTolerance;
    const Spatial* u = bodies.velocity.data();
    auto endGap = [&](int bodyA, const Spatial& ja, int bodyB, const Spatial& jb, Real bias) {
        Real v = 0;
        if (bodyA >= 0) v += dot(ja, u[bodyA]);
        if (bodyB >= 0) v += dot(jb, u[bodyB]);
        return bias + h * v;
    };
    int group = 0;
    for (int i = 0; i < rows.size(); ++i) {
        const bool isGroup = rows.kind[i] == int(RowKind::Group);
        if ((rows.kind[i] != int(RowKind::Normal) && !isGroup) || rows.owner[i] < 0) continue;
        const PotentialContact& g = contactAt(in, rows.owner[i]);
        Contact c = contactFromRows(g, rows, i, u);
        c.pegGroup = group++;
        c.pegPrimary = true;
        c.pegKind = 'U';
        if (isGroup) {
            // The group's separation is its largest gap; an SM trap is a member whose own
            // (half-space) gap is negative at the end of the step while the largest is not.
            Real startMax = g.gap;
            Real endMax = endGap(rows.bodyA[i], rows.jacobianA[i], rows.bodyB[i], rows.jacobianB[i], rows.bias[i]);
            Real endMin = endMax;
            for (int m = rows.gapFirst[i]; m < rows.gapFirst[i] + rows.gapCount[i]; ++m) {
                startMax = std::fmax(startMax, contactAt(in, rows.gapOwner[m]).gap);
                Real e = endGap(rows.gapBodyA[m], rows.gapJacobianA[m], rows.gapBodyB[m], rows.gapJacobianB[m],
                                rows.gapBias[m]);
                endMax = std::fmax(endMax, e);
                endMin = std::fmin(endMin, e);
            }
            c.pegKind = g.type == PairType::EdgeEdge ? 'X' : 'I';
            c.pegTrap = endMin < -trapTol && endMax >= -trapTol;
            c.geometry.gap = startMax;
            contacts.push_back(c);
            for (int m = rows.gapFirst[i]; m < rows.gapFirst[i] + rows.gapCount[i]; ++m) {
                Contact s = c;
                s.geometry = contactAt(in, rows.gapOwner[m]);
                s.geometry.gap = startMax;
                s.normalImpulse = 0;
                s.tangentImpulse[0] = s.tangentImpulse[1] = 0;
                s.sliding = false;
                s.pegPrimary = false;
                tangentBasis(s.geometry.normal, s.tangent[0], s.tangent[1]);
                contacts.push_back(s);
            }
        } else {
            contacts.push_back(c);
        }
        warm.push_back(WarmImpulse{keyOf(g), c.normalImpulse,
                                   c.tangentImpulse[0] * c.tangent[0] + c.tangentImpulse[1] * c.tangent[1]});
    }
    std::sort(warm.begin(), warm.end(), [](const WarmImpulse& a, const WarmImpulse& b) { return a.key < b.key; });
}

PegGroupCounts countPegGroups(const std::vector<Contact>& contacts) {
    PegGroupCounts n;
    for (const Contact& c : contacts) {
        if (c.pegGroup < 0) continue;
        n.featurePairs++;
        if (!c.pegPrimary) continue;
        if (c.pegKind == 'U') n.unilateral++;
        if (c.pegKind == 'I') n.inter++;
        if (c.pegKind == 'X') n.cross++;
        if (c.pegTrap) n.traps++;
    }
    return n;
}

}  // namespace cs
