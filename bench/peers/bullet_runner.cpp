// The Bullet peer runner of `make bench` (issue 38): a peer scene stepped by Bullet (Debian's
// libbullet-dev, 3.24) at its defaults, measured the way `sandbox run --json` measures ours.
//
//   bullet_runner SCENE.json [--steps N] [--sleep]     one JSON line, the runner's field names
//   bullet_runner --check                              free fall and a resting pyramid against
//                                                      closed forms; status 0 when both hold
//
// The scene is read by the engine's own loader (engine/scene), so that generators, seeded tilts
// and materials give Bullet exactly the bodies ours starts from; only boxes are accepted (the
// peer scenes are boxes on a box ground), anything else is refused in one line. Bullet runs as
// it ships: btDbvtBroadphase, btSequentialImpulseConstraintSolver with 10 iterations, split
// impulse and warm starting on, box shapes with their 0.04 m collision margin, single
// precision (Debian's `bullet` build). Two things are set to match our runs, not Bullet's
// defaults: friction is combined as sqrt(mu_a mu_b), our rule (Bullet multiplies), so that mu
// is the scene's 0.6; and bodies never sleep (`--sleep` gives Bullet's deactivation back),
// because `sandbox run` does not sleep either and a sleeping pyramid costs Bullet nothing.
//
// Measured as app/runner.cpp measures ours: the process's CPU time and the wall time around each
// stepSimulation, their median and 95th percentile; after each step (outside the timing) the
// deepest overlap of any two boxes at Bullet's poses by the engine's exact polytope distance
// (World::maxPenetration, the runner's max_penetration_m), and Bullet's own deepest manifold
// point; at the end how far the body that started highest moved (top_drift_m).
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/scene/scene_loader.h"
#include "engine/world.h"

namespace {

using cs::Real;
using cs::Vec3;

double processCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * double(t.tv_sec) + 1e-6 * double(t.tv_nsec);
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

// Our friction rule (engine/contact/standard_rows_hd.h mixFrictionCoefficient), not Bullet's product.
btScalar combineFriction(const btCollisionObject* a, const btCollisionObject* b) {
    return btSqrt(a->getFriction() * b->getFriction());
}

// Half extents of a shape that is an axis-aligned box in its part frame, or false.
bool boxHalfExtents(const cs::ConvexPolytope& p, Vec3& half) {
    if (p.vertexCount() != 8) return false;
    Vec3 lo = p.vertices[0], hi = p.vertices[0];
    for (const Vec3& v : p.vertices) {
        lo = Vec3{std::min(lo.x, v.x), std::min(lo.y, v.y), std::min(lo.z, v.z)};
        hi = Vec3{std::max(hi.x, v.x), std::max(hi.y, v.y), std::max(hi.z, v.z)};
    }
    const Real eps = Real(1e-9) * (1 + hi.x - lo.x + hi.y - lo.y + hi.z - lo.z);
    for (const Vec3& v : p.vertices)   // every vertex a corner of the bounds
        for (Real d : {std::min(std::fabs(v.x - lo.x), std::fabs(v.x - hi.x)),
                       std::min(std::fabs(v.y - lo.y), std::fabs(v.y - hi.y)),
                       std::min(std::fabs(v.z - lo.z), std::fabs(v.z - hi.z))})
            if (d > eps) return false;
    half = Real(0.5) * (hi - lo);
    return true;
}

// A Bullet world made of a loaded model's boxes. Owns everything Bullet needs.
struct BulletScene {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
    std::vector<std::unique_ptr<btBoxShape>> shapes;
    std::vector<std::unique_ptr<btCompoundShape>> compounds;
    std::vector<std::unique_ptr<btRigidBody>> bodies;   // one per model body, same index

    ~BulletScene() {
        for (auto& b : bodies) world.removeRigidBody(b.get());
    }

