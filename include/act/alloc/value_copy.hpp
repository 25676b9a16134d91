// Having a value again after it left its buffer: the two ways phase 2 knows, shared by the
// spill planner (spill_plan.hpp) and the core-driven live-range split (live_range_split.hpp).
//   recompute  copy the instructions computing the value from the graph's leaves (at most
//              kMaxRecompute; one instruction when the value is a load of an input or constant:
//              rematerialisation, the paper's unshared variant);
//   spill      store it to HBM scratch and load it back with the ISA's own pair (spill.hpp).
// A spill costs two instructions and HBM traffic; a recompute of one or two instructions is
// preferred to it.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "act/alloc/spill.hpp"
#include "act/alloc/values.hpp"

namespace act::alloc {

// Cones larger than this are spilled (when the ISA can) rather than recomputed.
inline constexpr std::size_t kMaxRecompute = 8;

// The instruction nodes v is computed from, down to the graph's leaves (operands first), when
// there are at most `limit` of them.
inline std::optional<std::vector<std::size_t>> cone_of(const GraphValues& values, std::size_t v, std::size_t limit) {
  std::vector<std::size_t> cone, stack{v};
  std::vector<bool> seen(values.size(), false);
  while (!stack.empty()) {
    const std::size_t x = stack.back();
    stack.pop_back();
    if (seen[x] || values.node(x).is_leaf()) continue;
    seen[x] = true;
    cone.push_back(x);
    if (cone.size() > limit) return std::nullopt;
    for (std::size_t o : values.node(x).operands) stack.push_back(o);
  }
  std::sort(cone.begin(), cone.end());  // operands precede users in a pii graph
  return cone;
}

// How a value can be had again; nothing when it cannot leave its buffer.
struct CopyPlan {
  bool spill = false;             // else recompute `cone`
  std::vector<std::size_t> cone;  // recompute: nodes to copy, operands first
  std::size_t cost = 0;           // instructions added per copy (a spill's store counts once)
};

inline std::optional<CopyPlan> copy_plan(const GraphValues& values, std::size_t v, SpillTable& spills) {
  const select::PiiNode& x = values.node(v);
  if (x.kind != select::PiiNodeKind::Pii || values.root_storage[v] || x.buffer == values.hbm) return std::nullopt;
  const auto cone = cone_of(values, v, kMaxRecompute);
  const bool spillable = spills.find(x.buffer, x.type).has_value();
  if (!cone && !spillable) return std::nullopt;
  CopyPlan p;
  p.spill = spillable && (!cone || cone->size() > 2);
  if (p.spill) {
    p.cost = 2;
  } else {
    p.cone = *cone;
    p.cost = cone->size();
  }
  return p;
}

// Appends to `nodes` (a copy of the graph's node list, growing) the nodes of one transfer of
// `pair`'s kind: the instruction reading `data` (don't-care inputs as Undefined leaves).
inline std::size_t append_transfer(std::vector<select::PiiNode>& nodes, const GraphValues& values, const TransferInstruction& t,
                                   std::size_t data, int buffer) {
  select::PiiNode node;
  node.kind = select::PiiNodeKind::Pii;
  node.index = static_cast<std::int64_t>(t.instruction);
  node.alpha = t.alpha;
  node.buffer = buffer;
  node.type = t.output_type;
  const isa::Instruction& inst = values.isa.instructions[t.instruction];
  for (std::size_t k = 0; k < t.input_types.size(); ++k) {
    if (k == t.data_input) {
      node.operands.push_back(data);
      continue;
    }
    select::PiiNode dont_care;  // an input the transfer's result does not depend on (spill.hpp)
    dont_care.kind = select::PiiNodeKind::Undefined;
    dont_care.buffer = values.isa.buffer_index(inst.inputs[k].buffer);
    dont_care.type = t.input_types[k];
    nodes.push_back(std::move(dont_care));
    node.operands.push_back(nodes.size() - 1);
  }
  nodes.push_back(std::move(node));
  return nodes.size() - 1;
}

// The store of v's value to HBM scratch (spill plans only); `data` is the node holding it now
// (v itself, or a copy of it).
inline std::size_t append_store(std::vector<select::PiiNode>& nodes, const GraphValues& values, std::size_t v, SpillTable& spills,
                                std::optional<std::size_t> data = std::nullopt) {
  const select::PiiNode& x = values.node(v);
  return append_transfer(nodes, values, spills.find(x.buffer, x.type)->store, data.value_or(v), values.hbm);
}

// A new copy of v's value: the recomputed cone's last node, or the load of `store`. Returns the
// copy and the nodes it appended, operands first.
inline std::size_t append_copy(std::vector<select::PiiNode>& nodes, const GraphValues& values, std::size_t v, const CopyPlan& plan,
                               std::optional<std::size_t> store, SpillTable& spills, std::vector<std::size_t>* added = nullptr) {
  const std::size_t first = nodes.size();
  std::size_t copy = 0;
  if (plan.spill) {
    const select::PiiNode& x = values.node(v);
    copy = append_transfer(nodes, values, spills.find(x.buffer, x.type)->load, *store, x.buffer);
  } else {
    std::map<std::size_t, std::size_t> cloned;  // cone node -> its copy
    for (std::size_t k : plan.cone) {
      select::PiiNode clone = values.node(k);
      for (std::size_t& o : clone.operands)
        if (auto it = cloned.find(o); it != cloned.end()) o = it->second;
      nodes.push_back(std::move(clone));
      cloned[k] = nodes.size() - 1;
    }
    copy = cloned.at(v);
  }
  if (added)
    for (std::size_t i = first; i < nodes.size(); ++i)
      if (!nodes[i].is_leaf()) added->push_back(i);
  return copy;
}

}  // namespace act::alloc
