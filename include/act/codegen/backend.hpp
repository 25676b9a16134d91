// act::Backend<Isa>: the compiler backend for one accelerator (DESIGN.md "codegen", paper §7).
//
//   act::Backend<act::isa::Qkv> backend;
//   for (const auto& candidate : backend.enumerate(kernel)) ...      // every program, lazily
//   act::CompileResult r = backend.compile(kernel);                  // the cheapest found
//
// enumerate() is Fig. 12b: the explorer (modules 2-3, §5.4) yields pii graphs, phase 2
// (modules 4-6) allocates each one and every success is a candidate. The fallbacks of §4.1 are
// the loop structure: 5->4 (other schedules) inside alloc::allocate, 4->3 (next pii graph) here,
// 3->2 (more rewriting) inside the explorer.
// compile() is Fig. 12a: cost every candidate, keep the cheapest, stop by the rules of
// options.hpp. No program at all is act::Error(NoProgram) saying what was tried.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/alloc/allocate.hpp"
#include "act/alloc/identity_folding.hpp"
#include "act/alloc/rematerialise.hpp"
#include "act/codegen/compile.hpp"
#include "act/codegen/cost_model.hpp"
#include "act/codegen/options.hpp"
#include "act/codegen/preflight.hpp"
#include "act/codegen/statistics.hpp"
#include "act/core/error.hpp"
#include "act/hlo/inline.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"
#include "act/select/search/group_explorer.hpp"
#include "act/select/rules/rule_set.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::codegen {

using Clock = std::chrono::steady_clock;

// One assembly program equivalent to the kernel, with how it was obtained.
struct Candidate {
  sim::Program program;
  select::PiiGraph graph;        // the pii graph it was allocated from
  alloc::Schedule schedule;      // the schedule whose CSP was solved
  alloc::Assignment assignment;  // the solved slices and beta
  alloc::AllocateStats allocation;
  double seconds = 0;            // when it was produced, since the enumeration (or compile) began
};

namespace backend_detail {

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Graphviz of an allocated pii graph (like Fig. 10a): per node the instruction or leaf, its
// buffer, its schedule number and its solved slice [start, start + length) per access dim.
inline std::string allocated_dot(const select::PiiGraph& graph, const isa::IsaView& isa, const alloc::GraphValues& values,
                                 const alloc::Schedule& schedule, const alloc::Assignment& assignment) {
  std::vector<std::int64_t> step(graph.nodes().size(), -1);
  for (std::size_t t = 0; t < schedule.order.size(); ++t)
    if (schedule.order[t] < step.size()) step[schedule.order[t]] = static_cast<std::int64_t>(t + 1);
  std::string out = "digraph pii {\n  rankdir=BT;\n  node [fontname=\"monospace\"];\n";
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    const select::PiiNode& x = graph.node(i);
    std::string label;
    switch (x.kind) {
      case select::PiiNodeKind::Pii: label = select::PiiGraph::instruction_text(isa, x); break;
      case select::PiiNodeKind::Input: label = fmt::format("input {}", x.index); break;
      case select::PiiNodeKind::Constant: label = fmt::format("constant {}", x.index); break;
      case select::PiiNodeKind::SliceH: label = "slice^H"; break;
      case select::PiiNodeKind::ConcatH: label = fmt::format("concat^H (dim {})", x.dimension); break;
      case select::PiiNodeKind::OverlayH: label = fmt::format("overlay^H (offsets {})", fmt::join(x.offsets, ",")); break;
      case select::PiiNodeKind::Undefined: label = "undefined"; break;
    }
    std::string slice;
    if (i < assignment.start.size() && i < values.length.size()) {
      for (std::size_t d = 0; d < assignment.start[i].size() && d < values.length[i].size(); ++d)
        slice += fmt::format("{}{}:{}", d ? "," : "", assignment.start[i][d], assignment.start[i][d] + values.length[i][d]);
    }
    const std::string buffer = x.buffer >= 0 && static_cast<std::size_t>(x.buffer) < isa.buffers.size()
                                   ? std::string(isa.buffers[static_cast<std::size_t>(x.buffer)].name)
                                   : fmt::format("buffer#{}", x.buffer);
    const std::string number = step[i] > 0 ? fmt::format("#{} ", step[i]) : std::string();
    out += fmt::format("  n{} [shape={}, label=\"{}{}\\n{}[{}]\"];\n", i, x.is_leaf() ? "ellipse" : "box", number, label,
                       buffer, slice);
    for (std::size_t k = 0; k < x.operands.size(); ++k) out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", x.operands[k], i, k + 1);
  }
  out += "}\n";
  return out;
}

}  // namespace backend_detail

