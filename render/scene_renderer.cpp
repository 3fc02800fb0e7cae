// Instanced body rendering with a shadow map; see scene_renderer.h.
#include "render/scene_renderer.h"

#include <glad/gl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/type_ptr.hpp>

#include "render/shader_program.h"
#include "render/shaders_embedded.h"

namespace cs {

namespace {

// Distinct hues for bodies a scene leaves at the default grey (per-body colours, Box2D style).
const Color3 kPalette[] = {{0.90f, 0.55f, 0.25f}, {0.35f, 0.62f, 0.90f}, {0.45f, 0.78f, 0.40f},
                           {0.88f, 0.40f, 0.45f}, {0.70f, 0.52f, 0.88f}, {0.95f, 0.80f, 0.30f},
                           {0.35f, 0.80f, 0.78f}, {0.85f, 0.55f, 0.70f}};

uint64_t fnv1a(const void* data, size_t bytes, uint64_t h) {
    const uint8_t* p = (const uint8_t*)data;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

// Unit icosphere, subdivided twice (320 triangles), as position + normal pairs.
void buildIcosphere(std::vector<float>& vertices, std::vector<uint32_t>& indices) {
    const float t = (1.f + std::sqrt(5.f)) * 0.5f;
    std::vector<glm::vec3> v = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                                {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    std::vector<uint32_t> f = {0, 11, 5, 0, 5, 1, 0, 1, 7, 0, 7, 10, 0, 10, 11, 1, 5, 9, 5, 11, 4,
                               11, 10, 2, 10, 7, 6, 7, 1, 8, 3, 9, 4, 3, 4, 2, 3, 2, 6, 3, 6, 8,
                               3, 8, 9, 4, 9, 5, 2, 4, 11, 6, 2, 10, 8, 6, 7, 9, 8, 1};
    for (auto& p : v) p = glm::normalize(p);
    for (int level = 0; level < 2; ++level) {
        std::vector<uint32_t> g;
        std::unordered_map<uint64_t, uint32_t> mid;
        auto midpoint = [&](uint32_t a, uint32_t b) {
            uint64_t key = (uint64_t(std::min(a, b)) << 32) | std::max(a, b);
            auto it = mid.find(key);
            if (it != mid.end()) return it->second;
            v.push_back(glm::normalize(v[a] + v[b]));
            mid[key] = uint32_t(v.size() - 1);
            return uint32_t(v.size() - 1);
        };
        for (size_t i = 0; i < f.size(); i += 3) {
            uint32_t a = f[i], b = f[i + 1], c = f[i + 2];
            uint32_t ab = midpoint(a, b), bc = midpoint(b, c), ca = midpoint(c, a);
            g.insert(g.end(), {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca});
        }
        f = g;
    }
    for (auto& p : v) vertices.insert(vertices.end(), {p.x, p.y, p.z, p.x, p.y, p.z});
    indices = f;
}

void setInstanceRow(BodyInstance& inst, const Transform& t, float scale) {
    Mat3 r = toMat3(t.rot);
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) inst.row[i][j] = float(r.m[i][j]) * scale;
        inst.row[i][3] = float(t.pos[i]);
    }
}

}  // namespace

bool SceneRenderer::init(std::string* error) {
    meshProgram_ = buildProgram(kShader_mesh_vert, kShader_mesh_frag, "mesh", error);
    if (!meshProgram_) return false;
    shadowProgram_ = buildProgram(kShader_shadow_vert, kShader_shadow_frag, "shadow", error);
    if (!shadowProgram_) return false;
    skyProgram_ = buildProgram(kShader_sky_vert, kShader_sky_frag, "sky", error);
    if (!skyProgram_) return false;
    glGenVertexArrays(1, &skyVao_);   // the core profile draws only with a vertex array bound
    resetModel();
    return true;
}

void SceneRenderer::shutdown() {
    for (auto& m : meshes_) {
        for (InstanceLayer* l : {&m.opaque, &m.seeThrough}) {
            glDeleteVertexArrays(1, &l->vao);
            glDeleteBuffers(1, &l->instanceVbo);
        }
        glDeleteBuffers(1, &m.vbo);
        glDeleteBuffers(1, &m.ebo);
    }
    meshes_.clear();
    fem_.shutdown();
    for (ShadowMap& m : shadowMaps_) {
        if (m.texture) glDeleteTextures(1, &m.texture);
        if (m.fbo) glDeleteFramebuffers(1, &m.fbo);
    }
    shadowMaps_.clear();
    if (skyVao_) glDeleteVertexArrays(1, &skyVao_);
    skyVao_ = 0;
}

void SceneRenderer::resetModel() {
    for (auto& m : meshes_) {
        m.opaque.instances.clear();
        m.seeThrough.instances.clear();
        m.opaque.uploaded = m.seeThrough.uploaded = 0;
    }
    shapeMesh_.clear();
    if (sphereMesh_ < 0) {
        std::vector<float> v;
        std::vector<uint32_t> i;
        buildIcosphere(v, i);
        sphereMesh_ = uploadMesh(v, i);
        // The ground plane drawn when a scene has no static floor: 400 m square at z = 0.
        std::vector<float> pv = {-200, -200, 0, 0, 0, 1, 200, -200, 0, 0, 0, 1,
                                 200, 200, 0, 0, 0, 1, -200, 200, 0, 0, 0, 1};
        planeMesh_ = uploadMesh(pv, {0, 1, 2, 0, 2, 3});
    }
    needGroundPlane_ = true;
}

int SceneRenderer::uploadMesh(const std::vector<float>& vertices, const std::vector<uint32_t>& indices) {
    Mesh m;
    glGenBuffers(1, &m.vbo);
    glBindBuffer(GL_ARRAY_BUFFER, m.vbo);
    glBufferData(GL_ARRAY_BUFFER, vertices.size() * sizeof(float), vertices.data(), GL_STATIC_DRAW);
    // Filled through the array target: the element binding belongs to whichever vertex array is bound.
    glGenBuffers(1, &m.ebo);
    glBindBuffer(GL_ARRAY_BUFFER, m.ebo);
    glBufferData(GL_ARRAY_BUFFER, indices.size() * sizeof(uint32_t), indices.data(), GL_STATIC_DRAW);
    m.indexCount = (int)indices.size();
    makeLayer(m, m.opaque);
    makeLayer(m, m.seeThrough);
    meshes_.push_back(std::move(m));
    return (int)meshes_.size() - 1;
}

void SceneRenderer::makeLayer(const Mesh& m, InstanceLayer& layer) {
    glGenVertexArrays(1, &layer.vao);
    glBindVertexArray(layer.vao);
    glBindBuffer(GL_ARRAY_BUFFER, m.vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void*)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void*)(3 * sizeof(float)));
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m.ebo);
    glGenBuffers(1, &layer.instanceVbo);
    for (int k = 0; k < 4; ++k) {
        glEnableVertexAttribArray(2 + k);
        glVertexAttribDivisor(2 + k, 1);
    }
    pointInstances(layer, 0);
    glBindVertexArray(0);
}

