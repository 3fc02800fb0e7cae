// The PLUS impact event handler: Algorithm 2 (rounds, outer loop) around Algorithm 1 (one
// interval: active set and least-squares impulse, inner loop). [PLUS] sections 2(c)-3(b),
// table 1 and the appendix. Dense Eigen matrices: impact islands are small (a few bodies, a few
// dozen rows), so the Delassus operator A = G M^-1 G^T is formed once per impact.
#include "engine/contact/plus_impact.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace cs {

namespace {

using MatX = Eigen::MatrixXd;
using VecX = Eigen::VectorXd;

struct Dense {
    int points = 0, rows = 0, bodies = 0;
    MatX G;        // rows x 6 bodies
    MatX W;        // 6 bodies x rows: M^-1 G^T
    MatX A;        // rows x rows: G M^-1 G^T (eq. 2.2)
};

void setRow(MatX& G, int row, int body, const Spatial& j) {
    if (body < 0) return;
    for (int c = 0; c < 3; ++c) {
        G(row, 6 * body + c) += j.lin[c];
        G(row, 6 * body + 3 + c) += j.ang[c];
    }
}

Dense buildDense(const ImpactProblem& p) {
    Dense d;
    d.points = (int)p.points.size();
    d.bodies = (int)p.invMass.size();
    d.rows = 3 * d.points + (int)p.bilateral.size();
    d.G = MatX::Zero(d.rows, 6 * d.bodies);
    for (int k = 0; k < d.points; ++k) {
        const ImpactPoint& q = p.points[k];
        const Vec3 dirs[3] = {q.t1, q.t2, q.normal};
        for (int i = 0; i < 3; ++i) {
            // v_i = dir . (vA + wA x rA - vB - wB x rB): J = [dir, rA x dir | -dir, -(rB x dir)]
            setRow(d.G, 3 * k + i, q.bodyA, Spatial{dirs[i], cross(q.rA, dirs[i])});
            setRow(d.G, 3 * k + i, q.bodyB, Spatial{-dirs[i], -cross(q.rB, dirs[i])});
        }
    }
    for (size_t b = 0; b < p.bilateral.size(); ++b) {
        const ImpactBilateral& j = p.bilateral[b];
        setRow(d.G, 3 * d.points + (int)b, j.bodyA, j.jacobianA);
        setRow(d.G, 3 * d.points + (int)b, j.bodyB, j.jacobianB);
    }
    MatX Minv = MatX::Zero(6 * d.bodies, 6 * d.bodies);
    for (int b = 0; b < d.bodies; ++b) {
        for (int c = 0; c < 3; ++c) Minv(6 * b + c, 6 * b + c) = p.invMass[b];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) Minv(6 * b + 3 + r, 6 * b + 3 + c) = p.invInertia[b].m[r][c];
    }
    d.W = Minv * d.G.transpose();
    d.A = d.G * d.W;
    return d;
}

double norm2(double x, double y) { return std::sqrt(x * x + y * y); }

// What Algorithm 1 needs from the round and what it returns.
struct IntervalInput {
    const Dense& d;
    const ImpactProblem& p;
    const PlusSettings& s;
    const std::vector<int>& phase;      // (points) ImpactPhase, fixed for the round
    const VecX& v;                      // constraint-space velocity at the start of the interval
    const std::vector<double>& piExp;   // (points) expansion impulse still to apply this round
    bool fullSystem = false;            // solve table 1's whole system (the reference) instead of the reduced one
};

struct IntervalOutput {
    VecX pi;                            // full-interval impulse (alpha not applied)
    double alpha = 1;
    int limitedBy = 0;
    std::vector<int> state;             // (points) SlipState
    int activeSetIterations = 0;
};

