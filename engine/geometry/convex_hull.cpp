// Convex hull with full feature adjacency ([PEG] Williams, Lu, Trinkle 2016, section 4).
//
// qhull computes the hull with coplanar facets merged (its default pre-merge "C-0": a box comes
// out as 6 quadrilaterals). From qhull we take only, per facet, the set of hull vertices on it
// and its outward normal. Everything else is derived here, so one convention holds for every
// polytope in the engine:
//   - face loops are ordered counter-clockwise seen from outside (by angle about the normal);
//     the stored normal is the loop's Newell normal, the offset the mean of dot(eta, v);
//   - an edge e = v_head - v_tail is created by the first face whose loop walks tail -> head,
//     which becomes face[0]; the second face must walk head -> tail (a consistency check);
//   - the tangents of eq. 25: face[0] walks e counter-clockwise, so its interior lies to the
//     left of e, t0 = eta0 x e / |e|; face[1] walks -e, so t1 = eta1 x (-e) / |e|. Both are
//     unit, lie in their face's plane, are perpendicular to e and point into the face.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "engine/geometry/polytope.h"
#include "engine/geometry/qhull_session.h"

namespace cs {

namespace {

constexpr Real kMaxHullCoordinate = Real(1e12);

// Orders the vertices of one planar face counter-clockwise about the outward normal n.
void orderLoop(const std::vector<Vec3>& verts, Vec3 n, std::vector<int>& loop) {
    Vec3 center{0, 0, 0};
    for (int v : loop) center += verts[v];
    center = center / Real(loop.size());
    Vec3 u, w;
    tangentBasis(n, u, w);
    w = cross(n, u);  // (u, w, n) right-handed: increasing angle is CCW seen from +n
    std::vector<std::pair<Real, int>> keyed;
    keyed.reserve(loop.size());
    for (int v : loop) {
        Vec3 d = verts[v] - center;
        keyed.push_back({std::atan2(dot(d, w), dot(d, u)), v});
    }
    std::sort(keyed.begin(), keyed.end());
    for (size_t i = 0; i < loop.size(); ++i) loop[i] = keyed[i].second;
}

// Newell's normal of a closed loop: robust for non-triangular, nearly planar faces.
Vec3 newellNormal(const std::vector<Vec3>& verts, const int* loop, int count) {
    Vec3 n{0, 0, 0};
    for (int i = 0; i < count; ++i) {
        Vec3 a = verts[loop[i]], b = verts[loop[(i + 1) % count]];
        n += cross(a, b);
    }
    return n;
}

}  // namespace

// Fills edges, tangents, faceEdges, vertex->edge CSR, volume, centroid and bounding radius
// from vertices and CCW face loops (faces[].firstVertex/vertexCount, faceVertices).
static BuildResult finishPolytope(ConvexPolytope& p) {
    const int nv = p.vertexCount();
    p.edges.clear();
    p.faceEdges.assign(p.faceVertices.size(), -1);
    std::map<std::pair<int, int>, int> edgeOf;  // (min, max) vertex -> edge index
    for (int f = 0; f < p.faceCount(); ++f) {
        PolytopeFace& face = p.faces[f];
        face.firstEdge = face.firstVertex;
        const int* loop = &p.faceVertices[face.firstVertex];
        Vec3 n = newellNormal(p.vertices, loop, face.vertexCount);
        if (length(n) <= Real(0)) return {false, "degenerate face with zero area"};
        face.normal = normalize(n);
        Real off = 0;
        for (int i = 0; i < face.vertexCount; ++i) off += dot(face.normal, p.vertices[loop[i]]);
        face.offset = off / Real(face.vertexCount);
        for (int i = 0; i < face.vertexCount; ++i) {
            int a = loop[i], b = loop[(i + 1) % face.vertexCount];
            auto key = std::make_pair(std::min(a, b), std::max(a, b));
            auto it = edgeOf.find(key);
            if (it == edgeOf.end()) {
                PolytopeEdge e{};
                e.tail = a;
                e.head = b;
                e.face[0] = f;
                e.face[1] = -1;
                edgeOf[key] = p.edgeCount();
                p.faceEdges[face.firstVertex + i] = p.edgeCount();
                p.edges.push_back(e);
            } else {
                PolytopeEdge& e = p.edges[it->second];
                if (e.face[1] != -1 || e.tail != b || e.head != a)
                    return {false, "inconsistent face loops (edge shared badly)"};
                e.face[1] = f;
                p.faceEdges[face.firstVertex + i] = it->second;
            }
        }
    }
    for (const PolytopeEdge& e : p.edges)
        if (e.face[1] < 0) return {false, "open surface (edge with one face)"};
    if (nv - p.edgeCount() + p.faceCount() != 2) return {false, "hull fails Euler's V - E + F = 2"};

    // [PEG] eq. 25: t_k in face k, perpendicular to e, pointing from the edge into the face.
    for (PolytopeEdge& e : p.edges) {
        Vec3 ev = p.vertices[e.head] - p.vertices[e.tail];
        e.t[0] = normalize(cross(p.faces[e.face[0]].normal, ev));
        e.t[1] = normalize(cross(p.faces[e.face[1]].normal, -ev));
    }

    p.vertexEdgeStart.assign(nv + 1, 0);
    for (const PolytopeEdge& e : p.edges) {
        p.vertexEdgeStart[e.tail + 1]++;
        p.vertexEdgeStart[e.head + 1]++;
    }
    for (int v = 0; v < nv; ++v) p.vertexEdgeStart[v + 1] += p.vertexEdgeStart[v];
    p.vertexEdges.assign(p.vertexEdgeStart[nv], -1);
    std::vector<int> fill(p.vertexEdgeStart.begin(), p.vertexEdgeStart.end() - 1);
    for (int i = 0; i < p.edgeCount(); ++i) {
        p.vertexEdges[fill[p.edges[i].tail]++] = i;
        p.vertexEdges[fill[p.edges[i].head]++] = i;
    }

    MassProperties mp = polytopeMassProperties(p, Real(1));
    if (!(mp.mass > Real(0))) return {false, "hull has no volume"};
    p.volume = mp.mass;
    p.centroid = mp.centerOfMass;
    p.boundingRadius = 0;
    for (Vec3 v : p.vertices) p.boundingRadius = std::max(p.boundingRadius, length(v - p.centroid));
    return {};
}

BuildResult buildConvexHull(const std::vector<Vec3>& points, ConvexPolytope& out, int maxVertices) {
    out = ConvexPolytope{};
    if (points.size() < 4)
        return {false, "convex hull needs at least 4 points, got " + std::to_string(points.size())};
    std::vector<coordT> coords(points.size() * 3);
    Vec3 lo = points[0], hi = points[0];
    for (size_t i = 0; i < points.size(); ++i) {
        Vec3 q = points[i];
        if (!std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z))
            return {false, "convex hull input has a non-finite coordinate"};
        // qhull squares coordinates (distances, normals): past ~1e154 they overflow and it
        // dereferences a null facet (qh_normalize2). Far below that, and far beyond any scene.
        if (std::fabs(q.x) > kMaxHullCoordinate || std::fabs(q.y) > kMaxHullCoordinate ||
            std::fabs(q.z) > kMaxHullCoordinate)
            return {false, "convex hull input has a coordinate beyond 1e12"};
        lo = vmin(lo, q);
        hi = vmax(hi, q);
        coords[3 * i + 0] = q.x;
        coords[3 * i + 1] = q.y;
        coords[3 * i + 2] = q.z;
    }
    if (!(length(hi - lo) > Real(0))) return {false, "convex hull input points all coincide"};

