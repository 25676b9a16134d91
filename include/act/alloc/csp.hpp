// Module 5: the allocation CSP of one schedule, solved constructively or by Z3.
//
// Unknowns: the addressing attributes beta of every Pii node, and the start (per access dim) of
// every node's data slice. Lengths are known: they follow from the node's type (values.hpp).
//   CSP1  each Pii node's validity constraints over its alpha (fixed) and beta; its Out0 address
//         map equals its own slice (start and length per access dim); every node's slice lies in
//         its buffer (0 <= start, start + length <= access dim size); HBM scratch (storage that
//         is neither a kernel input, a constant nor aliased by a root) starts at or above the end
//         of the constant pool.
//   CSP2  def-use: for each operand edge the consumer's In_k address map (start and length) equals
//         exactly the operand's slice. An Undefined operand (a don't-care input) imposes nothing:
//         the reader reads whatever its map points at (values.hpp); its own start is left 0.
//   CSP3  kernel inputs at their kernel-image addresses, roots at the kernel's output addresses,
//         constants at their pool addresses (values.hpp).
//   identity instructions: slice^H lies inside its operand at the offset its ranges give along
//         the access dims (in HBM, a u8 vector, that is a byte offset); concat^H places its
//         operands contiguously along its dimension, in order, and equals their union. They own
//         no memory: their operands stay live while they are (schedule.hpp). overlay^H places
//         each operand at its byte offset; an operand's footprint (values.hpp) is what bounds and
//         CSP4 see, its whole window must still lie in the buffer.
//   CSP4  every interfering pair of storage values (schedule.hpp) is separated along at least
//         one access dimension: a.start[d] + a.len[d] <= b.start[d] or the converse. For an
//         edge (a, b), a's extent is its needed part (values.hpp), b's its footprint: b's
//         window misses what a still needs (the same as footprints, unless the edge is
//         ordered: a written first, part of its window already dead).
// Solving: first a constructive assignment (weighted union-find over the equalities of CSP1-3
// and the identity instructions, solved for addresses of the form `beta + c`, then first-fit of
// each free class in schedule order, and again most constrained first when that fails) checked
// against every constraint above; when that fails, the same equalities may prove the CSP
// unsatisfiable (they fix two interfering values to overlap: that edge is the core; or they
// contradict each other); otherwise Z3 over linear integer arithmetic: a context of the
// CspSolver's own or the thread's (Z3Context) and a fresh plain SMT solver per problem. CSP4
// edges are guarded by indicator literals so an unsat answer yields an unsat core: the
// interference edges it needs, a subgraph for §6.4 pruning (empty: no schedule can succeed).
// Deterministic by default (random_seed 0, one thread, a fresh solver per problem and a context
// per CspSolver, so a compile's answers do not depend on the problems solved before it).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <z3++.h>

#include "act/alloc/schedule.hpp"
#include "act/alloc/values.hpp"
#include "act/sym/expr.hpp"
#include "act/sym/z3.hpp"

namespace act::alloc {

// Solved addresses: per node, the start of its slice per access dim; per Pii node, beta in
// declared order (empty for other nodes).
struct Assignment {
  std::vector<std::vector<std::int64_t>> start;
  std::vector<std::vector<std::int64_t>> beta;
  friend bool operator==(const Assignment&, const Assignment&) = default;
};

enum class SolvedBy { None, Constructive, Z3 };

struct CspOptions {
  bool constructive = true;         // try the constructive assignment first
  bool use_z3 = true;               // fall back to Z3 (the complete answer)
  bool equality_proofs = true;      // before Z3: unsat when the address equalities alone prove it
  bool deterministic = true;        // random_seed 0, one thread; false lets Z3 use two threads
  bool minimize_footprint = false;  // z3::optimize: minimise the summed peak of every buffer
  unsigned timeout_ms = 0;          // per Z3 call; 0: none (prefer rlimit for reproducibility)
  unsigned rlimit = 0;              // Z3 resource limit per call; 0: none
};

struct CspStats {
  std::size_t variables = 0;    // Z3 integer unknowns (0 when Z3 was not needed)
  std::size_t constraints = 0;  // Z3 assertions
  std::size_t interference_edges = 0;
  double seconds = 0;           // constructive attempt + Z3
  bool constructive_tried = false;
  SolvedBy solved_by = SolvedBy::None;
};

enum class CspStatus { Sat, Unsat, Unknown };

struct CspResult {
  CspStatus status = CspStatus::Unknown;
  std::optional<Assignment> assignment;
  InterferenceGraph core;  // Unsat: interference edges of an unsat core
  std::string message;     // why it failed
  CspStats stats;
};

namespace csp_detail {

// Attribute lookup for a Pii node: alpha from the node, beta from `beta` (may be partial).
struct AttributeEnv {
  const isa::Instruction* inst;
  const std::vector<std::int64_t>* alpha;
  const std::vector<std::optional<std::int64_t>>* beta;
  std::optional<std::int64_t> operator()(std::string_view name) const {
    for (std::size_t k = 0; k < inst->alpha.size(); ++k)
      if (inst->alpha[k] == name) return (*alpha)[k];
    for (std::size_t k = 0; k < inst->beta.size(); ++k)
      if (inst->beta[k] == name) return (*beta)[k];
    return std::nullopt;
  }
};

inline std::optional<std::int64_t> eval(const sym::Expr& e, const AttributeEnv& env) {
  const auto r = sym::try_evaluate(e, env);
  if (!r.ok()) return std::nullopt;
  return r.value;
}

// An address expression that is exactly `beta + offset` for one beta of its instruction, or the
// constant `offset` (beta < 0), with the node's alpha substituted (unit_address below).
struct UnitAddress {
  int beta = -1;
  std::int64_t offset = 0;
};

// Values of the form coefficient * beta[which] + constant (which < 0: a constant).
struct AffineDomain {
  struct Value {
    bool ok = true;
    int which = -1;
    std::int64_t coefficient = 0, constant = 0;
  };
  const isa::Instruction* inst;
  const std::vector<std::int64_t>* alpha;

