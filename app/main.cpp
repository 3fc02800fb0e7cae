// sandbox: the Contact Sandbox executable. Dispatches the subcommands:
//   sandbox                    GUI on the default scene (headless run when the GUI is not built)
//   sandbox SCENE              GUI on SCENE
//   sandbox gui [SCENE] ...    GUI (app/gui/gui.h)
//   sandbox record SCENE ...   offscreen recording to MP4 (app/gui/gui.h)
//   sandbox run SCENE ...      headless run (app/runner.h)
//   sandbox list               the scene library
//   sandbox bench-gpu ...      CPU and GPU ms per step by stage (gpu/gpu_backend.h)
#include <cstdio>
#include <cstring>
#include <string>

#include "app/cli.h"
#include "app/runner.h"
#include "app/thread_policy.h"
#include "gpu/gpu_backend.h"

#if defined(CS_HAVE_GUI)
#include "app/gui/gui.h"
#include "app/gui/gui_options.h"
#endif
#include "engine/scene/scene_loader.h"

namespace {

#if defined(CS_HAVE_GUI)
// Every bad input exits with status 2 (cli.h), the GUI's and the recorder's scenes too: a scene
// that does not load is reported here, before a window or a GL context is opened. argv as for
// runGui; 0 when the scene loads (or is not named, or a session is replayed).
int checkGuiScene(int argc, char** argv, bool record) {
    cs::GuiOptions options;
    std::string error;
    if (!cs::parseGuiOptions(argc, argv, record, options, &error) || options.help || !options.replay.empty() ||
        options.scene.empty())
        return 0;   // runGui / runRecord report their own option errors
    cs::Model model;
    cs::WorldSettings settings;
    cs::SceneInfo info;
    if (cs::loadScene(options.scene, model, settings, info, &error)) return 0;
    std::fprintf(stderr, "sandbox %s: %s\n", record ? "record" : "gui", error.c_str());
    return cs::kExitUsage;
}
#endif

#if !defined(CS_HAVE_GUI)
// Without the GUI, `sandbox [gui] [SCENE] [options]` runs the scene headless instead. A scene
// that does not load is reported first, as the GUI build's checkGuiScene does (the options that
// follow may be the GUI's, which the runner does not know).
int headlessInstead(int argc, char** argv, int first) {
    if (first < argc && argv[first][0] != '-') {
        cs::Model model;
        cs::WorldSettings settings;
        cs::SceneInfo info;
        std::string error;
        if (!cs::loadScene(argv[first], model, settings, info, &error)) {
            std::fprintf(stderr, "sandbox gui: %s\n", error.c_str());
            return cs::kExitUsage;
        }
    }
    std::fprintf(stderr, "sandbox: the GUI was not built (needs GLFW, ImGui and CS_WITH_GUI=ON); running the scene headless\n");
    if (first >= argc) {
        static std::string name = cs::kDefaultScene;
        char* args[] = {argv[0], name.data()};
        return cs::runCommand(2, args, 1);
    }
    return cs::runCommand(argc, argv, first);
}
#endif

}  // namespace

int runExperiment(int argc, char** argv);   // app/experiment.cpp ([PEG] section 6)
namespace cs { int runPlusExperiment(int argc, char** argv); }   // app/plus_experiments.cpp ([PLUS] section 4)
namespace cs { int runFemExperiment(int argc, char** argv); }    // app/fem_experiment.cpp ([NSN] figure 13)
namespace cs { int runCcpExperiment(int argc, char** argv); }    // app/ccp_experiment.cpp ([CCP])
namespace cs { int runRelaxationExperiment(int argc, char** argv); }   // app/relaxation_experiment.cpp (issue 38)

int main(int argc, char** argv) {
    cs::applyThreadWaitPolicy(argv);   // before any parallel loop (thread_policy.h)
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "run") return cs::runCommand(argc, argv, 2);
    if (cmd == "bench-gpu") return cs::gpuBenchCommand(argc - 1, argv + 1);
    if (cmd == "experiment" && argc > 2 && std::strncmp(argv[2], "plus-", 5) == 0) return cs::runPlusExperiment(argc, argv);
    if (cmd == "experiment" && argc > 2 && std::strncmp(argv[2], "fem-", 4) == 0) return cs::runFemExperiment(argc, argv);
    if (cmd == "experiment" && argc > 2 && std::strncmp(argv[2], "ccp-", 4) == 0) return cs::runCcpExperiment(argc, argv);
    if (cmd == "experiment" && argc > 2 && std::strcmp(argv[2], "relaxation") == 0) return cs::runRelaxationExperiment(argc, argv);
    if (cmd == "experiment") return runExperiment(argc, argv);
    if (cmd == "list") {
        if (argc > 2) {
            std::fprintf(stderr, "sandbox list: unexpected argument \"%s\"\n", cs::escapeControl(argv[2]).c_str());
            return cs::kExitUsage;
        }
        return cs::listCommand();
    }
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        cs::printUsage(stdout);
        return 0;
    }
#if defined(CS_HAVE_GUI)
    if (cmd == "gui") {
        if (int status = checkGuiScene(argc - 1, argv + 1, false)) return status;
        return cs::runGui(argc - 1, argv + 1);
    }
    if (cmd == "record") {
        if (int status = checkGuiScene(argc - 1, argv + 1, true)) return status;
        return cs::runRecord(argc - 1, argv + 1);
    }
    if (cmd.empty() || cmd[0] != '-') {   // `sandbox [SCENE] ...`
        if (int status = checkGuiScene(argc, argv, false)) return status;
        return cs::runGui(argc, argv);
    }
    std::fprintf(stderr, "sandbox: unknown option %s (see sandbox --help)\n", cs::escapeControl(cmd).c_str());
    return cs::kExitUsage;
#else
    if (cmd == "record") {
        std::fprintf(stderr, "sandbox record: the GUI and renderer were not built; cannot record\n");
        return cs::kExitUsage;
    }
    if (cmd == "gui") return headlessInstead(argc, argv, 2);
    if (cmd.empty() || cmd[0] != '-') return headlessInstead(argc, argv, 1);
    std::fprintf(stderr, "sandbox: unknown option %s (see sandbox --help)\n", cs::escapeControl(cmd).c_str());
    return cs::kExitUsage;
#endif
}
