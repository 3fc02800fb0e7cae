// [NSN] figure 13's extension test (fem_extension.h).
#include "engine/fem/fem_extension.h"

#include <algorithm>
#include <cmath>

#include "engine/fem/fem_builder.h"
#include "engine/world.h"

namespace cs {

Real uniaxialVolumeRatio(const FemMaterial& material, Real poisson, Real stretch) {
    if (material.type == FemMaterialType::CorotatedLinear) {
        const Real e = stretch - 1;
        return stretch * (1 - poisson * e) * (1 - poisson * e);
    }
    Real C1, D1, alpha;
    neoHookeanConstants(material, C1, D1, alpha);
    return alpha - C1 / (D1 * stretch);
}

namespace {

Real tetVolumeNow(const std::vector<Vec3>& x, const std::array<int, 4>& t) {
    return dot(x[t[1]] - x[t[0]], cross(x[t[2]] - x[t[0]], x[t[3]] - x[t[0]])) / 6;
}

}  // namespace

bool runFemExtension(FemMaterialType type, const FemExtensionOptions& o, FemExtensionResult& out,
                     std::string* error) {
    out = FemExtensionResult{};
    const Real half = o.length / 2;
    FemBodyDesc d;
    d.name = type == FemMaterialType::CorotatedLinear ? "linear bar" : "neo-Hookean bar";
    d.mesh = makeBoxTetMesh({half, o.width / 2, o.width / 2}, o.cells);
    d.type = type;
    d.youngs = o.youngs;
    d.poisson = o.poisson;
    d.density = o.density;
    d.damping = o.damping;
    std::vector<int> left, right;
    const Real tol = Real(1e-9) * o.length;
    for (int i = 0; i < (int)d.mesh.nodes.size(); ++i) {
        if (d.mesh.nodes[i].x < -half + tol) left.push_back(i);
        if (d.mesh.nodes[i].x > half - tol) right.push_back(i);
    }
    d.pinned = left;
    d.pinned.insert(d.pinned.end(), right.begin(), right.end());
    Model model;
    if (addFemBody(model, d, error) < 0) return false;
    WorldSettings settings;
    settings.dt = o.dt;
    settings.gravity = {0, 0, 0};
    World world(model, settings);
    out.tets = model.femTetCount();

    // The middle third, by rest centroid.
    std::vector<int> middle;
    Real restMiddle = 0, restWhole = 0;
    for (int t = 0; t < model.femTetCount(); ++t) {
        const auto& tet = model.femTets[t];
        Real cx = 0;
        for (int k : tet) cx += model.femRestPos[k].x / 4;
        restWhole += model.femTetRest[t].volume;
        if (std::abs(cx) < o.length / 6) {
            middle.push_back(t);
            restMiddle += model.femTetRest[t].volume;
        }
    }

    const int steps = std::max(1, (int)std::lround(o.seconds / o.dt));
    const Real speed = (o.finalStretch - 1) * o.length / (steps * o.dt);
    const Real leftX = model.femRestPos[left[0]].x;
    int nextSample = 0;
    for (int s = 0; s <= steps; ++s) {
        State& st = world.state();
        // The pulled end: placed exactly where the pull has it at this time, moving at the speed.
        for (int i : right) {
            st.femPos[i] = model.femRestPos[i] + Vec3{speed * s * o.dt, 0, 0};
            st.femVel[i] = {speed, 0, 0};
        }
        const Real stretch = (st.femPos[right[0]].x - leftX) / o.length;
        const Real target = 1 + (o.finalStretch - 1) * Real(nextSample) / Real(std::max(1, o.samples - 1));
        if (nextSample < o.samples && stretch >= target - Real(1e-9)) {
            FemExtensionSample sample;
            sample.stretch = stretch;
            Real vm = 0, vw = 0;
            for (int t : middle) vm += tetVolumeNow(st.femPos, model.femTets[t]);
            for (int t = 0; t < model.femTetCount(); ++t) vw += tetVolumeNow(st.femPos, model.femTets[t]);
            sample.volumeMiddle = vm / restMiddle;
            sample.volumeWhole = vw / restWhole;
            sample.closedForm = uniaxialVolumeRatio(model.femBodies[0].material, o.poisson, stretch);
            Real least = 1e30;
            for (int t = 0; t < model.femTetCount(); ++t) {
                const auto& tet = model.femTets[t];
                Mat3 U, V;
                Vec3 sv;
                svd3(deformationGradient(model.femTetRest[t], st.femPos[tet[0]], st.femPos[tet[1]], st.femPos[tet[2]],
                                         st.femPos[tet[3]]),
                     U, sv, V);
                least = std::min({least, sv.x, sv.y, sv.z});
            }
            sample.minStretch = least;
            sample.newtonIterations = world.solveStats().newtonIterations;
            out.samples.push_back(sample);
            ++nextSample;
        }
        if (s == steps) break;
        world.step();
        if (world.lastStepFailed()) out.failedSteps++;
    }
    return true;
}

}  // namespace cs
