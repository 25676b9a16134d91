// Must NOT compile: mov's parameter is written [8, n] but its input slice is n rows of s32[8].
// The parameter statement is the one to blame, not the copy that uses it.
#define TINY_MOV_PARAMETER "s32[8, `n`]"
#include "tiny_isa.hpp"
