// `sandbox experiment fem-extension`: [NSN] figure 13, volume against stretch for the corotated
// linear and the stable neo-Hookean material (engine/fem/fem_extension.h), beside the closed forms
// of uniaxial stress. Writes DIR/fem_extension.csv and, through scripts/fem_plot.py (Debian's
// python3-matplotlib), DIR/fem_extension.png; prints one summary line per material.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "engine/fem/fem_extension.h"

namespace cs {

// A whole argument as a finite number in [lo, hi] (also pneunet_experiment.cpp's).
bool femExperimentNumber(const char* text, double lo, double hi, double& v) {
    char* end = nullptr;
    errno = 0;
    v = std::strtod(text, &end);
    return end != text && *end == '\0' && errno == 0 && std::isfinite(v) && v >= lo && v <= hi;
}

int runPneunetExperiment(int argc, char** argv);   // pneunet_experiment.cpp

int runFemExperiment(int argc, char** argv) {
    const std::string which = argc > 2 ? argv[2] : "";
    if (which == "fem-pneunet") return runPneunetExperiment(argc, argv);
    if (which != "fem-extension") {
        std::fprintf(stderr, "sandbox experiment: unknown FEM experiment \"%s\" (fem-extension, fem-pneunet)\n", which.c_str());
        return 2;
    }
    std::string out = "docs";
    FemExtensionOptions o;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        double v = 0;
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        auto bad = [&](const char* what) {
            std::fprintf(stderr, "sandbox experiment fem-extension: %s needs %s\n", a.c_str(), what);
            return 2;
        };
        if (a == "--out" && value) {
            out = value;
        } else if (a == "--cells") {
            if (!value || !femExperimentNumber(value, 2, 200, v) || v != std::floor(v)) return bad("an integer from 2 to 200");
            o.cells = (int)v;
        } else if (a == "--seconds") {
            if (!value || !femExperimentNumber(value, 0.1, 600, v)) return bad("a duration from 0.1 to 600 s");
            o.seconds = Real(v);
        } else if (a == "--dt") {
            if (!value || !femExperimentNumber(value, 1e-5, 0.1, v)) return bad("a step from 1e-5 to 0.1 s");
            o.dt = Real(v);
        } else {
            std::fprintf(stderr, "sandbox experiment fem-extension: unknown argument \"%s\" "
                                 "(--out DIR, --cells N, --seconds T, --dt H)\n", a.c_str());
            return 2;
        }
        ++i;
    }
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    const std::string csvPath = out + "/fem_extension.csv";
    FILE* csv = std::fopen(csvPath.c_str(), "w");
    if (!csv) {
        std::fprintf(stderr, "sandbox experiment fem-extension: cannot write %s\n", csvPath.c_str());
        return 2;
    }
    std::fprintf(csv, "material,stretch,volume_middle,volume_whole,closed_form,min_stretch,newton_iterations\n");
    for (FemMaterialType type : {FemMaterialType::CorotatedLinear, FemMaterialType::StableNeoHookean}) {
        const char* name = type == FemMaterialType::CorotatedLinear ? "linear" : "neohookean";
        FemExtensionResult r;
        std::string error;
        if (!runFemExtension(type, o, r, &error)) {
            std::fclose(csv);
            std::fprintf(stderr, "sandbox experiment fem-extension: %s\n", error.c_str());
            return 2;
        }
        for (const FemExtensionSample& s : r.samples)
            std::fprintf(csv, "%s,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n", name, double(s.stretch), double(s.volumeMiddle),
                         double(s.volumeWhole), double(s.closedForm), double(s.minStretch), s.newtonIterations);
        const FemExtensionSample& last = r.samples.back();
        std::printf("%-10s %d tets: at stretch %.3f the middle third keeps %.4f of its volume (closed form %.4f), "
                    "the whole bar %.4f; %d failed steps\n",
                    name, r.tets, double(last.stretch), double(last.volumeMiddle), double(last.closedForm),
                    double(last.volumeWhole), r.failedSteps);
    }
    std::fclose(csv);
    std::printf("wrote %s\n", csvPath.c_str());
    const std::string script = std::string(CS_SOURCE_DIR) + "/scripts/fem_plot.py";
    const std::string command = "/usr/bin/python3 '" + script + "' '" + out + "'";
    if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "sandbox experiment fem-extension: the plot failed (%s); the CSV is written\n",
                     command.c_str());
        return 1;
    }
    return 0;
}

}  // namespace cs
