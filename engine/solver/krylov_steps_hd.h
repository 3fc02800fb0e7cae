// The scalar steps of the linear solvers and of Newton's convergence test, for every backend.
//
// linear_solvers.cpp (CPU) and the step pipeline (engine/exec/pipeline_solve.h, run on the host
// and on the device) take the same decisions from the same reductions through these CS_HD
// functions, so the two cannot drift (the GPU's Jacobi relaxation once did: a fixed 0.6 where the
// CPU estimates it). The solvers themselves are described in linear_solvers.cpp ([NSN] section
// 8.2; Saad 2003, algorithm 9.1 and section 6.8).
#pragma once

#include <limits>

#include "engine/core/math.h"

namespace cs {

// Finite (neither NaN nor infinite): x - x is 0 only then.
constexpr Real kRealEpsilon = std::numeric_limits<Real>::epsilon();

CS_HD bool finiteReal(Real x) { return x - x == Real(0); }

// ---- the residual monitor shared by the four solvers --------------------------------------

// Stop when ||r|| <= tolerance ||b||; tolerance <= 0: never (the target is -1).
CS_HD Real linearTarget(Real tolerance, Real bNorm) { return tolerance > Real(0) ? tolerance * bNorm : Real(-1); }

// An exactly zero residual ends every solver, even with tolerance 0; so does a non-finite one
// (a diverging iteration): x is then returned as it is.
CS_HD bool linearDone(Real residual, Real target) {
    return residual <= target || residual == Real(0) || !finiteReal(residual);
}

// ---- PCG -------------------------------------------------------------------------------------

// CG stops once its residual grows this much past the best one (linear_solvers.cpp solvePCG).
constexpr Real kPcgGrowth = Real(1e3);

// alpha = r.z / p.Ap; false on breakdown (p.Ap <= 0 or r.z <= 0, or NaN): r is at rounding level.
CS_HD bool pcgStepLength(Real pap, Real rz, Real& alpha) {
    if (!(pap > Real(0)) || !(rz > Real(0))) return false;
    alpha = rz / pap;
    return true;
}

// After an iteration with residual r: 1 when it is the best so far (best updated: keep x),
// 0 when not, -1 when it grew past kPcgGrowth times the best (stop).
CS_HD int pcgTrackBest(Real residual, Real& best) {
    if (residual < best) {
        best = residual;
        return 1;
    }
    return residual <= kPcgGrowth * best ? 0 : -1;
}

// ---- PCR -------------------------------------------------------------------------------------

// The exact line minimizer along p, alpha = (q.r)/(q.Ap), which lowers ||r||^2_{M^-1} (normSq)
// by (q.r)^2/(q.Ap). False, with nothing changed, when q.Ap is not positive, q.r is not finite,
// or the decrease is below rounding of normSq (linear_solvers.cpp solvePCR explains each).
CS_HD bool pcrStepLength(Real qap, Real qr, Real& normSq, Real& alpha) {
    if (!(qap > Real(0)) || !finiteReal(qr)) return false;
    const Real decrease = qr * qr / qap;
    if (!(decrease > kRealEpsilon * normSq)) return false;
    normSq -= decrease;
    alpha = qr / qap;
    return true;
}

// beta = (z.Az)_new / (z.Az)_old, or a restart (0) when either is not positive.
CS_HD Real pcrBeta(Real rho, Real rhoNext) { return (rho > Real(0) && rhoNext > Real(0)) ? rhoNext / rho : Real(0); }

// ---- Jacobi ------------------------------------------------------------------------------------

// Power iterations of the automatic relaxation omega = 1 / lambda_max(D^-1 A) (solveJacobi).
constexpr int kJacobiPowerIterations = 8;

}  // namespace cs
