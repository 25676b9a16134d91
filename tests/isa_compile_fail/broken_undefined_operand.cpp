// Must NOT compile: mov's semantics use %tmp before defining it.
#define TINY_MOV_RESULT "s32[`n`, 8] copy(%tmp)"
#include "tiny_isa.hpp"
