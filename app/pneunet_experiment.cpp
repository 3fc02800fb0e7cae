// `sandbox experiment fem-pneunet`: the PneuNet finger of [NSN] figure 2 (assets/scenes/pneunet_finger.json)
// bent by its chambers' pressure. For each pressure the library scene runs with the chambers' activation
// ramped from 0 over the first third of the run and then held; at the end the fingertip's displacement
// (mean of the tip face's nodes, from where the same run at pressure 0 leaves it, so gravity's sag is
// taken out), the rotation of the finger's last cell about its width axis, and how still the tip is. Writes
// DIR/fem_pneunet.csv and, through scripts/fem_pneunet_plot.py (python3-matplotlib), DIR/fem_pneunet.png.
//
// The reference beside it is Euler-Bernoulli's for small pressures: the activation a adds the stress
// -a I in the arches' tets, i.e. a free isotropic strain a (1 - 2 nu) / Y there, and an axial
// eigenstrain e over area A at height z above the section's centroid bends the beam by the curvature
// e A z / I along its length; summed over the activated tets the tip moves down by
// e / I * sum V z (L - x). The finger's linear tets (4 cells through its thickness) are stiffer in
// bending than the beam: docs/fem_pneunet.md gives the ratio and a finer mesh's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "engine/scene/scene_loader.h"
#include "engine/world.h"

