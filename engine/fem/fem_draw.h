// The deformable bodies' debug layers, through DebugDraw like every other layer (World::draw):
// the rest shape as a wireframe of its boundary edges, pinned nodes as points, and each node
// attached to a rigid body as a point with a line to where the body holds it. The shaded,
// deformed surface is not a debug layer: the renderer draws it (engine/fem/fem_surface.h).
#pragma once

#include "engine/debug_draw.h"
#include "engine/model.h"
#include "engine/state.h"

namespace cs {

void drawFemBodies(const Model& model, const State& state, DebugDraw& dd);

}  // namespace cs
