// The scenarios of [PLUS] section 4 (plus_examples.h).
#include "engine/contact/plus_examples.h"

#include <algorithm>
#include <cmath>

namespace cs {

namespace {

int addPlainBody(Model& m, const char* name, Real mass, Vec3 inertiaDiag, Vec3 pos, Quat rot, Vec3 v, Vec3 w) {
    m.bodyName.push_back(name);
    m.mass.push_back(mass);
    m.invMass.push_back(1 / mass);
    m.inertiaLocal.push_back(mat3Diag(inertiaDiag));
    m.invInertiaLocal.push_back(mat3Diag(Vec3{1 / inertiaDiag.x, 1 / inertiaDiag.y, 1 / inertiaDiag.z}));
    m.bodyMaterial.push_back(0);
    m.bodyFirstShape.push_back(0);
    m.bodyShapeCount.push_back(0);
    m.bodySpawnTime.push_back(0);
    m.bodyColor.push_back(Color3{0.6f, 0.6f, 0.65f});
    m.bodyOpacity.push_back(1.f);
    m.initialPos.push_back(pos);
    m.initialRot.push_back(rot);
    m.initialLinVel.push_back(v);
    m.initialAngVel.push_back(w);
    if (m.materials.empty()) m.materials.push_back(Material{});
    return m.bodyCount() - 1;
}

void finishState(PlusExample& ex) {
    const Model& m = ex.model;
    ex.state = State{};
    ex.state.pos = m.initialPos;
    ex.state.rot = m.initialRot;
    ex.state.linVel = m.initialLinVel;
    ex.state.angVel = m.initialAngVel;
    for (int b = 0; b < m.bodyCount(); ++b) {
        Mat3 R = toMat3(m.initialRot[b]);
        ex.problem.invMass.push_back(m.invMass[b]);
        ex.problem.invInertia.push_back(R * m.invInertiaLocal[b] * transpose(R));
        ex.problem.velocity.push_back(Spatial{m.initialLinVel[b], m.initialAngVel[b]});
    }
}

}  // namespace

Quat brickExample1Orientation() {
    // Figure 7 gives no angles. This tilt (0.4 rad about X after -0.4 rad about Y) puts one
    // vertex lowest with its lever arm out of the plane of motion, so the sliding direction turns
    // during the impact, and it gives the three behaviours of figure 8: mu = 0.125 slides
    // throughout, 0.225 starts rolling in expansion, 0.325 in compression.
    return normalize(quatFromAxisAngle(Vec3{1, 0, 0}, Real(0.4)) * quatFromAxisAngle(Vec3{0, 1, 0}, Real(-0.4)));
}

Quat brickExample2Orientation() { return quatFromAxisAngle(Vec3{0, 1, 0}, Real(M_PI / 2)); }

PlusExample brickExample(Quat rot, Vec3 velocity, Real mu, Real minRestitution, Real tolerance) {
    PlusExample ex;
    const Real radius = Real(0.1);
    const Vec3 half{Real(0.2), Real(0.3), Real(0.4)};
    Vec3 corners[8];
    Real lowest = Real(1e30);
    for (int i = 0; i < 8; ++i) {
        corners[i] = rotate(rot, Vec3{(i & 1) ? half.x : -half.x, (i & 2) ? half.y : -half.y, (i & 4) ? half.z : -half.z});
        lowest = std::min(lowest, corners[i].z - radius);
    }
    Vec3 pos{0, 0, -lowest};   // lowest sphere point on z = 0
    addPlainBody(ex.model, "brick", 2, Vec3{Real(0.167), Real(0.133), Real(0.0867)}, pos, rot, velocity, {0, 0, 0});
    ex.model.materials[0].friction = mu;
    ex.model.materials[0].restitution = minRestitution;
    finishState(ex);
    for (int i = 0; i < 8; ++i) {
        if (corners[i].z - radius - lowest > tolerance) continue;
        Vec3 p = pos + corners[i] - Vec3{0, 0, radius};
        ImpactPoint q;
        q.bodyA = 0;
        q.rA = p - pos;
        q.normal = Vec3{0, 0, 1};
        q.t1 = Vec3{1, 0, 0};
        q.t2 = Vec3{0, 1, 0};
        q.mu = mu;
        q.minRestitution = minRestitution;
        ex.problem.points.push_back(q);
        CompliantContact c;
        c.bodyA = 0;
        c.localA = rotateInv(rot, corners[i]);
        c.radiusA = radius;
        c.localB = Vec3{0, 0, 0};
        c.normalLocalB = Vec3{0, 0, 1};
        c.curvature = radius;
        c.mu = mu;
        ex.contacts.push_back(c);
        ex.pointWorld.push_back(p);
        ex.pointBody.push_back(0);
    }
    return ex;
}

PlusExample cradleExample(int balls, Real speed, Real minRestitution) {
    PlusExample ex;
    const Real r = Real(0.25), m = 1, I = Real(0.4) * m * r * r;
    static const char* names[] = {"ball_0", "ball_1", "ball_2", "ball_3", "ball_4", "ball_5", "ball_6", "ball_7"};
    balls = std::min(balls, 8);
    for (int b = 0; b < balls; ++b)
        addPlainBody(ex.model, names[b], m, Vec3{I, I, I}, Vec3{Real(2 * r * (balls - 1 - b)), 0, r}, quatIdentity(),
                     b == 0 ? Vec3{-speed, 0, 0} : Vec3{0, 0, 0}, {0, 0, 0});
    ex.model.materials[0].friction = 0;
    ex.model.materials[0].restitution = minRestitution;
    finishState(ex);
    for (int b = 0; b + 1 < balls; ++b) {
        // A = ball b (on the +X side), B = ball b + 1: the normal from B to A is +X.
        ImpactPoint q;
        q.bodyA = b;
        q.bodyB = b + 1;
        q.normal = Vec3{1, 0, 0};
        q.rA = Vec3{-r, 0, 0};
        q.rB = Vec3{r, 0, 0};
        q.t1 = Vec3{0, 1, 0};
        q.t2 = Vec3{0, 0, 1};
        q.mu = 0;
        q.minRestitution = minRestitution;
        ex.problem.points.push_back(q);
        CompliantContact c;
        c.bodyA = b;
        c.bodyB = b + 1;
        c.radiusA = c.radiusB = r;
        c.sphereSphere = true;
        c.curvature = r / 2;
        c.mu = 0;
        ex.contacts.push_back(c);
        ex.pointWorld.push_back(ex.state.pos[b] - Vec3{r, 0, 0});
        ex.pointBody.push_back(b);
    }
    return ex;
}

Vec3 examplePointVelocity(const PlusExample& ex, int point, const std::vector<Vec3>& linVel,
                          const std::vector<Vec3>& angVel) {
    int b = ex.pointBody[point];
    return linVel[b] + cross(angVel[b], ex.pointWorld[point] - ex.state.pos[b]);
}

}  // namespace cs
