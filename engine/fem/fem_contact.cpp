// Contacts of deformable bodies (fem_contact.h).
#include "engine/fem/fem_contact.h"

#include <algorithm>
#include <cmath>

#include "engine/collision/world_polytope.h"
#include "engine/contact/row_culling.h"
#include "engine/contact/standard_rows_hd.h"
#include "engine/fem/fem_contact_hd.h"
#include "engine/fem/fem_step.h"

namespace cs {

namespace {

struct Box {
    Vec3 lo{kHuge, kHuge, kHuge}, hi{-kHuge, -kHuge, -kHuge};
    void add(Vec3 p) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::fmin(lo[k], p[k]);
            hi[k] = std::fmax(hi[k], p[k]);
        }
    }
    bool contains(Vec3 p) const {
        return p.x >= lo.x && p.x <= hi.x && p.y >= lo.y && p.y <= hi.y && p.z >= lo.z && p.z <= hi.z;
    }
    bool overlaps(const Box& o, Real grow) const {
        for (int k = 0; k < 3; ++k)
            if (lo[k] > o.hi[k] + grow || o.lo[k] > hi[k] + grow) return false;
        return true;
    }
};

uint64_t cellKey(int x, int y, int z) {
    return (uint64_t(uint32_t(x) & kFemGridKeyMask) << 42) | (uint64_t(uint32_t(y) & kFemGridKeyMask) << 21) |
           uint64_t(uint32_t(z) & kFemGridKeyMask);
}

class Builder {
public:
    Builder(const Model& m, const WorldSettings& s, const State& st, Real h, FemContactScratch& sc, ConstraintRows& r)
        : model(m), settings(s), state(st), h(h), scratch(sc), rows(r), nb(m.bodyCount()) {}

    // Normal and friction rows of one contact; c.bodyA is the node's solver index.
    void add(FemContactRecord rec, const Real* weights, const int* triNodes) {
        const PotentialContact& c = rec.geometry;
        const SolverSettings& solver = settings.solver;
        const Vec3 zero{0, 0, 0};
        StandardContactRows r = standardContactRows(c, c.pointA, c.bodyB >= 0 ? state.pos[c.bodyB] : zero,
                                                    solver.stabilization, solver.maxPushoutSpeed * h);
        rec.tangent[0] = r.tangent[0];
        rec.tangent[1] = r.tangent[1];
        const Vec3 dirs[3] = {c.normal, r.tangent[0], r.tangent[1]};
        for (int k = 0; k < 3; ++k) {
            const RowKind kind = k == 0 ? RowKind::Normal : RowKind::Friction;
            int i;
            if (!triNodes) {
                i = rows.add(kind, c.bodyA, c.bodyB, r.jacobianA[k], r.jacobianB[k], k == 0 ? r.bias : 0, 0, -1);
            } else {
                const Vec3 d = dirs[k];
                i = rows.add(kind, c.bodyA, femNodeBodyIndex(nb, triNodes[0]), Spatial{d, zero},
                             Spatial{-weights[0] * d, zero}, k == 0 ? r.bias : 0, 0, -1);
                rows.setExtraBodies(i, femNodeBodyIndex(nb, triNodes[1]), femNodeBodyIndex(nb, triNodes[2]),
                                    Spatial{-weights[1] * d, zero}, Spatial{-weights[2] * d, zero});
            }
            if (k == 0) rec.row = i;
            else {
                rows.mu[i] = rec.mu;
                rows.normalRow[i] = rec.row;
            }
        }
        if (solver.warmStart) {
            const std::vector<WarmImpulse>& warm = state.femContactWarm;
            const int w = findWarmIndex(warm.data(), (int)warm.size(), rec.key);
            if (w >= 0) warmRowImpulses(warm[w], r, &rows.lambda[rec.row]);
        }
        scratch.contacts.push_back(rec);
    }

