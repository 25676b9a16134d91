// What one compile did, per module of the pipeline (DESIGN.md), for `act compile --stats`,
// benchmarks and failure messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace act::codegen {

enum class StopReason {
  Exhausted,       // every pii graph the explorer can produce was tried
  Heuristic,       // §7: no better candidate for patience x the time (or count) of the best
  CandidateLimit,  // Options::max_candidates programs produced
  Timeout,         // Options::timeout reached
};

constexpr std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::Exhausted: return "enumeration exhausted";
    case StopReason::Heuristic: return "termination heuristic";
    case StopReason::CandidateLimit: return "candidate limit";
    case StopReason::Timeout: return "timeout";
  }
  return "?";
}

// One program the code generator produced, for --stats: which candidates it weighed.
struct CandidateSummary {
  std::size_t instructions = 0;
  double cost = 0;
  double seconds = 0;   // when it was found, since the compile began
  std::string mix;      // "name x count" per instruction, most frequent first
};

struct Statistics {
  // Module 1: e-graph initializer.
  double init_seconds = 0;
  std::size_t initial_enodes = 0;
  // Module 2: rewrite applier (equality saturation), summed over the explorer's rounds.
  double rule_set_seconds = 0;  // generating the rules from the ISA (once per compile)
  double rewrite_seconds = 0;
  std::size_t rules = 0;
  std::size_t iterations = 0;
  std::size_t enodes = 0;    // live e-nodes at the end
  std::size_t eclasses = 0;
  bool saturated = false;
  std::string rewrite_stop;  // why the last rewriting run stopped ("node limit", ...), empty before any
  std::size_t split_retries = 0;  // e-graphs rebuilt with outputs split deeper (group_explorer.hpp)
  std::size_t last_retries = 0;  // last retries: intermediate dots in row pieces, then integer narrowing
  // Rule applications that changed the e-graph, by kind (IR->IR axioms are what the paper's
  // "rewrites applied" counts), and the most applied rules as "name count", most first.
  std::size_t axioms_applied = 0;
  std::size_t isa_rules_applied = 0;       // IR->ISA rules, the movement-instruction rule included
  std::size_t identity_rules_applied = 0;  // slice^H / concat^H, constant byte views, the view rule
  std::vector<std::string> top_rules;
  // Every rule that changed the e-graph, by name, with its count (most applied first): the
  // attempts' rule lists are summed by name, so a rule only a retry builds is listed too.
  std::vector<std::pair<std::string, std::size_t>> rules_applied;
  // Where rewriting's time goes: the rules that took longest (searching and applying) as
  // "name 12.3 ms", longest first, and the rebuilds between iterations.
  std::vector<std::string> slowest_rules;
  double rebuild_seconds = 0;
  // Module 3: extraction (explorer time not spent rewriting).
  double extract_seconds = 0;
  std::uint64_t extraction_steps = 0;  // search work (DFS steps, bound visits; select::SearchWork)
  std::size_t rounds = 0;       // k of the last round
  std::size_t budget = 0;       // Γ(k) of the last round
  std::size_t pii_graphs = 0;   // pii graphs handed to phase 2
  // Modules 4-6: scheduling, CSP, emission (summed over every pii graph tried).
  double schedule_emit_seconds = 0;  // modules 4 and 6
  double csp_seconds = 0;            // module 5
  std::size_t schedules_tried = 0;
  std::size_t schedules_pruned = 0;
  std::size_t allocation_failures = 0;  // pii graphs phase 2 could not allocate
  std::size_t live_range_splits = 0;    // reloads and spills phase 2 inserted (all graphs)
  std::size_t csp_variables = 0;        // of the chosen program's CSP (0: solved constructively)
  std::size_t csp_constraints = 0;
  std::size_t interference_edges = 0;
  // Code generator (§7).
  std::size_t candidates = 0;      // programs produced
  std::size_t best_candidate = 0;  // 1-based index of the chosen one (0: none)
  double best_seconds = 0;         // when it was found, since the compile began
  double cost_seconds = 0;         // spent in the cost model
  double total_seconds = 0;
  StopReason stop = StopReason::Exhausted;
  static constexpr std::size_t kListedCandidates = 32;
  std::vector<CandidateSummary> candidate_list;  // the first kListedCandidates, in order found

  // A few lines, one per module.
  std::string to_string() const {
    std::string out;
    out += fmt::format("module 1 init:      {:8.3f} ms, {} e-nodes\n", init_seconds * 1e3, initial_enodes);
    out += fmt::format("module 2 rewrite:   {:8.3f} ms, {} rules (built in {:.3f} ms), {} iterations, {} e-nodes, {} e-classes{}\n",
                       rewrite_seconds * 1e3, rules, rule_set_seconds * 1e3, iterations, enodes, eclasses,
                       saturated ? ", saturated" : "");
    out += fmt::format("  rules applied:    {} IR->IR axioms, {} IR->ISA, {} identity/constant; most applied: {}\n",
                       axioms_applied, isa_rules_applied, identity_rules_applied, fmt::join(top_rules, ", "));
    if (!slowest_rules.empty())
      out += fmt::format("  rule time:        {}; rebuilds {:.1f} ms\n", fmt::join(slowest_rules, ", "), rebuild_seconds * 1e3);
    out += fmt::format("module 3 extract:   {:8.3f} ms, {} pii graphs, {} rounds, budget {}, {} steps\n", extract_seconds * 1e3,
                       pii_graphs, rounds, budget, extraction_steps);
    out += fmt::format("module 4+6 sched:   {:8.3f} ms, {} schedules tried, {} pruned, {} live ranges split, {} pii graphs not allocated\n",
                       schedule_emit_seconds * 1e3, schedules_tried, schedules_pruned, live_range_splits, allocation_failures);
    out += fmt::format("module 5 csp:       {:8.3f} ms, chosen CSP: {} variables, {} constraints, {} interference edges\n",
                       csp_seconds * 1e3, csp_variables, csp_constraints, interference_edges);
    out += fmt::format("codegen:            {:8.3f} ms total, {} candidates, best #{} at {:.3f} ms, cost model {:.3f} ms; "
                       "stopped by {}\n",
                       total_seconds * 1e3, candidates, best_candidate, best_seconds * 1e3, cost_seconds * 1e3,
                       codegen::to_string(stop));
    for (std::size_t k = 0; k < candidate_list.size(); ++k) {
      const CandidateSummary& c = candidate_list[k];
      out += fmt::format("  candidate #{}{} at {:.3f} ms: {} instructions, cost {}: {}\n", k + 1, k + 1 == best_candidate ? " (best)" : "",
                         c.seconds * 1e3, c.instructions, c.cost, c.mix);
    }
    return out;
  }
};

}  // namespace act::codegen
