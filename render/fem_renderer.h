// Deformable bodies in the scene renderer: the deformed boundary surface (engine/fem/fem_surface.h)
// uploaded each frame into one dynamic vertex buffer and drawn with the bodies' own shaders
// (mesh_vert/mesh_frag, and shadow_vert for the shadow pass), so the surface is lit, shadowed
// and casts shadows like a rigid body. The instance rows the shaders read are held constant at
// the identity (disabled arrays, glVertexAttrib4f): the vertices are already in the world.
#pragma once

#include <vector>

#include "engine/fem/fem_surface.h"
#include "engine/world.h"

namespace cs {

class FemRenderer {
public:
    void shutdown();
    // Rebuilds the vertices from the world's FEM bodies (nothing when it has none).
    void update(const World& world, const FemSurfaceStyle& style);
    // Draws them with the program bound by the caller (mesh or shadow).
    void draw();
    bool empty() const { return vertexCount_ == 0; }
    const FemFieldRange& range() const { return range_; }   // of the last update

private:
    unsigned vao_ = 0, vbo_ = 0;
    size_t capacity_ = 0;
    int vertexCount_ = 0;
    const Model* model_ = nullptr;     // the model triTets_ was built for
    size_t modelTris_ = 0;
    std::vector<int> triTets_;
    std::vector<FemSurfaceVertex> vertices_;
    FemFieldRange range_;
};

}  // namespace cs
