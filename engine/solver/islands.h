// Islands and sleeping (WorldSettings::sleeping; issue 20).
//
// An island is a set of dynamic bodies joined by the step's constraint rows (contacts, joints,
// PEG's gap members) or by the step's broad-phase pairs: union-find over the awake dynamic
// bodies; static bodies join nothing, so two boxes resting apart on the ground are two islands.
// The pairs join too because waking goes by them: two islands whose grown AABBs overlap
// without a contact would otherwise wake each other in turn, each as the other fell asleep. A body is a sleep candidate
// while its speeds stay below kSleepLinearSpeed and kSleepAngularSpeed (Box2D's defaults); it
// counts the seconds it has been one. An island falls asleep when every body of it has been a
// candidate for kTimeToSleep: its velocities are set to zero and its poses are kept exactly.
// A body in a joint with a drive is never a candidate: an island with a servo in it stays awake
// (the grasp's fingers hold an object that the sensors must keep seeing in contact).
//
// A sleeping body is left out of the solve (World's active flags: zero inverse mass, like the
// ground) and out of integration; pairs of parts with no awake dynamic body are dropped after
// the broad phase, so a sleeping pile costs its AABBs and nothing else. A sleeping island wakes
// as a whole when an awake dynamic body's margin-grown AABB touches one of its bodies or a joint
// ties it to one (before the step's narrow phase, so the same step solves it), when the mouse
// drags one of its bodies, when a joint's drive target or anchors change, or on World::wakeAll
// (the app's edits). State carries the sleep data, so copies of a state sleep alike.
// A sleeping island keeps its contacts' last impulses in State::warm (keepSleepingWarm /
// mergeSleepingWarm around the step's store, which keeps only the step's own contacts), so that
// when it wakes its first solve starts warm from the impulses that held it at rest.
//
// Partial waking (WorldSettings::partialWake, on by default; issue 35). Woken whole, a sleeping
// pile wakes at full cost for as long as one of its bodies is dragged: the default pyramid's
// 91 boxes all touch, so a drag of any box woke all of them, and the island could not sleep
// again while the drag lasted. Instead the drag wakes the dragged body alone, and the rest of
// the island stays asleep as long as its bodies' loads stay as they were at rest:
//  - A sleeping body is in equilibrium under gravity and the impulses its rows took when it
//    fell asleep (recorded per neighbour: State::restImpulses). While it sleeps it is static
//    to the solve, so an awake neighbour rests on it as on the ground. After each solve, the
//    impulse each sleeping body now takes from its awake neighbours is compared with what those
//    neighbours gave it at rest (wakeDisturbed); where the force or the moment differs by more
//    than kWakeLoadFraction of its weight (the moment: of its weight times its reach), the body
//    wakes and the step is solved again with it, until no sleeping body's load has changed
//    (kMaxWakeResolves re-solves; past that, the disturbed bodies' whole islands wake).
//    So a body that a disturbance reaches wakes in the step it reaches it, and the loads that
//    the still sleeping bodies carry differ from the step's solution with them awake only by
//    what moves them less than that fraction of their weight.
//  - A body woken alone (the dragged body, a disturbed body) does not wake the islands its
//    margin-grown AABB touches: the load check decides. Any other awake body still wakes a whole
//    island by touching it (a box dropped on a sleeping stack), as before.
//  - The dragged body is left out of the island graph, so the bodies around it fall asleep again
//    while it is held still (it never sleeps while dragged); moving it changes their loads and
//    wakes them.
//
// Settling after a disturbance. A pile whose solve ends its steps at the Newton cap far from
// converged need not come to rest: after an off-centre drag of the default pyramid's top box the
// whole wall rocks out of its plane on its base edges (period 0.15 s, 0.066 m/s at the top), and
// each landing's solve, stopped at 8 iterations with a merit of 0.3-1.2 m/s (friction outside its
// cone, the load still partly on the lifting edge), gives the impact's energy back, so the island
// never stays below the sleep speed (docs/speed.md). With sleeping on, World lets a step that
// reaches the cap with its merit above kFarNewtonMerit go on to kFarNewtonFactor times the cap
// (SolverSettings::farNewtonIterations); the landings are then damped and the pile sleeps. Steps
// that end the cap below that merit (the resting pyramid's) are unchanged, bit for bit. So sleeping
// also changes the far-off steps' solve: a run without sleeping compared with one with it sets the
// same SolverSettings::farNewtonIterations (tests/test_sleeping.cpp); table_pile then sleeps whole
// between 6 and 8 s (at 8 s: 1.8e-4 m from where the awake run comes to rest).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/collision/broad_phase.h"
#include "engine/model.h"
#include "engine/settings.h"
#include "engine/solver/islands_hd.h"
#include "engine/solver/constraint_rows.h"
#include "engine/state.h"

