// Patterns over a language and their compiled e-matching programs.
//
// A pattern is a DAG of variables (`?x`; repeating one makes the pattern non-linear) and operator
// nodes. An operator node matches through an OpMatcher: either an exact operator (usable on both
// sides of a rewrite) or a predicate over operators of one kind, which lets a pattern match an
// opcode while ignoring its attributes. Naming an operator node *captures* it: the substitution
// then also holds the id of the e-node it matched, so a condition can read its attributes.
// A right-hand side may build the operator a searcher captured (same kind, same attributes) by
// naming the capture: such a pattern is only instantiated, never searched.
//
// Each pattern is compiled once into a short program for a backtracking matching machine (in the
// spirit of de Moura & Bjørner's e-matching abstract machine): registers hold class ids;
//   Bind    for each node of the class in reg that the matcher accepts, load its children into
//           consecutive registers (and its id into the capture register) and continue;
//   Compare continue only if two registers hold the same class (repeated variable, shared node);
//   Lookup  a sub-pattern whose variables are all bound and whose operators are exact is built by
//           hashcons lookups instead of searched, and compared with its register;
//   Yield   report the substitution.
// The root is seeded from the e-graph's operator index (or every class when the root is a
// variable). When a child of the root is an operator whose classes have fewer parents than there
// are root-kind classes (`(slice (exponential ?x))`: few exponentials, thousands of slices), the
// candidate root nodes are collected from those parent lists instead, then visited in the order
// the scan would have visited them (class, then node id), so the matches come out the same.
// Sub-patterns shared in the DAG are matched once; later references compare.
// Searching requires a clean (rebuilt) e-graph. A search may be given a deadline: one pattern
// over a large e-graph can take longer than a whole compile's budget (a class holding
// thousands of slices makes `(concatenate (slice ?x) (slice ?x))` quadratic), so the machine
// reads the clock every few hundred steps and gives up once the deadline has passed.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "act/core/error.hpp"
#include "act/egraph/id.hpp"
#include "act/egraph/language.hpp"

namespace act::egraph {

// When a search or a rewrite's application gives up (Deadline::max(): never).
using Deadline = std::chrono::steady_clock::time_point;

// A slot of a pattern's substitution: a variable (holds a class id) or a capture (a node id).
struct Var {
  std::uint32_t index = 0;
  friend bool operator==(Var, Var) = default;
};

// The values of one match, indexed by the searcher pattern's slots.
class Subst {
 public:
  Subst() = default;
  explicit Subst(std::span<const Id> values) : values_(values) {}
  Id operator[](Var v) const {
    if (v.index >= values_.size())
      throw Error(ErrorKind::Internal, fmt::format("substitution has no slot {}", v.index));
    return values_[v.index];
  }
  std::span<const Id> values() const { return values_; }
  std::size_t size() const { return values_.size(); }

 private:
  std::span<const Id> values_;
};

template <Language L>
struct OpMatcher {
  using Op = typename L::Op;

  std::uint32_t discriminant = 0;
  std::optional<Op> exact;                       // match this operator exactly
  std::function<bool(const Op&)> predicate;      // else: any operator of this kind it accepts

  static OpMatcher equal_to(Op op) {
    OpMatcher m;
    m.discriminant = L::discriminant(op);
    m.exact = std::move(op);
    return m;
  }
  // Every operator of kind `discriminant` (that `accept` accepts, when given).
  static OpMatcher of_kind(std::uint32_t discriminant, std::function<bool(const Op&)> accept = {}) {
    OpMatcher m;
    m.discriminant = discriminant;
    m.predicate = std::move(accept);
    return m;
  }

  bool accepts(const Op& op) const {
    if (exact) return op == *exact;
    return L::discriminant(op) == discriminant && (!predicate || predicate(op));
  }
};

// A node of a pattern under construction.
struct PatternRef {
  std::uint32_t index = 0;
};

template <Language L>
class PatternBuilder;

template <Language L>
class Pattern {
 public:
  using Op = typename L::Op;
  static constexpr std::uint32_t kNone = 0xffffffffu;

  struct Node {
    bool is_var = false;
    bool reuses_capture = false;    // builds the operator of the node held by `slot` (no matcher)
    std::uint32_t slot = kNone;     // variable slot, or capture slot of an operator node
    std::uint32_t matcher = kNone;  // index into matchers (operator nodes but reusing ones)
    std::uint32_t first_child = 0;  // into child indices; children precede their parents
    std::uint32_t arity = 0;
  };

