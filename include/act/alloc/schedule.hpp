// Module 4: schedules of a pii graph and their interference graphs.
//
// A schedule orders the instruction nodes (Pii and identity; leaves are not scheduled). The
// first is the extended Sethi-Ullman order of Appendix B: per on-chip buffer d,
//   esun_d(y) = max(mem_d(y), min_i tau_d(x_i)),  tau_d(x_i) = esun_d(x_i) + sum_{j != i} mem_d(x_j)
// (mem_d = bytes of a value stored in d, 0 elsewhere; identity nodes own no memory), and a
// post-order DFS from the roots visits operands by decreasing max_d tau_d(x_i) / capacity(d).
// A second variant (IdentityMemory::Aliased) gives an identity node the storage it aliases,
// closer to Appendix B's mem_d (the bytes of the tensor a node represents): a concat^H holds
// all its operands, so a chain of them is not free. Phase 2 tries it once when the first
// order fails (allocate.hpp).
// Further schedules come from ScheduleGenerator: every topological order in lexicographic order
// of esun rank (the first of which is the esun order itself), skipping any whose interference
// graph contains one that already failed (§6.4: CSP4 is monotone in the interference graph).
//
// Liveness (time 2t = instruction t reads its inputs, 2t+1 = it writes its output):
//   a storage value produced at t lives over [2t+1, 2u] where u is the last Pii reading it
//   directly or through slice^H/concat^H; leaves live for the whole program; storage a root
//   aliases lives to the end; a value nobody reads lives at [2t+1, 2t+1]. Two storage values in
//   one buffer interfere when their intervals intersect; two leaves never do (their places are
//   fixed by the kernel image), nor do two windows of one overlay^H (values.hpp). So an
//   instruction may overwrite an operand it reads last.
// An interference edge (a, b) asks that b's window miss a's needed part (csp.hpp CSP4): when
//   either has a needed part smaller than its window (values.hpp), a is the one written first
//   (the later write must not touch what the earlier value still needs; the earlier write
//   happened before b existed), and the edge is ordered so; otherwise a < b. Such an edge is
//   forced only when no order writes b first, and a failed one is repaired by writing b first.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "act/alloc/values.hpp"

