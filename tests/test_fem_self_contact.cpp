// Self contact of one deformable body (fem_contact.h): a soft C-shaped clamp whose lower jaw is
// pinned and whose upper jaw droops under its weight onto the lower jaw. The lower jaw does not
// move, so its deformed shape is its rest box and the signed distance of a node to it is the
// closed-form distance to a box: the measure of how far the upper jaw passed into the body.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "engine/exec/pipeline_world.h"
#include "engine/fem/fem_contact.h"
#include "engine/fem/fem_contact_hd.h"
#include "tests/fem_test_util.h"
#include "tests/scene_util.h"

using namespace cs;
using namespace cs::femtest;

namespace {

// The jaws and the slot, mesh frame (m): 0.30 x 0.02 x 0.07 in 1 cm cubes; the slot is 2 cm high,
// open at +x, behind a 2 cm back column.
constexpr Real kBack = Real(-0.13);                           // back column's inner face, x
constexpr Real kSlotLo = Real(-0.005), kSlotHi = Real(0.015);   // slot, z
const Vec3 kLowerLo{Real(-0.15), Real(-0.01), Real(-0.035)}, kLowerHi{Real(0.15), Real(0.01), kSlotLo};

TetMesh clampMesh() {
    const TetMesh box = makeBoxTetMesh({Real(0.15), Real(0.01), Real(0.035)}, 30);
    TetMesh out;
    std::vector<int> index(box.nodes.size(), -1);
    for (const auto& tet : box.tets) {
        Vec3 c{0, 0, 0};
        for (int v : tet) c = c + Real(0.25) * box.nodes[v];
        if (c.x > kBack && c.z > kSlotLo && c.z < kSlotHi) continue;
        std::array<int, 4> t;
        for (int k = 0; k < 4; ++k) {
            int& i = index[tet[k]];
            if (i < 0) {
                i = (int)out.nodes.size();
                out.nodes.push_back(box.nodes[tet[k]]);
            }
            t[k] = i;
        }
        out.tets.push_back(t);
    }
    return out;
}

// Signed distance of p to the box [lo, hi] (negative inside).
Real boxDistance(Vec3 p, Vec3 lo, Vec3 hi) {
    Real outside = 0, inside = -1e30;
    for (int k = 0; k < 3; ++k) {
        const Real q = std::fmax(lo[k] - p[k], p[k] - hi[k]);
        outside += q > 0 ? q * q : 0;
        inside = std::fmax(inside, q);
    }
    return outside > 0 ? std::sqrt(outside) : inside;
}

struct FoldRun {
    Real deepest = 1e30;   // least signed distance of an upper-jaw boundary node to the lower jaw, m
    Real tipZ = 0;         // lowest upper-jaw node at the end, m
    int selfContacts = 0;  // contacts of a node with a triangle, at the end
    double msPerStep = 0;
};

FoldRun runFold(bool selfContact, int steps) {
    Model model;
    FemBodyDesc d;
    d.name = "clamp";
    d.mesh = clampMesh();
    d.youngs = Real(1e5);
    d.poisson = Real(0.3);
    d.type = FemMaterialType::StableNeoHookean;
    d.damping = Real(0.01);
    d.selfContact = selfContact;
    for (int i = 0; i < (int)d.mesh.nodes.size(); ++i)
        if (d.mesh.nodes[i].x < kBack + Real(1e-9) || d.mesh.nodes[i].z < kSlotLo + Real(1e-9)) d.pinned.push_back(i);
    addFem(model, d);
    WorldSettings s;
    World world(model, s);
    std::string why;
    CHECK_MESSAGE(pipelineSupports(world, &why), why);   // self contact runs on the pipeline too
    std::vector<int> upper;
    for (const auto& tri : model.femTris)
        for (int v : tri)
            if (model.femRestPos[v].z > kSlotHi - Real(1e-9)) upper.push_back(v);
    FoldRun r;
    const auto start = std::chrono::steady_clock::now();
    for (int step = 0; step < steps; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
        for (int v : upper) r.deepest = std::fmin(r.deepest, boxDistance(world.state().femPos[v], kLowerLo, kLowerHi));
    }
    r.msPerStep = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / steps;
    r.tipZ = 1e30;
    for (int v : upper) r.tipZ = std::fmin(r.tipZ, world.state().femPos[v].z);
    for (const Contact& c : world.contacts()) r.selfContacts += c.femTri >= 0;
    return r;
}

}  // namespace

