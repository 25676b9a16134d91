#!/usr/bin/env bash
# Usage: bench/compare_cli.sh OLD_ACT NEW_ACT — two builds of the act command (Release), e.g. the
# base commit's and yours. Compiles the paper's and the shipped kernels with each, interleaved.
# Interleaved before/after: median of 5 wall times and the instruction count per kernel.
old="${1:?usage: compare_cli.sh OLD_ACT NEW_ACT}"
new="${2:?usage: compare_cli.sh OLD_ACT NEW_ACT}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
S="${ACT_SHARED_DIR:-$here/../shared}/kernels"
E="$here/examples/kernels"
kernels=(
 "qkv $S/qkv/attention.hlo"
 "qkv $E/qkv/attention_two_heads.hlo"
 "amx $S/paper/k1_cnn_inf_amx.hlo"
 "amx $S/paper/k2_rnn_inf_amx.hlo"
 "amx $S/paper/k3_mem_format_avx.hlo"
 "amx $S/paper/k4_sgemm_avx.hlo"
 "amx $S/paper/k5_cnn_inf_mix.hlo"
 "amx $E/amx/int8_gemm_m32_n64.hlo"
 "amx $E/amx/int8_gemm_m64_n64.hlo"
 "amx $E/amx/avx_outer_a32_b16x4.hlo"
)
for k in "${kernels[@]}"; do
  set -- $k; isa=$1; f=$2
  for bin in old new; do eval "t_$bin=()"; done
  for rep in 1 2 3 4 5; do
    for bin in old new; do
      b=${!bin}
      s=$(date +%s%N); n=$($b compile --isa $isa $f --timeout 20 2>/dev/null | grep -vc '^[#.]'); e=$(date +%s%N)
      eval "t_$bin+=($(( (e-s)/1000000 )))"; eval "n_$bin=$n"
    done
  done
  mo=$(printf "%s\n" "${t_old[@]}" | sort -n | sed -n 3p); mn=$(printf "%s\n" "${t_new[@]}" | sort -n | sed -n 3p)
  echo "$(basename $f) $isa: before ${mo} ms ($n_old instr), after ${mn} ms ($n_new instr)"
done
