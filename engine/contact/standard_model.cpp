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
// The per-contact math is CS_HD in standard_rows_hd.h, shared with the CUDA backend. With
// in.cull, contacts that cannot close within the step get no rows (row_culling.h).
#include <algorithm>

#include "engine/contact/contact_model.h"
#include "engine/contact/row_culling.h"
#include "engine/contact/standard_rows_hd.h"

namespace cs {

Real mixFriction(const Model& model, int bodyA, int bodyB, Real scale) {
    Real ma = bodyA >= 0 ? model.materials[model.bodyMaterial[bodyA]].friction : Real(0);
    Real mb = bodyB >= 0 ? model.materials[model.bodyMaterial[bodyB]].friction : Real(0);
    return mixFrictionCoefficient(ma, mb, scale);
}

void buildStandardRows(const ContactStageInput& in, ConstraintRows& rows) {
    const SolverSettings& solver = in.settings.solver;
    const PotentialContact* pc = in.potential.data();
    const int warmCount = (int)in.state.warm.size();
    int pairFirst = 0;   // first contact of the current shape pair (contacts come grouped)
    if (in.cull) {
        in.cull->culled.clear();
        in.cull->pushoutSpeed = cullPushoutSpeed(in.potential, in.settings, in.h);
    }
    for (int ci = 0; ci < (int)in.potential.size(); ++ci) {
        const PotentialContact& c = pc[ci];
        if (ci > 0 && (c.shapeA != pc[ci - 1].shapeA || c.shapeB != pc[ci - 1].shapeB)) pairFirst = ci;
        if (duplicateOfEarlierContact(pc, ci, pairFirst)) continue;
        if (in.cull && contactCannotClose(c, in.model, in.state, in.settings.gravity, in.cull->pushoutSpeed, in.h)) {
            in.cull->culled.push_back(ci);
            continue;
        }
        const Vec3 zero{0, 0, 0};
        StandardContactRows r = standardContactRows(c, c.bodyA >= 0 ? in.state.pos[c.bodyA] : zero,
                                                    c.bodyB >= 0 ? in.state.pos[c.bodyB] : zero,
                                                    solver.stabilization, solver.maxPushoutSpeed * in.h);
        int n = rows.add(RowKind::Normal, c.bodyA, c.bodyB, r.jacobianA[0], r.jacobianB[0], r.bias, 0, ci);
        Real mu = mixFriction(in.model, c.bodyA, c.bodyB, in.settings.frictionScale);
        for (int k = 1; k <= 2; ++k) {
            int f = rows.add(RowKind::Friction, c.bodyA, c.bodyB, r.jacobianA[k], r.jacobianB[k], 0, 0, ci);
            rows.mu[f] = mu;
            rows.normalRow[f] = n;
        }
        if (solver.warmStart) {
            int w = findWarmIndex(in.state.warm.data(), warmCount, contactKeyOf(c));
            if (w >= 0) warmRowImpulses(in.state.warm[w], r, &rows.lambda[n]);
        }
    }
}

namespace {

// A left-out contact as World::contacts() reports it: open, no impulse, not sliding.
Contact openContact(const ContactStageInput& in, int ci) {
    const PotentialContact& g = in.potential[ci];
    Contact c;
    c.geometry = g;
    c.mu = mixFriction(in.model, g.bodyA, g.bodyB, in.settings.frictionScale);
    c.normalImpulse = c.tangentImpulse[0] = c.tangentImpulse[1] = 0;
    tangentBasis(g.normal, c.tangent[0], c.tangent[1]);
    c.sliding = false;
    return c;
}

}  // namespace

void storeStandardResults(const ContactStageInput& in, const ConstraintRows& rows, const BodyVelocities& bodies,
                          std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    contacts.clear();
    warm.clear();
    const int culledCount = in.cull ? (int)in.cull->culled.size() : 0;
    int nextCulled = 0;   // left-out contacts are listed in their place, with zero impulses
    for (int i = 0; i < rows.size(); ++i) {
        if (rows.kind[i] != int(RowKind::Normal) || rows.owner[i] < 0) continue;
        for (; nextCulled < culledCount && in.cull->culled[nextCulled] < rows.owner[i]; ++nextCulled)
            contacts.push_back(openContact(in, in.cull->culled[nextCulled]));
        const PotentialContact& g = in.potential[rows.owner[i]];
        Contact c = contactFromRows(g, rows, i, bodies.velocity.data());
        contacts.push_back(c);
        warm.push_back(WarmImpulse{contactKeyOf(g), c.normalImpulse,
                                   c.tangentImpulse[0] * c.tangent[0] + c.tangentImpulse[1] * c.tangent[1]});
    }
    for (; nextCulled < culledCount; ++nextCulled) contacts.push_back(openContact(in, in.cull->culled[nextCulled]));
    std::sort(warm.begin(), warm.end(), [](const WarmImpulse& a, const WarmImpulse& b) { return a.key < b.key; });
}

}  // namespace cs
