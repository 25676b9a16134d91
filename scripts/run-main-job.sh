#!/usr/bin/env bash
# The main job: set up, build, and check the paper's QKV attention kernel on the QKV
# accelerator — the simulator runs the program and compares with the reference interpreter.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${ACT_SHARED_DIR:-$here/../shared}"
"$here/scripts/setup.sh" "$here/build"
"$here/build/examples/cli/act" verify --isa qkv \
  "$shared/kernels/qkv/attention.hlo" "$shared/kernels/qkv/attention.expected.asm" --trials 5
