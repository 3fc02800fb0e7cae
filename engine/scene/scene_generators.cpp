// Generators: repeated structures written as one entry of "bodies" so that scene files stay
// short (docs/scene-format.md, "Generators"): ground, pyramid, stack, row, grid, arch,
// card_house. Each reads a frame ("position", "rotation") and places its bodies in it.
#include <cmath>

#include "engine/scene/scene_parse.h"

namespace cs::scene {

namespace {

constexpr Real kPi = Real(3.14159265358979323846);

struct Placer {
    SceneContext& ctx;
    Transform frame;
    std::string path;
    bool colorGiven;
    void add(BodyDesc body, const std::string& name, Transform local) {
        body.name = name;
        body.pose = composeTransforms(frame, local);
        if (!colorGiven) body.color = ctx.paletteColor(int(ctx.bodies.size()));
        ctx.generatedBodies++;
        ctx.addBody(std::move(body), path);
    }
};

BodyDesc boxBody(Vec3 half) {
    BodyDesc b;
    ShapeDesc s;
    s.polytope = makeBox(half);
    b.shapes.push_back(s);
    return b;
}

Transform at(Vec3 p, Quat q = quatIdentity()) { return Transform{p, q}; }

void ground(JsonObject& obj, Placer& out, const std::string& name) {
    Vec3 half = obj.has("half_extents") ? obj.positiveVec3("half_extents") : Vec3{20, 20, Real(0.5)};
    BodyDesc b = boxBody(half);
    b.isStatic = true;
    readBodyCommon(obj, b);
    if (!b.isStatic) obj.fail("static", "the ground is static");
    if (!obj.has("color")) b.color = Color3{0.42f, 0.44f, 0.46f};
    out.colorGiven = true;
    out.add(b, name, at({0, 0, -half.z}));   // top face at the frame's z = 0
}

// A triangular wall (base, base-1, ..., 1 boxes per row; base(base+1)/2 in all) or a square
// pyramid (base^2 + (base-1)^2 + ... + 1), bottom row resting on the frame's z = 0.
void pyramid(JsonObject& obj, Placer& out, const std::string& name) {
    int base = obj.integer("base", 1, 1000);
    Vec3 half = obj.has("half_extents") ? obj.positiveVec3("half_extents") : Vec3{Real(0.25), Real(0.25), Real(0.25)};
    Real gap = obj.nonNegative("spacing", 0);
    std::string layout = obj.text("layout", "wall");
    if (layout != "wall" && layout != "square") obj.fail("layout", "expected \"wall\" or \"square\"");
    const double total = layout == "wall" ? base * (base + 1.0) / 2 : base * (base + 1.0) * (2 * base + 1.0) / 6;
    if (total > Limits::bodies)
        obj.fail("base", "makes " + formatNumber(total) + " bodies (the limit is " + std::to_string(Limits::bodies) + ")");
    BodyDesc b = boxBody(half);
    readBodyCommon(obj, b);
    out.colorGiven = obj.has("color");
    Real sx = 2 * half.x + gap, sy = 2 * half.y + gap;
    int index = 0;
    for (int level = 0; level < base; ++level) {
        int n = base - level;
        Real z = half.z + level * 2 * half.z;
        int ny = layout == "square" ? n : 1;
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < n; ++i) {
                Vec3 p{(i - Real(n - 1) / 2) * sx, layout == "square" ? (j - Real(n - 1) / 2) * sy : 0, z};
                out.add(b, name + "_" + std::to_string(index++), at(p));
            }
    }
}

// A vertical stack of equal boxes, bottom first; "masses" sets each box's mass.
void stack(JsonObject& obj, Placer& out, const std::string& name) {
    int count = obj.integer("count", 1, Limits::bodies);
    Vec3 half = obj.positiveVec3("half_extents");
    Real gap = obj.nonNegative("spacing", 0);
    BodyDesc b = boxBody(half);
    std::vector<Real> masses;
    if (const Json* m = obj.find("masses")) {
        std::string p = obj.pathOf("masses");
        if (!m->is_array() || int(m->size()) != count)
            obj.fail("masses", "expected an array of " + std::to_string(count) + " masses (one per box)");
        for (size_t i = 0; i < m->size(); ++i) {
            masses.push_back(readNumber((*m)[i], p + "/" + std::to_string(i), obj.ctx()));
            if (!(masses.back() > 0)) obj.ctx().fail(p + "/" + std::to_string(i), "mass must be positive");
        }
        if (obj.has("mass") || obj.has("density"))
            obj.fail("masses", "give \"masses\" or \"mass\"/\"density\", not both");
    }
    readBodyCommon(obj, b);
    out.colorGiven = obj.has("color");
    for (int i = 0; i < count; ++i) {
        if (!masses.empty()) b.mass = masses[i];
        out.add(b, name + "_" + std::to_string(i), at({0, 0, half.z + i * (2 * half.z + gap)}));
    }
}

// Copies of one body: "row" steps by "offset" (and "rotation_step") per copy, "grid" fills
// counts[0] x counts[1] x counts[2] cells of "spacing"; a grid's "tilt" (rad) turns each copy
// about a random horizontal axis by a random angle in [0, tilt] (seeded by "seed": the pile
// of the peer benchmarks, a lattice with tilts of up to 0.1 rad).
void repeat(JsonObject& obj, Placer& out, const std::string& name, bool grid) {
    int nx = 1, ny = 1, nz = 1;
    Vec3 offset{0, 0, 0};
    Quat step = quatIdentity();
    Real tilt = 0;
    int seed = 0;
    if (grid) {
        const Json& c = obj.require("counts");
        if (!c.is_array() || c.size() != 3) obj.fail("counts", "expected three positive integers");
        const std::string p = obj.pathOf("counts");
        nx = int(readInteger(c[0], p + "/0", obj.ctx(), 1, Limits::bodies));
        ny = int(readInteger(c[1], p + "/1", obj.ctx(), 1, Limits::bodies));
        nz = int(readInteger(c[2], p + "/2", obj.ctx(), 1, Limits::bodies));
        if (double(nx) * ny * nz > Limits::bodies)
            obj.fail("counts", "makes " + formatNumber(double(nx) * ny * nz) + " bodies (the limit is " +
                                   std::to_string(Limits::bodies) + ")");
        offset = obj.vec3("spacing");
        tilt = obj.nonNegative("tilt", 0);
        if (!(tilt <= kPi)) obj.fail("tilt", "must be at most pi");
        seed = obj.integer("seed", 0, 0, 1 << 30);
    } else {
        nx = obj.integer("count", 1, Limits::bodies);
        offset = obj.vec3("offset");
        if (const Json* r = obj.find("rotation_step")) step = readRotation(*r, obj.pathOf("rotation_step"), obj.ctx());
    }
    const Json& tj = obj.require("body");
    bool colorGiven = tj.is_object() && tj.contains("color");
    BodyDesc t = readBody(tj, obj.pathOf("body"), out.ctx);
    if (tj.contains("frame")) obj.fail("body", "a generator's body cannot use \"frame\"; give the generator one");
    std::string base = t.name.empty() ? name : t.name;
    out.colorGiven = colorGiven;
    Quat rot = t.pose.rot;
    SceneRng rng{uint64_t(seed) * 0x9e3779b97f4a7c15ull + out.ctx.seedOffset + 0x2545f4914f6cdd1dull};
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                Vec3 p = grid ? t.pose.pos + Vec3{i * offset.x, j * offset.y, k * offset.z}
                              : t.pose.pos + Real(i) * offset;
                std::string n = grid ? base + "_" + std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(k)
                                     : base + "_" + std::to_string(i);
                Quat q = normalize(rot);
                if (tilt > 0) {
                    const Real axis = rng.uniform(0, 2 * kPi), angle = rng.uniform(0, tilt);
                    q = normalize(quatFromAxisAngle({std::cos(axis), std::sin(axis), 0}, angle) * q);
                }
                out.add(t, n, at(p, q));
                rot = step * rot;
            }
}

