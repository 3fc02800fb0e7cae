// Included first in every test file (CMakeLists.txt, -include): doctest 2.4.9 (Debian's) prints a
// C string given to CAPTURE, INFO or MESSAGE as its address ("name := 0x55f3916da644"), as it
// does any other pointer. These specializations print the text, so a failure names its scene.
#pragma once

#include <doctest/doctest.h>

namespace doctest {
template <>
struct StringMaker<const char*> {
    static String convert(const char* s) { return String(s ? s : "(null)"); }
};
template <>
struct StringMaker<char*> {
    static String convert(const char* s) { return String(s ? s : "(null)"); }
};
}  // namespace doctest
