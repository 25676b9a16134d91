// Folding identity round trips out of a pii graph before allocation.
//
// Extraction may meet a request with slice^H(concat^H(a, b)) that selects exactly `a`: the two
// identity instructions cost nothing to run, but concat^H asks phase 2 to place a and b side by
// side, which in a register file (AVX-512's zmm) means two adjacent registers and, in a
// 500-node graph, a CSP the constructive path cannot place and Z3 cannot decide in seconds.
// Reading `a` itself is the same value with one constraint less. Roots are left as they are
// (a root is never a leaf, and the kernel's outputs sit where the image puts them).
#pragma once

#include <cstddef>
#include <vector>

#include "act/select/pii_graph.hpp"

namespace act::alloc {

namespace identity_folding_detail {

// The operand of concat^H `c` that slice^H `s` selects whole, or `s` itself.
inline std::size_t selected_operand(const std::vector<select::PiiNode>& nodes, std::size_t s) {
  const select::PiiNode& slice = nodes[s];
  if (slice.kind != select::PiiNodeKind::SliceH || slice.operands.size() != 1) return s;
  const select::PiiNode& concat = nodes[slice.operands[0]];
  if (concat.kind != select::PiiNodeKind::ConcatH || concat.dimension < 0) return s;
  const auto dim = static_cast<std::size_t>(concat.dimension);
  const auto& whole = concat.type.dims;
  if (slice.slice.size() != whole.size() || dim >= whole.size()) return s;
  for (std::size_t d = 0; d < whole.size(); ++d) {
    if (slice.slice[d].stride != 1) return s;
    if (d != dim && (slice.slice[d].start != 0 || slice.slice[d].limit != whole[d])) return s;
  }
  std::int64_t offset = 0;
  for (std::size_t o : concat.operands) {
    const auto& part = nodes[o].type.dims;
    if (part.size() != whole.size()) return s;
    if (slice.slice[dim].start == offset && slice.slice[dim].limit == offset + part[dim]) return o;
    offset += part[dim];
  }
  return s;
}

}  // namespace identity_folding_detail

// `graph` where every non-root read of a slice^H that selects one whole operand of a concat^H
// reads that operand instead (repeatedly, through nested concat^H). Unchanged when none does.
inline select::PiiGraph fold_slices_of_concats(const select::PiiGraph& graph) {
  std::vector<select::PiiNode> nodes = graph.nodes();
  bool changed = false;
  for (select::PiiNode& x : nodes)
    for (std::size_t& o : x.operands)
      for (std::size_t folded = identity_folding_detail::selected_operand(nodes, o); folded != o;
           folded = identity_folding_detail::selected_operand(nodes, o)) {
        o = folded;
        changed = true;
      }
  if (!changed) return graph;
  return select::PiiGraph(std::move(nodes), graph.roots());
}

}  // namespace act::alloc
