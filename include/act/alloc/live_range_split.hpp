// Splitting a live range that reordering cannot fit: phase 2's answer to an unsat core when
// the schedule repairs are used up (allocate.hpp). A pii graph that keeps a value on chip
// across another value's whole life cannot be allocated when the buffer cannot hold both; the
// program needs that value to leave the buffer and come back.
//
// From an unsat core's edge (v, u), v defined before u and read after it, the late readers of v
// (those after u) get a fresh copy of v's value, recomputed or spilled and reloaded
// (value_copy.hpp). Among the core's candidates the cheapest wins, then the one whose next late
// use is farthest from u (Belady). Readers that reach v through slice^H take the slice over the copy.
// A reader that reaches v through an on-chip concat^H takes a new concat^H whose other operands
// are copies too, since a concat^H's operands must stay adjacent: the old place of v beside
// them is what the split gives up (QKV sound-soak kernels whose 64-row gemm operands are
// concatenates of two 32-row products had no split to answer their cores). The hints ask the
// scheduler to finish v's early readers and the stores before u, and to reload after it.
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

inline bool aliases_value(const GraphValues& values, NodeIndex o, NodeIndex v) {
  return std::find(values.aliases[o].begin(), values.aliases[o].end(), v) != values.aliases[o].end();
}

// At most this many other operands of concat^H nodes are copied with v: a value read through a
// 32-row concat^H would take 31 more copies, each a node in every CSP after it.
inline constexpr std::size_t kMaxConcatCopies = 2;

// What a split rebuilds besides v's copy, for readers that reach v through identity nodes.
struct Rebuild {
  std::vector<NodeIndex> copied;      // values copied with v (other operands of a concat^H on the way)
  std::vector<NodeIndex> identities;  // slice^H / concat^H nodes rebuilt over the copies
  std::size_t cost = 0;               // instructions the copies of `copied` add
};

// Whether `w`, an operand of a concat^H rebuilt for the split that does not hold v, can be had
// after u (at position `before`): kept as it is when everything it lies in is computed after
// u, else copied (copy_plan) when computed before u, or rebuilt when it is itself an on-chip
// slice^H or concat^H of such operands.
inline bool other_operand(const GraphValues& values, NodeIndex w, SpillTable& spills, const std::vector<std::int64_t>& position,
                          std::int64_t before, Rebuild& rebuild) {
  const auto after_u = [&](NodeIndex a) { return position[a] > before; };
  if (std::all_of(values.aliases[w].begin(), values.aliases[w].end(), after_u)) return true;
  if (std::find(rebuild.copied.begin(), rebuild.copied.end(), w) != rebuild.copied.end() ||
      std::find(rebuild.identities.begin(), rebuild.identities.end(), w) != rebuild.identities.end())
    return true;
  const PiiNode& x = values.node(w);
  if (x.kind == PiiNodeKind::Pii) {
    const std::optional<CopyPlan> plan = copy_plan(values, w, spills);
    if (!plan || position[w] < 0 || position[w] >= before) return false;
    rebuild.copied.push_back(w);
    rebuild.cost += plan->cost;
    return true;
  }
  if ((x.kind != PiiNodeKind::SliceH && x.kind != PiiNodeKind::ConcatH) || x.buffer == values.hbm) return false;
  rebuild.identities.push_back(w);
  for (NodeIndex o : x.operands)
    if (!other_operand(values, o, spills, position, before, rebuild)) return false;
  return true;
}

// Whether reader operand `o` can be rebuilt over a copy of v: it is v, a slice^H of such an
// operand, or an on-chip concat^H of such operands and of other_operand()s. Nothing else: an
// overlay^H, or a value that cannot leave its buffer.
inline bool rebuildable(const GraphValues& values, NodeIndex o, NodeIndex v, SpillTable& spills, const std::vector<std::int64_t>& position,
                        std::int64_t before, Rebuild& rebuild) {
  if (o == v) return true;
  const PiiNode& x = values.node(o);
  if (x.kind == PiiNodeKind::SliceH && x.operands.size() == 1) {
    rebuild.identities.push_back(o);
    return rebuildable(values, x.operands[0], v, spills, position, before, rebuild);
  }
  if (x.kind != PiiNodeKind::ConcatH || x.buffer == values.hbm) return false;
  rebuild.identities.push_back(o);
  for (NodeIndex w : x.operands) {
    const bool ok = aliases_value(values, w, v) ? rebuildable(values, w, v, spills, position, before, rebuild)
                                                : other_operand(values, w, spills, position, before, rebuild);
    if (!ok) return false;
  }
  return true;
}

struct Candidate {
  NodeIndex value = 0, after = 0;      // v, and the node u its live range must not span
  std::vector<NodeIndex> late, early;  // Pii readers of v after / before u
  CopyPlan plan;                       // how the late readers get v again
  Rebuild rebuild;                     // what else the late readers' operands need
  std::size_t cost = 0;                // instructions the copies add
  std::int64_t distance = 0;           // first late use - u's position
};

}  // namespace split_detail

