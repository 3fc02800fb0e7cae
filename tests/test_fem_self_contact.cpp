// Self contact of one deformable body (fem_contact.h): a soft C-shaped clamp whose lower jaw is
// pinned and whose upper jaw droops under its weight onto the lower jaw. The lower jaw does not
// move, so its deformed shape is its rest box and the signed distance of a node to it is the
// closed-form distance to a box: the measure of how far the upper jaw passed into the body.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "engine/exec/pipeline_world.h"
#include "tests/fem_test_util.h"

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
