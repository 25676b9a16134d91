// §5.4 (Fig. 11b): exploration and extraction interleaved, so every pii graph equivalent to the
// kernel is eventually yielded even when saturation or extraction alone would never finish.
// Each round first offers the greedy graph of the current e-graph (Extractor::greedy, if not
// yielded before): a large program (K1's 23 nodes) is found without enumerating every smaller
// graph first; completeness still comes from the enumeration that follows. Each round's greedy
// graph is followed by the greedy graph whose in-place readers own their storage (greedy.hpp,
// claim_in_place) and by the greedy graphs without each instruction that writes one of its roots.
// Round k = 1, 2, ...: run `iterations_per_round` more exploration iterations (until the
// e-graph saturates or the runner hits a node/time limit), then extract every pii graph of at
// most Γ(k) = 2^k instruction nodes not yielded in an earlier round (smallest first within the
// round; see extractor.hpp for the order). Stops when the e-graph is saturated (or can no longer
// grow) and the last extraction was exhaustive, or at max_rounds / max_budget.
//
// One runner serves every round and keeps its backoff schedule between them (runner.hpp), so an
// explosive axiom (x -> copy(x) on every class, splitting every slice) is banned for a few
// rounds while the rest make progress, as in egg. The caller exempts the rules that produce pii
// nodes (RunnerOptions::never_ban); node and time limits apply per round.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <utility>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/egraph/rewrite.hpp"
#include "act/egraph/runner.hpp"
#include "act/select/search/extractor.hpp"
#include "act/select/pii_graph.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select {


struct ExplorerOptions {
  egraph::RunnerOptions runner;        // node and time limits per round, backoff schedule
  std::size_t iterations_per_round = 1;
  // From this round on, each round runs twice as many iterations (a larger kernel's e-graph
  // needs more rewriting between extractions than rounds are left for; extraction, not
  // rewriting, is what a round's cost is mostly made of).
  std::size_t longer_rounds_from = 9;
  std::size_t max_rounds = 24;
  // Past max_rounds, rounds go on while the e-graph still grows but stays small (at most
  // settling_nodes e-nodes), up to settling_rounds more: a small e-graph still growing at round
  // 24 is mostly one about to saturate, and a saturated one proves that no program exists
  // (Gemmini sound soak, 200 kernels, seed 4242: 159 proofs, 100 before; docs/soak.md). A
  // large one is left alone: more rounds there cost seconds and end at the node limit (AMX).
  std::size_t settling_nodes = 24576;
  std::size_t settling_rounds = 24;
  std::size_t max_budget = 1 << 12;    // cap on Γ(k)
  std::size_t graphs_per_round = 32;   // while the e-graph grows (0: no cap); see next()
  ExtractorOptions extractor;          // max_size is set by the explorer each round
  // The enumeration stops (timed_out()) once this passes: no round starts after it, and each
  // round's extractor gets the earlier of it and extractor.deadline. The runner's own
  // time_limit still bounds one exploration round.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

class Explorer {
 public:
  // `graph` holds the kernel (module 1) and is grown by `rules`; it, `context` and the rules
  // must outlive the explorer.
  Explorer(TensorGraph& graph, const SelectionContext& context, std::vector<egraph::Id> roots,
           std::span<const TensorRewrite> rules, ExplorerOptions options = {})
      : graph_(graph), context_(context), roots_(std::move(roots)), rules_(rules), options_(std::move(options)) {
    if (roots_.empty()) throw Error(ErrorKind::Internal, "explore: no roots");
    options_.runner.iteration_limit = std::max<std::size_t>(1, options_.iterations_per_round);
    runner_.emplace(options_.runner);
  }
  Explorer(const Explorer&) = delete;
  Explorer& operator=(const Explorer&) = delete;