  static Value bad() { return Value{false, -1, 0, 0}; }
  Value constant(std::int64_t c) const { return Value{true, -1, 0, c}; }
  template <class Env>
  Value variable(std::string_view name, const Env&) const {
    for (std::size_t k = 0; k < inst->alpha.size(); ++k)
      if (inst->alpha[k] == name) return constant((*alpha)[k]);
    for (std::size_t k = 0; k < inst->beta.size(); ++k)
      if (inst->beta[k] == name) return Value{true, static_cast<int>(k), 1, 0};
    return bad();
  }
  Value unary(sym::Op op, Value a) const {
    std::int64_t c = 0, k = 0;
    if (!a.ok || op != sym::Op::Neg || __builtin_sub_overflow(std::int64_t{0}, a.constant, &c) ||
        __builtin_sub_overflow(std::int64_t{0}, a.coefficient, &k))
      return bad();
    return Value{true, a.which, k, c};
  }
  Value binary(sym::Op op, Value a, Value b) const {
    if (!a.ok || !b.ok) return bad();
    if (a.which < 0 && b.which < 0) {  // two constants: the integer meaning
      sym::IntDomain d;
      const std::int64_t x = d.binary(op, a.constant, b.constant);
      return d.error.empty() ? constant(x) : bad();
    }
    Value r{true, a.which >= 0 ? a.which : b.which, 0, 0};
    switch (op) {
      case sym::Op::Add:
      case sym::Op::Sub: {
        if (a.which >= 0 && b.which >= 0 && a.which != b.which) return bad();
        const bool add = op == sym::Op::Add;
        const bool fail = add ? __builtin_add_overflow(a.coefficient, b.coefficient, &r.coefficient) ||
                                    __builtin_add_overflow(a.constant, b.constant, &r.constant)
                              : __builtin_sub_overflow(a.coefficient, b.coefficient, &r.coefficient) ||
                                    __builtin_sub_overflow(a.constant, b.constant, &r.constant);
        if (fail) return bad();
        if (r.coefficient == 0) r.which = -1;
        return r;
      }
      case sym::Op::Mul: {
        const Value& scale = a.which < 0 ? a : b;
        const Value& term = a.which < 0 ? b : a;
        if (__builtin_mul_overflow(term.coefficient, scale.constant, &r.coefficient) ||
            __builtin_mul_overflow(term.constant, scale.constant, &r.constant))
          return bad();
        if (r.coefficient == 0) r.which = -1;
        return r;
      }
      default: return bad();
    }
  }
};

// Decided on the expression's form, not by sampling: only sums, differences, negations and
// products by constants of beta are followed; anything else (a beta under div, mod, min or a
// comparison, a beta scaled by other than 1) is not a unit address.
inline std::optional<UnitAddress> unit_address(const sym::Expr& e, const isa::Instruction& inst,
                                               const std::vector<std::int64_t>& alpha) {
  if (e.root < 0 || e.root >= e.count) return std::nullopt;
  AffineDomain domain{&inst, &alpha};
  const AffineDomain::Value value = sym::evaluate_in(domain, e, 0);
  if (!value.ok || (value.which >= 0 && value.coefficient != 1)) return std::nullopt;
  return UnitAddress{value.which, value.constant};
}

// Weighted union-find over integer unknowns: value(x) = value(parent(x)) + offset(x).
class OffsetUnionFind {
 public:
  std::size_t size() const { return parent_.size(); }
  std::size_t add() {
    parent_.push_back(parent_.size());
    offset_.push_back(0);
    pin_.push_back(std::nullopt);
    return parent_.size() - 1;
  }
  std::pair<std::size_t, std::int64_t> find(std::size_t x) {
    std::int64_t off = 0;
    std::size_t r = x;
    while (parent_[r] != r) {
      off += offset_[r];
      r = parent_[r];
    }
    // Path compression keeping offsets relative to the root.
    std::int64_t remaining = off;
    while (parent_[x] != x) {
      const std::size_t p = parent_[x];
      const std::int64_t o = offset_[x];
      parent_[x] = r;
      offset_[x] = remaining;
      remaining -= o;
      x = p;
    }
    return {r, off};
  }
  // value(x) = value(y) + c; false on a contradiction.
  bool unite(std::size_t x, std::size_t y, std::int64_t c) {
    auto [rx, ox] = find(x);
    auto [ry, oy] = find(y);
    if (rx == ry) return ox == oy + c;
    const std::int64_t d = oy + c - ox;  // value(rx) = value(ry) + d
    if (pin_[rx]) {
      const std::int64_t want = *pin_[rx] - d;
      if (pin_[ry] && *pin_[ry] != want) return false;
      pin_[ry] = want;
    }
    parent_[rx] = ry;
    offset_[rx] = d;
    return true;
  }
  bool pin(std::size_t x, std::int64_t value) {
    auto [r, o] = find(x);
    const std::int64_t want = value - o;
    if (pin_[r] && *pin_[r] != want) return false;
    pin_[r] = want;
    return true;
  }
  std::optional<std::int64_t> pinned_root(std::size_t root) const { return pin_[root]; }