    // A node against every rigid part whose box holds it.
    void nodesAgainstParts(const std::vector<Aabb>& boxes, const Box& femBox, int femBody) {
        const FemBodyInfo& fb = model.femBodies[femBody];
        const Real margin = settings.contactMargin;
        for (int shape = 0; shape < model.shapeCount(); ++shape) {
            const int body = model.shapeBody[shape];
            if (state.time + Real(1e-9) < model.bodySpawnTime[body]) continue;
            const Box sb{boxes[shape].lo, boxes[shape].hi};
            if (!sb.overlaps(femBox, 0)) continue;
            const Transform X = shapeWorldTransform(model, state, shape);
            const bool sphere = model.shapeType[shape] == ShapeType::Sphere;
            if (!sphere) polytope.assign(model.polytopes[model.shapePolytope[shape]], X);
            const Real mu = mixFrictionCoefficient(fb.contact.friction,
                                                   model.materials[model.bodyMaterial[body]].friction,
                                                   settings.frictionScale);
            for (int n : scratch.surfaceNodes) {
                if (model.femNodeBody[n] != femBody) continue;
                const Vec3 p = state.femPos[n];
                if (!sb.contains(p)) continue;
                if (femNodeAttachedTo(n, body, scratch.attachStart.data(), scratch.attachBodies.data())) continue;
                FemContactRecord rec;
                PotentialContact& c = rec.geometry;
                const PolytopeView view = sphere ? PolytopeView{} : polytope.view();
                if (!femNodePartContact(n, femNodeBodyIndex(nb, n), shape, body, p, sphere ? nullptr : &view, X.pos,
                                        model.shapeRadius[shape], margin, c))
                    continue;
                rec.node = n;
                rec.mu = mu;
                rec.key = femContactKey(n, shape, -1, c.featureB);
                found.push_back(rec);
            }
        }
    }

