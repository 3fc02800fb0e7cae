// The speed guard of a step, for both backends: World::substep (world.cpp speedGuard and its
// integration loop) and the step pipeline (engine/exec/pipeline_collide.h recordPrepare,
// pipeline_step.h recordIntegrate, pipeline_fem.h recordFemGuard) call these CS_HD functions, so
// the two roll back the same substeps.
//
// Above kMaxSpeed (m/s, a point of a body) every scene has exploded. Below it, a body is judged
// against the scene's own speed scale at the step's start: the fastest point of an active body
// (or FEM node), plus what one step can add to any body without an explosion: gravity (|g| h),
// the push-out of overlaps (maxPushoutSpeed) and the drag's force limit on the dragged body.
// Collisions pass speed on (a light body struck by a heavy one leaves at up to twice its speed),
// so a body faster than kSpeedScaleFactor times this scale after the solve is an energy blow-up
// of the solve, not of the scene (a 1 kg box squeezed out at 1.9 km/s from under a 1e9 kg one).
// Joint drives and stabilization can move a body by its joint error within one step, so bodies
// in a joint are held only to kMaxSpeed.
#pragma once

#include "engine/core/math.h"

namespace cs {

constexpr Real kMaxSpeed = Real(1e4);
constexpr Real kSpeedScaleFactor = Real(10);
constexpr Real kSpeedScaleFloor = Real(1);   // m/s: bodies at rest still get a few m/s of room

// A point's speed bound for a body: |v| + |w| reach (reach: islands.h bodyReach).
CS_HD Real bodyPointSpeed(Vec3 linVel, Vec3 angVel, Real reach) { return length(linVel) + length(angVel) * reach; }

// The scale from the fastest point at the step's start, before the drag's term (which the
// caller adds when a drag is on).
CS_HD Real speedScaleOf(Real fastest, Real gravity, Real h, Real maxPushoutSpeed) {
    return fmax(fastest, kSpeedScaleFloor) + gravity * h + maxPushoutSpeed;
}

// The limit of bodies in no joint, and of FEM nodes.
CS_HD Real sceneSpeedLimit(Real scale) { return fmin(kMaxSpeed, kSpeedScaleFactor * scale); }

// The guard fires for a speed at or above its limit, or NaN.
CS_HD bool speedBeyond(Real speed, Real limit) { return !(speed < limit); }

}  // namespace cs
