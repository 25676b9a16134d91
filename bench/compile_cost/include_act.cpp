// Compile cost of the public header alone (scripts/measure-compile-cost.sh: -fsyntax-only).
#include <act/act.hpp>
