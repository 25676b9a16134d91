// Module 3 (§5.3, Fig. 9): enumerative, buffer-guided, lazy extraction of pii graphs.
//
// The requests and their alternatives are precomputed in a RequestGraph (request_graph.hpp).
//
// Order (documented contract): graphs come out by increasing key (size, duplicates):
//   size        instruction nodes: pii AND identity nodes, leaves aside. Identity nodes count
//               so that slice^H/concat^H cycles cannot produce infinitely many graphs of one size.
//   duplicates  nodes built for a request that already had a node in the graph (the same value
//               computed or loaded twice). A graph whose requests each resolve to one shared
//               sub-graph has 0; its unshared variants have more nodes, so they come later.
// Within one key the order is the deterministic depth-first order of the search.
//
// How: iterative deepening over (size, duplicates) levels, each a depth-first search with an
// explicit stack (the generator's state: memory is O(N_max x branching), never a product of
// sets). A partial graph is pruned when its nodes plus a lower bound on the nodes it still has
// to build exceed the level's size. The bound stays admissible under sharing: every distinct
// pending request without any node needs >= 1 new node, and a request's own sub-graph needs
// 1 + max(#distinct node-less operand requests, bound of each operand), where requests that
// already hold a node cost 0 (memoised per search state). Precomputed once per e-graph state: the
// admissible e-nodes per request, "can produce class c in buffer b", and a DAG-size lower bound
// per request (first level to try): the RequestGraph.
// Sharing only ever points at a finished node, never at an ancestor, so graphs are acyclic
// even when the e-graph has cycles; the node budget N_max bounds everything. A node fills at
// most one concat^H operand slot: concat^H places its operands side by side, so a shared one
// (concat^H(x, x), also through a chain of binary concat^H) could never be allocated.
// Graphs are deduplicated by canonical form (an optional PiiGraphSet shared across extractors
// lets the explorer skip graphs yielded in earlier rounds).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/egraph/id.hpp"
#include "act/select/pii_graph.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/tensor_language.hpp"
#include "act/select/search/diagnosis.hpp"
#include "act/select/search/greedy.hpp"
#include "act/select/search/request_graph.hpp"

namespace act::select {

// The canonical forms of pii graphs seen so far.
class PiiGraphSet {
 public:
  // True when `g` was not in the set (and is now).
  bool insert(const PiiGraph& g) { return keys_.insert(g.canonical_key()).second; }
  bool contains(const PiiGraph& g) const { return keys_.count(g.canonical_key()) != 0; }
  std::size_t size() const { return keys_.size(); }

 private:
  std::set<std::vector<std::int64_t>> keys_;
};

// Extraction work (DFS steps and bound visits) counted across the extractors that share it,
// so a caller can bound the enumeration by work rather than by the clock (deterministic
// compiles). An extractor stops, as on its deadline, once `spent` reaches `limit`.
struct SearchWork {
  std::uint64_t spent = 0;
  std::uint64_t limit = std::numeric_limits<std::uint64_t>::max();
  bool exhausted() const { return spent >= limit; }
};

struct ExtractorOptions {
  std::size_t max_size = 64;  // N_max: instruction nodes (pii + identity) per graph
  // Gives the constant-pool id of a constant class without a Constant e-node (e.g. by
  // evaluating one of its expressions). Unset: such leaves carry constant id -1.
  std::function<std::int64_t(egraph::Id)> fold_constant;
  // The search stops once this passes (checked every few thousand steps, so one enumeration
  // level cannot outlive it): next() returns nullopt, exhaustive() is false, timed_out() true.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Shared work counter (not owned; may be null); its limit ends the search like the deadline.
  SearchWork* work = nullptr;
};

class Extractor {
 public:
  static constexpr std::size_t kUnreachable = RequestGraph::kUnreachable;