// The lazy candidate generator of Fig. 12b for one kernel. Move-only; owns the e-graph.
class CandidateStream {
 public:
  // Runs module 1 (throws Error(Unsupported) when the kernel is outside the tensor language).
  // Candidate times count from `start` (the compile's start: the heuristic compares them).
  // Phase 1 stops for good at `deadline` (compile() passes its own; enumerate() has none), also
  // inside one extraction level; next() then returns nothing and timed_out() is true.
  CandidateStream(const hlo::Module& kernel, const isa::IsaView& isa, Options options, Clock::time_point start = Clock::now(),
                  Clock::time_point deadline = Clock::time_point::max())
      : options_(std::move(options)), state_(std::make_unique<State>()), start_(start), deadline_(deadline) {
    const auto t0 = Clock::now();
    state_->context.isa = isa;
    state_->context.image = options_.image;
    // A deterministic compile's program must not depend on the compiles before it either.
    state_->solver = alloc::CspSolver(options_.deterministic ? alloc::Z3Context::PerSolver : alloc::Z3Context::PerThread);
    state_->explorer = std::make_unique<select::GroupExplorer>(state_->context, kernel);
    stats_.init_seconds = backend_detail::seconds_since(t0);
    for (std::size_t g = 0; g < state_->explorer->size(); ++g) stats_.initial_enodes += state_->explorer->group(g).graph->num_nodes();
    const auto t1 = Clock::now();
    state_->rules = select::rule_set(state_->context);
    stats_.rule_set_seconds = backend_detail::seconds_since(t1);
    stats_.rules = state_->rules.rules.size();
    select::ExplorerOptions explorer = options_.explorer;
    // Backoff bans only IR->IR axioms (not those marked never_banned): the rules that build pii
    // and identity nodes always run.
    for (std::size_t r = 0; r < state_->rules.rules.size(); ++r)
      if (state_->rules.kinds[r] != select::RuleKind::Axiom)
        explorer.runner.never_ban.push_back(std::string(state_->rules.rules[r].name()));
    for (const select::AxiomInfo& axiom : state_->rules.kept_axioms)
      if (axiom.never_banned) explorer.runner.never_ban.push_back(axiom.name);
    // A deterministic compile's rewriting rounds end on work (iterations, nodes), never on the
    // per-round clock: under the sanitizers on a loaded CI box one Gemmini round passed 5 s and
    // the compile reported a timeout where a fast machine proves "no program".
    if (explorer.runner.time_limit > options_.timeout || options_.deterministic) explorer.runner.time_limit = options_.timeout;
    explorer.deadline = std::min(explorer.deadline, deadline);
    // Independent outputs are explored in e-graphs of their own (select/search/group_explorer.hpp).
    // A constant class without a Constant e-node (a kernel output computed from constants only,
    // like a broadcast immediate) is folded by evaluating one of its constant-only terms, so it
    // can be a constant-pool leaf (the group explorer's default fold_constant).
    state_->explorer->start(state_->rules, explorer);
  }