namespace act::alloc {

using NodeIndex = std::size_t;
// Interfering storage pairs (a < b), sorted: the CSP4 edges of one schedule.
using InterferenceGraph = std::vector<std::pair<NodeIndex, NodeIndex>>;

struct Schedule {
  std::vector<NodeIndex> order;  // instruction nodes, in execution order
};

struct LiveRange {
  std::int64_t begin = 0, end = 0;  // closed interval of time points
};

namespace schedule_detail {

inline bool is_instruction(const GraphValues& v, NodeIndex i) { return !v.node(i).is_leaf(); }

// Capacity of buffer d in bytes (access dims x unit dims x element width).
inline double capacity_bytes(const isa::Buffer& b) {
  double c = static_cast<double>(byte_width(b.dtype));
  for (auto a : b.access_dims) c *= static_cast<double>(a);
  for (auto u : b.unit_dims) c *= static_cast<double>(u);
  return c > 0 ? c : 1;
}

}  // namespace schedule_detail

// What esun's mem_d counts for an identity node (slice^H, concat^H, overlay^H).
enum class IdentityMemory : std::uint8_t {
  None,     // nothing: only Pii nodes and leaves own memory (the order phase 2 tries first)
  Aliased,  // the storage it aliases: all operands of a concat^H, the whole operand of a slice^H
};

// The extended Sethi-Ullman order (Appendix B).
inline Schedule esun_schedule(const GraphValues& v, IdentityMemory identity = IdentityMemory::None) {
  const std::size_t n = v.size(), nb = v.isa.buffers.size();
  auto mem = [&](NodeIndex i, std::size_t d) -> double {
    if (identity == IdentityMemory::None || v.storage[i])
      return v.storage[i] && static_cast<std::size_t>(v.node(i).buffer) == d ? static_cast<double>(v.bytes[i]) : 0.0;
    double m = 0;
    for (NodeIndex s : v.aliases[i])
      if (static_cast<std::size_t>(v.node(s).buffer) == d) m += static_cast<double>(v.bytes[s]);
    return m;
  };
  std::vector<std::vector<double>> esun(n, std::vector<double>(nb, 0));
  auto tau = [&](NodeIndex y, std::size_t k, std::size_t d) {
    const auto& ops = v.node(y).operands;
    double t = esun[ops[k]][d];
    for (std::size_t j = 0; j < ops.size(); ++j)
      if (j != k) t += mem(ops[j], d);
    return t;
  };
  for (NodeIndex y = 0; y < n; ++y)  // operands precede users
    for (std::size_t d = 0; d < nb; ++d) {
      double best = v.node(y).operands.empty() ? 0 : std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < v.node(y).operands.size(); ++k) best = std::min(best, tau(y, k, d));
      esun[y][d] = std::max(mem(y, d), best);
    }
  auto pressure = [&](NodeIndex y, std::size_t k) {
    double p = 0;
    for (std::size_t d = 0; d < nb; ++d)
      if (!v.isa.buffers[d].is_hbm) p = std::max(p, tau(y, k, d) / schedule_detail::capacity_bytes(v.isa.buffers[d]));
    return p;
  };
  Schedule s;
  std::vector<bool> visited(n, false);
  // Iterative post-order DFS: frame = (node, sorted operand positions, next).
  struct Frame {
    NodeIndex node;
    std::vector<std::size_t> operand_order;
    std::size_t next = 0;
  };
  for (NodeIndex r : v.graph->roots()) {
    if (visited[r]) continue;
    std::vector<Frame> stack;
    auto push = [&](NodeIndex y) {
      visited[y] = true;
      Frame f{y, {}, 0};
      std::vector<std::pair<double, std::size_t>> keyed;
      for (std::size_t k = 0; k < v.node(y).operands.size(); ++k) keyed.emplace_back(pressure(y, k), k);
      std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      for (const auto& [p, k] : keyed) f.operand_order.push_back(k);
      stack.push_back(std::move(f));
    };
    push(r);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.operand_order.size()) {
        const NodeIndex child = v.node(f.node).operands[f.operand_order[f.next++]];
        if (!visited[child]) push(child);
        continue;
      }
      if (schedule_detail::is_instruction(v, f.node)) s.order.push_back(f.node);
      stack.pop_back();
    }
  }
  return s;
}

namespace schedule_detail {

// Sorts edges between nodes below n by two stable counting passes (second, then first): linear,
// where a comparison sort of 100,000 edges took longer than the sweep that finds them.
inline void sort_edges(std::vector<std::pair<std::size_t, std::size_t>>& edges, std::size_t n) {
  std::vector<std::pair<std::size_t, std::size_t>> out(edges.size());
  std::vector<std::size_t> start(n + 1);
  for (const bool by_first : {false, true}) {
    std::fill(start.begin(), start.end(), 0);
    for (const auto& e : edges) ++start[(by_first ? e.first : e.second) + 1];
    for (std::size_t k = 0; k < n; ++k) start[k + 1] += start[k];
    for (const auto& e : edges) out[start[by_first ? e.first : e.second]++] = e;
    edges.swap(out);
  }
}

}  // namespace schedule_detail

// Live ranges of the storage nodes under `schedule` (others: {0, -1}, empty).
inline std::vector<LiveRange> live_ranges(const GraphValues& v, const Schedule& schedule) {
  const std::size_t n = v.size();
  const std::int64_t end_of_program = 2 * static_cast<std::int64_t>(schedule.order.size()) + 2;
  std::vector<std::int64_t> position(n, -1);
  for (std::size_t t = 0; t < schedule.order.size(); ++t) position[schedule.order[t]] = static_cast<std::int64_t>(t);
  std::vector<LiveRange> live(n, LiveRange{0, -1});
  for (NodeIndex i = 0; i < n; ++i) {
    if (!v.storage[i]) continue;
    if (v.node(i).is_leaf()) live[i] = {-1, end_of_program};
    else live[i] = {2 * position[i] + 1, 2 * position[i] + 1};
    if (v.root_storage[i]) live[i].end = end_of_program;
  }
  for (NodeIndex q = 0; q < n; ++q) {
    if (v.node(q).kind != select::PiiNodeKind::Pii) continue;
    for (NodeIndex o : v.node(q).operands)
      for (NodeIndex s : v.aliases[o]) live[s].end = std::max(live[s].end, 2 * position[q]);
  }
  return live;
}