  // `graph` must be clean (rebuilt) and outlive the extractor; so must `seen` if given.
  Extractor(const TensorGraph& graph, const SelectionContext& context, std::vector<egraph::Id> roots,
            ExtractorOptions options = {}, PiiGraphSet* seen = nullptr)
      : options_(std::move(options)), requests_(graph, context, roots, options_.fold_constant),
        seen_(seen ? seen : &own_seen_) {
    start_search();
  }
  // The search keeps pointers into the request graph.
  Extractor(const Extractor&) = delete;
  Extractor& operator=(const Extractor&) = delete;

  // The next pii graph, or nullopt when every graph within max_size has been yielded -- or,
  // with paused(), when the work pause_after allowed is done: the search then resumes where it
  // stopped at the next call.
  std::optional<PiiGraph> next() {
    paused_ = false;
    while (!finished_) {
      if (auto g = step_level()) return g;
      if (finished_ || paused_) break;  // stopped by the deadline or a pause inside the level
      advance_level();
    }
    return std::nullopt;
  }

  // The next calls to next() pause once `units` more units of work are done (0: never). Lets a
  // caller share its work among several searches (group_explorer.hpp).
  void pause_after(std::uint64_t units) {
    pause_at_ = units ? work_units_ + units : std::numeric_limits<std::uint64_t>::max();
  }
  bool paused() const { return paused_; }

  // After next() returned nullopt: true if no pii graph larger than max_size exists either
  // (the enumeration was complete, not cut by the budget).
  bool exhaustive() const { return finished_ && exhaustive_; }
  // After next() returned nullopt: true if the search stopped because options.deadline passed.
  bool timed_out() const { return timed_out_; }

  // Whether `cls` can be produced into `buffer` at all (with any number of nodes).
  bool can_produce(egraph::Id cls, int buffer) const { return requests_.can_produce(cls, buffer); }
  // A lower bound on the instruction nodes of any graph producing `cls` into `buffer`
  // (kUnreachable when it cannot be produced).
  std::size_t min_size(egraph::Id cls, int buffer) const { return requests_.min_size(cls, buffer); }
  int hbm() const { return requests_.hbm(); }
  // Moves the deadline (the explorer passes a caller's earlier, soft one).
  void set_deadline(std::chrono::steady_clock::time_point deadline) { options_.deadline = deadline; }

  // The greedy pii graph of the same e-graph (greedy.hpp).
  std::optional<PiiGraph> greedy(const std::vector<std::int64_t>& banned = {}, bool claim_in_place = false,
                                 GreedyScratch* scratch = nullptr) const {
    return greedy_pii_graph(requests_, banned, claim_in_place, scratch);
  }
  std::size_t states_visited() const { return states_; }
  // For tests: whether every alternative's count of operands without a node, kept up to date
  // node by node for the bound walk, equals a recount over the graph being built.
  bool nodeless_counts_in_step() const {
    for (std::size_t a = 0; a + 1 < bound_operand_begin_.size(); ++a) {
      std::uint32_t count = 0;
      for (std::uint32_t i = bound_operand_begin_[a]; i < bound_operand_begin_[a + 1]; ++i) count += has_node_[bound_operands_[i]] ? 0 : 1;
      if (a >= nodeless_operands_.size() || nodeless_operands_[a] != count) return false;
    }
    return true;
  }

  // Diagnosis of an empty enumeration (diagnosis.hpp).
  std::string explain_unmet_roots(std::size_t max_blockers = 4,
                                  std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max()) const {
    return select::explain_unmet_roots(requests_, max_blockers, until);
  }
  bool unmet_byte_view_of_producible_value() const { return select::unmet_byte_view_of_producible_value(requests_); }
  bool unmet_root_exceeds_a_store() const { return select::unmet_root_exceeds_a_store(requests_); }

 private:
  using Request = RequestGraph::Request;
  using Alternative = RequestGraph::Alternative;

  std::size_t key(Request r) const { return requests_.key(r); }
  bool is_leaf_request(Request r) const { return requests_.is_leaf_request(r); }

  // ---- the search ----------------------------------------------------------------------------