// Table 1's constraints for the current active set, as B pi = w (all 3 np + nb rows; the
// reference the reduced solve below must agree with).
void assemble(const IntervalInput& in, const std::vector<int>& state, const std::vector<char>& normalActive,
              const std::vector<Vec3>& shat, MatX& B, VecX& w) {
    const int np = in.d.points, m = in.d.rows;
    B.setZero(m, m);
    w.setZero(m);
    for (int k = 0; k < np; ++k) {
        const int z = 3 * k + 2;
        if (in.phase[k] == int(ImpactPhase::Compressing) && normalActive[k]) {
            B.row(z) = in.d.A.row(z);          // A_z pi = -v_z: drive the normal velocity to zero
            w(z) = -in.v(z);
        } else {
            B(z, z) = 1;                        // pi_z = pi_exp (expanding) or 0 (observing, inactive)
            w(z) = in.phase[k] == int(ImpactPhase::Expanding) ? in.piExp[k] : 0.0;
        }
        for (int i = 0; i < 2; ++i) {
            const int r = 3 * k + i;
            if (state[k] == int(SlipState::None)) {
                B(r, r) = 1;                    // observing: no impulse
            } else if (state[k] == int(SlipState::Rolling)) {
                B.row(r) = in.d.A.row(r);       // A_xy pi = -v_xy (eq. 2.7)
                w(r) = -in.v(r);
            } else {
                B(r, r) = 1;                    // pi_xy + mu pi_z s^ = 0 (eq. 2.8)
                B(r, z) = in.p.points[k].mu * shat[k][i];
            }
        }
    }
    for (int r = 3 * np; r < m; ++r) {          // bilateral: G_b (u + du) = 0 (eq. 2.1b)
        B.row(r) = in.d.A.row(r);
        w(r) = -in.v(r);
    }
}

// The same minimum-norm solution, over the free unknowns only. Most rows of B are identities
// that fix a component outright: observers take nothing, an expanding point's normal takes
// pi_exp, a sliding (or impending-slip) point's tangents follow its normal, pi_xy = -mu pi_z s^.
// Write pi = P y + c with y the free unknowns (the normals of active compressing points, the
// tangents of rolling points, the bilateral rows), P their columns (a 1, plus -mu s^ on the
// tangents of a sliding point's normal) and c the fixed part (pi_exp and its friction). The
// columns of P touch disjoint rows and none of c's, so ||pi||^2 = y^T D y + ||c||^2 with
// D = P^T P diagonal (1 + mu^2 on a sliding normal, 1 otherwise): min ||pi|| subject to the free
// rows is min ||D^1/2 y|| subject to (A_free P) y = -v_free - A_free c, one complete orthogonal
// decomposition of an (unknowns)-square matrix instead of a (3 np + nb)-square one. In a large
// island most points observe (an impact on a resting card house: 32 points, 6 to 24 unknowns).
void solveReduced(const IntervalInput& in, const std::vector<int>& state, const std::vector<char>& normalActive,
                  const std::vector<Vec3>& shat, VecX& pi) {
    const int np = in.d.points, m = in.d.rows;
    const MatX& A = in.d.A;
    std::vector<int> row;                 // (unknowns) the row each unknown's equation comes from
    std::vector<Real> coupling;           // (unknowns) mu of a sliding point's normal, else 0
    pi.setZero(m);
    for (int k = 0; k < np; ++k) {
        const int z = 3 * k + 2;
        const bool slides = state[k] == int(SlipState::Sliding) || state[k] == int(SlipState::ImpendingSlip);
        const Real mu = slides ? in.p.points[k].mu : Real(0);
        if (in.phase[k] == int(ImpactPhase::Compressing) && normalActive[k]) {
            row.push_back(z);
            coupling.push_back(mu);
        } else if (in.phase[k] == int(ImpactPhase::Expanding)) {
            pi(z) = in.piExp[k];                // c: pi_z = pi_exp, pi_xy = -mu pi_exp s^
            for (int i = 0; i < 2; ++i) pi(3 * k + i) = -mu * shat[k][i] * in.piExp[k];
        }
        if (state[k] == int(SlipState::Rolling))
            for (int i = 0; i < 2; ++i) {
                row.push_back(3 * k + i);
                coupling.push_back(0);
            }
    }
    for (int r = 3 * np; r < m; ++r) {
        row.push_back(r);
        coupling.push_back(0);
    }
    const int n = (int)row.size();
    if (n == 0) return;
    // K = A_free P D^-1/2 column by column; rhs = -v_free - A_free c.
    MatX K(n, n);
    VecX rhs(n), scale(n);
    for (int j = 0; j < n; ++j) {
        const int r = row[j], k = r / 3;
        const bool coupled = coupling[j] > 0 && r < 3 * np;
        scale(j) = coupled ? 1 / std::sqrt(1 + double(coupling[j]) * coupling[j]) : 1.0;
        for (int i = 0; i < n; ++i) {
            double a = A(row[i], r);
            if (coupled)
                a -= coupling[j] * (shat[k][0] * A(row[i], 3 * k) + shat[k][1] * A(row[i], 3 * k + 1));
            K(i, j) = a * scale(j);
        }
    }
    for (int i = 0; i < n; ++i) rhs(i) = -in.v(row[i]) - A.row(row[i]).dot(pi);
    VecX y = Eigen::CompleteOrthogonalDecomposition<MatX>(K).solve(rhs);
    for (int j = 0; j < n; ++j) {
        const int r = row[j];
        const double yj = y(j) * scale(j);
        pi(r) += yj;
        if (coupling[j] > 0 && r < 3 * np) {
            const int k = r / 3;
            for (int i = 0; i < 2; ++i) pi(3 * k + i) -= coupling[j] * shat[k][i] * yj;
        }
    }
}