    // Nodes of body a against the boundary triangles of body b (vertex-triangle, four bodies);
    // a == b: self contact, with the rest-shape exclusions of fem_contact.h.
    void nodesAgainstTriangles(int a, int b) {
        const FemBodyInfo& fb = model.femBodies[b];
        const Real margin = settings.contactMargin;
        // Grid cell: the largest triangle box side plus the margin, so a node within the margin
        // of a triangle lies in a cell the triangle's grown box was entered into.
        Real cell = 0;
        Vec3 lo, hi;
        for (int t = fb.firstTri; t < fb.firstTri + fb.triCount; ++t) {
            triangleBounds(t, lo, hi);
            for (int k = 0; k < 3; ++k) cell = std::fmax(cell, hi[k] - lo[k]);
        }
        cell += 2 * margin;
        scratch.grid.clear();
        for (int t = fb.firstTri; t < fb.firstTri + fb.triCount; ++t) {
            triangleBounds(t, lo, hi);
            int from[3], to[3];
            for (int k = 0; k < 3; ++k) {
                from[k] = femGridCell(lo[k] - margin, cell);
                to[k] = femGridCell(hi[k] + margin, cell);
            }
            for (int x = from[0]; x <= to[0]; ++x)
                for (int y = from[1]; y <= to[1]; ++y)
                    for (int z = from[2]; z <= to[2]; ++z) scratch.grid[cellKey(x, y, z)].push_back(t);
        }
        const Real mu = mixFrictionCoefficient(model.femBodies[a].contact.friction, fb.contact.friction,
                                               settings.frictionScale);
        for (int n : scratch.surfaceNodes) {
            if (model.femNodeBody[n] != a) continue;
            const Vec3 p = state.femPos[n];
            auto it = scratch.grid.find(cellKey(femGridCell(p.x, cell), femGridCell(p.y, cell), femGridCell(p.z, cell)));
            if (it == scratch.grid.end()) continue;
            // One contact per node and body: of the triangles whose interior the node projects
            // into (at an edge or corner the neighbouring triangle is the better constraint),
            // the one of largest gap, i.e. the surface the node is nearest outside of or least
            // deep below; penetrations deeper than twice the margin are ambiguous (a node that
            // passed through) and left out.
            int best = -1;
            FemTriangleContact bestHit{-2 * margin, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
            for (int t : it->second) {
                const auto& tri = model.femTris[t];
                FemTriangleContact hit;
                if (!femNodeTriangleContact(p, state.femPos[tri[0]], state.femPos[tri[1]], state.femPos[tri[2]], margin,
                                            bestHit.gap, hit))
                    continue;
                if (!femFacing(scratch.nodeNormal[n], hit.normal)) continue;
                if (a == b && !selfCandidate(n, tri, hit.gap)) continue;
                best = t;
                bestHit = hit;
            }
            if (best < 0) continue;
            FemContactRecord rec;
            rec.geometry = makePotentialContact(PairType::VertexFace, makeFeatureId(FeatureKind::Vertex, n),
                                                makeFeatureId(FeatureKind::Face, best), p, bestHit.point,
                                                bestHit.normal, bestHit.gap);
            rec.geometry.bodyA = femNodeBodyIndex(nb, n);
            rec.node = n;
            rec.tri = best;
            rec.mu = mu;
            for (int k = 0; k < 3; ++k) rec.barycentric[k] = bestHit.w[k];
            rec.key = femContactKey(n, -1, best, 0);
            found.push_back(rec);
        }
    }

    void triangleBounds(int t, Vec3& lo, Vec3& hi) const {
        const auto& tri = model.femTris[t];
        femTriangleBounds(state.femPos[tri[0]], state.femPos[tri[1]], state.femPos[tri[2]], lo, hi);
    }

    // Self contact of node n with triangle tri at gap (fem_contact_hd.h femSelfCandidate).
    bool selfCandidate(int n, const std::array<int, 3>& tri, Real gap) const {
        const std::vector<Vec3>& rest = model.femRestPos;
        return femSelfCandidate(n, tri.data(), scratch.nbrStart.data(), scratch.nbrs.data(), rest[n],
                                scratch.restReach[n], rest[tri[0]], rest[tri[1]], rest[tri[2]], gap);
    }

    // The found contacts' rows, in the order found, but the node-part contacts that cannot close
    // within the step when `cull` (row_culling.h's predictor; they go to scratch.culled for the
    // check after the solve). Node-triangle contacts are all kept: culling fem_fold's open self
    // contacts brought its hard rows under the condensed solve's limits (condensed_rows.cpp), whose
    // K^-1 over 300-600 touched DOFs cost more than the iterative solve (8.5 -> 15.5 ms per step).
    void emit(const RowCull* cull) {
        Real pushout = 0;
        if (cull) {
            Real deepest = 0;
            for (const FemContactRecord& rec : found) deepest = std::fmax(deepest, -rec.geometry.gap);
            pushout = std::fmax(cull->pushoutSpeed, std::fmin(settings.solver.maxPushoutSpeed,
                                                              settings.solver.stabilization * deepest / h));
        }
        for (const FemContactRecord& rec : found) {
            if (cull && rec.tri < 0 && femContactCannotClose(rec, pushout)) {
                scratch.culled.push_back(rec);
                continue;
            }
            if (rec.tri < 0) {
                add(rec, nullptr, nullptr);
            } else {
                const auto& tri = model.femTris[rec.tri];
                const int triNodes[3] = {tri[0], tri[1], tri[2]};
                add(rec, rec.barycentric, triNodes);
            }
        }
        found.clear();
    }

    // row_culling.h's bound S for a FEM contact: the node's speed against the rigid part's point
    // (|v| + |w| |r|), or against the triangle's point (|v_n| + the fastest of its three nodes:
    // |sum w_i v_i| <= max |v_i| with the weights summing to 1), plus h |g| and the pushout speed.
    bool femContactCannotClose(const FemContactRecord& rec, Real pushout) const {
        const PotentialContact& c = rec.geometry;
        if (rec.tri < 0) {   // row_culling_hd.h, as the pipeline (pipeline_fem_contact.h)
            const int b = c.bodyB;
            const bool dynamic = b >= 0 && !model.isStatic(b);
            const Vec3 zero{0, 0, 0};
            return cullNodeContactCannotClose(c, state.femVel[rec.node], dynamic, dynamic ? state.linVel[b] : zero,
                                              dynamic ? state.angVel[b] : zero, dynamic ? state.pos[b] : zero,
                                              settings.gravity, pushout, h);
        }
        if (!(c.gap > kCullMargin)) return false;
        Real fastest = 0;
        for (int v : model.femTris[rec.tri]) fastest = std::fmax(fastest, length(state.femVel[v]));
        Real bound = length(state.femVel[rec.node]) + fastest;
        bound += h * length(settings.gravity) + pushout;
        return c.gap > h * bound + kCullMargin;
    }

    std::vector<FemContactRecord> found;   // this step's contacts before emit
    const Model& model;
    const WorldSettings& settings;
    const State& state;
    Real h;
    FemContactScratch& scratch;
    ConstraintRows& rows;
    const int nb;
    WorldPolytope polytope;
};

// scratch.nodeNormal of every boundary node at the state's positions (the node-triangle
// adjacency built on the first call).
void femBoundaryNormals(const Model& model, const State& state, FemContactScratch& scratch) {
    if (scratch.nodeTriStart.size() != size_t(model.femNodeCount() + 1) ||
        scratch.triNodes.size() != 3 * model.femTris.size()) {
        femNodeTriangles(model, scratch.nodeTriStart, scratch.nodeTris);
        scratch.triNodes.resize(3 * model.femTris.size());
        for (size_t t = 0; t < model.femTris.size(); ++t)
            for (int j = 0; j < 3; ++j) scratch.triNodes[3 * t + j] = model.femTris[t][j];
    }
    scratch.nodeNormal.resize(model.femNodeCount());
    for (int n : scratch.surfaceNodes)
        scratch.nodeNormal[n] = femNodeNormal(n, scratch.nodeTriStart.data(), scratch.nodeTris.data(),
                                              scratch.triNodes.data(), state.femPos.data());
}

}  // namespace