  // A node of the graph under construction.
  struct WorkNode {
    Request request;
    const Alternative* alternative = nullptr;  // null for leaves
    std::vector<int> operands;                 // node indices; -1 while pending
    int creator = -1;                          // the node whose operand created it; -1: a root
    std::size_t pending = 0;                   // operands not yet finished
    std::size_t concat_uses = 0;               // concat^H operand slots it fills (at most 1)
    bool finished = false;
  };
  // An operand position waiting for a node: operand `operand` of node `parent` (-1: root).
  struct Slot {
    int parent = -1;
    std::size_t operand = 0;
    Request request;
  };
  struct Option {
    enum Kind : std::uint8_t { Share, Fresh, LeafNode } kind = Share;
    int node = -1;                             // Share: the finished node to reuse
    const Alternative* alternative = nullptr;  // Fresh
  };
  struct Frame {
    Slot slot;
    std::vector<Option> options;
    std::size_t next = 0;
    bool applied = false;
    // Undo information for the applied option.
    bool created = false;
    bool duplicate = false;
    bool counted = false;
    std::size_t pushed = 0;
    int concat_use = -1;  // the node whose concat_uses the option incremented
    std::vector<int> decremented;
    std::vector<int> finished;
  };

  void start_search() {
    if (requests_.roots().empty()) throw Error(ErrorKind::Internal, "extract: no roots");
    for (Request r : requests_.roots())
      if (!requests_.producible(key(r))) {  // some root cannot reach HBM: no pii graph at all
        finished_ = true;
        exhaustive_ = true;
        return;
      }
    std::size_t first = 0;
    std::vector<std::size_t> distinct;
    for (Request r : requests_.roots()) {
      first = std::max(first, requests_.min_size(key(r)));
      if (!is_leaf_request(r)) distinct.push_back(key(r));
    }
    std::sort(distinct.begin(), distinct.end());
    first = std::max(first, static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin()));
    if (first > options_.max_size) {
      finished_ = true;
      exhaustive_ = false;
      return;
    }
    target_size_ = first;
    first_size_ = first;
    target_duplicates_ = 0;
    nodes_of_request_.assign(requests_.request_count(), {});
    has_node_.assign(requests_.request_count(), 0);
    lay_out_bound_graph();
    reset_level();
  }

  void reset_level() {
    node_count_ = 0;
    depth_ = 0;
    pending_.clear();
    root_nodes_.assign(requests_.roots().size(), -1);
    size_ = 0;
    duplicates_ = 0;
    for (auto& v : nodes_of_request_) v.clear();
    std::fill(has_node_.begin(), has_node_.end(), std::uint8_t{0});
    nodeless_operands_.resize(bound_operand_begin_.size() - 1);
    for (std::size_t a = 0; a + 1 < bound_operand_begin_.size(); ++a) nodeless_operands_[a] = bound_operand_begin_[a + 1] - bound_operand_begin_[a];
    for (std::size_t i = requests_.roots().size(); i-- > 0;) pending_.push_back(Slot{-1, i, requests_.roots()[i]});
    descend_ = true;
    size_pruned_ = false;
    duplicates_pruned_ = false;
  }

  void advance_level() {
    // A graph of size s with d duplicates has s - d distinct requests, and none has fewer than
    // first_size_ (min_size bounds the distinct requests below a node too: a request met again
    // inside its own sub-graph is met there by a smaller graph). So the levels with
    // d > s - first_size_ hold no graph, and searching each cost as much as the whole size (a
    // 22-node QKV kernel searched 17 levels of size 16 for the 3 that can hold one). They are
    // skipped, except (s, s) when it decides something: whether a larger graph may exist is
    // read, as before, from (s, s) pruning for size. A level that prunes for size makes (s, s)
    // prune too (it reaches every partial graph the level does), and one that prunes nothing
    // is the whole of (s, s); only partial graphs pruned for their duplicates alone leave it
    // open, and then (s, s) is searched.
    const std::size_t last_possible = target_size_ - first_size_;
    if (duplicates_pruned_ && target_duplicates_ < last_possible) {
      ++target_duplicates_;  // the same size, with one more duplicated request
      reset_level();
      return;
    }
    if (duplicates_pruned_ && !size_pruned_ && target_duplicates_ < target_size_) {
      target_duplicates_ = target_size_;
      reset_level();
      return;
    }
    if (!size_pruned_) {  // nothing bigger exists at all
      finished_ = true;
      exhaustive_ = true;
      return;
    }
    if (target_size_ >= options_.max_size) {
      finished_ = true;
      exhaustive_ = false;
      return;
    }
    ++target_size_;
    target_duplicates_ = 0;
    reset_level();
  }

