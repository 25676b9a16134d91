// Must NOT compile: mov's second constraint does not parse ("=<" for "<=").
#define TINY_MOV_CONSTRAINT "n =< 16"
#include "tiny_isa.hpp"