void SceneRenderer::pointInstances(const InstanceLayer& layer, size_t firstInstance) {
    glBindBuffer(GL_ARRAY_BUFFER, layer.instanceVbo);
    const uintptr_t base = firstInstance * sizeof(BodyInstance);
    for (int k = 0; k < 4; ++k)
        glVertexAttribPointer(2 + k, 4, GL_FLOAT, GL_FALSE, sizeof(BodyInstance), (void*)(base + k * 16));
}

int SceneRenderer::meshForPolytope(const ConvexPolytope& p) {
    uint64_t h = 1469598103934665603ull;
    for (const Vec3& v : p.vertices) {
        float f[3] = {float(v.x), float(v.y), float(v.z)};
        h = fnv1a(f, sizeof f, h);
    }
    h = fnv1a(p.faceVertices.data(), p.faceVertices.size() * sizeof(int), h);
    auto it = meshByHash_.find(h);
    if (it != meshByHash_.end()) return it->second;
    // Flat shading: each face gets its own vertices with the face normal, fan-triangulated
    // (faces are convex with counter-clockwise loops seen from outside).
    std::vector<float> vertices;
    std::vector<uint32_t> indices;
    for (const PolytopeFace& face : p.faces) {
        uint32_t base = uint32_t(vertices.size() / 6);
        for (int k = 0; k < face.vertexCount; ++k) {
            const Vec3& v = p.vertices[p.faceVertices[face.firstVertex + k]];
            vertices.insert(vertices.end(), {float(v.x), float(v.y), float(v.z), float(face.normal.x),
                                             float(face.normal.y), float(face.normal.z)});
        }
        for (int k = 1; k + 1 < face.vertexCount; ++k) indices.insert(indices.end(), {base, base + k, base + k + 1});
    }
    int id = uploadMesh(vertices, indices);
    meshByHash_[h] = id;
    return id;
}

