// Session recording and replay: the initial state (scene, copies and their settings) plus every
// input that changed a world, each stamped with the lockstep step before which it was applied.
// Replaying applies the same events before the same steps, so a session reproduces exactly under
// the same settings, and can be replayed under another contact model or solver (the overrides
// are applied over the recorded settings), interactively or headless into a video.
//
// File format (JSON): {"version": 1, "scene": NAME, "copies": [LABEL...],
//   "settings": [SETTINGS...], "steps": N, "events": [{"step": S, "type": T, ...}...]}
// with T one of drag (body, local, target; a FEM surface point: fem_tri, fem_weights, target),
// release (body or fem_tri, velocity), launch (shape, position, velocity, size, density: optional,
// 500 kg/m^3), settings (copy,
// settings), reset, grasp (copy, event, time, detail: a grasp event detected after the step,
// engine/grasp/grasp_events.h; a record only, replay skips it), pressure (body: a deformable
// body's index in Model::femBodies, pressure: its chambers' activation in Pa, State::femActivation).
#pragma once

#include <string>
#include <vector>

#include "engine/world.h"

namespace cs {

enum class SessionEventType { Drag, Release, Launch, Settings, Reset, Grasp, Pressure };

struct SessionEvent {
    long long step = 0;
    SessionEventType type = SessionEventType::Drag;
    int body = -1;                 // drag, release; pressure: the deformable body (Model::femBodies)
    Vec3 local{0, 0, 0};           // drag: grabbed point in the body's COM frame
    Vec3 target{0, 0, 0};          // drag: world target
    int femTri = -1;               // drag, release: >= 0 a FEM boundary triangle is grabbed instead
    Vec3 femWeights{0, 0, 0};      // drag: the grabbed point's weights on femTri
    Vec3 velocity{0, 0, 0};        // release (throw; zero: none) and launch
    Vec3 position{0, 0, 0};        // launch
    bool sphere = false;           // launch
    Real size = Real(0.15);        // launch: half extent or radius
    Real density = Real(500);      // launch: kg/m^3 (the keys launch light bodies; a demo may throw steel)
    int copy = -1;                 // settings: which copy
    WorldSettings settings;        // settings
    std::string grasp;             // grasp: the event's name ("contact made", ...)
    Real time = 0;                 // grasp: the copy's time, s
    std::string detail;            // grasp: its figures
    Real pressure = 0;             // pressure: Pa
};

struct Session {
    std::string scene;
    std::vector<std::string> copies;          // labels
    std::vector<WorldSettings> settings;      // initial settings per copy
    long long steps = 0;
    std::vector<SessionEvent> events;
};

bool writeSession(const std::string& path, const Session& session, std::string* error);
bool readSession(const std::string& path, Session& session, std::string* error);

}  // namespace cs