// The rest-shape exclusions keep a body at rest free of self contacts: the clamp with its upper
// jaw pinned too starts and stays with no node-triangle contact (no contact across a jaw's own
// thickness, none between neighbours).
TEST_CASE("fem self contact: no spurious contact of a body with itself at rest") {
    Model model;
    FemBodyDesc d;
    d.mesh = clampMesh();
    d.youngs = Real(1e5);
    d.selfContact = true;
    for (int i = 0; i < (int)d.mesh.nodes.size(); ++i) d.pinned.push_back(i);
    addFem(model, d);
    WorldSettings s;
    World world(model, s);
    world.step();
    int self = 0, zeroGap = 0;
    for (const Contact& c : world.contacts()) {
        self += c.femTri >= 0;
        zeroGap += c.femTri >= 0 && c.geometry.gap < Real(0.019);
    }
    MESSAGE(self << " self contacts at rest (across the 2 cm slot at most), " << zeroGap << " closer than 1.9 cm");
    CHECK(zeroGap == 0);
}

// The drooping upper jaw lands on the lower jaw with self contact on and falls through it with
// it off. Tolerance: 2 mm (a tenth of the slot); the lower jaw is 3 cm thick.
TEST_CASE("fem self contact: a drooping jaw lands on its own lower jaw instead of passing through" * doctest::test_suite("validate")) {
    const int steps = 120;   // 1 s
    const FoldRun on = runFold(true, steps), off = runFold(false, steps);
    MESSAGE("self contact on:  deepest signed distance " << on.deepest << " m, lowest upper-jaw node z " << on.tipZ
                                                        << " m, " << on.selfContacts << " self contacts, "
                                                        << on.msPerStep << " ms/step");
    MESSAGE("self contact off: deepest signed distance " << off.deepest << " m, lowest upper-jaw node z " << off.tipZ
                                                        << " m, " << off.selfContacts << " self contacts, "
                                                        << off.msPerStep << " ms/step");
    CHECK(on.selfContacts > 0);
    CHECK(on.deepest > Real(-0.002));
    CHECK(on.tipZ > kSlotLo - Real(0.002));
    CHECK(off.selfContacts == 0);
    CHECK(off.deepest < Real(-0.005));
    CHECK(off.tipZ < kLowerLo.z);
}

// The node-triangle rules of fem_contact_hd.h on closed-form geometry.
// A node straight over a vertex of a triangle belongs to it (weights (1, 0, 0): the closed
// triangle), over an edge to both triangles of the edge; a node beside the triangle's plane
// outside it does not (the projection's weights, not a clamped closest point's).
TEST_CASE("fem self contact: a node over a vertex or an edge finds its triangle, one beside it none") {
    const Vec3 a{0, 0, 0}, b{1, 0, 0}, c{0, 1, 0};
    FemTriangleContact q;
    REQUIRE(femNodeTriangleContact({0, 0, Real(0.01)}, a, b, c, Real(0.02), -1, q));
    CHECK(std::fabs(q.w[0] - 1) < 1e-12);
    CHECK(std::fabs(q.gap - Real(0.01)) < 1e-12);
    REQUIRE(femNodeTriangleContact({Real(0.5), Real(0.5), Real(-0.003)}, a, b, c, Real(0.02), -1, q));
    CHECK(std::fabs(q.w[0]) < 1e-12);
    CHECK(std::fabs(q.gap + Real(0.003)) < 1e-12);
    // Beside the triangle (projection outside by 1 mm): the closest point is on its edge, but the
    // node belongs to the neighbouring triangle, not to this one.
    CHECK_FALSE(femNodeTriangleContact({Real(-0.001), Real(0.5), Real(0.001)}, a, b, c, Real(0.02), -1, q));
    // Beyond the margin, and below the best gap so far.
    CHECK_FALSE(femNodeTriangleContact({Real(0.2), Real(0.2), Real(0.03)}, a, b, c, Real(0.02), -1, q));
    CHECK_FALSE(femNodeTriangleContact({Real(0.2), Real(0.2), Real(-0.01)}, a, b, c, Real(0.02), Real(-0.005), q));
}

// Angle-weighted normals: on a flat face the face's normal whatever the fan, on a cube's edge the
// bisector, at its corner the diagonal; and the facing rule's 120 degrees.
TEST_CASE("fem self contact: boundary node normals and the facing rule") {
    TetMesh cube = makeBoxTetMesh({Real(0.5), Real(0.5), Real(0.5)}, 2);
    Model model;
    FemBodyDesc d;
    d.mesh = cube;
    addFem(model, d);
    std::vector<int> start, tris, triNodes;
    femNodeTriangles(model, start, tris);
    for (const auto& t : model.femTris) triNodes.insert(triNodes.end(), t.begin(), t.end());
    int checked = 0;
    for (int n = 0; n < model.femNodeCount(); ++n) {
        if (start[n + 1] == start[n]) continue;   // interior node
        const Vec3 p = model.femRestPos[n];
        Vec3 expected{0, 0, 0};
        for (int k = 0; k < 3; ++k)
            if (std::fabs(std::fabs(p[k]) - Real(0.5)) < Real(1e-9)) expected[k] = p[k] > 0 ? 1 : -1;
        expected = normalize(expected);
        const Vec3 got = femNodeNormal(n, start.data(), tris.data(), triNodes.data(), model.femRestPos.data());
        CHECK(length(got - expected) < Real(1e-9));
        ++checked;
    }
    CHECK(checked == 26);   // 3 x 3 x 3 nodes, one inside
    const Vec3 up{0, 0, 1}, down{0, 0, -1}, side{0, 1, 0}, edge = normalize(Vec3{0, 1, 1}), corner = normalize(Vec3{1, 1, 1});
    CHECK(femFacing(up, down));        // the top of one jaw against the underside of the other
    CHECK(femFacing(edge, down));      // 135 degrees: a jaw's edge
    CHECK(femFacing(corner, down));    // 125 degrees: a box corner
    CHECK_FALSE(femFacing(up, side));  // along a side face
    CHECK_FALSE(femFacing(up, up));    // behind a face, on the far side of its part
}

