// Which outputs of a kernel can be selected for independently: two outputs belong to one group
// when their computations share an instruction other than a parameter or a constant (both are
// read-only HBM leaves any number of graphs may read). K5 (the paper's Appendix G) is two
// groups: the AMX GEMM and the AVX-512 requantisation read disjoint inputs.
//
// Phase 1 saturates one e-graph per group (select/group_explorer.hpp). In one shared e-graph the
// group that grows fastest sets the backoff schedule and the node limit for all of them, so a
// small group can starve behind a large one; separately, each saturates on its own terms.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

#include "act/hlo/module.hpp"

namespace act::select {

// The output indices (tuple elements in order; one output when the ROOT is not a tuple),
// partitioned into groups of outputs whose computations overlap; groups ordered by their first
// output, outputs ascending within a group. A module without a usable ENTRY is one group (module
// 1 reports what is wrong with it).
inline std::vector<std::vector<std::size_t>> independent_output_groups(const hlo::Module& kernel) {
  if (kernel.entry < 0 || kernel.entry >= static_cast<int>(kernel.computations.size())) return {{0}};
  const hlo::Computation& entry = kernel.entry_computation();
  const std::size_t n = entry.instructions.size();
  if (entry.root < 0 || static_cast<std::size_t>(entry.root) >= n) return {{0}};
  const hlo::Instruction& root = entry.root_instruction();
  std::vector<int> outputs;
  if (root.opcode == hlo::Opcode::Tuple) outputs = root.operands;
  else outputs.push_back(entry.root);
  if (outputs.size() <= 1) return {{0}};

  // Union-find over instructions: an instruction joins its non-leaf operands.
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto is_leaf = [&](std::size_t i) {
    const hlo::Opcode op = entry.instructions[i].opcode;
    return op == hlo::Opcode::Parameter || op == hlo::Opcode::Constant;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == entry.root && root.opcode == hlo::Opcode::Tuple) continue;
    if (is_leaf(i)) continue;
    for (int o : entry.instructions[i].operands)
      if (o >= 0 && static_cast<std::size_t>(o) < n && !is_leaf(static_cast<std::size_t>(o)))
        parent[find(static_cast<std::size_t>(o))] = find(i);
  }
  // A leaf output (a parameter or constant returned as is) is a group of its own unless the
  // same leaf is returned twice.
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::size_t> group_root;  // union-find root of each group
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k] < 0 || static_cast<std::size_t>(outputs[k]) >= n) return {{0}};
    const std::size_t r = find(static_cast<std::size_t>(outputs[k]));
    const auto it = std::find(group_root.begin(), group_root.end(), r);
    if (it == group_root.end()) {
      group_root.push_back(r);
      groups.push_back({k});
    } else {
      groups[static_cast<std::size_t>(it - group_root.begin())].push_back(k);
    }
  }
  return groups;
}

// The value a reshape of a reshape gives back unchanged: x for reshape(reshape(x)) of x's own
// shape (row-major reshapes compose, so the round trip is x bit for bit), else -1. Module 1
// builds such a reshape as x itself: built, the inner reshape is a second layout of everything
// below it for the axioms to push reshapes through (AMX soak kernel 127 of seed 4242: [32,16]
// -> [16,32] -> [32,16] beside two lane-blend transposes ran into the node limit).
inline int reshape_round_trip_source(const hlo::Computation& entry, std::size_t i) {
  const hlo::Instruction& outer = entry.instructions[i];
  if (outer.opcode != hlo::Opcode::Reshape || outer.operands.size() != 1 || outer.shape.is_tuple) return -1;
  const int o = outer.operands[0];
  if (o < 0 || static_cast<std::size_t>(o) >= i) return -1;
  const hlo::Instruction& inner = entry.instructions[static_cast<std::size_t>(o)];
  if (inner.opcode != hlo::Opcode::Reshape || inner.operands.size() != 1) return -1;
  const int x = inner.operands[0];
  if (x < 0 || x >= o) return -1;
  const Shape& source = entry.instructions[static_cast<std::size_t>(x)].shape;
  return !source.is_tuple && source.dtype == outer.shape.dtype && source.dims == outer.shape.dims ? x : -1;
}

// The instructions instruction i reads: its operands, or for a reshape round trip its source.
inline std::vector<int> operands_read(const hlo::Computation& entry, std::size_t i) {
  if (const int x = reshape_round_trip_source(entry, i); x >= 0) return {x};
  return entry.instructions[i].operands;
}

// The instructions the given outputs depend on (operands transitively, the outputs included),
// as flags by instruction index (through operands_read).
inline std::vector<bool> instructions_needed_by(const hlo::Computation& entry, const std::vector<int>& outputs) {
  std::vector<bool> needed(entry.instructions.size(), false);
  std::vector<int> stack(outputs.begin(), outputs.end());
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (i < 0 || static_cast<std::size_t>(i) >= needed.size() || needed[static_cast<std::size_t>(i)]) continue;
    needed[static_cast<std::size_t>(i)] = true;
    for (int o : operands_read(entry, static_cast<std::size_t>(i))) stack.push_back(o);
  }
  return needed;
}

}  // namespace act::select