// Whether the interference edge (a, b) depends on which of the two is written first.
inline bool ordered_edge(const GraphValues& v, NodeIndex a, NodeIndex b) { return v.partly_needed(a) || v.partly_needed(b); }

// The edge storage values x != y (same buffer, overlapping live ranges) make, oriented as the
// header comment says; nothing when they do not interfere.
inline std::optional<std::pair<NodeIndex, NodeIndex>> interference_edge(const GraphValues& v, const std::vector<LiveRange>& live,
                                                                        NodeIndex x, NodeIndex y) {
  const NodeIndex a = std::min(x, y), b = std::max(x, y);
  if (!v.storage[a] || !v.storage[b] || v.node(a).buffer != v.node(b).buffer) return std::nullopt;
  if (v.node(a).is_leaf() && v.node(b).is_leaf()) return std::nullopt;
  if (v.overlay[a] >= 0 && v.overlay[a] == v.overlay[b]) return std::nullopt;  // disjoint written bytes
  if (live[a].begin > live[b].end || live[b].begin > live[a].end) return std::nullopt;
  if (ordered_edge(v, a, b) && live[b].begin < live[a].begin) return std::pair{b, a};
  return std::pair{a, b};
}

// Whether every edge of `edges` is one the live ranges make: contains_graph(interference_graph
// (v, s), edges) without building the whole graph (phase 2 checks each order against every
// failed core, and builds the graph only of an order it then solves).
inline bool has_edges(const GraphValues& v, const std::vector<LiveRange>& live, const InterferenceGraph& edges) {
  return std::all_of(edges.begin(), edges.end(), [&](const auto& e) { return interference_edge(v, live, e.first, e.second) == e; });
}

inline InterferenceGraph interference_graph(const GraphValues& v, const std::vector<LiveRange>& live) {
  // A sweep per buffer in order of begin: each value meets only those that begin before it
  // ends, not every other value (programs of 1,000 instructions have 2,000 storage values).
  std::vector<NodeIndex> by_begin;
  for (NodeIndex a = 0; a < v.size(); ++a)
    if (v.storage[a]) by_begin.push_back(a);
  std::sort(by_begin.begin(), by_begin.end(), [&](NodeIndex a, NodeIndex b) {
    return std::tuple(v.node(a).buffer, live[a].begin, a) < std::tuple(v.node(b).buffer, live[b].begin, b);
  });
  InterferenceGraph g;
  for (std::size_t i = 0; i < by_begin.size(); ++i) {
    const NodeIndex x = by_begin[i];
    for (std::size_t j = i + 1; j < by_begin.size(); ++j) {
      const NodeIndex y = by_begin[j];
      if (v.node(y).buffer != v.node(x).buffer || live[y].begin > live[x].end) break;
      if (const auto e = interference_edge(v, live, x, y)) g.push_back(*e);
    }
  }
  schedule_detail::sort_edges(g, v.size());
  return g;
}

inline InterferenceGraph interference_graph(const GraphValues& v, const Schedule& schedule) {
  return interference_graph(v, live_ranges(v, schedule));
}

// True when `bigger` contains every edge of `smaller` (both sorted).
inline bool contains_graph(const InterferenceGraph& bigger, const InterferenceGraph& smaller) {
  return std::includes(bigger.begin(), bigger.end(), smaller.begin(), smaller.end());
}