  struct Instruction {
    enum class Kind : std::uint8_t { Bind, Compare, Lookup, Yield };
    Kind kind = Kind::Yield;
    std::uint32_t reg = 0;        // Bind/Lookup: class register; Compare: first register
    std::uint32_t node = 0;       // Bind/Lookup: pattern node
    std::uint32_t out = 0;        // Bind: first child register; Compare: second register
    std::uint32_t capture = kNone;  // Bind: register receiving the matched node id
  };

  // ---- structure -------------------------------------------------------------------------------
  std::size_t num_slots() const { return slot_names_.size(); }
  std::span<const std::string> slot_names() const { return slot_names_; }
  // True for a slot holding a node id: a capture (searcher) or a reused capture (right-hand side).
  bool is_capture(Var v) const { return v.index < slot_kinds_.size() && slot_kinds_[v.index] != SlotKind::Variable; }
  std::optional<Var> find_slot(std::string_view name) const {
    // Rule conditions look slots up by name at every match; the names are a few characters
    // ("?x", "@dot"), so a plain loop beats a memcmp call per name.
    const auto same = [name](const std::string& n) {
      if (n.size() != name.size()) return false;
      for (std::size_t k = 0; k < n.size(); ++k)
        if (n[k] != name[k]) return false;
      return true;
    };
    for (std::size_t i = 0; i < slot_names_.size(); ++i)
      if (same(slot_names_[i])) return Var{static_cast<std::uint32_t>(i)};
    return std::nullopt;
  }
  // The slot called `name` ("?x" or a capture name); an act::Error if there is none.
  Var slot(std::string_view name) const {
    if (auto v = find_slot(name)) return *v;
    throw Error(ErrorKind::Internal, fmt::format("pattern has no variable or capture '{}'", name));
  }

  std::span<const Node> nodes() const { return nodes_; }
  std::uint32_t root() const { return root_; }
  std::span<const Instruction> program() const { return program_; }
  std::size_t count(typename Instruction::Kind kind) const {
    return static_cast<std::size_t>(std::count_if(program_.begin(), program_.end(),
                                                  [&](const Instruction& i) { return i.kind == kind; }));
  }
  // True when every operator node is exact or reuses a capture, and nothing is captured: the
  // pattern can be built.
  bool instantiable() const {
    for (const Node& n : nodes_)
      if (!n.is_var && !n.reuses_capture && (!matchers_[n.matcher].exact || n.slot != kNone)) return false;
    return true;
  }
  // False when some node reuses a captured operator (a right-hand side only).
  bool searchable() const {
    return std::none_of(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.reuses_capture; });
  }

  // ---- matching (clean e-graph) ------------------------------------------------------------

  // Calls on_match(Id class, const Subst&) for every match; on_match returns false to stop.
  // Returns false when the deadline passed before the search was over (the matches reported
  // so far are a prefix of the full list), true otherwise.
  template <class G, class OnMatch>
  bool search(const G& egraph, OnMatch&& on_match, Deadline deadline = Deadline::max()) const {
    require_searchable();
    Machine<G, OnMatch> m(*this, egraph, on_match, deadline);
    const Node& r = nodes_[root_];
    if (r.is_var) {
      for (Id cls : egraph.classes())
        if (!m.start(cls)) break;
      return !m.interrupted();
    }
    std::span<const Id> roots = egraph.classes_with(matchers_[r.matcher].discriminant);
    if (auto child = rarest_root_child(egraph, roots.size())) {
      for (auto [cls, node] : roots_through_child(egraph, *child))
        if (!m.start(cls, node)) break;
      return !m.interrupted();
    }
    for (Id cls : roots)
      if (!m.start(cls)) break;
    return !m.interrupted();
  }

  // Matches rooted at one class. Returns false if on_match asked to stop.
  template <class G, class OnMatch>
  bool search_class(const G& egraph, Id cls, OnMatch&& on_match) const {
    require_searchable();
    Machine<G, OnMatch> m(*this, egraph, on_match, Deadline::max());
    return m.start(egraph.find(cls));
  }

  // ---- building --------------------------------------------------------------------------------

