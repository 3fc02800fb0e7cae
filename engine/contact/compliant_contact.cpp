// Compliant contact: forces (eqs. 4.1-4.2 and the Stribeck curve) and the error-controlled
// Runge-Kutta-Merson integration through the collision (compliant_contact.h).
#include "engine/contact/compliant_contact.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "engine/collision/broad_phase.h"
#include "engine/contact/contact_model.h"
#include "engine/solver/integrate.h"
#include "engine/solver/joint_rows.h"

namespace cs {

void makeCompliantContacts(const Model& model, const State& state, const std::vector<PotentialContact>& potential,
                           const WorldSettings& settings, std::vector<CompliantContact>& out) {
    out.clear();
    for (const PotentialContact& p : potential) {
        CompliantContact c;
        c.bodyA = p.bodyA;
        c.bodyB = p.bodyB;
        const bool sphereA = model.shapeType[p.shapeA] == ShapeType::Sphere;
        const bool sphereB = model.shapeType[p.shapeB] == ShapeType::Sphere;
        // A sphere keeps its centre and radius; a polytope feature its witness point.
        Vec3 cA = sphereA ? shapeWorldTransform(model, state, p.shapeA).pos : p.pointA;
        Vec3 cB = sphereB ? shapeWorldTransform(model, state, p.shapeB).pos : p.pointB;
        c.radiusA = sphereA ? model.shapeRadius[p.shapeA] : 0;
        c.radiusB = sphereB ? model.shapeRadius[p.shapeB] : 0;
        c.localA = p.bodyA >= 0 ? rotateInv(state.rot[p.bodyA], cA - state.pos[p.bodyA]) : cA;
        c.localB = p.bodyB >= 0 ? rotateInv(state.rot[p.bodyB], cB - state.pos[p.bodyB]) : cB;
        c.normalLocalB = p.bodyB >= 0 ? rotateInv(state.rot[p.bodyB], p.normal) : p.normal;
        c.sphereSphere = sphereA && sphereB;
        Real rA = sphereA ? c.radiusA : settings.compliant.radius, rB = sphereB ? c.radiusB : Real(0);
        c.curvature = rB > 0 ? rA * rB / (rA + rB) : rA;   // relative curvature, flat B: R = rA
        c.mu = mixFriction(model, p.bodyA, p.bodyB, settings.frictionScale);
        out.push_back(c);
    }
}

namespace {

using VecX = Eigen::VectorXd;
constexpr int kBodyDof = 13;   // x(3) q(4) v(3) w(3)

struct System {
    const Model& model;
    const State& base;
    const std::vector<int>& bodies;          // moving bodies
    const std::vector<int>& slot;            // (model bodies) index into bodies or -1
    const std::vector<CompliantContact>& contacts;
    const WorldSettings& settings;
    mutable int evaluations = 0;
};

Vec3 v3(const VecX& y, int i) { return Vec3{Real(y(i)), Real(y(i + 1)), Real(y(i + 2))}; }
void put(VecX& y, int i, Vec3 v) {
    y(i) = v.x;
    y(i + 1) = v.y;
    y(i + 2) = v.z;
}
Quat quatAt(const VecX& y, int i) { return normalize(Quat{Real(y(i)), Real(y(i + 1)), Real(y(i + 2)), Real(y(i + 3))}); }

// Pose and velocity of a model body at y (the base state for bodies that do not move).
struct Pose { Vec3 x, v, w; Quat q; };
Pose poseOf(const System& s, const VecX& y, int body) {
    if (body < 0) return Pose{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, quatIdentity()};
    int k = s.slot[body];
    if (k < 0) return Pose{s.base.pos[body], s.base.linVel[body], s.base.angVel[body], s.base.rot[body]};
    int o = kBodyDof * k;
    return Pose{v3(y, o), v3(y, o + 7), v3(y, o + 10), quatAt(y, o + 3)};
}

State stateAt(const System& s, const VecX& y) {
    State st = s.base;
    for (size_t k = 0; k < s.bodies.size(); ++k) {
        Pose p = poseOf(s, y, s.bodies[k]);
        st.pos[s.bodies[k]] = p.x;
        st.rot[s.bodies[k]] = p.q;
        st.linVel[s.bodies[k]] = p.v;
        st.angVel[s.bodies[k]] = p.w;
    }
    return st;
}

// A's point (sphere centre), the normal from B to A and the gap at poses a, b.
struct ContactFrame { Vec3 cA, n; Real gap; };
ContactFrame contactFrame(const Pose& a, const Pose& b, const CompliantContact& c) {
    Vec3 cA = c.bodyA >= 0 ? a.x + rotate(a.q, c.localA) : c.localA;
    Vec3 cB = c.bodyB >= 0 ? b.x + rotate(b.q, c.localB) : c.localB;
    Vec3 n = c.sphereSphere ? normalize(cA - cB) : (c.bodyB >= 0 ? rotate(b.q, c.normalLocalB) : c.normalLocalB);
    return ContactFrame{cA, n, dot(cA - cB, n) - c.radiusA - c.radiusB};
}

// Contact force on A at the contact point; also the penetration.
struct ContactForce { Vec3 force, point; Real penetration; };
ContactForce contactForce(const System& s, const VecX& y, const CompliantContact& c) {
    const CompliantSettings& cs = s.settings.compliant;
    Pose a = poseOf(s, y, c.bodyA), b = poseOf(s, y, c.bodyB);
    ContactFrame fr = contactFrame(a, b, c);
    const Vec3 cA = fr.cA, n = fr.n;
    const Real gap = fr.gap;
    if (gap >= 0) return ContactForce{{0, 0, 0}, cA, 0};
    Real z = -gap;
    // The force acts in the middle of the overlap, below A's surface point: B's point only fixes
    // the plane (for a flat B its tangential place is arbitrary).
    Vec3 p = cA - (c.radiusA - Real(0.5) * z) * n;
    Vec3 vA = c.bodyA >= 0 ? a.v + cross(a.w, p - a.x) : Vec3{0, 0, 0};
    Vec3 vB = c.bodyB >= 0 ? b.v + cross(b.w, p - b.x) : Vec3{0, 0, 0};
    Vec3 rel = vA - vB;
    Real zdot = -dot(rel, n);
    // f_HC = 4/3 sqrt(R) E z^(3/2) (1 + 3/2 c zdot)   (eqs. 4.1-4.2), never attractive
    Real fHz = Real(4.0 / 3.0) * std::sqrt(c.curvature) * cs.stiffness * z * std::sqrt(z);
    Real fn = std::max(Real(0), fHz * (1 + Real(1.5) * cs.dissipation * zdot));
    Vec3 slip = rel - dot(rel, n) * n;
    Real speed = length(slip);
    Vec3 f = fn * n;
    if (speed > 0 && c.mu > 0) {
        Real x = speed / cs.stribeckVelocity;
        Real muEff = x < 1 ? c.mu * (2 * x - x * x) : c.mu;   // rises to mu with zero slope at v_s
        f -= (muEff * fn / speed) * slip;
    }
    return ContactForce{f, p, z};
}

// y' = f(y): rigid-body equations with gravity, gyroscopic terms, contacts and joints.
void derivative(const System& s, const VecX& y, VecX& dy) {
    ++s.evaluations;
    const int nm = (int)s.bodies.size();
    dy.setZero(y.size());
    std::vector<Vec3> force(nm), torque(nm);
    std::vector<Mat3> invI(nm);
    for (int k = 0; k < nm; ++k) {
        int b = s.bodies[k];
        Pose p = poseOf(s, y, b);
        Mat3 R = toMat3(p.q);
        Mat3 I = R * s.model.inertiaLocal[b] * transpose(R);
        invI[k] = R * s.model.invInertiaLocal[b] * transpose(R);
        force[k] = s.model.mass[b] * s.settings.gravity;
        torque[k] = -cross(p.w, I * p.w);
        int o = kBodyDof * k;
        put(dy, o, p.v);
        Quat dq = Quat{0, p.w.x, p.w.y, p.w.z} * p.q;   // q' = 1/2 [0, w] q
        dy(o + 3) = 0.5 * dq.w;
        dy(o + 4) = 0.5 * dq.x;
        dy(o + 5) = 0.5 * dq.y;
        dy(o + 6) = 0.5 * dq.z;
    }
    const int impulseBase = kBodyDof * nm;
    for (size_t ci = 0; ci < s.contacts.size(); ++ci) {
        const CompliantContact& c = s.contacts[ci];
        ContactForce cf = contactForce(s, y, c);
        put(dy, impulseBase + 3 * (int)ci, cf.force);
        if (cf.penetration <= 0) continue;
        if (c.bodyA >= 0 && s.slot[c.bodyA] >= 0) {
            int k = s.slot[c.bodyA];
            force[k] += cf.force;
            torque[k] += cross(cf.point - poseOf(s, y, c.bodyA).x, cf.force);
        }
        if (c.bodyB >= 0 && s.slot[c.bodyB] >= 0) {
            int k = s.slot[c.bodyB];
            force[k] -= cf.force;
            torque[k] -= cross(cf.point - poseOf(s, y, c.bodyB).x, cf.force);
        }
    }
    // Free accelerations, then joint forces at acceleration level.
    VecX acc(6 * nm);
    for (int k = 0; k < nm; ++k) {
        Vec3 a = s.model.invMass[s.bodies[k]] * force[k], al = invI[k] * torque[k];
        for (int c = 0; c < 3; ++c) {
            acc(6 * k + c) = a[c];
            acc(6 * k + 3 + c) = al[c];
        }
    }
    if (!s.model.joints.empty()) {
        State st = stateAt(s, y);
        ConstraintRows rows, ahead;
        buildJointRows(s.model, st, 1, rows);   // h = 1: bias = C
        const Real eps = Real(1e-7);
        State st2 = st;
        for (int b : s.bodies) integrateBody(st2.pos[b], st2.rot[b], st2.linVel[b], st2.angVel[b], eps);
        buildJointRows(s.model, st2, 1, ahead);
        std::vector<int> use;
        for (int r = 0; r < rows.size(); ++r) {
            bool movA = rows.bodyA[r] >= 0 && s.slot[rows.bodyA[r]] >= 0;
            bool movB = rows.bodyB[r] >= 0 && s.slot[rows.bodyB[r]] >= 0;
            if ((movA || movB) && rows.softness[r] == 0) use.push_back(r);
        }
        const int m = (int)use.size();
        if (m > 0) {
            Eigen::MatrixXd J = Eigen::MatrixXd::Zero(m, 6 * nm), Jn = J, Minv = Eigen::MatrixXd::Zero(6 * nm, 6 * nm);
            VecX C(m);
            for (int i = 0; i < m; ++i) {
                int r = use[i];
                C(i) = rows.bias[r];
                auto fill = [&](Eigen::MatrixXd& M, int body, const Spatial& j) {
                    if (body < 0 || s.slot[body] < 0) return;
                    for (int c = 0; c < 3; ++c) {
                        M(i, 6 * s.slot[body] + c) += j.lin[c];
                        M(i, 6 * s.slot[body] + 3 + c) += j.ang[c];
                    }
                };
                fill(J, rows.bodyA[r], rows.jacobianA[r]);
                fill(J, rows.bodyB[r], rows.jacobianB[r]);
                fill(Jn, ahead.bodyA[r], ahead.jacobianA[r]);
                fill(Jn, ahead.bodyB[r], ahead.jacobianB[r]);
            }
            VecX u(6 * nm);
            for (int k = 0; k < nm; ++k) {
                Pose p = poseOf(s, y, s.bodies[k]);
                for (int c = 0; c < 3; ++c) {
                    u(6 * k + c) = p.v[c];
                    u(6 * k + 3 + c) = p.w[c];
                    Minv(6 * k + c, 6 * k + c) = s.model.invMass[s.bodies[k]];
                }
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c) Minv(6 * k + 3 + r, 6 * k + 3 + c) = invI[k].m[r][c];
            }
            // J a = -Jdot u - 2 w (J u) - w^2 C (Baumgarte), a = a_free + M^-1 J^T lambda
            const double omega = 100;
            VecX jdotu = (Jn - J) * u / eps;
            VecX rhs = -jdotu - 2 * omega * (J * u) - omega * omega * C - J * acc;
            Eigen::MatrixXd K = J * Minv * J.transpose();
            K.diagonal().array() += 1e-12 * (1 + K.diagonal().maxCoeff());
            VecX lambda = K.ldlt().solve(rhs);
            acc += Minv * J.transpose() * lambda;
        }
    }
    for (int k = 0; k < nm; ++k)
        for (int c = 0; c < 3; ++c) {
            dy(kBodyDof * k + 7 + c) = acc(6 * k + c);
            dy(kBodyDof * k + 10 + c) = acc(6 * k + 3 + c);
        }
}

}  // namespace

