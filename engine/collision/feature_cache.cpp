// Narrow-phase reuse on the CPU: the shared candidate code of feature_cache_hd.h over a
// FeatureCacheEntry's vector (feature_cache.h derives the bound).
#include "engine/collision/feature_cache.h"

namespace cs {

void buildCandidates(const PolytopeView& A, const PolytopeView& B, const Transform& Xa, const Transform& Xb,
                     const NarrowPhaseSettings& s, Real slack, FeatureCacheEntry& e) {
    e.candidates.resize(e.candidates.capacity() > 16 ? e.candidates.capacity() : 16);
    for (;;) {   // a vector too small for the pair: grow it and list again
        CandidateSink sink{e.candidates.data(), (int)e.candidates.size(), 0};
        buildCandidates(A, B, Xa, Xb, s, slack, e.frame, sink);
        const bool fits = sink.count <= sink.capacity;
        e.candidates.resize(sink.count);
        if (fits) return;
    }
}

void collideCandidates(const PolytopeView& A, const PolytopeView& B, const NarrowPhaseSettings& s,
                       const FeatureCacheEntry& e, Real delta, ContactSink& sink, bool apartChecked) {
    collideCandidates(A, B, s, e.frame, e.candidates.data(), (int)e.candidates.size(), delta, sink, apartChecked);
}

}  // namespace cs
