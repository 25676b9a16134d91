// Spilling by furthest next use (Belady's MIN) over one schedule: the pii graph and order phase 2
// allocates when the schedule it has keeps more on chip than a buffer holds.
//
// The schedule is walked instruction by instruction with the values resident in each on-chip
// buffer, sized in units of its access dims (rows of a scratchpad, tile registers). Before an
// instruction runs, the values it reads must be resident (an evicted one is had again:
// recomputed or reloaded, value_copy.hpp) and its output must fit once the values it reads for
// the last time are gone (t reads at 2t and writes at 2t+1). When a buffer would overflow, the
// resident value whose next use is farthest away leaves it (the cheapest copy on ties); a value
// the ISA can only spill is stored to HBM scratch before it leaves. With `move_stores_up`, a
// value whose only readers still to come are stores to HBM that could run now (an output's
// store, all its operands at hand) leaves first, for free: those stores move up to now.
// Spilling it instead stores it to scratch, loads it back and stores it again (QKV
// compile-time kernel 13: 36 instructions where 34 do). An instruction that writes
// over an input it reads (in place: softmax, tdpbusd's accumulator) destroys that value: one still
// needed later is stored first, or recomputed later.
// Pressure ignores fragmentation and the adjacency concat^H asks for: the CSP has the last word,
// and the core-driven split (live_range_split.hpp) answers what pressure does not see.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/alloc/rematerialise.hpp"
#include "act/alloc/schedule.hpp"
#include "act/alloc/spill.hpp"
#include "act/alloc/value_copy.hpp"
#include "act/alloc/values.hpp"

namespace act::alloc {

struct SpillPlan {
  select::PiiGraph graph;
  ScheduleGenerator::Constraints order;  // the planned order, as a chain x before y
  std::size_t spills = 0, recomputes = 0;
  std::string description;
};

namespace spill_plan_detail {

using select::PiiNode;
using select::PiiNodeKind;

inline std::int64_t units(const GraphValues& v, std::size_t i) {
  std::int64_t u = 1;
  for (auto l : v.length[i]) u *= l;
  return u;
}

class Planner {
 public:
  Planner(const GraphValues& values, const Schedule& schedule, SpillTable& spills, bool move_stores_up)
      : v_(values), schedule_(schedule), spills_(spills), move_stores_up_(move_stores_up) {
    // The given nodes are copied only when the plan is built (build()): phase 2 weighs up to 18
    // plans per graph by their instruction count and builds one to three, and copying 2,000
    // nodes of 300 bytes for each was over a third of the planning. Until then nodes_ holds empty
    // places for them (the transfers a plan appends get the indices after), and the operands
    // the plan rewires are kept in operands_. Room is reserved for the appended transfers: the
    // first append would otherwise move the whole array.
    const std::vector<PiiNode>& given = values.graph->nodes();
    nodes_.reserve(given.size() + given.size() / 4 + 64);
    nodes_.resize(given.size());
    operand_begin_.reserve(given.size() + 1);
    for (const PiiNode& x : given) {
      operand_begin_.push_back(operands_.size());
      operands_.insert(operands_.end(), x.operands.begin(), x.operands.end());
    }
    operand_begin_.push_back(operands_.size());
    const std::size_t n = v_.size();
    capacity_.assign(v_.isa.buffers.size(), 0);
    for (std::size_t b = 0; b < v_.isa.buffers.size(); ++b) {
      std::int64_t c = 1;
      for (auto a : v_.isa.buffers[b].access_dims) c *= a;
      capacity_[b] = v_.isa.buffers[b].is_hbm ? std::numeric_limits<std::int64_t>::max() : c;
    }
    uses_.resize(n);
    for (std::size_t t = 0; t < schedule_.order.size(); ++t) {
      const std::size_t q = schedule_.order[t];
      if (v_.node(q).kind != PiiNodeKind::Pii) continue;
      for (std::size_t s : read_storage(q)) uses_[s].push_back(static_cast<std::int64_t>(t));
    }
    for (auto& u : uses_) u.erase(std::unique(u.begin(), u.end()), u.end());
    version_.resize(n);
    for (std::size_t i = 0; i < n; ++i) version_[i] = i;
    resident_.assign(n, false);
    resident_in_.assign(v_.isa.buffers.size(), {});
    placed_.assign(n, false);
    plans_.resize(n);
    stored_.assign(n, std::nullopt);
    load_.assign(v_.isa.buffers.size(), 0);
  }

