// The standard contact model: every potential contact is a unilateral constraint on the plane
// of its feature pair, with smooth isotropic Coulomb friction.
//
// [NSN] Macklin et al. 2019, sections 3.3-4.3 and Appendix A; [PEG] Williams et al. 2016 eq. 9
// (one constraint per potential contact: 0 <= p_n _|_ psi_n/h + G_n^T nu >= 0). This is the model
// whose SM traps [PEG] section 2 describes: each face acts as an infinite plane.
//
// For a contact with unit normal n (from B to A) at witness points pA, pB, lever arms
// rA = pA - xA, rB = pB - xB, and tangents t1, t2 completing n to a frame:
//   normal row   J = [ n, rA x n | -n, -(rB x n) ],   C0 = psi (the gap, m)
//   friction row J = [ t, rA x t | -t, -(rB x t) ]    for t = t1, t2 (D^T u of eq. 31)
#include <algorithm>

#include "engine/contact/contact_model.h"

namespace cs {

Real mixFriction(const Model& model, int bodyA, int bodyB, Real scale) {
    Real ma = bodyA >= 0 ? model.materials[model.bodyMaterial[bodyA]].friction : Real(0);
    Real mb = bodyB >= 0 ? model.materials[model.bodyMaterial[bodyB]].friction : Real(0);
    return std::sqrt(ma * mb) * scale;
}

namespace {

Spatial pointJacobian(Vec3 r, Vec3 dir) { return Spatial{dir, cross(r, dir)}; }

const WarmImpulse* findWarm(const std::vector<WarmImpulse>& warm, const ContactKey& key) {
    auto it = std::lower_bound(warm.begin(), warm.end(), key,
                               [](const WarmImpulse& w, const ContactKey& k) { return w.key < k; });
    return it != warm.end() && it->key == key ? &*it : nullptr;
}

ContactKey keyOf(const PotentialContact& c) {
    return ContactKey{(uint64_t(uint32_t(c.shapeA)) << 32) | uint32_t(c.shapeB),
                      (uint64_t(c.featureA) << 32) | c.featureB};
}

// Two feature pairs of one shape pair that constrain the same point along the same normal:
// a vertex of A on a face of B and a vertex of B on a face of A where two equal boxes meet face
// to face. The standard model keeps one; the rows would be identical (a singular system that
// costs twice as much). PEG, which reasons about feature pairs, sees them all.
bool duplicateOfEarlier(const std::vector<PotentialContact>& pc, size_t ci, size_t first) {
    const Real tol = Real(1e-5);
    for (size_t k = first; k < ci; ++k)
        if (lengthSq(pc[k].pointA - pc[ci].pointA) < tol * tol && dot(pc[k].normal, pc[ci].normal) > Real(0.9999))
            return true;
    return false;
}

}  // namespace

void buildStandardRows(const ContactStageInput& in, ConstraintRows& rows) {
    const SolverSettings& solver = in.settings.solver;
    size_t pairFirst = 0;   // first contact of the current shape pair (contacts come grouped)
    for (size_t ci = 0; ci < in.potential.size(); ++ci) {
        const PotentialContact& c = in.potential[ci];
        if (ci > 0 && (c.shapeA != in.potential[ci - 1].shapeA || c.shapeB != in.potential[ci - 1].shapeB))
            pairFirst = ci;
        if (duplicateOfEarlier(in.potential, ci, pairFirst)) continue;
        Vec3 rA = c.bodyA >= 0 ? c.pointA - in.state.pos[c.bodyA] : Vec3{0, 0, 0};
        Vec3 rB = c.bodyB >= 0 ? c.pointB - in.state.pos[c.bodyB] : Vec3{0, 0, 0};
        // [PEG] eq. 9 keeps psi/h as the stabilization term; a fraction of it for overlaps.
        Real psi = c.gap < 0 ? solver.stabilization * c.gap : c.gap;
        int n = rows.add(RowKind::Normal, c.bodyA, c.bodyB, pointJacobian(rA, c.normal),
                         pointJacobian(rB, -c.normal), psi, 0, (int)ci);
        Vec3 t[2];
        tangentBasis(c.normal, t[0], t[1]);
        Real mu = mixFriction(in.model, c.bodyA, c.bodyB, in.settings.frictionScale);
        for (int k = 0; k < 2; ++k) {
            int f = rows.add(RowKind::Friction, c.bodyA, c.bodyB, pointJacobian(rA, t[k]), pointJacobian(rB, -t[k]),
                             0, 0, (int)ci);
            rows.mu[f] = mu;
            rows.normalRow[f] = n;
        }
        if (solver.warmStart) {
            if (const WarmImpulse* w = findWarm(in.state.warm, keyOf(c))) {
                rows.lambda[n] = w->normal;
                rows.lambda[n + 1] = dot(w->tangent, t[0]);
                rows.lambda[n + 2] = dot(w->tangent, t[1]);
            }
        }
    }
}

void storeStandardResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                          std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    contacts.clear();
    warm.clear();
    for (int i = 0; i < rows.size(); ++i) {
        if (rows.kind[i] != int(RowKind::Normal) || rows.owner[i] < 0) continue;
        const PotentialContact& g = in.potential[rows.owner[i]];
        Contact c;
        c.geometry = g;
        c.mu = rows.mu[i + 1];
        c.normalImpulse = rows.lambda[i];
        c.tangentImpulse[0] = rows.lambda[i + 1];
        c.tangentImpulse[1] = rows.lambda[i + 2];
        tangentBasis(g.normal, c.tangent[0], c.tangent[1]);
        // Sliding: the friction impulse is on the cone's boundary and the point slips.
        Real ft = std::sqrt(c.tangentImpulse[0] * c.tangentImpulse[0] + c.tangentImpulse[1] * c.tangentImpulse[1]);
        Real slip = 0;
        for (int k = 0; k < 2; ++k) {
            Real v = 0;
            if (g.bodyA >= 0) v += dot(rows.jacobianA[i + 1 + k], bodies.velocity[g.bodyA]);
            if (g.bodyB >= 0) v += dot(rows.jacobianB[i + 1 + k], bodies.velocity[g.bodyB]);
            slip += v * v;
        }
        c.sliding = c.normalImpulse > 0 && ft >= Real(0.99) * c.mu * c.normalImpulse && std::sqrt(slip) > Real(1e-3);
        contacts.push_back(c);
        warm.push_back(WarmImpulse{keyOf(g), c.normalImpulse,
                                   c.tangentImpulse[0] * c.tangent[0] + c.tangentImpulse[1] * c.tangent[1]});
    }
    std::sort(warm.begin(), warm.end(), [](const WarmImpulse& a, const WarmImpulse& b) { return a.key < b.key; });
}

}  // namespace cs
