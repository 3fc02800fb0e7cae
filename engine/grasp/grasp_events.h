// Grasp events: the moments of a grasp, detected from the command and the sensors after each
// step, for the app's session log and the runner's report.
//
//   grip closed    the grip command g (the first finger's drive target between open and closed)
//                  rises through 1/2
//   contact made   every finger's pads carry more than kContactForce of normal force on the object
//                  (on anything, where the spec names no object)
//   lift start     in contact with the grip closed, the object more than kLiftHeight above its
//                  height when the grip closed on it (once per grip)
//   slip detected  in contact, some pad contact slides (Contact::sliding) where none
//                  did the step before
//   release        g falls through 1/2
#pragma once

#include <string>
#include <vector>

#include "engine/grasp/grasp_spec.h"
#include "engine/world.h"

namespace cs {

constexpr Real kContactForce = Real(0.05);   // N per finger
constexpr Real kLiftHeight = Real(0.005);    // m

struct GraspEvent {
    std::string name;   // "grip closed", "contact made", "lift start", "slip detected", "release"
    Real time = 0;      // s, the world's time after the step
    std::string detail; // readable figures (forces, height)
};

class GraspEventDetector {
public:
    // Appends the events of the world's last step to `out`.
    void update(const World& world, const GraspSpec& spec, std::vector<GraspEvent>& out);
    void reset() { *this = GraspEventDetector{}; }

private:
    bool closed_ = false, contact_ = false, lifted_ = false, sliding_ = false;
    Real gripHeight_ = 0;
};

// The grip command g in [0, 1] as the model holds it (the first finger's first drive target).
Real gripCommandOf(const Model& model, const GraspSpec& spec);

}  // namespace cs