// A semicircular arch of wedge-shaped blocks (voussoirs) in the frame's xz plane, centred on
// the frame origin; its two end faces are horizontal at z = 0 and rest on whatever is put there.
void arch(JsonObject& obj, Placer& out, const std::string& name) {
    int blocks = obj.integer("blocks", 20, 2, 1000);
    Real r0 = obj.positive("inner_radius");
    Real r1 = r0 + obj.positive("thickness");
    Real d = obj.positive("half_depth");
    Real gap = obj.nonNegative("gap", 0);
    BodyDesc b;
    readBodyCommon(obj, b);
    out.colorGiven = obj.has("color");
    Real shrink = gap / (r0 + r1);   // half the gap, as an angle at the mean radius
    for (int k = 0; k < blocks; ++k) {
        Real a0 = kPi * k / blocks + shrink, a1 = kPi * (k + 1) / blocks - shrink;
        std::vector<Vec3> pts;
        for (Real a : {a0, a1})
            for (Real r : {r0, r1})
                for (Real y : {-d, d}) pts.push_back(Vec3{r * std::cos(a), y, r * std::sin(a)});
        BodyDesc blk = b;
        ShapeDesc s;
        BuildResult res = buildConvexHull(pts, s.polytope);
        if (!res.ok) obj.fail("blocks", "degenerate arch block: " + res.error);
        blk.shapes = {s};
        out.add(blk, name + "_" + std::to_string(k), at({0, 0, 0}));
    }
}

