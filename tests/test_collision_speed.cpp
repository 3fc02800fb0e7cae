// The narrow phase's shortcuts (issue 20) give the same contacts as the plain loops:
// the edge filter of edgeEdgePass (edgesBeyond) and collidePairs' per-shape world frame.
#include <doctest/doctest.h>

#include <random>

#include "engine/collision/narrow_phase.h"
#include "engine/collision/shape_pair_hd.h"
#include "engine/collision/world_polytope.h"
#include "engine/geometry/polytope.h"

using namespace cs;

namespace {

bool sameVec(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

bool sameContact(const PotentialContact& a, const PotentialContact& b) {
    return a.shapeA == b.shapeA && a.shapeB == b.shapeB && a.bodyA == b.bodyA && a.bodyB == b.bodyB &&
           a.featureA == b.featureA && a.featureB == b.featureB && a.type == b.type &&
           sameVec(a.pointA, b.pointA) && sameVec(a.pointB, b.pointB) && sameVec(a.normal, b.normal) &&
           a.gap == b.gap;
}

// The edge-edge pass with no filter: every (i, j), the floor taken at the first candidate.
std::vector<PotentialContact> edgePairsPlain(const PolytopeView& A, const PolytopeView& B,
                                             const NarrowPhaseSettings& s) {
    std::vector<PotentialContact> out;
    Real floor = -kHuge;
    bool haveFloor = false;
    PotentialContact c;
    for (int i = 0; i < A.edgeCount; ++i)
        for (int j = 0; j < B.edgeCount; ++j) {
            if (!edgeEdgeContact(A, i, B, j, s, c)) continue;
            if (!haveFloor) {
                floor = std::max(faceSeparation(B, A), faceSeparation(A, B)) - s.faceWindow;
                haveFloor = true;
            }
            if (c.gap >= floor) out.push_back(c);
        }
    return out;
}

// Passes 3 and 4 with no vertex filter, after pass 1 both ways (their coverage tests read it).
std::vector<PotentialContact> vertexPairsPlain(const PolytopeView& A, const PolytopeView& B,
                                               const NarrowPhaseSettings& s) {
    std::vector<PotentialContact> buffer(512);
    ContactSink sink{buffer.data(), (int)buffer.size(), 0};
    vertexFacePass(A, B, true, s, sink);
    vertexFacePass(B, A, false, s, sink);
    PotentialContact c;
    for (int side = 0; side < 2; ++side) {
        const PolytopeView& P = side == 0 ? A : B;
        const PolytopeView& Q = side == 0 ? B : A;
        const bool isA = side == 0;
        for (int v = 0; v < P.vertexCount; ++v) {
            const uint32_t fv = makeFeatureId(FeatureKind::Vertex, v);
            for (int j = 0; j < Q.edgeCount; ++j) {
                if (!vertexEdgeContact(P, v, Q, j, isA, s, c)) continue;
                const uint32_t f0 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[0]);
                const uint32_t f1 = makeFeatureId(FeatureKind::Face, Q.edges[j].face[1]);
                if (!(isA ? sink.has(fv, f0) || sink.has(fv, f1) : sink.has(f0, fv) || sink.has(f1, fv))) sink.push(c);
            }
        }
    }
    for (int v = 0; v < A.vertexCount; ++v)
        for (int u = 0; u < B.vertexCount; ++u)
            if (vertexVertexContact(A, v, B, u, s, c) && !vertexCovered(B, u, c.featureA, true, sink) &&
                !vertexCovered(A, v, c.featureB, false, sink))
                sink.push(c);
    buffer.resize(sink.count);
    return buffer;
}

Quat randomRotation(std::mt19937& rng) {
    std::uniform_real_distribution<double> U(-1, 1);
    return normalize(Quat{Real(U(rng)), Real(U(rng)), Real(U(rng)), Real(U(rng))});
}

}  // namespace

