// Ready-made convex polytopes: box, prism, seeded random hull, OBJ hull.
//
// Every shape goes through buildConvexHull, so all of them share its adjacency conventions
// ([PEG] section 4: CCW face loops, face[0] walks tail -> head, eq. 25 tangents).
#include <cmath>
#include <cstdint>

#include "engine/geometry/obj_reader.h"
#include "engine/geometry/polytope.h"

namespace cs {

namespace {

// splitmix64 (Steele, Lea, Flood 2014): integer-only, so the same seed gives the same stream
// on every platform and compiler.
struct SplitMix64 {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1) from the top 53 bits.
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
};

bool positive(Vec3 v) { return v.x > Real(0) && v.y > Real(0) && v.z > Real(0); }

}  // namespace

ConvexPolytope makeBox(Vec3 halfExtents) {
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i)
        corners.push_back({(i & 1) ? halfExtents.x : -halfExtents.x,
                           (i & 2) ? halfExtents.y : -halfExtents.y,
                           (i & 4) ? halfExtents.z : -halfExtents.z});
    ConvexPolytope box;
    buildConvexHull(corners, box);  // a flat box (an extent <= 0) gives an empty polytope
    return box;
}

BuildResult makePrism(const std::vector<Vec3>& polygonXY, Real halfDepth, ConvexPolytope& out) {
    out = ConvexPolytope{};
    if (polygonXY.size() < 3) return {false, "prism needs a polygon of at least 3 points"};
    if (!(halfDepth > Real(0))) return {false, "prism half depth must be positive"};
    std::vector<Vec3> points;
    for (Vec3 q : polygonXY) {
        points.push_back({q.x, q.y, -halfDepth});
        points.push_back({q.x, q.y, halfDepth});
    }
    BuildResult r = buildConvexHull(points, out);
    if (!r.ok) r.error = "prism: " + r.error;
    return r;
}

BuildResult makeRandomPolytope(uint64_t seed, int count, Vec3 radii, ConvexPolytope& out) {
    out = ConvexPolytope{};
    if (count < 4) return {false, "random polytope needs at least 4 points"};
    if (!positive(radii)) return {false, "random polytope radii must be positive"};
    SplitMix64 rng{seed};
    const double twoPi = 6.283185307179586476925;
    std::vector<Vec3> points;
    points.reserve(count);
    for (int i = 0; i < count; ++i) {
        // Uniform on the unit sphere (Archimedes: z uniform in [-1, 1], azimuth uniform),
        // then stretched to the ellipsoid.
        double z = 1.0 - 2.0 * rng.uniform();
        double phi = twoPi * rng.uniform();
        double s = std::sqrt(std::fmax(0.0, 1.0 - z * z));
        points.push_back({Real(radii.x * s * std::cos(phi)), Real(radii.y * s * std::sin(phi)),
                          Real(radii.z * z)});
    }
    return buildConvexHull(points, out);
}

BuildResult loadObjHull(const std::string& path, Real scale, ConvexPolytope& out) {
    out = ConvexPolytope{};
    if (!(scale > Real(0))) return {false, "OBJ '" + path + "': scale must be positive"};
    std::vector<Vec3> points;
    std::string why;
    if (!readObjVertices(path, points, &why)) return {false, "cannot read OBJ: " + why};
    if (points.empty()) return {false, "OBJ '" + path + "' has no vertices"};
    for (Vec3& p : points) p = scale * p;
    BuildResult r = buildConvexHull(points, out);
    if (!r.ok) r.error = "OBJ '" + path + "': " + r.error;
    return r;
}

}  // namespace cs
