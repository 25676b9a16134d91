// Equality saturation driver: repeated iterations of search-all-rules, apply-all-matches, one
// rebuild, until saturation or a limit. A backoff scheduler keeps explosive rules (associativity,
// commutativity) from flooding the e-graph: a rule finding more matches than its limit in one
// iteration is banned for a while, and each ban doubles both its limit and the ban length.
// Saturation is declared only when an iteration changes nothing and no rule is banned (bans are
// lifted early when everything else is quiet). The time limit is kept inside an iteration too:
// searches and applications stop at the run's deadline, and an iteration they cut short ends
// the run (its partial matches are dropped, never applied).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/egraph/egraph.hpp"
#include "act/egraph/rewrite.hpp"

namespace act::egraph {

enum class StopReason { Saturated, IterationLimit, NodeLimit, TimeLimit, Hook };

constexpr std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::Saturated: return "saturated";
    case StopReason::IterationLimit: return "iteration limit";
    case StopReason::NodeLimit: return "node limit";
    case StopReason::TimeLimit: return "time limit";
    case StopReason::Hook: return "stopped by hook";
  }
  return "unknown";
}

struct RunnerOptions {
  std::size_t iteration_limit = 30;
  std::size_t node_limit = 10'000;              // live e-nodes; checked after every application
  std::chrono::duration<double> time_limit{5.0};
  bool backoff = true;                          // false: every rule applies every match
  std::size_t match_limit = 1'000;              // backoff: initial per-rule matches per iteration
  std::size_t ban_length = 5;                   // backoff: initial ban, in iterations
  std::vector<std::string> never_ban;           // rule names exempt from backoff
};

// What one iteration did; `rules` is indexed like the rule list given to run().
struct IterationReport {
  struct Rule {
    std::size_t matches = 0;   // stored matches (0 when banned or over its limit)
    std::size_t applied = 0;   // matches that changed the e-graph
    bool banned = false;       // skipped this iteration, or banned by it
    double seconds = 0;        // searching and applying it
  };
  std::size_t index = 0;
  std::vector<Rule> rules;
  std::size_t nodes = 0;       // after the rebuild
  std::size_t classes = 0;
  std::size_t rebuild_unions = 0;
  double search_seconds = 0;
  double apply_seconds = 0;
  double rebuild_seconds = 0;
};

struct RunReport {
  StopReason stop_reason = StopReason::Saturated;
  std::vector<IterationReport> iterations;
  // The name of each rule of the list run() was given (shared by the runs of one runner over
  // one list): reports of runs over different rule lists (an explorer's retries build theirs)
  // are merged by name, not by index.
  std::shared_ptr<const std::vector<std::string>> rule_names;
  double total_seconds = 0;

  std::size_t total_applied(std::size_t rule) const {
    std::size_t n = 0;
    for (const IterationReport& it : iterations) n += it.rules.at(rule).applied;
    return n;
  }
  double seconds(std::size_t rule) const {
    double t = 0;
    for (const IterationReport& it : iterations) t += it.rules.at(rule).seconds;
    return t;
  }
  double rebuild_seconds() const {
    double t = 0;
    for (const IterationReport& it : iterations) t += it.rebuild_seconds;
    return t;
  }
  std::size_t times_banned(std::size_t rule) const {
    std::size_t n = 0;
    for (const IterationReport& it : iterations) n += it.rules.at(rule).banned;
    return n;
  }
};

template <Language L, class A = NoAnalysis>
class Runner {
 public:
  using Graph = EGraph<L, A>;
  using Rule = Rewrite<L, A>;
  // Called after every iteration; returning false stops the run (StopReason::Hook).
  using Hook = std::function<bool(Graph&, const IterationReport&)>;

  explicit Runner(RunnerOptions options = {}) : options_(std::move(options)) {}

  Runner& on_iteration(Hook hook) {
    hook_ = std::move(hook);
    return *this;
  }
  const RunnerOptions& options() const { return options_; }
  // Iterations each later run() does at most (an explorer lengthens its rounds as they go).
  void set_iteration_limit(std::size_t n) { options_.iteration_limit = n; }
  void set_time_limit(std::chrono::duration<double> t) { options_.time_limit = t; }

