// Line numbers for JSON paths. nlohmann::json keeps no positions, so a scene error found after
// parsing (an unknown field, a negative mass) would name only its path; this scanner walks the
// already-validated text once and returns the line where the member or element at that path
// begins, so every scene error reads "file:line: path: message". Keys are compared decoded, as
// the parser stores them ("a\nb" in the file is the path "/a<newline>b"). The scanner recurses
// once per level of nesting: findTooDeep has bounded that before the text was parsed.
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
    std::string readString() {   // at the opening quote; returns the contents with escapes decoded
        std::string s;
        ++i_;
        while (i_ < t_.size() && t_[i_] != '"') {
            if (t_[i_] == '\\' && i_ + 1 < t_.size()) {
                const char c = t_[i_ + 1];
                i_ += 2;
                switch (c) {
                    case 'n': s += '\n'; break;
                    case 't': s += '\t'; break;
                    case 'r': s += '\r'; break;
                    case 'b': s += '\b'; break;
                    case 'f': s += '\f'; break;
                    case 'u': appendUtf8(s, readCodePoint()); break;
                    default: s += c;   // " \ /
                }
                continue;
            }
            s += t_[i_++];
        }
        ++i_;
        return s;
    }
    // After "\u": four hex digits, and a low surrogate's "\uDC00" when they are a high one.
    unsigned readHex4() {
        unsigned v = 0;
        for (int k = 0; k < 4 && i_ < t_.size(); ++k, ++i_) {
            const char c = t_[i_];
            v = v * 16 + unsigned(c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
        }
        return v;
    }
    unsigned readCodePoint() {
        unsigned v = readHex4();
        if (v >= 0xD800 && v < 0xDC00 && i_ + 1 < t_.size() && t_[i_] == '\\' && t_[i_ + 1] == 'u') {
            i_ += 2;
            v = 0x10000 + ((v - 0xD800) << 10) + (readHex4() - 0xDC00);
        }
        return v;
    }
    static void appendUtf8(std::string& s, unsigned v) {
        if (v < 0x80) {
            s += char(v);
        } else if (v < 0x800) {
            s += char(0xC0 | (v >> 6));
            s += char(0x80 | (v & 0x3F));
        } else if (v < 0x10000) {
            s += char(0xE0 | (v >> 12));
            s += char(0x80 | ((v >> 6) & 0x3F));
            s += char(0x80 | (v & 0x3F));
        } else {
            s += char(0xF0 | (v >> 18));
            s += char(0x80 | ((v >> 12) & 0x3F));
            s += char(0x80 | ((v >> 6) & 0x3F));
            s += char(0x80 | (v & 0x3F));
        }
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

TextPosition findTooDeep(const std::string& text) {
    int depth = 0, line = 1;
    size_t lineStart = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') { ++line; lineStart = i + 1; }
        if (inString) {
            if (c == '\\') ++i;
            else if (c == '"') inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > Limits::jsonDepth) return {line, int(i - lineStart) + 1};
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return {};
}

}  // namespace cs::scene