TEST_CASE("narrow phase: the edge and vertex filters skip only features with no pair, on random hulls and boxes") {
    NarrowPhaseSettings st;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> U(-1, 1), depth(-0.2, 0.1);
    int withEdgePairs = 0, skippedSome = 0, vertexPairs = 0;
    for (int trial = 0; trial < 300; ++trial) {
        ConvexPolytope a, b;
        if (trial % 2) {
            REQUIRE(makeRandomPolytope(700 + trial, 12, {0.5, 0.4, 0.3}, a).ok);
            REQUIRE(makeRandomPolytope(900 + trial, 16, {0.4, 0.5, 0.35}, b).ok);
        } else {
            a = makeBox({0.5, 0.5, 0.5});
            b = makeBox({0.5, 0.5, 0.5});
        }
        // B at the origin, A along a random direction at a random depth or clearance around
        // the contact distance of the two bounding extents (overlapping, touching, just apart).
        const Quat qa = trial % 4 == 0 ? quatIdentity() : randomRotation(rng);
        const Quat qb = trial % 4 == 0 ? quatIdentity() : randomRotation(rng);
        const Vec3 dir = normalize(Vec3{Real(U(rng)), Real(U(rng)), Real(U(rng))});
        WorldPolytope wb;
        wb.assign(b, Transform{{0, 0, 0}, qb});
        Real lo = 0, hi = 4;   // bisect to the offset where the face-axis separation is the chosen one
        const Real target = Real(depth(rng));
        WorldPolytope wa;
        for (int it = 0; it < 40; ++it) {
            const Real mid = Real(0.5) * (lo + hi);
            wa.assign(a, Transform{mid * dir, qa});
            const Real sep = std::max(faceSeparation(wa.view(), wb.view()), faceSeparation(wb.view(), wa.view()));
            (sep < target ? lo : hi) = mid;
        }
        wa.assign(a, Transform{hi * dir, qa});
        if (trial % 3 == 2) {   // A's support vertex just outside an edge (or a vertex) of B
            const PolytopeView Bv = wb.view();
            const int j = trial % Bv.edgeCount;
            const PolytopeEdge& e = Bv.edges[j];
            const bool atVertex = trial % 2 == 1;
            const Vec3 at = atVertex ? Bv.vertices[e.head] : Real(0.5) * (Bv.vertices[e.head] + Bv.vertices[e.tail]);
            const Vec3 m = atVertex ? normalize(at - Bv.centroid)
                                    : normalize(Bv.faces[e.face[0]].normal + Bv.faces[e.face[1]].normal);
            wa.assign(a, Transform{{0, 0, 0}, qa});
            int v = 0;
            for (int k = 1; k < (int)wa.vertices.size(); ++k)
                if (dot(wa.vertices[k], m) < dot(wa.vertices[v], m)) v = k;
            const Real d = Real(0.001) + Real(0.015) * Real(0.5 + 0.5 * U(rng));
            wa.assign(a, Transform{at + d * m - wa.vertices[v], qa});
        }
        const PolytopeView A = wa.view(), B = wb.view();
        const std::vector<PotentialContact> plain = edgePairsPlain(A, B, st);
        std::vector<PotentialContact> buffer(512);
        ContactSink sink{buffer.data(), (int)buffer.size(), 0};
        edgeEdgePass(A, B, st, sink);
        REQUIRE(sink.count == (int)plain.size());
        bool same = true;
        for (int k = 0; k < sink.count; ++k) same = same && sameContact(buffer[k], plain[k]);
        CHECK(same);
        withEdgePairs += plain.empty() ? 0 : 1;
        // Passes 3 and 4 with their vertex filter against the plain loops.
        const std::vector<PotentialContact> plainVertex = vertexPairsPlain(A, B, st);
        ContactSink vsink{buffer.data(), (int)buffer.size(), 0};
        vertexFacePass(A, B, true, st, vsink);
        vertexFacePass(B, A, false, st, vsink);
        vertexEdgePass(A, B, true, st, vsink);
        vertexEdgePass(B, A, false, st, vsink);
        vertexVertexPass(A, B, st, vsink);
        REQUIRE(vsink.count == (int)plainVertex.size());
        bool sameVertex = true;
        for (int k = 0; k < vsink.count; ++k) sameVertex = sameVertex && sameContact(buffer[k], plainVertex[k]);
        CHECK(sameVertex);
        for (const PotentialContact& k : plainVertex) vertexPairs += k.type == PairType::VertexEdge || k.type == PairType::VertexVertex;
        const Real reach = std::max(st.margin, st.maxEdgeDepth) * Real(1.000001);
        skippedSome += (edgesBeyond(A, B, reach) | edgesBeyond(B, A, reach)) != 0 ? 1 : 0;
    }
    CHECK(withEdgePairs > 30);    // the cases exercise edge pairs ...
    CHECK(skippedSome > 100);     // ... and the filter
    CHECK(vertexPairs > 10);      // vertex-edge and vertex-vertex pairs were compared too
}