    // Builds the bodies; false with *error for anything but boxes.
    bool build(const cs::Model& m, const cs::WorldSettings& s, bool sleep, std::string* error) {
        gCalculateCombinedFrictionCallback = combineFriction;
        world.setGravity(btVector3(btScalar(s.gravity.x), btScalar(s.gravity.y), btScalar(s.gravity.z)));
        if (!m.joints.empty() || m.femNodeCount() > 0) {
            *error = "the Bullet runner takes rigid boxes only (this scene has joints or deformable bodies)";
            return false;
        }
        for (int b = 0; b < m.bodyCount(); ++b) {
            if (m.bodyShapeCount[b] != 1) {
                *error = "body \"" + m.bodyName[b] + "\" has " + std::to_string(m.bodyShapeCount[b]) +
                         " parts; the Bullet runner takes one box per body";
                return false;
            }
            const int sh = m.bodyFirstShape[b];
            Vec3 half;
            if (m.shapeType[sh] != cs::ShapeType::Polytope || !boxHalfExtents(m.polytopes[m.shapePolytope[sh]], half)) {
                *error = "body \"" + m.bodyName[b] + "\" is not a box; the Bullet runner takes boxes only";
                return false;
            }
            // The box's centre in the body's COM frame (zero for a uniform box), as a compound child.
            const cs::Transform& local = m.shapeLocal[sh];
            const cs::ConvexPolytope& p = m.polytopes[m.shapePolytope[sh]];
            Vec3 lo = p.vertices[0];
            for (const Vec3& v : p.vertices) lo = Vec3{std::min(lo.x, v.x), std::min(lo.y, v.y), std::min(lo.z, v.z)};
            const Vec3 centre = lo + half;   // in the part frame
            shapes.push_back(std::make_unique<btBoxShape>(btVector3(btScalar(half.x), btScalar(half.y), btScalar(half.z))));
            btCollisionShape* shape = shapes.back().get();
            const Vec3 offset = local.pos + cs::rotate(local.rot, centre);
            const bool centred = cs::length(offset) < Real(1e-12) && std::fabs(std::fabs(local.rot.w) - 1) < Real(1e-12);
            if (!centred) {
                compounds.push_back(std::make_unique<btCompoundShape>());
                btTransform t(btQuaternion(btScalar(local.rot.x), btScalar(local.rot.y), btScalar(local.rot.z),
                                           btScalar(local.rot.w)),
                              btVector3(btScalar(offset.x), btScalar(offset.y), btScalar(offset.z)));
                compounds.back()->addChildShape(t, shape);
                shape = compounds.back().get();
            }
            const btScalar mass = m.isStatic(b) ? 0 : btScalar(m.mass[b]);
            btVector3 inertia(0, 0, 0);
            if (mass > 0) {   // our inertia about the COM (diagonal for a box in its own frame)
                const cs::Mat3& I = m.inertiaLocal[b];
                inertia = btVector3(btScalar(I.m[0][0]), btScalar(I.m[1][1]), btScalar(I.m[2][2]));
            }
            btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape, inertia);
            const Vec3 x = m.initialPos[b];
            const cs::Quat q = m.initialRot[b];
            info.m_startWorldTransform = btTransform(btQuaternion(btScalar(q.x), btScalar(q.y), btScalar(q.z), btScalar(q.w)),
                                                     btVector3(btScalar(x.x), btScalar(x.y), btScalar(x.z)));
            info.m_friction = btScalar(m.materials[m.bodyMaterial[b]].friction);
            info.m_restitution = 0;   // our time stepper is inelastic
            bodies.push_back(std::make_unique<btRigidBody>(info));
            btRigidBody* body = bodies.back().get();
            if (mass > 0) {
                const Vec3 v = m.initialLinVel[b], w = m.initialAngVel[b];
                body->setLinearVelocity(btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)));
                body->setAngularVelocity(btVector3(btScalar(w.x), btScalar(w.y), btScalar(w.z)));
                if (!sleep) body->setActivationState(DISABLE_DEACTIVATION);
            }
            world.addRigidBody(body);
        }
        return true;
    }

    void step(double dt) { world.stepSimulation(btScalar(dt), 1, btScalar(dt)); }   // exactly one step of dt

    Vec3 position(int b) const {
        const btVector3& p = bodies[b]->getWorldTransform().getOrigin();
        return Vec3{Real(p.x()), Real(p.y()), Real(p.z())};
    }

    // Copies Bullet's poses into `ours` (for the engine's exact overlap measure).
    void copyPoses(cs::World& ours) const {
        for (size_t b = 0; b < bodies.size(); ++b) {
            const btTransform& t = bodies[b]->getWorldTransform();
            const btQuaternion q = t.getRotation();
            ours.state().pos[b] = Vec3{Real(t.getOrigin().x()), Real(t.getOrigin().y()), Real(t.getOrigin().z())};
            ours.state().rot[b] = cs::normalize(cs::Quat{Real(q.w()), Real(q.x()), Real(q.y()), Real(q.z())});
        }
    }

    // Bullet's own view: manifold points and the deepest one (m, positive when overlapping).
    void manifoldStats(int& points, double& deepest) {
        points = 0;
        deepest = 0;
        for (int i = 0; i < dispatcher.getNumManifolds(); ++i) {
            const btPersistentManifold* mf = dispatcher.getManifoldByIndexInternal(i);
            points += mf->getNumContacts();
            for (int k = 0; k < mf->getNumContacts(); ++k)
                deepest = std::max(deepest, -double(mf->getContactPoint(k).getDistance()));
        }
    }
};

