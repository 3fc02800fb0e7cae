// Grasp events (grasp_events.h).
#include "engine/grasp/grasp_events.h"

#include <cstdio>

#include "engine/grasp/grasp_player.h"
#include "engine/grasp/grasp_sensors.h"

namespace cs {

Real gripCommandOf(const Model& model, const GraspSpec& spec) {
    if (spec.fingers.empty()) return 0;
    const FingerSpec& f = spec.fingers[0];
    const Real span = f.closed[0] - f.open[0];
    if (span == 0) return 0;
    return (model.joints[size_t(f.joints[0])].driveTarget - f.open[0]) / span;
}

void GraspEventDetector::update(const World& world, const GraspSpec& spec, std::vector<GraspEvent>& out) {
    const Real time = world.state().time;
    char text[160];
    auto emit = [&](const char* name) { out.push_back(GraspEvent{name, time, text}); };

    const Real grip = gripCommandOf(world.model(), spec);
    const bool closed = closed_ ? grip >= Real(0.5) : grip > Real(0.5);
    if (closed != closed_) {
        std::snprintf(text, sizeof text, "grip command %.3g", double(grip));
        emit(closed ? "grip closed" : "release");
        closed_ = closed;
    }

    bool contact = !spec.fingers.empty();
    Real least = 1e30;
    int sliding = 0;
    for (const FingerSpec& f : spec.fingers) {
        const PadReading pad = padReading(world, f.pads, spec.object, spec.objectFem);
        least = pad.normalForce < least ? pad.normalForce : least;
        contact = contact && pad.normalForce > kContactForce;
        sliding += pad.sliding;
    }
    const bool hasObject = spec.object >= 0 || spec.objectFem >= 0;
    const Real height = hasObject ? graspObjectPosition(world, spec, false).z : Real(0);
    if (contact && !contact_) {
        std::snprintf(text, sizeof text, "least pad normal force %.3g N", double(least));
        emit("contact made");
    }
    if (!contact || !closed) {
        lifted_ = false;
        gripHeight_ = height;   // the object's height while not held: where a lift starts from
    }
    contact_ = contact;
    if (hasObject && contact && closed && !lifted_ && height - gripHeight_ > kLiftHeight) {
        std::snprintf(text, sizeof text, "object %.3g mm above where it was gripped", double((height - gripHeight_) * 1000));
        emit("lift start");
        lifted_ = true;
    }

    const bool slipping = contact && sliding > 0;
    if (slipping && !sliding_) {
        std::snprintf(text, sizeof text, "%d pad contacts sliding", sliding);
        emit("slip detected");
    }
    sliding_ = slipping;
}

}  // namespace cs
