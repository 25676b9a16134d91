// Every output gets its own bytes. Two outputs of one kernel may be the same value (two roots in
// one e-class); extraction then hands phase 2 a pii graph whose roots repeat a node, and one HBM
// node cannot sit at two output addresses. Each repeat gets a copy of the root's HBM part: the
// root and, transitively, its non-leaf operands in HBM (the stores, concat^H / slice^H /
// overlay^H that assemble the output). The on-chip values those copies read stay shared, so the
// copy costs one more store per stored tile and nothing else.
// An output may also be a piece of a larger value that a concat^H or overlay^H of the graph
// assembles in HBM (rows 0-7 of a product, stored a row at a time, are an output, and the whole
// product is loaded back): the assembly pins its other pieces beside the output's region, where
// other outputs sit. with_outputs_apart gives such an output a copy of its HBM part too; phase 2
// tries it only when the shared bytes cannot be allocated (allocate.hpp).
// A root that reaches a kernel input through HBM identity instructions alone still aliases that
// input; values.hpp rejects it with its own message.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "act/select/pii_graph.hpp"

namespace act::alloc {

namespace output_copies_detail {

// `graph` with the roots for which `needs_copy(r)` holds replaced by copies of their HBM part;
// `graph` itself when there are none.
template <class NeedsCopy>
select::PiiGraph with_root_copies(const select::PiiGraph& graph, NeedsCopy needs_copy) {
  const std::vector<std::size_t>& roots = graph.roots();
  bool any = false;
  for (std::size_t r = 0; r < roots.size() && !any; ++r) any = needs_copy(r);
  if (!any) return graph;

  std::vector<select::PiiNode> nodes = graph.nodes();
  const int hbm = graph.node(roots.front()).buffer;
  // Copies `i` and its non-leaf HBM operands, returning the copy's index (memo: one copy per
  // node per copied root, so a diamond inside the HBM part stays a diamond).
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
  for (std::size_t r = 0; r < roots.size(); ++r) {
    if (!needs_copy(r)) continue;
    copy_of.assign(graph.nodes().size(), select::PiiGraph::kDropped);
    new_roots[r] = copy(copy, roots[r]);
  }
  return select::PiiGraph(std::move(nodes), new_roots);
}

inline bool repeats_earlier_root(const select::PiiGraph& graph, std::size_t r) {
  for (std::size_t q = 0; q < r; ++q)
    if (graph.roots()[q] == graph.roots()[r]) return true;
  return false;
}

// For each node of `graph`: whether a concat^H or overlay^H places it inside a larger value.
inline std::vector<bool> placed_in_assembly(const select::PiiGraph& graph) {
  std::vector<bool> placed(graph.nodes().size(), false);
  for (const select::PiiNode& x : graph.nodes())
    if (x.kind == select::PiiNodeKind::ConcatH || x.kind == select::PiiNodeKind::OverlayH)
      for (std::size_t o : x.operands) placed[o] = true;
  return placed;
}

}  // namespace output_copies_detail

// `graph` with a copy of the HBM part of every root that repeats an earlier root; `graph`
// itself when no root repeats.
inline select::PiiGraph with_distinct_outputs(const select::PiiGraph& graph) {
  return output_copies_detail::with_root_copies(
      graph, [&](std::size_t r) { return output_copies_detail::repeats_earlier_root(graph, r); });
}

// Also copies the HBM part of every root that a concat^H or overlay^H of `graph` places inside a
// larger value (the first of repeated roots included: the original stays in the assembly).
inline select::PiiGraph with_outputs_apart(const select::PiiGraph& graph) {
  const std::vector<bool> placed = output_copies_detail::placed_in_assembly(graph);
  return output_copies_detail::with_root_copies(graph, [&](std::size_t r) {
    return placed[graph.roots()[r]] || output_copies_detail::repeats_earlier_root(graph, r);
  });
}

// Whether some output of `graph` is also placed inside a larger value (with_outputs_apart would
// copy it).
inline bool places_an_output(const select::PiiGraph& graph) {
  const std::vector<bool> placed = output_copies_detail::placed_in_assembly(graph);
  return std::any_of(graph.roots().begin(), graph.roots().end(), [&](std::size_t r) { return placed[r]; });
}

}  // namespace act::alloc
