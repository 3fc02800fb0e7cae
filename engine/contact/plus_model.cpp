// PLUS as a contact model of the time stepper ([PLUS] sections 3-4): the impact event handler
// runs in preSolve, at frozen time and configuration, on the velocities at the beginning of the
// step; persistent contact is then the standard model's rows with zero restitution.
//
// Detection. A feature pair is impacting when it approaches faster than the capture velocity
// and would close within this step (gap + h v_z <= tolerance). It is proximal when it is
// impacting or already within the proximity tolerance ([PLUS] 3a, figure 6), so resting and
// touching pairs (Newton's cradle) take part as observers and can be induced into later rounds.
// Velocities are the state's, before gravity's h g is added: a body resting on the ground does
// not approach, so persistent contact never triggers impacts.
//
// Persistent contact (a pair that carried a normal impulse in the last step) never triggers an
// impact: resting bodies stay with the time stepper, whatever gravity adds within a step.
//
// Islands grow from the impacting pairs through proximal pairs and joints (below); each is one
// impact problem with its joints as bilateral constraints (eq. 2.1b), solved one after another
// on the CPU, dense, with Eigen.
#include "engine/contact/plus_model.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/collision/potential_contact.h"
#include "engine/contact/step_context.h"
#include "engine/solver/joint_rows.h"

namespace cs {

void buildStandardRows(const ContactStageInput& in, ConstraintRows& rows);
void storeStandardResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                          std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm);

namespace {

// The serials of recordings (PlusStepData::impactSerial), shared by every world and thread.
std::atomic<long long> gImpactSerial{0};

Vec3 pointVelocity(const State& st, int body, Vec3 p) {
    if (body < 0) return Vec3{0, 0, 0};
    return st.linVel[body] + cross(st.angVel[body], p - st.pos[body]);
}

// Persistent contact: the pair carried a normal impulse in the last step (the warm-start cache
// is sorted by key). Its approach is the time stepper's business, not an impact.
bool persistent(const State& st, const PotentialContact& c) {
    ContactKey key{(uint64_t(uint32_t(c.shapeA)) << 32) | uint32_t(c.shapeB), (uint64_t(c.featureA) << 32) | c.featureB};
    auto it = std::lower_bound(st.warm.begin(), st.warm.end(), key,
                               [](const WarmImpulse& w, const ContactKey& k) { return w.key < k; });
    return it != st.warm.end() && it->key == key && it->normal > 0;
}

Real minRestitution(const Model& model, const PlusSettings& s, int a, int b) {
    if (s.minRestitution >= 0) return s.minRestitution;
    Real ea = a >= 0 ? model.materials[model.bodyMaterial[a]].restitution : Real(1);
    Real eb = b >= 0 ? model.materials[model.bodyMaterial[b]].restitution : Real(1);
    return std::fmin(ea, eb);
}

}  // namespace

long long plusLatestImpactSerial() { return gImpactSerial.load(); }