  // Adds the pattern's term to the e-graph, taking slot values from value_of(Var) -> Id (a class
  // for a variable, a node id for a reused capture). Requires instantiable(). `scratch` is
  // reused storage (no allocation once warm).
  template <class G, class ValueOf>
  Id instantiate(G& egraph, ValueOf&& value_of, std::vector<Id>& scratch) const {
    if (!instantiable())
      throw Error(ErrorKind::Internal, "pattern with predicate or captured operators cannot be instantiated");
    const std::size_t n = nodes_.size();
    scratch.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      if (node.is_var) {
        scratch[i] = value_of(Var{node.slot});
        continue;
      }
      scratch.resize(n);
      for (std::uint32_t k = 0; k < node.arity; ++k) scratch.push_back(scratch[children_[node.first_child + k]]);
      std::span<const Id> kids(scratch.data() + n, node.arity);
      // A copy: adding nodes may move the e-graph's node records.
      const Op op = node.reuses_capture ? Op(egraph.node(value_of(Var{node.slot})).op) : *matchers_[node.matcher].exact;
      Id id = egraph.add(op, kids);
      scratch[i] = id;
    }
    return scratch[root_];
  }

 private:
  friend class PatternBuilder<L>;

  // The position of the root's operator child whose classes have the fewest parents in all,
  // if that is fewer than `root_classes` (else scanning the root's kind is as cheap). Nothing
  // when the program does not start by binding the root (a ground pattern looks it up).
  template <class G>
  std::optional<std::uint32_t> rarest_root_child(const G& egraph, std::size_t root_classes) const {
    if (program_.front().kind != Instruction::Kind::Bind) return std::nullopt;
    const Node& r = nodes_[root_];
    std::size_t best_cost = root_classes;
    std::optional<std::uint32_t> best;
    for (std::uint32_t k = 0; k < r.arity; ++k) {
      const Node& c = nodes_[children_[r.first_child + k]];
      if (c.is_var) continue;
      std::size_t cost = 0;
      for (Id cls : egraph.classes_with(matchers_[c.matcher].discriminant)) {
        cost += egraph.eclass(cls).parents.size();
        if (cost >= best_cost) break;
      }
      if (cost < best_cost) best_cost = cost, best = k;
    }
    return best;
  }

  // (root class, root-kind node) pairs whose child `k` is a class holding that child's operator
  // kind, in scan order and without repeats.
  template <class G>
  std::vector<std::pair<Id, Id>> roots_through_child(const G& egraph, std::uint32_t k) const {
    const Node& r = nodes_[root_];
    const std::uint32_t root_kind = matchers_[r.matcher].discriminant;
    const std::uint32_t child_kind = matchers_[nodes_[children_[r.first_child + k]].matcher].discriminant;
    std::vector<std::pair<Id, Id>> found;
    for (Id cls : egraph.classes_with(child_kind))
      for (Id parent : egraph.eclass(cls).parents) {
        if (egraph.discriminant(parent) != root_kind) continue;
        auto view = egraph.node(parent);
        if (view.children.size() == r.arity && view.children[k] == cls) found.emplace_back(egraph.find(parent), parent);
      }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
  }

  void require_searchable() const {
    if (program_.empty())
      throw Error(ErrorKind::Internal, "a pattern that reuses captured operators cannot be searched");
  }

  template <class G, class OnMatch>
  class Machine {
   public:
    Machine(const Pattern& p, const G& g, OnMatch& on_match, Deadline deadline)
        : p_(p), g_(g), on_match_(on_match), deadline_(deadline), regs_(p.num_regs_, kNoId), values_(p.slot_names_.size(), kNoId) {}

    // Matches rooted at class `cls`; through its node `only_node` alone when one is given.
    bool start(Id cls, Id only_node = kNoId) {
      regs_[0] = cls;
      only_node_ = only_node;
      return run(0);
    }
    bool interrupted() const { return interrupted_; }

   private:
    // One clock read per kStepsPerClockRead steps keeps the check's cost out of profiles.
    static constexpr std::uint32_t kStepsPerClockRead = 256;
    bool deadline_passed() {
      if (deadline_ == Deadline::max() || ++steps_ % kStepsPerClockRead != 0) return false;
      interrupted_ = std::chrono::steady_clock::now() >= deadline_;
      return interrupted_;
    }

    // Returns false once on_match asked to stop or the deadline passed.
    bool run(std::size_t pc) {
      if (deadline_passed()) return false;
      const Instruction& in = p_.program_[pc];
      switch (in.kind) {
        case Instruction::Kind::Bind: {
          const Node& pn = p_.nodes_[in.node];
          const OpMatcher<L>& m = p_.matchers_[pn.matcher];
          if (!(g_.kinds(regs_[in.reg]) & G::kind_bit(m.discriminant))) return true;  // no node of this kind
          const bool one_root = pc == 0 && only_node_ != kNoId;
          for (Id n : one_root ? std::span<const Id>(&only_node_, 1) : g_.class_nodes(regs_[in.reg])) {
            if (g_.discriminant(n) != m.discriminant) continue;
            auto view = g_.node(n);
            if (view.children.size() != pn.arity || !m.accepts(view.op)) continue;
            std::copy(view.children.begin(), view.children.end(), regs_.begin() + in.out);
            if (in.capture != kNone) regs_[in.capture] = n;
            if (!run(pc + 1)) return false;
          }
          return true;
        }
        case Instruction::Kind::Compare:
          return regs_[in.reg] != regs_[in.out] || run(pc + 1);
        case Instruction::Kind::Lookup:
          return lookup(in.node) != regs_[in.reg] || run(pc + 1);
        case Instruction::Kind::Yield:
          for (std::size_t s = 0; s < values_.size(); ++s) values_[s] = regs_[p_.slot_regs_[s]];
          return on_match_(regs_[0], Subst(values_));
      }
      return true;
    }

    // The class of a ground sub-pattern, or kNoId when some node of it is absent.
    Id lookup(std::uint32_t node) {
      const Node& pn = p_.nodes_[node];
      if (pn.is_var) return regs_[p_.slot_regs_[pn.slot]];
      constexpr std::uint32_t kInline = 8;
      Id inline_buffer[kInline];
      std::vector<Id> heap_buffer;
      Id* kids = inline_buffer;
      if (pn.arity > kInline) {
        heap_buffer.resize(pn.arity);
        kids = heap_buffer.data();
      }
      for (std::uint32_t k = 0; k < pn.arity; ++k) {
        kids[k] = lookup(p_.children_[pn.first_child + k]);
        if (kids[k] == kNoId) return kNoId;
      }
      auto found = g_.lookup(*p_.matchers_[pn.matcher].exact, std::span<const Id>(kids, pn.arity));
      return found ? *found : kNoId;
    }

    const Pattern& p_;
    const G& g_;
    OnMatch& on_match_;
    const Deadline deadline_;
    std::uint32_t steps_ = 0;
    bool interrupted_ = false;
    Id only_node_ = kNoId;
    std::vector<Id> regs_;
    std::vector<Id> values_;
  };

  // Builds the matching program; see the header comment.
  void compile() {
    struct Item {
      std::uint32_t node;
      std::uint32_t reg;
    };
    std::vector<std::uint32_t> node_reg(nodes_.size(), kNone);
    slot_regs_.assign(slot_names_.size(), kNone);
    std::uint32_t next_reg = 1;
    std::vector<Item> todo{{root_, 0}};
    program_.clear();

    // A sub-pattern is ground once its variables are bound and it needs no search.
    auto ground = [&](auto& self, std::uint32_t i) -> bool {
      const Node& n = nodes_[i];
      if (n.is_var) return slot_regs_[n.slot] != kNone;
      if (!matchers_[n.matcher].exact || n.slot != kNone) return false;
      for (std::uint32_t k = 0; k < n.arity; ++k)
        if (!self(self, children_[n.first_child + k])) return false;
      return true;
    };
    // Cheap checks first (they prune), then Lookups, then the most recent Bind (depth first).
    auto priority = [&](const Item& it) {
      const Node& n = nodes_[it.node];
      if (n.is_var || node_reg[it.node] != kNone) return 0;
      if (ground(ground, it.node)) return 1;
      return 2;
    };

    while (!todo.empty()) {
      std::size_t pick = todo.size() - 1;
      int best = priority(todo[pick]);
      for (std::size_t i = todo.size(); i-- > 0 && best > 0;) {
        int p = priority(todo[i]);
        if (p < best) best = p, pick = i;
      }
      Item it = todo[pick];
      todo.erase(todo.begin() + static_cast<std::ptrdiff_t>(pick));
      const Node& n = nodes_[it.node];
      Instruction in;
      if (n.is_var) {
        if (slot_regs_[n.slot] == kNone) {
          slot_regs_[n.slot] = it.reg;  // first occurrence binds, for free
          continue;
        }
        in.kind = Instruction::Kind::Compare;
        in.reg = slot_regs_[n.slot];
        in.out = it.reg;
      } else if (node_reg[it.node] != kNone) {
        in.kind = Instruction::Kind::Compare;  // shared sub-pattern: already matched there
        in.reg = node_reg[it.node];
        in.out = it.reg;
      } else if (best == 1) {
        in.kind = Instruction::Kind::Lookup;
        in.reg = it.reg;
        in.node = it.node;
        node_reg[it.node] = it.reg;
      } else {
        in.kind = Instruction::Kind::Bind;
        in.reg = it.reg;
        in.node = it.node;
        in.out = next_reg;
        next_reg += n.arity;
        if (n.slot != kNone) {
          in.capture = next_reg++;
          slot_regs_[n.slot] = in.capture;
        }
        node_reg[it.node] = it.reg;
        for (std::uint32_t k = n.arity; k-- > 0;) todo.push_back({children_[n.first_child + k], in.out + k});
      }
      program_.push_back(in);
    }
    program_.push_back(Instruction{});  // Yield
    num_regs_ = next_reg;
  }

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> children_;
  std::vector<OpMatcher<L>> matchers_;
  std::vector<std::string> slot_names_;
  enum class SlotKind : std::uint8_t { Variable, Capture, ReusedCapture };
  std::vector<SlotKind> slot_kinds_;
  std::uint32_t root_ = 0;
  std::vector<Instruction> program_;
  std::vector<std::uint32_t> slot_regs_;  // register holding each slot's value at Yield
  std::uint32_t num_regs_ = 1;
};

