// Batched debug drawing; see debug_renderer.h.
#include "render/debug_renderer.h"

#include <glad/gl.h>
#include <imgui.h>

#include <glm/gtc/type_ptr.hpp>

#include "render/shader_program.h"
#include "render/shaders_embedded.h"

namespace cs {

namespace {
DebugVertex vertex(Vec3 p, Color c, float size) {
    return DebugVertex{float(p.x), float(p.y), float(p.z), c.r, c.g, c.b, c.a, size};
}
void cbLine(Vec3 a, Vec3 b, Color c, void* ctx) { static_cast<DebugRenderer*>(ctx)->line(a, b, c); }
void cbPoint(Vec3 p, float s, Color c, void* ctx) { static_cast<DebugRenderer*>(ctx)->point(p, s, c); }
void cbTriangle(Vec3 a, Vec3 b, Vec3 c, Color col, void* ctx) {
    static_cast<DebugRenderer*>(ctx)->triangle(a, b, c, col);
}
void cbText(Vec3 p, const char* s, Color c, void* ctx) { static_cast<DebugRenderer*>(ctx)->text(p, s, c); }
}  // namespace

bool DebugRenderer::init(std::string* error) {
    program_ = buildProgram(kShader_lines_vert, kShader_lines_frag, "lines", error);
    if (!program_) return false;
    glGenVertexArrays(1, &vao_);
    glBindVertexArray(vao_);
    glGenBuffers(1, &vbo_);
    glBindBuffer(GL_ARRAY_BUFFER, vbo_);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, sizeof(DebugVertex), (void*)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, sizeof(DebugVertex), (void*)12);
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 1, GL_FLOAT, GL_FALSE, sizeof(DebugVertex), (void*)28);
    glBindVertexArray(0);
    return true;
}

void DebugRenderer::shutdown() {
    if (vbo_) glDeleteBuffers(1, &vbo_);
    if (vao_) glDeleteVertexArrays(1, &vao_);
    if (program_) glDeleteProgram(program_);
    vbo_ = vao_ = program_ = 0;
}

DebugDraw DebugRenderer::makeDebugDraw(const DebugDrawFlags& flags) {
    DebugDraw d;
    d.drawLine = cbLine;
    d.drawPoint = cbPoint;
    d.drawTriangle = cbTriangle;
    d.drawText = cbText;
    d.flags = flags;
    d.context = this;
    return d;
}

void DebugRenderer::clear() {
    lines_.clear();
    triangles_.clear();
    points_.clear();
    texts_.clear();
}

void DebugRenderer::line(Vec3 a, Vec3 b, Color c) {
    lines_.push_back(vertex(a, c, 1));
    lines_.push_back(vertex(b, c, 1));
}
void DebugRenderer::point(Vec3 p, float size, Color c) { points_.push_back(vertex(p, c, size)); }
void DebugRenderer::triangle(Vec3 a, Vec3 b, Vec3 c, Color color) {
    triangles_.push_back(vertex(a, color, 1));
    triangles_.push_back(vertex(b, color, 1));
    triangles_.push_back(vertex(c, color, 1));
}
void DebugRenderer::text(Vec3 p, const char* s, Color c, glm::vec2 offset, float alignX) {
    texts_.push_back({p, s ? s : "", c, offset, alignX});
}

void DebugRenderer::upload(const std::vector<DebugVertex>& v) {
    size_t bytes = v.size() * sizeof(DebugVertex);
    if (bytes > capacity_) {
        capacity_ = bytes * 2;
        glBufferData(GL_ARRAY_BUFFER, capacity_, nullptr, GL_STREAM_DRAW);
    }
    glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, v.data());
}

void DebugRenderer::render(const Camera& camera, const Viewport& vp) {
    glViewport(vp.x, vp.y, vp.width, vp.height);
    glUseProgram(program_);
    glm::mat4 viewProj = camera.viewProj(vp);
    glUniformMatrix4fv(glGetUniformLocation(program_, "uViewProj"), 1, GL_FALSE, glm::value_ptr(viewProj));
    GLint round = glGetUniformLocation(program_, "uRoundPoints");
    glBindVertexArray(vao_);
    glBindBuffer(GL_ARRAY_BUFFER, vbo_);
    if (xray) glDisable(GL_DEPTH_TEST);
    else glEnable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glEnable(GL_PROGRAM_POINT_SIZE);
    glUniform1i(round, 0);
    if (!triangles_.empty()) {
        // Translucent cones: test depth but do not write it, so the contact force inside shows.
        glDepthMask(GL_FALSE);
        upload(triangles_);
        glDrawArrays(GL_TRIANGLES, 0, (int)triangles_.size());
        glDepthMask(GL_TRUE);
    }
    if (!lines_.empty()) {
        upload(lines_);
        glDrawArrays(GL_LINES, 0, (int)lines_.size());
    }
    if (!points_.empty()) {
        // Points are drawn over everything so contact markers stay visible inside piles.
        glDisable(GL_DEPTH_TEST);
        glUniform1i(round, 1);
        upload(points_);
        glDrawArrays(GL_POINTS, 0, (int)points_.size());
    }
    glBindVertexArray(0);
    glEnable(GL_DEPTH_TEST);
    glDisable(GL_BLEND);
    glUseProgram(0);
}

void DebugRenderer::renderTexts(ImDrawList* list, const Camera& camera, const Viewport& vp, int windowHeight) {
    for (const Text& t : texts_) {
        glm::vec2 px;
        if (!camera.project(glm::vec3(float(t.p.x), float(t.p.y), float(t.p.z)), windowHeight, vp, px)) continue;
        px += t.offset;
        px.x -= t.alignX * ImGui::CalcTextSize(t.s.c_str()).x;
        ImU32 col = ImGui::ColorConvertFloat4ToU32(ImVec4(t.c.r, t.c.g, t.c.b, t.c.a));
        list->AddText(ImVec2(px.x + 1, px.y + 1), IM_COL32(0, 0, 0, 160), t.s.c_str());
        list->AddText(ImVec2(px.x, px.y), col, t.s.c_str());
    }
}

}  // namespace cs
