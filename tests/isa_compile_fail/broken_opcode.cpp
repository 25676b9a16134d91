// Must NOT compile: a misspelt opcode in mov's semantics, caught by ACT_VALIDATE_ISA.
#define TINY_MOV_RESULT "s32[`n`, 8] coppy(%In1)"
#include "tiny_isa.hpp"
