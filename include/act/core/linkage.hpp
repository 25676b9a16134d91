// How act's non-template entry points are linked: header-only by default, or compiled once.
//
// By default every function is `inline` and each translation unit that calls one compiles it:
// nothing to set up, but a test file that compiles kernels builds the whole compiler at -O2.
// A program may instead compile act once (the stb/doctest pattern):
//   - every translation unit is built with ACT_SEPARATE_IMPLEMENTATION defined: the entry
//     points marked ACT_API (codegen::compile_kernel, the testing helpers, cli::run, ...) are
//     declarations only, and the headers behind them (phase 1 and 2, the CLI) are not read;
//   - exactly one translation unit defines ACT_IMPLEMENTATION and includes
//     <act/implementation.hpp>, which defines them all.
// CMake does both: act_add_implementation(<name>) (cmake/actImplementation.cmake) builds that
// translation unit as a library to link with. Editing an ISA header then rebuilds only the
// files that include it, never the compiler.
#pragma once

#if defined(ACT_IMPLEMENTATION)
#define ACT_API
#define ACT_DEFINES_IMPLEMENTATION 1
#elif defined(ACT_SEPARATE_IMPLEMENTATION)
#define ACT_API
#define ACT_DEFINES_IMPLEMENTATION 0
#else
#define ACT_API inline
#define ACT_DEFINES_IMPLEMENTATION 1
#endif