// Algorithm 1: the active set and the least-squares impulse of one interval, then its length.
IntervalOutput solveInterval(const IntervalInput& in) {
    const int np = in.d.points;
    const PlusSettings& s = in.s;
    IntervalOutput out;
    out.state.assign(np, int(SlipState::None));
    std::vector<char> normalActive(np, 0);
    std::vector<Vec3> shat(np, Vec3{0, 0, 0});
    for (int k = 0; k < np; ++k) {
        if (in.phase[k] == int(ImpactPhase::Observing)) continue;
        normalActive[k] = in.phase[k] == int(ImpactPhase::Compressing);
        double vx = in.v(3 * k), vy = in.v(3 * k + 1), vt = norm2(vx, vy);
        if (vt >= s.transitionVelocity) {       // S: sliding, s^ = v_xy / |v_xy| (eq. 2.9, first case)
            out.state[k] = int(SlipState::Sliding);
            shat[k] = Vec3{Real(vx / vt), Real(vy / vt), 0};
        } else {
            out.state[k] = int(SlipState::Rolling);
        }
    }
    MatX B;
    VecX w;
    for (int iter = 0; iter <= 2 * np + 1; ++iter) {
        ++out.activeSetIterations;
        // Impending slip is implicit in pi (s^ opposes the velocity at the END of the interval,
        // eq. 2.9 second case): a fixed-point iteration on s^ (the paper uses Newton's method), a
        // few passes, since the end velocity depends weakly on the direction of a friction
        // impulse that is small by construction (the point was rolling an instant before).
        for (int fp = 0; fp < 8; ++fp) {
            if (in.fullSystem) {
                assemble(in, out.state, normalActive, shat, B, w);
                out.pi = Eigen::CompleteOrthogonalDecomposition<MatX>(B).solve(w);   // min ||pi|| (table 1)
            } else {
                solveReduced(in, out.state, normalActive, shat, out.pi);
            }
            double change = 0;
            bool any = false;
            VecX vEnd = in.v + in.d.A * out.pi;
            for (int k = 0; k < np; ++k) {
                if (out.state[k] != int(SlipState::ImpendingSlip)) continue;
                any = true;
                double ex = vEnd(3 * k), ey = vEnd(3 * k + 1), e = norm2(ex, ey);
                if (!(e > 1e-12)) continue;
                Vec3 next{Real(ex / e), Real(ey / e), 0};
                change = std::max(change, (double)length(next - shat[k]));
                shat[k] = next;
            }
            if (!any || change < 1e-6) break;
        }
        // Violations: repulsive normal impulses at compressing points, cones at rolling points.
        double scale = std::max(1e-12, out.pi.lpNorm<Eigen::Infinity>());
        double worst = 1e-9 * scale;
        int worstPoint = -1;
        for (int k = 0; k < np; ++k) {
            double pz = out.pi(3 * k + 2);
            if (in.phase[k] == int(ImpactPhase::Compressing) && normalActive[k] && -pz > worst) {
                worst = -pz;
                worstPoint = k;
            }
            if (out.state[k] == int(SlipState::Rolling)) {
                double excess = norm2(out.pi(3 * k), out.pi(3 * k + 1)) - in.p.points[k].mu * std::max(0.0, pz);
                if (excess > worst) {
                    worst = excess;
                    worstPoint = k;
                }
            }
        }
        if (worstPoint < 0) break;
        // Remove the largest violation; violations equal to it within rounding are removed
        // together, so that mirrored points stay mirrored (symmetry, [PLUS] 3a) instead of
        // being split by the order in which ties are visited.
        std::vector<int> remove;
        for (int k = 0; k < np; ++k) {
            double pz = out.pi(3 * k + 2), v = -1;
            if (out.state[k] == int(SlipState::Rolling))
                v = norm2(out.pi(3 * k), out.pi(3 * k + 1)) - in.p.points[k].mu * std::max(0.0, pz);
            if (in.phase[k] == int(ImpactPhase::Compressing) && normalActive[k]) v = std::max(v, -pz);
            if (v >= worst * (1 - 1e-6)) remove.push_back(k);
        }
        for (int k : remove) {
            if (out.state[k] == int(SlipState::Rolling)) {
                // R <- R \ p: friction cannot prevent sliding; impending slip, first guess of s^
                // opposite to the rolling impulse.
                double px = out.pi(3 * k), py = out.pi(3 * k + 1), pn = norm2(px, py);
                out.state[k] = int(SlipState::ImpendingSlip);
                shat[k] = pn > 0 ? Vec3{Real(-px / pn), Real(-py / pn), 0} : Vec3{1, 0, 0};
            } else {
                normalActive[k] = 0;            // C <- C \ p: no normal impulse needed ((2.5))
            }
        }
    }
    // Interval length: the minimum over sliding points of alpha_CP / alpha_DC (eqs. 2.13-2.14).
    VecX dv = in.d.A * out.pi;
    for (int k = 0; k < np; ++k) {
        if (out.state[k] != int(SlipState::Sliding)) continue;
        int reason = 0;
        double a = plusStepLength(Real(in.v(3 * k)), Real(in.v(3 * k + 1)), Real(dv(3 * k)), Real(dv(3 * k + 1)),
                                  s.transitionVelocity, s.maxDirectionChange, s.minStepLength, &reason);
        if (a < out.alpha) {
            out.alpha = a;
            out.limitedBy = reason;
        }
    }
    return out;
}

}  // namespace

