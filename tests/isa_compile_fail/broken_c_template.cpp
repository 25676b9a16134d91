// Must NOT compile: load_rm's C template names '$addr', which is no attribute of load_rm.
#define TINY_LOAD_C "memcpy(&d1[$addr], $&addr_in, $n * 32);"
#include "tiny_isa.hpp"
