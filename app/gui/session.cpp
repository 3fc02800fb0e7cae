// Session files: JSON through nlohmann::json; see session.h.
#include "app/gui/session.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/scene/scene_loader.h"
#include "engine/solver/ccp_solvers.h"
#include "engine/solver/soft_step.h"

namespace cs {

namespace {

using Json = nlohmann::json;

const char* kTypeNames[] = {"drag", "release", "launch", "settings", "reset", "grasp", "pressure"};
constexpr int kTypeCount = 7;

Json vec(Vec3 v) { return Json::array({v.x, v.y, v.z}); }
Vec3 vec(const Json& j) { return Vec3{j.at(0).get<Real>(), j.at(1).get<Real>(), j.at(2).get<Real>()}; }

Json settingsJson(const WorldSettings& s) {
    return Json{{"dt", s.dt},
                {"substeps", s.substeps},
                {"gravity", vec(s.gravity)},
                {"contactMargin", s.contactMargin},
                {"speculative", s.speculative},
                {"hyperplaneFaces", s.hyperplaneFaces},
                {"projectionPasses", s.projectionPasses},
                {"redetectPasses", s.redetectPasses},
                {"sleeping", s.sleeping},
                {"frictionScale", s.frictionScale},
                {"contact", contactModelName(s.solver.contactModel)},
                {"ncp", ncpFunctionName(s.solver.ncp)},
                {"solver", solverTypeName(s.solver.linearSolver)},
                {"newtonIterations", s.solver.newtonIterations},
                {"linearIterations", s.solver.linearIterations},
                {"newtonTolerance", s.solver.newtonTolerance},
                {"linearTolerance", s.solver.linearTolerance},
                {"damping", s.solver.damping},
                {"regularization", s.solver.regularization},
                {"warmStart", s.solver.warmStart},
                {"complementarityPreconditioner", s.solver.complementarityPreconditioner},
                {"stabilization", s.solver.stabilization},
                {"ccpSolver", ccpSolverName(s.solver.ccp.solver)},
                {"ccpIterations", s.solver.ccp.iterations},
                {"method", solveMethodName(s.solver.method)}};
}

WorldSettings settingsFromJson(const Json& j) {
    WorldSettings s;
    s.dt = j.at("dt").get<Real>();
    s.substeps = j.at("substeps").get<int>();
    s.gravity = vec(j.at("gravity"));
    s.contactMargin = j.at("contactMargin").get<Real>();
    s.speculative = j.value("speculative", s.speculative);             // absent in sessions before 2026-11
    s.hyperplaneFaces = j.value("hyperplaneFaces", s.hyperplaneFaces);
    s.projectionPasses = j.value("projectionPasses", s.projectionPasses);   // absent before session 6
    s.redetectPasses = j.value("redetectPasses", s.redetectPasses);         // absent before session 7
    s.sleeping = j.value("sleeping", s.sleeping);                           // absent before sleeping: off
    s.frictionScale = j.at("frictionScale").get<Real>();
    if (!parseContactModelName(j.at("contact").get<std::string>(), s.solver.contactModel))
        throw std::runtime_error("unknown contact model " + j.at("contact").get<std::string>());
    if (!parseNcpFunctionName(j.at("ncp").get<std::string>(), s.solver.ncp))
        throw std::runtime_error("unknown NCP function " + j.at("ncp").get<std::string>());
    if (!parseSolverTypeName(j.at("solver").get<std::string>(), s.solver.linearSolver))
        throw std::runtime_error("unknown solver " + j.at("solver").get<std::string>());
    s.solver.newtonIterations = j.at("newtonIterations").get<int>();
    s.solver.linearIterations = j.at("linearIterations").get<int>();
    s.solver.newtonTolerance = j.at("newtonTolerance").get<Real>();
    s.solver.linearTolerance = j.at("linearTolerance").get<Real>();
    s.solver.damping = j.at("damping").get<Real>();
    s.solver.regularization = j.at("regularization").get<Real>();
    s.solver.warmStart = j.at("warmStart").get<bool>();
    s.solver.complementarityPreconditioner = j.at("complementarityPreconditioner").get<bool>();
    s.solver.stabilization = j.at("stabilization").get<Real>();
    // The CCP model's method and iterations: absent before issue 36 (the engine's defaults then).
    if (j.contains("ccpSolver") && !parseCcpSolverName(j.at("ccpSolver").get<std::string>().c_str(), s.solver.ccp.solver))
        throw std::runtime_error("unknown CCP solver " + j.at("ccpSolver").get<std::string>());
    s.solver.ccp.iterations = j.value("ccpIterations", s.solver.ccp.iterations);
    // The solve method (issue 38): absent before it, Newton then.
    if (j.contains("method") && !parseSolveMethodName(j.at("method").get<std::string>(), s.solver.method))
        throw std::runtime_error("unknown solve method " + j.at("method").get<std::string>());
    return s;
}

}  // namespace

bool writeSession(const std::string& path, const Session& session, std::string* error) {
    Json j;
    j["version"] = 1;
    j["scene"] = session.scene;
    j["copies"] = session.copies;
    j["steps"] = session.steps;
    j["settings"] = Json::array();
    for (const WorldSettings& s : session.settings) j["settings"].push_back(settingsJson(s));
    j["events"] = Json::array();
    for (const SessionEvent& e : session.events) {
        Json je{{"step", e.step}, {"type", kTypeNames[int(e.type)]}};
        switch (e.type) {
        case SessionEventType::Drag:
            je["body"] = e.body;
            je["local"] = vec(e.local);
            je["target"] = vec(e.target);
            if (e.femTri >= 0) {
                je["fem_tri"] = e.femTri;
                je["fem_weights"] = vec(e.femWeights);
            }
            break;
        case SessionEventType::Release:
            je["body"] = e.body;
            je["velocity"] = vec(e.velocity);
            if (e.femTri >= 0) je["fem_tri"] = e.femTri;
            break;
        case SessionEventType::Launch:
            je["shape"] = e.sphere ? "sphere" : "box";
            je["position"] = vec(e.position);
            je["velocity"] = vec(e.velocity);
            je["size"] = e.size;
            je["density"] = e.density;
            break;
        case SessionEventType::Settings:
            je["copy"] = e.copy;
            je["settings"] = settingsJson(e.settings);
            break;
        case SessionEventType::Reset: break;
        case SessionEventType::Grasp:
            je["copy"] = e.copy;
            je["event"] = e.grasp;
            je["time"] = e.time;
            je["detail"] = e.detail;
            break;
        case SessionEventType::Pressure:
            je["body"] = e.body;
            je["pressure"] = e.pressure;
            break;
        }
        j["events"].push_back(je);
    }
    std::ofstream f(path);
    if (!f) {
        *error = "cannot write session file " + path;
        return false;
    }
    f << j.dump(1) << "\n";
    return bool(f);
}

bool readSession(const std::string& path, Session& session, std::string* error) {
    std::ifstream f(path);
    if (!f) {
        *error = "cannot open session file " + path;
        return false;
    }
    try {
        Json j = Json::parse(f);
        if (j.at("version").get<int>() != 1) throw std::runtime_error("unsupported version");
        session = Session{};
        session.scene = j.at("scene").get<std::string>();
        session.copies = j.at("copies").get<std::vector<std::string>>();
        session.steps = j.at("steps").get<long long>();
        for (const Json& s : j.at("settings")) session.settings.push_back(settingsFromJson(s));
        for (const Json& je : j.at("events")) {
            SessionEvent e;
            e.step = je.at("step").get<long long>();
            std::string type = je.at("type").get<std::string>();
            int t = 0;
            while (t < kTypeCount && type != kTypeNames[t]) ++t;
            if (t == kTypeCount) throw std::runtime_error("unknown event type '" + type + "'");
            e.type = SessionEventType(t);
            switch (e.type) {
            case SessionEventType::Drag:
                e.body = je.at("body").get<int>();
                e.local = vec(je.at("local"));
                e.target = vec(je.at("target"));
                if (je.contains("fem_tri")) {
                    e.femTri = je.at("fem_tri").get<int>();
                    e.femWeights = vec(je.at("fem_weights"));
                }
                break;
            case SessionEventType::Release:
                e.body = je.at("body").get<int>();
                e.velocity = vec(je.at("velocity"));
                if (je.contains("fem_tri")) e.femTri = je.at("fem_tri").get<int>();
                break;
            case SessionEventType::Launch:
                e.sphere = je.at("shape").get<std::string>() == "sphere";
                e.position = vec(je.at("position"));
                e.velocity = vec(je.at("velocity"));
                e.size = je.at("size").get<Real>();
                e.density = je.value("density", e.density);
                if (!(e.size > 0) || !(e.density > 0)) throw std::runtime_error("a launch needs size > 0 and density > 0");
                break;
            case SessionEventType::Settings:
                e.copy = je.at("copy").get<int>();
                e.settings = settingsFromJson(je.at("settings"));
                break;
            case SessionEventType::Reset: break;
            case SessionEventType::Grasp:
                e.copy = je.at("copy").get<int>();
                e.grasp = je.at("event").get<std::string>();
                e.time = je.at("time").get<Real>();
                e.detail = je.value("detail", std::string());
                break;
            case SessionEventType::Pressure:
                e.body = je.at("body").get<int>();
                e.pressure = je.at("pressure").get<Real>();
                break;
            }
            session.events.push_back(e);
        }
        if (session.settings.size() != session.copies.size() || session.copies.empty())
            throw std::runtime_error("'settings' and 'copies' must have one entry per copy");
    } catch (const std::exception& ex) {
        *error = path + ": not a valid session file (" + ex.what() + ")";
        return false;
    }
    return true;
}

}  // namespace cs