void SceneRenderer::syncModel(const Model& model) {
    for (int s = (int)shapeMesh_.size(); s < model.shapeCount(); ++s) {
        int mesh = sphereMesh_;
        if (model.shapeType[s] == ShapeType::Polytope && model.shapePolytope[s] >= 0)
            mesh = meshForPolytope(model.polytopes[model.shapePolytope[s]]);
        shapeMesh_.push_back(mesh);
    }
    // A static part whose footprint is larger than 4 m^2 is taken as the floor.
    needGroundPlane_ = true;
    for (int s = 0; s < model.shapeCount(); ++s) {
        int b = model.shapeBody[s];
        if (!model.isStatic(b) || model.shapeType[s] != ShapeType::Polytope || model.shapePolytope[s] < 0) continue;
        const ConvexPolytope& p = model.polytopes[model.shapePolytope[s]];
        Vec3 lo{1e30, 1e30, 1e30}, hi{-1e30, -1e30, -1e30};
        for (const Vec3& v : p.vertices) { lo = vmin(lo, v); hi = vmax(hi, v); }
        if ((hi.x - lo.x) * (hi.y - lo.y) > 4 || (hi.x - lo.x) * (hi.z - lo.z) > 4 || (hi.y - lo.y) * (hi.z - lo.z) > 4)
            needGroundPlane_ = false;
    }
}

Color3 SceneRenderer::bodyColor(const Model& model, int b) const {
    Color3 c = model.bodyColor[b];
    bool defaultGrey = std::fabs(c.r - 0.6f) < 1e-3f && std::fabs(c.g - 0.6f) < 1e-3f && std::fabs(c.b - 0.65f) < 1e-3f;
    if (model.isStatic(b)) return defaultGrey ? Color3{0.52f, 0.53f, 0.55f} : c;
    return defaultGrey ? kPalette[b % (sizeof kPalette / sizeof kPalette[0])] : c;
}

void SceneRenderer::gatherInstances(const World& world, int selectedBody, bool upload) {
    const Model& model = world.model();
    syncModel(model);
    for (auto& m : meshes_) {
        m.opaque.instances.clear();
        m.seeThrough.instances.clear();
    }
    const State& state = world.state();
    for (int b = 0; b < model.bodyCount(); ++b) {
        if (!world.isActive(b)) continue;
        Transform bt{state.pos[b], state.rot[b]};
        Color3 c = bodyColor(model, b);
        if (greyAsleep && world.isAsleep(b)) {
            // Asleep: grey, keeping 15% of its hue (a dim blue was lost among blue and purple bodies).
            float grey = 0.25f + 0.4f * (0.3f * c.r + 0.59f * c.g + 0.11f * c.b);
            c = {grey + 0.15f * (c.r - grey), grey + 0.15f * (c.g - grey), grey + 0.15f * (c.b - grey)};
        }
        if (b == selectedBody) c = {c.r * 0.5f + 0.5f, c.g * 0.5f + 0.45f, c.b * 0.5f + 0.2f};
        for (int k = 0; k < model.bodyShapeCount[b]; ++k) {
            int s = model.bodyFirstShape[b] + k;
            const Transform& local = model.shapeLocal[s];
            Transform t{transformPoint(bt, local.pos), bt.rot * local.rot};
            BodyInstance inst;
            bool sphere = model.shapeType[s] == ShapeType::Sphere;
            setInstanceRow(inst, t, sphere ? float(model.shapeRadius[s]) : 1.f);
            inst.color[0] = c.r;
            inst.color[1] = c.g;
            inst.color[2] = c.b;
            float opacity = model.bodyOpacity[b];
            inst.color[3] = opacity + (model.isStatic(b) ? 2.f : 0.f);
            Mesh& mesh = meshes_[shapeMesh_[s]];
            (opacity < 1 ? mesh.seeThrough : mesh.opaque).instances.push_back(inst);
        }
    }
    fem_.update(world, femStyle);
    if (needGroundPlane_) {
        BodyInstance inst;
        setInstanceRow(inst, Transform{{0, 0, 0}, quatIdentity()}, 1.f);
        inst.color[0] = 0.56f; inst.color[1] = 0.57f; inst.color[2] = 0.58f; inst.color[3] = 3.f;
        meshes_[planeMesh_].opaque.instances.push_back(inst);
    }
    if (upload) uploadInstances();
}

size_t SceneRenderer::instanceCount() const {
    size_t n = 0;
    for (const Mesh& m : meshes_) n += m.opaque.uploaded + m.seeThrough.uploaded;
    return n;
}