  // Walks the schedule; false when no plan exists or none is needed (plan_spills' nothing).
  bool simulate() {
    for (std::size_t t = 0; t < schedule_.order.size(); ++t) {
      const std::size_t q = schedule_.order[t];
      if (placed_[q]) continue;  // a store moved up, or an identity node it read
      if (v_.node(q).kind != PiiNodeKind::Pii) {
        order_.push_back(q);
        placed_[q] = true;
        continue;
      }
      if (!execute(q, static_cast<std::int64_t>(t))) return false;
    }
    return spills_count_ != 0 || recomputes_ != 0 || moved_stores_ != 0;
  }

  // After simulate(): the instructions of the plan's graph (the Pii nodes the roots reach), as
  // instruction_count() of build()'s graph, without building it.
  std::size_t instruction_count() const {
    const std::size_t given = operand_begin_.size() - 1;
    std::vector<std::uint8_t> seen(nodes_.size(), 0);
    std::vector<std::size_t> stack(v_.graph->roots().begin(), v_.graph->roots().end());
    std::size_t count = 0;
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      if (seen[i]) continue;
      seen[i] = 1;
      if (i < given) {
        count += v_.node(i).kind == PiiNodeKind::Pii;
        stack.insert(stack.end(), operands_.begin() + static_cast<std::ptrdiff_t>(operand_begin_[i]),
                     operands_.begin() + static_cast<std::ptrdiff_t>(operand_begin_[i + 1]));
      } else {
        count += nodes_[i].kind == PiiNodeKind::Pii;
        stack.insert(stack.end(), nodes_[i].operands.begin(), nodes_[i].operands.end());
      }
    }
    return count;
  }

  // After simulate(): the plan (consumes the planner).
  SpillPlan build() {
    const std::vector<PiiNode>& given = v_.graph->nodes();
    for (std::size_t i = 0; i < given.size(); ++i) {
      nodes_[i] = given[i];
      std::copy(operands_.begin() + static_cast<std::ptrdiff_t>(operand_begin_[i]),
                operands_.begin() + static_cast<std::ptrdiff_t>(operand_begin_[i + 1]), nodes_[i].operands.begin());
    }
    std::vector<std::size_t> renumbered;
    SpillPlan plan{select::PiiGraph(std::move(nodes_), v_.graph->roots(), &renumbered), {}, spills_count_, recomputes_, {}};
    std::optional<std::size_t> previous;
    for (std::size_t i : order_) {
      if (renumbered[i] == select::PiiGraph::kDropped) continue;
      if (previous) plan.order.emplace_back(*previous, renumbered[i]);
      previous = renumbered[i];
    }
    plan.description = fmt::format("{} spill(s), {} recompute(s), {} store(s) moved up by furthest next use", spills_count_,
                                   recomputes_, moved_stores_);
    return plan;
  }

