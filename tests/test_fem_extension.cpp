// [NSN] figure 13 (engine/fem/fem_extension.h): a bar pulled to twice its length keeps its volume
// under stable neo-Hookean and loses it under the corotated linear material, each against the
// closed form of uniaxial stress.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/fem/fem_extension.h"

using namespace cs;

TEST_CASE("fem extension: figure 13's volume against stretch, both materials, against the closed forms") {
    FemExtensionOptions o;
    o.cells = 12;          // 288 tets
    o.seconds = 3;
    o.samples = 5;
    FemExtensionResult linear, neo;
    std::string error;
    REQUIRE(runFemExtension(FemMaterialType::CorotatedLinear, o, linear, &error));
    REQUIRE(runFemExtension(FemMaterialType::StableNeoHookean, o, neo, &error));
    REQUIRE(linear.samples.size() == 5);
    REQUIRE(neo.samples.size() == 5);
    const FemExtensionSample& l = linear.samples.back();
    const FemExtensionSample& n = neo.samples.back();
    MESSAGE("stretch " << l.stretch << ": linear keeps " << l.volumeMiddle << " (closed form " << l.closedForm
                       << "), neo-Hookean " << n.volumeMiddle << " (closed form " << n.closedForm << ")");
    CHECK(std::abs(l.stretch - 2) < 1e-9);
    CHECK(linear.failedSteps == 0);
    CHECK(neo.failedSteps == 0);
    // Closed forms at s = 2, nu = 0.45: linear (1 + e)(1 - nu e)^2 = 0.605, neo-Hookean alpha - C1/(D1 s) = 1.05.
    CHECK(std::abs(l.closedForm - 0.605) < 1e-12);
    CHECK(std::abs(n.closedForm - 1.05) < 1e-9);
    // Neo-Hookean within 1% of its closed form; the linear bar's middle stretches more than the
    // average (the pinned ends keep their cross-section), so it loses more than the closed form.
    CHECK(std::abs(n.volumeMiddle / n.closedForm - 1) < 0.01);
    CHECK(std::abs(l.volumeMiddle / l.closedForm - 1) < 0.1);
    CHECK(l.volumeMiddle < 0.65);
    CHECK(l.minStretch > 0);
    CHECK(n.minStretch > 0);
}
