// The e-graph: hashconsed e-nodes, e-classes over a union-find, and egg-style deferred rebuilding
// (unions only record work; `rebuild` restores congruence and analysis data in one pass).
//
// Storage: every added node gets the next id and lives forever in one arena (operator payload
// + a span into one shared child-id array). A node is *live* while it is the hashcons entry for
// its contents; a node found congruent to another during rebuild dies and drops out of its
// class. Rebuilding rewrites the children of stale nodes in place. Class records live in
// fixed-size chunks (chunked_vector.hpp): adding a class never moves the others.
// What e-matching reads per visit is kept dense, apart from the class records: each node's
// discriminant, each class's kind bits, and (laid out by every rebuild) the live nodes class
// after class. On a 100k-node e-graph the scattered class records and their node vectors were
// two cache misses per visited class, a third of a compile.
//
// Contract: queries (eclass, classes, classes_with, lookup, node children being canonical,
// e-matching) describe the e-graph as of the last `rebuild`. After `add` alone the e-graph
// stays clean; after a successful `unite` call `rebuild` (a no-op when nothing is pending).
// Nothing here iterates a hash table, so results are reproducible run to run.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "act/core/error.hpp"
#include "act/egraph/chunked_vector.hpp"
#include "act/egraph/id.hpp"
#include "act/egraph/language.hpp"
#include "act/egraph/node_table.hpp"
#include "act/egraph/union_find.hpp"

namespace act::egraph {

// One e-class. `nodes` are live node ids in ascending order; `parents` are ids of the nodes that
// use this class as a child, ascending and unique after a rebuild (map them with find()).
template <class Data>
struct EClass {
  std::vector<Id> nodes;
  std::vector<Id> parents;
  Data data;
};

// A number no other e-graph of the process has, drawn again by a copy: lets a cache kept beside
// an e-graph (view_rules.hpp) tell a new e-graph at the same address from the one it was filled on.
class InstanceSerial {
 public:
  InstanceSerial() : value_(next()) {}
  InstanceSerial(const InstanceSerial&) : value_(next()) {}
  InstanceSerial& operator=(const InstanceSerial&) {
    value_ = next();
    return *this;
  }
  std::uint64_t value() const { return value_; }

 private:
  static std::uint64_t next() {
    static std::atomic<std::uint64_t> counter{0};
    return ++counter;
  }
  std::uint64_t value_;
};

template <Language L, class A = NoAnalysis>
class EGraph {
 public:
  using Op = typename L::Op;
  using Data = typename A::Data;
  using Class = EClass<Data>;

  EGraph() = default;
  explicit EGraph(A analysis) : analysis_(std::move(analysis)) {}

  void reserve(std::size_t nodes) {
    nodes_.reserve(nodes);
    classes_.reserve(nodes);
    union_find_.reserve(nodes);
    table_.reserve(nodes);
  }

  // ---- building ----------------------------------------------------------------------------

  // Adds the node `op(children...)` unless an equal one exists; returns its (canonical) class.
  Id add(const Op& op, std::span<const Id> children) {
    scratch_.assign(children.begin(), children.end());  // also guards against aliasing the arena
    for (Id& c : scratch_) {
      check_id(c);
      c = union_find_.find_and_compress(c);
    }
    std::uint32_t discriminant = L::discriminant(op);
    if (discriminant >= kMaxDiscriminant)
      throw Error(ErrorKind::Internal, "e-graph: operator discriminant out of range");
    Id id = static_cast<Id>(nodes_.size());
    if (id == kNoId) throw Error(ErrorKind::Internal, "e-graph: out of node ids");
    std::uint32_t hash = hash_node(op, scratch_);
    // One probe: either finds the equal node or claims the slot for `id` (built just below,
    // before anything can look at the table again).
    Id existing = table_.find_or_insert(hash, id, [&](Id n) { return same_contents(n, op, scratch_); });
    if (existing != kNoId) return union_find_.find_and_compress(existing);
    NodeRecord record{op, static_cast<std::uint32_t>(child_ids_.size()),
                      static_cast<std::uint32_t>(scratch_.size()), discriminant};
    child_ids_.insert(child_ids_.end(), scratch_.begin(), scratch_.end());
    nodes_.push_back(std::move(record));
    discriminants_.push_back(static_cast<std::uint16_t>(discriminant));
    live_.push_back(1);
    analysis_queued_.push_back(0);
    union_find_.make_set();
    for (Id c : scratch_) {
      std::vector<Id>& parents = classes_[c].parents;
      if (parents.empty() || parents.back() != id) parents.push_back(id);  // f(x, x) once
    }

    Data data = analysis_.make(std::as_const(*this), node(id));
    classes_.emplace_back(std::vector<Id>{id}, std::vector<Id>{}, std::move(data));
    kinds_.push_back(kind_bit(discriminant));
    class_ids_.push_back(id);  // ids only grow, so both lists stay sorted
    if (op_index_.size() <= discriminant) op_index_.resize(discriminant + 1);
    op_index_[discriminant].push_back(id);
    ++num_classes_;
    call_modify(id);
    return union_find_.find_and_compress(id);
  }

