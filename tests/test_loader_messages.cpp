// Loader messages are one line whatever the file holds (issue 22, item 8): a key or a string
// with a newline or another control character is echoed escaped, and an escaped key keeps the
// line number of the member that holds it.
#include <doctest/doctest.h>

#include <string>

#include "engine/scene/scene_loader.h"

using namespace cs;

namespace {

std::string loadError(const std::string& text) {
    Model model;
    WorldSettings settings;
    SceneInfo info;
    std::string error;
    CHECK_FALSE(loadSceneFromText(text, "messages.json", ".", model, settings, info, &error));
    return error;
}

const std::string kBox = R"({"type": "box", "half_extents": [0.5, 0.5, 0.5]})";

}  // namespace

TEST_CASE("loader messages: control characters in keys and strings are escaped onto one line") {
    struct Case {
        const char* what;
        std::string text;      // JSON: "\\n" below is the two characters \ n, a newline once parsed
        std::string mention;   // as the message must show it
    };
    const std::string body = R"({"name": "a", "shape": )" + kBox + "}";
    const Case cases[] = {
        {"generator", R"({"bodies": [{"generator": "pyr\namid"}]})", R"(unknown generator "pyr\namid")"},
        {"shape type", R"({"bodies": [{"shape": {"type": "bo\nx"}}]})", R"(unknown shape type "bo\nx")"},
        {"joint type", R"({"bodies": [)" + body + R"(], "joints": [{"type": "ba\r\nll", "body_b": "a", "anchor": [0, 0, 0]}]})",
         R"(unknown joint type "ba\r\nll")"},
        {"material", R"({"bodies": [{"shape": )" + kBox + R"(, "material": "st\none"}]})", R"(unknown material "st\none")"},
        {"frame", R"({"bodies": [{"shape": )" + kBox + R"(, "frame": "ra\tmp"}]})", R"(unknown body "ra\tmp")"},
        {"joint body", R"({"bodies": [)" + body + R"(], "joints": [{"type": "ball", "body_b": "x\ny", "anchor": [0, 0, 0]}]})",
         R"(unknown body "x\ny")"},
        {"unknown field", R"({"bodies": [{"shape": )" + kBox + R"(, "col\nour": 1}]})", R"(unknown field "/bodies/0/col\nour")"},
        {"unknown setting", R"({"settings": {"d\u001bt": 1}, "bodies": [{"shape": )" + kBox + "}]}",
         R"(unknown field "/settings/d\x1bt")"},
        {"contact model", R"({"settings": {"contact": "peg\n"}, "bodies": [{"shape": )" + kBox + "}]}",
         R"(unknown contact model "peg\n")"},
        {"string value", R"({"bodies": [{"shape": {"type": "box", "half_extents": "a\nb"}}]})", R"(got "a\nb")"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.what);
        const std::string error = loadError(c.text);
        CAPTURE(error);
        CHECK(error.find('\n') == std::string::npos);
        CHECK(error.find('\r') == std::string::npos);
        CHECK(error.find('\x1b') == std::string::npos);
        CHECK(error.find(c.mention) != std::string::npos);
    }
}

TEST_CASE("loader messages: an escaped key keeps its line number") {
    // Before: the line scanner read "\n" in a key as the letter n, found no such path, and the
    // message lost its line.
    const std::string text = "{\n  \"bodies\": [\n    {\"shape\": " + kBox + ",\n     \"col\\nour\": 1}\n  ]\n}\n";
    const std::string error = loadError(text);
    CAPTURE(error);
    CHECK(error.rfind("messages.json:4: unknown field", 0) == 0);
    const std::string unicode = "{\n  \"bodies\": [\n    {\"shape\": " + kBox + ",\n\n     \"c\\u00e9\\ud83d\\ude00\": 1}\n  ]\n}\n";
    CHECK(loadError(unicode).rfind("messages.json:5: unknown field", 0) == 0);
}

TEST_CASE("loader messages: a value is described by its size, never dumped whole") {
    const std::string error = loadError(R"({"bodies": [{"shape": {"type": "box", "half_extents": [[1, 2], [3, 4], [5, 6]]}}]})");
    CAPTURE(error);
    CHECK(error.find("/bodies/0/shape/half_extents/0: expected a number, got an array of 2 elements") != std::string::npos);
    const std::string object = loadError(R"({"bodies": [{"shape": {"type": {"a": {"b": 1}}}}]})");
    CAPTURE(object);
    CHECK(object.find("expected a string, got an object of 1 members") != std::string::npos);
}
