// act — everything a user needs: #include <act/act.hpp>
#pragma once

#include "act/core/dtype.hpp"
#include "act/core/error.hpp"
#include "act/core/float16.hpp"
#include "act/core/layout.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"

#include "act/hlo/evaluate.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/printer.hpp"

#include "act/sym/expr.hpp"

#include "act/isa/c_mapping.hpp"
#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"

#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sim/machine.hpp"
#include "act/sim/program_formats.hpp"
#include "act/sim/verify.hpp"

// The compiler: act::Backend<Isa> (phase 1, phase 2, cost model, candidate enumeration).
#include "act/codegen/backend.hpp"
#include "act/codegen/cost_model.hpp"
#include "act/codegen/options.hpp"
#include "act/codegen/statistics.hpp"

// Programs as C: emit (act::native::emit_c), build with the system compiler and run on this CPU
// against the simulator (act::native::run_natively). POSIX (dlopen, posix_spawn).
#include "act/native/build.hpp"
#include "act/native/emit_c.hpp"
#include "act/native/run.hpp"