// Builds a pattern bottom-up. Variables with the same name are one node, and an exact operator
// node with the same children as an earlier one is that node, so repeated sub-terms form a DAG.
template <Language L>
class PatternBuilder {
 public:
  using Op = typename L::Op;
  using P = Pattern<L>;

  PatternRef var(std::string_view name) {
    if (name.empty()) throw Error(ErrorKind::Internal, "pattern variable needs a name");
    std::uint32_t slot = slot_for(name, P::SlotKind::Variable);
    for (std::uint32_t i = 0; i < p_.nodes_.size(); ++i)
      if (p_.nodes_[i].is_var && p_.nodes_[i].slot == slot) return PatternRef{i};
    typename P::Node n;
    n.is_var = true;
    n.slot = slot;
    p_.nodes_.push_back(n);
    return PatternRef{static_cast<std::uint32_t>(p_.nodes_.size() - 1)};
  }

  PatternRef op(const Op& op, std::span<const PatternRef> children) {
    check_children(children);
    for (std::uint32_t i = 0; i < p_.nodes_.size(); ++i) {
      const typename P::Node& n = p_.nodes_[i];
      if (n.is_var || n.reuses_capture || n.slot != P::kNone || !p_.matchers_[n.matcher].exact) continue;
      if (n.arity != children.size() || !(*p_.matchers_[n.matcher].exact == op)) continue;
      bool same = true;
      for (std::uint32_t k = 0; k < n.arity; ++k) same &= p_.children_[n.first_child + k] == children[k].index;
      if (same) return PatternRef{i};
    }
    return push_op(OpMatcher<L>::equal_to(op), children, P::kNone);
  }
  PatternRef op(const Op& o, std::initializer_list<PatternRef> children = {}) {
    return op(o, std::span<const PatternRef>(children.begin(), children.size()));
  }

