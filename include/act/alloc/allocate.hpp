// Phase 2 driver (modules 4-6 with the intra-phase fallback of §6.4): try schedules in order
// (the esun order first), solve each schedule's CSP, emit the first that succeeds. A schedule
// whose CSP is unsatisfiable records its unsat core (a subgraph of its interference graph);
// later schedules whose interference graph contains a recorded one are skipped. An empty core
// means CSP1-3 conflict on their own, and a core of interferences every schedule has
// (ForcedInterference) means the same: no schedule of that graph can succeed. A core that
// reordering does not resolve is answered by splitting a live range (a reload or a spill to HBM
// scratch, live_range_split.hpp) and allocating the changed graph.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/alloc/csp.hpp"
#include "act/alloc/emit.hpp"
#include "act/alloc/live_range_split.hpp"
#include "act/alloc/output_copies.hpp"
#include "act/alloc/spill_plan.hpp"
#include "act/alloc/schedule.hpp"
#include "act/alloc/values.hpp"
#include "act/select/on_chip_reads.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::alloc {

struct AllocateOptions {
  CspOptions csp;
  std::size_t max_schedules = 64;     // CSPs solved at most, per graph version
  // Live-range splits (spill/reload, rematerialisation) tried per pii graph before phase 2
  // falls back to enumerating orders, and the CSPs solved per split version before splitting.
  std::size_t max_splits = 64;
  std::size_t schedules_per_split = 8;
  std::size_t max_orders = kDefaultMaxOrders;  // orders looked at per graph version (schedule.hpp)
  // Live-range splits may copy the other operands of a concat^H that reads the value
  // (live_range_split.hpp). The backend first allocates each graph without them, and gives the
  // graphs that needed them a second attempt later (codegen/backend.hpp).
  bool split_through_concat = true;
  // No schedule is tried after it, and each Z3 call gets at most the time left (the compile's
  // deadline: a per-call timeout alone let 64 schedules take 64 budgets).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct AllocateStats {
  std::size_t schedules_tried = 0;   // CSPs solved
  std::size_t schedules_pruned = 0;  // orders skipped by §6.4 pruning
  std::size_t csp_variables = 0;     // of the last Z3 problem
  std::size_t csp_constraints = 0;
  std::size_t interference_edges = 0;  // of the last schedule tried
  double solve_seconds = 0;          // all CSPs
  double seconds = 0;                // the whole phase
  SolvedBy solved_by = SolvedBy::None;
  std::size_t live_range_splits = 0;   // reloads and spills phase 2 inserted
  std::vector<std::string> splits;     // what each one did
};

struct AllocateResult {
  std::optional<sim::Program> program;  // nothing: no schedule could be allocated
  Schedule schedule;                    // the schedule that succeeded
  std::optional<Assignment> assignment;
  std::string message;                  // why it failed (empty on success)
  // Failed, and some live-range split was refused only because AllocateOptions::
  // split_through_concat was off: an attempt with it may allocate the graph.
  bool concat_split_refused = false;
  AllocateStats stats;
  std::optional<select::PiiGraph> graph;  // the graph allocated, when phase 2 split live ranges

  explicit operator bool() const { return program.has_value(); }
};

