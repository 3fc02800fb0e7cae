// The scalar decisions of the Newton safeguards, for every backend: the CPU loop (newton.cpp) and
// the step pipeline (engine/exec/pipeline_newton.h, host and device) call these CS_HD functions
// on the same merits, so the two take the same decisions bit for bit.
//
// Three safeguards, each a SolverSettings entry (engine/settings.h):
//  - the best iterate: the impulses with the least merit seen in the step are kept, and returned
//    when Newton ends at its cap clearly worse than them (restoreBestIterate);
//  - the inexact-Newton forcing term of Eisenstat and Walker (1996, "Choosing the forcing terms in
//    an inexact Newton method", choice 2 with its safeguard): the linear solve's relative
//    tolerance eta_k per Newton iteration (forcingTolerance);
//  - a step cut: when the damped step t raises the merit by more than a factor, t is halved
//    (at most a few times), then taken whatever the merit ([NSN] section 8.1 reports that a full
//    backtracking line search stalls on frictional problems; only a blow-up is cut here).
// And the far Newton cap (SolverSettings::farNewtonIterations, engine/solver/islands.h "Settling
// after a disturbance"): past the cap while the merit is far off, with a run-away guard
// (newtonGoesOnFar, farNewtonRunAway).
#pragma once

#include "engine/core/math.h"

namespace cs {

// A final merit more than this times the least merit of the step counts as "clearly worse". The
// damped iteration (t = 0.75) at its cap wanders within a factor of about two of its level from
// one iteration to the next on the piles (table_pile, the 1,000-box pile); restoring within that
// band would trade one unconverged iterate for another of the same quality and change every
// scene that runs at its cap. Above it the last iterations went uphill.
constexpr Real kBestIterateRatio = Real(2);

// The merit (m/s) above which a step at its Newton cap goes on to SolverSettings::farNewtonIterations:
// a landing whose impact the solve has not settled (the resting default pyramid ends its capped steps
// at 3e-5 to 6e-4 m/s; a rocking wall's landings at 0.3-1.2 m/s, docs/speed.md).
constexpr Real kFarNewtonMerit = Real(1e-2);

// Past the cap, the far iterations stop once the merit exceeds this many times its value at the cap,
// and the step ends on the cap's iterate: on table_pile (sleeping on) the iterations past the cap
// ran away (merit 0.5 -> 2,180 m/s) and the tables took 18 kJ of kinetic energy from nothing
// (1.5 kJ without the far cap; docs/speed.md "Issue 35, session 27").
constexpr Real kFarNewtonGrowth = Real(4);

// Whether iteration k runs, with `merit` the merit after k iterations: below the cap while the merit
// is above the tolerance, and past it up to farCap while the merit is above kFarNewtonMerit
// (farCap <= cap: no far iterations).
CS_HD bool newtonGoesOnFar(Real merit, Real tolerance, int k, int cap, int farCap) {
    return merit > tolerance && (k < cap || (k < farCap && merit > kFarNewtonMerit));
}

// The far iterations' run-away guard: the merit grew past kFarNewtonGrowth times its value at the cap.
CS_HD bool farNewtonRunAway(Real merit, Real meritAtCap) { return merit > kFarNewtonGrowth * meritAtCap; }

// After a Newton run of `iterations` iterations that ended with `merit` above `tolerance`: true
// when the best iterate (least merit `best`) is to be returned instead. Needs two iterations or
// more: after one, the best can only be the start, and a caller that iterates one step at a time
// (ccp_solvers.cpp newtonOnRelaxedRows) would never move.
CS_HD bool restoreBestIterate(Real merit, Real best, Real tolerance, int iterations) {
    return iterations >= 2 && merit > tolerance && merit > kBestIterateRatio * best;
}

// Eisenstat-Walker choice 2: eta_k = gamma (||F_k|| / ||F_k-1||)^2, with gamma = 0.9, kept at
// least gamma eta_k-1^2 when that is above 0.1 (their safeguard against a too small eta after a
// lucky iteration), at most etaMax; the first iteration takes etaMax. Then the termination
// safeguard (Kelley 1995, eq. 6.20): no solve is asked for more than the Newton tolerance needs,
// eta_k >= 0.5 tolerance / ||F_k||, and never below the fixed floor (linearTolerance).
constexpr Real kForcingGamma = Real(0.9);

CS_HD Real forcingTolerance(Real merit, Real previousMerit, Real previousEta, int k, Real etaMax, Real tolerance,
                            Real floor) {
    Real eta = etaMax;
    if (k > 0 && previousMerit > Real(0)) {
        const Real ratio = merit / previousMerit;
        eta = kForcingGamma * ratio * ratio;
        const Real kept = kForcingGamma * previousEta * previousEta;
        if (kept > Real(0.1) && kept > eta) eta = kept;
    }
    if (merit > Real(0) && Real(0.5) * tolerance / merit > eta) eta = Real(0.5) * tolerance / merit;
    if (eta > etaMax) eta = etaMax;
    return eta > floor ? eta : floor;
}

// The step cut: true when a step's merit exceeds `growth` times the merit it started from and
// cuts are left (growth <= 0: never).
constexpr int kMaxStepCuts = 2;   // t, t/2, t/4: then the step is taken

CS_HD bool cutStep(Real merit, Real start, Real growth, int cuts, int maxCuts) {
    return growth > Real(0) && cuts < maxCuts && !(merit <= growth * start);
}

}  // namespace cs
