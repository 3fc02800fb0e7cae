// Scripted GUI input; see gui_script.h.
#include "app/gui/gui_script.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "app/gui/sandbox_app.h"

namespace cs {

namespace {

const char* kVerbs[] = {"cursor", "move", "moveby", "aim", "press", "release", "key", "show", "camera", "report", "screenshot", "quit", "impact", "ui", "hover", "grasp", "fem", "wheel", "method"};

bool* layerFlag(SandboxApp& app, const std::string& name) {
    DebugDrawFlags& f = app.view.draw;
    if (name == "contacts") return &f.contactPoints;
    if (name == "grasp") return &app.view.grasp;
    if (name == "normals") return &f.contactNormals;
    if (name == "cones") return &f.frictionCones;
    if (name == "forces") return &f.contactForces;
    if (name == "penetration") return &f.penetration;
    if (name == "aabbs") return &f.aabbs;
    if (name == "frames") return &f.bodyFrames;
    if (name == "joints") return &f.jointFrames;
    if (name == "legend") return &app.view.legend;
    if (name == "plots") return &app.view.plots;
    if (name == "help") return &app.view.help;
    if (name == "shadows") return &app.view.shadows;
    if (name == "xray") return &app.view.xray;
    if (name == "impact") return &app.view.impact;
    if (name == "strain") return &app.view.fem.colorByField;
    if (name == "rest") return &f.femRestShape;
    if (name == "anchors") return &f.femAnchors;
    if (name == "settings") return &app.view.settingsPanel;
    return nullptr;
}

int keyCode(const std::string& k) {
    if (k == "space") return GLFW_KEY_SPACE;
    if (k == "right") return GLFW_KEY_RIGHT;
    if (k == "plus") return GLFW_KEY_EQUAL;
    if (k == "minus") return GLFW_KEY_MINUS;
    if (k.size() == 1 && k[0] >= 'a' && k[0] <= 'z') return GLFW_KEY_A + (k[0] - 'a');
    return -1;
}

// "impact index N|end", "impact step", "impact back", "impact pause on|off", "impact plot
// impulse normal|tangential", "impact plot velocity tangential|normal", "impact report".
void runImpactCommand(const ScriptCommand& c, SandboxApp& app) {
    ImpactReplay& r = app.impact;
    std::string what = c.args.empty() ? "" : c.args[0];
    std::string arg = c.args.size() > 1 ? c.args[1] : "";
    if (what == "index") {
        r.index = arg == "end" ? r.intervals() : std::clamp(std::atoi(arg.c_str()), 0, r.intervals());
        r.playing = false;
        app.paused = true;
    } else if (what == "step" || what == "back") {
        r.index = std::clamp(r.index + (what == "step" ? 1 : -1), 0, r.intervals());
        r.playing = false;
        app.paused = true;
    } else if (what == "frame") {
        app.frameImpact();
    } else if (what == "pause") {
        r.pauseOnImpact = arg != "off";
    } else if (what == "plot") {
        std::string kind = c.args.size() > 2 ? c.args[2] : "";
        if (arg == "impulse") r.impulsePlot = kind == "tangential" ? 1 : 0;
        if (arg == "velocity") r.velocityPlot = kind == "normal" ? 1 : 0;
    } else if (what == "report") {
        if (r.copy >= 0 && r.copy < app.copyCount()) std::printf("%s\n", r.report(app.copy(r.copy).world.model()).c_str());
        else std::printf("impact-report none\n");
    } else {
        std::printf("script line %d: unknown impact command '%s'\n", c.line, what.c_str());
    }
}

}  // namespace

bool GuiScript::load(const std::string& path, std::string* error) {
    std::ifstream f(path);
    if (!f) {
        *error = "cannot open script " + path;
        return false;
    }
    std::string text;
    int lineNo = 0;
    while (std::getline(f, text)) {
        ++lineNo;
        size_t hash = text.find('#');
        if (hash != std::string::npos) text.resize(hash);
        std::istringstream in(text);
        ScriptCommand c;
        c.line = lineNo;
        if (!(in >> c.frame)) {
            std::string rest;
            if (std::istringstream(text) >> rest) {
                *error = path + ":" + std::to_string(lineNo) + ": expected 'FRAME COMMAND ...'";
                return false;
            }
            continue;
        }
        if (!(in >> c.verb)) {
            *error = path + ":" + std::to_string(lineNo) + ": missing command";
            return false;
        }
        bool known = false;
        for (const char* v : kVerbs) known |= c.verb == v;
        if (!known) {
            *error = path + ":" + std::to_string(lineNo) + ": unknown command '" + c.verb + "'";
            return false;
        }
        std::string a;
        while (in >> a) c.args.push_back(a);
        commands_.push_back(c);
    }
    std::stable_sort(commands_.begin(), commands_.end(),
                     [](const ScriptCommand& a, const ScriptCommand& b) { return a.frame < b.frame; });
    return true;
}

bool GuiScript::done(int frame) const { return next_ >= commands_.size() && frame >= moveTo_; }

void GuiScript::run(int frame, SandboxApp& app) {
    if (frame > moveFrom_ && frame <= moveTo_) {
        double t = double(frame - moveFrom_) / double(moveTo_ - moveFrom_);
        curX_ = fromX_ + (toX_ - fromX_) * t;
        curY_ = fromY_ + (toY_ - fromY_) * t;
        app.cursorMoved(curX_, curY_);
    }
    while (next_ < commands_.size() && commands_[next_].frame <= frame) {
        const ScriptCommand& c = commands_[next_++];
        auto num = [&](size_t i, double fallback) { return i < c.args.size() ? std::atof(c.args[i].c_str()) : fallback; };
        if (c.verb == "cursor") {
            curX_ = num(0, 0);
            curY_ = num(1, 0);
            app.cursorMoved(curX_, curY_);
        } else if (c.verb == "move" || c.verb == "moveby") {
            fromX_ = curX_;
            fromY_ = curY_;
            bool by = c.verb == "moveby";
            toX_ = num(0, 0) + (by ? curX_ : 0);
            toY_ = num(1, 0) + (by ? curY_ : 0);
            moveFrom_ = frame;
            moveTo_ = frame + std::max(1, int(num(2, 1)));
        } else if (c.verb == "aim") {
            glm::vec2 px;
            int body = -1;
            std::string which = c.args.empty() ? "auto" : c.args[0];
            if (app.aimAt(which, px, body)) {
                curX_ = px.x + num(1, 0);
                curY_ = px.y + num(2, 0);
                app.cursorMoved(curX_, curY_);
                std::printf("aim: body %d at pixel %.1f %.1f\n", body, curX_, curY_);
            } else {
                std::printf("aim: no visible body for '%s'\n", which.c_str());
            }
        } else if (c.verb == "press" || c.verb == "release") {
            int button = !c.args.empty() && c.args[0] == "right" ? GLFW_MOUSE_BUTTON_RIGHT : GLFW_MOUSE_BUTTON_LEFT;
            bool shift = c.args.size() > 1 && c.args[1] == "shift";
            app.mouseButton(button, c.verb == "press", shift);
        } else if (c.verb == "key") {
            int k = keyCode(c.args.empty() ? "" : c.args[0]);
            if (k >= 0) app.keyPressed(k, 0);
        } else if (c.verb == "show") {
            bool* flag = layerFlag(app, c.args.empty() ? "" : c.args[0]);
            if (flag) *flag = c.args.size() < 2 || c.args[1] != "off";
        } else if (c.verb == "camera") {
            app.camera.yaw = glm::radians(float(num(0, -60)));
            app.camera.pitch = glm::radians(float(num(1, 25)));
            app.camera.distance = float(num(2, 8));
            if (c.args.size() >= 6) app.camera.target = glm::vec3(num(3, 0), num(4, 0), num(5, 0));
        } else if (c.verb == "wheel") {
            app.scrolled(num(0, 1));
        } else if (c.verb == "report") {
            app.printDragReport(frame);
        } else if (c.verb == "ui") {
            app.printUiReport(frame);
        } else if (c.verb == "hover") {
            glm::vec2 px;
            if (app.helpMarkerCentre(int(num(1, 0)), px)) {
                curX_ = px.x;
                curY_ = px.y;
                app.cursorMoved(curX_, curY_);
                std::printf("hover: help marker %d at pixel %.1f %.1f\n", int(num(1, 0)), curX_, curY_);
            } else {
                std::printf("hover: no help marker %d\n", int(num(1, 0)));
            }
        } else if (c.verb == "screenshot") {
            std::string error;
            app.screenshot(c.args.empty() ? "screenshot.png" : c.args[0], &error);
        } else if (c.verb == "impact") {
            runImpactCommand(c, app);
        } else if (c.verb == "grasp") {
            app.graspScriptCommand(c.args, frame);
        } else if (c.verb == "fem") {
            // fem field volumetric|vonmises|stretch, fem range auto|LO HI, fem pressure PA [BODY]
            const std::string what = c.args.empty() ? "" : c.args[0], arg = c.args.size() > 1 ? c.args[1] : "";
            if (what == "field" && arg == "volumetric") app.view.fem.field = FemField::VolumetricStrain;
            else if (what == "field" && arg == "vonmises") app.view.fem.field = FemField::VonMises;
            else if (what == "field" && arg == "stretch") app.view.fem.field = FemField::MaxStretch;
            else if (what == "range" && arg == "auto") app.view.fem.autoRange = true;
            else if (what == "range" && c.args.size() == 3 && num(2, 0) > num(1, 0)) {
                app.view.fem.autoRange = false;
                app.view.fem.lo = float(num(1, 0));
                app.view.fem.hi = float(num(2, 0));
            } else if (what == "pressure") {   // as the Deformables panel's slider
                SessionEvent e;
                e.type = SessionEventType::Pressure;
                e.pressure = Real(num(1, 0));
                e.body = int(num(2, 0));
                app.applyEvent(e, true);
            }
        } else if (c.verb == "method") {
            // method NAME [COPY]: the panel's solve-method combo (every copy without COPY, 1-based);
            // method report: one method-report line per copy
            const std::string what = c.args.empty() ? "" : c.args[0];
            if (what == "report") app.printMethodReport(frame);
            else app.scriptSetMethod(what, c.args.size() > 1 ? int(num(1, 0)) - 1 : -1, frame);
        } else if (c.verb == "quit") {
            app.quitRequested = true;
        }
    }
    std::fflush(stdout);
}

}  // namespace cs
