// Shared vocabulary of the IR→IR axioms: the rule type, the per-rule description used for
// App. B filtering, the rule list the family files write (AxiomRules: pattern text, condition,
// right-hand side), and small helpers to read matched e-nodes and build new ones the way
// type_inference.hpp expects (reshape/broadcast: attributes.shape; convert/bitcast-convert/dot:
// attributes.dtype; reduce and pad take a scalar second child).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include "act/core/literal.hpp"
#include "act/egraph/rewrite.hpp"
#include "act/hlo/shape_check.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/rules/axioms/pattern_text.hpp"

namespace act::select {

// What an axiom is about, for filtering (App. B module 2) and for the soundness suite.
enum class AxiomFamily : std::uint8_t { Layout, Slicing, Elementwise, Dot, Padding, Reduction };

constexpr std::string_view to_string(AxiomFamily f) {
  switch (f) {
    case AxiomFamily::Layout: return "layout";
    case AxiomFamily::Slicing: return "slicing";
    case AxiomFamily::Elementwise: return "elementwise";
    case AxiomFamily::Dot: return "dot";
    case AxiomFamily::Padding: return "padding";
    case AxiomFamily::Reduction: return "reduction";
  }
  return "?";
}

struct AxiomInfo {
  std::string name;                      // stable, e.g. "slice-of-slice", "slice-of-add"
  AxiomFamily family = AxiomFamily::Layout;
  std::string shape;                     // the rule template (several rules share one, per opcode)
  std::vector<hlo::Opcode> lhs_opcodes;  // operators the left-hand side mentions
  std::vector<hlo::Opcode> rhs_opcodes;  // operators the right-hand side builds (Constant: a constant)
  bool reassociates = false;             // float results may differ by rounding (DESIGN.md allows it)
  std::string source;                    // where it comes from (rewrites.md id / TensorRight / issue)
  // The right-hand side's root is this binary operator over two values derived from the match
  // (not a constant): the filter keeps the axiom only where an instruction applies the operator
  // to two of its inputs (rule_set.hpp), e.g. no multiply of data by data on Gemmini, whose
  // only multiplies scale a load by a constant.
  std::optional<hlo::Opcode> binary_root_over_data;
  // The right-hand side holds a dot that contracts an operand's dim other than the canonical one
  // (x's dim 1 in transpose-as-dot): the filter keeps the axiom only where some instruction
  // transposes or contracts non-canonically (rule_set.hpp). Where none does, nothing consumes
  // that dot but rules that turn it back into the transpose it came from.
  bool builds_transposed_contraction = false;
  // The axiom computes a transposed contraction without transposing anything: the filter keeps
  // it only where no instruction transposes (rule_set.hpp); where one does, it only adds pieces.
  bool replaces_transposed_contraction = false;
  // The axiom wraps a value in an identity operator (x -> copy(x)): the filter keeps it only
  // where some instruction's pattern holds that operator (a move: QKV's mov, AMX's vmovaps).
  // Elsewhere the operator is useful only to the axioms that push other operators through it
  // or drop it again, and every class would gain a node for them.
  bool wraps_in_instruction_operator = false;
  // Backoff never bans the rule (codegen/backend.hpp): for a rule whose right-hand side is one
  // slice of a class the match reads, on matches that stay few, so that the equalities other
  // rules build on are not held back by an unrelated flood of matches (slice-of-concat).
  bool never_banned = false;
};

struct Axiom {
  AxiomInfo info;
  TensorRewrite rule;
};

namespace axiom_detail {

using egraph::Id;
using egraph::Subst;
using Dims = std::vector<std::int64_t>;

// Read access to a match.
struct View {
  const TensorGraph& g;
  const SelectionContext& ctx;
  const Subst& s;
  const TensorPattern* pattern;
  Id root;  // the matched class

  const Shape& root_type() const { return g.data(root).type; }

