// Polytope-polytope potential contacts: the feature pairs of [PEG] section 5.2 (3D).
//
// Four passes over the world-frame polytopes, each a loop over a CS_HD test of
// feature_pairs.h; the passes themselves are CS_HD too (collidePolytopePair in shape_pair_hd.h),
// so the CUDA narrow phase runs exactly this code:
//   1. vertex(A)-face(B) and vertex(B)-face(A): plane gap, feasibility (face region widened),
//      applicability (eq. 28 relaxed by eps_theta; [PEG] section 4);
//   2. edge-edge: closest points interior to both edges, normal +-(e_a x e_b) oriented by the
//      edges' normal cones (tangents t_k, eqs. 25, 31-32);
//   3. vertex-edge, 4. vertex-vertex: Euclidean closest-feature contacts for the configurations
//      no vertex-face contact covers (a vertex beyond the widened faces of an edge or vertex).
// The conventions and the exact acceptance rules are in narrow_phase.h.
#include "engine/collision/narrow_phase.h"
#include "engine/collision/shape_pair_hd.h"
#include "engine/collision/world_polytope.h"

namespace cs {

void collidePolytopes(const ConvexPolytope& a, const Transform& Xa, const ConvexPolytope& b,
                      const Transform& Xb, const NarrowPhaseSettings& s,
                      std::vector<PotentialContact>& out) {
    if (!boundsMayTouch(transformPoint(Xa, a.centroid), a.boundingRadius, transformPoint(Xb, b.centroid),
                        b.boundingRadius, s.margin))
        return;
    thread_local WorldPolytope wa, wb;
    thread_local std::vector<PotentialContact> buffer(32);
    wa.assign(a, Xa);
    wb.assign(b, Xb);
    for (;;) {   // a sink too small for the pair: grow it and run the pair again
        ContactSink sink{buffer.data(), (int)buffer.size(), 0};
        collidePolytopePair(wa.view(), wb.view(), s, sink);
        if (sink.count <= sink.capacity) {
            out.insert(out.end(), buffer.begin(), buffer.begin() + sink.count);
            return;
        }
        buffer.resize(2 * size_t(sink.count));
    }
}

}  // namespace cs
