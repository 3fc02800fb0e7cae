// Line numbers for JSON paths. nlohmann::json keeps no positions, so a scene error found after
// parsing (an unknown field, a negative mass) would name only its path; this scanner walks the
// already-validated text once and returns the line where the member or element at that path
// begins, so every scene error reads "file:line: path: message".
#include <string>

#include "engine/scene/scene_parse.h"

namespace cs::scene {
namespace {

class PathScanner {
public:
    PathScanner(const std::string& text, const std::string& target) : t_(text), target_(target) {}

    int run() {
        value("");
        return found_;
    }

private:
    void skipSpace() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\r' || t_[i_] == '\n')) {
            if (t_[i_] == '\n') ++line_;
            ++i_;
        }
    }
    void mark(const std::string& path, int line) {
        if (found_ < 0 && path == target_) found_ = line;
    }
    std::string readString() {   // at the opening quote; returns the raw contents
        std::string s;
        ++i_;
        while (i_ < t_.size() && t_[i_] != '"') {
            if (t_[i_] == '\\' && i_ + 1 < t_.size()) {
                s += t_[i_ + 1];
                i_ += 2;
                continue;
            }
            s += t_[i_++];
        }
        ++i_;
        return s;
    }
    void value(const std::string& path) {
        skipSpace();
        mark(path, line_);
        if (i_ >= t_.size() || found_ >= 0) return;
        const char c = t_[i_];
        if (c == '{') {
            object(path);
        } else if (c == '[') {
            array(path);
        } else if (c == '"') {
            readString();
        } else {
            while (i_ < t_.size() && t_[i_] != ',' && t_[i_] != '}' && t_[i_] != ']' && t_[i_] != ' ' &&
                   t_[i_] != '\n' && t_[i_] != '\t' && t_[i_] != '\r')
                ++i_;
        }
    }
    void object(const std::string& path) {
        ++i_;
        for (;;) {
            skipSpace();
            if (i_ >= t_.size() || found_ >= 0) return;
            if (t_[i_] == '}') { ++i_; return; }
            if (t_[i_] == ',') { ++i_; continue; }
            const int keyLine = line_;
            const std::string member = path + "/" + readString();
            mark(member, keyLine);
            skipSpace();
            if (i_ < t_.size() && t_[i_] == ':') ++i_;
            value(member);
        }
    }
    void array(const std::string& path) {
        ++i_;
        for (int index = 0;; ) {
            skipSpace();
            if (i_ >= t_.size() || found_ >= 0) return;
            if (t_[i_] == ']') { ++i_; return; }
            if (t_[i_] == ',') { ++i_; continue; }
            value(path + "/" + std::to_string(index++));
        }
    }

    const std::string& t_;
    const std::string& target_;
    size_t i_ = 0;
    int line_ = 1;
    int found_ = -1;
};

}  // namespace

int jsonLineOfPath(const std::string& text, const std::string& path) {
    return PathScanner(text, path).run();
}

}  // namespace cs::scene