  // The next pii graph not yielded before, or nullopt when the enumeration is over.
  // With `until`: also stop (for good, as a timeout) once `until` passes, even inside an
  // extraction level (the code generator's termination heuristic).
  // With `extraction_slice` > 0: also return nullopt, with paused(), once an extraction has
  // spent that many units of work without a graph; the next call resumes it. An explorer that
  // has yielded no graph yet also pauses between rounds (after at least one): its rewriting,
  // not its extraction, is then what runs long, and the output groups take turns at it
  // (group_explorer.hpp), so a group that is quickly proved to have no graph ends the search
  // while another group's e-graph still grows.
  std::optional<PiiGraph> next(std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max(),
                               std::uint64_t extraction_slice = 0) {
    paused_ = false;
    if (finished_) return std::nullopt;
    until_ = std::min(options_.deadline, until);
    if (extractor_) extractor_->set_deadline(until_);
    bool rewrote = false;  // a round started in this call
    for (;;) {
      if (extractor_) {
        if (auto g = next_greedy()) return g;
        // While the e-graph still grows, a round yields at most graphs_per_round graphs before
        // the next round rewrites more and offers its greedy graph: many small graphs phase 2
        // cannot allocate must not starve a larger one the next round can find. Later rounds
        // enumerate again from size 1 (skipping graphs yielded before), so nothing is lost.
        const bool capped = growing_ && options_.graphs_per_round > 0 && round_yielded_ >= options_.graphs_per_round;
        if (!capped) {
          extractor_->pause_after(extraction_slice);
          if (auto g = extractor_->next()) {
            ++round_yielded_;
            return g;
          }
          if (extractor_->paused()) {
            paused_ = true;
            return std::nullopt;
          }
        }
        if (capped) {
          last_extractor_ = std::move(extractor_);
          if (std::chrono::steady_clock::now() >= until_) {
            timed_out_ = true;
            return finish();
          }
          if (past_round_limit()) return finish();
          start_round();
          continue;
        }
        const bool exhaustive = extractor_->exhaustive();
        timed_out_ = extractor_->timed_out();
        last_extractor_ = std::move(extractor_);
        if (timed_out_ || (!growing_ && exhaustive)) return finish();
      }
      if (std::chrono::steady_clock::now() >= until_) {
        timed_out_ = true;
        return finish();
      }
      if (past_round_limit()) return finish();
      if (!growing_ && budget_ >= options_.max_budget) return finish();
      if (extraction_slice > 0 && rewrote && seen_.size() == 0) {
        paused_ = true;
        return std::nullopt;
      }
      start_round();
      rewrote = true;
    }
  }

  // Whether the round still has greedy graphs to offer (next_greedy may find them all
  // yielded before).
  bool greedy_ready() const {
    return !finished_ && extractor_ && (greedy_pending_ || claiming_pending_ || !bans_pending_.empty());
  }

  // The round's greedy graphs not yielded before, one per call, without enumerating or
  // rewriting: nullopt once they are all offered (next() then enumerates). A group explorer
  // takes these from every group before it lets one group enumerate (group_explorer.hpp).
  std::optional<PiiGraph> next_greedy() {
    if (finished_ || !extractor_) return std::nullopt;
    if (greedy_pending_) {
      greedy_pending_ = false;
      auto g = extractor_->greedy({}, false, &greedy_scratch_);
      // Then, one at a time, the greedy graph without each instruction that writes one of
      // its roots: a structurally different program for the cost model (Gemmini+: the
      // RISC matmuls next to loop_ws), which the size-ordered enumeration would reach only
      // after every smaller graph. Every round: the e-graph may only now hold one.
      bans_pending_ = g ? root_writers(*g) : std::vector<std::int64_t>{};
      claiming_pending_ = g && places_in_place_results(*g);
      if (g && seen_.insert(*g)) return g;
    }
    // Then the greedy graph whose in-place readers own their storage (greedy.hpp): the
    // plain one may place in-place results of one shared value side by side, which no
    // schedule allocates, and the enumeration reaches the repaired graph only after
    // every smaller one.
    if (claiming_pending_) {
      claiming_pending_ = false;
      if (auto g = extractor_->greedy({}, true, &greedy_scratch_); g && seen_.insert(*g)) return g;
    }
    while (!bans_pending_.empty()) {
      const std::int64_t ban = bans_pending_.front();
      bans_pending_.erase(bans_pending_.begin());
      if (auto g = extractor_->greedy({ban}, false, &greedy_scratch_); g && seen_.insert(*g)) return g;
    }
    return std::nullopt;
  }