Real compliantPenetration(const State& state, const CompliantContact& c) {
    auto pose = [&](int b) {
        return b < 0 ? Pose{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, quatIdentity()}
                     : Pose{state.pos[b], state.linVel[b], state.angVel[b], state.rot[b]};
    };
    return std::max(Real(0), -contactFrame(pose(c.bodyA), pose(c.bodyB), c).gap);
}

Real compliantElasticEnergy(const State& state, const CompliantContact& c, const CompliantSettings& settings) {
    // U = int_0^z 4/3 sqrt(R) E s^(3/2) ds = 8/15 sqrt(R) E z^(5/2)
    const Real z = compliantPenetration(state, c);
    return Real(8.0 / 15.0) * std::sqrt(c.curvature) * settings.stiffness * z * z * std::sqrt(z);
}

bool integrateCompliant(const Model& model, State& state, const std::vector<char>& moving,
                        const std::vector<CompliantContact>& contacts, const WorldSettings& settings, Real T,
                        CompliantStats* stats, std::vector<CompliantSample>* samples) {
    std::vector<int> bodies, slot(model.bodyCount(), -1);
    for (int b = 0; b < model.bodyCount(); ++b)
        if (moving[b]) {
            slot[b] = (int)bodies.size();
            bodies.push_back(b);
        }
    const int nm = (int)bodies.size(), nc = (int)contacts.size();
    System sys{model, state, bodies, slot, contacts, settings};
    VecX y = VecX::Zero(kBodyDof * nm + 3 * nc);
    for (int k = 0; k < nm; ++k) {
        int b = bodies[k], o = kBodyDof * k;
        put(y, o, state.pos[b]);
        const Quat& q = state.rot[b];
        y(o + 3) = q.w;
        y(o + 4) = q.x;
        y(o + 5) = q.y;
        y(o + 6) = q.z;
        put(y, o + 7, state.linVel[b]);
        put(y, o + 10, state.angVel[b]);
    }
    auto record = [&](double t) {
        if (!samples) return;
        CompliantSample smp;
        smp.time = Real(t);
        for (int b = 0; b < model.bodyCount(); ++b) {
            Pose p = poseOf(sys, y, b);
            smp.linVel.push_back(p.v);
            smp.angVel.push_back(p.w);
        }
        for (int c = 0; c < nc; ++c) {
            smp.impulse.push_back(v3(y, kBodyDof * nm + 3 * c));
            smp.penetration.push_back(contactForce(sys, y, contacts[c]).penetration);
        }
        samples->push_back(std::move(smp));
    };
    record(0);
    // Runge-Kutta-Merson (Hairer, Norsett, Wanner): fourth order with an embedded error estimate
    //   k1 = f(y), k2 = f(y + h k1/3), k3 = f(y + h (k1 + k2)/6), k4 = f(y + h (k1 + 3 k3)/8),
    //   k5 = f(y + h (k1/2 - 3 k3/2 + 2 k4)), y+ = y + h (k1 + 4 k4 + k5)/6,
    //   err = h (2 k1 - 9 k3 + 8 k4 - k5)/30.
    const double tol = settings.compliant.tolerance;
    double t = 0, h = std::min<double>(T, 1e-4);
    VecX k1, k2, k3, k4, k5;
    int steps = 0, rejected = 0;
    bool ok = true;
    Real maxPen = 0;
    while (t < T - 1e-15) {
        if (steps + rejected >= settings.compliant.maxSubsteps) {
            ok = false;
            break;
        }
        h = std::min(h, T - t);
        derivative(sys, y, k1);
        derivative(sys, y + h / 3 * k1, k2);
        derivative(sys, y + h / 6 * (k1 + k2), k3);
        derivative(sys, y + h / 8 * (k1 + 3 * k3), k4);
        derivative(sys, y + h * (0.5 * k1 - 1.5 * k3 + 2 * k4), k5);
        VecX err = h / 30 * (2 * k1 - 9 * k3 + 8 * k4 - k5);
        double worst = 0;
        for (int k = 0; k < nm; ++k) {
            int o = kBodyDof * k;
            // positions and orientations to tol * 1 cm, velocities to tol relative (>= 1 m/s scale)
            for (int i = 0; i < 7; ++i) worst = std::max(worst, std::fabs(err(o + i)) / (tol * 1e-2));
            for (int i = 7; i < kBodyDof; ++i) worst = std::max(worst, std::fabs(err(o + i)) / (tol * (1 + std::fabs(y(o + i)))));
        }
        if (worst <= 1 || h < 1e-12) {
            y += h / 6 * (k1 + 4 * k4 + k5);
            for (int k = 0; k < nm; ++k) {   // keep the quaternion unit
                Quat q = quatAt(y, kBodyDof * k + 3);
                y(kBodyDof * k + 3) = q.w;
                y(kBodyDof * k + 4) = q.x;
                y(kBodyDof * k + 5) = q.y;
                y(kBodyDof * k + 6) = q.z;
            }
            t += h;
            ++steps;
            for (const CompliantContact& c : contacts) maxPen = std::max(maxPen, contactForce(sys, y, c).penetration);
            record(t);
        } else {
            ++rejected;
        }
        double grow = worst > 0 ? 0.9 * std::pow(1 / worst, 0.2) : 4;
        h *= std::min(4.0, std::max(0.1, grow));
    }
    for (int k = 0; k < nm; ++k) {
        Pose p = poseOf(sys, y, bodies[k]);
        state.pos[bodies[k]] = p.x;
        state.rot[bodies[k]] = p.q;
        state.linVel[bodies[k]] = p.v;
        state.angVel[bodies[k]] = p.w;
    }
    if (stats) {
        stats->steps += steps;
        stats->rejected += rejected;
        stats->evaluations += sys.evaluations;
        stats->maxPenetration = std::max(stats->maxPenetration, maxPen);
    }
    return ok;
}

}  // namespace cs
