// Phase 2 driver (modules 4-6 with the intra-phase fallback of §6.4): try schedules in order
// (the esun order first), solve each schedule's CSP, emit the first that succeeds. A schedule
// whose CSP is unsatisfiable records its unsat core (a subgraph of its interference graph);
// later schedules whose interference graph contains a recorded one are skipped. An empty core
// means CSP1-3 conflict on their own, and a core of interferences every schedule has
// (ForcedInterference) means the same: no schedule can succeed and the search stops.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "act/alloc/csp.hpp"
#include "act/alloc/emit.hpp"
#include "act/alloc/schedule.hpp"
#include "act/alloc/values.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::alloc {

struct AllocateOptions {
  CspOptions csp;
  std::size_t max_schedules = 64;     // CSPs solved at most
  std::size_t max_orders = 100000;    // topological orders looked at (pruned ones included)
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
};

struct AllocateResult {
  std::optional<sim::Program> program;  // nothing: no schedule could be allocated
  Schedule schedule;                    // the schedule that succeeded
  std::optional<Assignment> assignment;
  std::string message;                  // why it failed (empty on success)
  AllocateStats stats;

  explicit operator bool() const { return program.has_value(); }
};

// Allocates one pii graph. `solver` may be shared across calls (one Z3 context per compile).
// Throws act::Error when the graph does not fit the ISA or the kernel (values.hpp).
inline AllocateResult allocate(const select::PiiGraph& graph, const isa::IsaView& isa, const select::ConstantTable& constants,
                               const sim::KernelImage& image, CspSolver& solver, const AllocateOptions& options = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  AllocateResult result;
  const GraphValues values = analyze_values(graph, isa, constants, image);
  ScheduleGenerator schedules(values, options.max_orders, options.deadline);
  std::string last_failure;
  while (result.stats.schedules_tried < options.max_schedules) {
    std::optional<Schedule> schedule = schedules.next();
    if (!schedule) break;
    CspOptions csp = options.csp;
    if (options.deadline != std::chrono::steady_clock::time_point::max()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(options.deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        last_failure = "the compile's deadline passed";
        break;
      }
      const auto cap = static_cast<unsigned>(std::min<long long>(left, std::numeric_limits<unsigned>::max()));
      csp.timeout_ms = csp.timeout_ms ? std::min(csp.timeout_ms, cap) : cap;
    }
    ++result.stats.schedules_tried;
    const InterferenceGraph& interference = schedules.last_interference();
    CspResult r = solver.solve(values, *schedule, interference, csp);
    result.stats.solve_seconds += r.stats.seconds;
    result.stats.interference_edges = r.stats.interference_edges;
    if (r.stats.variables) {
      result.stats.csp_variables = r.stats.variables;
      result.stats.csp_constraints = r.stats.constraints;
    }
    if (r.status == CspStatus::Sat) {
      result.program = emit(values, *schedule, *r.assignment);
      result.schedule = std::move(*schedule);
      result.assignment = std::move(r.assignment);
      result.stats.solved_by = r.stats.solved_by;
      break;
    }
    last_failure = r.message;
    if (r.status == CspStatus::Unsat) {
      if (r.core.empty()) break;  // no schedule can help
      if (schedules.unavoidable(r.core)) {  // every schedule has the core: none can help
        last_failure += "; every schedule has these interferences";
        break;
      }
      schedules.add_failed(std::move(r.core));
    }
  }
  result.stats.schedules_pruned = schedules.pruned();
  if (!result.program)
    result.message = fmt::format("phase 2 found no allocation after {} schedule(s) ({} pruned): {}", result.stats.schedules_tried,
                                 result.stats.schedules_pruned, last_failure.empty() ? "no schedule left" : last_failure);
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

inline AllocateResult allocate(const select::PiiGraph& graph, const isa::IsaView& isa, const select::ConstantTable& constants,
                               const sim::KernelImage& image, const AllocateOptions& options = {}) {
  CspSolver solver;
  return allocate(graph, isa, constants, image, solver, options);
}

}  // namespace act::alloc