  // The next candidate, or nothing when the enumeration is over or `deadline` has passed (checked
  // between pii graphs and between schedules; every Z3 call gets at most the time left).
  // Graphs whose allocation failed where a live-range split through a concat^H was refused
  // wait in deferred_ for an attempt with such splits (alloc::AllocateOptions::
  // split_through_concat): when the enumeration is over, or as soon as kDeferredBeforeRetry of
  // them failed before any candidate. Those splits copy a concat^H's other operands, so they
  // can allocate a graph the cheap repairs cannot (QKV regression qkv_split_through_concat:
  // none of its graphs allocated otherwise, and the compile timed out), but tried at once they
  // made a first graph that phase 2 used to give up on quickly cost 0.9 s of CSPs for a
  // 109-instruction program while the next graphs allocate at once (qkv_schedule_search_capped).
  static constexpr std::size_t kDeferredBeforeRetry = 2;

  std::optional<Candidate> next(Clock::time_point deadline = Clock::time_point::max()) {
    for (;;) {
      if (!deferred_.empty() && (exhausted_ || (found_ == 0 && deferred_.size() >= kDeferredBeforeRetry)))
        while (!deferred_.empty()) {
          if (Clock::now() >= deadline) return std::nullopt;
          select::PiiGraph graph = std::move(deferred_.front());
          deferred_.erase(deferred_.begin());
          if (std::optional<Candidate> c = allocate(std::move(graph), deadline, true)) {
            --stats_.allocation_failures;  // counted when it was deferred
            state_->explorer->note_allocated();
            ++found_;
            return c;
          }
        }
      if (exhausted_ || timed_out_ || stopped_) return std::nullopt;
      if (Clock::now() >= deadline) return std::nullopt;
      const auto t0 = Clock::now();
      std::optional<select::PiiGraph> graph = state_->explorer->next(deadline);
      explorer_seconds_ += backend_detail::seconds_since(t0);
      update_phase1_statistics();
      if (!graph) {
        // A phase-1 deadline is not the end of the enumeration: compile() reports a timeout,
        // unless it was the caller's earlier `deadline` (the heuristic): then nothing is set.
        // Neither is an enumeration over an e-graph whose rewriting the clock cut short (the
        // round's time limit, or the deadline while rewriting): what it did not find depends
        // on the machine's speed, so it is a timeout, not "no program".
        const bool clock_cut = rewriting_cut_by_clock();
        if (!state_->explorer->timed_out() && !clock_cut) exhausted_ = true;
        else if (Clock::now() >= deadline_ || (clock_cut && Clock::now() < deadline)) timed_out_ = true;
        else stopped_ = true;
        continue;  // an enumeration that is over leaves the deferred graphs their attempt
      }
      ++stats_.pii_graphs;
      if (std::optional<Candidate> c = allocate(std::move(*graph), deadline, false)) {
        state_->explorer->note_allocated();
        ++found_;
        return c;
      }
    }
  }

  bool exhausted() const { return exhausted_; }
  // Phase 1 stopped at the deadline given to the constructor (the enumeration is not over).
  bool timed_out() const { return timed_out_; }
  const Statistics& statistics() const { return stats_; }
  const sim::KernelImage& image() const { return state_->explorer->image(); }
  const isa::IsaView& isa() const { return state_->context.isa; }

  // Why pii graphs could not be allocated: the first few distinct messages.
  const std::vector<std::string>& allocation_failures() const { return failures_; }

  // Which roots the e-graph cannot produce and the operations no instruction computes
  // (select::Explorer::unmet_roots); for "no pii graph" messages.
  std::string unmet_roots(Clock::time_point until) const { return state_->explorer ? state_->explorer->unmet_roots(until) : std::string(); }

  // Graphviz of a candidate of this stream: instructions, buffers, schedule numbers, slices.
  std::string to_dot(const Candidate& c) const {
    const alloc::GraphValues values = alloc::analyze_values(c.graph, state_->context.isa, state_->context.constants, image());
    return backend_detail::allocated_dot(c.graph, state_->context.isa, values, c.schedule, c.assignment);
  }

