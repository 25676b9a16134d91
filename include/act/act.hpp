// act — everything a user needs: #include <act/act.hpp>
// (<act/simulate.hpp> alone gives the parser, interpreter, ISA DSL and simulator without the
// compiler, Z3 or phase 1.)
#pragma once

#include "act/simulate.hpp"

// The compiler: act::Backend<Isa> (phase 1, phase 2, cost model, candidate enumeration).
#include "act/codegen/backend.hpp"
#include "act/codegen/cost_model.hpp"
#include "act/codegen/options.hpp"
#include "act/codegen/statistics.hpp"
