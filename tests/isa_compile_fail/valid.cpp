// A small valid ISA: must compile (proves the compile-fail harness builds what it claims).

#include "tiny_isa.hpp"