  // Range-for support: `for (const Candidate& c : stream)` runs to exhaustion (no deadline).
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Candidate;
    using difference_type = std::ptrdiff_t;
    using pointer = const Candidate*;
    using reference = const Candidate&;
    iterator() = default;
    explicit iterator(CandidateStream* s) : stream_(s) { ++*this; }
    reference operator*() const { return *current_; }
    pointer operator->() const { return &*current_; }
    iterator& operator++() {
      current_ = stream_->next();
      if (!current_) stream_ = nullptr;
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& a, const iterator& b) { return a.stream_ == b.stream_; }

   private:
    CandidateStream* stream_ = nullptr;
    std::optional<Candidate> current_;
  };
  iterator begin() { return iterator(this); }
  iterator end() { return iterator(); }

 private:
  // Heap-allocated so the rules' and the explorer's pointers to the context stay valid on move.
  struct State {
    select::SelectionContext context;
    select::RuleSet rules;
    std::unique_ptr<select::GroupExplorer> explorer;
    alloc::CspSolver solver;
  };

  // Some output group's rewriting stopped on its time limit (egraph::StopReason::TimeLimit);
  // only the empty group's counts when one ended the search (GroupExplorer::empty_group).
  bool rewriting_cut_by_clock() const {
    const select::GroupExplorer& groups = *state_->explorer;
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (!groups.empty_group() || *groups.empty_group() == g)
        for (const auto& report : groups.group(g).reports())
          if (report.stop_reason == egraph::StopReason::TimeLimit) return true;
    return false;
  }

  // Sums over the output groups' explorers and their attempts (iterations, e-nodes, rewrites);
  // rounds and budget are the largest group's; saturated only when every group is, or, when a
  // group without any graph ended the search, when that one is (with its rewriting's stop).
  void update_phase1_statistics() {
    const select::GroupExplorer& groups = *state_->explorer;
    const select::RuleSet& rules = state_->rules;
    double rewrite = 0;
    stats_.iterations = stats_.rounds = stats_.budget = stats_.enodes = stats_.eclasses = stats_.split_retries = stats_.last_retries = 0;
    stats_.saturated = true;
    stats_.rewrite_stop.clear();
    // Per rule name: retries build rule lists of their own, with rules the first list lacks
    // (SelectionContext::last_retry, row_piece_retry), so indices differ between reports.
    std::vector<std::string> names;  // in the order first met
    std::map<std::string, std::size_t, std::less<>> index_of;
    std::map<const std::vector<std::string>*, std::vector<std::size_t>> slots;
    std::vector<std::size_t> count;
    std::vector<double> seconds;
    stats_.rebuild_seconds = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const select::GroupExplorer::Group& group = groups.group(g);
      const select::Explorer& e = *group.explorer;
      for (const auto& report : group.reports()) {
        rewrite += report.total_seconds;
        stats_.iterations += report.iterations.size();
        stats_.rebuild_seconds += report.rebuild_seconds();
        if (!report.rule_names) continue;
        std::vector<std::size_t>& slot_of = slots[report.rule_names.get()];  // the list's rules by name, once per list
        if (slot_of.empty())
          for (const std::string& name : *report.rule_names) {
            const auto [at, fresh] = index_of.try_emplace(name, names.size());
            if (fresh) {
              names.push_back(name);
              count.push_back(0);
              seconds.push_back(0);
            }
            slot_of.push_back(at->second);
          }
        for (std::size_t r = 0; r < slot_of.size(); ++r) {
          count[slot_of[r]] += report.total_applied(r);
          seconds[slot_of[r]] += report.seconds(r);
        }
      }
      stats_.rounds = std::max(stats_.rounds, e.round());
      stats_.budget = std::max(stats_.budget, e.budget());
      const bool decides = !groups.empty_group() || *groups.empty_group() == g;
      if (decides) {
        stats_.saturated = stats_.saturated && e.saturated();
        if (!e.reports().empty() && (stats_.rewrite_stop.empty() || !e.saturated()))
          stats_.rewrite_stop = std::string(egraph::to_string(e.reports().back().stop_reason));
      }
      stats_.split_retries += static_cast<std::size_t>(group.split_retries);
      stats_.last_retries += static_cast<std::size_t>(group.last_retries);
      stats_.enodes += group.graph->num_nodes();
      stats_.eclasses += group.graph->num_classes();
    }
    stats_.rewrite_seconds = rewrite;
    stats_.extract_seconds = std::max(0.0, explorer_seconds_ - rewrite);
    std::vector<std::pair<std::size_t, std::size_t>> applied;  // (count, rule)
    for (std::size_t r = 0; r < count.size(); ++r)
      if (count[r] > 0) applied.emplace_back(count[r], r);
    std::map<std::string_view, select::RuleKind, std::less<>> kind_of;
    for (std::size_t r = 0; r < rules.rules.size(); ++r) kind_of.emplace(rules.rules[r].name(), rules.kinds[r]);
    stats_.axioms_applied = stats_.isa_rules_applied = stats_.identity_rules_applied = 0;
    for (const auto& [n, r] : applied) {
      // A rule only a retry builds is an IR->IR axiom: the retries add axioms, never IR->ISA
      // or identity rules.
      const auto kind = kind_of.find(names[r]);
      const select::RuleKind k = kind == kind_of.end() ? select::RuleKind::Axiom : kind->second;
      if (k == select::RuleKind::Axiom) stats_.axioms_applied += n;
      else if (select::is_instruction_rule(k)) stats_.isa_rules_applied += n;
      else stats_.identity_rules_applied += n;
    }
    std::stable_sort(applied.begin(), applied.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    stats_.top_rules.clear();
    stats_.rules_applied.clear();
    for (const auto& [n, r] : applied) stats_.rules_applied.emplace_back(names[r], n);
    for (std::size_t i = 0; i < applied.size() && i < 8; ++i)
      stats_.top_rules.push_back(fmt::format("{} {}", names[applied[i].second], applied[i].first));
    std::vector<std::pair<double, std::size_t>> slowest;  // (seconds, rule)
    for (std::size_t r = 0; r < seconds.size(); ++r)
      if (seconds[r] > 0) slowest.emplace_back(seconds[r], r);
    std::stable_sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    stats_.slowest_rules.clear();
    for (std::size_t i = 0; i < slowest.size() && i < 5; ++i)
      stats_.slowest_rules.push_back(fmt::format("{} {:.1f} ms", names[slowest[i].second], slowest[i].first * 1e3));
  }

  void record_failure(std::string message) {
    ++stats_.allocation_failures;
    if (failures_.size() < 3 && std::find(failures_.begin(), failures_.end(), message) == failures_.end())
      failures_.push_back(std::move(message));
  }

  // `through_concat`: the deferred attempt (see next()); without it, a graph that failed where
  // such a split was refused goes to deferred_.
  std::optional<Candidate> allocate(select::PiiGraph extracted, Clock::time_point deadline, bool through_concat) {
    select::PiiGraph graph = alloc::fold_slices_of_concats(extracted);
    graph = alloc::rematerialise_in_place_generators(graph, state_->context.isa);
    alloc::AllocateOptions options = options_.allocate;
    options.split_through_concat = through_concat && options.split_through_concat;
    // The earlier of the caller's deadline (the heuristic's) and the compile's bounds every
    // schedule and every Z3 call of this graph (a per-call limit in options.allocate still applies).
    options.deadline = std::min({options.deadline, deadline, deadline_});
    alloc::AllocateResult r;
    try {
      r = alloc::allocate(graph, state_->context.isa, state_->context.constants, image(), state_->solver, options);
    } catch (const Error& e) {
      // The graph does not fit the ISA or the kernel image (values.hpp): try the next one.
      if (!through_concat) record_failure(e.what());
      return std::nullopt;
    }
    stats_.schedules_tried += r.stats.schedules_tried;
    stats_.schedules_pruned += r.stats.schedules_pruned;
    stats_.csp_seconds += r.stats.solve_seconds;
    stats_.schedule_emit_seconds += std::max(0.0, r.stats.seconds - r.stats.solve_seconds);
    if (!r) {
      if (through_concat) return std::nullopt;  // counted and recorded when it was deferred
      record_failure(r.message);
      if (r.concat_split_refused && options_.allocate.split_through_concat) deferred_.push_back(std::move(extracted));
      return std::nullopt;
    }
    stats_.live_range_splits += r.stats.live_range_splits;
    Candidate c;
    c.program = std::move(*r.program);
    c.graph = r.graph ? std::move(*r.graph) : std::move(graph);
    c.schedule = std::move(r.schedule);
    c.assignment = std::move(*r.assignment);
    c.allocation = r.stats;
    c.seconds = backend_detail::seconds_since(start_);
    return c;
  }

  Options options_;
  std::unique_ptr<State> state_;
  Clock::time_point start_;
  Statistics stats_;
  std::vector<std::string> failures_;
  double explorer_seconds_ = 0;
  Clock::time_point deadline_;  // the constructor's (hard) deadline
  bool stopped_ = false;        // phase 1 stopped at a caller's earlier deadline (for good)
  std::vector<select::PiiGraph> deferred_;  // see next()
  std::size_t found_ = 0;                   // candidates returned
  bool exhausted_ = false;
  bool timed_out_ = false;
};