void plusPreSolve(const ContactStageInput& in, BodyVelocities& bodies) {
    auto t0 = std::chrono::steady_clock::now();
    PlusStepData& data = in.context->plus;
    PlusStepReport& report = data.report;
    report = PlusStepReport{};
    const PlusSettings& s = in.settings.plus;
    const Model& model = in.model;
    const State& st = in.state;
    const int nb = model.bodyCount();
    const int npc = (int)in.potential.size();
    auto dynamic = [&](int b) { return b >= 0 && bodies.invMass[b] > 0; };

    std::vector<char> proximal(npc, 0), impacting(npc, 0);
    bool any = false;
    for (int i = 0; i < npc; ++i) {
        const PotentialContact& c = in.potential[i];
        if (!dynamic(c.bodyA) && !dynamic(c.bodyB)) continue;
        Real vz = dot(pointVelocity(st, c.bodyA, c.pointA) - pointVelocity(st, c.bodyB, c.pointB), c.normal);
        impacting[i] = vz < -s.captureVelocity && c.gap + in.h * vz <= s.proximityTolerance && !persistent(st, c);
        proximal[i] = impacting[i] || c.gap <= s.proximityTolerance;
        any = any || impacting[i];
    }
    if (!any) return;

    // Impact islands grow breadth-first from the impacting pairs' bodies through proximal pairs
    // and joints, up to maxIslandPoints proximal pairs: a ball dropped on a pyramid of resting
    // boxes involves the boxes near it; what lies beyond is left to the time stepper.
    std::vector<std::vector<int>> bodyContacts(nb);
    for (int i = 0; i < npc; ++i) {
        if (!proximal[i]) continue;
        if (dynamic(in.potential[i].bodyA)) bodyContacts[in.potential[i].bodyA].push_back(i);
        if (dynamic(in.potential[i].bodyB)) bodyContacts[in.potential[i].bodyB].push_back(i);
    }
    std::vector<std::vector<int>> bodyJoints(nb);
    for (size_t j = 0; j < model.joints.size(); ++j) {
        const Joint& jt = model.joints[j];
        if (dynamic(jt.bodyA)) bodyJoints[jt.bodyA].push_back(int(j));
        if (dynamic(jt.bodyB)) bodyJoints[jt.bodyB].push_back(int(j));
    }
    std::vector<int> island(nb, -1);         // island of each body
    std::vector<int> contactIsland(npc, -1); // island of each proximal pair taken
    int islandCount = 0;
    for (int i = 0; i < npc; ++i) {
        const PotentialContact& c0 = in.potential[i];
        if (!impacting[i] || contactIsland[i] >= 0) continue;
        const int id = islandCount++;
        int points = 0;
        std::vector<int> queue;
        auto visitBody = [&](int b) {
            if (dynamic(b) && island[b] < 0) {
                island[b] = id;
                queue.push_back(b);
            }
        };
        contactIsland[i] = id;
        ++points;
        visitBody(c0.bodyA);
        visitBody(c0.bodyB);
        for (size_t q = 0; q < queue.size(); ++q) {
            const int b = queue[q];
            for (int j : bodyJoints[b]) {
                visitBody(model.joints[j].bodyA);
                visitBody(model.joints[j].bodyB);
            }
            for (int k : bodyContacts[b]) {
                if (contactIsland[k] >= 0 || points >= s.maxIslandPoints) continue;
                contactIsland[k] = id;
                ++points;
                visitBody(in.potential[k].bodyA);
                visitBody(in.potential[k].bodyB);
            }
        }
    }

    ConstraintRows jointRows;
    if (!model.joints.empty()) buildJointRows(model, st, in.h, jointRows);

    for (int id = 0; id < islandCount; ++id) {
        ImpactProblem prob;
        std::vector<int> local(nb, -1), global;
        for (int b = 0; b < nb; ++b)
            if (island[b] == id) {
                local[b] = (int)global.size();
                global.push_back(b);
                prob.invMass.push_back(bodies.invMass[b]);
                prob.invInertia.push_back(bodies.invInertia[b]);
                prob.velocity.push_back(Spatial{st.linVel[b], st.angVel[b]});
            }
        std::vector<int> contactOf;   // problem point -> potential contact
        for (int k = 0; k < npc; ++k) {
            const PotentialContact& c = in.potential[k];
            if (contactIsland[k] != id) continue;
            ImpactPoint q;   // a body outside the island (or static) is fixed for the impact
            q.bodyA = c.bodyA >= 0 ? local[c.bodyA] : -1;
            q.bodyB = c.bodyB >= 0 ? local[c.bodyB] : -1;
            q.rA = c.bodyA >= 0 ? c.pointA - st.pos[c.bodyA] : Vec3{0, 0, 0};
            q.rB = c.bodyB >= 0 ? c.pointB - st.pos[c.bodyB] : Vec3{0, 0, 0};
            q.normal = c.normal;
            tangentBasis(c.normal, q.t1, q.t2);
            q.mu = mixFriction(model, c.bodyA, c.bodyB, in.settings.frictionScale);
            q.minRestitution = minRestitution(model, s, c.bodyA, c.bodyB);
            prob.points.push_back(q);
            contactOf.push_back(k);
        }
        for (int r = 0; r < jointRows.size(); ++r) {
            int a = jointRows.bodyA[r], b = jointRows.bodyB[r];
            bool inA = a >= 0 && local[a] >= 0, inB = b >= 0 && local[b] >= 0;
            if (!(inA || inB) || jointRows.softness[r] != 0) continue;
            ImpactBilateral bil;
            bil.bodyA = inA ? local[a] : -1;
            bil.bodyB = inB ? local[b] : -1;
            bil.jacobianA = jointRows.jacobianA[r];
            bil.jacobianB = jointRows.jacobianB[r];
            prob.bilateral.push_back(bil);
        }
        ImpactResult res = solvePlusImpact(prob, s, data.recordImpacts);
        for (size_t k = 0; k < global.size(); ++k) {
            bodies.unconstrained[global[k]].lin += res.deltaVelocity[k].lin;
            bodies.unconstrained[global[k]].ang += res.deltaVelocity[k].ang;
        }
        ++report.impacts;
        report.rounds += res.rounds;
        report.intervals += res.intervals;
        report.pointCount += (int)prob.points.size();
        report.bilateralRows += (int)prob.bilateral.size();
        for (size_t k = 0; k < contactOf.size(); ++k) {
            const ImpactPoint& q = prob.points[k];
            PlusPointReport pr;
            pr.potential = in.potential[contactOf[k]];
            pr.phase = res.lastPhase[k];
            pr.state = res.lastState[k];
            pr.rounds = res.rounds;
            pr.impulse = res.impulse[k].x * q.t1 + res.impulse[k].y * q.t2 + res.impulse[k].z * q.normal;
            report.points.push_back(pr);
        }
        if (data.recordImpacts) {
            if (id == 0) {
                data.impacts.clear();
                data.impactSerial = ++gImpactSerial;
            }
            PlusImpactRecord rec;
            rec.time = st.time;
            rec.bodies = global;
            for (int b : global) rec.bodyPosition.push_back(st.pos[b]);
            for (int k : contactOf) rec.contacts.push_back(in.potential[k]);
            rec.problem = std::move(prob);
            rec.result = std::move(res);
            data.impacts.push_back(std::move(rec));
        }
    }
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void buildPlusRows(const ContactStageInput& in, ConstraintRows& rows) {
    buildStandardRows(in, rows);   // persistent contact: the time stepper, zero restitution
}

void storePlusResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                      std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    storeStandardResults(in, rows, bodies, contacts, warm);
    for (const PlusPointReport& pr : in.context->plus.report.points)
        for (Contact& c : contacts)
            if (c.geometry.shapeA == pr.potential.shapeA && c.geometry.shapeB == pr.potential.shapeB &&
                c.geometry.featureA == pr.potential.featureA && c.geometry.featureB == pr.potential.featureB) {
                c.impactPhase = pr.phase;
                c.impactState = pr.state;
                c.impactRounds = pr.rounds;
                c.impactImpulse = pr.impulse;
            }
}

