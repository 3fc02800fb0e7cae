// doctest entry point for the engine tests (one executable, one file per area).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
