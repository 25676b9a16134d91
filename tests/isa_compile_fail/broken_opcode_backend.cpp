// Must NOT compile: a misspelt opcode in an ISA header without ACT_VALIDATE_ISA. Using the ISA
// with act::Backend validates it (before, every kernel failed at run time instead).
#define ACT_SEPARATE_IMPLEMENTATION  // only the declarations: this file never links
#define TINY_NO_VALIDATE_MACRO
#define TINY_MOV_RESULT "s32[`n`, 8] coppy(%In1)"
#include "tiny_isa.hpp"

#include "act/codegen/compile.hpp"

act::codegen::CompileOutcome compile_for_tiny(const act::hlo::Module& kernel) { return act::Backend<Tiny>().try_compile(kernel); }
