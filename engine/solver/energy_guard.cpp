// The energy guard's sums on the CPU (energy_guard.h); the terms are energy_guard_hd.h's, which
// the device pipeline sums too (engine/exec/pipeline_energy.h).
#include "engine/solver/energy_guard.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/fem/fem_lanes.h"
#include "engine/solver/energy_guard_hd.h"
#include "engine/solver/newton.h"

namespace cs {

namespace {

bool sameMaterial(const FemMaterial& a, const FemMaterial& b) {
    return a.type == b.type && std::memcmp(&a.mu, &b.mu, sizeof(Real)) == 0 &&
           std::memcmp(&a.lambda, &b.lambda, sizeof(Real)) == 0;
}

}  // namespace

StepEnergy stepEnergy(const Model& model, const State& state, const uint8_t* active, const BodyVelocities& bodies,
                      const ConstraintRows& rows, int femTetRow, int femTetRows, Vec3 gravity, Real h,
                      FemTetCache* cache) {
    StepEnergy e;
    const int nb = model.bodyCount();
    Vec3 sum{0, 0, 0};   // T(u-), T(u+) - T(u-), G
    for (int b = 0; b < nb; ++b)
        if (active[b] && !model.isStatic(b))
            sum += rigidStepEnergy(model.invMass[b], model.invInertiaLocal[b], state.rot[b], state.linVel[b],
                                   state.angVel[b], bodies.velocity[b], gravity, h);
    Vec3 nodes{0, 0, 0};   // the same for the FEM nodes
    for (int n = 0; n < model.femNodeCount(); ++n)
        nodes += nodeStepEnergy(model.femNodeInvMass[n], state.femVel[n], bodies.velocity[nb + n].lin, gravity, h);
    Vec3 fem{0, 0, 0};   // V(x), V(x + h v+) - V(x)
    if (cache) cache->tets.resize(model.femTetCount());
    // With the cache: the start V and F at the end positions per tet, then the end SVDs all at once
    // (svd3Many, bitwise svd3's), then the end V, summed in tet order as without the cache.
    std::vector<Real> starts(cache ? model.femTetCount() : 0);
    std::vector<Mat3> endF(cache ? model.femTetCount() : 0);
    for (int t = 0; t < model.femTetCount(); ++t) {
        const auto& tet = model.femTets[t];
        const int body = model.femTetBody[t];
        Vec3 x[4], v[4];
        for (int j = 0; j < 4; ++j) {
            x[j] = state.femPos[tet[j]];
            v[j] = bodies.velocity[nb + tet[j]].lin;
        }
        const Real activation = model.femTetActivation[t] * state.femActivation[body];
        const FemMaterial& material = model.femBodies[body].material;
        const TetRest& rest = model.femTetRest[t];
        if (!cache) {
            fem += tetStepEnergy(material, rest, activation, x, v, h);
            continue;
        }
        // tetStepEnergy's terms, the start V looked up where the inputs are the last end's.
        const FemTetCache::Tet* kept = cache->at(t, x, rest);
        starts[t] = kept && sameMaterial(kept->material, material) &&
                            std::memcmp(&kept->activation, &activation, sizeof(Real)) == 0
                        ? kept->potential
                        : tetPotentialEnergy(material, rest, deformationGradient(rest, x[0], x[1], x[2], x[3]),
                                             activation);
        FemTetCache::Tet& c = cache->tets[t];
        for (int j = 0; j < 4; ++j) c.x[j] = x[j] + h * v[j];
        endF[t] = deformationGradient(rest, c.x[0], c.x[1], c.x[2], c.x[3]);
        c.rest = rest;
        c.material = material;
        c.activation = activation;
        c.valid = true;
    }
    if (cache) {
        std::vector<TetSvd> svd(model.femTetCount());
        svd3Many(endF.data(), model.femTetCount(), svd.data());
        for (int t = 0; t < model.femTetCount(); ++t) {
            FemTetCache::Tet& c = cache->tets[t];
            c.svd = svd[t];
            c.potential = tetPotentialFromStretches(c.material, c.rest, c.svd.s, c.activation);
            const Real start = starts[t];
            fem += Vec3{start, c.potential - start, start < 0 ? -start : start};
        }
    }
    Real r = 0, bilateralWork = 0, contactWork = 0, tetWork = 0;
    const bool wide = rows.wideRows > 0;
    const RowWorkView view{rows.bodyA.data(), rows.bodyB.data(), wide ? rows.bodyC.data() : nullptr,
                           wide ? rows.bodyD.data() : nullptr, rows.jacobianA.data(), rows.jacobianB.data(),
                           rows.jacobianC.data(), rows.jacobianD.data(), rows.lambda.data()};
    for (int i = 0; i < rows.size(); ++i) {
        const Real work = rowWork(view, i, bodies.velocity.data(), bodies.unconstrained.data());
        if (i >= femTetRow && i < femTetRow + femTetRows) {
            tetWork += work;
            continue;
        }
        r += rowEnergyBound(rows.kind[i], rows.lambda[i], rows.bias[i], rows.maxImpulse[i], work, h);
        if (rows.kind[i] == int(RowKind::Bilateral)) bilateralWork += work + rowGravityWork(view, i, gravity, h);
        else contactWork += work;
    }
    e.start = sum.x + nodes.x + fem.x;
    e.rise = sum.y + nodes.y + fem.y;
    e.gravity = sum.z + nodes.z;
    e.constraints = r;
    e.fem = fem.x;
    e.femScale = fem.z + nodes.x;
    e.femEnd = fem.x + fem.y;
    // The account's credit (energy_guard.h): the bilateral rows' work and the contacts' work, each
    // when positive, and what V gained beyond what the tets' rows took (their linearization's error).
    auto positive = [](Real x) { return x > 0 ? x : Real(0); };
    e.supplied = positive(bilateralWork) + positive(contactWork) + positive(fem.y + tetWork);
    return e;
}

Real gravityPotential(const Model& model, const State& state, Vec3 gravity) {
    Real e = 0;
    for (int b = 0; b < model.bodyCount(); ++b)
        if (!model.isStatic(b)) e -= model.mass[b] * dot(gravity, state.pos[b]);
    for (int n = 0; n < model.femNodeCount(); ++n)
        if (model.femNodeInvMass[n] > 0) e -= model.femNodeMass[n] * dot(gravity, state.femPos[n]);
    return e;
}

Real energyBudget(const State& state, Real start, Real supplied) {
    return (state.energyCounted ? state.energyBudget + (start - state.energyAtEnd) : start) + supplied;
}

bool runEnergyExplained(Real kinetic, Real available, Real start) {
    return !(kinetic > kEnergyRunFactor * (available > 0 ? available : Real(0)) + kEnergyFloor +
                           kEnergyFloorRelative * (start > 0 ? start : -start));
}

std::string runEnergyFailure(Real kinetic, Real available) {
    char what[256];
    std::snprintf(what, sizeof what,
                  "kinetic energy reached %.3g J, more than %g x the %.3g J that gravity, drives and the drag "
                  "could have supplied since the start",
                  double(kinetic), double(kEnergyRunFactor), double(available));
    return what;
}

std::string energyFailure(const StepEnergy& e) {
    char what[256];
    std::snprintf(what, sizeof what,
                  "%s rose %.3g J in one step, more than gravity, the push-out of overlaps, drives and the drag "
                  "could supply (%.3g J allowed)",
                  e.fem > 0 ? "kinetic and elastic energy" : "kinetic energy", double(e.rise), double(e.allowed()));
    return what;
}

}  // namespace cs