  // Runs the depth-first search of the current level until it yields a new graph (returned) or
  // the level is exhausted (nullopt).
  std::optional<PiiGraph> step_level() {
    for (;;) {
      if (work_units_ >= pause_at_) {  // between two steps: the state resumes as it is
        paused_ = true;
        return std::nullopt;
      }
      if (out_of_time()) {
        finished_ = true;
        exhaustive_ = false;
        timed_out_ = true;
        return std::nullopt;
      }
      if (descend_) {
        descend_ = false;
        ++states_;
        if (pending_.empty()) {
          if (size_ == target_size_ && duplicates_ == target_duplicates_) {
            PiiGraph g = build();
            if (seen_->insert(g)) return g;
          }
          continue;
        }
        Frame& frame = push_frame();
        frame.slot = pending_.back();
        pending_.pop_back();
        fill_options(frame);
      }
      if (depth_ == 0) return std::nullopt;
      Frame& f = frames_[depth_ - 1];
      if (f.applied) undo(f);
      if (f.next >= f.options.size()) {
        pending_.push_back(f.slot);
        --depth_;
        continue;
      }
      apply(f, f.options[f.next++]);
      if (duplicates_ > target_duplicates_) {
        duplicates_pruned_ = true;
        continue;
      }
      if (size_ + new_nodes_bound() > target_size_) {
        size_pruned_ = true;
        continue;
      }
      descend_ = true;
    }
  }

  // The frames and nodes of the search are kept past a pop and reused, with the capacity of
  // their lists: a DFS step then allocates nothing once the search has been as deep before.
  Frame& push_frame() {
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.options.clear();
    f.next = 0;
    f.applied = false;
    return f;
  }
  WorkNode& push_node(Request r) {
    if (node_count_ == nodes_.size()) nodes_.emplace_back();
    WorkNode& w = nodes_[node_count_++];
    w.request = r;
    w.alternative = nullptr;
    w.operands.clear();
    w.creator = -1;
    w.pending = 0;
    w.concat_uses = 0;
    w.finished = false;
    return w;
  }

  void fill_options(Frame& f) {
    const Request r = f.slot.request;
    // A root is never a leaf: phase 2 does not copy an input (or constant) to the output, so a
    // root whose class holds one (e.g. transpose(transpose(p0))) is produced by instructions.
    if (is_leaf_request(r) && f.slot.parent >= 0) {
      f.options.push_back(Option{Option::LeafNode, -1, nullptr});
      return;
    }
    // Sharing first: every finished node already built for this request. A concat^H places its
    // operands side by side, so a node already placed by one concat^H operand slot cannot fill
    // another (concat^H(x, x) has no allocation); a fresh node for the same request can.
    const bool concat_slot = is_concat_slot(f.slot);
    for (int n : nodes_of_request_[key(r)]) {
      const WorkNode& w = nodes_[static_cast<std::size_t>(n)];
      if (w.finished && w.alternative && !(concat_slot && w.concat_uses > 0)) f.options.push_back(Option{Option::Share, n, nullptr});
    }
    for (const Alternative& alt : requests_.alternatives(key(r))) f.options.push_back(Option{Option::Fresh, -1, &alt});
  }

