// Shapes of a scene body: box, sphere, prism, hull, random, obj (docs/scene-format.md, "Shapes").
//
// Every polytope goes through the geometry module (makeBox, makePrism, buildConvexHull,
// makeRandomPolytope), which computes hulls with qhull. Where the file promises a convex shape
// (a prism's polygon, a hull's points, an OBJ mesh) the loader checks that the input really is
// in convex position instead of silently taking the hull of something non-convex.
#include <cmath>
#include <filesystem>

#include "engine/geometry/obj_reader.h"
#include "engine/scene/scene_parse.h"

namespace cs::scene {

namespace {

// Every input point must lie on the boundary of its hull: a point strictly inside means the
// points did not describe a convex polytope (or one was mistyped).
void checkConvexPosition(const std::vector<Vec3>& points, const ConvexPolytope& hull,
                         const std::string& path, const SceneContext& ctx, const char* what) {
    Real tol = Real(1e-6) * std::max(Real(1), hull.boundingRadius);
    for (size_t i = 0; i < points.size(); ++i) {
        Real depth = std::numeric_limits<Real>::max();
        for (const PolytopeFace& f : hull.faces)
            depth = std::min(depth, f.offset - dot(f.normal, points[i]));
        if (depth > tol)
            ctx.fail(path, std::string("non-convex ") + what + ": point " + std::to_string(i) +
                               " lies " + std::to_string(depth) +
                               " m inside the hull of the others");
    }
}

// Every coordinate of a part within Limits::length (qhull and the step stay in range).
void checkLengths(const std::vector<Vec3>& points, const std::string& path, const SceneContext& ctx) {
    for (size_t i = 0; i < points.size(); ++i)
        for (Real c : {points[i].x, points[i].y, points[i].z})
            if (!(std::fabs(c) <= Real(Limits::length)))
                ctx.fail(path, "point " + std::to_string(i) + " has a coordinate " +
                                   (std::isfinite(c) ? formatNumber(c) : std::string("that is not finite")) +
                                   " out of range (|x| <= 1e6 m)");
}

std::vector<Vec3> readPointList(const Json& v, const std::string& path, const SceneContext& ctx,
                                int dims, size_t minCount) {
    if (!v.is_array()) ctx.fail(path, "expected an array of points");
    if (v.size() < minCount)
        ctx.fail(path, "needs at least " + std::to_string(minCount) + " points (got " +
                           std::to_string(v.size()) + ")");
    if (v.size() > size_t(Limits::hullPoints))
        ctx.fail(path, "has " + std::to_string(v.size()) + " points (the limit is " +
                           std::to_string(Limits::hullPoints) + ")");
    std::vector<Vec3> out;
    for (size_t i = 0; i < v.size(); ++i) {
        std::string p = path + "/" + std::to_string(i);
        if (dims == 3) {
            out.push_back(readVec3(v[i], p, ctx));
        } else {
            if (!v[i].is_array() || v[i].size() != 2) ctx.fail(p, "expected [x, y]");
            out.push_back(Vec3{readNumber(v[i][0], p + "/0", ctx), readNumber(v[i][1], p + "/1", ctx), 0});
        }
    }
    checkLengths(out, path, ctx);
    return out;
}

// A prism's polygon must be simple and strictly convex; either winding is accepted and stored
// counter-clockwise.
std::vector<Vec3> checkConvexPolygon(std::vector<Vec3> poly, const std::string& path,
                                     const SceneContext& ctx) {
    size_t n = poly.size();
    Real area2 = 0;
    for (size_t i = 0; i < n; ++i) area2 += cross(poly[i], poly[(i + 1) % n]).z;
    if (std::fabs(area2) < Real(1e-12)) ctx.fail(path, "degenerate polygon (zero area)");
    if (area2 < 0) std::reverse(poly.begin(), poly.end());
    Real turn = 0;
    for (size_t i = 0; i < n; ++i) {
        Vec3 a = poly[i], b = poly[(i + 1) % n], c = poly[(i + 2) % n];
        Real z = cross(b - a, c - b).z;
        if (z <= Real(1e-12) * std::max(Real(1), std::fabs(area2)))
            ctx.fail(path, "non-convex or degenerate polygon at vertex " +
                               std::to_string((i + 1) % n) + " (prisms need a strictly convex polygon)");
        turn += std::atan2(z, dot(b - a, c - b));
    }
    if (turn > Real(2 * 3.14159265358979323846 + 1e-6))
        ctx.fail(path, "self-intersecting polygon (it winds more than once)");
    return poly;
}

void buildHullOrFail(const std::vector<Vec3>& points, ConvexPolytope& out, const std::string& path,
                     const SceneContext& ctx) {
    BuildResult r = buildConvexHull(points, out);
    if (!r.ok) ctx.fail(path, "degenerate hull: " + r.error);
}

ConvexPolytope readObj(JsonObject& obj, const SceneContext& ctx) {
    std::string rel = obj.text("path");
    Real scale = obj.positive("scale", 1);
    bool takeHull = obj.flag("convex_hull", false);
    std::filesystem::path file = std::filesystem::path(rel);
    if (file.is_relative()) file = std::filesystem::path(ctx.dir) / file;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        obj.fail("path", "OBJ file not found: " + file.lexically_normal().string());
    std::vector<Vec3> points;
    std::string why;
    ObjLimits limits{Limits::objVertices, Limits::objBytes};
    if (!readObjVertices(file.string(), points, &why, limits)) obj.fail("path", "cannot read OBJ file " + why);
    for (Vec3& p : points) p = scale * p;
    checkLengths(points, obj.pathOf("path"), ctx);
    if (points.size() < 4)
        obj.fail("path", "OBJ file " + file.string() + " has " + std::to_string(points.size()) +
                             " vertices; a convex part needs at least 4");
    ConvexPolytope hull;
    BuildResult r = buildConvexHull(points, hull, Limits::hullPoints);
    if (!r.ok) obj.fail("path", "OBJ file " + file.string() + ": " + r.error);
    if (!takeHull)
        checkConvexPosition(points, hull, obj.pathOf("path"), ctx,
                            "OBJ mesh (set \"convex_hull\": true to use its convex hull)");
    return hull;
}

}  // namespace

ShapeDesc readShape(const Json& v, const std::string& path, const SceneContext& ctx) {
    JsonObject obj(v, path, ctx);
    ShapeDesc shape;
    std::string type = obj.text("type");
    shape.local = readPose(obj);
    if (type == "box") {
        Vec3 half = obj.positiveVec3("half_extents");
        checkLengths({half}, obj.pathOf("half_extents"), ctx);
        shape.polytope = makeBox(half);
    } else if (type == "sphere") {
        shape.type = ShapeType::Sphere;
        shape.radius = obj.positive("radius");
        checkLengths({Vec3{shape.radius, 0, 0}}, obj.pathOf("radius"), ctx);
    } else if (type == "prism") {
        std::vector<Vec3> poly =
            readPointList(obj.require("polygon"), obj.pathOf("polygon"), ctx, 2, 3);
        poly = checkConvexPolygon(poly, obj.pathOf("polygon"), ctx);
        Real halfDepth = obj.positive("half_depth");
        checkLengths({Vec3{0, 0, halfDepth}}, obj.pathOf("half_depth"), ctx);
        BuildResult r = makePrism(poly, halfDepth, shape.polytope);
        if (!r.ok) obj.fail("polygon", "degenerate prism: " + r.error);
    } else if (type == "hull") {
        std::vector<Vec3> points = readPointList(obj.require("points"), obj.pathOf("points"), ctx, 3, 4);
        buildHullOrFail(points, shape.polytope, obj.pathOf("points"), ctx);
        checkConvexPosition(points, shape.polytope, obj.pathOf("points"), ctx, "hull");
    } else if (type == "random") {
        int seed = obj.integer("seed", 0);
        int count = obj.integer("count", 4, Limits::hullPoints);
        Vec3 radii = obj.positiveVec3("radii");
        checkLengths({radii}, obj.pathOf("radii"), ctx);
        BuildResult r = makeRandomPolytope(uint64_t(seed) + ctx.seedOffset, count, radii, shape.polytope);
        if (!r.ok) obj.fail("seed", "degenerate random polytope: " + r.error);
    } else if (type == "obj") {
        shape.polytope = readObj(obj, ctx);
    } else {
        obj.fail("type", "unknown shape type \"" + type +
                             "\" (expected box, sphere, prism, hull, random or obj)");
    }
    checkLengths({shape.local.pos}, obj.pathOf("position"), ctx);
    obj.finish();
    return shape;
}

}  // namespace cs::scene
