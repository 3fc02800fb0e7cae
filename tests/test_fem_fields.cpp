// Strain fields of the colour map (strain_fields_hd.h) against closed forms and a finite-difference
// stress of the energy, and the surface the renderer draws (fem_surface.h) of hand-deformed bodies
// (fem_deform.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/fem/fem_builder.h"
#include "engine/fem/fem_deform.h"
#include "engine/fem/fem_surface.h"
#include "engine/world.h"

using namespace cs;

namespace {

const FemMaterial kLinear = femMaterial(FemMaterialType::CorotatedLinear, Real(1e5), Real(0.45));
const FemMaterial kNeo = femMaterial(FemMaterialType::StableNeoHookean, Real(1e5), Real(0.45));

Mat3 someRotation() { return toMat3(normalize(Quat{Real(0.8), Real(0.3), Real(-0.4), Real(0.2)})); }

// Cauchy stress from P = dPsi/dF by central differences of the energy density, then von Mises
// from its deviator: sqrt(3/2 s:s), s = sigma - tr(sigma)/3 I.
Real vonMisesByDifferences(const FemMaterial& m, const Mat3& F) {
    Mat3 P = mat3Zero();
    const Real eps = Real(1e-6);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            Mat3 a = F, b = F;
            a.m[i][j] += eps;
            b.m[i][j] -= eps;
            P.m[i][j] = (femEnergyDensity(m, a) - femEnergyDensity(m, b)) / (2 * eps);
        }
    const Mat3 sigma = Real(1) / determinant(F) * (P * transpose(F));
    Mat3 s = sigma;
    const Real mean = trace(sigma) / 3;
    for (int i = 0; i < 3; ++i) s.m[i][i] -= mean;
    return std::sqrt(Real(1.5) * frobenius(s, s));
}

}  // namespace

TEST_CASE("fem fields: uniform uniaxial stretch against the closed forms, under any rotation") {
    for (Real a : {Real(0.7), Real(1.2), Real(2.0)}) {
        const Mat3 F = someRotation() * mat3Diag({a, 1, 1});
        CHECK(volumetricStrain(F) == doctest::Approx(a - 1).epsilon(1e-9));
        CHECK(maxPrincipalStretch(F) == doctest::Approx(std::max(a, Real(1))).epsilon(1e-9));
        // Corotated: p = (2 mu + lambda)(a - 1) along the stretch, lambda (a - 1) across;
        // Cauchy sigma_1 = p_1 a / J = p_1, sigma_2 = p_2 / a.
        const Real s1 = (2 * kLinear.mu + kLinear.lambda) * (a - 1), s2 = kLinear.lambda * (a - 1) / a;
        CHECK(vonMisesStress(kLinear, F) == doctest::Approx(std::fabs(s1 - s2)).epsilon(1e-9));
    }
}

TEST_CASE("fem fields: pure dilation has no von Mises stress; small shear gives sqrt(3) mu gamma") {
    for (const FemMaterial& m : {kLinear, kNeo}) {
        const Mat3 F = mat3Diag({Real(1.1), Real(1.1), Real(1.1)});
        CHECK(std::fabs(vonMisesStress(m, F)) < 1e-6 * m.mu);
        CHECK(volumetricStrain(F) == doctest::Approx(1.331 - 1).epsilon(1e-9));
        const Real gamma = Real(1e-3);
        Mat3 shear = mat3Identity();
        shear.m[0][1] = gamma;   // simple shear: linear elasticity's tau = mu gamma, von Mises sqrt(3) tau
        CHECK(vonMisesStress(m, shear) == doctest::Approx(std::sqrt(Real(3)) * m.mu * gamma).epsilon(2e-3));
    }
}

TEST_CASE("fem fields: von Mises of both materials matches the stress of the energy by differences") {
    const Mat3 Fs[] = {mat3Diag({Real(1.3), Real(0.9), Real(0.8)}),
                       someRotation() * Mat3{{{Real(1.1), Real(0.2), 0}, {0, Real(0.9), Real(0.1)}, {Real(0.05), 0, Real(1.2)}}},
                       Mat3{{{Real(0.7), Real(-0.3), Real(0.1)}, {Real(0.2), Real(1.4), 0}, {0, Real(0.1), Real(1.0)}}}};
    for (const FemMaterial& m : {kLinear, kNeo})
        for (const Mat3& F : Fs) CHECK(vonMisesStress(m, F) == doctest::Approx(vonMisesByDifferences(m, F)).epsilon(1e-5));
}

