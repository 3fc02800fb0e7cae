// A dense reference for the row solvers' tests.
#pragma once

#include <Eigen/Dense>

#include "engine/solver/newton.h"

namespace cs::test {

// The dense Schur matrix A = J H^-1 J^T + diag(compliance) of rows on up to four bodies, six
// columns per body: the reference the FEM solve tests compare against.
inline Eigen::MatrixXd denseRowMatrix(const ConstraintRows& rows, const BodyVelocities& bodies, const Real* compliance) {
    const int n = rows.size(), nb = (int)bodies.invMass.size();
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, 6 * nb), Hinv = Eigen::MatrixXd::Zero(6 * nb, 6 * nb);
    for (int b = 0; b < nb; ++b)
        for (int a = 0; a < 3; ++a) {
            Hinv(6 * b + a, 6 * b + a) = bodies.invMass[b];
            for (int c = 0; c < 3; ++c) Hinv(6 * b + 3 + a, 6 * b + 3 + c) = bodies.invInertia[b].m[a][c];
        }
    auto put = [&](int i, int body, const Spatial& j) {
        if (body < 0) return;
        for (int a = 0; a < 3; ++a) {
            J(i, 6 * body + a) += j.lin[a];
            J(i, 6 * body + 3 + a) += j.ang[a];
        }
    };
    for (int i = 0; i < n; ++i) {
        put(i, rows.bodyA[i], rows.jacobianA[i]);
        put(i, rows.bodyB[i], rows.jacobianB[i]);
        put(i, rows.bodyC[i], rows.jacobianC[i]);
        put(i, rows.bodyD[i], rows.jacobianD[i]);
    }
    Eigen::MatrixXd A = J * Hinv * J.transpose();
    for (int i = 0; i < n; ++i) A(i, i) += compliance[i];
    return A;
}

}  // namespace cs::test
