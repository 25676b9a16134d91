// Must NOT compile: store_rm writes to a buffer d9 that does not exist.
#define TINY_STORE_BUFFER "d9"
#include "tiny_isa.hpp"
