// The sleep tests of islands and sleeping (engine/solver/islands.h), for both backends: World's
// updateSleep (islands.cpp) and the step pipeline (engine/exec/pipeline_islands.h) call these
// CS_HD functions, so the two put the same bodies to sleep.
#pragma once

#include "engine/core/math.h"

namespace cs {

constexpr Real kSleepLinearSpeed = Real(0.05);                   // m/s, centre of mass
constexpr Real kSleepAngularSpeed = Real(2 * 3.14159265358979 / 180);   // rad/s (2 deg/s)
constexpr Real kTimeToSleep = Real(0.5);                         // s below both speeds

// A body is a sleep candidate while both of its speeds are below the sleep speeds (Box2D's defaults).
CS_HD bool belowSleepSpeeds(Vec3 linVel, Vec3 angVel) {
    return length(linVel) < kSleepLinearSpeed && length(angVel) < kSleepAngularSpeed;
}

// A body's sleep clock after a step of length h: advanced while it is a candidate that may sleep
// (not the dragged body, in no driven joint), else back to zero.
CS_HD Real advancedSleepTime(Real time, bool slow, bool maySleep, Real h) {
    return slow && maySleep ? time + h : Real(0);
}

}  // namespace cs
