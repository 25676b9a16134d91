// act compiled once (core/linkage.hpp), as act_add_implementation builds it: the one-time cost
// that four_kernels.cpp no longer pays under ACT_SEPARATE_IMPLEMENTATION.
#define ACT_IMPLEMENTATION
#include <act/implementation.hpp>
