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
#include "gpu/gpu_backend.h"

#if defined(CS_HAVE_GUI)
#include "app/gui/gui.h"
#endif

namespace {

#if !defined(CS_HAVE_GUI)
// Without the GUI, `sandbox [gui] [SCENE] [options]` runs the scene headless instead.
int headlessInstead(int argc, char** argv, int first) {
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

int main(int argc, char** argv) {
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "run") return cs::runCommand(argc, argv, 2);
    if (cmd == "bench-gpu") return cs::gpuBenchCommand(argc - 1, argv + 1);
    if (cmd == "experiment" && argc > 2 && std::strncmp(argv[2], "plus-", 5) == 0) return cs::runPlusExperiment(argc, argv);
    if (cmd == "experiment") return runExperiment(argc, argv);
    if (cmd == "list") {
        if (argc > 2) {
            std::fprintf(stderr, "sandbox list: unexpected argument \"%s\"\n", argv[2]);
            return cs::kExitUsage;
        }
        return cs::listCommand();
    }
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        cs::printUsage(stdout);
        return 0;
    }
#if defined(CS_HAVE_GUI)
    if (cmd == "gui") return cs::runGui(argc - 1, argv + 1);
    if (cmd == "record") return cs::runRecord(argc - 1, argv + 1);
    if (cmd.empty() || cmd[0] != '-') return cs::runGui(argc, argv);   // `sandbox [SCENE] ...`
    std::fprintf(stderr, "sandbox: unknown option %s (see sandbox --help)\n", cmd.c_str());
    return cs::kExitUsage;
#else
    if (cmd == "record") {
        std::fprintf(stderr, "sandbox record: the GUI and renderer were not built; cannot record\n");
        return cs::kExitUsage;
    }
    if (cmd == "gui") return headlessInstead(argc, argv, 2);
    if (cmd.empty() || cmd[0] != '-') return headlessInstead(argc, argv, 1);
    std::fprintf(stderr, "sandbox: unknown option %s (see sandbox --help)\n", cmd.c_str());
    return cs::kExitUsage;
#endif
}