namespace allocate_detail {

// When `schedule` keeps more on chip at one time than a buffer holds (the units of the storage
// values live together, in the buffer's access dims, exceed its size): the fewest values live
// together that overfill a buffer, as an unsat core (every pair of them an interference edge).
// Disjoint boxes cannot hold more than the buffer's volume, so the CSP is unsatisfiable without
// asking Z3, which proves such pigeonhole cores slowly (a 230-node AVX-512 graph with 40
// registers live: over 9 s). The smallest core over all buffers and times, as Z3's would be: a
// small core prunes more orders, and the live-range split picks among its edges (regression
// qkv_spill_424242_7 needs the two-value core in d2, not a three-value one in d1). Nothing when
// that core has fewer than kMinOverfullCore values: the CSP solver decides a pair at once (by
// the address equalities and bounds, csp.hpp forced_conflict, or Z3), and its cores for pairs
// serve the repairs better (with the pair as the core, one QKV random kernel of
// bench/compile_time took 2.2 s instead of under 0.2 s).
inline constexpr std::size_t kMinOverfullCore = 3;
inline std::optional<CspResult> overfull_point(const GraphValues& values, const Schedule& schedule) {
  const std::vector<LiveRange> live = live_ranges(values, schedule);
  std::vector<std::int64_t> units(values.size(), 1);
  for (std::size_t i = 0; i < values.size(); ++i)
    for (auto l : values.length[i]) units[i] *= l;
  auto units_of = [&](std::size_t i) { return units[i]; };
  std::optional<CspResult> best;
  std::size_t best_size = 0;
  for (std::size_t b = 0; b < values.isa.buffers.size(); ++b) {
    const isa::Buffer& buffer = values.isa.buffers[b];
    if (buffer.is_hbm) continue;
    std::int64_t capacity = 1;
    for (auto a : buffer.access_dims) capacity *= a;
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values.storage[i] && !values.node(i).is_leaf() && static_cast<std::size_t>(values.node(i).buffer) == b &&
          live[i].begin <= live[i].end)
        members.push_back(i);
    if (members.empty()) continue;
    // The load at every time point in one pass (+units at a begin, -units after an end), not a
    // pass over every member per member (quadratic on programs of 1,000 instructions).
    std::int64_t first = live[members[0]].begin, last = live[members[0]].end;
    for (std::size_t m : members) {
      first = std::min(first, live[m].begin);
      last = std::max(last, live[m].end);
    }
    std::vector<std::int64_t> load_at(static_cast<std::size_t>(last - first + 2), 0);
    for (std::size_t m : members) {
      load_at[static_cast<std::size_t>(live[m].begin - first)] += units_of(m);
      load_at[static_cast<std::size_t>(live[m].end - first + 1)] -= units_of(m);
    }
    for (std::size_t t = 1; t < load_at.size(); ++t) load_at[t] += load_at[t - 1];
    // No point of this buffer overfills it with fewer values than the largest ones would: once
    // the best core is that small, the other points cannot replace it (ties keep the first), and
    // building each overfull point's core is a pass over every member (a schedule keeping 200
    // registers live overfills at most points: quadratic, 4 % of AMX compile-time seed 2 kernel 87).
    std::int64_t largest = 1;
    for (std::size_t m : members) largest = std::max(largest, units_of(m));
    const auto fewest = static_cast<std::size_t>((capacity + largest) / largest);
    // Every load peak is at some value's first time point (live ranges are intervals).
    for (std::size_t m : members) {
      if (best && best_size <= fewest) break;
      const std::int64_t t = live[m].begin;
      const std::int64_t load = load_at[static_cast<std::size_t>(t - first)];
      if (load <= capacity) continue;
      std::vector<std::size_t> clique;
      for (std::size_t i : members)
        if (live[i].begin <= t && t <= live[i].end) clique.push_back(i);
      // The fewest of them that still overfill the buffer: the largest.
      std::stable_sort(clique.begin(), clique.end(), [&](std::size_t x, std::size_t y) { return units_of(x) > units_of(y); });
      std::int64_t kept = 0;
      std::size_t count = 0;
      while (kept <= capacity) kept += units_of(clique[count++]);
      if (best && count >= best_size) continue;
      clique.resize(count);
      std::sort(clique.begin(), clique.end());
      CspResult r;
      r.status = CspStatus::Unsat;
      for (std::size_t x = 0; x < clique.size(); ++x)
        for (std::size_t y = x + 1; y < clique.size(); ++y) r.core.emplace_back(clique[x], clique[y]);
      r.message = fmt::format("the schedule keeps {} units of buffer '{}' live at once, which holds {} ({} values need {})",
                              load, buffer.name, capacity, count, kept);
      best = std::move(r);
      best_size = count;
    }
  }
  if (best_size < kMinOverfullCore) return std::nullopt;
  return best;
}

