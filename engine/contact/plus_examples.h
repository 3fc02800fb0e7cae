// The impact scenarios of [PLUS] section 4 as ready-made problems, shared by the tests and the
// `sandbox experiment plus-*` reproductions: the same configuration as a PLUS ImpactProblem and
// as a compliant-model setup (bodies plus body-fixed contacts against the ground plane z = 0).
#pragma once

#include <vector>

#include "engine/contact/compliant_contact.h"
#include "engine/contact/plus_impact.h"
#include "engine/model.h"
#include "engine/state.h"

namespace cs {

struct PlusExample {
    Model model;                               // the moving bodies (no ground: contacts are with the world)
    State state;                               // configuration and velocities just before the impact
    ImpactProblem problem;                     // PLUS at that state; points use tangents t1 = X, t2 = Y
    std::vector<CompliantContact> contacts;    // the same points for the compliant model
    std::vector<Vec3> pointWorld;              // (points) contact points, world
    std::vector<int> pointBody;                // (points) body A of each point (for velocities)
};

// [PLUS] table A1: a 0.4 x 0.6 x 0.8 m, 2 kg brick with inertia diag(0.167, 0.133, 0.0867) and
// 0.1 m spheres centred on its vertices, at orientation `rot`, translating at `velocity`; the
// spheres whose lowest point is within `tolerance` of the lowest one touch the ground z = 0.
PlusExample brickExample(Quat rot, Vec3 velocity, Real mu, Real minRestitution, Real tolerance = Real(1e-6));

// [PLUS] example 3: five frictionless 1 kg balls of radius 0.25 m in a row along X, touching;
// ball 0 (at the +X end) moves at `speed` along -X; points are the four touching pairs.
PlusExample cradleExample(int balls = 5, Real speed = 2, Real minRestitution = 1);

// Velocity of a point of the example's body (world) at body velocities (v, w), frozen configuration.
Vec3 examplePointVelocity(const PlusExample& ex, int point, const std::vector<Vec3>& linVel,
                          const std::vector<Vec3>& angVel);

// The paper's brick orientation for example 1 (chosen here: figure 7 gives no numbers) and the
// minimum CORs of table A1 per coefficient of friction.
Quat brickExample1Orientation();
// Example 2's brick lies on its largest face (0.8 m along X, 0.6 m along Y, 0.4 m high).
Quat brickExample2Orientation();

}  // namespace cs