  // An operator node matched by `matcher`; a non-empty `capture` names the matched e-node.
  PatternRef op(OpMatcher<L> matcher, std::span<const PatternRef> children, std::string_view capture = {}) {
    check_children(children);
    std::uint32_t slot = capture.empty() ? P::kNone : slot_for(capture, P::SlotKind::Capture);
    return push_op(std::move(matcher), children, slot);
  }
  PatternRef op(OpMatcher<L> matcher, std::initializer_list<PatternRef> children, std::string_view capture = {}) {
    return op(std::move(matcher), std::span<const PatternRef>(children.begin(), children.size()), capture);
  }

  // For a right-hand side: the operator that the searcher captured as `capture`, over new children.
  PatternRef reuse(std::string_view capture, std::span<const PatternRef> children) {
    check_children(children);
    if (capture.empty()) throw Error(ErrorKind::Internal, "a reused capture needs a name");
    typename P::Node n;
    n.reuses_capture = true;
    n.slot = slot_for(capture, P::SlotKind::ReusedCapture);
    n.first_child = static_cast<std::uint32_t>(p_.children_.size());
    n.arity = static_cast<std::uint32_t>(children.size());
    for (PatternRef c : children) p_.children_.push_back(c.index);
    p_.nodes_.push_back(n);
    return PatternRef{static_cast<std::uint32_t>(p_.nodes_.size() - 1)};
  }
  PatternRef reuse(std::string_view capture, std::initializer_list<PatternRef> children = {}) {
    return reuse(capture, std::span<const PatternRef>(children.begin(), children.size()));
  }

