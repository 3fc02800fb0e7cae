// Adds bodies and joints to a Model: mass properties of a union of convex parts, the body frame
// moved to the centre of mass, parts stored relative to it.
#include "engine/model_builder.h"

#include <cmath>
#include <cstring>

namespace cs {

namespace {

// Bit for bit equal (doubles compared by their bytes, so that 0 and -0 differ and a NaN equals
// itself): a polytope shared by several shapes gives each of them exactly what its own copy would.
template <class T>
bool sameBytes(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

bool samePolytope(const ConvexPolytope& a, const ConvexPolytope& b) {
    if (a.vertices.size() != b.vertices.size() || a.edges.size() != b.edges.size() ||
        a.faces.size() != b.faces.size() || a.faceVertices != b.faceVertices || a.faceEdges != b.faceEdges ||
        a.vertexEdgeStart != b.vertexEdgeStart || a.vertexEdges != b.vertexEdges ||
        !sameBytes(a.centroid, b.centroid) || !sameBytes(a.volume, b.volume) ||
        !sameBytes(a.boundingRadius, b.boundingRadius))
        return false;
    for (size_t i = 0; i < a.vertices.size(); ++i)
        if (!sameBytes(a.vertices[i], b.vertices[i])) return false;
    for (size_t i = 0; i < a.edges.size(); ++i) {
        const PolytopeEdge &x = a.edges[i], &y = b.edges[i];
        if (x.tail != y.tail || x.head != y.head || x.face[0] != y.face[0] || x.face[1] != y.face[1] ||
            !sameBytes(x.t[0], y.t[0]) || !sameBytes(x.t[1], y.t[1]))
            return false;
    }
    for (size_t i = 0; i < a.faces.size(); ++i) {
        const PolytopeFace &x = a.faces[i], &y = b.faces[i];
        if (!sameBytes(x.normal, y.normal) || !sameBytes(x.offset, y.offset) || x.firstVertex != y.firstVertex ||
            x.vertexCount != y.vertexCount || x.firstEdge != y.firstEdge)
            return false;
    }
    return true;
}

// The model's polytope equal to p among the last few stored (scenes list their many equal parts,
// the boxes of a pile or a pyramid, one after another), else p added. One copy in memory keeps
// the narrow phase's and the broad phase's reads of the parts' local geometry in cache (a
// 1,000-box pile held 1,000 copies of one cube, about 1.5 MB).
int sharedPolytope(Model& model, const ConvexPolytope& p) {
    constexpr int kLookBack = 8;
    const int n = (int)model.polytopes.size();
    for (int k = n - 1; k >= 0 && k >= n - kLookBack; --k)
        if (samePolytope(model.polytopes[k], p)) return k;
    model.polytopes.push_back(p);
    return n;
}

// Parallel-axis shift of an inertia tensor about its own COM to a point offset by d from it:
// I' = I + m (|d|^2 E - d d^T).
Mat3 shiftInertia(const Mat3& inertia, Real mass, Vec3 d) {
    Mat3 r = inertia;
    Real dd = dot(d, d);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] += mass * ((i == j ? dd : Real(0)) - d[i] * d[j]);
    return r;
}

// Inverse of a symmetric positive definite 3x3 matrix (the inertia tensor).
bool invertSpd(const Mat3& a, Mat3& inv) {
    Real c00 = a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1];
    Real c01 = a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2];
    Real c02 = a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0];
    Real det = a.m[0][0] * c00 + a.m[0][1] * c01 + a.m[0][2] * c02;
    if (!(det > 0) || !std::isfinite(det)) return false;
    Real s = Real(1) / det;
    inv.m[0][0] = c00 * s;
    inv.m[0][1] = (a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2]) * s;
    inv.m[0][2] = (a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1]) * s;
    inv.m[1][0] = c01 * s;
    inv.m[1][1] = (a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0]) * s;
    inv.m[1][2] = (a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2]) * s;
    inv.m[2][0] = c02 * s;
    inv.m[2][1] = (a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1]) * s;
    inv.m[2][2] = (a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0]) * s;
    return true;
}

int fail(std::string* error, const std::string& message) {
    if (error) *error = message;
    return -1;
}

}  // namespace

