// Shaded bodies, drawn instanced: every distinct convex part becomes one mesh (flat-shaded faces
// of the polytope, or a unit icosphere scaled per instance), and each frame the world's shape
// transforms are gathered into per-mesh instance arrays and drawn with glDrawElementsInstanced.
// Equal parts share a mesh (a pile of 1,000 equal boxes is one draw call). A directional key light
// casts shadows through a depth map; static bodies carry a world-space grid (the ground). Bodies
// with opacity below 1 (glass walls) are drawn after the opaque ones, blended, without writing
// depth and without casting shadows.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <glm/glm.hpp>

#include "engine/world.h"
#include "render/camera.h"
#include "render/fem_renderer.h"

namespace cs {

struct BodyInstance {            // per-instance vertex attributes (64 bytes)
    float row[3][4];             // shape-local to world, rows of a 3x4 affine matrix
    float color[4];              // rgb; a = opacity in (0, 1], plus 2 for a static body (grid)
};

class SceneRenderer {
public:
    bool init(std::string* error);
    void shutdown();

    // Forgets all meshes (a new scene); syncModel then builds them again.
    void resetModel();
    // Builds meshes for shapes added since the last call (scene load, launched bodies).
    void syncModel(const Model& model);

    // Collects the instances of every active body of this world and, unless told not to, uploads
    // them (a progressive build keeps the instances it started with: progressive_view.h).
    void gatherInstances(const World& world, int selectedBody, bool upload = true);
    void uploadInstances();
    size_t instanceCount() const;    // uploaded (what render draws), opaque and see-through
    uint64_t instanceHash() const;   // of the gathered instances: equal when nothing drawn moved
    // The shadow pass for the gathered instances into shadow map `slot` (one per copy). Call
    // it for every copy before binding and clearing the frame's target: on Mesa's llvmpipe a clear
    // left pending across a framebuffer switch, or a scissored clear, costs a full extra pass.
    void renderShadows(const Camera& camera, int slot);
    // The shaded pass into the viewport of the bound framebuffer, shadowed by map `slot`.
    void render(const Camera& camera, const Viewport& viewport, int slot);
    // The shaded pass of the uploaded instances [first, first + count) only, in the order of
    // render (opaque meshes, then see-through ones): render is renderRange over all of them.
    void renderRange(const Camera& camera, const Viewport& viewport, int slot, size_t first, size_t count);

    Color3 bodyColor(const Model& model, int body) const;   // scene colour or a palette colour
    // The key light over the camera's right shoulder: 35 degrees of azimuth off the eye's, 45 degrees
    // up, so the faces the camera sees are lit and the shadows fall beside and behind the bodies
    // (a light fixed in the world lit the default views' far sides and left the near ones dark).
    void setKeyLight(const Camera& camera);

    bool shadows = true;
    int shadowMapSize = 2048;
    float gridSpacing = 0.25f;       // metres between minor grid lines (major: 10x)
    glm::vec3 lightDir = glm::normalize(glm::vec3(0.45f, 0.3f, 1.f));   // towards the light, unit
    glm::vec3 horizon{0.60f, 0.64f, 0.69f};   // the sky at the horizon and the ground's far haze
    glm::vec3 zenith{0.16f, 0.25f, 0.40f};    // the sky overhead
    bool greyAsleep = true;          // sleeping bodies drawn grey (the app); a recording keeps their colours
    int drawCalls = 0;               // last render, for the stats panel
    FemSurfaceStyle femStyle;        // deformable bodies: colour by a strain field or not
    const FemRenderer& fem() const { return fem_; }

private:
    // One mesh's instances of one kind (opaque or see-through): its own instance buffer and a
    // vertex array binding it with the mesh's vertices.
    struct InstanceLayer {
        unsigned vao = 0, instanceVbo = 0;
        size_t capacity = 0;
        std::vector<BodyInstance> instances;
        size_t uploaded = 0;         // instances in the buffer (the draws' count)
    };
    struct Mesh {
        unsigned vbo = 0, ebo = 0;
        int indexCount = 0;
        InstanceLayer opaque, seeThrough;
    };
    enum class Pass { Shadow, Opaque, SeeThrough };
    void renderSky(const Camera& camera, const Viewport& viewport);
    int meshForPolytope(const ConvexPolytope& p);
    int uploadMesh(const std::vector<float>& vertices, const std::vector<uint32_t>& indices);
    void makeLayer(const Mesh& mesh, InstanceLayer& layer);
    // Points the bound vertex array's instance attributes at `layer`'s instance firstInstance.
    static void pointInstances(const InstanceLayer& layer, size_t firstInstance);
    // Draws the instances of `pass` whose index in the render order (counted from `index`,
    // advanced past them) falls in [first, end).
    void drawMeshes(Pass pass, size_t& index, size_t first, size_t end);

    std::vector<Mesh> meshes_;
    std::unordered_map<uint64_t, int> meshByHash_;
    std::vector<int> shapeMesh_;     // (nshape) mesh index
    int sphereMesh_ = -1, planeMesh_ = -1;
    bool needGroundPlane_ = true;
    unsigned meshProgram_ = 0, shadowProgram_ = 0, skyProgram_ = 0, skyVao_ = 0;
    struct ShadowMap {
        unsigned fbo = 0, texture = 0;
        int size = 0;
        glm::mat4 lightViewProj{1.f};
    };
    std::vector<ShadowMap> shadowMaps_;
    FemRenderer fem_;                // deformable bodies' surfaces, gathered with the instances
};

}  // namespace cs