// The instructions a pii graph's program has (its pii nodes; identity nodes emit nothing).
inline std::size_t instruction_count(const select::PiiGraph& graph) {
  return static_cast<std::size_t>(std::count_if(graph.nodes().begin(), graph.nodes().end(),
                                                [](const select::PiiNode& n) { return n.kind == select::PiiNodeKind::Pii; }));
}

// The schedules of one graph version: what worked, or the last failing schedule and its core.
struct Attempt {
  std::optional<sim::Program> program;
  Schedule schedule;  // the one that succeeded, or the last one whose CSP was unsatisfiable
  std::optional<Assignment> assignment;
  InterferenceGraph core;  // the last unsat core (empty: none, or CSP1-3 alone conflict)
  std::vector<std::pair<Schedule, InterferenceGraph>> failures;  // every unsat schedule and its core
  std::string failure;     // why the last schedule failed
  bool hopeless = false;   // no schedule of this graph can succeed (empty or forced core)
};

// The CSP options for one more schedule: options.csp with Z3 given at most the time left before
// options.deadline; nothing once the deadline has passed.
inline std::optional<CspOptions> csp_options_now(const AllocateOptions& options) {
  CspOptions csp = options.csp;
  if (options.deadline == std::chrono::steady_clock::time_point::max()) return csp;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(options.deadline - std::chrono::steady_clock::now()).count();
  if (left <= 0) return std::nullopt;
  const auto cap = static_cast<unsigned>(std::min<long long>(left, std::numeric_limits<unsigned>::max()));
  csp.timeout_ms = csp.timeout_ms ? std::min(csp.timeout_ms, cap) : cap;
  return csp;
}

// Solves the CSP of one schedule (counted in `stats`): an overfull point's core without asking
// the solver, or the solver's answer.
// `interference()` gives the schedule's interference graph, built only when the solver needs it.
template <class InterferenceOf>
CspResult solve_schedule(const GraphValues& values, const Schedule& schedule, const InterferenceOf& interference,
                         CspSolver& solver, const CspOptions& csp, AllocateStats& stats) {
  ++stats.schedules_tried;
  std::optional<CspResult> overfull = overfull_point(values, schedule);
  CspResult r = overfull ? std::move(*overfull) : solver.solve(values, schedule, interference(), csp);
  stats.solve_seconds += r.stats.seconds;
  stats.interference_edges = r.stats.interference_edges;
  if (r.stats.variables) {
    stats.csp_variables = r.stats.variables;
    stats.csp_constraints = r.stats.constraints;
  }
  return r;
}

// Tries schedules of `values` (hinted first; with `enumerate`, every topological order after
// the repairs) until one allocates, `max_schedules` CSPs were solved, or the deadline passes.
inline Attempt try_schedules(const GraphValues& values, ScheduleGenerator::Constraints hints, bool enumerate,
                             std::size_t max_schedules, CspSolver& solver, const AllocateOptions& options,
                             AllocateStats& stats) {
  Attempt a;
  ScheduleGenerator schedules(values, options.max_orders, options.deadline, std::move(hints), enumerate);
  for (std::size_t tried = 0; tried < max_schedules;) {
    std::optional<Schedule> schedule = schedules.next();
    if (!schedule) break;
    const std::optional<CspOptions> csp = csp_options_now(options);
    if (!csp) {
      a.failure = "the compile's deadline passed";
      break;
    }
    ++tried;
    CspResult r = solve_schedule(values, *schedule, [&]() -> const InterferenceGraph& { return schedules.last_interference(); },
                                 solver, *csp, stats);
    if (r.status == CspStatus::Sat) {
      a.program = emit(values, *schedule, *r.assignment);
      a.schedule = std::move(*schedule);
      a.assignment = std::move(r.assignment);
      stats.solved_by = r.stats.solved_by;
      break;
    }
    a.failure = r.message;
    if (r.status != CspStatus::Unsat) continue;
    a.schedule = *schedule;
    a.core = r.core;
    if (!r.core.empty()) a.failures.emplace_back(*schedule, r.core);
    if (r.core.empty()) {  // no schedule can help
      a.hopeless = true;
      break;
    }
    if (schedules.unavoidable(r.core)) {  // every schedule has the core: none can help
      a.failure += "; every schedule has these interferences";
      a.hopeless = true;
      break;
    }
    schedules.add_failed(std::move(r.core));
  }
  stats.schedules_pruned += schedules.pruned();
  return a;
}