int highestBody(const cs::Model& m) {
    int top = -1;
    for (int b = 0; b < m.bodyCount(); ++b)
        if (!m.isStatic(b) && (top < 0 || m.initialPos[b].z > m.initialPos[top].z)) top = b;
    return top;
}

int runScene(const std::string& path, int steps, bool sleep) {
    cs::Model model;
    cs::WorldSettings settings;
    cs::SceneInfo info;
    std::string error;
    if (!cs::loadScene(path, model, settings, info, &error)) {
        std::fprintf(stderr, "bullet_runner: %s\n", error.c_str());
        return 2;
    }
    BulletScene bullet;
    if (!bullet.build(model, settings, sleep, &error)) {
        std::fprintf(stderr, "bullet_runner: %s: %s\n", path.c_str(), error.c_str());
        return 2;
    }
    cs::World measure(model, settings);   // never stepped: Bullet's poses are measured in it
    const int top = highestBody(model);
    const double dt = double(settings.dt);
    std::vector<double> cpu, wall;
    double penetration = 0, bulletPenetration = 0, pointsSum = 0;
    int pointsMax = 0;
    bool finite = true;
    for (int i = 0; i < steps; ++i) {
        const double c0 = processCpuMs();
        const auto t0 = std::chrono::steady_clock::now();
        bullet.step(dt);
        const auto t1 = std::chrono::steady_clock::now();
        const double c1 = processCpuMs();
        cpu.push_back(c1 - c0);
        wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        int points = 0;
        double deepest = 0;
        bullet.manifoldStats(points, deepest);
        pointsSum += points;
        pointsMax = std::max(pointsMax, points);
        bulletPenetration = std::max(bulletPenetration, deepest);
        bullet.copyPoses(measure);
        for (const Vec3& p : measure.state().pos) finite = finite && std::isfinite(double(p.x + p.y + p.z));
        if (finite) penetration = std::max(penetration, double(measure.maxPenetration()));
    }
    double wallMean = 0;
    for (double w : wall) wallMean += w / std::max<double>(1, double(wall.size()));
    nlohmann::json j;
    j["scene"] = info.name;
    j["engine"] = "bullet " + std::to_string(BT_BULLET_VERSION / 100) + "." + std::to_string(BT_BULLET_VERSION % 100);
    j["solver"] = "sequential impulse";
    j["iterations"] = bullet.world.getSolverInfo().m_numIterations;
    j["split_impulse"] = bullet.world.getSolverInfo().m_splitImpulse != 0;
    j["sleeping"] = sleep;
    j["precision"] = sizeof(btScalar) == sizeof(double) ? "double" : "float";
    j["threads"] = 1;
    j["dt"] = dt;
    j["steps"] = steps;
    j["bodies"] = model.bodyCount();
    j["contacts"] = {{"mean", pointsSum / std::max(1, steps)}, {"max", pointsMax}};
    j["wall_ms_per_step"] = {{"mean", wallMean}, {"median", quantile(wall, 0.5)}, {"p95", quantile(wall, 0.95)}};
    j["cpu_ms_per_step_median"] = quantile(cpu, 0.5);
    j["cpu_ms_per_step_p95"] = quantile(cpu, 0.95);
    j["max_penetration_m"] = penetration;
    j["bullet_penetration_m"] = bulletPenetration;
    j["top_drift_m"] = top >= 0 ? double(cs::length(bullet.position(top) - model.initialPos[top])) : 0.0;
    j["nan"] = !finite;
    std::printf("%s\n", j.dump().c_str());
    return finite ? 0 : 1;
}

