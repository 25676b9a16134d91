// Maximum and minimum on accelerators whose only maximum is a relu (issue 16, Gemmini: its
// stores compute max(x, 0), and nothing computes the maximum of two values). For an integer T
// that no instruction takes the maximum of, and a signed integer W wider than T that some
// instruction relus (maximum against a zero broadcast):
//   maximum(a, b)  → convert<T>(add(convert<W>(a), maximum(subtract(convert<W>(b), convert<W>(a)), 0)))
//   minimum(a, b)  → negate(convert<T>(subtract(maximum(subtract(convert<W>(a), convert<W>(b)), 0), convert<W>(a))))
// The minimum is -max(-a, -b) = -(max(a - b, 0) - a): a - max(a - b, 0) would subtract a loaded
// relu, which a mac cannot negate, while this negates in T (a matmul with -I). The inner value
// lies in [-max(T), -min(T)], so its convert<T> wraps only at -min(T) (T signed: 2^(w-1)), and
// the negate in T wraps it back: both sides agree modulo 2^w, and min(a, b) is a T.
// The subtraction and the add then need W's arithmetic. Where W adds only inside a multiply-
// accumulate whose dot widens T operands (Gemmini's mac32: dot(convert(A), convert(B)) + D), a
// widened value that is added or negated is a product with a widened identity:
//   add(convert<W>(y:T), z)  → add(dot(convert<W>(y), convert<W>(I)), z)
//   negate(convert<W>(y:T))  → dot(convert<W>(y), convert<W>(-I))     (T signed, so -1 is a T)
// (On the add, not on every convert: a dot in every widened class set the split axioms on
// them, and a TPU-like ISA's e-graph that saturated at 275 e-nodes grew past 28k.)
// All four hold bit for bit: a difference of two T values fits W (width(W) > width(T)),
// a + max(b - a, 0) = max(a, b) and a - max(a - b, 0) = min(a, b) are back in T's range, so every
// convert is exact, and a dot with an identity sums one exact product. The facts are read from
// the semantics (parsed), never from the ISA's name; without an ISA (the soundness suite) every
// type qualifies.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "act/hlo/parser.hpp"
#include "act/isa/semantics.hpp"
#include "act/select/rules/axioms/dot.hpp"
#include "act/select/rules/axioms/support.hpp"

namespace act::select::axiom_detail {

// What the ISA's semantics compute, by element type, for the rules above.
struct IsaReluFacts {
  bool any = true;                       // no ISA: every type qualifies
  std::vector<DType> general_maximum;    // maximum or minimum of two values (not against zero)
  std::vector<DType> relu;               // maximum(x, broadcast(0))
  std::vector<DType> direct_add;         // add or subtract not of a dot's result
  std::vector<std::pair<DType, DType>> widening_dot;  // (operand T, result W) of dot(convert(T), convert(T))

  static bool in(const std::vector<DType>& v, DType t) { return std::find(v.begin(), v.end(), t) != v.end(); }
  bool lacks_maximum(DType t) const { return any || !in(general_maximum, t); }
  bool relus(DType w) const { return any || in(relu, w); }
  bool adds_only_in_mac(DType w) const { return any || !in(direct_add, w); }
  bool dots_widened(DType t, DType w) const {
    return any || std::find(widening_dot.begin(), widening_dot.end(), std::pair{t, w}) != widening_dot.end();
  }
  // The signed type W > T the maximum of T goes through (the narrowest the ISA relus), if any.
  std::optional<DType> widened_relu_type(DType t) const {
    if (!is_integer(t) || t == DType::pred || !lacks_maximum(t)) return std::nullopt;
    for (DType w : {DType::s16, DType::s32, DType::s64})
      if (bit_width(w) > bit_width(t) && relus(w)) return w;
    return std::nullopt;
  }
};

inline IsaReluFacts isa_relu_facts(const isa::IsaView& isa) {
  IsaReluFacts out;
  out.any = isa.instructions.empty();
  auto push = [](std::vector<DType>& v, DType t) {
    if (!IsaReluFacts::in(v, t)) v.push_back(t);
  };
  for (const auto& inst : isa.instructions) {
    std::shared_ptr<const hlo::Module> module;
    try {
      module = isa::symbolic_semantics(inst);
    } catch (const Error&) {
      continue;  // isa_rules reports it (the instruction gets no rule)
    }
    const auto& code = module->entry_computation().instructions;
    const auto op = [&](int i) -> const hlo::Instruction& { return code[static_cast<std::size_t>(i)]; };
    const auto is_zero_broadcast = [&](int i) {
      const hlo::Instruction* x = &op(i);
      if (x->opcode == hlo::Opcode::Broadcast) x = &op(x->operands[0]);
      if (x->opcode != hlo::Opcode::Constant || !x->literal) return false;
      for (std::int64_t e = 0; e < x->literal->element_count(); ++e)
        if (x->literal->get_bits(e) != 0) return false;
      return true;
    };
    for (const hlo::Instruction& x : code) {
      const DType t = x.shape.dtype;
      switch (x.opcode) {
        case hlo::Opcode::Maximum:
        case hlo::Opcode::Minimum:
          if (x.opcode == hlo::Opcode::Maximum && (is_zero_broadcast(x.operands[0]) || is_zero_broadcast(x.operands[1])))
            push(out.relu, t);
          else
            push(out.general_maximum, t);
          break;
        case hlo::Opcode::Add:
        case hlo::Opcode::Subtract:
          if (op(x.operands[0]).opcode != hlo::Opcode::Dot && op(x.operands[1]).opcode != hlo::Opcode::Dot) push(out.direct_add, t);
          break;
        case hlo::Opcode::Dot: {
          const hlo::Instruction& a = op(x.operands[0]);
          const hlo::Instruction& b = op(x.operands[1]);
          if (a.opcode == hlo::Opcode::Convert && b.opcode == hlo::Opcode::Convert) {
            const DType narrow = op(a.operands[0]).shape.dtype;
            if (op(b.operands[0]).shape.dtype == narrow && std::find(out.widening_dot.begin(), out.widening_dot.end(),
                                                                     std::pair{narrow, t}) == out.widening_dot.end())
              out.widening_dot.emplace_back(narrow, t);
          }
          break;
        }
        default: break;
      }
    }
  }
  return out;
}

inline void add_min_max_via_relu_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  using enum hlo::Opcode;
  const auto facts = std::make_shared<const IsaReluFacts>(isa_relu_facts(ctx.isa));
  const IsaDotTypes dot_types = isa_dot_types(ctx.isa);
  AxiomRules rules(ctx, out);
  const auto convert = [](Build& b, Id x, DType to) {
    NodeAttributes a;
    a.dtype = to;
    return b.op(Convert, a, {x});
  };
  const auto relu = [](Build& b, Id x, const Shape& type) { return b.op(Maximum, NodeAttributes{}, {x, b.zeros(type)}); };

