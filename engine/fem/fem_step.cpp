// The deformable bodies' part of World::step (fem_step.h).
#include "engine/fem/fem_step.h"

#include <algorithm>
#include <cmath>

#include "engine/fem/fem_lanes.h"
#include "engine/fem/fem_rows_hd.h"

namespace cs {

void appendFemNodes(const Model& model, const State& state, Vec3 gravity, Real h, BodyVelocities& bodies) {
    const int nnode = model.femNodeCount();
    if (nnode == 0) return;
    const size_t first = bodies.invMass.size();
    bodies.invMass.resize(first + nnode);
    bodies.invInertia.resize(first + nnode);
    bodies.unconstrained.resize(first + nnode);
    bodies.velocity.resize(first + nnode);
    for (int n = 0; n < nnode; ++n) {
        const Real w = model.femNodeInvMass[n];
        bodies.invMass[first + n] = w;
        bodies.invInertia[first + n] = mat3Zero();
        bodies.unconstrained[first + n] =
            w > 0 ? Spatial{state.femVel[n] + h * gravity, {0, 0, 0}} : Spatial{{0, 0, 0}, {0, 0, 0}};
    }
}

int buildFemRows(const Model& model, const State& state, Real h, bool warm, ConstraintRows& rows,
                 std::vector<Mat3>& tetRotation, const FemTetCache* cache) {
    const int first = rows.size();
    const int nb = model.bodyCount();
    const int tetWarm = kFemWarmPerTet * model.femTetCount();
    warm = warm && (int)state.femWarm.size() == tetWarm + 3 * (int)model.femAttachments.size();
    tetRotation.resize(model.femTetCount());
    // A block of tets at a time: their rows, their warm impulses together (femTetWarmImpulsesLanes,
    // bitwise femTetWarmImpulses's), then their rows appended in tet order.
    constexpr int kBlock = svd3lanes::kLanes;
    for (int t0 = 0; t0 < model.femTetCount(); t0 += kBlock) {
        const int m = std::min(kBlock, model.femTetCount() - t0);
        FemTetStepRows r[kBlock];
        const Real* stored[kBlock];
        Real lambda[kBlock][kFemMaxRows] = {};
        for (int l = 0; l < m; ++l) {
            const int t = t0 + l;
            const auto& tet = model.femTets[t];
            const FemBodyInfo& body = model.femBodies[model.femTetBody[t]];
            const Real activation = model.femTetActivation[t] * state.femActivation[model.femTetBody[t]];
            const Vec3 x[4] = {state.femPos[tet[0]], state.femPos[tet[1]], state.femPos[tet[2]], state.femPos[tet[3]]};
            const FemTetCache::Tet* kept = cache ? cache->at(t, x, model.femTetRest[t]) : nullptr;
            femTetStepRows(body.material, model.femTetRest[t], x[0], x[1], x[2], x[3], activation, body.damping, h,
                           r[l], kept ? &kept->svd : nullptr);
            tetRotation[t] = r[l].rotation;
            stored[l] = warm ? state.femWarm.data() + kFemWarmPerTet * t : nullptr;
        }
        if (warm) femTetWarmImpulsesLanes(r, stored, lambda, m);
        for (int l = 0; l < m; ++l) {
            const auto& tet = model.femTets[t0 + l];
            int bodies[4];
            for (int j = 0; j < 4; ++j) bodies[j] = femNodeBodyIndex(nb, tet[j]);
            for (int k = 0; k < r[l].count; ++k) {
                const int i = rows.add(RowKind::Bilateral, bodies[0], bodies[1], Spatial{r[l].jacobian[k][0], {0, 0, 0}},
                                       Spatial{r[l].jacobian[k][1], {0, 0, 0}}, r[l].bias[k], r[l].softness[k], -1);
                rows.setExtraBodies(i, bodies[2], bodies[3], Spatial{r[l].jacobian[k][2], {0, 0, 0}},
                                    Spatial{r[l].jacobian[k][3], {0, 0, 0}});
                rows.lambda[i] = lambda[l][k];
            }
        }
    }
    for (const FemAttachment& a : model.femAttachments) {
        FemAttachmentRows r;
        femAttachmentRows(state.femPos[a.node], state.pos[a.body], state.rot[a.body], a.localPoint, h, r);
        for (int k = 0; k < 3; ++k)
            rows.add(RowKind::Bilateral, femNodeBodyIndex(nb, a.node), a.body, r.jacobianNode[k], r.jacobianBody[k],
                     r.bias[k], 0, -1);
    }
    if (warm)   // the attachments' rows keep their impulses (their directions are the world axes)
        for (int i = first + kFemMaxRows * model.femTetCount(), j = tetWarm; i < rows.size(); ++i, ++j)
            rows.lambda[i] = state.femWarm[j];
    return rows.size() - first;
}

void storeFemWarm(const Model& model, const ConstraintRows& rows, int first, int count,
                  const std::vector<Mat3>& tetRotation, std::vector<Real>& warm) {
    const int tets = model.femTetCount();
    warm.resize(kFemWarmPerTet * tets + (count - kFemMaxRows * tets));
    for (int t = 0; t < tets; ++t) {
        const int i = first + kFemMaxRows * t;
        femTetWarmStore(kFemMaxRows, &rows.jacobianB[i], &rows.jacobianC[i], &rows.jacobianD[i], &rows.lambda[i],
                        tetRotation[t], warm.data() + kFemWarmPerTet * t);
    }
    for (int i = first + kFemMaxRows * tets, j = kFemWarmPerTet * tets; i < first + count; ++i, ++j)
        warm[j] = rows.lambda[i];
}

Real fastestFemNode(const std::vector<Vec3>& vel) {
    Real fastest = 0;
    for (const Vec3& v : vel) fastest = std::fmax(fastest, length(v));
    return fastest;
}

Real femKineticEnergy(const Model& model, const State& state) {
    Real e = 0;
    for (int n = 0; n < model.femNodeCount(); ++n)
        if (model.femNodeInvMass[n] > 0) e += Real(0.5) * model.femNodeMass[n] * lengthSq(state.femVel[n]);
    return e;
}

Real femElasticEnergy(const Model& model, const State& state) {
    Real e = 0;
    for (int t = 0; t < model.femTetCount(); ++t) {
        const auto& tet = model.femTets[t];
        const TetRest& r = model.femTetRest[t];
        const Mat3 F = deformationGradient(r, state.femPos[tet[0]], state.femPos[tet[1]], state.femPos[tet[2]],
                                           state.femPos[tet[3]]);
        const FemMaterial& m = model.femBodies[model.femTetBody[t]].material;
        // Relative to the rest state (stable neo-Hookean's Psi(I) = D1 (1 - alpha)^2 is a constant).
        e += r.volume * (femEnergyDensity(m, F) - femEnergyDensity(m, mat3Identity()));
    }
    return e;
}

void femTetFields(const Model& model, const State& state, FemTetFields& out) {
    const int nt = model.femTetCount();
    out.volumetricStrain.resize(nt);
    out.vonMises.resize(nt);
    out.maxStretch.resize(nt);
    for (int t = 0; t < nt; ++t) {
        const auto& tet = model.femTets[t];
        const Mat3 F = deformationGradient(model.femTetRest[t], state.femPos[tet[0]], state.femPos[tet[1]],
                                           state.femPos[tet[2]], state.femPos[tet[3]]);
        const FemStrainFields f = femStrainFields(model.femBodies[model.femTetBody[t]].material, F);
        out.volumetricStrain[t] = f.volumetricStrain;
        out.vonMises[t] = f.vonMises;
        out.maxStretch[t] = f.maxStretch;
    }
}

}  // namespace cs
