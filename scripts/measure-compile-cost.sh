#!/usr/bin/env bash
# Compile cost of act's headers, interleaved across source trees (issue 15's before/after):
#   scripts/measure-compile-cost.sh REPS TREE...     e.g. 3 /tmp/act-54ccb52 .
# For each repetition, for each TREE (an act checkout), with g++ directly (no ccache):
#   syntax       -fsyntax-only of `#include <act/act.hpp>`
#   o2           -O2 -c of a user's test file: one backend (tpu_mini), four kernels, header-only
#   o2_separate  the same file with -DACT_SEPARATE_IMPLEMENTATION (trees that support it)
#   o2_impl      -O2 -c of the one translation unit that then compiles act (ACT_IMPLEMENTATION)
# The test file and tpu_mini.hpp come from this script's tree, so every tree compiles the same
# user code. Prints wall and CPU (user + sys) seconds per measurement: on a shared machine the
# CPU time is the steadier number.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
reps="$1"
shift
cxx="${CXX:-g++}"
bench="$here/bench/compile_cost"
z3_include=()
[ -d /usr/include/z3 ] && z3_include=(-I/usr/include/z3)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

measure() {  # tree label args...
  local tree="$1" label="$2"
  shift 2
  /usr/bin/time -f "%e %U %S" -o "$out/time" "$cxx" -std=c++20 -I"$tree/include" "${z3_include[@]}" \
    -I"$here/tests/package/tpu_mini" -DKERNELS="\"$here/tests/package/tpu_mini/kernels\"" "$@"
  read -r wall user sys <"$out/time"
  printf '%s %-12s wall %6.1f s  cpu %6.1f s\n' "$tree" "$label" "$wall" "$(echo "$user + $sys" | bc)"
}

for ((rep = 1; rep <= reps; ++rep)); do
  for tree in "$@"; do
    tree="$(cd "$tree" && pwd)"
    measure "$tree" syntax -fsyntax-only "$bench/include_act.cpp"
    measure "$tree" o2 -O2 -c "$bench/four_kernels.cpp" -o "$out/four_kernels.o"
    if [ -f "$tree/include/act/implementation.hpp" ]; then
      measure "$tree" o2_separate -O2 -c -DACT_SEPARATE_IMPLEMENTATION "$bench/four_kernels.cpp" -o "$out/separate.o"
      measure "$tree" o2_impl -O2 -c "$bench/implementation.cpp" -o "$out/implementation.o"
    fi
  done
done
