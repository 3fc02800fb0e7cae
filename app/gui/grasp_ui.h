// The app's side of grasping (engine/grasp/): the user's command for the wrist and the fingers,
// the scripted grasp's playback, and what the sensors read in each copy, kept as plot histories.
//
// The command is the app's, not a world's: before every step of every copy (the UI thread's
// synchronous steps and the physics thread's jobs alike) the GraspDriver (engine/grasp/
// grasp_driver.h) writes its command at that copy's time into the copy's model between steps,
// the way the drag is written before a job. So the copies of the compare view get the same wrist
// and grip commands, and a job that adopts its worlds keeps no stale command: the next step
// applies the current one. While the script plays, the command is the script's at each copy's
// own time; else the user's input sets a goal that the command ramps to with bounded speed and
// acceleration (grasp_driver.h says why).
//
// Input (grasp_input.cpp): left-drag on the gripper moves the wrist goal in the plane facing
// the camera through the grabbed point (a mocap body, as MuJoCo's simulate moves one), shift
// turns it, and the wheel during the drag moves it along the view; keys W/S A/D Q/E move it by
// 1 cm, J/L U/O Z/X turn it by 5 degrees, V opens or closes (GraspDriver::key). R (reset) puts
// the gripper back at rest under the user's control and stops the script. The window
// (grasp_panel.cpp) holds the sliders, the Play script button, per copy the sensor table and
// the plots.
#pragma once

#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "engine/grasp/grasp_driver.h"
#include "engine/grasp/grasp_events.h"
#include "engine/grasp/grasp_sensors.h"

namespace cs {

// One copy's sensor readings after its last step, and their histories for the plots.
struct GraspReadings {
    std::vector<Real> drive;                         // (fingers) drive force, N (torque / lever)
    std::vector<PadReading> pads;                    // (fingers)
    ScaleReading scale;
    bool scaleSettled = false;                       // read after a step (at t = 0 the spring holds nothing yet)
    Real objectRise = 0;                             // m, the object's height above its start
    std::vector<std::vector<float>> historyGrip;     // (fingers) N
    std::vector<std::vector<float>> historyNormal;   // (fingers) N
    std::vector<std::vector<float>> historySlip;     // (fingers) 1 sliding, 0 sticking or free
    std::vector<float> historyScale;                 // g
    GraspEventDetector events;                       // grasp events, into the session log
};

struct GraspUi {
    GraspDriver driver;
    std::vector<GraspReadings> copies;
    float forceMax = 20;              // N, the force slider's range
    bool active() const { return driver.active(); }
    // The wrist drag: the wrist target and rotation at the press, the grabbed point on the plane.
    Vec3 grabPoint{0, 0, 0}, wristStart{0, 0, 0};   // wristStart: the goal at the press
    Quat rotationStart = quatIdentity();
    glm::vec2 mouseStart{0, 0};
    Real depth = 0;                   // m, along the view, from the wheel during the drag
    bool rotating = false;
};

}  // namespace cs