// Checks Bullet against closed forms, so that the bench's Bullet rows are Bullet doing physics:
//  1. a 1 m box released 5 m above the ground falls as the semi-implicit Euler step Bullet takes,
//     z_n = z_0 - g h^2 n (n + 1) / 2, which is the closed form g t^2 / 2 plus g h t / 2, until it
//     comes within the collision margin of the ground;
//  2. the 55-box peer pyramid (bench/scenes) stands for 600 steps: its top box moves by less than
//     1 cm (a collapse moves it by metres).
int runCheck() {
    cs::Model model;
    cs::WorldSettings settings;
    cs::SceneInfo info;
    std::string error;
    const char* drop = R"({"format": 1, "name": "bullet_drop", "bodies": [
        {"generator": "ground", "half_extents": [5, 5, 0.5]},
        {"name": "box", "shape": {"type": "box", "half_extents": [0.5, 0.5, 0.5]}, "position": [0, 0, 5.5], "density": 1000}]})";
    if (!cs::loadSceneFromText(drop, "bullet_drop", ".", model, settings, info, &error)) {
        std::fprintf(stderr, "bullet_runner: %s\n", error.c_str());
        return 2;
    }
    BulletScene bullet;
    if (!bullet.build(model, settings, false, &error)) {
        std::fprintf(stderr, "bullet_runner: %s\n", error.c_str());
        return 2;
    }
    const double h = double(settings.dt), g = -double(settings.gravity.z), z0 = double(model.initialPos[1].z);
    double worstDiscrete = 0, worstClosed = 0;
    int n = 0;
    for (; n < 600; ++n) {
        bullet.step(h);
        const double z = double(bullet.position(1).z), t = (n + 1) * h;
        if (z - 0.5 < 0.1) break;   // the box's face within 0.1 m of the ground: contact may act
        worstDiscrete = std::max(worstDiscrete, std::fabs(z - (z0 - g * h * h * (n + 1) * (n + 2) / 2)));
        worstClosed = std::max(worstClosed, std::fabs((z0 - z) - g * t * t / 2) - g * h * t / 2);
    }
    const double fell = (n + 1) * h;
    // float positions near 5 m carry about 5e-7 m of rounding per step
    const bool fallOk = n > 60 && worstDiscrete < 1e-4 && worstClosed < 1e-4;
    std::printf("free fall: %d steps (%.3f s) before contact, |z - (z0 - g h^2 n(n+1)/2)| <= %.2e m, "
                "|drop - g t^2/2| - g h t/2 <= %.2e m: %s\n",
                n, fell, worstDiscrete, worstClosed, fallOk ? "ok" : "FAIL");

    const std::string pyramid = std::string(CS_SOURCE_DIR) + "/bench/scenes/peer_pyramid_55.json";
    cs::Model pm;
    cs::WorldSettings ps;
    if (!cs::loadScene(pyramid, pm, ps, info, &error)) {
        std::fprintf(stderr, "bullet_runner: %s\n", error.c_str());
        return 2;
    }
    BulletScene stack;
    if (!stack.build(pm, ps, false, &error)) {
        std::fprintf(stderr, "bullet_runner: %s\n", error.c_str());
        return 2;
    }
    for (int i = 0; i < 600; ++i) stack.step(double(ps.dt));
    const int top = highestBody(pm);
    const double drift = double(cs::length(stack.position(top) - pm.initialPos[top]));
    const bool standOk = drift < 0.01;
    std::printf("peer_pyramid_55: top box moved %.2e m in 600 steps (< 1e-2): %s\n", drift, standOk ? "ok" : "FAIL");
    return fallOk && standOk ? 0 : 1;
}

int usage() {
    std::fprintf(stderr, "usage: bullet_runner SCENE.json [--steps N] [--sleep] | bullet_runner --check\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--check") == 0) return runCheck();
    if (argc < 2 || argv[1][0] == '-') return usage();
    int steps = 600;
    bool sleep = false;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            char* end = nullptr;
            const long n = std::strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end != 0 || n < 1 || n > 1000000) {
                std::fprintf(stderr, "bullet_runner: --steps: expected 1 to 1000000, got \"%s\"\n", argv[i]);
                return 2;
            }
            steps = int(n);
        } else if (std::strcmp(argv[i], "--sleep") == 0) {
            sleep = true;
        } else {
            std::fprintf(stderr, "bullet_runner: unknown option \"%s\"\n", argv[i]);
            return usage();
        }
    }
    return runScene(argv[1], steps, sleep);
}
