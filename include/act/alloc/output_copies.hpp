// Every output gets its own bytes. Two outputs of one kernel may be the same value (two roots in
// one e-class); extraction then hands phase 2 a pii graph whose roots repeat a node, and one HBM
// node cannot sit at two output addresses. Each repeat gets a copy of the root's HBM part: the
// root and, transitively, its non-leaf operands in HBM (the stores, concat^H / slice^H /
// overlay^H that assemble the output). The on-chip values those copies read stay shared, so the
// copy costs one more store per stored tile and nothing else.
// A root that reaches a kernel input through HBM identity instructions alone still aliases that
// input; values.hpp rejects it with its own message.
#pragma once

#include <cstddef>
#include <vector>

#include "act/select/pii_graph.hpp"

namespace act::alloc {

// `graph` with a copy of the HBM part of every root that repeats an earlier root; `graph`
// itself when no root repeats.
inline select::PiiGraph with_distinct_outputs(const select::PiiGraph& graph) {
  const std::vector<std::size_t>& roots = graph.roots();
  bool repeats = false;
  for (std::size_t r = 1; r < roots.size() && !repeats; ++r)
    for (std::size_t q = 0; q < r && !repeats; ++q) repeats = roots[q] == roots[r];
  if (!repeats) return graph;

  std::vector<select::PiiNode> nodes = graph.nodes();
  const int hbm = graph.node(roots.front()).buffer;
  // Copies `i` and its non-leaf HBM operands, returning the copy's index (memo: one copy per
  // node per repeated root, so a diamond inside the HBM part stays a diamond).
  std::vector<std::size_t> copy_of;
  auto copy = [&](auto&& self, std::size_t i) -> std::size_t {
    const select::PiiNode& original = graph.node(i);
    if (original.is_leaf() || original.buffer != hbm) return i;
    if (copy_of[i] != select::PiiGraph::kDropped) return copy_of[i];
    select::PiiNode x = original;
    for (std::size_t& o : x.operands) o = self(self, o);
    nodes.push_back(std::move(x));
    return copy_of[i] = nodes.size() - 1;
  };
  std::vector<std::size_t> new_roots = roots;
  for (std::size_t r = 1; r < roots.size(); ++r) {
    bool repeated = false;
    for (std::size_t q = 0; q < r && !repeated; ++q) repeated = roots[q] == roots[r];
    if (!repeated) continue;
    copy_of.assign(graph.nodes().size(), select::PiiGraph::kDropped);
    new_roots[r] = copy(copy, roots[r]);
  }
  return select::PiiGraph(std::move(nodes), new_roots);
}

}  // namespace act::alloc
