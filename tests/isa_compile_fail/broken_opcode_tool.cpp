// Must NOT compile: a misspelt opcode in an ISA header without ACT_VALIDATE_ISA, given to an
// `act` tool of one's own: act::cli::main validates every ISA it is given.
#define ACT_SEPARATE_IMPLEMENTATION  // only the declarations: this file never links
#define TINY_NO_VALIDATE_MACRO
#define TINY_MOV_RESULT "s32[`n`, 8] coppy(%In1)"
#include "tiny_isa.hpp"

#include "act/cli/main.hpp"

int main(int argc, char** argv) { return act::cli::main<Tiny>(argc, argv); }