uint64_t SceneRenderer::instanceHash() const {
    uint64_t h = 1469598103934665603ull;
    for (const Mesh& m : meshes_) {
        for (const InstanceLayer* l : {&m.opaque, &m.seeThrough}) {
            // Word by word (FNV-1a's step on 64-bit words): 20,000 instances in about 0.2 ms.
            const size_t words = l->instances.size() * sizeof(BodyInstance) / 8;
            const uint64_t* w = reinterpret_cast<const uint64_t*>(l->instances.data());
            for (size_t i = 0; i < words; ++i) h = (h ^ w[i]) * 1099511628211ull;
            h = (h ^ words) * 1099511628211ull;
        }
    }
    return h;
}

void SceneRenderer::uploadInstances() {
    for (auto& m : meshes_) {
        for (InstanceLayer* l : {&m.opaque, &m.seeThrough}) {
            l->uploaded = l->instances.size();
            if (l->instances.empty()) continue;
            glBindBuffer(GL_ARRAY_BUFFER, l->instanceVbo);
            size_t bytes = l->instances.size() * sizeof(BodyInstance);
            if (l->instances.size() > l->capacity) {
                l->capacity = l->instances.size() * 2;
                glBufferData(GL_ARRAY_BUFFER, l->capacity * sizeof(BodyInstance), nullptr, GL_STREAM_DRAW);
            }
            glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, l->instances.data());
        }
    }
}

void SceneRenderer::drawMeshes(Pass pass, size_t& index, size_t first, size_t end) {
    for (size_t i = 0; i < meshes_.size(); ++i) {
        Mesh& m = meshes_[i];
        InstanceLayer& l = pass == Pass::SeeThrough ? m.seeThrough : m.opaque;
        if (l.uploaded == 0) continue;
        // This layer's instances [index, index + n) clipped to [first, end).
        const size_t n = l.uploaded, lo = std::max(index, first), hi = std::min(index + n, end);
        const size_t skip = lo - std::min(lo, index);
        index += n;
        if (lo >= hi || (pass == Pass::Shadow && (int)i == planeMesh_)) continue;
        glBindVertexArray(l.vao);
        if (skip > 0) pointInstances(l, skip);   // GL 3.3 has no base instance: offset the attributes
        glDrawElementsInstanced(GL_TRIANGLES, m.indexCount, GL_UNSIGNED_INT, nullptr, int(hi - lo));
        if (skip > 0) pointInstances(l, 0);
        ++drawCalls;
    }
    if (pass != Pass::SeeThrough && !fem_.empty() && first == 0) {   // deformable bodies are opaque
        fem_.draw();
        ++drawCalls;
    }
    glBindVertexArray(0);
}

void SceneRenderer::renderShadows(const Camera& camera, int slot) {
    if (!shadows) return;
    if ((int)shadowMaps_.size() <= slot) shadowMaps_.resize(slot + 1);
    ShadowMap& map = shadowMaps_[slot];
    // Key light frustum: an orthographic box around the camera target, sized with the view.
    float radius = std::clamp(camera.distance * 0.9f, 2.f, 60.f);
    glm::vec3 centre = camera.target;
    glm::vec3 up = std::fabs(lightDir.z) > 0.99f ? glm::vec3(1, 0, 0) : glm::vec3(0, 0, 1);
    glm::mat4 lightView = glm::lookAt(centre + lightDir * radius * 2.f, centre, up);
    glm::mat4 lightProj = glm::ortho(-radius, radius, -radius, radius, 0.01f, radius * 4.f);
    map.lightViewProj = lightProj * lightView;
    // Never render into a map while it is bound for sampling.
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, 0);
    if (map.size != shadowMapSize) {
        if (!map.texture) glGenTextures(1, &map.texture);
        glBindTexture(GL_TEXTURE_2D, map.texture);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT24, shadowMapSize, shadowMapSize, 0, GL_DEPTH_COMPONENT,
                     GL_FLOAT, nullptr);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_MODE, GL_COMPARE_REF_TO_TEXTURE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_FUNC, GL_LEQUAL);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glBindTexture(GL_TEXTURE_2D, 0);
        if (!map.fbo) glGenFramebuffers(1, &map.fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, map.fbo);
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_TEXTURE_2D, map.texture, 0);
        glDrawBuffer(GL_NONE);
        glReadBuffer(GL_NONE);
        map.size = shadowMapSize;
    }
    glBindFramebuffer(GL_FRAMEBUFFER, map.fbo);
    glViewport(0, 0, map.size, map.size);
    glEnable(GL_DEPTH_TEST);
    glDepthMask(GL_TRUE);
    glClear(GL_DEPTH_BUFFER_BIT);
    glUseProgram(shadowProgram_);
    glUniformMatrix4fv(glGetUniformLocation(shadowProgram_, "uLightViewProj"), 1, GL_FALSE,
                       glm::value_ptr(map.lightViewProj));
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(1.5f, 2.f);
    size_t index = 0;
    drawMeshes(Pass::Shadow, index, 0, SIZE_MAX);
    glDisable(GL_POLYGON_OFFSET_FILL);
    glUseProgram(0);
}

