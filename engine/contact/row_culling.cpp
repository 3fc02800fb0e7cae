// Row culling's predictor and check; the bound and its derivation are in row_culling.h.
#include "engine/contact/row_culling.h"

#include <cmath>

#include "engine/settings.h"
#include "engine/step_types.h"

namespace cs {

Real cullPushoutSpeed(const std::vector<PotentialContact>& potential, const WorldSettings& settings, Real h) {
    Real deepest = 0;
    for (const PotentialContact& c : potential) deepest = std::fmax(deepest, -c.gap);
    return std::fmin(settings.solver.maxPushoutSpeed, settings.solver.stabilization * deepest / h);
}

namespace {

bool dynamicBody(const Model& model, int b) { return b >= 0 && !model.isStatic(b); }

// |v| + |w| |r| of body b's point p, or 0 for the world and static bodies.
Real pointSpeedBound(const Model& model, const State& state, int b, Vec3 p, Vec3* linVel) {
    *linVel = Vec3{0, 0, 0};
    if (!dynamicBody(model, b)) return 0;
    *linVel = state.linVel[b];
    return length(state.angVel[b]) * length(p - state.pos[b]);
}

}  // namespace

bool contactCannotClose(const PotentialContact& c, const Model& model, const State& state, Vec3 gravity,
                        Real pushoutSpeed, Real h) {
    if (!(c.gap > kCullMargin)) return false;
    if (!dynamicBody(model, c.bodyA) && !dynamicBody(model, c.bodyB)) return true;
    Vec3 vA, vB;
    const Real turn = pointSpeedBound(model, state, c.bodyA, c.pointA, &vA) +
                      pointSpeedBound(model, state, c.bodyB, c.pointB, &vB);
    const Real bound = length(vA - vB) + turn + h * length(gravity) + pushoutSpeed;   // S
    return c.gap > h * bound + kCullMargin;
}

bool culledContactsStayOpen(const RowCull& cull, const std::vector<PotentialContact>& potential,
                            const State& state, const BodyVelocities& bodies, Real h) {
    for (int ci : cull.culled) {
        const PotentialContact& c = potential[ci];
        Real jv = 0;   // J u+ of the normal row (standard_model.cpp)
        if (c.bodyA >= 0) {
            const Spatial& u = bodies.velocity[c.bodyA];
            jv += dot(c.normal, u.lin + cross(u.ang, c.pointA - state.pos[c.bodyA]));
        }
        if (c.bodyB >= 0) {
            const Spatial& u = bodies.velocity[c.bodyB];
            jv -= dot(c.normal, u.lin + cross(u.ang, c.pointB - state.pos[c.bodyB]));
        }
        if (!(c.gap / h + jv >= 0)) return false;
    }
    return true;
}

bool culledSolveStands(const SolverSettings& settings, const SolveStats& stats, const RowCull& cull,
                       const std::vector<PotentialContact>& potential, const State& state,
                       const BodyVelocities& bodies, Real h) {
    if (cull.culled.empty()) return true;   // nothing left out: the solve was the full one
    return stats.residualFinal <= settings.newtonTolerance && culledContactsStayOpen(cull, potential, state, bodies, h);
}

}  // namespace cs
