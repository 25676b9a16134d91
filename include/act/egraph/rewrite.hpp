// Rewrite rules: a searcher pattern, optional conditions, and an applier that is either a pattern
// (instantiated with the match's variables and united with the matched class) or any callable
// that builds new nodes and returns the ids to unite with the matched class.
//
// Conditions run during the search, on the clean e-graph, and only matches passing them are
// stored (so they count towards a scheduler's match limit). Multi-pattern rules (several
// patterns matched jointly) are not supported, but a rule may have alternative searchers
// (or_search): a match of any of them is a match of the rule, each with its own conditions and
// builder (its substitutions use its own slot layout).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "act/core/error.hpp"
#include "act/egraph/egraph.hpp"
#include "act/egraph/pattern.hpp"

namespace act::egraph {

// Matches of one rule: for each, the matched class and the substitution, stored flat so that
// clearing and refilling it each iteration allocates nothing once warm.
class MatchList {
 public:
  void reset(std::size_t stride) {
    stride_ = stride;
    classes_.clear();
    values_.clear();
    searchers_.clear();
  }
  // `subst` may be shorter than the stride (an alternative searcher with fewer slots).
  void push(Id cls, const Subst& subst, std::uint32_t searcher = 0) {
    classes_.push_back(cls);
    searchers_.push_back(searcher);
    values_.insert(values_.end(), subst.values().begin(), subst.values().end());
    values_.resize(classes_.size() * stride_, kNoId);
  }
  void truncate(std::size_t n) {
    if (n >= classes_.size()) return;
    classes_.resize(n);
    searchers_.resize(n);
    values_.resize(n * stride_);
  }
  std::size_t size() const { return classes_.size(); }
  bool empty() const { return classes_.empty(); }
  Id eclass(std::size_t i) const { return classes_[i]; }
  Subst subst(std::size_t i) const { return Subst(std::span<const Id>(values_.data() + i * stride_, stride_)); }
  // Which searcher of the rule found match i (0 = the primary one).
  std::uint32_t searcher(std::size_t i) const { return searchers_[i]; }

 private:
  std::size_t stride_ = 0;
  std::vector<Id> classes_;
  std::vector<Id> values_;
  std::vector<std::uint32_t> searchers_;
};

template <Language L, class A = NoAnalysis>
class Rewrite {
 public:
  using Graph = EGraph<L, A>;
  // May read the e-graph (clean), the matched class and the substitution.
  using Condition = std::function<bool(const Graph&, Id, const Subst&)>;
  // Builds terms for a match and appends the ids to unite with the matched class.
  using Builder = std::function<void(Graph&, Id, const Subst&, std::vector<Id>&)>;

  // searcher => applier; every variable of the applier must occur in the searcher, and every
  // operator it reuses must be captured there.
  Rewrite(std::string name, Pattern<L> searcher, Pattern<L> applier)
      : name_(std::move(name)), searcher_(std::move(searcher)) {
    if (!applier.instantiable())
      throw Error(ErrorKind::Internal,
                  fmt::format("rule '{}': the right-hand side has predicate or captured operators", name_));
    std::vector<Var> slot_map;
    for (std::uint32_t i = 0; i < applier.num_slots(); ++i) {
      const std::string& v = applier.slot_names()[i];
      const bool reused = applier.is_capture(Var{i});
      auto found = searcher_.find_slot(v);
      if (reused && (!found || !searcher_.is_capture(*found)))
        throw Error(ErrorKind::Internal,
                    fmt::format("rule '{}': the right-hand side reuses operator '{}', which the left does not capture",
                                name_, v));
      if (!reused && (!found || searcher_.is_capture(*found)))
        throw Error(ErrorKind::Internal,
                    fmt::format("rule '{}': variable {} of the right-hand side is not bound by the left", name_, v));
      slot_map.push_back(*found);
    }
    builder_ = [rhs = std::move(applier), slot_map = std::move(slot_map), scratch = std::vector<Id>()](
                   Graph& g, Id, const Subst& s, std::vector<Id>& out) mutable {
      out.push_back(rhs.instantiate(g, [&](Var v) { return s[slot_map[v.index]]; }, scratch));
    };
  }

  // searcher => callable(Graph&, Id matched_class, const Subst&) returning an Id, an
  // std::optional<Id>, a range of Ids, or nothing (when it unites by itself).
  template <class F>
    requires std::invocable<F&, Graph&, Id, const Subst&>
  Rewrite(std::string name, Pattern<L> searcher, F applier)
      : name_(std::move(name)), searcher_(std::move(searcher)) {
    builder_ = make_builder(std::move(applier));
  }