 private:
  std::vector<std::size_t> parent_;
  std::vector<std::int64_t> offset_;
  std::vector<std::optional<std::int64_t>> pin_;
};

// CSP4 for the interference edge (a, b) at starts sa, sb: b's window misses a's needed part.
inline bool edge_separated(const GraphValues& v, std::size_t a, const std::vector<std::int64_t>& sa, std::size_t b,
                           const std::vector<std::int64_t>& sb) {
  for (std::size_t d = 0; d < sa.size(); ++d) {
    const std::int64_t needed = sa[d] + v.needed_begin[a][d];
    if (needed + v.needed_length[a][d] <= sb[d] || sb[d] + v.footprint[b][d] <= needed) return true;
  }
  return false;
}

// Whether an instruction's input slice `s` may be longer than the value it reads: in HBM, an
// operand may be a prefix of the window (phase 1 builds such an operand only for a movement
// whose Out0 never reads past it, select/rules/movement_rules.hpp divide()); on chip, windows
// and values have the same extent.
inline bool reads_prefix(const GraphValues& v, const PreparedSlice& s) { return s.buffer == v.hbm; }

inline std::int64_t lower_bound_of(const GraphValues& v, std::size_t i) {
  if (v.root_region[i]) return v.root_region[i]->first;
  const bool scratch = v.storage[i] && !v.node(i).is_leaf() && v.node(i).buffer == v.hbm && !v.root_storage[i];
  return scratch ? v.scratch_base : 0;
}

// The largest start + length along dim d: the buffer's extent, or the end of the outputs' region
// for HBM storage a root aliases (values.hpp, root_region).
inline std::int64_t upper_bound_of(const GraphValues& v, std::size_t i, std::size_t d) {
  if (d == 0 && v.root_region[i]) return v.root_region[i]->second;
  return v.buffer_of(i).access_dims[d];
}

}  // namespace csp_detail

// Checks an assignment against CSP1-4 and the identity relations. Returns the first violation,
// or nothing when every constraint holds.
inline std::optional<std::string> check_assignment(const GraphValues& v, const InterferenceGraph& interference,
                                                   const Assignment& a) {
  const std::size_t n = v.size();
  if (a.start.size() != n || a.beta.size() != n) return "the assignment does not cover every node";
  for (std::size_t i = 0; i < n; ++i) {
    const select::PiiNode& x = v.node(i);
    const isa::Buffer& buffer = v.buffer_of(i);
    if (a.start[i].size() != v.length[i].size()) return fmt::format("%{}: wrong number of starts", i);
    if (x.kind == select::PiiNodeKind::Undefined) continue;
    for (std::size_t d = 0; d < v.length[i].size(); ++d) {
      const std::int64_t lo = d == 0 ? csp_detail::lower_bound_of(v, i) : 0;
      if (a.start[i][d] < lo || a.start[i][d] + v.footprint[i][d] > csp_detail::upper_bound_of(v, i, d) ||
          a.start[i][d] + v.length[i][d] > buffer.access_dims[d])
        return fmt::format("%{}: slice {}+{} outside {} along dim {}", i, a.start[i][d], v.length[i][d], buffer.name, d);
    }
    if (v.pinned[i] && a.start[i][0] != *v.pinned[i])
      return fmt::format("%{}: must start at HBM {}, not {}", i, *v.pinned[i], a.start[i][0]);
    switch (x.kind) {
      case select::PiiNodeKind::SliceH:
        for (std::size_t d = 0; d < v.length[i].size(); ++d)
          if (a.start[i][d] != a.start[x.operands[0]][d] + x.slice[d].start)
            return fmt::format("%{}: slice^H not at its offset along dim {}", i, d);
        break;
      case select::PiiNodeKind::ConcatH: {
        std::int64_t offset = 0;
        const auto dim = static_cast<std::size_t>(x.dimension);
        for (std::size_t o : x.operands) {
          for (std::size_t d = 0; d < v.length[i].size(); ++d)
            if (a.start[o][d] != a.start[i][d] + (d == dim ? offset : 0))
              return fmt::format("%{}: concat^H operand %{} not in place along dim {}", i, o, d);
          offset += v.length[o][dim];
        }
        break;
      }
      case select::PiiNodeKind::OverlayH:
        for (std::size_t k = 0; k < x.operands.size(); ++k)
          if (a.start[x.operands[k]][0] != a.start[i][0] + x.offsets[k])
            return fmt::format("%{}: overlay^H operand %{} not at offset {}", i, x.operands[k], x.offsets[k]);
        break;
      case select::PiiNodeKind::Pii: {
        const PreparedInstruction& p = v.prepared(i);
        if (a.beta[i].size() != p.instruction->beta.size()) return fmt::format("%{}: wrong number of beta values", i);
        std::vector<std::optional<std::int64_t>> beta(a.beta[i].begin(), a.beta[i].end());
        const csp_detail::AttributeEnv env{p.instruction, &x.alpha, &beta};
        for (std::size_t c = 0; c < p.constraints.size(); ++c) {
          const auto value = csp_detail::eval(p.constraints[c], env);
          if (!value || *value == 0)
            return fmt::format("%{}: {} violates '{}'", i, p.instruction->name, p.instruction->constraints[c]);
        }
        auto matches = [&](const PreparedSlice& s, std::size_t node, bool read) -> bool {
          const bool prefix = read && csp_detail::reads_prefix(v, s);
          for (std::size_t d = 0; d < s.start.size(); ++d) {
            const auto st = csp_detail::eval(s.start[d], env), ln = csp_detail::eval(s.length[d], env);
            if (!st || !ln || *st != a.start[node][d]) return false;
            if (prefix ? *ln < v.length[node][d] : *ln != v.length[node][d]) return false;
          }
          return true;
        };
        if (!matches(p.output, i, false)) return fmt::format("%{}: {} does not write its slice", i, p.instruction->name);
        for (std::size_t k = 0; k < x.operands.size(); ++k)
          if (v.node(x.operands[k]).kind != select::PiiNodeKind::Undefined && !matches(p.inputs[k], x.operands[k], true))
            return fmt::format("%{}: {} In{} does not read operand %{}", i, p.instruction->name, k + 1, x.operands[k]);
        break;
      }
      default: break;
    }
  }
  for (const auto& [p, q] : interference)
    if (!csp_detail::edge_separated(v, p, a.start[p], q, a.start[q]))
      return fmt::format("%{} and %{} are live together but overlap", p, q);
  return std::nullopt;
}

// The equalities of CSP1-3 and the identity instructions that are exact in the unknowns: every
// slice start and every beta is a union-find element; an address expression joins its slice
// start to one beta (`beta + c`, unit_address) or pins it (a constant). `complete` is false when
// some address expression has another form: the closure then knows fewer equalities than the
// CSP states (still each one it knows holds in every solution). `contradiction`: the
// equalities it knows cannot all hold, so the CSP is unsatisfiable whatever the schedule.
struct AddressEqualities {
  csp_detail::OffsetUnionFind uf;
  std::vector<std::vector<std::size_t>> coord, beta;  // per node: its start per dim, its betas
  bool complete = true;
  bool contradiction = false;
};

inline AddressEqualities address_equalities(const GraphValues& v) {
  const std::size_t n = v.size();
  AddressEqualities q;
  auto& uf = q.uf;
  q.coord.resize(n);
  q.beta.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < v.length[i].size(); ++d) q.coord[i].push_back(uf.add());
    if (v.node(i).kind == select::PiiNodeKind::Pii)
      for (std::size_t j = 0; j < v.prepared(i).instruction->beta.size(); ++j) q.beta[i].push_back(uf.add());
  }
  auto holds = [&](bool ok) {
    if (!ok) q.contradiction = true;
  };
  auto relate = [&](std::size_t i, const sym::Expr& e, std::size_t target) {
    const PreparedInstruction& p = v.prepared(i);
    const auto address = csp_detail::unit_address(e, *p.instruction, v.node(i).alpha);
    if (!address) {
      q.complete = false;
      return;
    }
    if (address->beta < 0) holds(uf.pin(target, address->offset));
    else holds(uf.unite(target, q.beta[i][static_cast<std::size_t>(address->beta)], address->offset));
  };
  for (std::size_t i = 0; i < n; ++i) {
    const select::PiiNode& x = v.node(i);
    const auto& coord = q.coord;
    if (v.pinned[i]) holds(uf.pin(coord[i][0], *v.pinned[i]));
    if (x.kind == select::PiiNodeKind::SliceH) {
      for (std::size_t d = 0; d < coord[i].size(); ++d) holds(uf.unite(coord[i][d], coord[x.operands[0]][d], x.slice[d].start));
    } else if (x.kind == select::PiiNodeKind::ConcatH) {
      std::int64_t offset = 0;
      const auto dim = static_cast<std::size_t>(x.dimension);
      for (std::size_t o : x.operands) {
        for (std::size_t d = 0; d < coord[i].size(); ++d) holds(uf.unite(coord[o][d], coord[i][d], d == dim ? offset : 0));
        offset += v.length[o][dim];
      }
    } else if (x.kind == select::PiiNodeKind::OverlayH) {
      for (std::size_t k = 0; k < x.operands.size(); ++k) holds(uf.unite(coord[x.operands[k]][0], coord[i][0], x.offsets[k]));
    } else if (x.kind == select::PiiNodeKind::Pii) {
      const PreparedInstruction& p = v.prepared(i);
      for (std::size_t d = 0; d < coord[i].size(); ++d) relate(i, p.output.start[d], coord[i][d]);
      for (std::size_t k = 0; k < x.operands.size(); ++k) {
        if (v.node(x.operands[k]).kind == select::PiiNodeKind::Undefined) continue;
        for (std::size_t d = 0; d < coord[x.operands[k]].size(); ++d) relate(i, p.inputs[k].start[d], coord[x.operands[k]][d]);
      }
    }
  }
  return q;
}

