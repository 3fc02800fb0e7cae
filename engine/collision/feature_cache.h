// Narrow-phase reuse between steps (WorldSettings::narrowReuse, scene key "narrow_reuse"; issue 20).
//
// A pair of polytopes at rest lists the same feature pairs step after step, yet the full search
// (shape_pair_hd.h collidePolytopePair) tests every vertex against every face, every edge against
// every edge. The cache keeps, per shape pair, a short list of *candidate* feature pairs found
// once at a pose P0 with every acceptance test relaxed by a slack, and while the pair's relative
// pose stays within that slack of P0, a step runs the exact tests of the full search (same
// functions, same settings, same pass order, same coverage rules) on the candidates only. The
// output is then the full search's, bit for bit, not an approximation of it: every feature pair
// the full search would accept at the current pose is a candidate, as derived here.
//
// The bound. Let delta be the largest displacement, since P0, of any point of A in B's frame and
// of any point of B in A's frame (|change of the centroid in the other's frame| + theta * bounding
// radius), and theta the angle of the relative rotation. In the other body's frame a vertex then
// moves by at most delta, so each quantity the tests threshold changes by at most:
//   vertex-face gap g = eta.v - d, the largest face gap maxGap, the feasibility excess
//   (max over the face's edges of a distance to a plane through it, unit tangents t_k), a
//   point-segment or point-point distance, a segment-segment distance, the face-axis
//   separation (max over faces of the least vertex gap)           ......... delta
//   g - maxGap (the faceWindow test)                                ......... 2 delta
//   vertex applicability (min of eta . unit edge directions; both unit, one side turned
//   by theta, so each dot product moves by at most |2 sin(theta/2)| <= theta) ... theta
// So with candidate settings C = S0 + slack (margin, regionWidening + s, faceWindow + 2s, epsTheta
// + theta_s), a feature pair accepted at the current pose with settings S is a candidate when
//   delta <= s, delta <= C.margin - S.margin, delta <= C.regionWidening - S.regionWidening,
//   2 delta <= C.faceWindow - S.faceWindow, theta <= C.epsTheta - S.epsTheta            (*)
// (S may differ from S0: the speculative widening follows the velocities). The candidates are
//   vertex-face: the pairs vertexFacePass accepts at P0 with C (each of its tests relaxed as above);
//   vertex-edge, vertex-vertex: point-segment / point-point distance at P0 <= C.margin (an accepted
//     pair has that distance <= S.margin, and the direction tests are ill-conditioned near contact);
//   edge-edge: segment-segment distance at P0 <= max(C.margin, min(maxEdgeDepth + s, C.faceWindow -
//     sep0)), sep0 the face-axis separation at P0 (an accepted pair's closest points are interior,
//     so |gap| is the segments' distance, and gap >= max(-maxEdgeDepth, sep - S.faceWindow)).
// The deep-overlap pass returns at once when the face-axis separation is >= -S.margin; that holds
// when sep0 - delta >= -S.margin, else it runs in full. The slack s is kSlackFraction of the base
// margin (5 mm at the default 2 cm) and theta_s = s / max(R_A, R_B), so delta <= s implies theta <=
// theta_s. A pair whose relative pose leaves (*) is searched in full again (new candidates).
// Candidates are built only for pairs expected to stay within the slack for a few steps
// (relative motion per step, from the velocities, below s / 4): moving pairs get the plain
// search and no entry, so they pay nothing for the cache. The decision, the candidates and the tests on
// them are CS_HD code (feature_cache_hd.h), run by the CPU narrow phase and by the step pipeline
// (engine/exec/pipeline_collide.h, host and CUDA executors) alike.
#pragma once

#include <vector>

#include "engine/collision/broad_phase.h"
#include "engine/collision/feature_cache_hd.h"

namespace cs {

// A pair's entry on the CPU: its candidates and the frame they were built at (feature_cache_hd.h).
struct FeatureCacheEntry {
    ShapePair pair{-1, -1};
    const ConvexPolytope* polytopeA = nullptr;   // the model's polytopes when built (an edit invalidates)
    const ConvexPolytope* polytopeB = nullptr;
    CandidateFrame frame;                        // P0, C, s, the separation at P0
    std::vector<FeatureCandidate> candidates;    // in the passes' order
};

// Per world: the entries of the last narrow phase, sorted by pair, and its counts.
struct FeatureCache {
    std::vector<FeatureCacheEntry> entries;
    int reusedPairs = 0;    // last call: polytope pairs run on their candidates
    int rebuiltPairs = 0;   // searched in full with new candidates
    int fullPairs = 0;      // searched in full without an entry (moving pairs, spheres)
    void clear() { *this = FeatureCache{}; }
};

// Fills e's frame and candidates from the world-frame polytopes at poses Xa, Xb (P0) and pair
// settings s (feature_cache_hd.h buildCandidates, into the entry's vector).
void buildCandidates(const PolytopeView& A, const PolytopeView& B, const Transform& Xa, const Transform& Xb,
                     const NarrowPhaseSettings& s, Real slack, FeatureCacheEntry& e);

// collidePolytopePair's output, from e's candidates only (delta: relativeMotion since P0).
void collideCandidates(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                       const FeatureCacheEntry& e, Real delta, ContactSink& sink, bool apartChecked = false);

}  // namespace cs