  // Distinct non-leaf requests among the pending slots that have no node at all yet.
  std::size_t unmet_requests() {
    if (unmet_stamp_.size() != has_node_.size()) unmet_stamp_.assign(has_node_.size(), 0);
    if (++unmet_epoch_ == 0) {  // wrapped: no old stamp may match
      std::fill(unmet_stamp_.begin(), unmet_stamp_.end(), 0);
      unmet_epoch_ = 1;
    }
    scratch_.clear();
    for (const Slot& s : pending_) {
      const std::size_t k = key(s.request);
      if (is_leaf_request(s.request) || has_node_[k] || unmet_stamp_[k] == unmet_epoch_) continue;
      unmet_stamp_[k] = unmet_epoch_;
      scratch_.push_back(k);
    }
    return scratch_.size();
  }

  // A lower bound on the nodes the partial graph still has to build: the distinct unmet
  // requests, and for each of them the new nodes its own sub-graph needs given that any request
  // already holding a node costs nothing (under-estimates on cycles and past the depth/visit
  // caps keep it admissible).
  std::size_t new_nodes_bound() {
    std::size_t best = unmet_requests();
    if (best == 0) return 0;
    const std::size_t remaining = target_size_ - size_;
    if (best > remaining) return best;
    if (bound_.size() != nodes_of_request_.size()) bound_.assign(nodes_of_request_.size(), BoundEntry{});
    if (++bound_epoch_ == 0) {  // wrapped: no old stamp may match
      std::fill(bound_.begin(), bound_.end(), BoundEntry{});
      bound_epoch_ = 1;
    }
    bound_visits_ = 0;
    unmet_.assign(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(best));
    for (std::size_t k : unmet_) {
      best = std::max(best, sub_graph_bound(k, 0, remaining));
      if (best > remaining) break;
    }
    return best;
  }

  // The new nodes request k's sub-graph needs: 0 if k holds a node, its value if this walk
  // valued it already (0 while in progress: a cycle), else a visit. Small enough to inline, so
  // only a visit costs a call (the walk is most of an AMX extraction's time).
  std::size_t sub_graph_bound(std::size_t k, std::size_t depth, std::size_t remaining) {
    if (has_node_[k]) return 0;
    const BoundEntry& e = bound_[k];
    return e.stamp == bound_epoch_ ? e.memo : visit_bound(k, depth, remaining);
  }

  // Values request k (no node, not valued in this walk) as the least over its alternatives of
  // 1 + max(distinct node-less operands, largest operand value).
  std::size_t visit_bound(std::size_t k, std::size_t depth, std::size_t remaining) {
    bound_[k] = BoundEntry{bound_epoch_, 0};
    if (depth > std::min<std::size_t>(remaining, kBoundDepth) || ++bound_visits_ > kBoundVisits || out_of_time()) {
      bound_[k].memo = 1;  // admissible; after the deadline the search stops at its next step anyway
      return 1;
    }
    // Nothing below resizes these during a walk, so their data pointers stay valid.
    const std::uint32_t* const nodeless_operands = nodeless_operands_.data();
    const std::uint32_t* const operands = bound_operands_.data();
    const std::uint32_t* const operand_begin = bound_operand_begin_.data();
    std::size_t value = kUnreachable;
    for (std::uint32_t a = bound_alternatives_[k]; a < bound_alternatives_[k + 1]; ++a) {
      const std::uint32_t* first = operands + operand_begin[a];
      const std::uint32_t* last = operands + operand_begin[a + 1];
      // Branch and bound: an alternative costs at least 1 + count, and once 1 + largest reaches
      // the best alternative so far, its other operands cannot make it the best.
      const std::size_t count = nodeless_operands[a];  // its distinct operand requests with no node yet
      if (1 + count >= value) continue;
      if (count == 0) {  // every operand holds a node: 1, the least any alternative can cost
        value = 1;
        break;
      }
      std::size_t largest = 0;
      for (const std::uint32_t* c = first; c != last && 1 + largest < value; ++c)
        largest = std::max(largest, sub_graph_bound(*c, depth + 1, remaining));
      value = std::min(value, 1 + std::max(largest, count));  // count >= 1: at least 2
    }
    if (value == kUnreachable) value = 1;  // unreachable requests are filtered; stay admissible anyway
    bound_[k].memo = static_cast<std::uint32_t>(value);
    return value;
  }