TEST_CASE("fem surface: a hand-stretched box shows the closed-form field in every tet, smooth normals, a legend range") {
    Model model;
    FemBodyDesc d;
    d.name = "bar";
    d.mesh = makeBoxTetMesh({Real(0.5), Real(0.1), Real(0.1)}, 5);
    d.youngs = Real(1e5);
    d.poisson = Real(0.45);
    std::string error;
    REQUIRE(addFemBody(model, d, &error) == 0);
    World world(model);
    std::vector<Vec3> x;
    REQUIRE(deformFemBodies(model, "stretch:1.5", x, &error));
    world.state().femPos = x;
    // stretch:a is F = diag(a, a^-1/4, a^-1/4) in every tet: J - 1 = a^(1/2) - 1.
    for (Real v : femTetFieldValues(model, x, FemField::VolumetricStrain)) CHECK(v == doctest::Approx(std::sqrt(1.5) - 1));
    for (Real v : femTetFieldValues(model, x, FemField::MaxStretch)) CHECK(v == doctest::Approx(1.5));

    const std::vector<int> triTets = femBoundaryTriangleTets(model);
    for (int t : triTets) CHECK(t >= 0);
    FemSurfaceStyle style;
    style.colorByField = true;
    std::vector<FemSurfaceVertex> vertices;
    const FemFieldRange r = buildFemSurface(model, world.state(), style, triTets, vertices);
    REQUIRE(vertices.size() == 3 * model.femTris.size());
    CHECK(r.seenMin == doctest::Approx(std::sqrt(1.5) - 1).epsilon(1e-5));
    CHECK(r.hi == doctest::Approx(r.seenMax).epsilon(1e-5));   // symmetric auto range about 0
    CHECK(r.lo == doctest::Approx(-r.seenMax).epsilon(1e-5));
    // Every tet has the same value: one colour, the top of the range.
    const Color3 top = femFieldColor(1, true);
    for (const FemSurfaceVertex& v : vertices) CHECK(v.color[0] == doctest::Approx(top.r).epsilon(1e-4));
    // A node in the middle of the top face has the face's normal; a corner the mean of three.
    const std::vector<Vec3> n = femBoundaryNormals(model, x);
    for (int i = 0; i < model.femNodeCount(); ++i) {
        const Vec3 p = model.femRestPos[i];
        if (std::fabs(p.z - 0.1) < 1e-9 && std::fabs(p.x) < 0.3 && std::fabs(p.y) < 0.05) CHECK(n[i].z == doctest::Approx(1));
        if (std::fabs(p.z) < 1e-9 && std::fabs(p.y) < 1e-9 && std::fabs(p.x) < 0.3) CHECK(length(n[i]) == 0);   // interior
    }
    // An inverted tet (a corner node pushed through the body) is magenta and out of the range.
    int corner = 0;
    for (int i = 0; i < model.femNodeCount(); ++i)
        if (model.femRestPos[i].x < -0.49 && model.femRestPos[i].y < -0.09 && model.femRestPos[i].z < -0.09) corner = i;
    world.state().femPos[corner] = Vec3{Real(-0.3), Real(0.2), Real(0.2)};
    style.field = FemField::VonMises;
    const FemFieldRange inverted = buildFemSurface(model, world.state(), style, triTets, vertices);
    CHECK(inverted.inverted > 0);
    CHECK(inverted.seenMax < 10 * d.youngs);   // not the 1e10 Pa of a tet divided by its det F ~ 0
    int magenta = 0;
    for (const FemSurfaceVertex& v : vertices) magenta += v.color[0] == 1.f && v.color[1] == 0.f && v.color[2] == 1.f;
    CHECK(magenta > 0);
    world.state().femPos = x;
    // Not coloured: the body's colour.
    style.colorByField = false;
    buildFemSurface(model, world.state(), style, triTets, vertices);
    CHECK(vertices[0].color[0] == doctest::Approx(d.color.r));
}