// Unsatisfiability the equalities and the buffer bounds (CSP1) prove without Z3. Each class of
// the equalities gets the range its members' bounds allow (a pinned class: its value). The CSP
// is unsatisfiable with an empty core when the equalities contradict each other or a range is
// empty; with the core {a, b} when some interference edge (a, b), the first such, cannot be
// separated along any access dim: there the two are fixed relative to each other (one class) so
// that they overlap, or their ranges leave no room for one to lie before the other (two values
// of more than 32 rows live together in QKV's 64-row d2, for one). Nothing when this proves
// nothing (Z3 decides).
inline std::optional<CspResult> forced_conflict(const GraphValues& v, const InterferenceGraph& interference,
                                                AddressEqualities& q) {
  CspResult r;
  r.status = CspStatus::Unsat;
  if (q.contradiction) {
    r.message = "the allocation CSP is unsatisfiable whatever the schedule (its address equalities contradict each other)";
    return r;
  }
  struct Range {
    std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  };
  std::map<std::size_t, Range> range;  // per class root
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v.node(i).kind == select::PiiNodeKind::Undefined) continue;
    for (std::size_t d = 0; d < v.length[i].size(); ++d) {
      auto [root, offset] = q.uf.find(q.coord[i][d]);
      auto [entry, fresh] = range.try_emplace(root);
      Range& c = entry->second;
      if (auto pin = q.uf.pinned_root(root); fresh && pin) c.lo = c.hi = *pin;
      const std::int64_t lo = d == 0 ? csp_detail::lower_bound_of(v, i) : 0;
      c.lo = std::max(c.lo, lo - offset);
      c.hi = std::min({c.hi, csp_detail::upper_bound_of(v, i, d) - v.footprint[i][d] - offset,
                       v.buffer_of(i).access_dims[d] - v.length[i][d] - offset});
      if (c.lo <= c.hi) continue;
      r.message = fmt::format(
          "the allocation CSP is unsatisfiable whatever the schedule (its address equalities leave %{} no room along dim {} of '{}')",
          i, d, v.buffer_of(i).name);
      return r;
    }
  }
  for (const auto& [a, b] : interference) {
    bool overlap = true;
    for (std::size_t d = 0; d < v.length[a].size() && overlap; ++d) {
      auto [ra, oa] = q.uf.find(q.coord[a][d]);
      auto [rb, ob] = q.uf.find(q.coord[b][d]);
      oa += v.needed_begin[a][d];  // a's needed part against b's window (CSP4)
      const std::int64_t fa = v.needed_length[a][d], fb = v.footprint[b][d];
      if (ra == rb) {  // start(b) - start(a) is fixed
        const std::int64_t gap = ob - oa;
        overlap = gap < fa && -gap < fb;
      } else {  // can a lie before b, or b before a? (a class no bound reached: yes)
        const auto x = range.find(ra), y = range.find(rb);
        overlap = x != range.end() && y != range.end() && x->second.lo + oa + fa > y->second.hi + ob &&
                  y->second.lo + ob + fb > x->second.hi + oa;
      }
    }
    if (!overlap) continue;
    r.core.emplace_back(a, b);
    r.message = fmt::format(
        "the allocation CSP is unsatisfiable; %{} and %{} are live together, and their addresses cannot be separated", a, b);
    return r;
  }
  return std::nullopt;
}

