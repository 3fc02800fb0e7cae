// State: the least that must be integrated, plus the warm-start impulses carried between steps.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/math.h"

namespace cs {

// A contact's identity across steps: the two shapes and the two features (see narrow_phase.h).
struct ContactKey {
    uint64_t shapes;     // (shapeA << 32) | shapeB
    uint64_t features;   // (featureA << 32) | featureB, feature ids encode kind and index
    bool operator==(const ContactKey& o) const { return shapes == o.shapes && features == o.features; }
    bool operator<(const ContactKey& o) const {
        return shapes != o.shapes ? shapes < o.shapes : features < o.features;
    }
};

struct WarmImpulse {
    ContactKey key;
    Real normal;         // N s
    Vec3 tangent;        // world-frame friction impulse, re-projected onto the next step's basis
};

// The impulse a sleeping body took from one neighbour when it fell asleep: sum over their rows
// of lambda_i J_{i,body}^T (engine/solver/islands.h, partial waking).
struct RestImpulse {
    int body = -1, other = -1;
    Spatial impulse{{0, 0, 0}, {0, 0, 0}};
};

struct State {
    Real time = 0;
    std::vector<Vec3> pos;       // (nbody) centre of mass, world
    std::vector<Quat> rot;       // (nbody) unit quaternion, body to world
    std::vector<Vec3> linVel;    // (nbody)
    std::vector<Vec3> angVel;    // (nbody) world frame
    std::vector<Vec3> femPos;    // (nnode) FEM node positions, world
    std::vector<Vec3> femVel;    // (nnode)
    std::vector<Real> femActivation;   // (nfem) internal volumetric stress, Pa (the PneuNet's pressure)
    std::vector<WarmImpulse> warm;   // sorted by key: last step's contact impulses
    std::vector<Real> jointWarm;     // (joint rows) last step's joint impulses
    std::vector<Real> femWarm;       // last step's FEM impulses: each tet's node impulses in its polar frame
                                     // (kFemWarmPerTet), then 3 per attachment (fem_step.h storeFemWarm)
    std::vector<WarmImpulse> femContactWarm;   // sorted by key: last step's FEM contact impulses
    // Sleeping (engine/solver/islands.h): per body, seconds spent below the sleep speeds and the
    // island it sleeps in (-1: awake); per joint, the drive target and anchors last seen (7 each).
    std::vector<Real> sleepTime;     // (nbody)
    std::vector<int> sleepIsland;    // (nbody)
    std::vector<Real> jointControl;  // (njoint x 7)
    // Partial waking (WorldSettings::partialWake): bodies woken out of a sleeping island on their
    // own (the dragged body, a body whose load changed), whose touch does not wake the rest of
    // their island; and the rest impulses that tell a sleeping body's load changed.
    std::vector<uint8_t> wokeAlone;          // (nbody) 1: woken alone
    std::vector<RestImpulse> restImpulses;   // sorted by (body, other)
    bool lastSolveConverged = true;  // the last step's Newton reached its tolerance (the gate of
                                     //   row culling, engine/contact/row_culling.h)
    // The energy guard's account over the run (engine/solver/energy_guard.h), J: the mechanical
    // energy T + V the run can hold, T + V at the last step's end, and the most kinetic energy it
    // could have held at any step's end so far; none before the first step.
    bool energyCounted = false;
    Real energyBudget = 0, energyAtEnd = 0, energyAvailable = 0;
};

}  // namespace cs
