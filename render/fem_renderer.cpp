// Deformed FEM surfaces through the scene renderer's shaders (fem_renderer.h).
#include "render/fem_renderer.h"

#include <glad/gl.h>

#include <cstddef>

namespace cs {

void FemRenderer::shutdown() {
    if (vao_) glDeleteVertexArrays(1, &vao_);
    if (vbo_) glDeleteBuffers(1, &vbo_);
    vao_ = vbo_ = 0;
    capacity_ = 0;
    vertexCount_ = 0;
}

void FemRenderer::update(const World& world, const FemSurfaceStyle& style) {
    const Model& model = world.model();
    vertexCount_ = 0;
    if (model.femTris.empty()) return;
    if (model_ != &model || modelTris_ != model.femTris.size()) {
        triTets_ = femBoundaryTriangleTets(model);
        model_ = &model;
        modelTris_ = model.femTris.size();
    }
    range_ = buildFemSurface(model, world.state(), style, triTets_, vertices_);
    if (vertices_.empty()) return;
    if (!vao_) {
        glGenVertexArrays(1, &vao_);
        glGenBuffers(1, &vbo_);
        glBindVertexArray(vao_);
        glBindBuffer(GL_ARRAY_BUFFER, vbo_);
        const GLsizei stride = sizeof(FemSurfaceVertex);
        glEnableVertexAttribArray(0);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, stride, (void*)offsetof(FemSurfaceVertex, pos));
        glEnableVertexAttribArray(1);
        glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, stride, (void*)offsetof(FemSurfaceVertex, normal));
        glEnableVertexAttribArray(5);   // the colour: per vertex here, per instance for rigid bodies
        glVertexAttribPointer(5, 4, GL_FLOAT, GL_FALSE, stride, (void*)offsetof(FemSurfaceVertex, color));
        glBindVertexArray(0);
    }
    glBindBuffer(GL_ARRAY_BUFFER, vbo_);
    const size_t bytes = vertices_.size() * sizeof(FemSurfaceVertex);
    if (bytes > capacity_) {
        capacity_ = 2 * bytes;
        glBufferData(GL_ARRAY_BUFFER, capacity_, nullptr, GL_STREAM_DRAW);
    }
    glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, vertices_.data());
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    vertexCount_ = int(vertices_.size());
}

void FemRenderer::draw() {
    if (vertexCount_ == 0) return;
    glBindVertexArray(vao_);
    // Attributes 2..4 (the instance's model matrix rows) are disabled arrays in this vertex array:
    // the shaders read the current values, set to the identity.
    glVertexAttrib4f(2, 1, 0, 0, 0);
    glVertexAttrib4f(3, 0, 1, 0, 0);
    glVertexAttrib4f(4, 0, 0, 1, 0);
    glDrawArrays(GL_TRIANGLES, 0, vertexCount_);
    glBindVertexArray(0);
}

}  // namespace cs
