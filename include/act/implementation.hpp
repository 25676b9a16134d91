// act's implementation, for the one translation unit of a program that compiles it
// (core/linkage.hpp):
//
//   // act_implementation.cpp -- the program's other files define ACT_SEPARATE_IMPLEMENTATION
//   #define ACT_IMPLEMENTATION
//   #include <act/implementation.hpp>
//
// It defines every ACT_API entry point: the compiler (codegen::compile_kernel), the testing
// helpers and the `act` tool (cli::run). CMake's act_add_implementation(<name>) builds exactly
// this file as a static library.
#pragma once

#ifndef ACT_IMPLEMENTATION
#error "define ACT_IMPLEMENTATION before including <act/implementation.hpp>, in exactly one translation unit"
#endif

#include "act/act.hpp"
#include "act/cli/main.hpp"
#include "act/testing/files.hpp"
#include "act/testing/kernel_checks.hpp"