  // The pattern rooted at `root`, keeping only nodes reachable from it, compiled.
  Pattern<L> build(PatternRef root) const {
    if (root.index >= p_.nodes_.size()) throw Error(ErrorKind::Internal, "pattern root was not built here");
    // Keep reachable nodes in their (topological) order and renumber.
    std::vector<std::uint32_t> renumber(p_.nodes_.size(), P::kNone);
    std::vector<std::uint32_t> stack{root.index};
    renumber[root.index] = 0;
    while (!stack.empty()) {
      const typename P::Node& n = p_.nodes_[stack.back()];
      stack.pop_back();
      for (std::uint32_t k = 0; k < n.arity; ++k) {
        std::uint32_t c = p_.children_[n.first_child + k];
        if (renumber[c] == P::kNone) renumber[c] = 0, stack.push_back(c);
      }
    }
    Pattern<L> out;
    std::vector<std::uint32_t> slot_map(p_.slot_names_.size(), P::kNone);
    std::uint32_t next = 0;
    for (std::uint32_t i = 0; i < p_.nodes_.size(); ++i) {
      if (renumber[i] == P::kNone) continue;
      renumber[i] = next++;
      typename P::Node n = p_.nodes_[i];
      if (n.slot != P::kNone) {
        if (slot_map[n.slot] == P::kNone) {
          slot_map[n.slot] = static_cast<std::uint32_t>(out.slot_names_.size());
          out.slot_names_.push_back(p_.slot_names_[n.slot]);
          out.slot_kinds_.push_back(p_.slot_kinds_[n.slot]);
        }
        n.slot = slot_map[n.slot];
      }
      if (!n.is_var) {
        if (!n.reuses_capture) {
          out.matchers_.push_back(p_.matchers_[n.matcher]);
          n.matcher = static_cast<std::uint32_t>(out.matchers_.size() - 1);
        }
        std::uint32_t first = static_cast<std::uint32_t>(out.children_.size());
        for (std::uint32_t k = 0; k < n.arity; ++k) out.children_.push_back(renumber[p_.children_[n.first_child + k]]);
        n.first_child = first;
      }
      out.nodes_.push_back(n);
    }
    out.root_ = renumber[root.index];
    if (out.searchable()) out.compile();
    return out;
  }

 private:
  void check_children(std::span<const PatternRef> children) const {
    for (PatternRef c : children)
      if (c.index >= p_.nodes_.size()) throw Error(ErrorKind::Internal, "pattern child was not built here");
  }

  // A variable or a reused capture may occur many times; a capture names one node.
  std::uint32_t slot_for(std::string_view name, typename P::SlotKind kind) {
    for (std::uint32_t i = 0; i < p_.slot_names_.size(); ++i) {
      if (p_.slot_names_[i] != name) continue;
      if (kind == P::SlotKind::Capture || p_.slot_kinds_[i] != kind)
        throw Error(ErrorKind::Internal, fmt::format("pattern name '{}' is used twice", name));
      return i;
    }
    p_.slot_names_.emplace_back(name);
    p_.slot_kinds_.push_back(kind);
    return static_cast<std::uint32_t>(p_.slot_names_.size() - 1);
  }

  PatternRef push_op(OpMatcher<L> matcher, std::span<const PatternRef> children, std::uint32_t slot) {
    if (matcher.discriminant >= kMaxDiscriminant)
      throw Error(ErrorKind::Internal, "pattern operator discriminant out of range");
    typename P::Node n;
    n.slot = slot;
    n.matcher = static_cast<std::uint32_t>(p_.matchers_.size());
    n.first_child = static_cast<std::uint32_t>(p_.children_.size());
    n.arity = static_cast<std::uint32_t>(children.size());
    p_.matchers_.push_back(std::move(matcher));
    for (PatternRef c : children) p_.children_.push_back(c.index);
    p_.nodes_.push_back(n);
    return PatternRef{static_cast<std::uint32_t>(p_.nodes_.size() - 1)};
  }

  Pattern<L> p_;  // the nodes so far, not yet compiled
};

}  // namespace act::egraph
