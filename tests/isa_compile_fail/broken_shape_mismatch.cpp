// Must NOT compile: load_rm reshapes n*32 bytes into n*8*8 bytes.
#define TINY_LOAD_RESHAPE "u8[`n`, 8, 8]"
#include "tiny_isa.hpp"
