#!/usr/bin/env bash
# Mutation check: seeds one bug per module into a scratch copy of the tree, rebuilds the suites
# that should notice, runs them, and reports each mutant as killed (a suite failed) or survived.
# Every mutant must be killed; a survivor means a module's tests cannot see that bug.
#
#   bash scripts/mutation-check.sh              # every mutant
#   bash scripts/mutation-check.sh bf16 parser  # some, by name
#
# Environment: ACT_MUTATION_DIR (scratch, default /tmp/act-mutation), ACT_SHARED_DIR (default
# ../shared beside the checkout), ACT_MUTATION_JOBS (build jobs, default 2).
# Exit 0 when every mutant ran and was killed, 1 when one survived, 2 when one could not be
# applied or built (the mutation itself must then be fixed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${ACT_MUTATION_DIR:-/tmp/act-mutation}"
shared="${ACT_SHARED_DIR:-$here/../shared}"
jobs="${ACT_MUTATION_JOBS:-2}"
tree="$work/tree"
build="$work/build"

# mutant NAME FILE OLD NEW TARGETS REGEX: replace OLD (must occur exactly once) by NEW in FILE,
# build TARGETS, run the ctest suites matching REGEX.
names=(); files=(); olds=(); news=(); targets_of=(); regexes=()
mutant() {
  names+=("$1"); files+=("$2"); olds+=("$3"); news+=("$4"); targets_of+=("$5"); regexes+=("$6")
}
mutant axiom-rewrite include/act/select/axioms_elementwise.hpp \
  'return b.add(bc, {b.add(f_op, {v.cls("?a"), v.cls("?b")})});' \
  'return b.add(bc, {b.add(f_op, {v.cls("?b"), v.cls("?a")})});' select_axioms '^select_axioms$'
mutant axiom-precondition include/act/select/axioms_elementwise.hpp \
  'return v.op("l") == v.op("r") && v.type("?a").same_type(v.type("?b"));' \
  'return v.type("?a").same_type(v.type("?b"));' select_axioms '^select_axioms$'
mutant union-find include/act/egraph/union_find.hpp \
  'void link(Id root, Id child) { parent_[child] = root; }' \
  'void link(Id root, Id child) { parent_[child] = child; (void)root; }' egraph '^egraph$'
mutant csp-disjointness include/act/alloc/csp.hpp \
  'if (sa[d] + la[d] <= sb[d] || sb[d] + lb[d] <= sa[d]) return true;' \
  'if (sa[d] + la[d] - 1 <= sb[d] || sb[d] + lb[d] - 1 <= sa[d]) return true;' 'alloc codegen' '^(alloc|codegen)$'
mutant simulator-numerics include/act/hlo/evaluate_numerics.hpp \
  'case Opcode::Exponential: return std::exp(x);' \
  'case Opcode::Exponential: return std::exp2(x);' 'sim hlo_evaluate' '^(sim|hlo_evaluate)$'
mutant bf16-rounding include/act/core/float16.hpp \
  'return static_cast<std::uint16_t>((bits + 0x7fffu + lsb) >> 16);' \
  'return static_cast<std::uint16_t>((bits + 0u * lsb) >> 16);' 'core sim hlo_evaluate' '^(core|sim|hlo_evaluate)$'
mutant isa-rule-alpha include/act/select/isa_rules.hpp \
  '      values.push_back(*alpha[a]);' \
  '      values.push_back(*alpha[a] > 1 ? *alpha[a] - 1 : *alpha[a]);' 'select_qkv codegen' '^(select_qkv|codegen)$'
mutant emission include/act/alloc/emit.hpp \
  'ci.attributes.insert(ci.attributes.end(), assignment.beta.at(i).begin(), assignment.beta.at(i).end());' \
  'ci.attributes.insert(ci.attributes.end(), assignment.beta.at(i).rbegin(), assignment.beta.at(i).rend());' \
  'alloc codegen' '^(alloc|codegen)$'