void drawPlusAnnotations(const std::vector<Contact>& contacts, DebugDraw& draw) {
    static const char* kPhase[] = {"compressing", "expanding", "observing"};
    static const char* kState[] = {"sliding", "rolling", "impending slip", "-"};
    const Color colors[3] = {{1.0f, 0.3f, 0.2f, 1}, {0.2f, 0.8f, 1.0f, 1}, {0.7f, 0.7f, 0.7f, 1}};
    if (!draw.flags.constraintGroups) return;   // the model's own layer (debug_draw.h), as PEG's
    for (const Contact& c : contacts) {
        if (c.impactPhase < 0) continue;
        Vec3 p = c.geometry.pointB;
        Color col = colors[c.impactPhase];
        if (draw.drawPoint) draw.drawPoint(p, 10.0f, col, draw.context);
        if (draw.drawLine) draw.drawLine(p, p + Real(0.1) * c.impactImpulse, col, draw.context);   // 0.1 m per N s
        if (draw.drawText) {
            char text[160];
            std::snprintf(text, sizeof text, "%s, %s, |pi| %.3g N s, %d round%s", kPhase[c.impactPhase],
                          kState[c.impactState >= 0 && c.impactState < 4 ? c.impactState : 3],
                          double(length(c.impactImpulse)), c.impactRounds, c.impactRounds == 1 ? "" : "s");
            draw.drawText(p + Vec3{0, 0, Real(0.05)}, text, col, draw.context);
        }
    }
}

}  // namespace cs
