// The material extension test of [NSN] figure 13 and section 10.3: a bar (Y = 1e5 Pa, nu = 0.45)
// pulled to twice its length, the corotated linear material beside stable neo-Hookean, volume
// against stretch. Used by `sandbox experiment fem-extension` and by the tests.
//
// The bar lies along x with its two end faces' nodes pinned; the right end's nodes are moved at a
// constant speed (quasi-static: the pull lasts many times the bar's lowest period) with gravity
// off. The volume ratio is measured over the middle third of the bar, where the end pins no
// longer hold the cross-section, and compared with the closed forms of uniaxial stress at stretch
// s = 1 + e (lateral faces free):
//   corotated linear: the rotated strain diag(e, -nu e, -nu e) makes the lateral stress vanish,
//                     so J = (1 + e)(1 - nu e)^2 (0.605 at s = 2, nu = 0.45: 40% lost);
//   stable neo-Hookean (fem_material_hd.h constants C1, D1, alpha): dPsi/ds_lateral = 0 gives
//                     C1 + D1 (J - alpha) s = 0, so J = alpha - C1 / (D1 s) (1.05 at s = 2).
#pragma once

#include <string>
#include <vector>

#include "engine/fem/fem_material_hd.h"

namespace cs {

struct FemExtensionOptions {
    Real length = 1, width = Real(0.1);   // m: bar length and square cross-section side
    int cells = 20;                        // cells along the length (makeBoxTetMesh)
    Real youngs = Real(1e5), poisson = Real(0.45), density = 1000;
    Real damping = Real(0.01);             // s: Rayleigh beta
    Real finalStretch = 2;
    Real seconds = 5;                      // duration of the pull
    Real dt = Real(1.0 / 120.0);
    int samples = 21;                      // rows of the result, evenly in stretch
};

struct FemExtensionSample {
    Real stretch;                 // measured end-to-end length / rest length
    Real volumeMiddle;            // V / V0 of the middle third
    Real volumeWhole;             // V / V0 of the whole bar
    Real closedForm;              // J of uniaxial stress at this stretch
    Real minStretch;              // smallest principal stretch of any element (inversion < 0)
    int newtonIterations;         // of the step that reached this sample
};

struct FemExtensionResult {
    std::vector<FemExtensionSample> samples;
    int failedSteps = 0;
    int tets = 0;
};

Real uniaxialVolumeRatio(const FemMaterial& material, Real poisson, Real stretch);

// Runs the pull for one material; false with *error on a failed setup.
bool runFemExtension(FemMaterialType type, const FemExtensionOptions& options, FemExtensionResult& out,
                     std::string* error);

}  // namespace cs