  Id add(const Op& op, std::initializer_list<Id> children = {}) {
    return add(op, std::span<const Id>(children.begin(), children.size()));
  }

  // Merges the classes of `a` and `b`. True if they were different. Leaves the e-graph dirty.
  bool unite(Id a, Id b) {
    check_id(a);
    check_id(b);
    a = union_find_.find_and_compress(a);
    b = union_find_.find_and_compress(b);
    if (a == b) return false;
    // The class with more parents survives: the other's parents are the ones to repair.
    if (classes_[a].parents.size() < classes_[b].parents.size()) std::swap(a, b);
    union_find_.link(a, b);
    ++num_unions_;
    ++structure_version_;
    if (grown_at_.size() <= a) grown_at_.resize(static_cast<std::size_t>(a) + 1, 0);
    grown_at_[a] = structure_version_;
    --num_classes_;
    dirty_ = true;
    touched_.push_back(a);

    std::vector<Id> loser_nodes = std::exchange(classes_[b].nodes, {});
    std::vector<Id> loser_parents = std::exchange(classes_[b].parents, {});
    pending_.insert(pending_.end(), loser_parents.begin(), loser_parents.end());
    MergeResult merged = analysis_.merge(classes_[a].data, std::move(classes_[b].data));
    if (merged.a_changed) queue_analysis(classes_[a].parents);
    if (merged.b_changed) queue_analysis(loser_parents);
    Class& winner = classes_[a];
    winner.nodes.insert(winner.nodes.end(), loser_nodes.begin(), loser_nodes.end());
    winner.parents.insert(winner.parents.end(), loser_parents.begin(), loser_parents.end());
    call_modify(a);
    return true;
  }

  // Restores congruence closure and analysis data, then tidies the touched classes and the
  // operator index. Returns the number of unions it performed (congruences found). Costs nothing
  // when the e-graph is clean.
  std::size_t rebuild() {
    if (!dirty_) return 0;
    ++structure_version_;
    rebuilt_at_ = structure_version_;
    std::size_t unions_before = num_unions_;
    while (!pending_.empty() || !analysis_pending_.empty()) {
      while (!pending_.empty()) {
        Id n = pending_.back();
        pending_.pop_back();
        repair_node(n);
      }
      while (!analysis_pending_.empty()) {
        Id n = analysis_pending_.back();
        analysis_pending_.pop_back();
        analysis_queued_[n] = 0;
        repair_analysis(n);
      }
    }
    tidy_classes();
    lay_out_class_nodes();
    dirty_ = false;
    return num_unions_ - unions_before;
  }

  bool is_clean() const { return !dirty_; }

  // A class's `kinds` bit for discriminant d: one of 64, so kinds may share a bit.
  static constexpr std::uint64_t kind_bit(std::uint32_t d) {
    return std::uint64_t{1} << ((d ^ (d >> 6) ^ (d >> 10)) & 63);
  }

  // ---- queries -------------------------------------------------------------------------------

