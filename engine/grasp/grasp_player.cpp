// A scripted grasp played on a world (grasp_player.h).
#include "engine/grasp/grasp_player.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs {

Real padObjectPenetration(const World& world, const std::vector<int>& pads, int object) {
    const Model& m = world.model();
    Real deepest = 0;
    if (object < 0) return 0;
    for (int pad : pads)
        for (int a = m.bodyFirstShape[pad]; a < m.bodyFirstShape[pad] + m.bodyShapeCount[pad]; ++a)
            for (int b = m.bodyFirstShape[object]; b < m.bodyFirstShape[object] + m.bodyShapeCount[object]; ++b)
                deepest = std::max(deepest, -world.shapeDistance(a, b));
    return deepest;
}

Real padFemObjectPenetration(const World& world, const std::vector<int>& pads, int femBody) {
    const Model& m = world.model();
    Real deepest = 0;
    for (const Contact& c : world.contacts()) {
        if (c.femNode < 0 || m.femNodeBody[c.femNode] != femBody) continue;
        if (std::find(pads.begin(), pads.end(), c.geometry.bodyB) == pads.end()) continue;
        deepest = std::max(deepest, -c.geometry.gap);
    }
    return deepest;
}

Vec3 femBodyCentroid(const Model& model, const std::vector<Vec3>& femPos, int femBody) {
    const FemBodyInfo& b = model.femBodies[femBody];
    Vec3 sum{0, 0, 0};
    Real mass = 0;
    for (int i = b.firstNode; i < b.firstNode + b.nodeCount; ++i) {
        sum += model.femNodeMass[i] * femPos[i];
        mass += model.femNodeMass[i];
    }
    return mass > 0 ? sum / mass : sum;
}

Vec3 graspObjectPosition(const World& world, const GraspSpec& spec, bool initial) {
    const Model& m = world.model();
    if (spec.objectFem >= 0) return femBodyCentroid(m, initial ? m.femInitialPos : world.state().femPos, spec.objectFem);
    return initial ? m.initialPos[spec.object] : world.state().pos[spec.object];
}

GraspPlayer::GraspPlayer(const Model& model, GraspSpec spec, Real forceOverride) {
    if (forceOverride > 0) {
        spec.gripForce = forceOverride;
        for (GraspKey& k : spec.script) k.force = -1;
    }
    controller_ = GraspController(model, std::move(spec));
    gripSum_.assign(controller_.spec().fingers.size(), 0);
}

void GraspPlayer::beforeStep(World& world) {
    const GraspCommand c = controller_.scriptAt(world.state().time);
    controller_.apply(world.model(), c);
    phase_ = c.phase;
}

void GraspPlayer::afterStep(const World& world) {
    const GraspSpec& spec = controller_.spec();
    detector_.update(world, spec, events_);
    const int object = spec.object;
    const State& s = world.state();
    if (object >= 0 || spec.objectFem >= 0) {
        if (!started_) startHeight_ = graspObjectPosition(world, spec, true).z;
        started_ = true;
        const Vec3 objectPos = graspObjectPosition(world, spec, false);
        const Real rise = objectPos.z - startHeight_;
        metrics_.maxRise = std::max(metrics_.maxRise, rise);
        std::vector<int> pads;
        for (const FingerSpec& f : spec.fingers) pads.insert(pads.end(), f.pads.begin(), f.pads.end());
        const Real overlap = object >= 0 ? padObjectPenetration(world, pads, object)
                                         : padFemObjectPenetration(world, pads, spec.objectFem);
        metrics_.padPenetration = std::max(metrics_.padPenetration, overlap);
        const int wrist = spec.wristJoint >= 0 ? world.model().joints[spec.wristJoint].bodyB : -1;
        if (phase_ == "hold" && wrist >= 0) {
            const Vec3 local = rotateInv(s.rot[wrist], objectPos - s.pos[wrist]);
            if (!inHold_) {
                inHold_ = true;
                holdStart_ = local;
                metrics_.holdMinRise = rise;
            }
            metrics_.holdSlip = length(local - holdStart_);
            metrics_.holdRise = rise;
            metrics_.holdMinRise = std::min(metrics_.holdMinRise, rise);
            metrics_.holdSteps++;
            metrics_.holdDuration = metrics_.holdSteps * world.settings.dt;
            bool sliding = false;
            for (size_t f = 0; f < spec.fingers.size(); ++f) {
                const FingerSpec& finger = spec.fingers[f];
                const Real g = jointDriveForce(world, finger.joints[0]);
                gripSum_[f] += finger.lever > 0 ? std::fabs(g) / finger.lever : std::fabs(g);
                sliding = sliding || padReading(world, finger.pads, spec.object, spec.objectFem).sliding > 0;
            }
            metrics_.slidingStepsHold += sliding ? 1 : 0;
        }
    }
    if (spec.scaleJoint >= 0) {
        metrics_.scaleKg = scaleReading(world, spec.scaleJoint).kilograms;
        metrics_.scaleKgMax = std::max(metrics_.scaleKgMax, metrics_.scaleKg);
    }
    metrics_.gripForceHold.resize(gripSum_.size());
    for (size_t f = 0; f < gripSum_.size(); ++f)
        metrics_.gripForceHold[f] = metrics_.holdSteps > 0 ? gripSum_[f] / metrics_.holdSteps : Real(0);
}

std::string GraspPlayer::json() const {
    const GraspMetrics& m = metrics_;
    std::string grips;
    for (size_t f = 0; f < m.gripForceHold.size(); ++f)
        grips += (f ? "," : "") + std::to_string(double(m.gripForceHold[f]));
    std::string events;
    for (size_t e = 0; e < events_.size(); ++e)
        events += std::string(e ? "," : "") + "{\"event\":\"" + events_[e].name + "\",\"t\":" +
                  std::to_string(double(events_[e].time)) + "}";
    char buffer[768];
    std::snprintf(buffer, sizeof buffer,
                  "{\"grip_force_n\":%.9g,\"hold_s\":%.9g,\"hold_slip_m\":%.9g,\"hold_rise_m\":%.9g,"
                  "\"hold_min_rise_m\":%.9g,\"max_rise_m\":%.9g,\"pad_penetration_max_m\":%.9g,"
                  "\"scale_kg\":%.9g,\"scale_kg_max\":%.9g,\"sliding_steps_hold\":%d,"
                  "\"grip_force_hold_n\":[%s],\"events\":[",
                  double(controller_.spec().gripForce), double(m.holdDuration), double(m.holdSlip),
                  double(m.holdRise), double(m.holdMinRise), double(m.maxRise), double(m.padPenetration),
                  double(m.scaleKg), double(m.scaleKgMax), m.slidingStepsHold, grips.c_str());
    return buffer + events + "]}";
}

std::string GraspPlayer::text() const {
    const GraspMetrics& m = metrics_;
    char buffer[512];
    std::snprintf(buffer, sizeof buffer,
                  "  grasp: grip force %.4g N; hold %.3g s: slip %.3g mm, rise %.4g m (least %.4g m); pad overlap "
                  "max %.3g mm; scale %.4g kg at the end\n",
                  double(controller_.spec().gripForce), double(m.holdDuration), double(m.holdSlip * 1e3),
                  double(m.holdRise), double(m.holdMinRise), double(m.padPenetration * 1e3), double(m.scaleKg));
    std::string out = buffer;
    for (const GraspEvent& e : events_) {
        std::snprintf(buffer, sizeof buffer, "  grasp event: t %.3f s  %s (%s)\n", double(e.time), e.name.c_str(),
                      e.detail.c_str());
        out += buffer;
    }
    return out;
}

}  // namespace cs
