// The PLUS impact replay: the app keeps the last impact the PLUS model resolved, with its
// per-interval trace ([PLUS] Uchida, Sherman, Delp 2015, Algorithms 1-2), so a person can study
// it paused, interval by interval. Time and configuration are frozen during a PLUS impact, so a
// replay shows the velocities and impulses evolving, not motion.
//
// Replay index i runs from 0 (before the impact: the velocities at its start, no impulse) to N,
// the number of intervals; index i >= 1 shows interval i's phase (compressing, expanding,
// observing: one per round, table 2) and slip state (sliding, rolling, impending slip: table 1)
// per point, and the accumulated impulse and relative velocity at the end of the interval.
// The window and the 3D overlay are drawn in impact_panel.cpp; this header is GL-free.
#pragma once

#include <string>
#include <vector>

#include "engine/contact/plus_model.h"
#include "engine/model.h"

namespace cs {

struct ImpactReplay {
    // ---- the captured impact ----
    std::vector<PlusImpactRecord> records;   // the impacts of the last substep that had any
    int copy = -1;                     // the copy they came from (-1: none yet)
    long long tick = -1;               // the app step that resolved them
    long long serialSeen = 0;          // the latest PlusStepData::impactSerial already captured
    int captured = 0;                  // impacts captured since the scene was loaded

    // ---- what the window shows ----
    int selected = 0;                  // record shown (an island of that substep)
    int index = 0;                     // replay index 0..N (see above)
    bool playing = false;
    float rate = 4;                    // intervals per second while playing
    double playClock = 0;
    bool pauseOnImpact = true;         // pause the simulation when an impact is captured
    bool overlay = true;               // arrows and colours in the 3D view (when paused)
    float arrowLength = 0.35f;         // m: the longest impulse / velocity arrow of the impact
    bool autoArrowLength = true;       // set from the bodies' size on capture until the user sets it
    int impulsePlot = 0;               // 0 normal pi_z, 1 tangential |pi_xy|
    int velocityPlot = 0;              // 0 tangential |v_xy|, 1 normal v_z
    bool justCaptured = false;         // set by capture(); the frame loop pauses on it

    void clear();
    // Takes a copy's recorded impacts (its world's stepContext().plus) when they are newer than
    // those seen (call after each copy's step).
    bool capture(const PlusStepData& plus, int copyIndex, long long appTick);

    const PlusImpactRecord* current() const;
    int intervals() const;             // N of the shown record
    int rounds() const;
    int points() const;
    // Values at replay index i (clamped to 0..N), point k, problem body b.
    int phase(int k, int i) const;     // ImpactPhase
    int state(int k, int i) const;     // SlipState (None before the impact)
    int round(int i) const;            // 0-based round of the interval shown
    Vec3 impulse(int k, int i) const;  // accumulated (x, y, z) = (t1, t2, n) frame, N s
    Vec3 velocity(int k, int i) const; // relative velocity in the point's frame, m/s
    Spatial bodyVelocity(int b, int i) const;
    // (t1, t2, n) frame -> world, on the point's moving body: the impulse on A and the velocity
    // of A relative to B, or on B and of B relative to A when A is fixed (the ground).
    Vec3 toWorld(int k, Vec3 local) const;
    bool flipped(int k) const;         // A is fixed for the impact and B is not
    Vec3 pointWorld(int k) const;            // contact point, midway between the features
    // Size of the impact's bodies: the largest distance from a body's centre of mass to one of
    // its points (m); frames the camera and scales the arrows.
    Real bodyRadius(int problemBody) const;

    // Advances a playing replay by wallDt seconds; stops at N.
    void play(double wallDt);

    // "ball_0|ball_1": the two bodies of point k, the moving one first ("#k" when a pair has
    // several points).
    std::string pointName(const Model& model, int k) const;
    // One line for scripted tests: rounds, intervals, the index shown, its round and per-point
    // phase and state, the bodies' total momentum and kinetic energy at that index.
    std::string report(const Model& model) const;
};

const char* impactPhaseName(int phase);
const char* slipStateName(int state);

// Colours of the phases (point markers, timeline cells; as PLUS's own annotations) and of the slip
// states (arrows, timeline stripes).
inline const Color kImpactPhaseColors[3] = {{1.0f, 0.30f, 0.20f, 1}, {0.20f, 0.80f, 1.0f, 1}, {0.55f, 0.55f, 0.58f, 1}};
inline const Color kImpactStateColors[4] = {{1.0f, 0.65f, 0.10f, 1}, {0.30f, 0.90f, 0.30f, 1}, {0.95f, 0.35f, 0.95f, 1},
                                            {0.60f, 0.60f, 0.60f, 1}};
inline Color impactPhaseColor(int p) { return kImpactPhaseColors[p < 0 ? 0 : p > 2 ? 2 : p]; }
inline Color impactStateColor(int s) { return kImpactStateColors[s < 0 ? 0 : s > 3 ? 3 : s]; }

}  // namespace cs
