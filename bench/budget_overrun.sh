#!/usr/bin/env bash
# Usage: bench/budget_overrun.sh ACT [BUDGET_S] [ISA...] — does `act compile --timeout BUDGET_S`
# return within its budget? Compiles every module of the shared corpus (../shared/corpus) for
# each ISA (default: amx qkv; budget default 1 s) and prints one JSON line per compile (wall
# milliseconds, exit code) and a summary line: the slowest compile and how many exceeded
# budget + max(10 %, 50 ms), issue 14's tolerance. Wall time of the whole process (parse,
# search, diagnosis, exit), so run it on a quiet machine; an ASan build of ACT works too.
set -u
act="${1:?usage: budget_overrun.sh ACT [BUDGET_S] [ISA...]}"
budget="${2:-1}"
shift $(( $# >= 2 ? 2 : 1 ))
isas=("$@")
[ ${#isas[@]} -eq 0 ] && isas=(amx qkv)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
corpus="${ACT_SHARED_DIR:-$here/../shared}/corpus"
budget_ms=$(awk -v b="$budget" 'BEGIN { printf "%d", b * 1000 }')
tolerance_ms=$(awk -v b="$budget_ms" 'BEGIN { t = b / 10; printf "%d", (t > 50 ? t : 50) }')
limit_ms=$(( budget_ms + tolerance_ms ))
count=0 over=0 max=0 max_file=""
while IFS= read -r f; do
  for isa in "${isas[@]}"; do
    s=$(date +%s%N)
    "$act" compile --isa "$isa" "$f" --timeout "$budget" -o /dev/null > /dev/null 2>&1
    rc=$?
    e=$(date +%s%N)
    ms=$(( (e - s) / 1000000 ))
    count=$(( count + 1 ))
    (( ms > limit_ms )) && over=$(( over + 1 ))
    (( ms > max )) && max=$ms && max_file="$isa $(basename "$f")"
    printf '{"isa": "%s", "file": "%s", "wall_ms": %d, "exit": %d}\n' "$isa" "$(basename "$f")" "$ms" "$rc"
  done
done < <(find "$corpus" -name '*.hlo*' | sort)
printf '{"summary": true, "budget_ms": %d, "limit_ms": %d, "compiles": %d, "over_limit": %d, "max_wall_ms": %d, "slowest": "%s"}\n' \
  "$budget_ms" "$limit_ms" "$count" "$over" "$max" "$max_file"