 private:
  bool on_chip(std::size_t s) const {
    return v_.storage[s] && !v_.node(s).is_leaf() && v_.node(s).buffer != v_.hbm;
  }
  // The on-chip storage values Pii node q reads (through identity nodes), in operand order.
  std::vector<std::size_t> read_storage(std::size_t q) const {
    std::vector<std::size_t> out;
    for (std::size_t o : v_.node(q).operands)
      for (std::size_t s : v_.aliases[o])
        if (on_chip(s) && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    return out;
  }
  // The storage q overwrites in place (the input slice equal to its output slice), if one.
  std::optional<std::size_t> destroyed_by(std::size_t q) const {
    const isa::Instruction& inst = v_.isa.instructions[static_cast<std::size_t>(v_.node(q).index)];
    for (std::size_t k = 0; k < v_.node(q).operands.size(); ++k)
      if (isa::reads_in_place(inst, k)) {
        const auto& a = v_.aliases[v_.node(q).operands[k]];
        if (a.size() == 1 && on_chip(a[0])) return a[0];
      }
    return std::nullopt;
  }
  // Readers that already ran (moved up) are no next use. uses_[s] is ascending, so the search
  // starts at `after`: a value read by hundreds of instructions is weighed at every eviction.
  std::int64_t next_use(std::size_t s, std::int64_t after) const {
    const std::vector<std::int64_t>& uses = uses_[s];
    for (auto u = std::upper_bound(uses.begin(), uses.end(), after); u != uses.end(); ++u)
      if (!placed_[schedule_.order[static_cast<std::size_t>(*u)]]) return *u;
    return std::numeric_limits<std::int64_t>::max();
  }
  bool needed_after(std::size_t s, std::int64_t t) const {
    return next_use(s, t) != std::numeric_limits<std::int64_t>::max() || v_.root_storage[s];
  }

  void make_resident(std::size_t s) {
    resident_[s] = true;
    const auto b = static_cast<std::size_t>(v_.node(s).buffer);
    load_[b] += units(v_, s);
    std::vector<std::size_t>& in = resident_in_[b];
    in.insert(std::lower_bound(in.begin(), in.end(), s), s);
  }
  void release(std::size_t s) {
    if (!resident_[s]) return;
    resident_[s] = false;
    const auto b = static_cast<std::size_t>(v_.node(s).buffer);
    load_[b] -= units(v_, s);
    std::vector<std::size_t>& in = resident_in_[b];
    in.erase(std::lower_bound(in.begin(), in.end(), s));
  }

  // Operand o of a node about to run is at hand: a leaf, a value written already (on chip: still
  // resident), or an identity node over such values.
  bool at_hand(std::size_t o) const {
    const PiiNode& x = v_.node(o);
    if (x.is_leaf()) return true;
    if (x.is_identity())
      return std::all_of(x.operands.begin(), x.operands.end(), [&](std::size_t k) { return at_hand(k); });
    return placed_[o] && (!on_chip(o) || resident_[o]);
  }

  // The readers of s still to run after time `after`, when every one is a store to HBM that
  // could run now; nothing otherwise.
  std::optional<std::vector<std::size_t>> stores_to_move_up(std::size_t s, std::int64_t after) const {
    std::vector<std::size_t> stores;
    for (std::int64_t u : uses_[s]) {
      const std::size_t r = schedule_.order[static_cast<std::size_t>(u)];
      if (u <= after || placed_[r]) continue;
      if (v_.node(r).buffer != v_.hbm) return std::nullopt;
      for (std::size_t o : v_.node(r).operands)
        if (!at_hand(o)) return std::nullopt;
      stores.push_back(r);
    }
    if (stores.empty()) return std::nullopt;
    return stores;
  }

  // Identity node o and the identity nodes under it, in the order, before a reader moved up.
  void place_identity(std::size_t o) {
    const PiiNode& x = v_.node(o);
    if (!x.is_identity() || placed_[o]) return;
    for (std::size_t k : x.operands) place_identity(k);
    order_.push_back(o);
    placed_[o] = true;
  }

  // Runs store r now instead of at its place in the schedule (its operands are at hand); the
  // on-chip values only it still needed leave.
  void move_up(std::size_t r, std::int64_t t) {
    for (std::size_t o : v_.node(r).operands) place_identity(o);
    for (std::size_t k = 0; k < v_.node(r).operands.size(); ++k) operands_[operand_begin_[r] + k] = mapped(v_.node(r).operands[k]);
    order_.push_back(r);
    placed_[r] = true;
    ++moved_stores_;
    for (std::size_t s : read_storage(r))
      if (!needed_after(s, t - 1)) release(s);
  }

  // Stores s's current value to HBM scratch now, once.
  void store(std::size_t s) {
    if (stored_[s]) return;
    stored_[s] = append_store(nodes_, v_, s, spills_, version_[s]);
    order_.push_back(*stored_[s]);
    ++spills_count_;
  }

  // Frees `need` units of `buffer` at time t by evicting values not in `keep`. False when it
  // cannot (nothing evictable is left).
  bool make_room(int buffer, std::int64_t need, std::int64_t t, const std::vector<std::size_t>& keep) {
    const auto b = static_cast<std::size_t>(buffer);
    // Values that leave for free: their remaining readers are stores that can run now. (A copy:
    // moving stores up releases values.)
    if (move_stores_up_ && load_[b] + need > capacity_[b]) {
      const std::vector<std::size_t> resident = resident_in_[b];
      for (std::size_t i = 0; i < resident.size() && load_[b] + need > capacity_[b]; ++i) {
        const std::size_t s = resident[i];
        if (!resident_[s] || std::find(keep.begin(), keep.end(), s) != keep.end()) continue;
        if (const auto stores = stores_to_move_up(s, t - 1))
          for (std::size_t r : *stores) move_up(r, t);
      }
    }
    while (load_[b] + need > capacity_[b]) {
      std::optional<std::size_t> victim;
      std::optional<CopyPlan> victim_plan;
      std::int64_t farthest = -1;
      // The buffer's resident values, ascending; the loop ends right after any release.
      for (std::size_t i = 0; i < resident_in_[b].size(); ++i) {
        const std::size_t s = resident_in_[b][i];
        if (std::find(keep.begin(), keep.end(), s) != keep.end()) continue;
        if (!needed_after(s, t - 1)) {  // dead already: nothing to keep
          release(s);
          victim.reset();
          break;
        }
        const std::optional<CopyPlan>& plan = plan_of(s);
        if (!plan) continue;
        const std::int64_t next = next_use(s, t - 1);
        if (next > farthest || (next == farthest && plan->cost < victim_plan->cost)) {
          farthest = next;
          victim = s;
          victim_plan = plan;
        }
      }
      if (load_[b] + need <= capacity_[b]) break;
      if (!victim) return false;
      if (victim_plan->spill && needed_after(*victim, t - 1)) store(*victim);
      release(*victim);
      evicted_plan_[*victim] = *victim_plan;
    }
    return true;
  }

  // s's value in its buffer again, for a reader at time t (`keep`: values that must stay).
  bool reload(std::size_t s, std::int64_t t, const std::vector<std::size_t>& keep) {
    const CopyPlan& plan = evicted_plan_.at(s);
    if (plan.spill) {
      if (!make_room(v_.node(s).buffer, units(v_, s), t, keep)) return false;
      std::vector<std::size_t> added;
      version_[s] = append_copy(nodes_, v_, s, plan, stored_[s], spills_, &added);
      order_.insert(order_.end(), added.begin(), added.end());
      make_resident(s);
      return true;
    }
    // Recompute the cone instruction by instruction: each copy needs room when it is written,
    // and its operands leave once the cone has read them for the last time.
    std::map<std::size_t, std::size_t> clone;      // cone node -> its copy
    std::map<std::size_t, std::size_t> cone_uses;  // cone node -> readers inside the cone
    for (std::size_t k : plan.cone)
      for (std::size_t o : v_.node(k).operands)
        if (std::find(plan.cone.begin(), plan.cone.end(), o) != plan.cone.end()) ++cone_uses[o];
    const auto hold = [&](std::size_t k, std::int64_t sign) { load_[static_cast<std::size_t>(v_.node(k).buffer)] += sign * units(v_, k); };
    for (std::size_t k : plan.cone) {
      std::vector<std::size_t> consumed;  // cone operands read here for the last time
      for (std::size_t o : v_.node(k).operands)
        if (clone.count(o) && --cone_uses[o] == 0) consumed.push_back(o);
      std::int64_t freed = 0;
      for (std::size_t o : consumed)
        if (v_.node(o).buffer == v_.node(k).buffer) freed += units(v_, o);
      if (!make_room(v_.node(k).buffer, std::max<std::int64_t>(0, units(v_, k) - freed), t, keep)) return false;
      PiiNode copy = v_.node(k);
      for (std::size_t& o : copy.operands)
        if (auto it = clone.find(o); it != clone.end()) o = it->second;
      nodes_.push_back(std::move(copy));
      clone[k] = nodes_.size() - 1;
      order_.push_back(clone[k]);
      for (std::size_t o : consumed) hold(o, -1);
      hold(k, +1);
    }
    version_[s] = clone.at(s);
    hold(s, -1);  // counted again as resident
    make_resident(s);
    ++recomputes_;
    return true;
  }

  // Identity node o over the current versions of the storage it aliases (a clone when any of
  // them changed), scheduled before its reader.
  std::size_t mapped(std::size_t o) {
    const PiiNode& x = v_.node(o);
    if (v_.storage[o]) return version_[o];
    if (!x.is_identity()) return o;
    std::vector<std::size_t> operands;
    for (std::size_t k : x.operands) operands.push_back(mapped(k));
    if (operands == x.operands) return o;
    auto key = std::make_pair(o, operands);
    if (auto it = clones_.find(key); it != clones_.end()) return it->second;
    PiiNode clone = x;
    clone.operands = operands;
    nodes_.push_back(std::move(clone));
    order_.push_back(nodes_.size() - 1);
    return clones_[key] = nodes_.size() - 1;
  }

  bool execute(std::size_t q, std::int64_t t) {
    const std::vector<std::size_t> reads = read_storage(q);
    for (std::size_t s : reads)
      if (!resident_[s] && !reload(s, t, reads)) return false;
    // In place: q writes over `destroyed`; a value still needed after q is kept in HBM first
    // (or recomputed later).
    const std::optional<std::size_t> destroyed = destroyed_by(q);
    if (destroyed && needed_after(*destroyed, t)) {
      const std::optional<CopyPlan> plan = plan_of(*destroyed);
      if (!plan) return false;
      if (plan->spill) store(*destroyed);
      evicted_plan_[*destroyed] = *plan;
    }
    // Room for the output once q's last reads are gone.
    std::int64_t freed = 0;
    for (std::size_t s : reads)
      if ((!needed_after(s, t) || s == destroyed) && v_.node(s).buffer == v_.node(q).buffer) freed += units(v_, s);
    if (on_chip(q) && !make_room(v_.node(q).buffer, std::max<std::int64_t>(0, units(v_, q) - freed), t, reads)) return false;
    for (std::size_t k = 0; k < v_.node(q).operands.size(); ++k) {
      const std::size_t operand = mapped(v_.node(q).operands[k]);
      operands_[operand_begin_[q] + k] = operand;
    }
    order_.push_back(q);
    placed_[q] = true;
    for (std::size_t s : reads)
      if (!needed_after(s, t) || s == destroyed) release(s);
    if (on_chip(q)) {
      make_resident(q);
      if (!needed_after(q, t)) release(q);
    }
    return true;
  }

  // copy_plan(v_, s, spills_), worked out once per value: make_room weighs every resident value
  // at each eviction, and the plan depends on the graph alone.
  const std::optional<CopyPlan>& plan_of(std::size_t s) {
    if (!plans_[s]) plans_[s] = copy_plan(v_, s, spills_);
    return *plans_[s];
  }

  const GraphValues& v_;
  const Schedule& schedule_;
  SpillTable& spills_;
  const bool move_stores_up_;
  std::vector<PiiNode> nodes_;                      // the transfers appended, after empty places for the given nodes
  std::vector<std::size_t> operands_;               // the given nodes' operands, as the plan rewires them
  std::vector<std::size_t> operand_begin_;          // per given node (+1): where its operands start
  std::vector<std::size_t> order_;                  // the planned order, in nodes_ indices
  std::vector<std::int64_t> capacity_, load_;       // per buffer, in access-dim units
  std::vector<std::vector<std::int64_t>> uses_;     // per storage value: times of its readers
  std::vector<std::size_t> version_;                // per value: the node holding it now
  std::vector<bool> resident_;
  std::vector<std::vector<std::size_t>> resident_in_;  // per buffer: its resident values, ascending
  std::vector<bool> placed_;                        // per original node: in order_ already
  std::vector<std::optional<std::size_t>> stored_;  // per value: its store to HBM scratch
  std::map<std::size_t, CopyPlan> evicted_plan_;    // how an evicted value comes back
  std::vector<std::optional<std::optional<CopyPlan>>> plans_;  // plan_of's, per value (outer: worked out)
  std::map<std::pair<std::size_t, std::vector<std::size_t>>, std::size_t> clones_;
  std::size_t spills_count_ = 0, recomputes_ = 0, moved_stores_ = 0;
};

}  // namespace spill_plan_detail

// The graph and order that keep every on-chip buffer within its size along `schedule`, or
// nothing when it already does or no plan exists (a value that must leave cannot). Without
// `move_stores_up`, every value that leaves is spilled or recomputed, as phase 2 did before
// stores moved up: a plan that only reorders can still fail where spills succeed (the pressure
// it relieves is not what the CSP lacks), so phase 2 keeps that plan as its fallback.
inline std::optional<SpillPlan> plan_spills(const GraphValues& values, const Schedule& schedule, SpillTable& spills,
                                            bool move_stores_up = true) {
  spill_plan_detail::Planner planner(values, schedule, spills, move_stores_up);
  if (!planner.simulate()) return std::nullopt;
  return planner.build();
}

// The instruction count of plan_spills' graph, without building it (nothing when it gives nothing).
inline std::optional<std::size_t> spill_plan_instruction_count(const GraphValues& values, const Schedule& schedule,
                                                               SpillTable& spills, bool move_stores_up = true) {
  spill_plan_detail::Planner planner(values, schedule, spills, move_stores_up);
  if (!planner.simulate()) return std::nullopt;
  return planner.instruction_count();
}

}  // namespace act::alloc