namespace backend_detail {

inline std::string no_program_message(const hlo::Module& kernel, const isa::IsaView& isa, const Options& options,
                                      const Statistics& s, const std::vector<std::string>& failures,
                                      std::string unmet_roots = {}) {
  std::string out = fmt::format("no program for kernel '{}' on ISA {} ({} after {:.3f} s of a {:.3f} s budget): ", kernel.name,
                                isa.name, to_string(s.stop), s.total_seconds, options.timeout.count());
  if (s.pii_graphs == 0) {
    // Only a saturated e-graph proves that no program exists; a rewriting run cut short by a
    // limit leaves the question open, and the message says so.
    std::string why;
    if (s.stop == StopReason::Timeout) why = "none before the timeout";
    else if (s.saturated) why = fmt::format("no combination of {} instructions computes the kernel under act's rewrite rules", isa.name);
    else why = fmt::format("none before rewriting stopped on its {} (a program may still exist)",
                           s.rewrite_stop.empty() ? std::string("limits") : s.rewrite_stop);
    // After a retry (group_explorer.hpp) rounds and e-nodes are the latest attempt's, while
    // iterations count every attempt: the message says so.
    const std::string last_retry =
        s.last_retries == 0 ? ""
                            : fmt::format(", then {} last retr{} (intermediate dots in row pieces, integer narrowing)",
                                          s.last_retries, s.last_retries == 1 ? "y" : "ies");
    const std::string attempts =
        s.split_retries == 0 && s.last_retries == 0
            ? fmt::format("{} rewrite iterations over {} rounds", s.iterations, s.rounds)
            : fmt::format("{} rewrite iterations in all; {} retr{} with the outputs split deeper{}, the latest over {} rounds",
                          s.iterations, s.split_retries, s.split_retries == 1 ? "y" : "ies", last_retry, s.rounds);
    out += fmt::format("instruction selection found no pii graph: {} ({}, {} e-nodes, e-graph {})", why, attempts, s.enodes,
                       s.saturated ? "saturated" : "not saturated");
    std::replace(unmet_roots.begin(), unmet_roots.end(), '\n', ' ');
    if (!unmet_roots.empty()) out += "; " + unmet_roots;
    return out;
  }
  out += fmt::format("phase 2 could not allocate any of the {} pii graph(s) instruction selection produced ({} schedules tried, "
                     "{} pruned)",
                     s.pii_graphs, s.schedules_tried, s.schedules_pruned);
  for (const auto& f : failures) out += fmt::format("; {}", f);
  return out;
}

// "name x count" per instruction of `program`, most frequent first (ties by name).
inline std::string instruction_mix(const sim::Program& program) {
  std::map<std::string, std::size_t> count;
  for (const auto& ci : program.instructions) ++count[ci.name];
  std::vector<std::pair<std::string, std::size_t>> sorted(count.begin(), count.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [name, n] : sorted) parts.push_back(fmt::format("{} x{}", name, n));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Deterministic compiles search at least this many extraction steps past the best candidate
// (about a millisecond or two of extraction): a best found by the greedy graph spent none.
inline constexpr std::uint64_t kMinSearchWork = std::uint64_t{1} << 20;

// Fig. 12a over any IsaView.
inline CompileOutcome compile(const hlo::Module& kernel, const isa::IsaView& isa, const Options& options) {
  const auto start = Clock::now();
  // The search ends a little before the budget (10 %, at least 25 ms, when that is under half
  // of it): what follows a fruitless search, the no-program diagnosis (bounded by the budget)
  // and freeing a large e-graph, must fit in the budget's tolerance too (10 % or 50 ms), also
  // under ASan, where they took up to 200 ms (a 5 % reserve still left 1.15 s on a 1 s budget).
  const auto budget = std::chrono::duration_cast<Clock::duration>(options.timeout);
  const auto reserve = std::max<Clock::duration>(std::chrono::milliseconds(25), budget / 10);
  const auto end_of_budget = start + budget;
  const auto deadline = reserve < budget / 2 ? end_of_budget - reserve : end_of_budget;
  CompileOutcome outcome;
  // Extraction work, counted for --stats and bounded once a best exists: the heuristic's
  // "patience x the work that found the best" (at least kMinSearchWork more), so a
  // deterministic compile ends on work, not on its timeout, when no further candidate comes.
  // A timed compile ends on whichever of this and "patience x the time" comes first: a search
  // that has run out of work it would do deterministically is not kept going by a fast clock.
  select::SearchWork work;
  Options stream_options = options;
  stream_options.explorer.extractor.work = &work;
  std::optional<CandidateStream> stream;
  try {
    stream.emplace(kernel, isa, std::move(stream_options), start, deadline);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Unsupported) throw;
    outcome.statistics.total_seconds = seconds_since(start);
    outcome.message = fmt::format("no program for kernel '{}' on ISA {}: module 1 cannot express the kernel: {}", kernel.name,
                                  isa.name, e.message());
    return outcome;
  }
  const CostModel& model = options.cost_model ? options.cost_model : CostModel(declared_cost);
  std::optional<Candidate> best;
  double best_cost = std::numeric_limits<double>::infinity();
  std::size_t candidates = 0, best_index = 0;
  std::vector<CandidateSummary> listed;
  std::vector<sim::Program> seen;  // every distinct program produced
  double cost_seconds = 0;
  StopReason stop = StopReason::Exhausted;
  for (;;) {
    auto until = deadline;
    if (best && !options.deterministic) {
      // The heuristic as a deadline, so a slow enumeration cannot outlive it either.
      const auto heuristic = start + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(options.patience * best->seconds));
      until = std::min(until, heuristic);
    }
    std::optional<Candidate> c = stream->next(until);
    if (!c) {
      if (stream->exhausted()) stop = StopReason::Exhausted;
      else if (work.exhausted()) stop = StopReason::Heuristic;
      else stop = stream->timed_out() || Clock::now() >= deadline ? StopReason::Timeout : StopReason::Heuristic;
      break;
    }
    // Different pii graphs can allocate to the same program (loop_ws whole, or through
    // concat^H of its output's views): it is one candidate.
    if (std::find(seen.begin(), seen.end(), c->program) != seen.end()) continue;
    seen.push_back(c->program);
    ++candidates;
    const auto t0 = Clock::now();
    const double cost = model(c->program, isa);
    cost_seconds += seconds_since(t0);
    if (listed.size() < Statistics::kListedCandidates)
      listed.push_back(CandidateSummary{c->program.instructions.size(), cost, c->seconds, backend_detail::instruction_mix(c->program)});
    if (cost < best_cost) {
      best_cost = cost;
      best = std::move(c);
      best_index = candidates;
      const auto spent = static_cast<double>(work.spent);
      work.limit = static_cast<std::uint64_t>(std::max(options.patience * spent, spent + static_cast<double>(kMinSearchWork)));
    } else if (options.deterministic ? static_cast<double>(candidates) > options.patience * static_cast<double>(best_index)
                                     : seconds_since(start) > options.patience * best->seconds) {
      stop = StopReason::Heuristic;
      break;
    }
    if (options.max_candidates && candidates >= options.max_candidates) {
      stop = StopReason::CandidateLimit;
      break;
    }
  }
  Statistics s = stream->statistics();
  s.candidates = candidates;
  s.candidate_list = std::move(listed);
  s.best_candidate = best_index;
  s.best_seconds = best ? best->seconds : 0;
  s.cost_seconds = cost_seconds;
  s.extraction_steps = work.spent;
  s.stop = stop;
  s.total_seconds = seconds_since(start);
  outcome.statistics = s;
  if (!best) {
    // The diagnosis looks for nearest rules in the first half of the reserve the search left
    // (none if the search overran it), the second half is for freeing the e-graph; a budget
    // too short for a reserve gives the diagnosis half a reserve past it. Deterministic
    // compiles bound it by work only.
    const auto diagnosis_until = options.deterministic || Clock::time_point::max() - end_of_budget <= reserve
                                     ? Clock::time_point::max()
                                 : deadline < end_of_budget ? end_of_budget - reserve / 2
                                                            : std::max(Clock::now(), end_of_budget) + reserve / 2;
    outcome.message = no_program_message(kernel, isa, options, s, stream->allocation_failures(),
                                         s.pii_graphs == 0 ? stream->unmet_roots(diagnosis_until) : std::string());
    return outcome;
  }
  s.csp_variables = best->allocation.csp_variables;
  s.csp_constraints = best->allocation.csp_constraints;
  s.interference_edges = best->allocation.interference_edges;
  outcome.statistics = s;
  CompileResult r;
  r.dot = stream->to_dot(*best);
  r.program = std::move(best->program);
  r.cost = best_cost;
  r.statistics = s;
  r.graph = std::move(best->graph);
  r.schedule = std::move(best->schedule);
  r.assignment = std::move(best->assignment);
  r.image = stream->image();
  outcome.result = std::move(r);
  return outcome;
}

}  // namespace backend_detail

// Inlines calls, refuses what preflight refuses, checks a run-time ISA, then Fig. 12a.
#if ACT_DEFINES_IMPLEMENTATION
ACT_API CompileOutcome compile_kernel(const hlo::Module& kernel, const isa::IsaView& isa, const Options& options) {
  isa::check(isa);  // a description built at run time has not been through the compile-time check
  const hlo::Module inlined = hlo::inline_calls(kernel);
  if (std::optional<std::string> refusal = preflight(inlined, isa)) {
    CompileOutcome outcome;
    outcome.message = std::move(*refusal);
    outcome.refused = true;
    return outcome;
  }
  return backend_detail::compile(inlined, isa, options);
}
#endif

template <class Isa>
CandidateStream Backend<Isa>::enumerate(const hlo::Module& kernel, const Options& options) const {
  return CandidateStream(kernel, isa(), options);
}

}  // namespace act::codegen
