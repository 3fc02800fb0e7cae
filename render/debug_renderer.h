// The renderer's side of the engine's debug-draw interface (engine/debug_draw.h), like Box2D's
// samples app adapting b2DebugDraw: the callbacks append to CPU batches of lines, translucent
// triangles and round points, drawn in three calls per viewport; text is projected and handed
// to an ImGui draw list. The app adds its own layers (drag spring, selection) through the same
// DebugDraw struct.
#pragma once

#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "engine/debug_draw.h"
#include "render/camera.h"

struct ImDrawList;

namespace cs {

struct DebugVertex {
    float x, y, z;
    float r, g, b, a;
    float size;
};

class DebugRenderer {
public:
    bool init(std::string* error);
    void shutdown();

    // A DebugDraw whose callbacks feed this renderer.
    DebugDraw makeDebugDraw(const DebugDrawFlags& flags);
    void clear();

    void line(Vec3 a, Vec3 b, Color c);
    void point(Vec3 p, float size, Color c);
    void triangle(Vec3 a, Vec3 b, Vec3 c, Color color);
    // A label at p, moved by `offset` pixels once projected (x right, y down); alignX 0 starts the
    // text there, 1 ends it there (a label left of a point).
    void text(Vec3 p, const char* s, Color c, glm::vec2 offset = {0.f, 0.f}, float alignX = 0.f);

    // Draws the batches into the viewport (depth-tested against the bodies already drawn).
    void render(const Camera& camera, const Viewport& viewport);
    // Projects the texts of the batch onto the window (top-left pixel origin).
    void renderTexts(ImDrawList* list, const Camera& camera, const Viewport& viewport, int windowHeight);

    // X-ray: lines and cones are drawn over the bodies (contacts sit inside the upper body, so a
    // depth-tested cone or normal is hidden). Off: depth-tested against the bodies.
    bool xray = true;

    size_t lineCount() const { return lines_.size() / 2; }
    size_t pointCount() const { return points_.size(); }

private:
    struct Text {
        Vec3 p;
        std::string s;
        Color c;
        glm::vec2 offset;
        float alignX;
    };
    void upload(const std::vector<DebugVertex>& v);
    std::vector<DebugVertex> lines_, triangles_, points_;
    std::vector<Text> texts_;
    unsigned program_ = 0, vao_ = 0, vbo_ = 0;
    size_t capacity_ = 0;
};

}  // namespace cs