  // The request graph as sub_graph_bound reads it at every step, flat: per request its
  // alternatives, per alternative its distinct non-leaf operand requests. In AMX compiles this
  // bound was the largest function (14 % of the samples); flat, its samples fell by 45 %. For
  // the walk's branch and bound, a request's alternatives come by their standalone bound
  // (1 + max(largest min_size, count)) and an alternative's operands by their min_size, largest
  // first: the least alternative tends to come first and the largest operand to end the walk.
  // Neither order changes what the bound is (a least and a largest), only how soon it is known;
  // where the walk's caps or a cycle answer early, the answer differs but stays admissible.
  void lay_out_bound_graph() {
    const std::size_t n = requests_.request_count();
    bound_alternatives_.assign(n + 1, 0);
    bound_operand_begin_.assign(1, 0);
    bound_operands_.clear();
    std::vector<std::pair<std::size_t, std::vector<std::uint32_t>>> alternatives;  // (standalone bound, operands)
    for (std::size_t k = 0; k < n; ++k) {
      bound_alternatives_[k] = static_cast<std::uint32_t>(bound_operand_begin_.size() - 1);
      alternatives.clear();
      for (const Alternative& alt : requests_.alternatives(k)) {
        std::vector<std::uint32_t> operands;
        for (Request r : alt.operands) {
          if (is_leaf_request(r)) continue;
          const auto child = static_cast<std::uint32_t>(key(r));
          if (std::find(operands.begin(), operands.end(), child) == operands.end()) operands.push_back(child);
        }
        std::stable_sort(operands.begin(), operands.end(),
                         [&](std::uint32_t x, std::uint32_t y) { return requests_.min_size(x) > requests_.min_size(y); });
        const std::size_t largest = operands.empty() ? 0 : requests_.min_size(operands.front());
        alternatives.emplace_back(1 + std::max(largest, operands.size()), std::move(operands));
      }
      std::stable_sort(alternatives.begin(), alternatives.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (const auto& [standalone, operands] : alternatives) {
        bound_operands_.insert(bound_operands_.end(), operands.begin(), operands.end());
        bound_operand_begin_.push_back(static_cast<std::uint32_t>(bound_operands_.size()));
      }
    }
    bound_alternatives_[n] = static_cast<std::uint32_t>(bound_operand_begin_.size() - 1);
    // The alternatives that read each request, so a node made or undone updates their counts.
    const std::size_t alternative_count = bound_operand_begin_.size() - 1;
    reading_begin_.assign(n + 1, 0);
    for (std::uint32_t c : bound_operands_) ++reading_begin_[c + 1];
    for (std::size_t k = 0; k < n; ++k) reading_begin_[k + 1] += reading_begin_[k];
    reading_alternatives_.resize(bound_operands_.size());
    std::vector<std::uint32_t> fill(reading_begin_.begin(), reading_begin_.end() - 1);
    for (std::uint32_t a = 0; a < alternative_count; ++a)
      for (std::uint32_t i = bound_operand_begin_[a]; i < bound_operand_begin_[a + 1]; ++i) reading_alternatives_[fill[bound_operands_[i]]++] = a;
  }

  // has_node_[k] := `value`, keeping nodeless_operands_ in step: the bound walk reads an
  // alternative's node-less operand count at every visit, and counting it there was the
  // walk's largest cost (it reads every operand of every alternative it weighs).
  void set_has_node(std::size_t k, bool value) {
    if ((has_node_[k] != 0) == value) return;
    has_node_[k] = value ? 1 : 0;
    for (std::uint32_t i = reading_begin_[k]; i < reading_begin_[k + 1]; ++i) {
      std::uint32_t& count = nodeless_operands_[reading_alternatives_[i]];
      count = value ? count - 1 : count + 1;
    }
  }

  // One unit of search work (a DFS step or a bound visit), counted in options_.work; reads the
  // clock every kDeadlineStride units so the check stays cheap. Sticky once the deadline has
  // passed or the shared work limit is reached.
  bool out_of_time() {
    if (expired_) return true;
    ++work_units_;
    if (options_.work) {
      if (options_.work->exhausted()) return expired_ = true;
      ++options_.work->spent;
    }
    if (options_.deadline == std::chrono::steady_clock::time_point::max() || ++ticks_ % kDeadlineStride != 0) return false;
    expired_ = std::chrono::steady_clock::now() >= options_.deadline;
    return expired_;
  }

  bool is_concat_slot(const Slot& slot) const {
    return slot.parent >= 0 && nodes_[static_cast<std::size_t>(slot.parent)].alternative->concat;
  }

  void link(const Slot& slot, int node) {
    if (slot.parent < 0)
      root_nodes_[slot.operand] = node;
    else
      nodes_[static_cast<std::size_t>(slot.parent)].operands[slot.operand] = node;
  }

  // `node` is finished: its creator (if the slot filled is its creator's) has one operand less to wait for.
  void operand_done(Frame& f, int parent) {
    while (parent >= 0) {
      WorkNode& p = nodes_[static_cast<std::size_t>(parent)];
      --p.pending;
      f.decremented.push_back(parent);
      if (p.pending != 0) return;
      p.finished = true;
      f.finished.push_back(parent);
      parent = p.creator;
    }
  }

  void apply(Frame& f, const Option& o) {
    f.applied = true;
    f.created = f.duplicate = f.counted = false;
    f.pushed = 0;
    f.concat_use = -1;
    f.decremented.clear();
    f.finished.clear();
    const Request r = f.slot.request;
    auto& same = nodes_of_request_[key(r)];
    int target = o.node;
    if (o.kind == Option::LeafNode) {
      // One leaf per request; a root may already hold an instruction node for it.
      const auto leaf = std::find_if(same.begin(), same.end(), [&](int n) { return !nodes_[static_cast<std::size_t>(n)].alternative; });
      if (leaf != same.end()) {
        target = *leaf;
      } else {
        push_node(r).finished = true;
        same.push_back(static_cast<int>(node_count_ - 1));
        set_has_node(key(r), true);
        f.created = true;
        target = same.back();
      }
    } else if (o.kind == Option::Fresh) {
      WorkNode& node = push_node(r);
      node.alternative = o.alternative;
      node.operands.assign(o.alternative->operands.size(), -1);
      node.creator = f.slot.parent;
      node.pending = o.alternative->operands.size();
      node.finished = node.pending == 0;
      target = static_cast<int>(node_count_ - 1);
      f.duplicate = !same.empty();
      duplicates_ += f.duplicate ? 1 : 0;
      same.push_back(target);
      set_has_node(key(r), true);
      f.created = f.counted = true;
      ++size_;
      for (std::size_t k = o.alternative->operands.size(); k-- > 0;)
        pending_.push_back(Slot{target, k, o.alternative->operands[k]});
      f.pushed = o.alternative->operands.size();
    }
    link(f.slot, target);
    if (o.kind != Option::LeafNode && is_concat_slot(f.slot)) {
      ++nodes_[static_cast<std::size_t>(target)].concat_uses;
      f.concat_use = target;
    }
    if (nodes_[static_cast<std::size_t>(target)].finished) {
      if (o.kind == Option::Fresh) f.finished.push_back(target);
      operand_done(f, f.slot.parent);
    }
  }

  void undo(Frame& f) {
    f.applied = false;
    for (int n : f.finished) nodes_[static_cast<std::size_t>(n)].finished = false;
    for (int n : f.decremented) ++nodes_[static_cast<std::size_t>(n)].pending;
    if (f.concat_use >= 0) --nodes_[static_cast<std::size_t>(f.concat_use)].concat_uses;
    // A fresh node with no operands was marked finished above; leaves are always finished.
    link(f.slot, -1);
    pending_.resize(pending_.size() - f.pushed);
    if (f.created) {
      auto& same = nodes_of_request_[key(f.slot.request)];
      same.pop_back();
      set_has_node(key(f.slot.request), !same.empty());
      --node_count_;
    }
    if (f.counted) --size_;
    if (f.duplicate) --duplicates_;
  }

  PiiGraph build() const {
    std::vector<PiiNode> out;
    out.reserve(node_count_);
    for (std::size_t i = 0; i < node_count_; ++i) {
      const WorkNode& w = nodes_[i];
      PiiNode p = requests_.node(w.request, w.alternative);
      for (int o : w.operands) p.operands.push_back(static_cast<std::size_t>(o));
      out.push_back(std::move(p));
    }
    std::vector<std::size_t> roots;
    for (int r : root_nodes_) roots.push_back(static_cast<std::size_t>(r));
    return PiiGraph(std::move(out), roots);
  }

  ExtractorOptions options_;
  RequestGraph requests_;
  PiiGraphSet own_seen_;
  PiiGraphSet* seen_;

  // Search state.
  std::vector<WorkNode> nodes_;
  std::vector<std::vector<int>> nodes_of_request_;  // per request key, creation order
  std::vector<Slot> pending_;
  std::size_t node_count_ = 0;  // nodes_[0, node_count_) are the graph's; the rest wait for reuse
  std::vector<Frame> frames_;
  std::size_t depth_ = 0;       // frames_[0, depth_) are the search's stack
  std::vector<int> root_nodes_;
  std::vector<std::size_t> scratch_;
  std::vector<std::size_t> unmet_;  // new_nodes_bound's copy of the unmet requests
  static constexpr std::size_t kBoundDepth = 512;
  static constexpr std::size_t kBoundVisits = 1 << 14;
  static constexpr std::size_t kDeadlineStride = 1024;
  std::size_t ticks_ = 0;
  bool expired_ = false;
  std::uint64_t work_units_ = 0;  // counted by out_of_time, for pause_after
  std::uint64_t pause_at_ = std::numeric_limits<std::uint64_t>::max();
  bool paused_ = false;
  bool timed_out_ = false;
  std::vector<std::uint32_t> unmet_stamp_;  // per request key: listed by unmet_requests in this epoch
  std::uint32_t unmet_epoch_ = 0;
  // Per request key, the bound walk's value and the walk (epoch) it belongs to, side by side:
  // a walk reads both for every operand it meets.
  struct BoundEntry {
    std::uint32_t stamp = 0;
    std::uint32_t memo = 0;
  };
  std::vector<BoundEntry> bound_;
  std::uint32_t bound_epoch_ = 0;
  std::size_t bound_visits_ = 0;
  std::vector<std::uint8_t> has_node_;               // per request key: nodes_of_request_ is not empty
  std::vector<std::uint32_t> bound_alternatives_;    // per request key (+1): its run of alternatives
  std::vector<std::uint32_t> bound_operand_begin_;   // per alternative (+1): its run in bound_operands_
  std::vector<std::uint32_t> bound_operands_;        // distinct non-leaf operand request keys
  std::vector<std::uint32_t> nodeless_operands_;     // per alternative: its operands with no node yet
  std::vector<std::uint32_t> reading_begin_;         // per request key (+1): its run in reading_alternatives_
  std::vector<std::uint32_t> reading_alternatives_;  // the alternatives each request is an operand of
  std::size_t size_ = 0;
  std::size_t duplicates_ = 0;
  std::size_t target_size_ = 0;
  std::size_t first_size_ = 0;  // the first level's size: no graph has fewer distinct requests
  std::size_t target_duplicates_ = 0;
  std::size_t states_ = 0;
  bool descend_ = false;
  bool size_pruned_ = false;
  bool duplicates_pruned_ = false;
  bool finished_ = false;
  bool exhaustive_ = false;
};

}  // namespace act::select