void femRestReach(const Model& model, std::vector<Real>& reach) {
    reach.assign(model.femNodeCount(), 0);
    for (const auto& tet : model.femTets)
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j) {
                const Real l = length(model.femRestPos[tet[i]] - model.femRestPos[tet[j]]);
                reach[tet[i]] = std::fmax(reach[tet[i]], l);
                reach[tet[j]] = std::fmax(reach[tet[j]], l);
            }
}

void femNodeNeighbours(const Model& model, std::vector<int>& start, std::vector<int>& nbrs) {
    std::vector<std::vector<int>> lists(model.femNodeCount());
    for (int n = 0; n < model.femNodeCount(); ++n) lists[n].push_back(n);
    for (const auto& tet : model.femTets)
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                if (i != j) lists[tet[i]].push_back(tet[j]);
    start.assign(model.femNodeCount() + 1, 0);
    nbrs.clear();
    for (int n = 0; n < model.femNodeCount(); ++n) {
        std::sort(lists[n].begin(), lists[n].end());
        lists[n].erase(std::unique(lists[n].begin(), lists[n].end()), lists[n].end());
        nbrs.insert(nbrs.end(), lists[n].begin(), lists[n].end());
        start[n + 1] = (int)nbrs.size();
    }
}

void femNodeAttachments(const Model& model, std::vector<int>& start, std::vector<int>& bodies) {
    start.assign(model.femNodeCount() + 1, 0);
    for (const auto* list : {&model.femAttachments, &model.femStaticPins})
        for (const FemAttachment& a : *list) start[a.node + 1]++;
    for (int n = 0; n < model.femNodeCount(); ++n) start[n + 1] += start[n];
    bodies.resize(start.back());
    std::vector<int> fill(start.begin(), start.end() - 1);
    for (const auto* list : {&model.femAttachments, &model.femStaticPins})
        for (const FemAttachment& a : *list) bodies[fill[a.node]++] = a.body;
}

void femNodeTriangles(const Model& model, std::vector<int>& start, std::vector<int>& tris) {
    start.assign(model.femNodeCount() + 1, 0);
    for (const auto& tri : model.femTris)
        for (int v : tri) start[v + 1]++;
    for (int n = 0; n < model.femNodeCount(); ++n) start[n + 1] += start[n];
    tris.resize(start.back());
    std::vector<int> fill(start.begin(), start.end() - 1);
    for (int t = 0; t < (int)model.femTris.size(); ++t)
        for (int v : model.femTris[t]) tris[fill[v]++] = t;
}