// Which interference edges every schedule has (§6.4's pruning, taken to its limit): when all
// edges of an unsat core are forced, every schedule contains the core and no schedule can be
// allocated, so phase 2 stops at once instead of pruning up to max_orders orders (an in-place
// accumulator whose old value is still needed was 100k pruned orders, the whole budget).
// Storage a can end before b starts in some order iff neither lives to the end (leaves, root
// storage), b does not precede a (a does not depend on b), and no Pii reader of a other than b
// depends on b: then a, its readers and their operands can all be scheduled before b.
class ForcedInterference {
 public:
  explicit ForcedInterference(const GraphValues& v)
      : v_(v), words_((v.size() + 63) / 64), depends_(v.size() * words_, 0), readers_(v.size()) {
    for (NodeIndex q = 0; q < v.size(); ++q) {  // operands precede users
      std::uint64_t* row = depends_.data() + q * words_;
      for (NodeIndex o : v.node(q).operands) {
        const std::uint64_t* from = depends_.data() + o * words_;
        for (std::size_t w = 0; w < words_; ++w) row[w] |= from[w];
        row[o / 64] |= std::uint64_t{1} << (o % 64);
      }
      if (v.node(q).kind != select::PiiNodeKind::Pii) continue;
      for (NodeIndex o : v.node(q).operands)
        for (NodeIndex a : v.aliases[o]) readers_[a].push_back(q);
    }
  }

  bool forced(NodeIndex a, NodeIndex b) const {
    return !can_end_before(a, b) && !can_end_before(b, a) && !(ordered_edge(v_, a, b) && can_write_first(b, a));
  }

  bool all_forced(const InterferenceGraph& edges) const {
    return !edges.empty() && std::all_of(edges.begin(), edges.end(), [&](const auto& e) { return forced(e.first, e.second); });
  }

  // Some order has a's live range end before b's begins.
  bool can_end_before(NodeIndex a, NodeIndex b) const {
    if (lives_to_end(a) || v_.node(b).is_leaf() || depends(a, b)) return false;
    for (NodeIndex q : readers_[a])
      if (q != b && depends(q, b)) return false;
    return true;
  }

  // Some order writes a before b (neither is a leaf, whose place in time is fixed, and b does
  // not precede a).
  bool can_write_first(NodeIndex a, NodeIndex b) const {
    return !v_.node(a).is_leaf() && !v_.node(b).is_leaf() && !depends(a, b);
  }

  // The Pii nodes that read storage node a (directly or through identity nodes).
  const std::vector<NodeIndex>& readers(NodeIndex a) const { return readers_[a]; }

 private:
  bool lives_to_end(NodeIndex i) const { return v_.node(i).is_leaf() || v_.root_storage[i]; }
  // q reads x, directly or not.
  bool depends(NodeIndex q, NodeIndex x) const { return (depends_[q * words_ + x / 64] >> (x % 64)) & 1; }

  const GraphValues& v_;
  // Row q: the nodes q reads, directly or not, one bit each. A row is the OR of its operands'
  // rows, taken a word at a time: a bit at a time, building it was 6 % of phase 2 on the
  // 2,300-node lane-blend graphs (AMX compile-time kernel 32).
  std::size_t words_;
  std::vector<std::uint64_t> depends_;
  std::vector<std::vector<NodeIndex>> readers_;  // Pii nodes reading a storage node (through aliases)
};

// Orders looked at per graph version by default (pruned ones included). Orders pruned past the
// first few thousand rarely lead anywhere, and the next pii graph or live-range split often
// does: at 100,000, one unallocatable graph cost QKV complete-mode kernels 2 s of a 3 s budget
// (docs/soak.md, 2026-11-27 third session).
inline constexpr std::size_t kDefaultMaxOrders = 10000;

// Topological orders on demand: the esun order first, then the others in lexicographic order of
// esun rank, pruned by failed interference graphs. Stops after `max_orders` orders have been
// looked at (pruned ones included), which bounds the search on large graphs.
// Repair before enumeration: the lexicographic order varies the last positions first, so an
// order that moves one early instruction (a store of a value before the in-place instruction
// that overwrites it) can lie behind every reordering of the tail. So each failed core is
// first answered directly: for its first edge (a, b) that some order avoids consistently with
// the constraints so far, "a and its readers other than b come before b" joins the constraints,
// and the esun-ranked order satisfying all of them is offered next. The enumeration continues
// when no edge of a core can be avoided that way.
// Constraints "x before y" (node indices) may be given up front (the hints of a live-range
// split, live_range_split.hpp): the first order is then the esun-ranked order meeting them, and
// every repair keeps them. Without enumeration, next() offers only that first order and the
// repaired ones (phase 2 splits a live range before it enumerates orders one by one).
class ScheduleGenerator {
 public:
  using Constraints = std::vector<std::pair<NodeIndex, NodeIndex>>;

