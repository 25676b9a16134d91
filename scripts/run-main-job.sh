#!/usr/bin/env bash
# The main job: set up, build the `act` command (only that), compile the paper's QKV attention
# kernel for the QKV accelerator and verify the program in the simulator against the reference
# interpreter.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${ACT_SHARED_DIR:-$here/../shared}"
ACT_BUILD_TARGETS=act_cli "$here/scripts/setup.sh" "$here/build"
"$here/build/examples/cli/act" compile --isa qkv "$shared/kernels/qkv/attention.hlo" --verify --stats