    QhullSession session;
    // Default pre-merging (C-0) merges facets coplanar within double rounding; Pp silences
    // precision warnings. With float coordinates (CS_REAL_FLOAT) the input itself is rounded to
    // ~1e-7 of its size, so facets within that distance are merged ("C-n": centrum radius n).
    char command[64] = "qhull Pp";
    if (sizeof(Real) != sizeof(double))
        std::snprintf(command, sizeof command, "qhull Pp C-%g", 1e-6 * double(length(hi - lo)));
    int code = session.run(3, (int)points.size(), coords.data(), command);
    if (code != 0) return {false, "convex hull failed: " + session.firstErrorLine()};
    qhT* qh = &session.qh;
    if (maxVertices > 0 && qh->num_vertices > maxVertices)
        return {false, "convex hull: " + std::to_string(qh->num_vertices) + " vertices (the limit is " +
                           std::to_string(maxVertices) + ")"};

    std::vector<int> hullIndex(points.size(), -1);
    facetT* facet;
    vertexT *vertex, **vertexp;
    FORALLfacets {
        if (facet->upperdelaunay || !facet->vertices) continue;
        std::vector<int> loop;
        FOREACHvertex_(facet->vertices) {
            int id = qh_pointid(qh, vertex->point);
            if (id < 0 || id >= (int)points.size()) return {false, "convex hull: bad vertex id"};
            if (hullIndex[id] < 0) {
                hullIndex[id] = out.vertexCount();
                out.vertices.push_back(points[id]);
            }
            loop.push_back(hullIndex[id]);
        }
        if (loop.size() < 3) return {false, "convex hull: facet with fewer than 3 vertices"};
        Vec3 n{(Real)facet->normal[0], (Real)facet->normal[1], (Real)facet->normal[2]};
        orderLoop(out.vertices, n, loop);
        PolytopeFace face{};
        face.normal = n;
        face.firstVertex = (int)out.faceVertices.size();
        face.vertexCount = (int)loop.size();
        out.faceVertices.insert(out.faceVertices.end(), loop.begin(), loop.end());
        out.faces.push_back(face);
    }
    BuildResult r = finishPolytope(out);
    // Near-degenerate input (a needle or a sheet thinner than ~1e-10 of its size) passes qhull
    // with faces that are not planar to working precision: refuse it rather than hand the
    // contact code garbage.
    const Real size = length(hi - lo);
    if (r.ok && out.volume < Real(1e-10) * size * size * size)
        r = {false, "hull is degenerate (nearly flat or collinear points)"};
    if (r.ok) {
        // Relative tolerance: rounding of the stored vertices and normals, with margin.
        const Real relTol = sizeof(Real) == sizeof(double) ? Real(1e-9) : Real(2e-5);
        BuildResult valid = validateConvex(out, relTol * size);
        if (!valid.ok) r = {false, "hull failed validation: " + valid.error};
    }
    if (!r.ok) {
        out = ConvexPolytope{};
        r.error = "convex hull: " + r.error;
    }
    return r;
}

