// The loaders' regression corpus (issue 22, item 10): every scene in tests/fuzz_corpus/ once
// crashed the runner, hung it or printed a message of several lines (see its README). Each now
// runs as `sandbox run FILE --steps 3` to exit status 0, 1, 2 or 3 within the time bound, and a
// status 2 prints exactly one line on stderr. scripts/fuzz_loaders.py made most of them and runs
// the longer search; CS_SANITIZE=ON builds a binary to replay them under ASan and UBSan.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

constexpr int kSeconds = 60;   // per input; each takes well under a second when it is rejected

struct Outcome {
    int status = -1;
    std::string err;
};

Outcome runScene(const std::string& file) {
    // stderr into the pipe, stdout dropped; KILL after the bound (status 137).
    const std::string cmd = "cd '" + std::filesystem::path(file).parent_path().string() +
                            "' && OMP_NUM_THREADS=1 timeout -s KILL " + std::to_string(kSeconds) + " '" +
                            CS_SANDBOX_EXE + "' run '" + std::filesystem::path(file).filename().string() +
                            "' --steps 3 --no-progress 2>&1 >/dev/null";
    Outcome o;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.err.append(buf, n);
    const int st = pclose(p);
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return o;
}

}  // namespace

TEST_CASE("loader fuzz corpus: every input ends cleanly, in time, with one line when refused") {
    const std::filesystem::path dir = std::filesystem::path(CS_SOURCE_DIR) / "tests" / "fuzz_corpus";
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 20);
    for (const std::string& file : files) {
        CAPTURE(file);
        const Outcome o = runScene(file);
        CAPTURE(o.status);
        CAPTURE(o.err);
        CHECK((o.status == 0 || o.status == 1 || o.status == 2 || o.status == 3));   // 137: killed, -1: signal
        if (o.status == 2) {
            CHECK(!o.err.empty());
            CHECK(o.err.back() == '\n');
            CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
        }
    }
}
