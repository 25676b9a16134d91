// Splitting a live range that reordering cannot fit: phase 2's answer to an unsat core when
// the schedule repairs are used up (allocate.hpp). A pii graph that keeps a value on chip
// across another value's whole life cannot be allocated when the buffer cannot hold both; the
// program needs that value to leave the buffer and come back.
//
// From an unsat core's edge (v, u), v defined before u and read after it, the late readers of v
// (those after u) get a fresh copy of v's value, recomputed or spilled and reloaded
// (value_copy.hpp). Among the core's candidates the cheapest wins, then the one whose next late
// use is farthest from u (Belady). Readers that reach v through slice^H take the slice over the copy;
// concat^H readers are left alone (their operands must stay adjacent). The hints ask the
// scheduler to finish v's early readers and the store before u, and to reload after it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/alloc/schedule.hpp"
#include "act/alloc/spill.hpp"
#include "act/alloc/value_copy.hpp"
#include "act/alloc/values.hpp"

namespace act::alloc {

struct LiveRangeSplit {
  select::PiiGraph graph;
  ScheduleGenerator::Constraints hints;  // x before y, in `graph`'s numbering
  std::string description;               // e.g. "reload %3 (load_cm) for 2 readers after %9"
};

namespace split_detail {

using select::PiiNode;
using select::PiiNodeKind;

// How reader operand `o` reaches v: through nothing (o == v) or a chain of slice^H nodes.
// Nothing when a concat^H (or anything else) lies on the way.
inline std::optional<std::vector<NodeIndex>> slice_path(const GraphValues& values, NodeIndex o, NodeIndex v) {
  std::vector<NodeIndex> path;  // slice^H nodes from the reader's operand down to v
  while (o != v) {
    const PiiNode& x = values.node(o);
    if (x.kind != PiiNodeKind::SliceH || x.operands.size() != 1) return std::nullopt;
    path.push_back(o);
    o = x.operands[0];
  }
  return path;
}

struct Candidate {
  NodeIndex value = 0, after = 0;      // v, and the node u its live range must not span
  std::vector<NodeIndex> late, early;  // Pii readers of v after / before u
  CopyPlan plan;                       // how the late readers get v again
  std::int64_t distance = 0;           // first late use - u's position
};

}  // namespace split_detail

// A split answering `core` (edges of the schedule that failed), or nothing when no edge of it
// can be split: v is a Pii node in an on-chip buffer, not an output, with a late reader that
// takes it directly or through slice^H, and a reload or a spill pair exists.
inline std::optional<LiveRangeSplit> split_live_range(const GraphValues& values, const Schedule& schedule,
                                                      const InterferenceGraph& core, SpillTable& spills) {
  using namespace split_detail;
  const std::size_t n = values.size();
  std::vector<std::int64_t> position(n, -1);
  for (std::size_t t = 0; t < schedule.order.size(); ++t) position[schedule.order[t]] = static_cast<std::int64_t>(t);
  std::vector<std::vector<NodeIndex>> readers(n);  // Pii readers of each storage node (through aliases)
  for (NodeIndex q = 0; q < n; ++q)
    if (values.node(q).kind == PiiNodeKind::Pii)
      for (NodeIndex o : values.node(q).operands)
        for (NodeIndex a : values.aliases[o])
          if (std::find(readers[a].begin(), readers[a].end(), q) == readers[a].end()) readers[a].push_back(q);

  std::optional<Candidate> best;
  for (const auto& [p, q] : core)
    for (const auto& [v, u] : {std::pair{p, q}, std::pair{q, p}}) {
      const PiiNode& x = values.node(v);
      if (x.kind != PiiNodeKind::Pii || values.root_storage[v] || x.buffer == values.hbm) continue;
      if (position[v] < 0 || position[u] < 0 || position[v] >= position[u]) continue;
      Candidate c;
      c.value = v;
      c.after = u;
      bool reachable = true;
      for (NodeIndex r : readers[v]) {
        (position[r] > position[u] ? c.late : c.early).push_back(r);
        if (position[r] > position[u])
          for (NodeIndex o : values.node(r).operands)
            if (std::find(values.aliases[o].begin(), values.aliases[o].end(), v) != values.aliases[o].end() &&
                !slice_path(values, o, v))
              reachable = false;
      }
      if (c.late.empty() || !reachable) continue;
      const std::optional<CopyPlan> plan = copy_plan(values, v, spills);
      if (!plan) continue;
      c.plan = *plan;
      std::int64_t first_late = position[c.late[0]];
      for (NodeIndex r : c.late) first_late = std::min(first_late, position[r]);
      c.distance = first_late - position[u];
      if (!best || c.plan.cost < best->plan.cost || (c.plan.cost == best->plan.cost && c.distance > best->distance)) best = c;
    }
  if (!best) return std::nullopt;

  // The new graph: the copy (and the store), the late readers rewired.
  const Candidate& c = *best;
  const PiiNode& x = values.node(c.value);
  std::vector<PiiNode> nodes = values.graph->nodes();
  std::optional<NodeIndex> store;
  if (c.plan.spill) store = append_store(nodes, values, c.value, spills);
  const NodeIndex copy = append_copy(nodes, values, c.value, c.plan, store, spills);
  const std::string how = c.plan.spill ? std::string("spill")
                          : c.plan.cone.size() == 1 ? std::string("reload")
                                                    : fmt::format("recompute ({} instructions)", c.plan.cone.size());
  std::map<NodeIndex, NodeIndex> rebuilt;  // slice^H over v -> the same slice over the copy
  const std::function<NodeIndex(NodeIndex)> over_copy = [&](NodeIndex o) -> NodeIndex {
    if (o == c.value) return copy;
    if (auto it = rebuilt.find(o); it != rebuilt.end()) return it->second;
    PiiNode slice = nodes[o];
    slice.operands[0] = over_copy(slice.operands[0]);
    nodes.push_back(std::move(slice));
    return rebuilt[o] = nodes.size() - 1;
  };
  for (NodeIndex r : c.late)
    for (std::size_t k = 0; k < values.node(r).operands.size(); ++k) {
      const NodeIndex o = values.node(r).operands[k];
      if (std::find(values.aliases[o].begin(), values.aliases[o].end(), c.value) == values.aliases[o].end()) continue;
      const NodeIndex replacement = over_copy(o);  // may grow `nodes`
      nodes[r].operands[k] = replacement;
    }

  std::vector<std::size_t> renumbered;
  LiveRangeSplit out{select::PiiGraph(std::move(nodes), values.graph->roots(), &renumbered), {}, {}};
  const auto hint = [&](NodeIndex a, NodeIndex b) {
    if (renumbered[a] != select::PiiGraph::kDropped && renumbered[b] != select::PiiGraph::kDropped)
      out.hints.emplace_back(renumbered[a], renumbered[b]);
  };
  for (NodeIndex r : c.early) hint(r, c.after);
  if (store) hint(*store, c.after);
  hint(c.after, copy);
  const std::string name = x.index >= 0 && static_cast<std::size_t>(x.index) < values.isa.instructions.size()
                               ? std::string(values.isa.instructions[static_cast<std::size_t>(x.index)].name)
                               : std::string("?");
  out.description = fmt::format("{} %{} ({}) for {} reader(s) after %{}", how, c.value, name, c.late.size(), c.after);
  return out;
}

}  // namespace act::alloc