  // `deadline`: next() also gives up once it passes (read every 1024 orders looked at).
  explicit ScheduleGenerator(const GraphValues& values, std::size_t max_orders = kDefaultMaxOrders,
                             std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max(),
                             Constraints hints = {}, bool enumerate = true)
      : v_(values), max_orders_(max_orders), deadline_(deadline), enumerate_(enumerate) {
    const Schedule first = esun_schedule(v_);
    rank_.assign(v_.size(), kNone);
    for (std::size_t t = 0; t < first.order.size(); ++t) rank_[first.order[t]] = t;
    by_rank_ = first.order;
    std::erase_if(hints, [&](const auto& c) { return c.first >= v_.size() || c.second >= v_.size() ||
                                                     rank_[c.first] == kNone || rank_[c.second] == kNone; });
    if (!hints.empty())
      if (std::optional<Schedule> s = constrained_order(hints); s && s->order != first.order) {
        constraints_ = hints;
        hints_ = std::move(hints);
        repaired_ = std::move(s);
      }
  }

  // The next schedule to try, or nothing when every order was tried or pruned (or the bound hit).
  std::optional<Schedule> next() {
    while (true) {
      if (looked_at_ >= max_orders_) return std::nullopt;
      if (looked_at_ % 1024 == 1023 && std::chrono::steady_clock::now() >= deadline_) return std::nullopt;
      Schedule s;
      if (repaired_) {
        s = std::move(*repaired_);
        repaired_.reset();
        offered_repairs_.push_back(s.order);
      } else {
        if (!enumerate_ && started_) return std::nullopt;
        if (!advance()) return std::nullopt;
        s.order = chosen_;
        // The enumeration reaching an order a repair already offered: not again.
        if (std::find(offered_repairs_.begin(), offered_repairs_.end(), s.order) != offered_repairs_.end()) continue;
      }
      ++looked_at_;
      const std::vector<LiveRange> live = live_ranges(v_, s);
      if (std::any_of(failed_.begin(), failed_.end(), [&](const InterferenceGraph& f) { return has_edges(v_, live, f); })) {
        ++pruned_;
        continue;
      }
      last_live_ = live;
      last_graph_.reset();
      returned_.push_back(s.order);
      return s;
    }
  }

  // Interference graph of the schedule `next()` returned last.
  // (Built on first use: a schedule that overfills a buffer fails without it.)
  const InterferenceGraph& last_interference() const {
    if (!last_graph_) last_graph_ = interference_graph(v_, last_live_);
    return *last_graph_;
  }
  // Record an unsatisfiable interference graph (or a subgraph of one: an unsat core), and
  // prepare the repaired order that avoids it (see the class comment).
  void add_failed(InterferenceGraph g) {
    repair(g);
    failed_.push_back(std::move(g));
  }
  // Every schedule contains `core` (ForcedInterference::all_forced).
  bool unavoidable(const InterferenceGraph& core) {
    if (!forced_) forced_.emplace(v_);
    return forced_->all_forced(core);
  }
  std::size_t pruned() const { return pruned_; }
  std::size_t looked_at() const { return looked_at_; }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  bool ready(NodeIndex i, const std::vector<bool>& done) const {
    if (done[i]) return false;
    for (NodeIndex o : v_.node(i).operands)
      if (rank_[o] != kNone && !done[o]) return false;
    return true;
  }

  // Smallest-rank ready node with rank > after (kNone: any), or kNone.
  std::size_t pick(const std::vector<bool>& done, std::size_t after) const {
    for (std::size_t r = after == kNone ? 0 : after + 1; r < by_rank_.size(); ++r)
      if (ready(by_rank_[r], done)) return r;
    return kNone;
  }