  // Adds a condition to the searcher added last (the primary one unless or_search was called);
  // a match must pass all of its searcher's conditions.
  Rewrite& when(Condition condition) {
    (alternatives_.empty() ? conditions_ : alternatives_.back().conditions).push_back(std::move(condition));
    return *this;
  }

  // An alternative searcher with its own builder (a callable as above): its matches are matches
  // of this rule. Conditions added by when() after this call belong to it.
  template <class F>
    requires std::invocable<F&, Graph&, Id, const Subst&>
  Rewrite& or_search(Pattern<L> searcher, F applier) {
    alternatives_.push_back(Alternative{std::move(searcher), {}, make_builder(std::move(applier))});
    return *this;
  }
  std::size_t num_searchers() const { return 1 + alternatives_.size(); }

  const std::string& name() const { return name_; }
  const Pattern<L>& searcher() const { return searcher_; }
  Var var(std::string_view name) const { return searcher_.slot(name); }

  // Replaces `out` with the matches that pass the conditions, stopping after limit + 1 of them
  // (so a caller can tell "more than limit"). Returns the number stored. Needs a clean e-graph.
  // Once `deadline` passes the search stops early: `out` then holds only some of the matches.
  std::size_t search(const Graph& g, MatchList& out,
                     std::size_t limit = std::numeric_limits<std::size_t>::max() - 1,
                     Deadline deadline = Deadline::max()) const {
    std::size_t stride = searcher_.num_slots();
    for (const Alternative& a : alternatives_) stride = std::max(stride, a.searcher.num_slots());
    out.reset(stride);
    bool more = true;
    const auto run = [&](const Pattern<L>& searcher, const std::vector<Condition>& conditions, std::uint32_t index) {
      if (!more) return;
      more = searcher.search(g, [&](Id cls, const Subst& s) {
        for (const Condition& c : conditions)
          if (!c(g, cls, s)) return true;
        out.push(cls, s, index);
        more = out.size() <= limit;
        return more;
      }, deadline) && more;
    };
    run(searcher_, conditions_, 0);
    for (std::size_t a = 0; a < alternatives_.size(); ++a)
      run(alternatives_[a].searcher, alternatives_[a].conditions, static_cast<std::uint32_t>(a + 1));
    return out.size();
  }

  // Applies the matches in order, stopping early once the e-graph holds more than node_limit
  // nodes or `deadline` has passed; returns how many changed the e-graph. Leaves it dirty.
  std::size_t apply(Graph& g, const MatchList& matches,
                    std::size_t node_limit = std::numeric_limits<std::size_t>::max(),
                    Deadline deadline = Deadline::max()) const {
    // The clock is read before every match: one application may build a whole view's offsets
    // (a movement instruction's rule: tens of milliseconds under ASan), a clock read ~20 ns.
    std::size_t changed = 0;
    for (std::size_t i = 0; i < matches.size() && g.num_nodes() <= node_limit; ++i) {
      if (deadline != Deadline::max() && std::chrono::steady_clock::now() >= deadline) break;
      changed += apply_one(g, matches.eclass(i), matches.subst(i), matches.searcher(i));
    }
    return changed;
  }

  // Applies one match (found by searcher `searcher`); true if the e-graph changed (new nodes or
  // a union).
  bool apply_one(Graph& g, Id cls, const Subst& subst, std::uint32_t searcher = 0) const {
    std::size_t ids_before = g.num_ids();
    std::size_t unions_before = g.num_unions();
    results_.clear();
    if (searcher == 0) builder_(g, cls, subst, results_);
    else alternatives_.at(searcher - 1).builder(g, cls, subst, results_);
    for (Id id : results_) g.unite(cls, id);
    return g.num_ids() != ids_before || g.num_unions() != unions_before;
  }

 private:
  std::string name_;
  Pattern<L> searcher_;
  std::vector<Condition> conditions_;
  Builder builder_;
  struct Alternative {
    Pattern<L> searcher;
    std::vector<Condition> conditions;
    Builder builder;
  };
  std::vector<Alternative> alternatives_;

  template <class F>
  static Builder make_builder(F applier) {
    return [f = std::move(applier)](Graph& g, Id cls, const Subst& s, std::vector<Id>& out) mutable {
      using R = std::invoke_result_t<F&, Graph&, Id, const Subst&>;
      if constexpr (std::is_void_v<R>) {
        f(g, cls, s);
      } else if constexpr (std::is_same_v<std::remove_cvref_t<R>, std::optional<Id>>) {
        if (auto id = f(g, cls, s)) out.push_back(*id);
      } else if constexpr (std::is_convertible_v<R, Id>) {
        out.push_back(static_cast<Id>(f(g, cls, s)));
      } else {
        for (Id id : f(g, cls, s)) out.push_back(id);
      }
    };
  }
  mutable std::vector<Id> results_;  // reused between applications
};

}  // namespace act::egraph
