// The captured PLUS impact and its replay index; see impact_replay.h.
#include "app/gui/impact_replay.h"

#include <algorithm>
#include <cstdio>

namespace cs {

const char* impactPhaseName(int phase) {
    static const char* kNames[] = {"compressing", "expanding", "observing"};
    return phase >= 0 && phase < 3 ? kNames[phase] : "-";
}

const char* slipStateName(int state) {
    static const char* kNames[] = {"sliding", "rolling", "impending slip", "-"};
    return state >= 0 && state < 4 ? kNames[state] : "-";
}

void ImpactReplay::clear() {
    records.clear();
    copy = -1;
    tick = -1;
    captured = 0;
    selected = 0;
    index = 0;
    playing = false;
    justCaptured = false;
    serialSeen = plusLatestImpactSerial();
}

bool ImpactReplay::capture(const PlusStepData& plus, int copyIndex, long long appTick) {
    const long long serial = plus.impactSerial;
    if (serial <= serialSeen) return false;   // serials grow across worlds (plusLatestImpactSerial)
    serialSeen = serial;
    // Copies step in lockstep: within one step, the lowest copy's impact is kept.
    if (tick == appTick && copy >= 0 && copy < copyIndex) return false;
    records = plus.impacts;
    copy = copyIndex;
    tick = appTick;
    ++captured;
    selected = 0;
    index = 0;
    playing = false;
    playClock = 0;
    justCaptured = true;
    if (autoArrowLength) {
        Real size = 0;
        for (size_t b = 0; b < current()->bodies.size(); ++b) size = std::max(size, bodyRadius(int(b)));
        arrowLength = std::clamp(float(1.4 * size), 0.1f, 1.0f);
    }
    return true;
}

Real ImpactReplay::bodyRadius(int b) const {
    const PlusImpactRecord* r = current();
    Real radius = 0;
    for (int k = 0; k < points(); ++k) {
        const ImpactPoint& q = r->problem.points[k];
        if (q.bodyA == b || q.bodyB == b) radius = std::max(radius, length(pointWorld(k) - r->bodyPosition[b]));
    }
    return radius;
}

const PlusImpactRecord* ImpactReplay::current() const {
    if (records.empty()) return nullptr;
    return &records[std::clamp(selected, 0, (int)records.size() - 1)];
}

int ImpactReplay::intervals() const { return current() ? (int)current()->result.trace.size() : 0; }
int ImpactReplay::rounds() const { return current() ? current()->result.rounds : 0; }
int ImpactReplay::points() const { return current() ? (int)current()->problem.points.size() : 0; }

// Index i >= 1 is trace entry i - 1; index 0 (before the impact) shows the first interval's
// phases (the classification at the start of round 1) and no slip state.
int ImpactReplay::phase(int k, int i) const {
    const PlusImpactRecord* r = current();
    if (!r || r->result.trace.empty()) return int(ImpactPhase::Observing);
    i = std::clamp(i, 1, intervals());
    return r->result.trace[i - 1].phase[k];
}

int ImpactReplay::state(int k, int i) const {
    const PlusImpactRecord* r = current();
    if (!r || i <= 0 || r->result.trace.empty()) return int(SlipState::None);
    return r->result.trace[std::min(i, intervals()) - 1].state[k];
}

int ImpactReplay::round(int i) const {
    const PlusImpactRecord* r = current();
    if (!r || r->result.trace.empty()) return 0;
    return r->result.trace[std::clamp(i, 1, intervals()) - 1].round;
}

Vec3 ImpactReplay::impulse(int k, int i) const {
    const PlusImpactRecord* r = current();
    if (!r || i <= 0 || r->result.trace.empty()) return Vec3{0, 0, 0};
    return r->result.trace[std::min(i, intervals()) - 1].impulse[k];
}

Vec3 ImpactReplay::velocity(int k, int i) const {
    const PlusImpactRecord* r = current();
    if (!r) return Vec3{0, 0, 0};
    if (i <= 0 || r->result.trace.empty()) return r->result.velocityStart[k];
    return r->result.trace[std::min(i, intervals()) - 1].velocity[k];
}

Spatial ImpactReplay::bodyVelocity(int b, int i) const {
    const PlusImpactRecord* r = current();
    if (!r) return Spatial{{0, 0, 0}, {0, 0, 0}};
    if (i <= 0 || r->result.trace.empty()) return r->problem.velocity[b];
    return r->result.trace[std::min(i, intervals()) - 1].bodyVelocity[b];
}

bool ImpactReplay::flipped(int k) const {
    const ImpactPoint& q = current()->problem.points[k];
    return q.bodyA < 0 && q.bodyB >= 0;
}

Vec3 ImpactReplay::toWorld(int k, Vec3 v) const {
    const ImpactPoint& q = current()->problem.points[k];
    Vec3 w = v.x * q.t1 + v.y * q.t2 + v.z * q.normal;
    return flipped(k) ? -w : w;
}

Vec3 ImpactReplay::pointWorld(int k) const {
    const PotentialContact& c = current()->contacts[k];
    return Real(0.5) * (c.pointA + c.pointB);
}

void ImpactReplay::play(double wallDt) {
    if (!playing) return;
    if (index >= intervals()) {
        playing = false;
        return;
    }
    playClock += wallDt * rate;
    while (playClock >= 1 && index < intervals()) {
        playClock -= 1;
        ++index;
    }
    if (index >= intervals()) playing = false;
}

std::string ImpactReplay::pointName(const Model& model, int k) const {
    const PotentialContact& c = current()->contacts[k];
    auto name = [&](int b) { return b >= 0 && b < model.bodyCount() ? model.bodyName[b] : std::string("world"); };
    std::string text = flipped(k) ? name(c.bodyB) + "|" + name(c.bodyA) : name(c.bodyA) + "|" + name(c.bodyB);
    // Several points of one pair of bodies (a brick's vertices on the ground) get their index.
    for (int j = 0; j < points(); ++j) {
        const PotentialContact& o = current()->contacts[j];
        if (j != k && o.bodyA == c.bodyA && o.bodyB == c.bodyB) return text + "#" + std::to_string(k);
    }
    return text;
}

std::string ImpactReplay::report(const Model& model) const {
    const PlusImpactRecord* r = current();
    if (!r) return "impact-report none";
    char head[256];
    // Momentum and kinetic energy of the problem's bodies at the index shown.
    std::vector<Spatial> u;
    Vec3 momentum{0, 0, 0};
    for (size_t b = 0; b < r->problem.invMass.size(); ++b) {
        u.push_back(bodyVelocity(int(b), index));
        if (r->problem.invMass[b] > 0) momentum += u.back().lin / r->problem.invMass[b];
    }
    std::snprintf(head, sizeof head,
                  "impact-report copy=%d impacts=%zu rounds=%d intervals=%d points=%d index=%d round=%d "
                  "momentum=%.9g,%.9g,%.9g energy=%.9g",
                  copy, records.size(), rounds(), intervals(), points(), index, round(index) + 1,
                  double(momentum.x), double(momentum.y), double(momentum.z),
                  double(impactKineticEnergy(r->problem, u)));
    std::string line = head;
    for (int k = 0; k < points(); ++k) {
        char item[256];
        std::snprintf(item, sizeof item, " %s=%c%c", pointName(model, k).c_str(), "CEO"[std::clamp(phase(k, index), 0, 2)],
                      "SRI-"[std::clamp(state(k, index), 0, 3)]);
        line += item;
    }
    return line;
}

}  // namespace cs