  std::size_t round() const { return round_; }                  // k of the current round
  std::size_t budget() const { return budget_; }                // Γ(k)
  bool saturated() const { return saturated_; }
  bool finished() const { return finished_; }
  // The enumeration ended because options.deadline (or the extractor's) passed, not because
  // it was over: more graphs may exist.
  bool timed_out() const { return timed_out_; }
  // The last next() returned nullopt because its extraction slice was spent, not for good.
  bool paused() const { return paused_; }
  std::size_t yielded() const { return seen_.size(); }          // distinct graphs so far
  const std::vector<egraph::RunReport>& reports() const { return reports_; }
  // Why the enumeration ended (for "no program" messages): how exploration stopped, and
  // which root requests the e-graph cannot meet (Extractor::explain_unmet_roots), or that the
  // roots are reachable but no graph fits the budget. Rebuilds the e-graph if needed.
  std::string diagnosis() {
    if (!graph_.is_clean()) graph_.rebuild();
    std::string out = fmt::format("{} rounds, {} iterations, {} e-nodes, {} graphs yielded; exploration {}", round_,
                                  iterations(), graph_.num_nodes(), yielded(),
                                  reports_.empty() ? std::string("not run")
                                                   : fmt::format("stopped on {}", egraph::to_string(reports_.back().stop_reason)));
    const std::string unmet = unmet_roots();
    if (!unmet.empty()) return out + "\n" + unmet;
    return out + fmt::format("\nevery root can be produced; no further graph within {} instruction nodes", budget_);
  }

  // The root requests the current e-graph cannot meet and, for each, the first classes whose
  // operands are producible but which no instruction computes (empty when every root can be
  // produced). Rebuilds the e-graph if needed.
  // `until`: when to stop looking for nearest rules (explain_unmet_roots).
  std::string unmet_roots(std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max()) {
    return with_probe([until](const Extractor& e) { return e.explain_unmet_roots(4, until); });
  }

  // Extractor::unmet_byte_view_of_producible_value on the current e-graph.
  bool unmet_byte_view_of_producible_value() {
    return with_probe([](const Extractor& e) { return e.unmet_byte_view_of_producible_value(); });
  }

  // Extractor::unmet_root_exceeds_a_store on the current e-graph.
  bool unmet_root_exceeds_a_store() {
    return with_probe([](const Extractor& e) { return e.unmet_root_exceeds_a_store(); });
  }

  // Runs f on an extractor over the current e-graph (rebuilt if needed): the round's, when the
  // e-graph has not changed since it was built, else one that enumerates nothing (max_size 0).
  // The diagnoses read its request graph only.
  template <class F>
  std::invoke_result_t<F&, const Extractor&> with_probe(F f) {
    if (!graph_.is_clean()) graph_.rebuild();
    const Extractor* built = extractor_ ? extractor_.get() : last_extractor_.get();
    if (built && graph_.num_nodes() == extractor_nodes_ && graph_.num_classes() == extractor_classes_) return f(*built);
    ExtractorOptions probe = options_.extractor;
    probe.max_size = 0;
    probe.work = nullptr;  // a diagnosis is not enumeration work (and must not end on its limit)
    const Extractor extractor(graph_, context_, roots_, std::move(probe));
    return f(extractor);
  }

  std::size_t iterations() const {
    std::size_t n = 0;
    for (const auto& r : reports_) n += r.iterations.size();
    return n;
  }

 private:
  void start_round() {
    last_extractor_.reset();  // rewriting below changes the e-graph it was built on
    ++round_;
    if (round_ == options_.longer_rounds_from) runner_->set_iteration_limit(2 * std::max<std::size_t>(1, options_.iterations_per_round));
    if (growing_) {
      // A round's rewriting ends with the enumeration's deadline, not a full time_limit later.
      auto limit = std::chrono::duration<double>(options_.runner.time_limit);
      if (until_ != std::chrono::steady_clock::time_point::max())
        limit = std::min(limit, std::chrono::duration<double>(until_ - std::chrono::steady_clock::now()));
      runner_->set_time_limit(std::max(limit, std::chrono::duration<double>(0)));
      reports_.push_back(runner_->run(graph_, rules_));
      const egraph::StopReason why = reports_.back().stop_reason;
      saturated_ = why == egraph::StopReason::Saturated;
      // Saturated, or a node/time limit: more iterations would not (or may not) add anything.
      growing_ = why == egraph::StopReason::IterationLimit;
    }
    graph_.rebuild();
    budget_ = round_ >= 63 ? options_.max_budget : std::min<std::size_t>(std::size_t{1} << round_, options_.max_budget);
    ExtractorOptions extractor_options = options_.extractor;
    extractor_options.max_size = budget_;
    extractor_options.deadline = std::min(extractor_options.deadline, until_);
    extractor_ = std::make_unique<Extractor>(graph_, context_, roots_, std::move(extractor_options), &seen_);
    extractor_nodes_ = graph_.num_nodes();
    extractor_classes_ = graph_.num_classes();
    round_yielded_ = 0;
    greedy_pending_ = true;
  }

