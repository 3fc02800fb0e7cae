// Mimic couplings of two joints (joint_coupling.h).
#include "engine/solver/joint_coupling.h"

#include "engine/solver/joint_rows.h"

namespace cs {

namespace {

struct CoordinateRow {
    int bodyA, bodyB;
    Spatial jacobianA, jacobianB;   // dq/dt = J_A u_A + J_B u_B
};

CoordinateRow coordinateRow(const State& state, const Joint& j) {
    const Vec3 xA = j.bodyA >= 0 ? state.pos[j.bodyA] : Vec3{0, 0, 0};
    const Vec3 xB = j.bodyB >= 0 ? state.pos[j.bodyB] : Vec3{0, 0, 0};
    const Quat qA = j.bodyA >= 0 ? state.rot[j.bodyA] : quatIdentity();
    const Quat qB = j.bodyB >= 0 ? state.rot[j.bodyB] : quatIdentity();
    const Vec3 axis = rotate(qA, j.axisA);
    CoordinateRow r{j.bodyA, j.bodyB, {}, {}};
    if (j.type == JointType::Revolute) {
        r.jacobianA = Spatial{{0, 0, 0}, -axis};
        r.jacobianB = Spatial{{0, 0, 0}, axis};
        return r;
    }
    const Vec3 rA = rotate(qA, j.anchorA), rB = rotate(qB, j.anchorB);
    const Vec3 d = (xB + rB) - (xA + rA);
    r.jacobianA = Spatial{-axis, -cross(rA + d, axis)};   // (wA x e) . d = wA . (e x d)
    r.jacobianB = Spatial{axis, cross(rB, axis)};
    return r;
}

// Adds weight x J of one body to the row's columns: a body already in a column is summed into it.
void addColumn(int body, const Spatial& jacobian, Real weight, int (&bodies)[4], Spatial (&columns)[4]) {
    if (body < 0) return;
    for (int k = 0; k < 4; ++k) {
        if (bodies[k] == body) {
            columns[k] = columns[k] + weight * jacobian;
            return;
        }
        if (bodies[k] < 0) {
            bodies[k] = body;
            columns[k] = weight * jacobian;
            return;
        }
    }
}

}  // namespace

Real jointFreeCoordinate(const Model& model, const State& state, const Joint& j) {
    if (j.type == JointType::Revolute) return revoluteAngle(model, state, j);
    const Vec3 xA = j.bodyA >= 0 ? state.pos[j.bodyA] : Vec3{0, 0, 0};
    const Vec3 xB = j.bodyB >= 0 ? state.pos[j.bodyB] : Vec3{0, 0, 0};
    const Quat qA = j.bodyA >= 0 ? state.rot[j.bodyA] : quatIdentity();
    const Quat qB = j.bodyB >= 0 ? state.rot[j.bodyB] : quatIdentity();
    const Vec3 d = (xB + rotate(qB, j.anchorB)) - (xA + rotate(qA, j.anchorA));
    return dot(rotate(qA, j.axisA), d);
}

void buildCouplingRows(const Model& model, const State& state, Real h, ConstraintRows& rows) {
    for (size_t c = 0; c < model.couplings.size(); ++c) {
        const JointCoupling& k = model.couplings[c];
        const Joint& a = model.joints[size_t(k.jointA)];
        const Joint& b = model.joints[size_t(k.jointB)];
        const Real error = jointFreeCoordinate(model, state, a) - k.ratio * jointFreeCoordinate(model, state, b) -
                           k.offset;
        const CoordinateRow ra = coordinateRow(state, a), rb = coordinateRow(state, b);
        int bodies[4] = {-1, -1, -1, -1};
        const Spatial zero{{0, 0, 0}, {0, 0, 0}};
        Spatial columns[4] = {zero, zero, zero, zero};
        addColumn(ra.bodyA, ra.jacobianA, 1, bodies, columns);
        addColumn(ra.bodyB, ra.jacobianB, 1, bodies, columns);
        addColumn(rb.bodyA, rb.jacobianA, -k.ratio, bodies, columns);
        addColumn(rb.bodyB, rb.jacobianB, -k.ratio, bodies, columns);
        // Compliance form: bias C0 / h, gamma = alpha / h^2 (constraint_rows.h). Owner: the
        // coupling, numbered after the joints' owners -(joint + 2).
        const int owner = -(int(model.joints.size() + c) + 2);
        const int row = rows.add(RowKind::Bilateral, bodies[0], bodies[1], columns[0], columns[1], error / h,
                                 k.compliance / (h * h), owner);
        if (bodies[2] >= 0 || bodies[3] >= 0) rows.setExtraBodies(row, bodies[2], bodies[3], columns[2], columns[3]);
    }
}

}  // namespace cs