namespace cs {

namespace {

struct PneunetRow {
    double pressure = 0;          // Pa
    double tipDown = 0, tipAlong = 0;   // m: the tip's displacement down (-z) and along the finger (+x)
    double angleDeg = 0;          // rotation of the finger's end about the width axis, curling down positive
    double tipSpeed = 0;          // m/s: the tip's mean speed over the run's last 0.1 s
    double residualLast = 0;      // m/s: the last step's final residual
    double cpuMsPerStep = 0;
    int failedSteps = 0;
};

double cpuSeconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

struct Tip {
    Vec3 centre{0, 0, 0};   // mean of the tip face's nodes
    Vec3 axis{0, 0, 0};     // from the centre of the node layer one cell behind the tip to the tip's
};

// The finger's tip face: its nodes at the largest rest x (the finger lies along +x from its mount),
// and the layer of nodes next to it, for the direction of the finger's end.
Tip tipOf(const Model& m, const std::vector<Vec3>& pos, int body) {
    const FemBodyInfo& f = m.femBodies[body];
    Real xTip = -1e30, xNext = -1e30;
    for (int n = f.firstNode; n < f.firstNode + f.nodeCount; ++n) xTip = std::max(xTip, m.femRestPos[n].x);
    for (int n = f.firstNode; n < f.firstNode + f.nodeCount; ++n)
        if (m.femRestPos[n].x < xTip - Real(1e-6)) xNext = std::max(xNext, m.femRestPos[n].x);
    Vec3 next{0, 0, 0};
    int tips = 0, nexts = 0;
    Tip t;
    for (int n = f.firstNode; n < f.firstNode + f.nodeCount; ++n) {
        if (m.femRestPos[n].x > xTip - Real(1e-6)) t.centre = t.centre + pos[n], ++tips;
        else if (m.femRestPos[n].x > xNext - Real(1e-6)) next = next + pos[n], ++nexts;
    }
    t.centre = t.centre / Real(tips);
    t.axis = t.centre - next / Real(nexts);
    return t;
}

bool runOne(const Model& model, const WorldSettings& settings, int body, double pressure, double seconds,
            PneunetRow& row, Tip& tip, std::string* error) {
    World w(model, settings);
    const int steps = int(std::lround(seconds / double(settings.dt)));
    const int ramp = std::max(1, steps / 3);
    const int tail = std::max(1, int(std::lround(0.1 / double(settings.dt))));
    Vec3 tailStart{0, 0, 0};
    const double start = cpuSeconds();
    for (int i = 0; i < steps; ++i) {
        w.state().femActivation[body] = Real(pressure * std::min(1.0, double(i + 1) / ramp));
        if (i == steps - tail) tailStart = tipOf(w.model(), w.state().femPos, body).centre;
        w.step();
        if (w.lastStepFailed()) ++row.failedSteps;
    }
    row.cpuMsPerStep = 1e3 * (cpuSeconds() - start) / steps;
    tip = tipOf(w.model(), w.state().femPos, body);
    row.pressure = pressure;
    row.tipSpeed = double(length(tip.centre - tailStart)) / (tail * double(settings.dt));
    row.residualLast = double(w.solveStats().residualFinal);
    if (!std::isfinite(double(tip.centre.x + tip.centre.z))) {
        *error = "the finger's nodes are not finite at pressure " + std::to_string(pressure) + " Pa";
        return false;
    }
    return true;
}

// The Euler-Bernoulli figure of the header, per pascal: the tip's deflection (m/Pa) of the finger.
double freeLayerTipPerPascal(const Model& m, int body) {
    const FemBodyInfo& f = m.femBodies[body];
    // The finger's rest box and its activated tets' extent, in the world (the finger is axis-aligned).
    Vec3 lo{1e30, 1e30, 1e30}, hi{-1e30, -1e30, -1e30};
    for (int n = f.firstNode; n < f.firstNode + f.nodeCount; ++n) {
        lo = {std::min(lo.x, m.femRestPos[n].x), std::min(lo.y, m.femRestPos[n].y), std::min(lo.z, m.femRestPos[n].z)};
        hi = {std::max(hi.x, m.femRestPos[n].x), std::max(hi.y, m.femRestPos[n].y), std::max(hi.z, m.femRestPos[n].z)};
    }
    const double width = hi.y - lo.y, h = hi.z - lo.z, zMid = 0.5 * (lo.z + hi.z);
    const double I = width * h * h * h / 12;
    // Each activated tet: its volume adds to its chamber's area times length; moment arm from mid-height.
    double sum = 0;   // sum over tets of V z (L - x): the tip deflection per unit (eigenstrain / I)
    for (int t = f.firstTet; t < f.firstTet + f.tetCount; ++t) {
        if (m.femTetActivation[t] == 0) continue;
        Vec3 c{0, 0, 0};
        for (int k = 0; k < 4; ++k) c = c + m.femRestPos[m.femTets[t][k]];
        c = c / Real(4);
        sum += double(m.femTetRest[t].volume) * (double(c.z) - zMid) * (hi.x - double(c.x));
    }
    const double strainPerPascal = (1 - 2 * double(f.poisson)) / double(f.youngs);
    return strainPerPascal * sum / I;
}

}  // namespace

bool femExperimentNumber(const char* text, double lo, double hi, double& v);   // fem_experiment.cpp

int runPneunetExperiment(int argc, char** argv) {
    const char* me = "sandbox experiment fem-pneunet";
    std::string out = "docs", scene = "pneunet_finger";
    double seconds = 1.2;
    std::vector<double> pressures = {0, 5e6, 1e7, 2e7, 3e7, 4.5e7, 6e7, 8e7, 1e8};
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        double v = 0;
        if (a == "--out" && value) {
            out = value;
        } else if (a == "--scene" && value) {
            scene = value;
        } else if (a == "--seconds") {
            if (!value || !femExperimentNumber(value, 0.1, 60, v)) {
                std::fprintf(stderr, "%s: --seconds needs a duration from 0.1 to 60 s\n", me);
                return 2;
            }
            seconds = v;
        } else if (a == "--pressures" && value) {
            pressures = {0};
            std::stringstream list(value);
            std::string item;
            while (std::getline(list, item, ',')) {
                if (!femExperimentNumber(item.c_str(), 0, 1e9, v)) {
                    std::fprintf(stderr, "%s: --pressures needs pascals from 0 to 1e9, comma-separated (\"%s\")\n", me,
                                 item.c_str());
                    return 2;
                }
                if (v > 0) pressures.push_back(v);
            }
            std::sort(pressures.begin(), pressures.end());
        } else {
            std::fprintf(stderr, "%s: unknown argument \"%s\" (--out DIR, --scene FILE, --seconds T, --pressures P1,P2,...)\n", me,
                         a.c_str());
            return 2;
        }
        ++i;
    }
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    if (!loadScene(scene, model, settings, info, &error)) {
        std::fprintf(stderr, "%s: %s\n", me, error.c_str());
        return 2;
    }
    const int body = 0;
    if (model.femBodies.empty()) {
        std::fprintf(stderr, "%s: the scene has no deformable body\n", me);
        return 2;
    }
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    const std::string csvPath = out + "/fem_pneunet.csv";
    FILE* csv = std::fopen(csvPath.c_str(), "w");
    if (!csv) {
        std::fprintf(stderr, "%s: cannot write %s\n", me, csvPath.c_str());
        return 2;
    }
    const double reference = freeLayerTipPerPascal(model, body);
    std::fprintf(csv, "pressure_pa,tip_down_m,tip_along_m,tip_angle_deg,euler_bernoulli_down_m,tip_speed_m_s,"
                      "residual_last_m_s,failed_steps,cpu_ms_per_step\n");
    Tip rest;
    for (double p : pressures) {
        PneunetRow row;
        Tip tip;
        if (!runOne(model, settings, body, p, seconds, row, tip, &error)) {
            std::fclose(csv);
            std::fprintf(stderr, "%s: %s\n", me, error.c_str());
            return 2;
        }
        if (p == 0) rest = tip;
        row.tipDown = double(rest.centre.z - tip.centre.z);
        row.tipAlong = double(tip.centre.x - rest.centre.x);
        // The finger's end turns from +x toward -z as it curls down.
        const double a0 = std::atan2(-double(rest.axis.z), double(rest.axis.x));
        const double a1 = std::atan2(-double(tip.axis.z), double(tip.axis.x));
        row.angleDeg = (a1 - a0) * 180 / M_PI;
        std::fprintf(csv, "%.6g,%.6e,%.6e,%.4f,%.6e,%.3e,%.3e,%d,%.2f\n", p, row.tipDown, row.tipAlong, row.angleDeg,
                     reference * p, row.tipSpeed, row.residualLast, row.failedSteps, row.cpuMsPerStep);
        std::fflush(csv);
        std::printf("pressure %9.3g Pa: tip down %8.3f mm, along %7.3f mm, tip turned %6.2f deg (Euler-Bernoulli "
                    "%7.3f mm); tip speed at the end %.2e m/s, last residual %.1e m/s, %d failed steps, %.1f ms/step\n",
                    p, 1e3 * row.tipDown, 1e3 * row.tipAlong, row.angleDeg, 1e3 * reference * p, row.tipSpeed,
                    row.residualLast, row.failedSteps, row.cpuMsPerStep);
    }
    std::fclose(csv);
    std::printf("wrote %s\n", csvPath.c_str());
    const std::string script = std::string(CS_SOURCE_DIR) + "/scripts/fem_pneunet_plot.py";
    const std::string command = "/usr/bin/python3 '" + script + "' '" + out + "'";
    if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "%s: the plot failed (%s); the CSV is written\n", me, command.c_str());
        return 1;
    }
    return 0;
}

}  // namespace cs
