// doctest entry point for the engine tests (one executable, one file per area).
// doctest.h is already included here (tests/doctest_strings.h, included first in every test
// file), so WITH_MAIN alone would no longer reach the implementation: define IMPLEMENT as well.
#define DOCTEST_CONFIG_IMPLEMENT
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