// Why no allocation of `values` exists whatever the schedule or the splits, when one instruction
// reads more of a buffer at once than the buffer holds (select/on_chip_reads.hpp); nothing
// otherwise.
inline std::optional<std::string> overfull_instruction(const GraphValues& values) {
  const select::OnChipReads reads(*values.graph, values.isa);
  for (std::size_t q = 0; q < values.size(); ++q) {
    if (values.node(q).kind != select::PiiNodeKind::Pii) continue;
    for (std::size_t b = 0; b < values.isa.buffers.size(); ++b)
      if (reads.overfills(q, b))
        return fmt::format("%{} ({}) reads {} units of buffer '{}' at once, which holds {}", q,
                           values.isa.instructions[static_cast<std::size_t>(values.node(q).index)].name, reads.reads(q, b),
                           values.isa.buffers[b].name, reads.capacity(b));
  }
  return std::nullopt;
}

}  // namespace allocate_detail

namespace allocate_detail {

// Allocates one pii graph as it is (repeated roots copied). Order of fallbacks: the esun schedule
// and the schedules repairing its unsat cores; then, while a core names a live range that can be
// split (live_range_split.hpp), the graph with that range split, again with repairs only;
// finally every topological order of the last graph (§6.4).
inline AllocateResult allocate_graph(const select::PiiGraph& graph, const isa::IsaView& isa, const select::ConstantTable& constants,
                                     const sim::KernelImage& image, CspSolver& solver, const AllocateOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  AllocateResult result;
  SpillTable spills(isa);
  select::PiiGraph current = with_distinct_outputs(graph);
  const bool copied_outputs = current.nodes().size() != graph.nodes().size();
  ScheduleGenerator::Constraints hints;
  std::string failure;
  // The allocation an attempt found, of `allocated` (kept in the result when phase 2 changed it).
  auto take = [&](allocate_detail::Attempt& a, select::PiiGraph& allocated, bool changed) {
    result.program = std::move(a.program);
    result.schedule = std::move(a.schedule);
    result.assignment = std::move(a.assignment);
    if (changed) result.graph = std::move(allocated);
  };
  for (std::size_t split = 0;; ++split) {
    const GraphValues values = analyze_values(current, isa, constants, image);
    // Splitting stops after max_splits versions or max_schedules CSPs, whichever comes first.
    const std::size_t left = options.max_schedules - std::min(options.max_schedules, result.stats.schedules_tried);
    const bool may_split = split < options.max_splits && left > 0;
    allocate_detail::Attempt a = allocate_detail::try_schedules(values, hints, !may_split,
                                                                may_split ? std::min(options.schedules_per_split, left)
                                                                          : options.max_schedules,
                                                                solver, options, result.stats);
    failure = a.failure;
    if (a.program) {
      take(a, current, split > 0 || copied_outputs);
      break;
    }
    if (!may_split || std::chrono::steady_clock::now() >= options.deadline) break;
    // An instruction that reads more than its buffer holds cannot be helped by any split.
    if (std::optional<std::string> why = allocate_detail::overfull_instruction(values)) {
      failure = *why;
      break;
    }
    if (split == 0 && !a.hopeless) {
      // The esun order gives identity nodes no memory, so an output assembled by a chain of
      // concat^H looks free and its big pieces come first; a piece that needs room to be built
      // then finds none (regression qkv_transposed_concats_beside_output). The order that
      // counts what each concat^H holds is tried once before any live range is split. Its
      // failure is forgotten: the repairs below go on from the orders tried so far.
      const Schedule held = esun_schedule(values, IdentityMemory::Aliased);
      const bool tried = std::any_of(a.failures.begin(), a.failures.end(), [&](const auto& f) { return f.first.order == held.order; });
      if (const std::optional<CspOptions> csp = allocate_detail::csp_options_now(options); csp && !tried) {
        CspResult r = allocate_detail::solve_schedule(values, held, [&] { return interference_graph(values, held); }, solver, *csp, result.stats);
        if (r.status == CspStatus::Sat) {
          a.program = emit(values, held, *r.assignment);
          a.schedule = held;
          a.assignment = std::move(r.assignment);
          result.stats.solved_by = r.stats.solved_by;
          take(a, current, copied_outputs);
          break;
        }
      }
    }
    // First, once: spill by furthest next use along the esun order or, when that order needs no
    // spill, along the latest repaired order that failed (it avoids interferences no spill
    // removes). The plan along some other failed order may add fewer instructions: that one is
    // tried first, with the repairs of its own cores only, and kept if it allocates. Which
    // orders failed depends on how the cores were found, so the cheapest is not always the
    // usual one; it does not always allocate either (QKV soak kernels timed out when it
    // replaced the usual plan). The single split a failed core asks for is no candidate here:
    // it could be shorter still (QKV compile-time kernel 13: 34 instructions against 36, before
    // the planner moved output stores up), but tried first it failed on 13 other kernels of that
    // study, after 8 CSPs (20-90 ms) each.
    // Plans that move output stores up (spill_plan.hpp) are one more trial before those: the
    // usual plan, the fallback, spills every value that leaves (a plan that only reordered
    // failed where the spilling plan allocated: QKV complete-mode soak kernel 290 of seed
    // 20261123), and the cheapest spilling plan keeps its trial (when the early-store plan took
    // its place and failed, kernel 674 of that soak lost the plan that allocated: 1.2 s -> 4.2 s).
    if (split == 0) {
      const Schedule esun = esun_schedule(values);
      std::optional<SpillPlan> usual = plan_spills(values, esun, spills, false);
      // The plan with the fewest instructions of each kind, spilling and moving stores up: only
      // counted here, and built (planned again) if it is tried.
      struct Candidate {
        const Schedule* along;
        bool move_stores_up;
        std::size_t count;  // instruction_count() of its graph
      };
      std::optional<Candidate> spilling, moving;
      auto consider = [](std::optional<Candidate>& best, const Schedule& along, bool move, std::optional<std::size_t> count) {
        if (count && (!best || *count < best->count)) best = Candidate{&along, move, *count};
      };
      consider(moving, esun, true, spill_plan_instruction_count(values, esun, spills, true));
      for (std::size_t k = a.failures.size(); k-- > 0;) {
        const Schedule& failed = a.failures[k].first;
        const std::optional<std::size_t> other = spill_plan_instruction_count(values, failed, spills, false);
        consider(spilling, failed, false, other);
        consider(moving, failed, true, spill_plan_instruction_count(values, failed, spills, true));
        if (other && !usual) usual = plan_spills(values, failed, spills, false);
      }
      // Each trial gets at most schedules_per_split CSPs; the first that allocates is kept.
      auto allocates = [&](const Candidate& candidate) {
        std::optional<SpillPlan> built = plan_spills(values, *candidate.along, spills, candidate.move_stores_up);
        if (!built) return false;  // cannot happen: the same planning counted it
        SpillPlan& plan = *built;
        const GraphValues trial_values = analyze_values(plan.graph, isa, constants, image);
        const std::size_t budget = options.max_schedules - std::min(options.max_schedules, result.stats.schedules_tried);
        allocate_detail::Attempt trial = allocate_detail::try_schedules(
            trial_values, plan.order, false, std::min(options.schedules_per_split, budget), solver, options, result.stats);
        if (!trial.program) return false;
        result.stats.live_range_splits += plan.spills + plan.recomputes;
        result.stats.splits.push_back(plan.description);
        take(trial, plan.graph, true);
        return true;
      };
      const std::size_t usual_count = usual ? allocate_detail::instruction_count(usual->graph) : 0;
      if (usual && moving && moving->count < usual_count && (!spilling || moving->count < spilling->count) && allocates(*moving))
        break;
      if (usual && spilling && spilling->count < usual_count && allocates(*spilling)) break;
      if (usual) {
        result.stats.live_range_splits += usual->spills + usual->recomputes;
        result.stats.splits.push_back(usual->description);
        current = std::move(usual->graph);
        hints = std::move(usual->order);
        continue;
      }
    }
    // The latest core that names a splittable live range (an earlier one may, when the last
    // only involves values that cannot leave their buffer).
    std::optional<LiveRangeSplit> next;
    for (std::size_t k = a.failures.size(); k-- > 0 && !next;)
      next = split_live_range(values, a.failures[k].first, a.failures[k].second, spills, options.split_through_concat,
                              &result.concat_split_refused);
    if (!next) {
      if (a.hopeless) break;
      // Nothing to split: every order of this graph, as phase 2 did before splitting.
      allocate_detail::Attempt full =
          allocate_detail::try_schedules(values, hints, true, options.max_schedules, solver, options, result.stats);
      failure = full.failure.empty() ? failure : full.failure;
      if (full.program) take(full, current, split > 0 || copied_outputs);
      break;
    }
    ++result.stats.live_range_splits;
    result.stats.splits.push_back(next->description);
    current = std::move(next->graph);
    hints = std::move(next->hints);
  }
  if (!result.program)
    result.message = fmt::format("phase 2 found no allocation after {} schedule(s) ({} pruned, {} live range(s) split): {}",
                                 result.stats.schedules_tried, result.stats.schedules_pruned, result.stats.live_range_splits,
                                 failure.empty() ? "no schedule left" : failure);
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

// `later`'s statistics added to `earlier`'s (two allocations of one pii graph).
inline AllocateStats combined(AllocateStats earlier, const AllocateStats& later) {
  earlier.schedules_tried += later.schedules_tried;
  earlier.schedules_pruned += later.schedules_pruned;
  earlier.csp_variables = later.csp_variables;
  earlier.csp_constraints = later.csp_constraints;
  earlier.interference_edges = later.interference_edges;
  earlier.solve_seconds += later.solve_seconds;
  earlier.seconds += later.seconds;
  earlier.solved_by = later.solved_by;
  earlier.live_range_splits += later.live_range_splits;
  earlier.splits.insert(earlier.splits.end(), later.splits.begin(), later.splits.end());
  return earlier;
}

}  // namespace allocate_detail

// Allocates one pii graph. `solver` may be shared across calls (one Z3 context per compile).
// Throws act::Error when the graph does not fit the ISA or the kernel (values.hpp).
// The graph as extracted first; when that fails and an output is also a piece of a value
// assembled in HBM, again with that output's bytes apart (output_copies.hpp). Not the other way
// round: where the shared bytes fit, the copy would only add stores.
inline AllocateResult allocate(const select::PiiGraph& graph, const isa::IsaView& isa, const select::ConstantTable& constants,
                               const sim::KernelImage& image, CspSolver& solver, const AllocateOptions& options = {}) {
  AllocateResult shared = allocate_detail::allocate_graph(graph, isa, constants, image, solver, options);
  if (shared.program || std::chrono::steady_clock::now() >= options.deadline) return shared;
  if (!places_an_output(graph)) return shared;
  select::PiiGraph apart = with_outputs_apart(graph);
  AllocateResult separate = allocate_detail::allocate_graph(apart, isa, constants, image, solver, options);
  separate.stats = allocate_detail::combined(std::move(shared.stats), separate.stats);
  if (!separate.program) {
    shared.stats = separate.stats;
    shared.concat_split_refused = shared.concat_split_refused || separate.concat_split_refused;
    return shared;
  }
  if (!separate.graph) separate.graph = std::move(apart);
  return separate;
}

inline AllocateResult allocate(const select::PiiGraph& graph, const isa::IsaView& isa, const select::ConstantTable& constants,
                               const sim::KernelImage& image, const AllocateOptions& options = {}) {
  CspSolver solver;
  return allocate(graph, isa, constants, image, solver, options);
}

}  // namespace act::alloc
