// Lemke's complementary pivoting: a small exact reference solver for validation.
//
// Solves the LCP  w = M z + q,  w >= 0, z >= 0, w^T z = 0  with a dense tableau and the
// covering vector e = (1, ..., 1) (Lemke 1965; [PEG] section 6 mentions it as the pivoting
// alternative to PATH). Intended for tests on problems of tens of unknowns: O(n^2) per pivot,
// in double precision whatever Real is.
//
// solvePegLcp builds the frictionless PEG time-stepping problem of [PEG] section 5.3
// (eqs. 41-49) from one step's constraint rows (Normal rows: U-constraints; Group rows: I and
// X constraints with their secondary gaps) with the velocities nu eliminated:
//     nu = nu~ + M^-1 (G_n p_n + G_p p_p)
//     0 <= p_n _|_ G_n^T nu + psi_n/h                       >= 0
//     0 <= p_p _|_ G_p^T nu + psi_p/h + E_I2 c              >= 0
//     0 <= c   _|_ G_I^T nu + (psi_p - psi_s)/h + E_I1 c    >= 0
// with E_I1 lower triangular of ones and E_I2 a row of ones per group, G_I = G_p - G_s. The
// matrix is not symmetric (E_I1, and the c columns have no momentum counterpart). Friction and
// bilateral rows must not be present (or are ignored: their impulses are taken as zero).
#pragma once

#include <vector>

#include "engine/solver/newton.h"

namespace cs {

struct LemkeResult {
    bool solved = false;   // false: ray termination or pivot limit
    int pivots = 0;
};

// M is n x n row-major. z receives the solution.
LemkeResult solveLemke(int n, const std::vector<double>& M, const std::vector<double>& q, std::vector<double>& z,
                       int maxPivots = 1000);

// The PEG mixed LCP of one step (see above). impulses: one per row (zero for non-contact rows);
// slacks: one per gap member (c of eq. 45). velocity: the resulting nu per body.
LemkeResult solvePegLcp(const ConstraintRows& rows, const BodyVelocities& bodies, Real h,
                        std::vector<Real>& impulses, std::vector<Real>& slacks, std::vector<Spatial>& velocity);

}  // namespace cs