// A house of cards: `levels` rows of A-frames (two cards leaning at lean_deg from vertical,
// inner bottom edges on the floor, tops touching), a flat card across the apexes of each row
// that carries the next. levels = 2 gives 2 A-frames, 1 flat card, 1 A-frame: 7 cards.
void cardHouse(JsonObject& obj, Placer& out, const std::string& name) {
    int levels = obj.integer("levels", 2, 1, 100);
    Real h = obj.positive("card_half_length");
    Real w = obj.positive("card_half_width");
    Real t = obj.positive("card_half_thickness");
    Real theta = obj.positive("lean_deg") * kPi / 180;
    Real g = obj.nonNegative("gap", Real(0.001));
    if (!(theta < kPi / 2)) obj.fail("lean_deg", "must be below 90");
    BodyDesc b;
    readBodyCommon(obj, b);
    out.colorGiven = obj.has("color");
    Real c = std::cos(theta), s = std::sin(theta);
    Real foot = 2 * h * s + 2 * t * c + g / 2;       // half footprint of one A-frame
    Real spacing = 2 * foot + Real(0.05) * h;         // apex to apex
    Real zb = 0;
    int index = 0;
    for (int level = 0; level < levels; ++level) {
        int m = levels - level;
        Real za = zb + 2 * h * c + g;
        for (int i = 0; i < m; ++i) {
            Real cx = (i - Real(m - 1) / 2) * spacing;
            BodyDesc card = b;
            ShapeDesc sh;
            sh.polytope = makeBox({t, w, h});
            card.shapes = {sh};
            Real dx = t * c + h * s + g / 2, z = za + t * s - h * c;
            out.add(card, name + "_" + std::to_string(index++), at({cx - dx, 0, z}, quatFromAxisAngle({0, 1, 0}, theta)));
            out.add(card, name + "_" + std::to_string(index++), at({cx + dx, 0, z}, quatFromAxisAngle({0, 1, 0}, -theta)));
        }
        if (level + 1 < levels) {
            Real hf = (m - 1) * spacing / 2 + foot / 2;
            BodyDesc flat = b;
            ShapeDesc sh;
            sh.polytope = makeBox({hf, w, t});
            flat.shapes = {sh};
            // The outer top edges of the leaning cards are 2 t sin(theta) above the apex line.
            Real bottom = za + 2 * t * s + g;
            out.add(flat, name + "_" + std::to_string(index++), at({0, 0, bottom + t}));
            zb = bottom + 2 * t;
        }
    }
}

}  // namespace

void readGenerator(const Json& v, const std::string& path, SceneContext& ctx) {
    JsonObject obj(v, path, ctx);
    std::string kind = obj.text("generator");
    std::string name = obj.text("name", kind);
    Placer out{ctx, readPose(obj), path, false};
    if (kind == "ground") ground(obj, out, name);
    else if (kind == "pyramid") pyramid(obj, out, name);
    else if (kind == "stack") stack(obj, out, name);
    else if (kind == "row") repeat(obj, out, name, false);
    else if (kind == "grid") repeat(obj, out, name, true);
    else if (kind == "arch") arch(obj, out, name);
    else if (kind == "card_house") cardHouse(obj, out, name);
    else obj.fail("generator", "unknown generator \"" + kind +
                                   "\" (expected ground, pyramid, stack, row, grid, arch or card_house)");
    obj.finish();
}

}  // namespace cs::scene
