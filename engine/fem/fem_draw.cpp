// Debug layers of deformable bodies (fem_draw.h).
#include "engine/fem/fem_draw.h"

#include <algorithm>
#include <set>
#include <utility>

namespace cs {

void drawFemBodies(const Model& model, const State& state, DebugDraw& dd) {
    const DebugDrawFlags& f = dd.flags;
    if (model.femBodies.empty() || state.femPos.size() != model.femRestPos.size()) return;
    if (f.femRestShape && dd.drawLine) {
        // Each boundary edge once (two triangles share it).
        std::set<std::pair<int, int>> edges;
        for (const auto& t : model.femTris)
            for (int k = 0; k < 3; ++k) edges.insert(std::minmax(t[k], t[(k + 1) % 3]));
        const Color c{0.75f, 0.8f, 0.9f, 0.6f};
        for (const auto& [a, b] : edges) dd.drawLine(model.femRestPos[a], model.femRestPos[b], c, dd.context);
    }
    if (f.femAnchors && dd.drawPoint) {
        const Color pin{1, 0.25f, 0.2f, 1}, held{0.3f, 0.9f, 1, 1};
        for (int i = 0; i < model.femNodeCount(); ++i)
            if (model.femNodeInvMass[i] == 0) dd.drawPoint(state.femPos[i], 5.f, pin, dd.context);
        for (const auto* list : {&model.femAttachments, &model.femStaticPins})
            for (const FemAttachment& a : *list) {
                const Vec3 target = state.pos[a.body] + rotate(state.rot[a.body], a.localPoint);
                dd.drawPoint(state.femPos[a.node], 5.f, held, dd.context);
                if (dd.drawLine) dd.drawLine(state.femPos[a.node], target, held, dd.context);
            }
    }
}

}  // namespace cs