  // Moves chosen_ to the lexicographically next topological order (by rank).
  bool advance() {
    const std::size_t n = by_rank_.size();
    if (!started_) {
      started_ = true;
      done_.assign(v_.size(), false);
      // The least order by rank is the esun order itself when that is topological (as esun
      // orders are): taken as it is, where complete(0) rescans the ranks for each place.
      const bool topological = std::all_of(by_rank_.begin(), by_rank_.end(), [&](NodeIndex i) {
        return std::all_of(v_.node(i).operands.begin(), v_.node(i).operands.end(),
                           [&](NodeIndex o) { return rank_[o] == kNone || rank_[o] < rank_[i]; });
      });
      if (!topological) return complete(0);
      chosen_ = by_rank_;
      for (NodeIndex i : by_rank_) done_[i] = true;
      return true;
    }
    // Undo from the back; at each depth try the next larger-rank ready node.
    for (std::size_t depth = n; depth-- > 0;) {
      const NodeIndex last = chosen_[depth];
      chosen_.pop_back();
      done_[last] = false;
      const std::size_t r = pick(done_, rank_[last]);
      if (r != kNone) {
        chosen_.push_back(by_rank_[r]);
        done_[by_rank_[r]] = true;
        return complete(depth + 1);
      }
    }
    return false;
  }

  void repair(const InterferenceGraph& core) {
    if (!forced_) forced_.emplace(v_);
    repaired_.reset();
    // Each base's least order, once per repair: most of what a repair tries either closes a
    // cycle or leaves that order as it is, and neither needs a new order built (order_with).
    const LeastOrder on_repairs = least_order(constraints_), on_hints = least_order(hints_);
    const std::pair<const Constraints*, const LeastOrder*> bases[] = {{&constraints_, &on_repairs}, {&hints_, &on_hints}};
    std::vector<NodeIndex> before;  // the nodes a repair puts before another
    for (const auto& [p, q] : core)
      for (const auto& [a, b] : {std::pair{p, q}, std::pair{q, p}}) {
        if (rank_[a] == kNone || rank_[b] == kNone || !forced_->can_end_before(a, b)) continue;
        before.assign(1, a);
        for (NodeIndex r : forced_->readers(a))
          if (r != b && rank_[r] != kNone) before.push_back(r);
        // On top of the repairs so far, or, when they leave no order, on the hints alone.
        for (const auto& [base, least] : bases) {
          std::optional<Schedule> s = order_with(*base, *least, before, b);
          if (!s || !worth_trying(*s, core)) continue;
          constraints_ = *base;
          for (NodeIndex x : before) constraints_.emplace_back(x, b);
          repaired_ = std::move(s);
          return;
        }
      }
    // An ordered edge (p written first) whose values cannot be separated in time: write q first.
    for (const auto& [p, q] : core) {
      if (!ordered_edge(v_, p, q) || rank_[p] == kNone || rank_[q] == kNone || !forced_->can_write_first(q, p)) continue;
      before.assign(1, q);
      for (const auto& [base, least] : bases) {
        std::optional<Schedule> s = order_with(*base, *least, before, p);
        if (!s || !worth_trying(*s, core)) continue;
        constraints_ = *base;
        constraints_.emplace_back(q, p);
        repaired_ = std::move(s);
        return;
      }
    }
  }

  // The least order of a set of constraints (constrained_order's), with each node's place in it.
  struct LeastOrder {
    std::optional<Schedule> schedule;  // nothing: the constraints form a cycle
    std::vector<std::size_t> position;
    Constraints by_first;  // the constraints, sorted
  };
  LeastOrder least_order(const Constraints& constraints) const {
    LeastOrder least{constrained_order(constraints), std::vector<std::size_t>(v_.size(), kNone), constraints};
    if (least.schedule)
      for (std::size_t t = 0; t < least.schedule->order.size(); ++t) least.position[least.schedule->order[t]] = t;
    std::sort(least.by_first.begin(), least.by_first.end());
    return least;
  }