  Id cls(std::string_view var) const { return g.find(s[pattern->slot(var)]); }
  const Shape& type(std::string_view var) const { return g.data(cls(var)).type; }
  const TensorOp& op(std::string_view capture) const { return g.node(s[pattern->slot(capture)]).op; }
  const NodeAttributes& attr(std::string_view capture) const { return ctx.attributes_of(op(capture)); }
};

inline Dims iota_dims(std::size_t n) {
  Dims d(n);
  std::iota(d.begin(), d.end(), 0);
  return d;
}
inline bool is_identity_permutation(const Dims& p) {  // in place: conditions ask it for every match
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}
inline bool contains(const Dims& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
inline std::int64_t product(const Dims& d) {
  std::int64_t p = 1;
  for (auto x : d) p *= x;
  return p;
}
inline std::int64_t next_power_of_two(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// Slice-range arithmetic (ir/builder.hpp).
using slice_ranges::canonical;
using slice_ranges::covers;
inline std::int64_t range_count(const hlo::SliceRange& r) { return slice_ranges::count(r); }
inline std::vector<hlo::SliceRange> full_ranges(const Dims& dims) { return slice_ranges::whole(dims); }

// ---- building ---------------------------------------------------------------------------------

// Appliers build through the one tensor builder (ir/builder.hpp).
using Build = TensorBuilder;

// True if every value of `from` converts to `to` exactly (so a convert to `to` loses nothing).
inline bool represents_all(DType to, DType from) {
  if (to == from) return true;
  if (from == DType::pred || to == DType::pred) return false;
  const auto mantissa = [](DType t) {  // significant bits of a float type
    switch (t) {
      case DType::bf16: return 8;
      case DType::f16: return 11;
      case DType::f32: return 24;
      case DType::f64: return 53;
      default: return 0;
    }
  };
  if (is_float(from)) {
    if (!is_float(to)) return false;
    if (from == DType::bf16) return to == DType::f32 || to == DType::f64;
    if (from == DType::f16) return to == DType::f32 || to == DType::f64;
    if (from == DType::f32) return to == DType::f64;
    return false;
  }
  if (!is_integer(from)) return false;
  const int bits = bit_width(from) - (is_signed_integer(from) ? 1 : 0);  // magnitude bits
  if (is_float(to)) return mantissa(to) >= bits;
  if (!is_integer(to)) return false;
  if (is_signed_integer(from)) return is_signed_integer(to) && bit_width(to) >= bit_width(from);
  return is_signed_integer(to) ? bit_width(to) > bit_width(from) : bit_width(to) >= bit_width(from);
}

// True if the class holds a Constant node whose every element is zero (any dtype, any sign).
inline bool is_zero_constant(const TensorGraph& g, const SelectionContext& ctx, Id cls) {
  for (Id n : g.class_nodes(cls)) {
    const TensorOp& op = g.node(n).op;
    if (op.kind != NodeKind::Constant) continue;
    const Literal& l = ctx.constants[ctx.attributes_of(op).index];
    bool zero = true;
    for (std::int64_t i = 0; zero && i < l.element_count(); ++i)
      zero = is_float(l.dtype()) ? l.get_float(i) == 0.0 : l.get_int(i) == 0;
    if (zero) return true;
  }
  return false;
}
// True if the class holds a Constant node that is a square identity matrix (any dtype): the
// identities dot-identity-introduction, transpose-as-dot and the widened-mac rules build, also
// once converted and folded.
inline bool is_identity_constant(const TensorGraph& g, const SelectionContext& ctx, Id cls) {
  const TensorData& d = g.data(cls);
  if (!d.is_constant || d.type.rank() != 2 || d.type.dims[0] != d.type.dims[1]) return false;
  const std::int64_t n = d.type.dims[0];
  for (Id node : g.class_nodes(cls)) {
    const TensorOp& op = g.node(node).op;
    if (op.kind != NodeKind::Constant) continue;
    const std::int64_t id = ctx.attributes_of(op).index;
    auto [cached, fresh] = ctx.identity_constants.try_emplace(id, true);
    if (fresh) {
      const Literal& l = ctx.constants[id];
      for (std::int64_t k = 0; cached->second && k < n * n; ++k) {
        const double want = k / n == k % n ? 1.0 : 0.0;
        cached->second = (is_float(l.dtype()) ? l.get_float(k) : static_cast<double>(l.get_int(k))) == want;
      }
    }
    if (cached->second) return true;
  }
  return false;
}
// The least and greatest element of a constant class, looking through one broadcast.
inline std::optional<std::pair<double, double>> constant_bounds(const TensorGraph& g, const SelectionContext& ctx, Id cls) {
  for (Id n : g.class_nodes(cls)) {
    const auto view = g.node(n);
    if (view.op.kind == NodeKind::Operator && view.op.opcode == hlo::Opcode::Broadcast)
      if (auto inner = [&]() -> std::optional<std::pair<double, double>> {
            for (Id m : g.class_nodes(view.children[0]))
              if (g.node(m).op.kind == NodeKind::Constant) return constant_bounds(g, ctx, view.children[0]);
            return std::nullopt;
          }())
        return inner;
    if (view.op.kind != NodeKind::Constant) continue;
    const Literal& l = ctx.constants[ctx.attributes_of(view.op).index];
    if (l.element_count() == 0) return std::nullopt;
    double lo = 0, hi = 0;
    for (std::int64_t i = 0; i < l.element_count(); ++i) {
      const double x = is_float(l.dtype()) ? l.get_float(i) : static_cast<double>(l.get_int(i));
      if (x != x) return std::nullopt;  // NaN bound
      if (i == 0 || x < lo) lo = x;
      if (i == 0 || x > hi) hi = x;
    }
    return std::make_pair(lo, hi);
  }
  return std::nullopt;
}

// Whether the class holds clamp(lo, x, hi) with constant bounds inside [low, high].
inline bool clamped_within(const TensorGraph& g, const SelectionContext& ctx, Id cls, double low, double high) {
  for (Id n : g.class_nodes(cls)) {
    const auto view = g.node(n);
    if (view.op.kind != NodeKind::Operator || view.op.opcode != hlo::Opcode::Clamp) continue;
    const auto lo = constant_bounds(g, ctx, view.children[0]), hi = constant_bounds(g, ctx, view.children[2]);
    // min(max(x, lo), hi) lies in [min(lo, hi), hi] (or is NaN).
    if (lo && hi && lo->first >= low && hi->first >= low && hi->second <= high) return true;
  }
  return false;
}

inline bool is_operator_node(const TensorGraph& g, Id node, hlo::Opcode code) {
  const TensorOp& op = g.node(node).op;
  return op.kind == NodeKind::Operator && op.opcode == code;
}
// False when class `cls` holds no node with opcode `code` (the e-graph's per-class kind filter,
// exact in that direction; valid on a clean e-graph, as during a search). The slice-of-concat
// conditions check it before scanning the class: in AMX compiles that end without a program
// those conditions were 8 % of the samples, most of it scanning classes without a concatenate.
inline bool may_hold_operator(const TensorGraph& g, Id cls, hlo::Opcode code) {
  return (g.kinds(cls) & TensorGraph::kind_bit(static_cast<std::uint32_t>(code))) != 0;
}

inline bool has_operator(const TensorGraph& g, Id cls, hlo::Opcode code) {
  for (Id n : g.class_nodes(cls))
    if (is_operator_node(g, n, code)) return true;
  return false;
}

// Whether class `cls` holds a convert of an integer value no wider than `narrow`: its low
// bits are a value of that width already, so narrowing it gains nothing a convert-of-convert
// does not give.
inline bool widened_from_at_most(const TensorGraph& g, Id cls, DType narrow) {
  if (!may_hold_operator(g, cls, hlo::Opcode::Convert)) return false;
  for (Id n : g.class_nodes(cls)) {
    if (!is_operator_node(g, n, hlo::Opcode::Convert)) continue;
    const DType from = g.data(g.node(n).children[0]).type.dtype;
    if (is_integer(from) && from != DType::pred && bit_width(from) <= bit_width(narrow)) return true;
  }
  return false;
}

// The condition of the narrowing-convert axioms: convert<to> of an operation of type `from` on
// x and y narrows an integer, and not both operands are widened from `to` already (those are
// computed as they are, and narrowing them only grew the e-graph).
inline bool narrowing_pays(const TensorGraph& g, DType from, DType to, Id x, Id y) {
  return is_integer_narrowing(from, to) && !(widened_from_at_most(g, x, to) && widened_from_at_most(g, y, to));
}

// Dot dimension bookkeeping: the free dims of each operand in order.
inline bool is_free_dim(std::int64_t d, const Dims& batch, const Dims& contracting) {
  return !contains(batch, d) && !contains(contracting, d);
}
inline Dims free_dims(std::int64_t rank, const Dims& batch, const Dims& contracting) {
  Dims f;
  for (std::int64_t d = 0; d < rank; ++d)
    if (is_free_dim(d, batch, contracting)) f.push_back(d);
  return f;
}

// ---- rules ------------------------------------------------------------------------------------

// A condition reads a match during the search, so only applicable matches count towards the
// scheduler's match limit. Code on the right-hand side builds through the tensor builder and
// returns the class to unite with the match (nullopt: none).
using Check = std::function<bool(const View&)>;
using Apply = std::function<std::optional<Id>(const View&, Build&)>;

// The family files list their rules the way egg writes rewrite!(name; lhs => rhs if cond):
//   rules.add(info, "(reshape@outer (reshape ?x))", [condition,] right-hand side);
// The left-hand side is pattern text (pattern_text.hpp). The right-hand side is pattern text
// when it only rebuilds captured operators or returns a variable ("(@inner (@outer ?x))",
// "?x"), else code: attribute arithmetic, and the builder's short-cuts (no identity reshape).
class AxiomRules {
 public:
  AxiomRules(SelectionContext& ctx, std::vector<Axiom>& out) : ctx_(&ctx), out_(&out) {}

  void add(AxiomInfo info, std::string_view lhs, std::string_view rhs) { add(std::move(info), lhs, Check(), rhs); }
  void add(AxiomInfo info, std::string_view lhs, Check when, std::string_view rhs) {
    const auto searcher = tensor_pattern(lhs);
    TensorRewrite rule(info.name, *searcher, *tensor_pattern(rhs));
    push(std::move(info), std::move(rule), searcher, std::move(when));
  }
  void add(AxiomInfo info, std::string_view lhs, Apply rhs) { add(std::move(info), lhs, Check(), std::move(rhs)); }
  void add(AxiomInfo info, std::string_view lhs, Check when, Apply rhs) {
    const auto searcher = tensor_pattern(lhs);
    TensorRewrite rule(info.name, *searcher,
                       [searcher, rhs = std::move(rhs), c = ctx_](TensorGraph& g, Id cls, const Subst& s) {
                         Build b{g, *c};
                         return rhs(View{g, *c, s, searcher.get(), g.find(cls)}, b);
                       });
    push(std::move(info), std::move(rule), searcher, std::move(when));
  }

 private:
  void push(AxiomInfo info, TensorRewrite rule, std::shared_ptr<const TensorPattern> searcher, Check when) {
    if (when)
      rule.when([searcher, when = std::move(when), c = ctx_](const TensorGraph& g, Id cls, const Subst& s) {
        return when(View{g, *c, s, searcher.get(), g.find(cls)});
      });
    out_->push_back(Axiom{std::move(info), std::move(rule)});
  }

  SelectionContext* ctx_;
  std::vector<Axiom>* out_;
};

}  // namespace axiom_detail
}  // namespace act::select