void SceneRenderer::setKeyLight(const Camera& camera) {
    const float azimuth = camera.yaw + glm::radians(35.f), elevation = glm::radians(45.f);
    lightDir = {std::cos(elevation) * std::cos(azimuth), std::cos(elevation) * std::sin(azimuth), std::sin(elevation)};
}

void SceneRenderer::renderSky(const Camera& camera, const Viewport& vp) {
    glDisable(GL_DEPTH_TEST);
    glDepthMask(GL_FALSE);
    glUseProgram(skyProgram_);
    const glm::mat4 inverse = glm::inverse(camera.viewProj(vp));
    glUniformMatrix4fv(glGetUniformLocation(skyProgram_, "uInvViewProj"), 1, GL_FALSE, glm::value_ptr(inverse));
    glUniform3fv(glGetUniformLocation(skyProgram_, "uHorizon"), 1, glm::value_ptr(horizon));
    glUniform3fv(glGetUniformLocation(skyProgram_, "uZenith"), 1, glm::value_ptr(zenith));
    glBindVertexArray(skyVao_);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glBindVertexArray(0);
    glDepthMask(GL_TRUE);
}

void SceneRenderer::render(const Camera& camera, const Viewport& vp, int slot) {
    renderRange(camera, vp, slot, 0, SIZE_MAX);
}

void SceneRenderer::renderRange(const Camera& camera, const Viewport& vp, int slot, size_t first, size_t count) {
    drawCalls = 0;
    const size_t end = count > SIZE_MAX - first ? SIZE_MAX : first + count;
    size_t index = 0;
    glEnable(GL_DEPTH_TEST);
    glDisable(GL_BLEND);
    // Every mesh is closed and wound counter-clockwise seen from outside: back faces are culled
    // (a quarter of llvmpipe's time on the 20,000-box pile). The see-through pass keeps both.
    glEnable(GL_CULL_FACE);
    glViewport(vp.x, vp.y, vp.width, vp.height);
    if (first == 0) {   // the first (or only) slice lays down the sky behind everything
        renderSky(camera, vp);
        ++drawCalls;
    }
    glEnable(GL_DEPTH_TEST);
    bool shadowed = shadows && slot < (int)shadowMaps_.size() && shadowMaps_[slot].texture;
    glm::mat4 lightViewProj = shadowed ? shadowMaps_[slot].lightViewProj : glm::mat4(1.f);
    glUseProgram(meshProgram_);
    glm::mat4 viewProj = camera.viewProj(vp);
    glm::vec3 eye = camera.eye();
    glUniformMatrix4fv(glGetUniformLocation(meshProgram_, "uViewProj"), 1, GL_FALSE, glm::value_ptr(viewProj));
    glUniformMatrix4fv(glGetUniformLocation(meshProgram_, "uLightViewProj"), 1, GL_FALSE,
                       glm::value_ptr(lightViewProj));
    glUniform3fv(glGetUniformLocation(meshProgram_, "uLightDir"), 1, glm::value_ptr(lightDir));
    glUniform3fv(glGetUniformLocation(meshProgram_, "uCameraPos"), 1, glm::value_ptr(eye));
    glUniform1i(glGetUniformLocation(meshProgram_, "uShadows"), shadowed ? 1 : 0);
    glUniform1f(glGetUniformLocation(meshProgram_, "uGridSpacing"), gridSpacing);
    glUniform3fv(glGetUniformLocation(meshProgram_, "uHorizon"), 1, glm::value_ptr(horizon));
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, shadowed ? shadowMaps_[slot].texture : 0);
    glUniform1i(glGetUniformLocation(meshProgram_, "uShadowMap"), 0);
    drawMeshes(Pass::Opaque, index, first, end);
    // See-through bodies last, over the opaque depth, without writing depth. They are not sorted:
    // the glass walls they are meant for are few, thin and alike in colour, so the order of their
    // blends hardly shows. The target's alpha stays 1 (screenshots and videos stay opaque).
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ZERO, GL_ONE);
    glDepthMask(GL_FALSE);
    glDisable(GL_CULL_FACE);
    drawMeshes(Pass::SeeThrough, index, first, end);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
    glBindTexture(GL_TEXTURE_2D, 0);
    glUseProgram(0);
}

}  // namespace cs