  rules.add(AxiomInfo{"maximum-as-widened-relu", AxiomFamily::Elementwise, "maximum-as-widened-relu", {Maximum},
                      {Convert, Add, Subtract, Maximum, Broadcast, Constant}, false,
                      "issue 16: max(a, b) = a + max(b - a, 0), exact in a wider signed integer"},
            "(maximum ?a ?b)", [facts](const View& v) { return facts->widened_relu_type(v.root_type().dtype).has_value(); },
            [facts, convert, relu](const View& v, Build& b) -> std::optional<Id> {
              const Shape t = v.root_type();
              const DType w = *facts->widened_relu_type(t.dtype);
              const Shape wide(w, t.dims);
              const Id a = convert(b, v.cls("?a"), w);
              const Id difference = b.op(Subtract, NodeAttributes{}, {convert(b, v.cls("?b"), w), a});
              return convert(b, b.op(Add, NodeAttributes{}, {a, relu(b, difference, wide)}), t.dtype);
            });
  rules.add(AxiomInfo{"minimum-as-widened-relu", AxiomFamily::Elementwise, "minimum-as-widened-relu", {Minimum},
                      {Convert, Subtract, Maximum, Negate, Broadcast, Constant}, false,
                      "issue 16: min(a, b) = -(max(a - b, 0) - a), in a wider signed integer, negated in T (wrapping)"},
            "(minimum ?a ?b)", [facts](const View& v) { return facts->widened_relu_type(v.root_type().dtype).has_value(); },
            [facts, convert, relu](const View& v, Build& b) -> std::optional<Id> {
              const Shape t = v.root_type();
              const DType w = *facts->widened_relu_type(t.dtype);
              const Shape wide(w, t.dims);
              const Id a = convert(b, v.cls("?a"), w);
              const Id difference = b.op(Subtract, NodeAttributes{}, {a, convert(b, v.cls("?b"), w)});
              const Id negated_minimum = b.op(Subtract, NodeAttributes{}, {relu(b, difference, wide), a});
              return b.op(Negate, NodeAttributes{}, {convert(b, negated_minimum, t.dtype)});
            });

  // The widened identities: only where W adds only inside a mac, and an n x n operand fits.
  const auto widened_square = [facts, dot_types](const Shape& y, DType w) {
    return y.rank() == 2 && is_integer(y.dtype) && y.dtype != DType::pred && bit_width(w) > bit_width(y.dtype) &&
           facts->dots_widened(y.dtype, w) && facts->adds_only_in_mac(w) &&
           (!dot_types.sizes || dot_types.sizes->contracting_fits(y.dtype, y.dims[1]));
  };
  rules.add(AxiomInfo{"add-of-widened-as-mac", AxiomFamily::Dot, "add-of-widened-as-mac", {Add, Convert},
                      {Add, Dot, Convert, Constant}, false,
                      "issue 16: convert<W>(y) + z = dot(convert<W>(y), convert<W>(I)) + z"},
            "(add (convert@widen ?y) ?z)",
            [widened_square](const View& v) { return widened_square(v.type("?y"), v.root_type().dtype); },
            [convert](const View& v, Build& b) -> std::optional<Id> {
              const Shape y = v.type("?y");
              const DType w = v.root_type().dtype;
              const Id widened = convert(b, v.cls("?y"), w);
              const Id product = b.dot(widened, convert(b, identity_constant(b, y.dtype, y.dims[1]), w), contracting(1, 0), w);
              return b.op(Add, NodeAttributes{}, {product, v.cls("?z")});
            });
  rules.add(AxiomInfo{"negate-widened-as-dot", AxiomFamily::Dot, "negate-widened-as-dot", {Negate, Convert},
                      {Dot, Convert, Constant}, false, "issue 16: -convert<W>(y) = dot(convert<W>(y), convert<W>(-I)), T signed"},
            "(negate (convert@widen ?y))",
            [widened_square](const View& v) {
              return is_signed_integer(v.type("?y").dtype) && widened_square(v.type("?y"), v.root_type().dtype);
            },
            [convert](const View& v, Build& b) -> std::optional<Id> {
              const Shape y = v.type("?y");
              const DType w = v.root_type().dtype;
              const Id minus_identity = b.patterned(y.dtype, {y.dims[1], y.dims[1]}, "negated-identity",
                                                    [](std::int64_t i, std::int64_t j) { return i == j ? -1.0 : 0.0; });
              return b.dot(convert(b, v.cls("?y"), w), convert(b, minus_identity, w), contracting(1, 0), w);
            });
}

}  // namespace act::select::axiom_detail
