// OBJ vertices through tinyobjloader, after a check of the text (obj_reader.h).
#include "engine/geometry/obj_reader.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <tiny_obj_loader.h>

namespace cs {

namespace {

// A decimal number as tinyobjloader reads one: [+-] digits [. digits] [(e|E) [+-] digits], with
// at least one digit before the exponent.
bool isDecimal(const std::string& s) {
    size_t i = 0, digits = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    for (; i < s.size() && std::isdigit((unsigned char)s[i]); ++i) ++digits;
    if (i < s.size() && s[i] == '.')
        for (++i; i < s.size() && std::isdigit((unsigned char)s[i]); ++i) ++digits;
    if (digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        size_t exponent = 0;
        for (; i < s.size() && std::isdigit((unsigned char)s[i]); ++i) ++exponent;
        if (exponent == 0) return false;
    }
    return i == s.size();
}

// The printable start of a token, for messages.
std::string shown(const std::string& token) {
    std::string s;
    for (char c : token.substr(0, 24)) s += (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
    return "\"" + s + (token.size() > 24 ? "...\"" : "\"");
}

// Checks every `v` line; returns the number of vertices, or -1 with *error.
int checkVertexLines(const std::string& text, const std::string& name, const ObjLimits& limits, std::string* error) {
    int vertices = 0, line = 0;
    std::istringstream in(text);
    std::string row;
    while (std::getline(in, row)) {
        ++line;
        std::istringstream tokens(row);
        std::string tag, token;
        if (!(tokens >> tag) || tag != "v") continue;
        int count = 0;
        while (tokens >> token) {
            double x = isDecimal(token) ? std::strtod(token.c_str(), nullptr) : NAN;
            if (!std::isfinite(x)) {
                *error = name + ":" + std::to_string(line) + ": vertex coordinate " + shown(token) +
                         " is not a finite number";
                return -1;
            }
            ++count;
        }
        if (count < 3 || count > 6) {
            *error = name + ":" + std::to_string(line) + ": a vertex is x y z [w | r g b] (got " +
                     std::to_string(count) + " numbers)";
            return -1;
        }
        if (++vertices > limits.maxVertices) {
            *error = name + ": more than " + std::to_string(limits.maxVertices) + " vertices (the limit)";
            return -1;
        }
    }
    return vertices;
}

// Reads and checks the file, then parses it with tinyobjloader (triangulating faces when asked).
bool parseObj(const std::string& path, const ObjLimits& limits, bool triangulate, tinyobj::attrib_t& attrib,
              std::vector<tinyobj::shape_t>& shapes, std::string* error) {
    std::string why;
    auto fail = [&](const std::string& message) {
        if (error) *error = message;
        return false;
    };
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return fail(path + ": not a regular file");
    const auto bytes = std::filesystem::file_size(path, ec);
    if (ec) return fail(path + ": cannot read the file");
    if ((long long)bytes > limits.maxBytes)
        return fail(path + ": " + std::to_string(bytes) + " bytes; OBJ files are limited to " +
                    std::to_string(limits.maxBytes) + " bytes");
    std::ifstream file(path, std::ios::binary);
    std::stringstream buffer;
    buffer << file.rdbuf();
    if (!file) return fail(path + ": cannot read the file");
    const std::string text = buffer.str();
    const int vertices = checkVertexLines(text, path, limits, &why);
    if (vertices < 0) return fail(why);

    std::vector<tinyobj::material_t> materials;
    std::string warn, err;
    std::istringstream in(text);
    // No material reader: mtllib lines are skipped, no other file is opened.
    const bool ok = tinyobj::LoadObj(&attrib, &shapes, &materials, &warn, &err, &in, nullptr, triangulate);
    if (!ok || attrib.vertices.size() != size_t(vertices) * 3) {
        size_t nl = err.find('\n');
        return fail(path + ": tinyobjloader cannot read it" + (err.empty() ? "" : ": " + err.substr(0, nl)));
    }
    return true;
}

}  // namespace

bool readObjVertices(const std::string& path, std::vector<Vec3>& out, std::string* error, const ObjLimits& limits) {
    tinyobj::attrib_t attrib;
    std::vector<tinyobj::shape_t> shapes;
    if (!parseObj(path, limits, false, attrib, shapes, error)) return false;
    const std::vector<tinyobj::real_t>& v = attrib.vertices;
    for (size_t i = 0; i + 2 < v.size(); i += 3) out.push_back(Vec3{Real(v[i]), Real(v[i + 1]), Real(v[i + 2])});
    return true;
}

bool readObjSurface(const std::string& path, std::vector<Vec3>& vertices, std::vector<std::array<int, 3>>& triangles,
                    std::string* error, const ObjLimits& limits) {
    tinyobj::attrib_t attrib;
    std::vector<tinyobj::shape_t> shapes;
    if (!parseObj(path, limits, true, attrib, shapes, error)) return false;
    const std::vector<tinyobj::real_t>& v = attrib.vertices;
    const int count = int(v.size() / 3);
    for (int i = 0; i < count; ++i) vertices.push_back(Vec3{Real(v[3 * i]), Real(v[3 * i + 1]), Real(v[3 * i + 2])});
    for (const tinyobj::shape_t& shape : shapes) {
        const auto& idx = shape.mesh.indices;
        for (size_t f = 0; f + 2 < idx.size(); f += 3) {
            std::array<int, 3> t;
            for (int c = 0; c < 3; ++c) {
                t[c] = idx[f + c].vertex_index;
                if (t[c] < 0 || t[c] >= count) {
                    if (error) *error = path + ": a face names vertex " + std::to_string(t[c] + 1) + ", not in the file";
                    return false;
                }
            }
            triangles.push_back(t);
        }
    }
    return true;
}

}  // namespace cs