Real impactKineticEnergy(const ImpactProblem& p, const std::vector<Spatial>& u) {
    double e = 0;
    for (size_t b = 0; b < p.invMass.size(); ++b) {
        if (!(p.invMass[b] > 0)) continue;
        Eigen::Matrix3d invI;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) invI(r, c) = p.invInertia[b].m[r][c];
        Eigen::Vector3d w(u[b].ang.x, u[b].ang.y, u[b].ang.z);
        e += 0.5 * lengthSq(u[b].lin) / p.invMass[b] + 0.5 * w.dot(invI.ldlt().solve(w));
    }
    return Real(e);
}

// Algorithm 2: rounds of compression and expansion until no point approaches and no expansion
// impulse is left.
ImpactResult solvePlusImpact(const ImpactProblem& p, const PlusSettings& s, bool recordTrace, bool fullSystem) {
    const Dense d = buildDense(p);
    const int np = d.points;
    ImpactResult res;
    VecX u0(6 * d.bodies);
    for (int b = 0; b < d.bodies; ++b)
        for (int c = 0; c < 3; ++c) {
            u0(6 * b + c) = p.velocity[b].lin[c];
            u0(6 * b + 3 + c) = p.velocity[b].ang[c];
        }
    VecX v = d.G * u0;
    VecX piTotal = VecX::Zero(d.rows);
    double vScale = 1;
    for (int k = 0; k < np; ++k) vScale = std::max(vScale, std::fabs(v(3 * k + 2)));
    const double approachTol = 1e-10 * vScale;   // v_z above -tol counts as non-negative
    std::vector<double> piExp(np, 0.0), piAcc(np, 0.0), e(np, 0.0);
    std::vector<int> phase(np, int(ImpactPhase::Observing)), state(np, int(SlipState::None));
    res.lastPhase.assign(np, int(ImpactPhase::Observing));
    res.velocityStart.resize(np);
    for (int k = 0; k < np; ++k) res.velocityStart[k] = Vec3{Real(v(3 * k)), Real(v(3 * k + 1)), Real(v(3 * k + 2))};

    for (int round = 0; round < s.maxRounds; ++round) {
        // Classify at the beginning of the round ([PLUS] 3b): expanding points compressed in the
        // previous round with a non-zero impulse and COR; observing points do not approach.
        // An expansion impulse at round-off level (a compressing point that took a normal
        // impulse of 1e-17 N s) is none: otherwise the rounding of the solve decides whether the
        // point expands, and the rounds that follow.
        double piScale = 0;
        for (int k = 0; k < np; ++k) piScale = std::max(piScale, std::fabs(piTotal(3 * k + 2)));
        bool anyActive = false;
        for (int k = 0; k < np; ++k) {
            if (piAcc[k] > 1e-12 * piScale) {
                phase[k] = int(ImpactPhase::Expanding);
                piExp[k] = piAcc[k];             // pi_exp <- pi_acc
            } else if (v(3 * k + 2) < -approachTol) {
                phase[k] = int(ImpactPhase::Compressing);
                e[k] = plusRestitution(Real(-v(3 * k + 2)), s.captureVelocity, s.plasticVelocity,
                                       p.points[k].minRestitution);
                piExp[k] = 0;
            } else {
                phase[k] = int(ImpactPhase::Observing);
                piExp[k] = 0;
            }
            piAcc[k] = 0;
            if (phase[k] != int(ImpactPhase::Observing)) {
                anyActive = true;
                res.lastPhase[k] = phase[k];
            }
        }
        if (!anyActive) break;
        ++res.rounds;
        for (;;) {
            if (res.intervals >= s.maxIntervals) {
                res.converged = false;
                break;
            }
            IntervalOutput it = solveInterval(IntervalInput{d, p, s, phase, v, piExp, fullSystem});
            res.activeSetIterations += it.activeSetIterations;
            ++res.intervals;
            VecX step = it.alpha * it.pi;
            v += d.A * step;                    // v <- v + A pi_step
            piTotal += step;                    // pi_total <- pi_total + pi_step
            for (int k = 0; k < np; ++k) {
                if (phase[k] == int(ImpactPhase::Expanding)) piExp[k] *= (1 - it.alpha);   // pi_exp <- (1 - alpha) pi_exp
                if (phase[k] == int(ImpactPhase::Compressing))
                    piAcc[k] += e[k] * std::max(0.0, step(3 * k + 2));   // pi_acc <- pi_acc + e pi_comp (eq. 2.4)
            }
            state = it.state;
            if (recordTrace) {
                ImpactInterval rec;
                rec.round = round;
                rec.alpha = Real(it.alpha);
                rec.limitedBy = it.limitedBy;
                rec.phase = phase;
                rec.state = it.state;
                for (int k = 0; k < np; ++k) {
                    rec.impulse.push_back(Vec3{Real(piTotal(3 * k)), Real(piTotal(3 * k + 1)), Real(piTotal(3 * k + 2))});
                    rec.velocity.push_back(Vec3{Real(v(3 * k)), Real(v(3 * k + 1)), Real(v(3 * k + 2))});
                }
                VecX u = u0 + d.W * piTotal;     // body velocities for the replay's arrows
                for (int b = 0; b < d.bodies; ++b)
                    rec.bodyVelocity.push_back(Spatial{{Real(u(6 * b)), Real(u(6 * b + 1)), Real(u(6 * b + 2))},
                                                       {Real(u(6 * b + 3)), Real(u(6 * b + 4)), Real(u(6 * b + 5))}});
                res.trace.push_back(std::move(rec));
            }
            if (it.alpha >= 1) break;           // the round is complete
        }
        if (!res.converged) break;
        if (round + 1 == s.maxRounds) res.converged = false;
    }

    VecX du = d.W * piTotal;
    res.deltaVelocity.resize(d.bodies);
    for (int b = 0; b < d.bodies; ++b)
        res.deltaVelocity[b] = Spatial{{Real(du(6 * b)), Real(du(6 * b + 1)), Real(du(6 * b + 2))},
                                       {Real(du(6 * b + 3)), Real(du(6 * b + 4)), Real(du(6 * b + 5))}};
    res.impulse.resize(np);
    res.velocityEnd.resize(np);
    res.lastState = state;
    for (int k = 0; k < np; ++k) {
        res.impulse[k] = Vec3{Real(piTotal(3 * k)), Real(piTotal(3 * k + 1)), Real(piTotal(3 * k + 2))};
        res.velocityEnd[k] = Vec3{Real(v(3 * k)), Real(v(3 * k + 1)), Real(v(3 * k + 2))};
    }
    return res;
}

}  // namespace cs