  Id find(Id id) const {
    check_id(id);
    return union_find_.find(id);
  }
  bool same(Id a, Id b) const { return find(a) == find(b); }

  // The class holding a node equal to `op(children...)`, if any.
  std::optional<Id> lookup(const Op& op, std::span<const Id> children) const {
    Id node_id = lookup_node(op, children);
    if (node_id == kNoId) return std::nullopt;
    return union_find_.find(node_id);
  }
  std::optional<Id> lookup(const Op& op, std::initializer_list<Id> children = {}) const {
    return lookup(op, std::span<const Id>(children.begin(), children.size()));
  }

  // The live node equal to `op(children...)`, or kNoId.
  Id lookup_node(const Op& op, std::span<const Id> children) const {
    constexpr std::size_t kInline = 8;
    Id inline_buffer[kInline];
    std::vector<Id> heap_buffer;
    std::span<Id> canonical;
    if (children.size() <= kInline) {
      canonical = std::span<Id>(inline_buffer, children.size());
    } else {
      heap_buffer.resize(children.size());
      canonical = heap_buffer;
    }
    for (std::size_t i = 0; i < children.size(); ++i) canonical[i] = find(children[i]);
    std::uint32_t hash = hash_node(op, canonical);
    return table_.find(hash, [&](Id n) { return same_contents(n, op, canonical); });
  }

  NodeView<Op> node(Id node_id) const {
    check_id(node_id);
    const NodeRecord& r = nodes_[node_id];
    return NodeView<Op>{node_id, r.op,
                        std::span<const Id>(child_ids_.data() + r.first_child, r.arity)};
  }
  std::uint32_t discriminant(Id node_id) const {
    check_id(node_id);
    return discriminants_[node_id];
  }

  const Class& eclass(Id id) const { return classes_[find(id)]; }
  // eclass(id).nodes, read (while the e-graph is clean) from one array that the last rebuild
  // laid out class after class. E-matching visits a class's nodes far more often than the
  // e-graph changes, and the class records (and each one's own node vector) are scattered
  // across the heap: two cache misses per visit, most of a large search's time. A class
  // created by `add` since that rebuild is not in the array (it holds one node, itself), and
  // a dirty e-graph's pending unions are only in the records: both read the record.
  std::span<const Id> class_nodes(Id id) const {
    const Id cls = find(id);
    if (dirty_ || cls >= flat_ids_) return classes_[cls].nodes;
    return std::span<const Id>(flat_nodes_.data() + flat_offsets_[cls], flat_offsets_[cls + 1] - flat_offsets_[cls]);
  }
  // After a rebuild: kind_bit(d) is set for the discriminant d of each node of the class, so
  // e-matching skips a class lacking the kind it looks for. Kept apart from the class records
  // (like discriminants_) because matching reads it for every class it visits: a dense array
  // stays in cache where a class record would be one miss per visit.
  std::uint64_t kinds(Id cls) const { return kinds_[find(cls)]; }
  const Data& data(Id id) const { return classes_[find(id)].data; }

  // Canonical class ids, ascending.
  std::span<const Id> classes() const { return class_ids_; }
  // Canonical ids of the classes holding at least one node of this operator kind, ascending.
  std::span<const Id> classes_with(std::uint32_t discriminant) const {
    if (discriminant >= op_index_.size()) return {};
    return op_index_[discriminant];
  }

  std::size_t num_nodes() const { return table_.size(); }    // live (distinct) e-nodes
  std::size_t num_classes() const { return num_classes_; }
  std::size_t num_ids() const { return nodes_.size(); }      // nodes ever added
  std::size_t num_unions() const { return num_unions_; }     // successful unions ever
  // Changes whenever some existing class's nodes or canonical id may change (a successful
  // unite, a rebuild with work to do). `add` leaves it: a new node starts a new class, and no
  // existing node has it as a child. So whatever a walk down from existing classes finds holds
  // while the version stands (view_rules.hpp stamps the walks it keeps with it).
  std::uint64_t structure_version() const { return structure_version_; }
  // This e-graph among all of the process's, copies included (see InstanceSerial).
  std::uint64_t serial() const { return serial_.value(); }
  // Whether class `cls`, canonical at structure version `version`, still is and still holds the
  // nodes it held then: no union has grown it or merged it away, and no rebuild has run since.
  // Finer than comparing versions: a walk that read a few classes stays valid through unions
  // elsewhere (view_rules.hpp remembers such walks across the unions of one rule's matches).
  bool unchanged_since(Id cls, std::uint64_t version) const {
    check_id(cls);
    if (rebuilt_at_ > version || union_find_.find(cls) != cls) return false;
    return cls >= grown_at_.size() || grown_at_[cls] <= version;
  }