  RunReport run(Graph& g, std::span<const Rule> rules) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start); };
    // Searches and applications read it too: one rule over a large e-graph can outlast a budget.
    const Deadline deadline = deadline_after(start, options_.time_limit);
    auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };

    // The backoff schedule survives between run() calls on the same rule list (an explorer
    // runs one iteration per round: a fresh schedule would never keep a rule banned).
    if (schedule_.size() != rules.size()) {
      schedule_.assign(rules.size(), Schedule{});
      for (std::size_t r = 0; r < rules.size(); ++r)
        for (const std::string& name : options_.never_ban) schedule_[r].exempt |= rules[r].name() == name;
    }
    std::vector<Schedule>& schedule = schedule_;
    matches_.resize(rules.size());

    const auto same_names = [&] {
      if (!rule_names_ || rule_names_->size() != rules.size()) return false;
      for (std::size_t r = 0; r < rules.size(); ++r)
        if ((*rule_names_)[r] != rules[r].name()) return false;
      return true;
    };
    if (!same_names()) {
      auto names = std::make_shared<std::vector<std::string>>();
      for (const Rule& rule : rules) names->push_back(rule.name());
      rule_names_ = std::move(names);
    }
    RunReport report;
    report.rule_names = rule_names_;
    g.rebuild();
    for (std::size_t local = 0;; ++local) {
      const std::size_t iter = clock_;  // ban arithmetic counts iterations over every run()
      if (local >= options_.iteration_limit) return finish(report, StopReason::IterationLimit, elapsed());
      if (g.num_nodes() > options_.node_limit) return finish(report, StopReason::NodeLimit, elapsed());
      if (elapsed() >= options_.time_limit) return finish(report, StopReason::TimeLimit, elapsed());
      ++clock_;

      g.rebuild();  // a no-op unless the hook changed the e-graph
      IterationReport it;
      it.index = local;
      it.rules.resize(rules.size());
      const std::size_t ids_before = g.num_ids();
      const std::size_t unions_before = g.num_unions();

      auto t = Clock::now();
      for (std::size_t r = 0; r < rules.size(); ++r) {
        Schedule& s = schedule[r];
        matches_[r].reset(0);
        if (s.banned_until > iter) {
          it.rules[r].banned = true;
          continue;
        }
        const bool limited = options_.backoff && !s.exempt;
        const std::size_t limit = limited ? shifted(options_.match_limit, s.times_banned)
                                          : std::numeric_limits<std::size_t>::max() - 1;
        const auto searched = Clock::now();
        std::size_t found = rules[r].search(g, matches_[r], limit, deadline);
        it.rules[r].seconds += seconds_since(searched);
        if (found > limit) {
          s.banned_until = iter + shifted(options_.ban_length, s.times_banned);
          ++s.times_banned;
          matches_[r].reset(0);
          it.rules[r].banned = true;
          continue;
        }
        it.rules[r].matches = found;
        // Searching every rule over a large e-graph takes long enough to overrun a budget.
        if (elapsed() >= options_.time_limit) {
          it.search_seconds = seconds_since(t);
          it.nodes = g.num_nodes();
          it.classes = g.num_classes();
          report.iterations.push_back(std::move(it));
          return finish(report, StopReason::TimeLimit, elapsed());
        }
      }
      it.search_seconds = seconds_since(t);

      t = Clock::now();
      bool node_limit_hit = false;
      bool time_limit_hit = false;
      for (std::size_t r = 0; r < rules.size(); ++r) {
        const auto applied = Clock::now();
        it.rules[r].applied = rules[r].apply(g, matches_[r], options_.node_limit, deadline);
        it.rules[r].seconds += seconds_since(applied);
        node_limit_hit = g.num_nodes() > options_.node_limit;
        time_limit_hit = elapsed() >= options_.time_limit;
        if (node_limit_hit || time_limit_hit) break;
      }
      it.apply_seconds = seconds_since(t);

      t = Clock::now();
      it.rebuild_unions = g.rebuild();
      it.rebuild_seconds = seconds_since(t);
      it.nodes = g.num_nodes();
      it.classes = g.num_classes();
      report.iterations.push_back(std::move(it));

      if (hook_ && !hook_(g, report.iterations.back())) return finish(report, StopReason::Hook, elapsed());
      if (node_limit_hit) return finish(report, StopReason::NodeLimit, elapsed());
      if (time_limit_hit) return finish(report, StopReason::TimeLimit, elapsed());

      const bool changed = g.num_ids() != ids_before || g.num_unions() != unions_before;
      if (changed) continue;
      // Nothing changed. Rules skipped or banned this iteration may still have work: lift their
      // bans (their limits stay raised) and go on; otherwise the e-graph is saturated.
      bool any_banned = false;
      for (std::size_t r = 0; r < rules.size(); ++r) {
        any_banned |= report.iterations.back().rules[r].banned || schedule[r].banned_until > iter + 1;
        schedule[r].banned_until = std::min(schedule[r].banned_until, iter + 1);
      }
      if (!any_banned) return finish(report, StopReason::Saturated, elapsed());
    }
  }

 private:
  // start + limit, or Deadline::max() when that is beyond any clock's range (no deadline).
  static Deadline deadline_after(Deadline start, std::chrono::duration<double> limit) {
    const std::chrono::duration<double> room = Deadline::max() - start;
    if (!(limit < room)) return Deadline::max();
    return start + std::chrono::duration_cast<Deadline::duration>(limit);
  }

  static std::size_t shifted(std::size_t value, std::size_t times) {
    if (times >= 32 || value > (std::numeric_limits<std::size_t>::max() >> (times + 2)))
      return std::numeric_limits<std::size_t>::max() / 4;
    return value << times;
  }

  static RunReport finish(RunReport& report, StopReason reason, std::chrono::duration<double> elapsed) {
    report.stop_reason = reason;
    report.total_seconds = elapsed.count();
    return std::move(report);
  }

  struct Schedule {
    std::size_t times_banned = 0;
    std::size_t banned_until = 0;  // first iteration (of clock_) the rule may run again
    bool exempt = false;
  };

  RunnerOptions options_;
  Hook hook_;
  std::vector<Schedule> schedule_;
  std::shared_ptr<const std::vector<std::string>> rule_names_;  // of the list the schedule is for
  std::size_t clock_ = 0;
  std::vector<MatchList> matches_;  // reused between iterations
};

}  // namespace act::egraph