BuildResult validateConvex(const ConvexPolytope& p, Real tolerance) {
    if (p.vertexCount() < 4 || p.faceCount() < 4) return {false, "fewer than 4 vertices or faces"};
    for (int f = 0; f < p.faceCount(); ++f) {
        const PolytopeFace& face = p.faces[f];
        if (std::fabs(length(face.normal) - Real(1)) > Real(1e-6))  // dimensionless
            return {false, "face " + std::to_string(f) + " normal is not unit"};
        const int* loop = &p.faceVertices[face.firstVertex];
        for (int i = 0; i < face.vertexCount; ++i) {
            Vec3 a = p.vertices[loop[i]];
            Vec3 b = p.vertices[loop[(i + 1) % face.vertexCount]];
            Vec3 c = p.vertices[loop[(i + 2) % face.vertexCount]];
            if (std::fabs(dot(face.normal, a) - face.offset) > tolerance)
                return {false, "face " + std::to_string(f) + " is not planar"};
            // Convex and counter-clockwise seen from outside: every turn is to the left.
            if (dot(cross(b - a, c - b), face.normal) < -tolerance)
                return {false, "face " + std::to_string(f) + " is not convex or not CCW"};
        }
        for (int v = 0; v < p.vertexCount(); ++v)
            if (dot(face.normal, p.vertices[v]) - face.offset > tolerance)
                return {false, "vertex " + std::to_string(v) + " lies outside face " +
                                   std::to_string(f)};
    }
    return {};
}

// Subtracts offset from every vertex (pass p.centroid to put the centroid at the origin).
void recenter(ConvexPolytope& p, Vec3 offset) {
    for (Vec3& v : p.vertices) v -= offset;
    for (PolytopeFace& f : p.faces) f.offset -= dot(f.normal, offset);
    p.centroid -= offset;
}

}  // namespace cs
