// Re-execution with a passive OpenMP wait policy (thread_policy.h).
#include "app/thread_policy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace cs {

void applyThreadWaitPolicy(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
    if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
    execv("/proc/self/exe", argv);
    // Only reached when the exec failed: go on with libgomp's default, which was already read.
    unsetenv("OMP_WAIT_POLICY");
}

const char* threadWaitPolicy() {
    static std::string policy;
    if (!policy.empty()) return policy.c_str();
    const char* wait = std::getenv("OMP_WAIT_POLICY");
    const char* spin = std::getenv("GOMP_SPINCOUNT");
    if (wait && (std::strcmp(wait, "passive") == 0 || std::strcmp(wait, "PASSIVE") == 0)) policy = "passive";
    else if (spin) policy = std::string("spin ") + spin + " then sleep";
    else if (wait && (std::strcmp(wait, "active") == 0 || std::strcmp(wait, "ACTIVE") == 0)) policy = "active";
    else policy = "libgomp default";
    return policy.c_str();
}

}  // namespace cs
