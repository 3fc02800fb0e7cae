// The "settings" and "camera" blocks of a scene file, and the names of the solver choices shared
// by scene files and the command line (docs/scene-format.md, "Settings").
#include "engine/scene/scene_parse.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/solver/soft_step.h"

namespace cs {

namespace {
struct Named { const char* name; int value; };
const Named kContact[] = {{"standard", int(ContactModelType::Standard)}, {"peg", int(ContactModelType::PEG)},
                          {"plus", int(ContactModelType::PLUS)}, {"compliant", int(ContactModelType::Compliant)},
                          {"ccp", int(ContactModelType::CCP)}};
const Named kNcp[] = {{"fb", int(NcpFunction::FischerBurmeister)}, {"min", int(NcpFunction::MinimumMap)}};
const Named kSolver[] = {{"jacobi", int(LinearSolverType::Jacobi)}, {"gs", int(LinearSolverType::GaussSeidel)},
                         {"pcg", int(LinearSolverType::PCG)}, {"pcr", int(LinearSolverType::PCR)}};

template <size_t N>
const char* nameOf(const Named (&table)[N], int value) {
    for (const Named& n : table) if (n.value == value) return n.name;
    return "?";
}
template <size_t N>
bool parseName(const Named (&table)[N], const std::string& name, int& out) {
    for (const Named& n : table)
        if (name == n.name) { out = n.value; return true; }
    return false;
}
}  // namespace

const char* contactModelName(ContactModelType type) { return nameOf(kContact, int(type)); }
const char* ncpFunctionName(NcpFunction f) { return nameOf(kNcp, int(f)); }
const char* solverTypeName(LinearSolverType type) { return nameOf(kSolver, int(type)); }

bool parseContactModelName(const std::string& name, ContactModelType& out) {
    int v;
    if (!parseName(kContact, name, v)) return false;
    out = ContactModelType(v);
    return true;
}
bool parseNcpFunctionName(const std::string& name, NcpFunction& out) {
    int v;
    if (!parseName(kNcp, name, v)) return false;
    out = NcpFunction(v);
    return true;
}
bool parseSolverTypeName(const std::string& name, LinearSolverType& out) {
    int v;
    if (!parseName(kSolver, name, v)) return false;
    out = LinearSolverType(v);
    return true;
}

namespace scene {

void readPlusSettings(JsonObject& obj, PlusSettings& p);
void readCompliantSettings(JsonObject& obj, CompliantSettings& c);
void readPegSettings(JsonObject& obj, PegSettings& p);
void readCcpSettings(JsonObject& obj, CcpSettings& c);
void readSoftSettings(JsonObject& obj, SoftSettings& s);
void readPgsSettings(JsonObject& obj, PgsSettings& p);

void readSettings(JsonObject& obj, WorldSettings& w) {
    SolverSettings& s = w.solver;
    w.dt = obj.positive("dt", w.dt);
    w.substeps = obj.integer("substeps", w.substeps, 1, SceneLimits::substeps);
    w.gravity = obj.vec3("gravity", w.gravity);
    w.contactMargin = obj.nonNegative("margin", w.contactMargin);
    w.speculative = obj.nonNegative("speculative", w.speculative);
    w.hyperplaneFaces = obj.flag("hyperplane_faces", w.hyperplaneFaces);
    w.frictionScale = obj.nonNegative("friction_scale", w.frictionScale);
    w.projectionPasses = obj.integer("projection", w.projectionPasses, 0, SceneLimits::passes);
    w.projectionMaxCorrection = obj.positive("projection_max", w.projectionMaxCorrection);
    w.redetectPasses = obj.integer("redetect", w.redetectPasses, 0, SceneLimits::passes);
    w.sleeping = obj.flag("sleeping", w.sleeping);
    w.partialWake = obj.flag("partial_wake", w.partialWake);
    w.narrowReuse = obj.flag("narrow_reuse", w.narrowReuse);
    if (obj.has("method") && !parseSolveMethodName(obj.text("method"), s.method))
        obj.fail("method", "unknown method \"" + obj.text("method") + "\" (expected newton, pgs or soft)");
    if (obj.has("soft")) {
        JsonObject o = obj.object("soft");
        readSoftSettings(o, s.soft);
    }
    if (obj.has("pgs")) {
        JsonObject o = obj.object("pgs");
        readPgsSettings(o, s.pgs);
    }
    if (obj.has("contact") && !parseContactModelName(obj.text("contact"), s.contactModel))
        obj.fail("contact", "unknown contact model \"" + obj.text("contact") +
                                "\" (expected standard, peg, plus, compliant or ccp)");
    if (obj.has("ncp") && !parseNcpFunctionName(obj.text("ncp"), s.ncp))
        obj.fail("ncp", "unknown NCP function \"" + obj.text("ncp") + "\" (expected fb or min)");
    if (obj.has("solver") && !parseSolverTypeName(obj.text("solver"), s.linearSolver))
        obj.fail("solver", "unknown linear solver \"" + obj.text("solver") +
                               "\" (expected jacobi, gs, pcg or pcr)");
    if (obj.has("linear_preconditioner") &&
        !parsePreconditioner(obj.text("linear_preconditioner").c_str(), s.preconditioner))
        obj.fail("linear_preconditioner", "unknown preconditioner \"" + obj.text("linear_preconditioner") +
                                              "\" (expected diagonal or block)");
    s.newtonIterations = obj.integer("newton", s.newtonIterations, 1, SceneLimits::newton);
    s.linearIterations = obj.integer("iters", s.linearIterations, 1, SceneLimits::iters);
    s.newtonTolerance = obj.nonNegative("newton_tol", s.newtonTolerance);
    s.linearTolerance = obj.nonNegative("linear_tol", s.linearTolerance);
    s.damping = obj.positive("damping", s.damping);
    if (s.damping > 1) obj.fail("damping", "must lie in (0, 1]");
    s.regularization = obj.nonNegative("regularization", s.regularization);
    s.warmStart = obj.flag("warm_start", s.warmStart);
    s.complementarityPreconditioner = obj.flag("preconditioner", s.complementarityPreconditioner);
    s.decoupleRows = obj.flag("decouple_rows", s.decoupleRows);
    s.cullRows = obj.flag("cull_rows", s.cullRows);
    s.condenseCompliantRows = obj.flag("condense_rows", s.condenseCompliantRows);
    s.keepBestIterate = obj.flag("keep_best", s.keepBestIterate);
    s.linearForcing = obj.nonNegative("linear_forcing", s.linearForcing);
    if (!(s.linearForcing < 1)) obj.fail("linear_forcing", "must lie in [0, 1)");
    s.fullStepStableSet = obj.flag("full_step_stable", s.fullStepStableSet);
    s.frictionSlipWeight = obj.nonNegative("friction_slip_weight", s.frictionSlipWeight);
    if (!(s.frictionSlipWeight >= 1)) obj.fail("friction_slip_weight", "must be 1 or more");
    s.stepCutGrowth = obj.nonNegative("step_cut", s.stepCutGrowth);
    if (s.stepCutGrowth > 0 && !(s.stepCutGrowth > 1)) obj.fail("step_cut", "must be 0 (off) or above 1");
    s.stabilization = obj.nonNegative("stabilization", s.stabilization);
    if (s.stabilization > 1) obj.fail("stabilization", "must lie in [0, 1]");
    if (obj.has("plus")) {
        JsonObject p = obj.object("plus");
        readPlusSettings(p, w.plus);
    }
    if (obj.has("compliant")) {
        JsonObject c = obj.object("compliant");
        readCompliantSettings(c, w.compliant);
    }
    if (obj.has("peg")) {
        JsonObject p = obj.object("peg");
        readPegSettings(p, s.peg);
    }
    if (obj.has("ccp")) {
        JsonObject c = obj.object("ccp");
        readCcpSettings(c, s.ccp);
    }
    obj.finish();
}

// "settings": {"plus": {...}}: the PLUS impact model's parameters ([PLUS] figure 2, table A1).
void readPlusSettings(JsonObject& obj, PlusSettings& p) {
    p.captureVelocity = obj.nonNegative("capture_velocity", p.captureVelocity);
    p.plasticVelocity = obj.positive("plastic_velocity", p.plasticVelocity);
    p.minRestitution = obj.number("min_restitution", p.minRestitution);
    if (p.minRestitution > 1) obj.fail("min_restitution", "must lie in [0, 1] (or < 0: the materials' restitution)");
    p.transitionVelocity = obj.nonNegative("transition_velocity", p.transitionVelocity);
    p.maxDirectionChange = obj.positive("max_direction_change", p.maxDirectionChange);
    if (p.maxDirectionChange >= Real(1.5)) obj.fail("max_direction_change", "must lie below pi/2 (radians)");
    p.proximityTolerance = obj.nonNegative("proximity_tolerance", p.proximityTolerance);
    obj.finish();
}

// "settings": {"peg": {...}}: PEG's relaxations ([PEG] section 4) and options
// (engine/contact/peg_model.cpp; PegSettings in engine/world.h).
void readPegSettings(JsonObject& obj, PegSettings& p) {
    p.epsTheta = obj.nonNegative("eps_theta", p.epsTheta);
    if (p.epsTheta > 2) obj.fail("eps_theta", "must lie in [0, 2] (cosine units)");
    p.feasibleAngle = obj.nonNegative("feasible_angle", p.feasibleAngle);
    if (p.feasibleAngle >= Real(1.5)) obj.fail("feasible_angle", "must lie below pi/2 (radians)");
    p.feasibleDelta = obj.nonNegative("feasible_delta", p.feasibleDelta);
    p.edgeEps = obj.nonNegative("edge_eps", p.edgeEps);
    p.trapTolerance = obj.nonNegative("trap_tolerance", p.trapTolerance);
    p.vertexVertex = obj.flag("vertex_vertex", p.vertexVertex);
    p.motionScale = obj.nonNegative("motion_scale", p.motionScale);
    obj.finish();
}

// "settings": {"ccp": {...}}: the cone complementarity model's solver ([CCP]; CcpSettings in
// engine/world.h, engine/solver/ccp_solvers.h).
void readCcpSettings(JsonObject& obj, CcpSettings& c) {
    if (obj.has("solver") && !parseCcpSolverName(obj.text("solver").c_str(), c.solver))
        obj.fail("solver", "unknown CCP solver \"" + obj.text("solver") + "\" (expected pj, pgs, apgd or newton)");
    c.iterations = obj.integer("iterations", c.iterations, 1, SceneLimits::iters);
    c.tolerance = obj.nonNegative("tolerance", c.tolerance);
    c.omega = obj.nonNegative("omega", c.omega);
    if (c.omega >= 2) obj.fail("omega", "must lie in [0, 2) (0: automatic)");
    obj.finish();
}

// "settings": {"soft": {...}}: the soft step's parameters (SoftSettings in engine/world.h,
// engine/solver/soft_step.h).
void readSoftSettings(JsonObject& obj, SoftSettings& s) {
    s.substeps = obj.integer("substeps", s.substeps, 1, SceneLimits::substeps);
    s.relaxIterations = obj.integer("relax", s.relaxIterations, 0, SceneLimits::iters);
    s.contactHertz = obj.positive("contact_hertz", s.contactHertz);
    s.contactDampingRatio = obj.nonNegative("contact_damping_ratio", s.contactDampingRatio);
    s.jointHertz = obj.positive("joint_hertz", s.jointHertz);
    s.jointDampingRatio = obj.nonNegative("joint_damping_ratio", s.jointDampingRatio);
    s.contactSpeed = obj.positive("contact_speed", s.contactSpeed);
    s.restitutionThreshold = obj.nonNegative("restitution_threshold", s.restitutionThreshold);
    obj.finish();
}

// "settings": {"pgs": {...}}: sequential impulses' parameters (PgsSettings in engine/world.h,
// engine/solver/pgs_step.h).
void readPgsSettings(JsonObject& obj, PgsSettings& p) {
    p.iterations = obj.integer("iterations", p.iterations, 1, SceneLimits::iters);
    p.splitIterations = obj.integer("split_iterations", p.splitIterations, 0, SceneLimits::iters);
    p.splitImpulse = obj.flag("split_impulse", p.splitImpulse);
    p.splitErp = obj.nonNegative("split_erp", p.splitErp);
    if (p.splitErp > 1) obj.fail("split_erp", "must lie in [0, 1]");
    p.erp = obj.nonNegative("erp", p.erp);
    if (p.erp > 1) obj.fail("erp", "must lie in [0, 1]");
    p.slop = obj.nonNegative("slop", p.slop);
    p.maxBiasSpeed = obj.positive("max_bias_speed", p.maxBiasSpeed);
    p.restitutionThreshold = obj.nonNegative("restitution_threshold", p.restitutionThreshold);
    obj.finish();
}

// "settings": {"compliant": {...}}: Hertz / Hunt-Crossley / Stribeck parameters ([PLUS] eqs. 4.1-4.2).
void readCompliantSettings(JsonObject& obj, CompliantSettings& c) {
    c.stiffness = obj.positive("stiffness", c.stiffness);
    c.dissipation = obj.nonNegative("dissipation", c.dissipation);
    c.radius = obj.positive("radius", c.radius);
    c.stribeckVelocity = obj.positive("stribeck_velocity", c.stribeckVelocity);
    c.tolerance = obj.positive("tolerance", c.tolerance);
    obj.finish();
}

void readCamera(JsonObject& obj, SceneInfo& info) {
    info.cameraEye = obj.vec3("eye", info.cameraEye);
    info.cameraTarget = obj.vec3("target", info.cameraTarget);
    info.cameraFovDeg = obj.positive("fov_deg", info.cameraFovDeg);
    if (info.cameraFovDeg >= 180) obj.fail("fov_deg", "must be below 180");
    if (!(length(info.cameraEye - info.cameraTarget) > 0)) obj.fail("eye", "must differ from the target");
    obj.finish();
}

}  // namespace scene
}  // namespace cs
