// The standard contact model, one potential contact at a time, for both backends.
//
// standard_model.cpp (CPU) and the CUDA step (gpu/gpu_collision.cu's rowsKernel, via
// engine/exec/step_hd.h) build the same three rows per potential contact from these CS_HD functions.
// The model itself is described in standard_model.cpp: [NSN] sections 3.3-4.3, [PEG] eq. 9.
#pragma once

#include "engine/collision/potential_contact.h"
#include "engine/state.h"

namespace cs {

// J of a point velocity along dir at lever arm r: [dir, r x dir].
CS_HD Spatial contactPointJacobian(Vec3 r, Vec3 dir) { return Spatial{dir, cross(r, dir)}; }

// Coulomb coefficient of a pair: geometric mean of the materials' (Box2D's rule) times a scale.
CS_HD Real mixFrictionCoefficient(Real muA, Real muB, Real scale) { return std::sqrt(muA * muB) * scale; }

// The identity of a contact across steps (state.h).
CS_HD ContactKey contactKeyOf(const PotentialContact& c) {
    return ContactKey{(uint64_t(uint32_t(c.shapeA)) << 32) | uint32_t(c.shapeB),
                      (uint64_t(c.featureA) << 32) | c.featureB};
}
CS_HD bool contactKeyLess(const ContactKey& a, const ContactKey& b) {
    return a.shapes != b.shapes ? a.shapes < b.shapes : a.features < b.features;
}

// Index of key in warm[0..count) (sorted by key), or -1: a binary search (std::lower_bound).
CS_HD int findWarmIndex(const WarmImpulse* warm, int count, const ContactKey& key) {
    int lo = 0, hi = count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (contactKeyLess(warm[mid].key, key)) lo = mid + 1;
        else hi = mid;
    }
    return lo < count && warm[lo].key.shapes == key.shapes && warm[lo].key.features == key.features ? lo : -1;
}

// Two feature pairs of one shape pair that constrain the same point along the same normal (a
// vertex of A on a face of B and a vertex of B on a face of A where two equal boxes meet face to
// face): the standard model keeps the first. contacts[first..ci) are the earlier contacts of
// contact ci's shape pair.
CS_HD bool duplicateOfEarlierContact(const PotentialContact* contacts, int ci, int first) {
    const Real tol = Real(1e-5);
    for (int k = first; k < ci; ++k)
        if (lengthSq(contacts[k].pointA - contacts[ci].pointA) < tol * tol &&
            dot(contacts[k].normal, contacts[ci].normal) > Real(0.9999))
            return true;
    return false;
}

// The normal row and the two friction rows of one contact: row 0 along n, rows 1 and 2 along
// the tangents t1, t2 (tangentBasis). xA, xB: the bodies' centres of mass (ignored for -1).
struct StandardContactRows {
    Spatial jacobianA[3], jacobianB[3];
    Real bias;        // normal row: psi, the gap with overlaps scaled by the stabilization ([PEG] eq. 9)
    Vec3 tangent[2];
};

// The gap kept in a normal row ([PEG] eq. 9 keeps psi/h as the stabilization term): overlaps
// scaled by the stabilization fraction and never corrected by more than maxPushout (m) in one
// step, i.e. no faster than maxPushoutSpeed (as Box2D's contact push-out limit): a deep overlap
// (a thin link passing into another) corrected in one step launches the bodies apart.
CS_HD Real stabilizedGap(Real gap, Real stabilization, Real maxPushout) {
    if (gap >= 0) return gap;
    Real g = stabilization * gap;
    return g > -maxPushout ? g : -maxPushout;
}

CS_HD StandardContactRows standardContactRows(const PotentialContact& c, Vec3 xA, Vec3 xB, Real stabilization,
                                              Real maxPushout = Real(1e30)) {
    StandardContactRows r;
    Vec3 rA = c.bodyA >= 0 ? c.pointA - xA : Vec3{0, 0, 0};
    Vec3 rB = c.bodyB >= 0 ? c.pointB - xB : Vec3{0, 0, 0};
    r.bias = stabilizedGap(c.gap, stabilization, maxPushout);
    tangentBasis(c.normal, r.tangent[0], r.tangent[1]);
    r.jacobianA[0] = contactPointJacobian(rA, c.normal);
    r.jacobianB[0] = contactPointJacobian(rB, -c.normal);
    for (int k = 0; k < 2; ++k) {
        r.jacobianA[1 + k] = contactPointJacobian(rA, r.tangent[k]);
        r.jacobianB[1 + k] = contactPointJacobian(rB, -r.tangent[k]);
    }
    return r;
}

// Last step's impulse re-projected onto this step's rows: normal, then the two tangents.
CS_HD void warmRowImpulses(const WarmImpulse& w, const StandardContactRows& r, Real out[3]) {
    out[0] = w.normal;
    out[1] = dot(w.tangent, r.tangent[0]);
    out[2] = dot(w.tangent, r.tangent[1]);
}

}  // namespace cs