// fem_fold (the library scene) at rest after 1.5 s: every step of the last 0.5 s ends with the
// Newton residual under 1e-3 m/s, no boundary node lies inside a tet of the clamp (interpenetration
// of any two parts of it), the ground's normal force on the clamp is the weight of the clamp and
// the box (at rest), the clamp's force on the box is the box's weight (it rests on the upper jaw),
// and the upper jaw's tip lies on the lower jaw's tip (not beside it). Before issue 35's fixes the
// residual was 25 m/s every step, the upper jaw slid off sideways and the mesh crumpled.
TEST_CASE("fem self contact: fem_fold comes to rest, converged, its jaws on each other" * doctest::test_suite("validate")) {
    test::LoadedScene scene = test::loadLibraryScene("fem_fold");
    World world(scene.model, scene.settings);
    const Model& m = world.model();
    const int steps = 180, tail = 60;
    Real worstTail = 0;
    for (int step = 0; step < steps; ++step) {
        world.step();
        REQUIRE_FALSE(world.lastStepFailed());
        if (step >= steps - tail) worstTail = std::fmax(worstTail, world.solveStats().residualFinal);
    }
    const std::vector<Vec3>& x = world.state().femPos;
    int inside = 0;
    std::vector<uint8_t> boundary(m.femNodeCount(), 0);
    for (const auto& t : m.femTris)
        for (int v : t) boundary[v] = 1;
    for (int n = 0; n < m.femNodeCount(); ++n) {
        if (!boundary[n]) continue;
        for (const auto& t : m.femTets) {
            if (t[0] == n || t[1] == n || t[2] == n || t[3] == n) continue;
            const Vec3 a = x[t[0]], b = x[t[1]], c = x[t[2]], d = x[t[3]], p = x[n];
            const Real v = dot(cross(b - a, c - a), d - a);
            const Real l0 = dot(cross(b - p, c - p), d - p) / v, l1 = dot(cross(p - a, c - a), d - a) / v;
            const Real l2 = dot(cross(b - a, p - a), d - a) / v, l3 = dot(cross(b - a, c - a), p - a) / v;
            if (std::fmin(std::fmin(l0, l1), std::fmin(l2, l3)) > Real(1e-3)) {
                ++inside;
                break;
            }
        }
    }
    const int box = 1;   // bodies: the ground, the box
    Real ground = 0, onBox = 0, clampMass = 0;
    for (const Contact& c : world.contacts()) {
        if (c.femNode < 0 || c.femTri >= 0) continue;
        if (c.geometry.bodyB == 0) ground += c.normalImpulse * c.geometry.normal.z;
        if (c.geometry.bodyB == box) onBox += c.normalImpulse * c.geometry.normal.z;
    }
    for (Real mass : m.femNodeMass) clampMass += mass;
    const Real g = length(scene.settings.gravity), h = scene.settings.dt;
    const Real boxMass = 1 / m.invMass[box];
    // The tip of the upper jaw's centre line (rest: x = 0.15, y = 0, z = 0.05 in the scene).
    Vec3 tip{0, 0, 0};
    for (int n = 0; n < m.femNodeCount(); ++n) {
        const Vec3 r = m.femRestPos[n];
        if (std::fabs(r.x - Real(0.15)) < 1e-6 && std::fabs(r.y) < 1e-6 && std::fabs(r.z - Real(0.05)) < 1e-6) tip = x[n];
    }
    MESSAGE("largest residual over the last " << tail << " steps " << worstTail << " m/s; " << inside
            << " boundary nodes inside a tet; ground force " << ground / h << " N against (clamp + box) g "
            << (clampMass + boxMass) * g << " N; force on the clamp from the box " << -onBox / h << " N against "
            << boxMass * g << " N; upper tip at " << tip.x << ", " << tip.y << ", " << tip.z << " m");
    CHECK(worstTail < Real(1e-3));
    CHECK(inside == 0);
    CHECK(near(ground / h, (clampMass + boxMass) * g, Real(0.01)));
    CHECK(near(-onBox / h, boxMass * g, Real(0.01)));
    CHECK(std::fabs(tip.y) < Real(0.005));
    CHECK(tip.z > Real(0.025));   // on the lower jaw (top at z = 0.03), not beside it on the ground
}