int addBody(Model& model, const BodyDesc& desc, std::string* error) {
    const std::string who = "body '" + desc.name + "'";
    if (desc.shapes.empty()) return fail(error, who + " has no shapes");
    if (!desc.isStatic && desc.mass == 0 && !(desc.density > 0))
        return fail(error, who + ": density must be positive");
    if (!desc.isStatic && desc.mass < 0) return fail(error, who + ": mass must be positive");
    if (desc.material.friction < 0) return fail(error, who + ": friction must be non-negative");
    if (!(desc.opacity > 0 && desc.opacity <= 1)) return fail(error, who + ": opacity must lie in (0, 1]");

    // Mass properties of each part in the body frame, then of the union.
    Real density = desc.density > 0 ? desc.density : Real(1000);
    Real totalMass = 0;
    Vec3 com{0, 0, 0};
    std::vector<MassProperties> parts;
    for (size_t i = 0; i < desc.shapes.size(); ++i) {
        const ShapeDesc& s = desc.shapes[i];
        MassProperties mp;
        if (s.type == ShapeType::Sphere) {
            if (!(s.radius > 0)) return fail(error, who + ": sphere radius must be positive");
            mp = sphereMassProperties(s.radius, density);
        } else {
            if (s.polytope.vertexCount() < 4 || !(s.polytope.volume > 0))
                return fail(error, who + ": part " + std::to_string(i) + " is a degenerate polytope");
            mp = polytopeMassProperties(s.polytope, density);
        }
        // Part frame -> body frame.
        Mat3 r = toMat3(s.local.rot);
        mp.centerOfMass = transformPoint(s.local, mp.centerOfMass);
        mp.inertia = r * mp.inertia * transpose(r);
        parts.push_back(mp);
        totalMass += mp.mass;
        com += mp.mass * mp.centerOfMass;
    }
    if (!(totalMass > 0)) return fail(error, who + " has zero volume");
    com = com / totalMass;
    Mat3 inertia = mat3Zero();
    for (const MassProperties& mp : parts) inertia = inertia + shiftInertia(mp.inertia, mp.mass, mp.centerOfMass - com);
    if (desc.mass > 0) {   // explicit mass: same shape of inertia, scaled
        Real s = desc.mass / totalMass;
        inertia = s * inertia;
        totalMass = desc.mass;
    }

    const int body = model.bodyCount();
    model.bodyName.push_back(desc.name.empty() ? "body" + std::to_string(body) : desc.name);
    if (desc.isStatic) {
        model.mass.push_back(0);
        model.invMass.push_back(0);
        model.inertiaLocal.push_back(mat3Zero());
        model.invInertiaLocal.push_back(mat3Zero());
    } else {
        Mat3 inv;
        if (!invertSpd(inertia, inv)) {
            model.bodyName.pop_back();
            return fail(error, who + " has a singular inertia tensor");
        }
        model.mass.push_back(totalMass);
        model.invMass.push_back(Real(1) / totalMass);
        model.inertiaLocal.push_back(inertia);
        model.invInertiaLocal.push_back(inv);
    }
    model.materials.push_back(desc.material);
    model.bodyMaterial.push_back((int)model.materials.size() - 1);
    model.bodyFirstShape.push_back(model.shapeCount());
    model.bodyShapeCount.push_back((int)desc.shapes.size());
    model.bodySpawnTime.push_back(desc.spawnTime);
    model.bodyColor.push_back(desc.color);
    model.bodyOpacity.push_back(desc.opacity);

    for (const ShapeDesc& s : desc.shapes) {
        Transform local = s.local;
        local.pos = local.pos - com;   // parts relative to the COM frame (same orientation)
        model.shapeType.push_back(s.type);
        model.shapeBody.push_back(body);
        model.shapeLocal.push_back(local);
        if (s.type == ShapeType::Sphere) {
            model.shapePolytope.push_back(-1);
            model.shapeRadius.push_back(s.radius);
        } else {
            model.shapePolytope.push_back(sharedPolytope(model, s.polytope));
            Real r = 0;
            for (const Vec3& v : s.polytope.vertices) r = std::fmax(r, length(v));
            model.shapeRadius.push_back(r);
        }
    }
    // Body pose: the frame moves to the COM.
    model.initialPos.push_back(transformPoint(desc.pose, com));
    model.initialRot.push_back(normalize(desc.pose.rot));
    model.initialLinVel.push_back(desc.isStatic ? Vec3{0, 0, 0} : desc.linVel);
    model.initialAngVel.push_back(desc.isStatic ? Vec3{0, 0, 0} : desc.angVel);
    return body;
}

int addJoint(Model& model, Joint joint, Vec3 worldAnchor, Vec3 worldAxis, std::string* error) {
    const int n = model.bodyCount();
    if (joint.bodyA < -1 || joint.bodyA >= n || joint.bodyB < -1 || joint.bodyB >= n || joint.bodyA == joint.bodyB)
        return fail(error, "joint '" + joint.name + "' names an invalid pair of bodies");
    if (joint.compliance < 0) return fail(error, "joint '" + joint.name + "': compliance must be >= 0");
    Vec3 axis = normalize(worldAxis);
    if (length(axis) == 0) return fail(error, "joint '" + joint.name + "': axis must be non-zero");
    auto toLocal = [&](int b, Vec3 p) {
        return b < 0 ? p : rotateInv(model.initialRot[b], p - model.initialPos[b]);
    };
    auto dirLocal = [&](int b, Vec3 d) { return b < 0 ? d : rotateInv(model.initialRot[b], d); };
    joint.anchorA = toLocal(joint.bodyA, worldAnchor);
    joint.anchorB = toLocal(joint.bodyB, worldAnchor);
    joint.axisA = dirLocal(joint.bodyA, axis);
    joint.axisB = dirLocal(joint.bodyB, axis);
    Quat qa = joint.bodyA < 0 ? quatIdentity() : model.initialRot[joint.bodyA];
    Quat qb = joint.bodyB < 0 ? quatIdentity() : model.initialRot[joint.bodyB];
    joint.relRot = conjugate(qa) * qb;
    model.joints.push_back(joint);
    return (int)model.joints.size() - 1;
}

}  // namespace cs
