// Emitters: seeded random convex polytopes dropped over time, as in the pouring experiments of
// [PEG] Williams, Lu, Trinkle 2016, section 6 (one polyhedron every 0.5 s until 5 s).
//
// An emitter is expanded at load time into dormant bodies with a spawnTime (model.h): the model
// does not change while stepping and a run is a pure function of the scene, the seed and the
// settings. Body k appears at start + k * period, at a position drawn uniformly in the spawn
// region, with a uniformly random orientation and a hull of `points` points drawn on an
// ellipsoid whose radii are drawn in `size` (makeRandomPolytope).
#include <cmath>

#include "engine/scene/scene_parse.h"

namespace cs::scene {

namespace {

// Uniform random rotation (Shoemake 1992, "Uniform random rotations").
Quat randomRotation(SceneRng& rng) {
    Real u1 = rng.uniform(0, 1), u2 = rng.uniform(0, 2 * Real(3.14159265358979323846)),
         u3 = rng.uniform(0, 2 * Real(3.14159265358979323846));
    Real a = std::sqrt(1 - u1), b = std::sqrt(u1);
    return normalize(Quat{b * std::cos(u3), a * std::sin(u2), a * std::cos(u2), b * std::sin(u3)});
}

// [lo, hi] from a number or a two-element array.
void readRange(JsonObject& obj, const char* key, Real& lo, Real& hi, bool integer) {
    const Json& v = obj.require(key);
    std::string p = obj.pathOf(key);
    if (v.is_number()) {
        lo = hi = readNumber(v, p, obj.ctx());
    } else if (v.is_array() && v.size() == 2) {
        lo = readNumber(v[0], p + "/0", obj.ctx());
        hi = readNumber(v[1], p + "/1", obj.ctx());
    } else {
        obj.fail(key, "expected a number or [min, max]");
    }
    if (integer && (v.is_array() ? !(v[0].is_number_integer() && v[1].is_number_integer()) : !v.is_number_integer()))
        obj.fail(key, "expected integers");
    if (!(lo > 0)) obj.fail(key, "must be positive");
    if (!(hi >= lo)) obj.fail(key, "max must not be below min");
}

}  // namespace

void readEmitter(const Json& v, const std::string& path, SceneContext& ctx) {
    JsonObject obj(v, path, ctx);
    std::string name = obj.text("name", "emitter");
    Real start = obj.nonNegative("start", 0);
    Real period = obj.positive("period");
    bool hasCount = obj.has("count"), hasUntil = obj.has("until");
    if (hasCount == hasUntil) ctx.fail(path, "give exactly one of \"count\" or \"until\"");
    int count = 0;
    if (hasCount) {
        count = obj.integer("count", 1, Limits::bodies);
    } else {
        Real until = obj.number("until");
        if (!(until > start)) obj.fail("until", "must be after \"start\"");
        // Spawn times start + k period strictly before `until`; counted in double, as the count
        // can exceed an int.
        const double n = std::ceil(double(until - start) / double(period) - 1e-9);
        if (!(n <= Limits::bodies))
            obj.fail("until", "emits " + formatNumber(n) + " bodies (the limit is " +
                                  std::to_string(Limits::bodies) + ")");
        count = std::max(1, int(n));
    }
    if (!std::isfinite(start + count * period))
        obj.fail("period", "the last spawn time is not finite");
    JsonObject region = obj.object("region");
    Vec3 lo = region.vec3("min"), hi = region.vec3("max");
    for (int i = 0; i < 3; ++i)
        if (!(hi[i] >= lo[i])) region.fail("max", "must not be below \"min\" in any component");
    region.finish();
    Real sizeLo, sizeHi, pointsLo = 12, pointsHi = 12;
    readRange(obj, "size", sizeLo, sizeHi, false);
    if (obj.has("points")) readRange(obj, "points", pointsLo, pointsHi, true);
    if (pointsLo < 4) obj.fail("points", "a polytope needs at least 4 points");
    if (pointsHi > Limits::hullPoints)
        obj.fail("points", "is too large (the limit is " + std::to_string(Limits::hullPoints) + ")");
    if (sizeHi > Limits::length) obj.fail("size", "is out of range (the limit is 1e6 m)");
    for (int i = 0; i < 3; ++i)
        if (!(std::fabs(lo[i]) <= Limits::length && std::fabs(hi[i]) <= Limits::length))
            region.fail("max", "the region is out of range (|x| <= 1e6 m)");
    int seed = obj.integer("seed", 0);
    bool randomOrientation = obj.flag("random_orientation", true);
    bool colorGiven = obj.has("color");

    BodyDesc proto;
    readBodyCommon(obj, proto);
    if (proto.isStatic) obj.fail("static", "emitted bodies are dynamic");
    proto.linVel = obj.vec3("velocity", proto.linVel);
    proto.angVel = obj.vec3("angular_velocity", proto.angVel);
    obj.finish();

    SceneRng rng{uint64_t(seed) * 0x9e3779b97f4a7c15ull + ctx.seedOffset + 0x632be59bd9b4e019ull};
    for (int k = 0; k < count; ++k) {
        BodyDesc b = proto;
        b.name = name + "_" + std::to_string(k);
        b.spawnTime = start + k * period;
        b.pose.pos = Vec3{rng.uniform(lo.x, hi.x), rng.uniform(lo.y, hi.y), rng.uniform(lo.z, hi.z)};
        b.pose.rot = randomRotation(rng);
        if (!randomOrientation) b.pose.rot = quatIdentity();
        Vec3 radii{rng.uniform(sizeLo, sizeHi), rng.uniform(sizeLo, sizeHi), rng.uniform(sizeLo, sizeHi)};
        int points = int(std::floor(rng.uniform(pointsLo, pointsHi + 1)));
        points = std::min(points, int(pointsHi));
        uint64_t shapeSeed = rng.next();
        ShapeDesc s;
        BuildResult r = makeRandomPolytope(shapeSeed, points, radii, s.polytope);
        if (!r.ok) ctx.fail(path, "emitted body " + std::to_string(k) + ": degenerate random polytope: " + r.error);
        b.shapes = {s};
        if (!colorGiven) b.color = ctx.paletteColor(int(ctx.bodies.size()));
        ctx.emittedBodies++;
        ctx.addBody(std::move(b), path);
    }
}

}  // namespace cs::scene
