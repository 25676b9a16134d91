// act — everything a user needs: #include <act/act.hpp>
// (<act/simulate.hpp> alone gives the parser, interpreter, ISA DSL and simulator without the
// compiler, Z3 or phase 1.)
//
// Header-only by default. A program with many files that compile kernels may compile act once
// instead: build every file with ACT_SEPARATE_IMPLEMENTATION and one file with
// ACT_IMPLEMENTATION that includes <act/implementation.hpp> (core/linkage.hpp; CMake:
// act_add_implementation).
#pragma once

#include "act/core/linkage.hpp"
#include "act/simulate.hpp"

// The compiler: act::Backend<Isa> (phase 1, phase 2, cost model, candidate enumeration).
#include "act/codegen/compile.hpp"
#include "act/codegen/cost_model.hpp"
#include "act/codegen/options.hpp"
#include "act/codegen/statistics.hpp"

// Programs as C: emit (act::native::emit_c), build with the system compiler and run on this CPU
// against the simulator (act::native::run_natively). POSIX (dlopen, posix_spawn).
#include "act/native/build.hpp"
#include "act/native/emit_c.hpp"
#include "act/native/run.hpp"
