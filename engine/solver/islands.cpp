// Islands and sleeping: see islands.h.
#include "engine/solver/islands.h"

#include <algorithm>

namespace cs {

namespace {

bool awakeDynamic(const Model& model, const State& state, int b) {
    return b >= 0 && !model.isStatic(b) && !isAsleep(state, b);
}

// Union-find over body indices, with path halving.
int findRoot(std::vector<int>& parent, int b) {
    while (parent[b] != b) b = parent[b] = parent[parent[b]];
    return b;
}

void unite(std::vector<int>& parent, int a, int b) {
    a = findRoot(parent, a);
    b = findRoot(parent, b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);   // the lowest index is the root: deterministic
}

// Wakes every body whose island is marked; returns whether any woke.
bool wakeMarked(State& state, const std::vector<uint8_t>& marked) {
    bool any = false;
    for (size_t b = 0; b < state.sleepIsland.size(); ++b)
        if (state.sleepIsland[b] >= 0 && marked[state.sleepIsland[b]]) {
            state.sleepIsland[b] = -1;
            state.sleepTime[b] = 0;
            if (b < state.wokeAlone.size()) state.wokeAlone[b] = 0;
            any = true;
        }
    return any;
}

bool restBefore(const RestImpulse& a, const RestImpulse& b) {
    return a.body != b.body ? a.body < b.body : a.other < b.other;
}

// The rows' impulses on the bodies that fell asleep this step, per neighbour, replace their
// rest impulses (State::restImpulses).
void recordRestImpulses(const Model& model, State& state, const ConstraintRows& rows,
                        const std::vector<uint8_t>& fellAsleep) {
    std::erase_if(state.restImpulses, [&](const RestImpulse& r) { return fellAsleep[r.body] != 0; });
    std::vector<RestImpulse> added;
    for (int i = 0; i < rows.size(); ++i) {
        const int body[2] = {rows.bodyA[i], rows.bodyB[i]};
        const Spatial* jacobian[2] = {&rows.jacobianA[i], &rows.jacobianB[i]};
        for (int side = 0; side < 2; ++side) {
            const int x = body[side], other = body[1 - side];
            if (x < 0 || !fellAsleep[x] || other < 0 || model.isStatic(other)) continue;
            added.push_back(RestImpulse{x, other, rows.lambda[i] * *jacobian[side]});
        }
    }
    std::stable_sort(added.begin(), added.end(), restBefore);   // a pair's rows summed in row order
    const size_t kept = state.restImpulses.size();
    for (const RestImpulse& r : added) {   // one entry per (body, neighbour): the sum of their rows
        RestImpulse* last = state.restImpulses.size() > kept ? &state.restImpulses.back() : nullptr;
        if (last && last->body == r.body && last->other == r.other) last->impulse = last->impulse + r.impulse;
        else state.restImpulses.push_back(r);
    }
    std::sort(state.restImpulses.begin(), state.restImpulses.end(), restBefore);
}

}  // namespace

void prepareSleep(const Model& model, State& state, bool enabled) {
    const int nb = model.bodyCount();
    state.sleepTime.resize(nb, Real(0));
    state.sleepIsland.resize(nb, -1);
    state.wokeAlone.resize(nb, 0);
    if (!enabled) {
        wakeAll(state);
        state.jointControl.clear();
        state.restImpulses.clear();
        return;
    }
    const int nj = (int)model.joints.size();
    const bool known = (int)state.jointControl.size() == 7 * nj;
    state.jointControl.resize(7 * nj);
    for (int j = 0; j < nj; ++j) {
        const Joint& joint = model.joints[j];
        const Real now[7] = {joint.driveTarget, joint.anchorA.x, joint.anchorA.y, joint.anchorA.z,
                             joint.anchorB.x, joint.anchorB.y, joint.anchorB.z};
        Real* seen = &state.jointControl[7 * j];
        if (known && !std::equal(now, now + 7, seen)) {
            wakeIsland(state, joint.bodyA);
            wakeIsland(state, joint.bodyB);
            for (int b : {joint.bodyA, joint.bodyB})
                if (b >= 0) state.sleepTime[b] = 0;
        }
        std::copy(now, now + 7, seen);
    }
}

void keepSleepingWarm(const Model& model, const State& state, const std::vector<WarmImpulse>& warm,
                      std::vector<WarmImpulse>& kept) {
    kept.clear();
    const int shapes = model.shapeCount();
    auto sleeper = [&](uint64_t shape) {   // a shape of a sleeping or static body
        return shape < uint64_t(shapes) && !awakeDynamic(model, state, model.shapeBody[shape]);
    };
    for (const WarmImpulse& w : warm)
        if (sleeper(w.key.shapes >> 32) && sleeper(w.key.shapes & 0xffffffffu)) kept.push_back(w);
}

void mergeSleepingWarm(const std::vector<WarmImpulse>& kept, std::vector<WarmImpulse>& warm) {
    if (kept.empty()) return;
    const size_t mid = warm.size();
    warm.insert(warm.end(), kept.begin(), kept.end());
    std::inplace_merge(warm.begin(), warm.begin() + mid, warm.end(),
                       [](const WarmImpulse& a, const WarmImpulse& b) { return a.key < b.key; });
}

void wakeIsland(State& state, int body) {
    if (!isAsleep(state, body)) return;
    const int island = state.sleepIsland[body];
    for (size_t b = 0; b < state.sleepIsland.size(); ++b)
        if (state.sleepIsland[b] == island) {
            state.sleepIsland[b] = -1;
            state.sleepTime[b] = 0;
            if (b < state.wokeAlone.size()) state.wokeAlone[b] = 0;
        }
}

void wakeAlone(State& state, int body) {
    if (body < 0 || body >= (int)state.sleepIsland.size()) return;
    state.wokeAlone.resize(state.sleepIsland.size(), 0);
    if (isAsleep(state, body)) {
        state.sleepIsland[body] = -1;
        state.sleepTime[body] = 0;
    }
    state.wokeAlone[body] = 1;
}

void wakeAll(State& state) {
    std::fill(state.sleepIsland.begin(), state.sleepIsland.end(), -1);
    std::fill(state.sleepTime.begin(), state.sleepTime.end(), Real(0));
    std::fill(state.wokeAlone.begin(), state.wokeAlone.end(), uint8_t(0));
}

Real bodyReach(const Model& model, int b) {
    Real reach = 0;
    for (int k = model.bodyFirstShape[b], e = k + model.bodyShapeCount[b]; k < e; ++k)
        reach = std::fmax(reach, length(model.shapeLocal[k].pos) + model.shapeRadius[k]);
    return reach;
}

int wakeDisturbed(const Model& model, State& state, const ConstraintRows& rows, const uint8_t* active,
                  Real gravity, Real h, bool whole) {
    const int nb = model.bodyCount();
    if (std::none_of(state.sleepIsland.begin(), state.sleepIsland.end(), [](int i) { return i >= 0; })) return 0;
    auto awake = [&](int b) { return b >= 0 && b < nb && active[b] && !model.isStatic(b); };
    // change_b = sum over rows with an awake body of lambda_i J_{i,b}^T, minus the rest impulses
    // from the neighbours now awake (those from sleeping and static ones are unchanged).
    const Spatial zero{{0, 0, 0}, {0, 0, 0}};
    std::vector<Spatial> change(nb, zero);
    std::vector<uint8_t> touched(nb, 0);
    for (const RestImpulse& r : state.restImpulses)
        if (isAsleep(state, r.body) && awake(r.other)) {
            change[r.body] = change[r.body] - r.impulse;
            touched[r.body] = 1;
        }
    for (int i = 0; i < rows.size(); ++i) {
        const int a = rows.bodyA[i], b = rows.bodyB[i];
        if (!awake(a) && !awake(b)) continue;
        if (isAsleep(state, a)) {
            change[a] = change[a] + rows.lambda[i] * rows.jacobianA[i];
            touched[a] = 1;
        }
        if (isAsleep(state, b)) {
            change[b] = change[b] + rows.lambda[i] * rows.jacobianB[i];
            touched[b] = 1;
        }
    }
    int woken = 0;
    for (int b = 0; b < nb; ++b) {
        if (!touched[b] || !isAsleep(state, b) || !(model.invMass[b] > 0)) continue;
        const Real limit = kWakeLoadFraction * gravity * h / model.invMass[b];   // of the weight's impulse m |g| h
        if (length(change[b].lin) > limit || length(change[b].ang) > limit * bodyReach(model, b)) {
            if (whole) wakeIsland(state, b);
            else wakeAlone(state, b);
            ++woken;
        }
    }
    return woken;
}

void wakeTouchedIslands(const Model& model, State& state, std::vector<ShapePair>& pairs, bool partial) {
    const int nb = model.bodyCount();
    if (std::none_of(state.sleepIsland.begin(), state.sleepIsland.end(), [](int i) { return i >= 0; })) return;
    std::vector<uint8_t> marked(nb);
    auto alone = [&](int a) { return partial && a < (int)state.wokeAlone.size() && state.wokeAlone[a]; };
    auto touch = [&](int a, int b, bool& any) {   // a awake and dynamic, b asleep: b's island wakes
        for (int k = 0; k < 2; ++k, std::swap(a, b))
            if (awakeDynamic(model, state, a) && !alone(a) && isAsleep(state, b) && !marked[state.sleepIsland[b]]) {
                marked[state.sleepIsland[b]] = 1;
                any = true;
            }
    };
    for (bool any = true; any;) {
        any = false;
        for (const ShapePair& p : pairs) touch(model.shapeBody[p.shapeA], model.shapeBody[p.shapeB], any);
        for (const Joint& j : model.joints) touch(j.bodyA, j.bodyB, any);
        if (any) wakeMarked(state, marked);
    }
    std::erase_if(pairs, [&](const ShapePair& p) {
        return !awakeDynamic(model, state, model.shapeBody[p.shapeA]) &&
               !awakeDynamic(model, state, model.shapeBody[p.shapeB]);
    });
}

int updateSleep(const Model& model, State& state, const ConstraintRows& rows, const std::vector<ShapePair>& pairs,
                const uint8_t* active, int keepAwake, Real h, bool partial) {
    const int nb = model.bodyCount();
    // With partial waking the dragged body joins no island: what it touches may sleep around it.
    auto member = [&](int b) {
        return b >= 0 && b < nb && active[b] && !model.isStatic(b) && !(partial && b == keepAwake);
    };
    std::vector<int> parent(nb);
    for (int b = 0; b < nb; ++b) parent[b] = b;
    auto join = [&](int a, int b) {
        if (member(a) && member(b)) unite(parent, a, b);
    };
    for (int r = 0; r < rows.size(); ++r) {
        const int body[4] = {rows.bodyA[r], rows.bodyB[r], r < (int)rows.bodyC.size() ? rows.bodyC[r] : -1,
                             r < (int)rows.bodyD.size() ? rows.bodyD[r] : -1};
        for (int k = 1; k < 4; ++k) join(body[0] >= 0 ? body[0] : body[1], body[k]);
    }
    for (int g = 0; g < rows.gapMemberCount(); ++g) join(rows.gapBodyA[g], rows.gapBodyB[g]);
    for (const Joint& j : model.joints) join(j.bodyA, j.bodyB);
    for (const ShapePair& p : pairs) join(model.shapeBody[p.shapeA], model.shapeBody[p.shapeB]);

    // A driven joint is an actuator that may push at any time (a grasp's servos): its island stays awake.
    std::vector<uint8_t> driven(nb);
    for (const Joint& j : model.joints)
        for (int b : {j.bodyA, j.bodyB})
            if (j.drive && b >= 0) driven[b] = 1;
    // Each island's shortest time below the sleep speeds, kept at its root.
    std::vector<Real> islandTime(nb, Real(1e30));
    for (int b = 0; b < nb; ++b) {
        if (!member(b)) continue;
        const bool slow = belowSleepSpeeds(state.linVel[b], state.angVel[b]);
        state.sleepTime[b] = advancedSleepTime(state.sleepTime[b], slow, b != keepAwake && !driven[b], h);
        Real& t = islandTime[findRoot(parent, b)];
        t = std::min(t, state.sleepTime[b]);
    }
    int sleeping = 0;
    std::vector<uint8_t> fellAsleep(nb, 0);
    bool any = false;
    for (int b = 0; b < nb; ++b) {
        if (member(b) && islandTime[findRoot(parent, b)] >= kTimeToSleep) {
            state.sleepIsland[b] = findRoot(parent, b);
            state.linVel[b] = state.angVel[b] = Vec3{0, 0, 0};
            if (b < (int)state.wokeAlone.size()) state.wokeAlone[b] = 0;
            fellAsleep[b] = 1;
            any = true;
        }
        sleeping += isAsleep(state, b) ? 1 : 0;
    }
    if (partial && any) recordRestImpulses(model, state, rows, fellAsleep);
    return sleeping;
}

}  // namespace cs