// The cheap path: equalities solved by a weighted union-find, free classes placed first-fit in
// schedule order (then, if one finds no room, in order of fewest values allowed). Returns
// nothing when it cannot build an assignment that passes check_assignment (Z3 then decides).
inline std::optional<Assignment> constructive_assignment(const GraphValues& v, const Schedule& schedule,
                                                         const InterferenceGraph& interference, AddressEqualities& q) {
  if (!q.complete || q.contradiction) return std::nullopt;
  const std::size_t n = v.size();
  auto& uf = q.uf;
  const auto& coord = q.coord;
  const auto& beta = q.beta;
  // Classes: members (node, dim, offset to the class value); known values for pinned classes.
  // Indexed by class root (first-fit looks classes up per neighbour per trial: maps were
  // 3 % of AMX lane-blend compiles).
  struct Member {
    std::size_t node, dim;
    std::int64_t offset;
  };
  std::vector<std::vector<Member>> members(uf.size());
  std::vector<std::optional<std::int64_t>> value(uf.size());
  std::vector<std::int64_t> position(n, -1);
  for (std::size_t t = 0; t < schedule.order.size(); ++t) position[schedule.order[t]] = static_cast<std::int64_t>(t);
  std::vector<std::pair<std::int64_t, std::size_t>> order;  // (first definition, class)
  constexpr std::size_t kNoEntry = static_cast<std::size_t>(-1);
  std::vector<std::size_t> order_index(uf.size(), kNoEntry);  // class -> its entry in order
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t d = 0; d < coord[i].size(); ++d) {
      auto [r, off] = uf.find(coord[i][d]);
      auto& m = members[r];
      if (m.empty()) {
        if (auto pin = uf.pinned_root(r)) value[r] = *pin;
        else {
          order_index[r] = order.size();
          order.emplace_back(position[i] < 0 ? -1 : position[i], r);
        }
      } else if (order_index[r] != kNoEntry) {
        std::int64_t& first = order[order_index[r]].first;
        if (position[i] >= 0 && (first < 0 || position[i] < first)) first = position[i];
      }
      m.push_back(Member{i, d, off});
    }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  struct Neighbour {
    std::size_t node;
    bool first;  // the neighbour is the edge's first node (its needed part against our window)
  };
  std::vector<std::vector<Neighbour>> neighbours(n);
  for (const auto& [p, q] : interference) {
    neighbours[p].push_back({q, false});
    neighbours[q].push_back({p, true});
  }
  // The start of node i into `s`, if every class it depends on is known (`trial` stands for
  // class c). The caller's buffers are reused: first-fit asks for a start per neighbour per trial.
  auto start_of = [&](std::size_t i, std::size_t c, std::int64_t trial, std::vector<std::int64_t>& s) {
    s.clear();
    for (std::size_t d = 0; d < coord[i].size(); ++d) {
      auto [r, off] = uf.find(coord[i][d]);
      if (r == c) s.push_back(trial + off);
      else if (value[r]) s.push_back(*value[r] + off);
      else return false;
    }
    return true;
  };
  // The values a class may take: its members' buffer bounds.
  auto range_of = [&](std::size_t c) {
    std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
    for (const Member& m : members[c]) {
      const auto& buffer = v.buffer_of(m.node);
      lo = std::max(lo, (m.dim == 0 ? csp_detail::lower_bound_of(v, m.node) : 0) - m.offset);
      hi = std::min(hi, csp_detail::upper_bound_of(v, m.node, m.dim) - v.footprint[m.node][m.dim] - m.offset);
      hi = std::min(hi, buffer.access_dims[m.dim] - v.length[m.node][m.dim] - m.offset);
    }
    return std::pair{lo, hi};
  };
  // Each class of `classes` in turn at its lowest value clear of the classes placed before it.
  const std::vector<std::optional<std::int64_t>> pinned = value;
  std::vector<std::int64_t> s, sw;  // start_of's buffers
  auto place = [&](const std::vector<std::pair<std::int64_t, std::size_t>>& classes) {
    value = pinned;
    for (const auto& [key, c] : classes) {
      auto [x, hi] = range_of(c);
      bool placed = false;
      for (int guard = 0; guard < 100000 && x <= hi; ++guard) {
        std::optional<std::int64_t> jump;
        for (const Member& m : members[c]) {
          if (!v.storage[m.node]) continue;
          if (!start_of(m.node, c, x, s)) continue;
          for (const auto [w, w_first] : neighbours[m.node]) {
            if (!start_of(w, c, x, sw)) continue;
            if (w_first ? csp_detail::edge_separated(v, w, sw, m.node, s) : csp_detail::edge_separated(v, m.node, s, w, sw))
              continue;
            // Past the end of w's extent in this edge, less where our own extent starts.
            jump = w_first ? sw[m.dim] + v.needed_begin[w][m.dim] + v.needed_length[w][m.dim] - m.offset
                           : sw[m.dim] + v.footprint[w][m.dim] - v.needed_begin[m.node][m.dim] - m.offset;
            break;
          }
          if (jump) break;
        }
        if (jump) {
          x = std::max(*jump, x + 1);
          continue;
        }
        placed = true;
        break;
      }
      if (!placed) return false;
      value[c] = x;
    }
    return true;
  };
  // Schedule order first; when a class finds no room, the classes with the fewest values
  // allowed first (a value as long as its buffer goes before the short ones that would take
  // its rows), ties in schedule order.
  if (!place(order)) {
    std::vector<std::pair<std::int64_t, std::size_t>> tightest;
    for (const auto& [first, c] : order) {
      const auto [lo, hi] = range_of(c);
      tightest.emplace_back(hi - lo, c);
    }
    std::stable_sort(tightest.begin(), tightest.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (!place(tightest)) return std::nullopt;
  }
  Assignment a;
  a.start.resize(n);
  a.beta.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < coord[i].size(); ++d) {
      auto [r, off] = uf.find(coord[i][d]);
      a.start[i].push_back(value[r] ? *value[r] + off : 0);
    }
    for (std::size_t j = 0; j < beta[i].size(); ++j) {
      auto [r, off] = uf.find(beta[i][j]);
      if (!value[r]) value[r] = uf.pinned_root(r).value_or(0);  // a free beta: 0
      a.beta[i].push_back(*value[r] + off);
    }
  }
  if (check_assignment(v, interference, a)) return std::nullopt;
  return a;
}