  const A& analysis() const { return analysis_; }
  A& analysis() { return analysis_; }

 private:
  struct NodeRecord {
    Op op;
    std::uint32_t first_child;
    std::uint32_t arity;
    std::uint32_t discriminant;
  };

  // Inlined into every query; the throw stays out of line so it does not stop that.
  void check_id(Id id) const {
    if (id >= nodes_.size()) [[unlikely]]
      throw_unknown_id(id);
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void throw_unknown_id(Id id) {
    throw Error(ErrorKind::Internal, fmt::format("e-graph: id {} was never added", id));
  }

  std::span<Id> children_of(Id n) {
    return std::span<Id>(child_ids_.data() + nodes_[n].first_child, nodes_[n].arity);
  }

  static std::uint32_t hash_node(const Op& op, std::span<const Id> children) {
    std::uint64_t h = static_cast<std::uint64_t>(L::hash(op));
    for (Id c : children) h = mix_hash(h, c);
    h = mix_hash(h, children.size());
    return static_cast<std::uint32_t>(finish_hash(h));
  }

  bool same_contents(Id n, const Op& op, std::span<const Id> children) const {
    const NodeRecord& r = nodes_[n];
    if (r.arity != children.size()) return false;
    const Id* mine = child_ids_.data() + r.first_child;
    for (std::size_t i = 0; i < children.size(); ++i)
      if (mine[i] != children[i]) return false;
    return r.op == op;
  }

  void call_modify(Id cls) {
    if constexpr (requires(A& a, EGraph& g) { a.modify(g, Id{}); }) analysis_.modify(*this, cls);
  }

  void queue_analysis(std::span<const Id> nodes) {
    for (Id n : nodes) {
      if (analysis_queued_[n]) continue;
      analysis_queued_[n] = 1;
      analysis_pending_.push_back(n);
    }
  }

  // Re-canonicalises a node whose children may have been merged; a node that now equals a live
  // one dies and its class is united with the survivor's (congruence).
  void repair_node(Id n) {
    if (!live_[n]) return;
    std::span<Id> children = children_of(n);
    bool stale = false;
    for (Id c : children) stale |= union_find_.find(c) != c;
    if (!stale) return;
    const Op& op = nodes_[n].op;
    table_.erase(hash_node(op, children), n);
    for (Id& c : children) c = union_find_.find_and_compress(c);
    std::uint32_t hash = hash_node(op, children);
    Id twin = table_.find(hash, [&](Id m) { return same_contents(m, op, children); });
    if (twin == kNoId) {
      table_.insert(hash, n);
      return;
    }
    live_[n] = 0;
    touched_.push_back(n);  // its class must drop it
    touched_.insert(touched_.end(), children.begin(), children.end());  // and their parent lists
    unite(twin, n);
  }

  // Recomputes a node's analysis value and joins it into its class, propagating upward.
  void repair_analysis(Id n) {
    if (!live_[n]) return;
    Id cls = union_find_.find_and_compress(n);
    Data fresh = analysis_.make(std::as_const(*this), node(n));
    MergeResult merged = analysis_.merge(classes_[cls].data, std::move(fresh));
    if (merged.a_changed) {
      queue_analysis(classes_[cls].parents);
      call_modify(cls);
    }
  }

  void tidy_classes() {
    // Each touched class once; a stamp per id avoids sorting the (possibly long) touched list.
    ++tidy_epoch_;
    tidy_stamp_.resize(nodes_.size(), 0);
    for (Id t : touched_) {
      Id cls = union_find_.find_and_compress(t);
      if (tidy_stamp_[cls] == tidy_epoch_) continue;
      tidy_stamp_[cls] = tidy_epoch_;
      Class& c = classes_[cls];
      std::erase_if(c.nodes, [&](Id n) { return !live_[n]; });
      std::uint64_t kinds = 0;
      for (Id n : c.nodes) kinds |= kind_bit(discriminants_[n]);
      kinds_[cls] = kinds;
      std::sort(c.nodes.begin(), c.nodes.end());
      std::erase_if(c.parents, [&](Id n) { return !live_[n]; });
      std::sort(c.parents.begin(), c.parents.end());
      c.parents.erase(std::unique(c.parents.begin(), c.parents.end()), c.parents.end());
    }
    touched_.clear();
    union_find_.flatten();
    std::erase_if(class_ids_, [&](Id id) { return union_find_.find(id) != id; });
    for (std::vector<Id>& list : op_index_) {
      bool changed = false;
      for (Id& id : list) {
        Id root = union_find_.find(id);
        changed |= root != id;
        id = root;
      }
      if (!changed) continue;
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
  }

  // Fills flat_nodes_/flat_offsets_ from the node ids in ascending order (so each class's run
  // is ascending, as in its record). Linear in the nodes, reading dense arrays only.
  void lay_out_class_nodes() {
    const std::size_t n = nodes_.size();
    flat_offsets_.assign(n + 1, 0);
    for (Id i = 0; i < n; ++i)
      if (live_[i]) ++flat_offsets_[union_find_.find(i) + 1];
    for (std::size_t i = 0; i < n; ++i) flat_offsets_[i + 1] += flat_offsets_[i];
    flat_nodes_.resize(flat_offsets_[n]);
    flat_cursor_.assign(flat_offsets_.begin(), flat_offsets_.end() - 1);
    for (Id i = 0; i < n; ++i)
      if (live_[i]) flat_nodes_[flat_cursor_[union_find_.find(i)]++] = i;
    flat_ids_ = static_cast<Id>(n);
  }

  A analysis_;
  std::vector<NodeRecord> nodes_;
  std::vector<Id> child_ids_;
  std::vector<std::uint16_t> discriminants_;  // per node (< kMaxDiscriminant), dense for matching
  std::vector<std::uint64_t> kinds_;          // per id; meaningful for canonical class ids
  std::vector<Id> flat_nodes_;                // the live nodes, class after class (class_nodes)
  std::vector<std::uint32_t> flat_offsets_;   // per id below flat_ids_ (+1): its run in flat_nodes_
  std::vector<std::uint32_t> flat_cursor_;    // scratch of lay_out_class_nodes
  Id flat_ids_ = 0;                           // ids laid out by the last rebuild
  std::vector<std::uint8_t> live_;
  std::vector<std::uint8_t> analysis_queued_;
  UnionFind union_find_;
  NodeTable table_;
  ChunkedVector<Class> classes_;             // indexed by id; only roots are meaningful
  std::vector<Id> class_ids_;                // canonical ids (after rebuild), ascending
  std::vector<std::vector<Id>> op_index_;    // discriminant -> classes holding such a node
  std::vector<Id> pending_;                  // nodes whose children may be stale
  std::vector<Id> analysis_pending_;         // nodes whose class data may need refreshing
  std::vector<Id> touched_;                  // classes whose node/parent lists need tidying
  std::vector<std::uint32_t> tidy_stamp_;    // per id: the rebuild that last tidied it
  std::uint32_t tidy_epoch_ = 0;
  std::vector<Id> scratch_;
  std::size_t num_classes_ = 0;
  std::size_t num_unions_ = 0;
  std::uint64_t structure_version_ = 0;
  std::vector<std::uint64_t> grown_at_;      // per id: the structure version of its last union as survivor
  std::uint64_t rebuilt_at_ = 0;             // the structure version of the last rebuild with work to do
  InstanceSerial serial_;
  bool dirty_ = false;
};

}  // namespace act::egraph