namespace cs {

// kSleepLinearSpeed, kSleepAngularSpeed, kTimeToSleep: islands_hd.h (shared with the step pipeline)
constexpr Real kWakeLoadFraction = Real(0.05);   // partial waking: a load change that wakes, / the weight
constexpr int kFarNewtonFactor = 2;              // with sleeping: the far Newton cap, times the cap
constexpr int kMaxWakeResolves = 8;              // partial waking: re-solves per step before whole islands wake

// Sleeping applies: settings.sleeping, with bodies the step integrates itself and no deformable
// body (the standard, PEG and CCP models, no FEM nodes). World::step and the step pipeline both ask.
inline bool sleepingApplies(const Model& model, const WorldSettings& settings) {
    const ContactModelType m = settings.solver.contactModel;
    return settings.sleeping && model.femNodeCount() == 0 &&
           (m == ContactModelType::Standard || m == ContactModelType::PEG || m == ContactModelType::CCP);
}

inline bool isAsleep(const State& state, int body) {
    return body >= 0 && body < (int)state.sleepIsland.size() && state.sleepIsland[body] >= 0;
}

// Sizes the sleep arrays to the model (bodies added since are awake). Enabled: wakes the
// islands of joints whose drive target or anchors changed since the last step. Disabled:
// wakes every body.
void prepareSleep(const Model& model, State& state, bool enabled);

// After the broad phase: wakes every sleeping island touched by a pair or a joint with an awake
// dynamic body (again until none is), then drops the pairs that have no awake dynamic body.
// partial: bodies woken alone (State::wokeAlone) wake nothing by touching.
void wakeTouchedIslands(const Model& model, State& state, std::vector<ShapePair>& pairs, bool partial = false);

// Partial waking, after the solve: the sleeping bodies whose load from their awake neighbours
// (rows' lambda J^T) differs from the rest impulses by more than kWakeLoadFraction of their
// weight wake alone (whole: their islands wake). gravity: |g|. Returns how many bodies woke.
int wakeDisturbed(const Model& model, State& state, const ConstraintRows& rows, const uint8_t* active,
                  Real gravity, Real h, bool whole);

// The body woken alone (partial waking): its island sleeps on.
void wakeAlone(State& state, int body);

// A body's reach: the largest distance from its centre of mass to a point of its shapes.
Real bodyReach(const Model& model, int body);

// Before the step's contact results replace warm: the entries of contacts with no awake dynamic
// body (a sleeping island's, whose pairs the step dropped), into kept. After: merges them back
// (warm stays sorted by key; the step's list has none of them).
void keepSleepingWarm(const Model& model, const State& state, const std::vector<WarmImpulse>& warm,
                      std::vector<WarmImpulse>& kept);
void mergeSleepingWarm(const std::vector<WarmImpulse>& kept, std::vector<WarmImpulse>& warm);

void wakeIsland(State& state, int body);   // the island body sleeps in; no-op when awake
void wakeAll(State& state);

// After integration: islands of the awake bodies (active[b] != 0, dynamic) from the rows and pairs,
// their sleep clocks advanced by h, the islands whose every body has slept long enough put to
// sleep. keepAwake (>= 0): a body that must not sleep (the dragged one; with partial waking also
// left out of the islands). The bodies that fall asleep record their rest impulses from rows.
// Returns the number of sleeping bodies.
int updateSleep(const Model& model, State& state, const ConstraintRows& rows, const std::vector<ShapePair>& pairs,
                const uint8_t* active, int keepAwake, Real h, bool partial = false);

}  // namespace cs
