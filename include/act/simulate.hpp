// act without the compiler: the HLO parser and reference interpreter, the ISA description DSL
// and its validation, the assembly format and the simulator with verify(). For users who write
// or check programs by hand, or test an ISA description, without Z3 or phase 1 in their build:
//   #include <act/simulate.hpp>
// <act/act.hpp> is this plus the compiler (act::Backend<Isa>).
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
