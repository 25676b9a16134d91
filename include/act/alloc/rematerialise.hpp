// Rematerialising generators consumed in place.
//
// An instruction that reads an input at the very slice it writes (tdpbusd accumulates into
// tmm[dst]) destroys that input. When phase 1 shares one value among several such readers
// (one tilezero feeding K1's four tdpbusd), no allocation exists: the first reader overwrites
// what the others still need. If the shared value comes from an instruction without inputs
// (tilezero, an immediate load), recomputing it per reader costs one instruction and keeps
// the graph allocatable, which is what an expert writes (oneDNN's K1 has four tilezero).
// Values computed from inputs are left shared: copying them is phase 1's business (mov rules).
#pragma once

#include <cstddef>
#include <vector>

#include "act/isa/description.hpp"
#include "act/select/pii_graph.hpp"

namespace act::alloc {

// `graph` with every in-place operand that is shared and produced by an input-less Pii node
// replaced by a private copy of that node (see the header comment). Unchanged when none is.
inline select::PiiGraph rematerialise_in_place_generators(const select::PiiGraph& graph, const isa::IsaView& isa) {
  using select::PiiNodeKind;
  std::vector<select::PiiNode> nodes = graph.nodes();
  std::vector<std::size_t> uses(nodes.size(), 0);
  for (const auto& x : nodes)
    for (std::size_t o : x.operands) ++uses[o];
  for (std::size_t r : graph.roots()) ++uses[r];
  bool changed = false;
  const std::size_t original = nodes.size();
  for (std::size_t i = 0; i < original; ++i) {
    if (nodes[i].kind != PiiNodeKind::Pii || nodes[i].index < 0 ||
        static_cast<std::size_t>(nodes[i].index) >= isa.instructions.size())
      continue;
    const isa::Instruction& instruction = isa.instructions[static_cast<std::size_t>(nodes[i].index)];
    for (std::size_t k = 0; k < nodes[i].operands.size(); ++k) {
      const std::size_t o = nodes[i].operands[k];
      if (uses[o] < 2 || nodes[o].kind != PiiNodeKind::Pii || !nodes[o].operands.empty()) continue;
      if (!isa::reads_in_place(instruction, k)) continue;
      select::PiiNode copy = nodes[o];
      nodes.push_back(std::move(copy));
      --uses[o];
      nodes[i].operands[k] = nodes.size() - 1;
      changed = true;
    }
  }
  if (!changed) return graph;
  return select::PiiGraph(std::move(nodes), graph.roots());
}

}  // namespace act::alloc
