// Accuracy metrics of a world's current state, shared by the runner, the experiments and the
// app's compare table: the overlap volume of [PEG] Williams, Lu, Trinkle 2016, section 6 (the
// volume of interpenetration among all bodies, measured after each step). The deepest overlap
// is World::maxPenetration; both run over World::overlappingPairs, so an overlap that the
// contact margin no longer lists (a collapsed stack) still counts.
#pragma once

#include "engine/world.h"

namespace cs {

// Total intersection volume over the pairs of parts that overlap now (World::overlappingPairs:
// parts of different bodies, both active, not both static, not joined; parts of one compound
// body and static parts such as a container's walls may overlap by construction). Pairs come
// from the broad phase (n log n, not n^2), are culled by a face-plane separation test, then
// measured exactly (engine/geometry/overlap_volume.h).
double totalOverlapVolume(const World& world);

}  // namespace cs
