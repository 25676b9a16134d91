#!/usr/bin/env bash
# Set up, build everything, and run every test suite with CTest; then build the suites that
# read untrusted text (HLO, assembly, ISA semantics) and the CLI with AddressSanitizer and
# UndefinedBehaviorSanitizer and run them again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc)"
"$here/scripts/setup.sh" "$here/build"
ctest --test-dir "$here/build" --output-on-failure -j"$jobs"

if [ "${ACT_SKIP_SANITIZERS:-0}" != "1" ]; then
  sanitized=(hlo_parser sim sym_isa egraph act_cli)
  cmake -S "$here" -B "$here/build-sanitize" -DACT_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$here/build-sanitize" -j"$jobs" --target "${sanitized[@]}"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$here/build-sanitize" --output-on-failure -j"$jobs" -R "^(hlo_parser|sim|sym_isa|egraph|cli\\..*)$"
fi
