// World::draw and World::rayCast: what the app sees of the world, through DebugDraw only.
#include <cmath>

#include "engine/collision/broad_phase.h"
#include "engine/contact/contact_model.h"
#include "engine/fem/fem_draw.h"
#include "engine/fem/fem_drag.h"
#include "engine/world.h"

namespace cs {

namespace {

// Ray against a convex polytope in its local frame: clip [0, inf) by every face's half-space.
bool rayPolytope(const ConvexPolytope& p, Vec3 o, Vec3 d, Real& tHit) {
    Real t0 = 0, t1 = Real(1e30);
    for (const PolytopeFace& f : p.faces) {
        Real denom = dot(f.normal, d), dist = f.offset - dot(f.normal, o);
        if (denom == 0) {
            if (dist < 0) return false;
            continue;
        }
        Real t = dist / denom;
        if (denom < 0) t0 = std::fmax(t0, t);
        else t1 = std::fmin(t1, t);
        if (t0 > t1) return false;
    }
    tHit = t0;
    return true;
}

bool raySphere(Vec3 c, Real r, Vec3 o, Vec3 d, Real& tHit) {
    Vec3 m = o - c;
    Real b = dot(m, d), cc = dot(m, m) - r * r;
    Real disc = b * b - cc;
    if (disc < 0) return false;
    Real t = -b - std::sqrt(disc);
    if (t < 0) t = -b + std::sqrt(disc);
    if (t < 0) return false;
    tHit = t;
    return true;
}

}  // namespace

int World::rayCast(Vec3 origin, Vec3 direction, Vec3* hitPoint) const {
    Vec3 d = normalize(direction);
    int best = -1;
    Real bestT = Real(1e30);
    for (int s = 0; s < model_.shapeCount(); ++s) {
        int b = model_.shapeBody[s];
        if (!isActive(b) || (model_.isStatic(b) && model_.bodyOpacity[b] < 1)) continue;
        Transform x = shapeTransform(s);
        Real t;
        bool hit = model_.shapeType[s] == ShapeType::Sphere
                       ? raySphere(x.pos, model_.shapeRadius[s], origin, d, t)
                       : rayPolytope(model_.polytopes[model_.shapePolytope[s]], rotateInv(x.rot, origin - x.pos),
                                     rotateInv(x.rot, d), t);
        if (hit && t < bestT) {
            bestT = t;
            best = b;
        }
    }
    if (best >= 0 && hitPoint) *hitPoint = origin + bestT * d;
    return best;
}

void World::draw(DebugDraw& dd) const {
    const DebugDrawFlags& f = dd.flags;
    const Real h = settings.dt / (settings.substeps > 0 ? settings.substeps : 1);
    drawContactModel(settings.solver.contactModel, contacts_, h, dd);
    drawContactModel(settings.solver.contactModel, sleepingContacts_, h, dd);
    drawFemBodies(model_, state_, dd);

    if (f.aabbs && dd.drawLine) {
        const Color c{0.6f, 0.6f, 0.6f, 1};
        for (int s = 0; s < model_.shapeCount(); ++s) {
            if (!isActive(model_.shapeBody[s])) continue;
            Aabb a = computeShapeAabb(model_, state_, s, 0);
            Vec3 lo = a.lo, hi = a.hi;
            for (int i = 0; i < 4; ++i) {
                Real x0 = (i & 1) ? hi.x : lo.x, y0 = (i & 2) ? hi.y : lo.y;
                dd.drawLine({x0, y0, lo.z}, {x0, y0, hi.z}, c, dd.context);
                Real y1 = (i & 1) ? hi.y : lo.y, z1 = (i & 2) ? hi.z : lo.z;
                dd.drawLine({lo.x, y1, z1}, {hi.x, y1, z1}, c, dd.context);
                Real x2 = (i & 1) ? hi.x : lo.x, z2 = (i & 2) ? hi.z : lo.z;
                dd.drawLine({x2, lo.y, z2}, {x2, hi.y, z2}, c, dd.context);
            }
        }
    }
    if (f.bodyFrames && dd.drawLine) {
        for (int b = 0; b < model_.bodyCount(); ++b) {
            if (model_.isStatic(b) || !isActive(b)) continue;
            Vec3 x = state_.pos[b];
            Real l = Real(0.5) * model_.shapeRadius[model_.bodyFirstShape[b]];
            dd.drawLine(x, x + l * rotate(state_.rot[b], {1, 0, 0}), {1, 0.2f, 0.2f, 1}, dd.context);
            dd.drawLine(x, x + l * rotate(state_.rot[b], {0, 1, 0}), {0.2f, 1, 0.2f, 1}, dd.context);
            dd.drawLine(x, x + l * rotate(state_.rot[b], {0, 0, 1}), {0.2f, 0.4f, 1, 1}, dd.context);
            if (dd.drawPoint) dd.drawPoint(x, 5.0f, {1, 1, 1, 1}, dd.context);
        }
    }
    if (f.jointFrames && dd.drawLine) {
        for (const Joint& j : model_.joints) {
            Vec3 pa = j.bodyA >= 0 ? state_.pos[j.bodyA] + rotate(state_.rot[j.bodyA], j.anchorA) : j.anchorA;
            Vec3 pb = j.bodyB >= 0 ? state_.pos[j.bodyB] + rotate(state_.rot[j.bodyB], j.anchorB) : j.anchorB;
            Vec3 axis = j.bodyA >= 0 ? rotate(state_.rot[j.bodyA], j.axisA) : j.axisA;
            dd.drawLine(pa, pb, {1, 0.3f, 1, 1}, dd.context);
            dd.drawLine(pa - Real(0.1) * axis, pa + Real(0.1) * axis, {1, 1, 0.3f, 1}, dd.context);
            if (dd.drawPoint) dd.drawPoint(pa, 7.0f, {1, 0.3f, 1, 1}, dd.context);
        }
    }
    if (f.dragSpring && (drag_.body >= 0 || drag_.femTri >= 0) && dd.drawLine) {
        // The grabbed point: on the rigid body, or on the FEM surface triangle (fem_drag.h).
        Vec3 p = drag_.body >= 0 ? state_.pos[drag_.body] + rotate(state_.rot[drag_.body], drag_.localPoint)
                                 : femDragPoint(model_, state_, drag_);
        dd.drawLine(p, drag_.target, {1, 1, 1, 1}, dd.context);
        if (dd.drawPoint) {
            dd.drawPoint(p, 8.0f, {1, 1, 1, 1}, dd.context);
            dd.drawPoint(drag_.target, 6.0f, {1, 0.5f, 0, 1}, dd.context);
        }
    }
}

}  // namespace cs
