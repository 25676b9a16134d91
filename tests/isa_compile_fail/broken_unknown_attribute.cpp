// Must NOT compile: unknown attribute 'm' in load_rm's input length expression.
#define TINY_LOAD_LENGTH "m * 32"
#include "tiny_isa.hpp"