// A split answering `core` (edges of the schedule that failed), or nothing when no edge of it
// can be split: v is a Pii node in an on-chip buffer, not an output, with a late reader that
// takes it directly, through slice^H or (with `through_concat`) through concat^H, and a reload
// or a spill pair exists.
// `through_concat` false: readers that reach v through a concat^H block the split, and
// `*blocked_by_concat` (when given) is set when a split was refused for that alone.
inline std::optional<LiveRangeSplit> split_live_range(const GraphValues& values, const Schedule& schedule,
                                                      const InterferenceGraph& core, SpillTable& spills,
                                                      bool through_concat = true, bool* blocked_by_concat = nullptr) {
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
            if (aliases_value(values, o, v) && !rebuildable(values, o, v, spills, position, position[u], c.rebuild))
              reachable = false;
      }
      if (c.late.empty() || !reachable || c.rebuild.copied.size() > kMaxConcatCopies) continue;
      const bool via_concat = std::any_of(c.rebuild.identities.begin(), c.rebuild.identities.end(),
                                          [&](NodeIndex i) { return values.node(i).kind == PiiNodeKind::ConcatH; });
      if (!through_concat && via_concat) {
        if (blocked_by_concat && copy_plan(values, v, spills)) *blocked_by_concat = true;
        continue;
      }
      const std::optional<CopyPlan> plan = copy_plan(values, v, spills);
      if (!plan) continue;
      c.plan = *plan;
      c.cost = plan->cost + c.rebuild.cost;
      std::int64_t first_late = position[c.late[0]];
      for (NodeIndex r : c.late) first_late = std::min(first_late, position[r]);
      c.distance = first_late - position[u];
      if (!best || c.cost < best->cost || (c.cost == best->cost && c.distance > best->distance)) best = c;
    }
  if (!best) return std::nullopt;

  // The new graph: the copy (and the store), the late readers rewired.
  const Candidate& c = *best;
  const PiiNode& x = values.node(c.value);
  std::vector<PiiNode> nodes = values.graph->nodes();
  std::vector<NodeIndex> stores;  // spill stores, hinted before u
  const auto copy_of = [&](NodeIndex w, const CopyPlan& plan) {
    std::optional<NodeIndex> store;
    if (plan.spill) stores.push_back(*(store = append_store(nodes, values, w, spills)));
    return append_copy(nodes, values, w, plan, store, spills);
  };
  const NodeIndex copy = copy_of(c.value, c.plan);
  std::vector<NodeIndex> copies{copy};  // hinted after u
  std::map<NodeIndex, NodeIndex> rebuilt;  // v's copy and c.rebuild's copies and nodes, by the node they replace
  rebuilt[c.value] = copy;
  for (NodeIndex w : c.rebuild.copied) {
    rebuilt[w] = copy_of(w, *copy_plan(values, w, spills));
    copies.push_back(rebuilt[w]);
  }
  const std::string how = c.plan.spill ? std::string("spill")
                          : c.plan.cone.size() == 1 ? std::string("reload")
                                                    : fmt::format("recompute ({} instructions)", c.plan.cone.size());
  const auto& identities = c.rebuild.identities;
  const std::function<NodeIndex(NodeIndex)> over_copy = [&](NodeIndex o) -> NodeIndex {
    if (auto it = rebuilt.find(o); it != rebuilt.end()) return it->second;
    if (std::find(identities.begin(), identities.end(), o) == identities.end()) return o;  // kept: computed after u
    PiiNode identity = nodes[o];
    for (NodeIndex& w : identity.operands) w = over_copy(w);
    nodes.push_back(std::move(identity));
    return rebuilt[o] = nodes.size() - 1;
  };
  for (NodeIndex r : c.late)
    for (std::size_t k = 0; k < values.node(r).operands.size(); ++k) {
      const NodeIndex o = values.node(r).operands[k];
      if (!aliases_value(values, o, c.value)) continue;
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
  for (NodeIndex st : stores) hint(st, c.after);
  for (NodeIndex cp : copies) hint(c.after, cp);
  const std::string name = x.index >= 0 && static_cast<std::size_t>(x.index) < values.isa.instructions.size()
                               ? std::string(values.isa.instructions[static_cast<std::size_t>(x.index)].name)
                               : std::string("?");
  out.description = fmt::format("{} %{} ({}) for {} reader(s) after %{}", how, c.value, name, c.late.size(), c.after);
  if (!c.rebuild.copied.empty()) out.description += fmt::format(", with {} other operand(s) of a concat^H", c.rebuild.copied.size());
  return out;
}

}  // namespace act::alloc
