// Catch2's main, in a file of its own: compiled once, not with every change to the tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