  // constrained_order(base plus "x before y" for each x in `before`), or nothing when that is a
  // cycle or an order next() returned already. Most repairs of an overfull core are one of the
  // two (on a 1,800-node AMX lane-blend graph, 773 of 1,020), and neither needs a new order:
  // - when base's least order already puts every x before y, it is the answer: a least-rank-
  //   first order is the lexicographically least topological order, so constraints it meets
  //   leave it as it is;
  // - the added constraints close a cycle iff y reaches some x through operand edges and base's
  //   constraints, and such a path only visits nodes that base's least order places between y
  //   and that x.
  std::optional<Schedule> order_with(const Constraints& base, const LeastOrder& least, const std::vector<NodeIndex>& before,
                                     NodeIndex y) const {
    if (!least.schedule) return std::nullopt;
    std::size_t last = 0;  // the place of the latest x
    for (NodeIndex x : before) last = std::max(last, least.position[x]);
    if (last < least.position[y]) {
      if (std::find(returned_.begin(), returned_.end(), least.schedule->order) != returned_.end()) return std::nullopt;
      return least.schedule;
    }
    if (reaches_any(least, y, before, last)) return std::nullopt;
    Constraints extra = base;
    for (NodeIndex x : before) extra.emplace_back(x, y);
    return constrained_order(extra);
  }

  // Whether y reaches a node of `targets` through operand edges and least's constraints,
  // looking only at nodes least's order places at or before `last`.
  bool reaches_any(const LeastOrder& least, NodeIndex y, const std::vector<NodeIndex>& targets, std::size_t last) const {
    if (users_start_.empty()) count_operand_edges();
    std::vector<char>& seen = seen_;
    seen.resize(v_.size(), 0);
    std::vector<NodeIndex>& stack = stack_;
    std::vector<NodeIndex>& visited = visited_;
    stack.assign(1, y);
    visited.assign(1, y);
    seen[y] = 1;
    bool found = false;
    auto visit = [&](NodeIndex u) {
      if (seen[u] || least.position[u] > last) return;
      seen[u] = 1;
      visited.push_back(u);
      stack.push_back(u);
    };
    while (!stack.empty() && !found) {
      const NodeIndex i = stack.back();
      stack.pop_back();
      if (i != y && std::find(targets.begin(), targets.end(), i) != targets.end()) found = true;
      for (std::size_t k = users_start_[i]; k < users_start_[i + 1]; ++k) visit(users_[k]);
      for (auto e = std::lower_bound(least.by_first.begin(), least.by_first.end(), std::pair<NodeIndex, NodeIndex>{i, 0});
           e != least.by_first.end() && e->first == i; ++e)
        visit(e->second);
    }
    for (NodeIndex u : visited) seen[u] = 0;
    return found;
  }

  // A repaired order is worth a CSP when it is new and avoids every failed core (`core`, the
  // one being repaired, is not recorded yet).
  bool worth_trying(const Schedule& s, const InterferenceGraph& core) const {
    if (std::find(returned_.begin(), returned_.end(), s.order) != returned_.end()) return false;
    const std::vector<LiveRange> live = live_ranges(v_, s);
    if (has_edges(v_, live, core)) return false;
    return std::none_of(failed_.begin(), failed_.end(), [&](const InterferenceGraph& f) { return has_edges(v_, live, f); });
  }

