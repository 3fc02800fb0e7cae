// The deformed boundary surface of deformable bodies, for the renderer (fem_surface.h).
#include "engine/fem/fem_surface.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace cs {

namespace {

// The q-quantile (0..1) of v by nearest rank; reorders v.
Real quantile(std::vector<Real>& v, double q) {
    const size_t k = size_t(std::lround(q * double(v.size() - 1)));
    std::nth_element(v.begin(), v.begin() + k, v.end());
    return v[k];
}

}  // namespace

std::vector<int> femBoundaryTriangleTets(const Model& model) {
    std::map<std::array<int, 3>, int> owner;   // sorted face -> tet
    static const int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    for (int t = 0; t < model.femTetCount(); ++t)
        for (const auto& f : kFace) {
            std::array<int, 3> key = {model.femTets[t][f[0]], model.femTets[t][f[1]], model.femTets[t][f[2]]};
            std::sort(key.begin(), key.end());
            owner[key] = t;
        }
    std::vector<int> out;
    out.reserve(model.femTris.size());
    for (const auto& tri : model.femTris) {
        std::array<int, 3> key = tri;
        std::sort(key.begin(), key.end());
        auto it = owner.find(key);
        out.push_back(it == owner.end() ? -1 : it->second);
    }
    return out;
}

std::vector<Real> femTetFieldValues(const Model& model, const std::vector<Vec3>& x, FemField field) {
    std::vector<Real> out(model.femTetCount());
    for (int t = 0; t < model.femTetCount(); ++t) {
        const auto& k = model.femTets[t];
        const Mat3 F = deformationGradient(model.femTetRest[t], x[k[0]], x[k[1]], x[k[2]], x[k[3]]);
        out[t] = femFieldValue(field, model.femBodies[model.femTetBody[t]].material, F);
    }
    return out;
}

Color3 femFieldColor(float t, bool diverging) {
    t = std::clamp(std::isfinite(t) ? t : 1.f, 0.f, 1.f);
    // Piecewise linear maps through a few stops: diverging blue - white - red (after Moreland's
    // cool-warm), sequential dark blue - teal - yellow (viridis-like).
    static const Color3 kDiverging[5] = {{0.23f, 0.30f, 0.75f}, {0.55f, 0.69f, 0.99f}, {0.87f, 0.87f, 0.87f},
                                         {0.96f, 0.60f, 0.48f}, {0.71f, 0.02f, 0.15f}};
    static const Color3 kSequential[5] = {{0.27f, 0.00f, 0.33f}, {0.23f, 0.32f, 0.55f}, {0.13f, 0.57f, 0.55f},
                                          {0.37f, 0.79f, 0.38f}, {0.99f, 0.91f, 0.14f}};
    const Color3* stops = diverging ? kDiverging : kSequential;
    const float s = t * 4;
    const int i = std::min(3, int(s));
    const float f = s - float(i);
    return Color3{stops[i].r + f * (stops[i + 1].r - stops[i].r), stops[i].g + f * (stops[i + 1].g - stops[i].g),
                  stops[i].b + f * (stops[i + 1].b - stops[i].b)};
}

std::vector<Vec3> femBoundaryNormals(const Model& model, const std::vector<Vec3>& x) {
    std::vector<Vec3> n(x.size(), Vec3{0, 0, 0});
    for (const auto& tri : model.femTris) {
        const Vec3 w = cross(x[tri[1]] - x[tri[0]], x[tri[2]] - x[tri[0]]);   // 2 area * unit normal
        for (int k : tri) n[k] += w;
    }
    for (Vec3& v : n) {
        const Real l = length(v);
        if (l > 0) v = v / l;
    }
    return n;
}

FemFieldRange buildFemSurface(const Model& model, const State& state, const FemSurfaceStyle& style,
                              const std::vector<int>& triTets, std::vector<FemSurfaceVertex>& out) {
    out.clear();
    FemFieldRange range;
    const std::vector<Vec3>& x = state.femPos;
    if (model.femTris.empty() || x.size() != model.femRestPos.size()) return range;
    const std::vector<Vec3> normals = femBoundaryNormals(model, x);
    std::vector<Real> values;
    const bool byField = style.colorByField && triTets.size() == model.femTris.size();
    if (byField) {
        values = femTetFieldValues(model, x, style.field);
        const std::vector<Real> volume = femTetFieldValues(model, x, FemField::VolumetricStrain);   // J - 1
        const Real rest = femFieldRest(style.field);
        range.diverging = style.field != FemField::VonMises;
        std::vector<Real> seen;   // the values of the tets that are not inverted
        seen.reserve(values.size());
        for (size_t t = 0; t < values.size(); ++t) {
            if (volume[t] <= -1) {   // J <= 0
                ++range.inverted;
                values[t] = std::numeric_limits<Real>::quiet_NaN();
                continue;
            }
            seen.push_back(values[t]);
        }
        if (seen.empty()) seen.push_back(rest);
        range.seenMin = float(*std::min_element(seen.begin(), seen.end()));
        range.seenMax = float(*std::max_element(seen.begin(), seen.end()));
        if (style.autoRange) {
            // Over the 2nd to 98th percentiles, symmetric about the rest value (diverging) or from 0
            // (von Mises), never empty.
            const Real lo = quantile(seen, kFemRangeLow), hi = quantile(seen, kFemRangeHigh);
            const Real spread = std::max({std::fabs(hi - rest), std::fabs(lo - rest), Real(1e-9)});
            range.lo = range.diverging ? float(rest - spread) : 0.f;
            range.hi = range.diverging ? float(rest + spread) : float(std::max(hi, Real(1e-9)));
        } else {
            range.lo = style.lo;
            range.hi = style.hi > style.lo ? style.hi : style.lo + 1e-9f;
        }
    }
    out.reserve(3 * model.femTris.size());
    for (size_t i = 0; i < model.femTris.size(); ++i) {
        const auto& tri = model.femTris[i];
        Color3 c = model.femBodies[model.femNodeBody[tri[0]]].color;
        if (byField && triTets[i] >= 0)
            c = std::isnan(values[triTets[i]])
                    ? kFemInvertedColor
                    : femFieldColor((float(values[triTets[i]]) - range.lo) / (range.hi - range.lo), range.diverging);
        for (int k : tri) {
            FemSurfaceVertex v;
            for (int a = 0; a < 3; ++a) {
                v.pos[a] = float(x[k][a]);
                v.normal[a] = float(normals[k][a]);
            }
            v.color[0] = c.r;
            v.color[1] = c.g;
            v.color[2] = c.b;
            v.color[3] = 1.f;   // opaque, dynamic (mesh_frag.glsl: alpha = opacity, + 2 for static)
            out.push_back(v);
        }
    }
    return range;
}

}  // namespace cs
