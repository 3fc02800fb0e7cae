// A scripted grasp played on a world, and what it measured: the runner's `--script`, the tests'
// and the benchmark's grasp, and the app's playback share it.
//
// Before each step the script's command at the world's time is written into the model
// (GraspController::apply); after it the player measures:
//   hold slip      the object's displacement in the wrist's frame from the first to the last
//                  step of the script's "hold" phase (a held object moves with the wrist)
//   rise           the object's height above its start at the end of the hold and its least
//                  value during the hold
//   pad overlap    the deepest overlap of a pad with the object over the run (exact distance)
//   grip force     each finger's drive force (grasp_sensors.h), averaged over the hold
//   scale          the scale's reading at the end
//   events         grip closed, contact made, lift start, slip detected, release (grasp_events.h)
#pragma once

#include <string>
#include <vector>

#include "engine/grasp/grasp_control.h"
#include "engine/grasp/grasp_events.h"
#include "engine/grasp/grasp_sensors.h"

namespace cs {

struct GraspMetrics {
    Real holdSlip = -1;             // m; -1: the script has no hold phase (or it was not reached)
    Real holdDuration = 0;          // s
    Real holdRise = 0;              // m, at the end of the hold
    Real holdMinRise = 0;           // m, least during the hold
    Real maxRise = 0;               // m, over the run
    Real padPenetration = 0;        // m, deepest pad-object overlap over the run
    Real scaleKg = 0;               // at the end (0 without a scale)
    Real scaleKgMax = 0;
    std::vector<Real> gripForceHold;   // N (N m / lever for revolute fingers), mean per finger over the hold
    int slidingStepsHold = 0;       // hold steps in which some pad contact slid
    int holdSteps = 0;
};

class GraspPlayer {
public:
    // forceOverride > 0 replaces every key's grip force (the runner's --grip-force).
    GraspPlayer(const Model& model, GraspSpec spec, Real forceOverride = -1);
    const GraspController& controller() const { return controller_; }
    void beforeStep(World& world);          // the script's command at the world's time
    void afterStep(const World& world);     // measures (see above)
    const GraspMetrics& metrics() const { return metrics_; }
    const std::vector<GraspEvent>& events() const { return events_; }
    const std::string& phase() const { return phase_; }
    // One JSON object (the runner's "grasp" key) and a few readable lines.
    std::string json() const;
    std::string text() const;

private:
    GraspController controller_;
    GraspMetrics metrics_;
    std::string phase_;
    bool inHold_ = false;
    Vec3 holdStart_{0, 0, 0};       // object in the wrist frame at the hold's start
    Real startHeight_ = 0;
    bool started_ = false;
    std::vector<Real> gripSum_;
    GraspEventDetector detector_;
    std::vector<GraspEvent> events_;
};

// Deepest overlap (m, >= 0) between any part of the bodies in `pads` and any part of `object`.
Real padObjectPenetration(const World& world, const std::vector<int>& pads, int object);

// A deformable object (GraspSpec::objectFem): its deepest node penetration into a pad (m, >= 0,
// from this step's node contacts), and its nodes' mass-weighted centroid, now or at t = 0.
Real padFemObjectPenetration(const World& world, const std::vector<int>& pads, int femBody);
Vec3 femBodyCentroid(const Model& model, const std::vector<Vec3>& femPos, int femBody);

// The object's position (rigid: its centre of mass; deformable: its node centroid), now or at t = 0.
Vec3 graspObjectPosition(const World& world, const GraspSpec& spec, bool initial);

}  // namespace cs