void buildFemContactRows(const Model& model, const WorldSettings& settings, const State& state,
                         const std::vector<Aabb>& shapeBoxes, Real h, FemContactScratch& scratch, ConstraintRows& rows,
                         const RowCull* cull) {
    scratch.contacts.clear();
    scratch.culled.clear();
    if (model.femNodeCount() == 0) return;
    std::vector<uint8_t> onSurface(model.femNodeCount(), 0);
    for (const auto& tri : model.femTris)
        for (int v : tri) onSurface[v] = 1;
    scratch.surfaceNodes.clear();
    for (int n = 0; n < model.femNodeCount(); ++n)
        if (onSurface[n]) scratch.surfaceNodes.push_back(n);
    const int nfem = (int)model.femBodies.size();
    std::vector<Box> boxes(nfem);
    for (int n : scratch.surfaceNodes) boxes[model.femNodeBody[n]].add(state.femPos[n]);
    bool anySelf = false;
    for (const FemBodyInfo& fb : model.femBodies) anySelf = anySelf || fb.selfContact;
    if (anySelf && scratch.restReach.size() != size_t(model.femNodeCount())) {
        femRestReach(model, scratch.restReach);
        femNodeNeighbours(model, scratch.nbrStart, scratch.nbrs);
    }
    if (scratch.attachStart.size() != size_t(model.femNodeCount() + 1) ||
        scratch.attachBodies.size() != model.femAttachments.size() + model.femStaticPins.size())
        femNodeAttachments(model, scratch.attachStart, scratch.attachBodies);
    Builder builder(model, settings, state, h, scratch, rows);
    for (int f = 0; f < nfem; ++f) builder.nodesAgainstParts(shapeBoxes, boxes[f], f);
    bool normals = false;   // the boundary nodes' normals, once, before the first node-triangle search
    for (int a = 0; a < nfem; ++a)
        for (int b = 0; b < nfem; ++b)
            if (a == b ? model.femBodies[a].selfContact : boxes[a].overlaps(boxes[b], settings.contactMargin)) {
                if (!normals) {
                    femBoundaryNormals(model, state, scratch);
                    normals = true;
                }
                builder.nodesAgainstTriangles(a, b);
            }
    builder.emit(cull);
}

bool femCulledContactsStayOpen(const FemContactScratch& scratch, const Model& model, const State& state,
                               const BodyVelocities& bodies, Real h) {
    const int nb = model.bodyCount();
    for (const FemContactRecord& rec : scratch.culled) {
        const PotentialContact& c = rec.geometry;
        const Vec3 node = bodies.velocity[femNodeBodyIndex(nb, rec.node)].lin;
        if (rec.tri < 0) {   // row_culling_hd.h, as the pipeline (pipeline_step.h recordCullCheck)
            if (!cullNodeContactStayedOpen(c, node, state.pos.data(), bodies.velocity.data(), h)) return false;
            continue;
        }
        Real jv = dot(c.normal, node);   // J u+ of the normal row
        const auto& tri = model.femTris[rec.tri];
        for (int k = 0; k < 3; ++k)
            jv -= rec.barycentric[k] * dot(c.normal, bodies.velocity[femNodeBodyIndex(nb, tri[k])].lin);
        if (!(c.gap / h + jv >= 0)) return false;
    }
    return true;
}

void storeFemContacts(const FemContactScratch& scratch, const ConstraintRows& rows, const BodyVelocities& bodies,
                      std::vector<Contact>& contacts, std::vector<WarmImpulse>& warm) {
    warm.clear();
    for (const FemContactRecord& rec : scratch.contacts) {
        Contact c;
        c.geometry = rec.geometry;
        c.geometry.bodyA = -1;
        c.mu = rec.mu;
        c.normalImpulse = rows.lambda[rec.row];
        c.tangentImpulse[0] = rows.lambda[rec.row + 1];
        c.tangentImpulse[1] = rows.lambda[rec.row + 2];
        c.tangent[0] = rec.tangent[0];
        c.tangent[1] = rec.tangent[1];
        Real slip = 0;
        for (int k = 1; k <= 2; ++k) {
            const int i = rec.row + k;
            Real v = dot(rows.jacobianA[i], bodies.velocity[rows.bodyA[i]]);
            if (rows.bodyB[i] >= 0) v += dot(rows.jacobianB[i], bodies.velocity[rows.bodyB[i]]);
            if (rows.bodyC[i] >= 0) v += dot(rows.jacobianC[i], bodies.velocity[rows.bodyC[i]]);
            if (rows.bodyD[i] >= 0) v += dot(rows.jacobianD[i], bodies.velocity[rows.bodyD[i]]);
            slip += v * v;
        }
        const Real ft = std::sqrt(c.tangentImpulse[0] * c.tangentImpulse[0] + c.tangentImpulse[1] * c.tangentImpulse[1]);
        c.sliding = c.normalImpulse > 0 && ft >= Real(0.99) * c.mu * c.normalImpulse && std::sqrt(slip) > Real(1e-3);
        c.femNode = rec.node;
        c.femTri = rec.tri;
        contacts.push_back(c);
        warm.push_back(WarmImpulse{rec.key, c.normalImpulse,
                                   c.tangentImpulse[0] * c.tangent[0] + c.tangentImpulse[1] * c.tangent[1]});
    }
    std::sort(warm.begin(), warm.end(), [](const WarmImpulse& a, const WarmImpulse& b) { return a.key < b.key; });
}

}  // namespace cs