  // The order of least esun rank first among ready nodes, with `extra` (x before y) added to
  // the operand order; nothing when they form a cycle.
  std::optional<Schedule> constrained_order(const std::vector<std::pair<NodeIndex, NodeIndex>>& extra) const {
    // Kahn's algorithm with the ready nodes in a min-heap of rank: linear-logarithmic, where
    // rescanning the ranks for each place was quadratic (a third of phase 2 on AMX programs of
    // 1,000 instructions). A constraint from an unranked node never clears, as before.
    // The operand edges are counted once and the work arrays reused: a repair may call this a
    // thousand times (an overfull core of 33 values has 528 edges, each tried both ways), and
    // building them per call was 95 ms of each AMX lane-blend graph's phase 2 (compile-time
    // seed 3, kernel 60).
    if (users_start_.empty()) count_operand_edges();
    std::vector<std::size_t>& waiting = waiting_;
    waiting = base_waiting_;
    std::vector<std::pair<NodeIndex, NodeIndex>>& extra_by_x = extra_by_x_;
    extra_by_x.assign(extra.begin(), extra.end());
    std::sort(extra_by_x.begin(), extra_by_x.end());
    for (const auto& [x, y] : extra_by_x) ++waiting[y];
    std::vector<std::size_t>& ready = ready_;  // ranks, a min-heap
    ready.clear();
    for (std::size_t r = 0; r < by_rank_.size(); ++r)
      if (waiting[by_rank_[r]] == 0) ready.push_back(r);
    std::make_heap(ready.begin(), ready.end(), std::greater<>());
    auto clear = [&](NodeIndex u) {
      if (--waiting[u] == 0 && rank_[u] != kNone) {
        ready.push_back(rank_[u]);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
    };
    Schedule s;
    s.order.reserve(by_rank_.size());
    while (!ready.empty()) {
      std::pop_heap(ready.begin(), ready.end(), std::greater<>());
      const NodeIndex i = by_rank_[ready.back()];
      ready.pop_back();
      s.order.push_back(i);
      for (std::size_t k = users_start_[i]; k < users_start_[i + 1]; ++k) clear(users_[k]);
      for (auto e = std::lower_bound(extra_by_x.begin(), extra_by_x.end(), std::pair<NodeIndex, NodeIndex>{i, 0});
           e != extra_by_x.end() && e->first == i; ++e)
        clear(e->second);
    }
    if (s.order.size() < by_rank_.size()) return std::nullopt;  // a cycle
    return s;
  }

  // The ranked nodes' operand edges: how many operands each node waits for, and its users.
  void count_operand_edges() const {
    base_waiting_.assign(v_.size(), 0);
    users_start_.assign(v_.size() + 1, 0);
    for (NodeIndex i : by_rank_)
      for (NodeIndex o : v_.node(i).operands)
        if (rank_[o] != kNone) {
          ++base_waiting_[i];
          ++users_start_[o + 1];
        }
    for (std::size_t k = 0; k < v_.size(); ++k) users_start_[k + 1] += users_start_[k];
    users_.assign(users_start_.back(), 0);
    std::vector<std::size_t> filled(users_start_.begin(), users_start_.end() - 1);
    for (NodeIndex i : by_rank_)
      for (NodeIndex o : v_.node(i).operands)
        if (rank_[o] != kNone) users_[filled[o]++] = i;
  }

  bool complete(std::size_t from) {
    for (std::size_t depth = from; depth < by_rank_.size(); ++depth) {
      const std::size_t r = pick(done_, kNone);
      if (r == kNone) return false;  // cannot happen for a DAG
      chosen_.push_back(by_rank_[r]);
      done_[by_rank_[r]] = true;
    }
    return true;
  }

  const GraphValues& v_;
  std::size_t max_orders_;
  std::chrono::steady_clock::time_point deadline_;
  bool enumerate_ = true;
  std::vector<std::size_t> rank_;
  std::vector<NodeIndex> by_rank_;
  bool started_ = false;
  std::vector<bool> done_;
  std::vector<NodeIndex> chosen_;
  std::vector<InterferenceGraph> failed_;
  std::optional<ForcedInterference> forced_;                  // built on the first failure
  Constraints constraints_;                                   // hints and repairs so far: x before y
  Constraints hints_;                                         // the hints alone
  std::optional<Schedule> repaired_;                          // offered by next() before enumerating
  std::vector<std::vector<NodeIndex>> offered_repairs_;       // repaired orders next() returned
  std::vector<std::vector<NodeIndex>> returned_;              // every order next() returned
  std::vector<LiveRange> last_live_;                          // of the schedule next() returned last
  mutable std::optional<InterferenceGraph> last_graph_;       // its interference graph, once asked for
  std::size_t pruned_ = 0, looked_at_ = 0;
  // constrained_order's operand edges (users in CSR form) and its work arrays, kept between calls.
  mutable std::vector<std::size_t> base_waiting_, users_start_, waiting_, ready_;
  mutable std::vector<NodeIndex> users_, stack_, visited_;
  mutable std::vector<char> seen_;  // reaches_any's marks, all cleared between calls
  mutable std::vector<std::pair<NodeIndex, NodeIndex>> extra_by_x_;
};

}  // namespace act::alloc
