// Grasp sensing: what the joint impulses and the contact solve say about a grasp.
//
//   grip force   a finger drive's impulse over the step, lambda / h (N, or N m for a revolute
//                joint): a saturated drive reads its force limit
//   pad forces   the contact impulses on a finger's pad bodies over the step: the sum of the
//                normal forces, of the friction forces, and the net force vector on the pads,
//                counted on contacts with the grasp's object when one is named (the floor, the
//                other finger or the scale under a pad are "other": a pad pressed on the floor
//                or on the other pad holds nothing, and the app must not call it a grip)
//   slip         the friction state of each pad contact from the solve (Contact::sliding: the
//                friction impulse on the cone's boundary and the contact moving) and the largest
//                tangential speed of a pad point against the body it touches
//   scale        a platform on a prismatic joint whose drive is a spring (k = 1/alpha): the
//                reading is the spring force k (target - s) along the axis against gravity, in
//                kilograms, less the platform's own mass (a scale zeroed with its platform), as
//                a mechanical scale reads its spring's deflection
//
// All of these read the last step's results (World::contacts, State::jointWarm).
#pragma once

#include <vector>

#include "engine/world.h"

namespace cs {

// First row of joint `joint` among the joint rows (State::jointWarm's layout), or -1 when the
// last step stored no joint rows.
int jointFirstRow(const World& world, int joint);

// The free coordinate of a revolute (rad) or prismatic (m) joint at the current poses.
Real jointCoordinate(const World& world, int joint);

// The drive's force over the last step (N or N m; positive pushes body B along the joint's +axis);
// 0 for a joint without a drive.
Real jointDriveForce(const World& world, int joint);

// A pad whose contact points move along the object faster than this on average (weighted by
// their normal forces) slips, whatever the solve's friction state says (a pad pushed deep into a
// box slid up it with its friction inside the cone).
constexpr Real kSlipSpeed = Real(0.005);   // m/s

struct PadReading {
    // With the object (or with anything, when no object is named):
    Real normalForce = 0;     // N, sum over the pad's contacts
    Real frictionForce = 0;   // N, sum of the friction forces' magnitudes
    Vec3 force{0, 0, 0};      // N, net contact force on the pad bodies, world
    int contacts = 0;         // contacts carrying a normal force
    int sliding = 0;          // of those, sliding (Contact::sliding)
    Real slidingNormal = 0;   // N, the normal force on the sliding ones
    Real slipSpeed = 0;       // m/s, largest tangential speed at a loaded contact
    Real meanSlipSpeed = 0;   // m/s, the tangential speed averaged by normal force
    // With anything else (the floor, the other finger, the scale; rigid bodies or other deformables):
    Real otherNormalForce = 0;   // N
    int otherContacts = 0;       // contacts carrying a normal force
    int otherBody = -1;          // the rigid body that takes the most of it (-1: none, or a deformable body)
    // Holding the object without slipping: loaded contacts, most of the load on contacts that
    // stick, and the pad not moving along the object. Not "none sliding": a deformable object's
    // contact patch slips at its rim while its middle holds (the FEM tomato held 0.2 m up had
    // sliding node contacts in 405 of 480 pad-steps of its hold), as a Hertzian patch under a
    // tangential load does (Mindlin's partial slip).
    bool sticking() const {
        return contacts > 0 && !(slidingNormal > Real(0.5) * normalForce) && !(meanSlipSpeed > kSlipSpeed);
    }
};
// objectBody / objectFem: the grasp's object (a rigid body, or a deformable body's nodes); both
// -1: every contact of the pads (but a pad's with another pad of the same list) counts as the object's.
PadReading padReading(const World& world, const std::vector<int>& padBodies, int objectBody = -1, int objectFem = -1);

struct ScaleReading {
    Real deflection = 0;      // m, target - coordinate of the spring
    Real force = 0;           // N, spring force along the axis
    Real kilograms = 0;       // load on the platform, kg (tared by the platform's mass)
};
ScaleReading scaleReading(const World& world, int joint);

}  // namespace cs
