// Must NOT compile: mov's semantics use the beta attribute addr_in in a shape.
#define TINY_MOV_RESULT "s32[`addr_in`, 8] copy(%In1)"
#include "tiny_isa.hpp"
