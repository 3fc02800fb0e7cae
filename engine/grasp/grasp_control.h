// The grasp's controls: the wrist target, the grip command and force, and the scripted grasp
// (grasp_spec.h). Commands are written into the model between steps: the mocap joint's world
// anchor and rest rotation, the finger drives' targets and force limits. Nothing here steps.
#pragma once

#include "engine/grasp/grasp_spec.h"
#include "engine/model.h"

namespace cs {

class GraspController {
public:
    GraspController() = default;
    // Records the wrist's rest (the mocap joint's anchor and rest rotation as the scene built them).
    GraspController(const Model& model, GraspSpec spec);

    const GraspSpec& spec() const { return spec_; }
    bool active() const { return spec_.present(); }
    // The scene's start: the wrist at rest, the fingers open, the spec's grip force.
    GraspCommand restCommand() const;
    // The script at time t (s): keyframes interpolated by smoothstep, the rotation by slerp; before
    // the first key its values, after the last the last's.
    GraspCommand scriptAt(Real t) const;
    Real scriptDuration() const { return spec_.script.empty() ? Real(0) : spec_.script.back().time; }
    // Writes the command into the model: mocap anchor and rotation, drive targets and limits.
    void apply(Model& model, const GraspCommand& command) const;
    // A finger's drive targets at grip g in [0, 1] (open + g (closed - open)).
    Real fingerTarget(int finger, int joint, Real grip) const;

    Vec3 restWrist() const { return restWrist_; }
    Quat restRotation() const { return restRot_; }

private:
    GraspSpec spec_;
    Vec3 restWrist_{0, 0, 0};
    Quat restRot_ = quatIdentity();
};

// Rotation vector (rad) to a unit quaternion, and a unit quaternion's slerp.
Quat quatFromRotationVector(Vec3 v);
Quat quatSlerp(Quat a, Quat b, Real s);

}  // namespace cs