TEST_CASE("narrow phase: collidePairs over the per-shape world frame equals collideShapes pair by pair") {
    // Boxes in a 4 x 4 x 3 lattice 1 mm apart, tilted a little, with a sphere part on some: every
    // neighbour pair is within the margin. A second call after moving one body must see the move
    // (the world frame is rebuilt each call).
    Model m;
    State st;
    m.polytopes.push_back(makeBox({0.5, 0.5, 0.5}));
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> tilt(-0.02, 0.02);
    for (int i = 0; i < 48; ++i) {
        const int b = m.bodyCount();
        m.bodyName.push_back("b" + std::to_string(b));
        m.invMass.push_back(1);
        m.mass.push_back(1);
        m.bodyFirstShape.push_back(m.shapeCount());
        m.bodyShapeCount.push_back(i % 5 == 0 ? 2 : 1);
        st.pos.push_back(Vec3{Real(i % 4) * Real(1.001), Real((i / 4) % 4) * Real(1.001), Real(i / 16) * Real(1.001)});
        st.rot.push_back(normalize(Quat{1, Real(tilt(rng)), Real(tilt(rng)), Real(tilt(rng))}));
        st.linVel.push_back({0, 0, 0});
        st.angVel.push_back({0, 0, 0});
        m.shapeType.push_back(ShapeType::Polytope);
        m.shapeBody.push_back(b);
        m.shapeLocal.push_back(Transform{{0, 0, 0}, quatIdentity()});
        m.shapePolytope.push_back(0);
        m.shapeRadius.push_back(m.polytopes[0].boundingRadius);
        if (i % 5 == 0) {
            m.shapeType.push_back(ShapeType::Sphere);
            m.shapeBody.push_back(b);
            m.shapeLocal.push_back(Transform{{0.3, 0.3, 0.3}, quatIdentity()});
            m.shapePolytope.push_back(-1);
            m.shapeRadius.push_back(Real(0.25));
        }
    }
    NarrowPhaseSettings s;
    auto compare = [&](int& count) {
        std::vector<Aabb> boxes;
        computeContactAabbs(m, st, s, boxes);
        std::vector<ShapePair> pairs;
        findPairs(m, boxes, nullptr, pairs);
        std::vector<PotentialContact> batch, single;
        collidePairs(m, st, pairs, s, batch);
        for (const ShapePair& p : pairs) collideShapes(m, st, p.shapeA, p.shapeB, s, single);
        count = (int)batch.size();
        REQUIRE(batch.size() == single.size());
        bool same = true;
        for (size_t k = 0; k < batch.size(); ++k) same = same && sameContact(batch[k], single[k]);
        CHECK(same);
        return batch;
    };
    int before = 0, after = 0;
    const std::vector<PotentialContact> first = compare(before);
    CHECK(before > 500);
    st.pos[5] += Vec3{0, 0, Real(0.3)};   // lift a middle box: its contacts change
    const std::vector<PotentialContact> second = compare(after);
    bool changed = first.size() != second.size();
    for (size_t k = 0; k < first.size() && !changed; ++k) changed = !sameContact(first[k], second[k]);
    CHECK(changed);
}