  // The instructions of the Pii nodes that are roots of `g` or aliased by one through identity
  // nodes, each once, in the order found.
  static std::vector<std::int64_t> root_writers(const PiiGraph& g) {
    std::vector<std::int64_t> out;
    std::vector<std::size_t> stack(g.roots().begin(), g.roots().end());
    std::vector<bool> seen(g.nodes().size(), false);
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      if (seen[i]) continue;
      seen[i] = true;
      const PiiNode& y = g.node(i);
      if (y.is_identity()) stack.insert(stack.end(), y.operands.begin(), y.operands.end());
      else if (y.kind == PiiNodeKind::Pii && std::find(out.begin(), out.end(), y.index) == out.end()) out.push_back(y.index);
    }
    return out;
  }

  // Whether `g` has what the in-place-claiming greedy graph answers: a value read in place by
  // two readers, or an in-place result placed by a concat^H. Otherwise that graph is not
  // computed (on the 385-node Gemmini kernel it cost 19 ms of 110 ms extraction).
  bool places_in_place_results(const PiiGraph& g) const {
    std::vector<std::uint8_t> readers(g.nodes().size(), 0), writes_in_place(g.nodes().size(), 0);
    for (std::size_t i = 0; i < g.nodes().size(); ++i) {
      const PiiNode& x = g.node(i);
      if (x.kind != PiiNodeKind::Pii || x.index < 0 || static_cast<std::size_t>(x.index) >= context_.isa.instructions.size())
        continue;
      for (std::size_t k = 0; k < x.operands.size(); ++k)
        if (isa::reads_in_place(context_.isa.instructions[static_cast<std::size_t>(x.index)], k)) {
          writes_in_place[i] = 1;
          if (++readers[x.operands[k]] > 1) return true;
        }
    }
    for (const PiiNode& x : g.nodes())
      if (x.kind == PiiNodeKind::ConcatH)
        for (std::size_t o : x.operands)
          if (writes_in_place[o]) return true;
    return false;
  }

  // Out of rounds: past max_rounds, unless the e-graph is settling (see ExplorerOptions).
  bool past_round_limit() const {
    if (round_ < options_.max_rounds) return false;
    const bool settling = growing_ && round_ < options_.max_rounds + options_.settling_rounds &&
                          graph_.num_nodes() <= options_.settling_nodes;
    return !settling;
  }

  std::optional<PiiGraph> finish() {
    finished_ = true;
    return std::nullopt;
  }

  TensorGraph& graph_;
  const SelectionContext& context_;
  std::vector<egraph::Id> roots_;
  std::span<const TensorRewrite> rules_;
  ExplorerOptions options_;
  PiiGraphSet seen_;
  std::unique_ptr<Extractor> extractor_;
  // The round's extractor once its enumeration is over: its request graph is still the
  // e-graph's (rewriting only happens when the next round starts), so the diagnoses read it
  // instead of building another (55 ms on a 38k-node e-graph under ASan, after the budget).
  std::unique_ptr<Extractor> last_extractor_;
  std::size_t extractor_nodes_ = 0, extractor_classes_ = 0;  // the e-graph it was built on
  std::optional<egraph::Runner<TensorLanguage, TensorAnalysis>> runner_;
  GreedyScratch greedy_scratch_;  // reused by every greedy extraction of every round
  std::vector<egraph::RunReport> reports_;
  std::size_t round_ = 0;
  std::size_t budget_ = 0;
  bool growing_ = true;
  std::chrono::steady_clock::time_point until_ = std::chrono::steady_clock::time_point::max();
  bool greedy_pending_ = false;
  std::vector<std::int64_t> bans_pending_;  // instructions to leave out of the next greedy graphs
  bool claiming_pending_ = false;           // the in-place-claiming greedy graph is still to offer
  std::size_t round_yielded_ = 0;  // graphs the current round's extractor yielded  // the round's greedy graph is offered before its enumeration
  bool saturated_ = false;
  bool finished_ = false;
  bool timed_out_ = false;
  bool paused_ = false;
};

}  // namespace act::select