mutant hbm-image include/act/sim/kernel_image.hpp \
  'HbmRegion r{std::move(name), std::move(shape), address, 0};' \
  'HbmRegion r{std::move(name), std::move(shape), address + 64, 0};' sim '^sim$'
mutant parser include/act/hlo/parser.hpp \
  '        inst.dimensions.push_back(d - 1);' \
  '        inst.dimensions.push_back(rank - d);' hlo_parser '^hlo_parser$'
mutant verifier-zeroed-buffers include/act/sim/machine.hpp \
  'const std::uint64_t word = random.next();' \
  'const std::uint64_t word = 0 * random.next();' sim '^sim$'
mutant verifier-outputs-only include/act/sim/verify.hpp \
  'if (!changed.empty()) {' \
  'if (false && !changed.empty()) {' sim '^sim$'

selected=("$@")
wanted() {
  [ ${#selected[@]} -eq 0 ] && return 0
  local n
  for n in "${selected[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

echo "mutation check: scratch tree $tree"
rm -rf "$tree"
mkdir -p "$tree" "$build"
# The working tree as it is (uncommitted changes included), without build directories.
(cd "$here" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree")
cmake -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACT_SHARED_DIR="$shared" >"$work/configure.log" 2>&1

# Baseline: the suites must pass unmutated, or a "kill" would mean nothing.
all_targets=(); all_regexes=()
for k in "${!names[@]}"; do
  wanted "${names[$k]}" || continue
  # shellcheck disable=SC2206
  all_targets+=(${targets_of[$k]})
  all_regexes+=("${regexes[$k]}")
done
baseline_regex="$(IFS='|'; echo "${all_regexes[*]}")"
echo "== baseline: building ${all_targets[*]}"
nice cmake --build "$build" -j"$jobs" --target "${all_targets[@]}" >"$work/baseline.build.log" 2>&1 ||
  { echo "the unmutated tree does not build: $work/baseline.build.log"; exit 2; }
ctest --test-dir "$build" -R "$baseline_regex" --timeout 1800 >"$work/baseline.test.log" 2>&1 ||
  { echo "the unmutated suites fail: $work/baseline.test.log"; exit 2; }

results=()
status=0
for k in "${!names[@]}"; do
  name="${names[$k]}"; file="${files[$k]}"; old="${olds[$k]}"; new="${news[$k]}"
  targets="${targets_of[$k]}"; regex="${regexes[$k]}"
  wanted "$name" || continue
  path="$tree/$file"
  cp "$path" "$path.orig"
  if ! OLD="$old" NEW="$new" perl -0pi -e '$n = s/\Q$ENV{OLD}\E/$ENV{NEW}/g; die "matched $n times\n" unless $n == 1' "$path" 2>"$work/$name.apply.log"; then
    results+=("$name|$file|not applied ($(cat "$work/$name.apply.log"))")
    status=2
    mv "$path.orig" "$path"
    continue
  fi
  echo "== $name: $file; building $targets"
  # shellcheck disable=SC2086
  if ! nice cmake --build "$build" -j"$jobs" --target $targets >"$work/$name.build.log" 2>&1; then
    results+=("$name|$file|does not build (see $work/$name.build.log)")
    status=2
  elif ctest --test-dir "$build" -R "$regex" --timeout 1800 >"$work/$name.test.log" 2>&1; then
    results+=("$name|$file|SURVIVED ($regex passed)")
    [ $status -eq 0 ] && status=1
  else
    failed="$(grep -E '^\s+[0-9]+ - ' "$work/$name.test.log" | awk '{print $3}' | paste -sd, -)"
    results+=("$name|$file|killed by $failed")
  fi
  mv "$path.orig" "$path"
done

echo
echo "| mutant | file | result |"
echo "|---|---|---|"
for r in "${results[@]}"; do
  IFS='|' read -r name file result <<<"$r"
  echo "| $name | $file | $result |"
done
exit $status