inline std::optional<Assignment> constructive_assignment(const GraphValues& v, const Schedule& schedule,
                                                         const InterferenceGraph& interference) {
  AddressEqualities equalities = address_equalities(v);
  return constructive_assignment(v, schedule, interference, equalities);
}

// Where a CspSolver's Z3 context comes from; either way it is made at the first problem that
// needs Z3, which most compiles never reach (the constructive path and forced_conflict answer
// them). Z3's answers depend on the problems a context solved before (it recycles term ids and
// breaks ties by them), so only a context of the solver's own makes a compile's program
// independent of the compiles before it on the same thread. A context allocates about 19 MB of
// tables: on a VM, tens of ms of page faults at each compile that needs Z3 (QKV compile_time
// seed 1 kernels 21 and 65: +38 ms each), which one context kept per thread saves.
enum class Z3Context {
  PerSolver,  // reproducible: a compile's CSP answers depend on that compile alone
  PerThread,  // fast: shared by every CspSolver of the thread, for compiles that are timed anyway
};

// The CSPs of one compile's schedules; each problem gets its own Z3 solver.
class CspSolver {
 public:
  explicit CspSolver(Z3Context source = Z3Context::PerSolver) : source_(source) {}

  CspResult solve(const GraphValues& v, const Schedule& schedule, const InterferenceGraph& interference,
                  const CspOptions& options = {}) {
    const auto t0 = std::chrono::steady_clock::now();
    CspResult result;
    result.stats.interference_edges = interference.size();
    auto finish = [&]() -> CspResult {
      result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return std::move(result);
    };
    AddressEqualities equalities = address_equalities(v);
    if (options.constructive) {
      result.stats.constructive_tried = true;
      if (auto a = constructive_assignment(v, schedule, interference, equalities)) {
        result.status = CspStatus::Sat;
        result.assignment = std::move(a);
        result.stats.solved_by = SolvedBy::Constructive;
        return finish();
      }
    }
    if (options.equality_proofs)
      if (std::optional<CspResult> conflict = forced_conflict(v, interference, equalities)) {
        conflict->stats = result.stats;
        result = std::move(*conflict);
        return finish();
      }
    if (!options.use_z3) {
      result.status = CspStatus::Unknown;
      result.message = "the constructive assignment failed and Z3 is disabled";
      return finish();
    }
    try {
      solve_z3(v, interference, options, result);
    } catch (const z3::exception& e) {
      result.status = CspStatus::Unknown;
      result.assignment.reset();
      result.message = fmt::format("Z3: {}", e.msg());
    }
    return finish();
  }

