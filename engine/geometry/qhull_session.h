// One qhull run with its own reentrant state, freed on scope exit (internal to engine/geometry).
//
// qhull reports errors by longjmp back into qh_new_qhull, which then returns a non-zero exit
// code; its messages go to a memory stream so the caller can quote the first line. After the
// run qhull sets qh.NOerrexit, so the callers only read qhull's data structures afterwards and
// call no qhull routine that could raise an error (that would reach exit()).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

namespace cs {

class QhullSession {
public:
    QhullSession() {
        errStream_ = open_memstream(&errText_, &errSize_);
        qh_zero(&qh, errStream_);
    }
    ~QhullSession() {
        qh_freeqhull(&qh, !qh_ALL);
        int curlong = 0, totlong = 0;
        qh_memfreeshort(&qh, &curlong, &totlong);
        if (errStream_) fclose(errStream_);
        free(errText_);
    }
    QhullSession(const QhullSession&) = delete;
    QhullSession& operator=(const QhullSession&) = delete;

    // points: numPoints rows of dim coordinates (qhull keeps a pointer; keep them alive).
    int run(int dim, int numPoints, coordT* points, const char* command) {
        return qh_new_qhull(&qh, dim, numPoints, points, False, const_cast<char*>(command),
                            nullptr, errStream_);
    }

    // First non-empty line qhull wrote to its error stream.
    std::string firstErrorLine() {
        if (!errStream_) return "qhull error";
        fflush(errStream_);
        std::string text = errText_ ? std::string(errText_, errSize_) : std::string();
        size_t start = text.find_first_not_of(" \n\r\t");
        if (start == std::string::npos) return "qhull error (no message)";
        size_t end = text.find('\n', start);
        return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }

    qhT qh;

private:
    FILE* errStream_ = nullptr;
    char* errText_ = nullptr;
    size_t errSize_ = 0;
};

}  // namespace cs