TEST_CASE("fem surface: a hand-bent beam's volumetric strain falls linearly with the height, -h k / L") {
    Model model;
    FemBodyDesc d;
    d.mesh = makeBeamTetMesh(1, Real(0.05), Real(0.05), 40, 4);
    std::string error;
    REQUIRE(addFemBody(model, d, &error) == 0);
    std::vector<Vec3> x;
    const Real k = Real(0.5);   // R = L / k = 2 m
    REQUIRE(deformFemBodies(model, "bend:0.5", x, &error));
    const std::vector<Real> j = femTetFieldValues(model, x, FemField::VolumetricStrain);
    // A linear tet takes one F for its four nodes, so single tets of a cell differ; over a layer
    // of cells (4 through the height, 2.5 cm each) the mean is the value at the layer's middle.
    Real sum[4] = {0, 0, 0, 0}, volume[4] = {0, 0, 0, 0};
    for (int t = 0; t < model.femTetCount(); ++t) {
        Real h = 0;
        for (int c = 0; c < 4; ++c) h += model.femRestPos[model.femTets[t][c]].z / 4;
        const int layer = std::min(3, int((h + Real(0.05)) / Real(0.025)));
        sum[layer] += j[t] * model.femTetRest[t].volume;
        volume[layer] += model.femTetRest[t].volume;
    }
    for (int layer = 0; layer < 4; ++layer) {
        const Real h = Real(-0.05) + Real(0.025) * (layer + Real(0.5));
        CHECK(sum[layer] / volume[layer] == doctest::Approx(-h * k / 1).epsilon(0.01));
    }
    CHECK_FALSE(deformFemBodies(model, "bend", x, &error));
    CHECK(error.find("--fem-deform") != std::string::npos);
}

TEST_CASE("fem surface: the auto range spans the 2nd to 98th percentiles, not the few hottest tets") {
    Model model;
    FemBodyDesc d;
    d.mesh = makeBeamTetMesh(1, Real(0.05), Real(0.05), 40, 4);
    d.youngs = Real(1e5);
    d.poisson = Real(0.45);
    std::string error;
    REQUIRE(addFemBody(model, d, &error) == 0);
    World world(model);
    std::vector<Vec3> x;
    REQUIRE(deformFemBodies(model, "stretch:1.2", x, &error));
    // One corner node pulled 2 cm outwards: the few tets on it are far hotter than the rest, as
    // the tets under a node contact are in a squeezed ball.
    int corner = 0;
    for (int i = 0; i < model.femNodeCount(); ++i) {
        const Vec3 p = model.femRestPos[i], q = model.femRestPos[corner];
        if (p.x + p.y + p.z > q.x + q.y + q.z) corner = i;
    }
    x[corner] += Vec3{Real(0.02), Real(0.02), Real(0.02)};
    world.state().femPos = x;
    std::vector<Real> vm = femTetFieldValues(model, x, FemField::VonMises);
    const int n = int(vm.size());
    std::vector<Real> sorted = vm;
    std::sort(sorted.begin(), sorted.end());
    const Real bulk = sorted[n / 2];   // every other tet: the uniform stretch's stress
    const int hot = int(std::count_if(vm.begin(), vm.end(), [&](Real v) { return v > Real(1.05) * bulk; }));
    INFO("von Mises: bulk " << bulk << " Pa, hottest " << sorted.back() << " Pa, " << hot << " hot tets of " << n);
    REQUIRE(hot > 0);
    REQUIRE(hot < n / 50);

    const std::vector<int> triTets = femBoundaryTriangleTets(model);
    FemSurfaceStyle style;
    style.colorByField = true;
    style.field = FemField::VonMises;
    std::vector<FemSurfaceVertex> vertices;
    const FemFieldRange r = buildFemSurface(model, world.state(), style, triTets, vertices);
    CHECK(r.seenMax == doctest::Approx(sorted.back()).epsilon(1e-5));   // the legend still gives the extremes
    CHECK(r.seenMax > 2 * bulk);
    CHECK(r.lo == 0);
    CHECK(r.hi == doctest::Approx(bulk).epsilon(1e-3));   // the old maximum range drew the bulk at < half of it
    // The strain fields: symmetric about the rest value over the same percentiles.
    style.field = FemField::VolumetricStrain;
    const FemFieldRange j = buildFemSurface(model, world.state(), style, triTets, vertices);
    CHECK(j.hi == doctest::Approx(std::sqrt(1.2) - 1).epsilon(1e-3));
    CHECK(j.lo == doctest::Approx(-j.hi));
}