 private:
  struct Encoding {
    std::vector<std::vector<z3::expr>> start, beta;
    std::vector<z3::expr> assertions;
    std::vector<z3::expr> disjoint;  // per interference edge
    std::size_t variables = 0;
  };

  Encoding encode(const GraphValues& v, const InterferenceGraph& interference) {
    const std::size_t n = v.size();
    Encoding e;
    auto fresh = [&](std::string name) {
      ++e.variables;
      return context().int_const(name.c_str());
    };
    auto num = [&](std::int64_t x) { return context().int_val(static_cast<int64_t>(x)); };
    e.start.resize(n);
    e.beta.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const select::PiiNode& x = v.node(i);
      for (std::size_t d = 0; d < v.length[i].size(); ++d) {
        if (x.kind == select::PiiNodeKind::Undefined) e.start[i].push_back(num(0));
        else if (x.is_leaf()) e.start[i].push_back(num(*v.pinned[i]));
        else if (x.kind == select::PiiNodeKind::SliceH) e.start[i].push_back(e.start[x.operands[0]][d] + num(x.slice[d].start));
        else e.start[i].push_back(fresh(fmt::format("s{}_{}", i, d)));
      }
      if (x.kind == select::PiiNodeKind::Pii)
        for (std::string_view b : v.prepared(i).instruction->beta) e.beta[i].push_back(fresh(fmt::format("b{}_{}", i, b)));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const select::PiiNode& x = v.node(i);
      const isa::Buffer& buffer = v.buffer_of(i);
      if (x.kind == select::PiiNodeKind::Undefined) continue;
      for (std::size_t d = 0; d < v.length[i].size(); ++d) {
        const std::int64_t lo = d == 0 ? csp_detail::lower_bound_of(v, i) : 0;
        e.assertions.push_back(e.start[i][d] >= num(lo));
        e.assertions.push_back(e.start[i][d] + num(v.footprint[i][d]) <= num(csp_detail::upper_bound_of(v, i, d)));
        if (v.footprint[i][d] != v.length[i][d])
          e.assertions.push_back(e.start[i][d] + num(v.length[i][d]) <= num(buffer.access_dims[d]));
      }
      if (x.kind == select::PiiNodeKind::OverlayH)
        for (std::size_t k = 0; k < x.operands.size(); ++k)
          e.assertions.push_back(e.start[x.operands[k]][0] == e.start[i][0] + num(x.offsets[k]));
      if (v.pinned[i] && !x.is_leaf()) e.assertions.push_back(e.start[i][0] == num(*v.pinned[i]));
      if (x.kind == select::PiiNodeKind::ConcatH) {
        std::int64_t offset = 0;
        const auto dim = static_cast<std::size_t>(x.dimension);
        for (std::size_t o : x.operands) {
          for (std::size_t d = 0; d < v.length[i].size(); ++d)
            e.assertions.push_back(e.start[o][d] == e.start[i][d] + num(d == dim ? offset : 0));
          offset += v.length[o][dim];
        }
      }
      if (x.kind != select::PiiNodeKind::Pii) continue;
      const PreparedInstruction& p = v.prepared(i);
      const isa::Instruction& inst = *p.instruction;
      auto env = [&](std::string_view name) -> z3::expr {
        for (std::size_t k = 0; k < inst.alpha.size(); ++k)
          if (inst.alpha[k] == name) return num(x.alpha[k]);
        for (std::size_t k = 0; k < inst.beta.size(); ++k)
          if (inst.beta[k] == name) return e.beta[i][k];
        throw Error(ErrorKind::Internal, fmt::format("'{}' is not an attribute of '{}'", name, inst.name));
      };
      std::vector<z3::expr> side;
      auto term = [&](const sym::Expr& ex) { return sym::to_z3(ex, context(), env, &side); };
      for (const auto& c : p.constraints) {
        z3::expr t = term(c);
        e.assertions.push_back(t.is_bool() ? t : t != num(0));
      }
      auto same_slice = [&](const PreparedSlice& s, std::size_t node, bool read) {
        const bool prefix = read && csp_detail::reads_prefix(v, s);
        for (std::size_t d = 0; d < s.start.size(); ++d) {
          e.assertions.push_back(term(s.start[d]) == e.start[node][d]);
          e.assertions.push_back(prefix ? term(s.length[d]) >= num(v.length[node][d]) : term(s.length[d]) == num(v.length[node][d]));
        }
      };
      same_slice(p.output, i, false);
      for (std::size_t k = 0; k < x.operands.size(); ++k)
        if (v.node(x.operands[k]).kind != select::PiiNodeKind::Undefined) same_slice(p.inputs[k], x.operands[k], true);
      for (auto& s : side) e.assertions.push_back(s);
    }
    for (const auto& [a, b] : interference) {
      z3::expr any = context().bool_val(false);
      for (std::size_t d = 0; d < v.length[a].size(); ++d) {
        // a's needed part, b's window (no `+ 0` term: the terms, so the answers, of before needed parts)
        const z3::expr needed = v.needed_begin[a][d] ? e.start[a][d] + num(v.needed_begin[a][d]) : e.start[a][d];
        any = any || (needed + num(v.needed_length[a][d]) <= e.start[b][d]) || (e.start[b][d] + num(v.footprint[b][d]) <= needed);
      }
      e.disjoint.push_back(any);
    }
    return e;
  }

  void configure(z3::params& p, const CspOptions& options, bool for_solver) {
    if (for_solver) {
      p.set("random_seed", 0u);
      p.set("threads", options.deterministic ? 1u : 2u);
    }
    if (options.timeout_ms) p.set("timeout", options.timeout_ms);
    if (options.rlimit) p.set("rlimit", options.rlimit);
  }

  Assignment read_model(const GraphValues& v, const Encoding& e, const z3::model& m) {
    Assignment a;
    const std::size_t n = v.size();
    a.start.resize(n);
    a.beta.resize(n);
    auto value = [&](const z3::expr& t) -> std::int64_t {
      int64_t out = 0;
      if (!m.eval(t, true).is_numeral_i64(out)) throw Error(ErrorKind::Internal, "Z3 model value out of the int64 range");
      return out;
    };
    for (std::size_t i = 0; i < n; ++i) {
      for (const auto& t : e.start[i]) a.start[i].push_back(value(t));
      for (const auto& t : e.beta[i]) a.beta[i].push_back(value(t));
    }
    return a;
  }

  void accept(const GraphValues& v, const InterferenceGraph& interference, Assignment a, CspResult& result) {
    if (auto bad = check_assignment(v, interference, a))
      throw Error(ErrorKind::Internal, fmt::format("Z3's allocation fails the check: {}", *bad));
    result.status = CspStatus::Sat;
    result.assignment = std::move(a);
    result.stats.solved_by = SolvedBy::Z3;
  }

  void solve_z3(const GraphValues& v, const InterferenceGraph& interference, const CspOptions& options, CspResult& result) {
    Encoding e = encode(v, interference);
    result.stats.variables = e.variables;
    result.stats.constraints = e.assertions.size() + e.disjoint.size();
    if (options.minimize_footprint) {
      z3::optimize opt(context());
      z3::params p(context());
      configure(p, options, false);
      opt.set(p);
      for (const auto& x : e.assertions) opt.add(x);
      for (const auto& x : e.disjoint) opt.add(x);
      // Footprint: per buffer, the largest end along dim 0 of its non-leaf storage.
      z3::expr total = context().int_val(0);
      for (std::size_t b = 0; b < v.isa.buffers.size(); ++b) {
        z3::expr peak = context().int_const(fmt::format("peak{}", b).c_str());
        bool any = false;
        for (std::size_t i = 0; i < v.size(); ++i)
          if (v.storage[i] && !v.node(i).is_leaf() && static_cast<std::size_t>(v.node(i).buffer) == b) {
            opt.add(peak >= e.start[i][0] + context().int_val(static_cast<int64_t>(v.length[i][0])));
            any = true;
          }
        if (any) total = total + peak;
      }
      opt.minimize(total);
      const z3::check_result r = opt.check();
      if (r == z3::sat) return accept(v, interference, read_model(v, e, opt.get_model()), result);
      result.status = r == z3::unsat ? CspStatus::Unsat : CspStatus::Unknown;
      result.message = r == z3::unsat ? "the allocation CSP is unsatisfiable" : "Z3 gave up (timeout or resource limit)";
      if (r == z3::unsat) result.core = interference;  // no core from the optimizer: the whole graph
      return;
    }
    // A fresh solver per problem: its answer cannot depend on the problems solved before it, and
    // Z3's plain SMT kernel (`simple`) skips the combined solver's set-up, which a reset solver
    // repeats at every push (most of a small CSP's time).
    z3::solver solver(context(), z3::solver::simple());
    z3::params p(context());
    configure(p, options, true);
    solver.set(p);
    for (const auto& x : e.assertions) solver.add(x);
    z3::expr_vector guards(context());
    for (std::size_t k = 0; k < e.disjoint.size(); ++k) {
      z3::expr g = context().bool_const(fmt::format("edge{}", k).c_str());
      solver.add(z3::implies(g, e.disjoint[k]));
      guards.push_back(g);
    }
    const z3::check_result r = solver.check(guards);
    if (r == z3::sat) return accept(v, interference, read_model(v, e, solver.get_model()), result);
    if (r == z3::unknown) {
      result.status = CspStatus::Unknown;
      result.message = fmt::format("Z3 gave up: {}", solver.reason_unknown());
      return;
    }
    result.status = CspStatus::Unsat;
    const z3::expr_vector core = solver.unsat_core();
    for (unsigned c = 0; c < core.size(); ++c)
      for (unsigned k = 0; k < guards.size(); ++k)
        if (z3::eq(core[c], guards[k])) result.core.push_back(interference[k]);
    std::sort(result.core.begin(), result.core.end());
    result.message = result.core.empty()
                         ? "the allocation CSP is unsatisfiable whatever the schedule (CSP1-3 alone conflict)"
                         : fmt::format("the allocation CSP is unsatisfiable; an unsat core needs {} of {} interference edges",
                                       result.core.size(), interference.size());
    if (!result.core.empty()) {
      std::vector<std::string> edges;
      for (std::size_t k = 0; k < result.core.size() && k < 4; ++k)
        edges.push_back(fmt::format("%{}-%{}", result.core[k].first, result.core[k].second));
      result.message += fmt::format(" ({})", fmt::join(edges, ", "));
    }
  }

  z3::context& context() {
    if (source_ == Z3Context::PerThread) {
      thread_local z3::context shared;
      return shared;
    }
    if (!own_) own_ = std::make_unique<z3::context>();
    return *own_;
  }
  Z3Context source_;
  std::unique_ptr<z3::context> own_;  // PerSolver: made at the first problem that needs Z3
};

}  // namespace act::alloc
