// tests/doctest_strings.h: what a failing check logs for a C string is its text.
#include <doctest/doctest.h>

#include <string>

TEST_CASE("test harness: a C string in CAPTURE, INFO and MESSAGE is logged as its text") {
    const char* scene = "card_house";
    char buffer[] = "pyramid";
    char* mutableName = buffer;
    CHECK(std::string(doctest::toString(scene).c_str()) == "card_house");
    CHECK(std::string(doctest::toString(mutableName).c_str()) == "pyramid");
    const char* none = nullptr;
    CHECK(std::string(doctest::toString(none).c_str()) == "(null)");
}
