// Rewrites for accelerators that have only matmuls and adds (issue 16, Gemmini):
//   negate(x:[n,m])  → dot(x, -I[m,m])          -x[i,j] = sum_k x[i,k] (-I)[k,j]
//   subtract(x, y)   → add(x, negate(y))
//   subtract(x, x)   → broadcast(0)                (folds what depends on it: clamp(lo, x - x, hi))
//   reshape<[k,1]>(reduce-add<{d}>(x:[.,.], 0)) → dot(x, ones[n_d, 1]) contracting x's dim d
//   reshape<[1,k]>(reduce-add<{d}>(x:[.,.], 0)) → dot(ones[1, n_d], x) contracting x's dim d
// The last two keep the reduced dim as a unit dim, so the dot is one matmul with a ones column
// (reduce-as-dot's rank-1 ones vector is no matmul operand).
// All hold bit for bit in two's-complement arithmetic that wraps (XLA's integer semantics): a
// dot accumulates exactly and wraps once, and -(-2^(w-1)) wraps to itself on both sides. They
// are for wrapping integers only: for floats (+0)(-1) summed with zeros is +0 where negate gives
// -0, Inf * 0 in a dot is NaN, and sums re-associate; keeping them to integers also leaves the
// float kernels of other ISAs with the e-graphs they had.
#pragma once

#include <vector>

#include "act/select/rules/axioms/dot.hpp"
#include "act/select/rules/axioms/support.hpp"

namespace act::select::axiom_detail {

inline bool wrapping_integer(DType t) { return is_integer(t) && t != DType::pred; }

inline void add_negation_and_reduction_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  const IsaDotTypes dot_types = isa_dot_types(ctx.isa);
  using enum hlo::Opcode;
  AxiomRules rules(ctx, out);
  rules.add(AxiomInfo{"negate-as-dot", AxiomFamily::Dot, "negate-as-dot", {Negate}, {Dot, Constant}, false,
                      "issue 16: integer negation as a dot with the negated identity (wrapping)"},
            "(negate@outer ?x)",
            [dot_types](const View& v) {
              const Shape& x = v.type("?x");
              return x.rank() == 2 && wrapping_integer(x.dtype) && dot_types.allows_square(x.dtype, x.dims[1]);
            },
            [](const View& v, Build& b) {
              const Shape x = v.type("?x");
              const Id minus_identity = b.patterned(x.dtype, {x.dims[1], x.dims[1]}, "negated-identity",
                                                    [](std::int64_t i, std::int64_t j) { return i == j ? -1.0 : 0.0; });
              return b.dot(v.cls("?x"), minus_identity, contracting(1, 0), x.dtype);
            });
  rules.add(AxiomInfo{"subtract-as-add-negate", AxiomFamily::Elementwise, "subtract-as-add-negate", {Subtract}, {Add, Negate},
                      false, "issue 16: x - y = x + (-y) in wrapping integers"},
            "(subtract ?x ?y)", [](const View& v) { return wrapping_integer(v.root_type().dtype); },
            [](const View& v, Build& b) {
              const Id negated = b.op(Negate, NodeAttributes{}, {v.cls("?y")});
              return b.op(Add, NodeAttributes{}, {v.cls("?x"), negated});
            });
  rules.add(AxiomInfo{"subtract-of-itself", AxiomFamily::Elementwise, "subtract-of-itself", {Subtract}, {Broadcast, Constant},
                      false, "issue 16: x - x = 0 in wrapping integers (for floats, Inf - Inf is NaN)"},
            "(subtract ?x ?x)", [](const View& v) { return wrapping_integer(v.root_type().dtype); },
            [](const View& v, Build& b) { return b.zeros(v.root_type()); });
  rules.add(AxiomInfo{"reduce-keepdim-as-dot", AxiomFamily::Reduction, "reduce-keepdim-as-dot", {Reshape, Reduce}, {Dot, Constant},
                      false, "issue 16: a reduce whose result is reshaped to keep the reduced dim, as a dot with a ones column"},
            "(reshape@outer (reduce@r ?x ?init))",
            [dot_types](const View& v) {
              const auto& a = v.attr("r");
              const Shape& x = v.type("?x");
              const Shape& t = v.root_type();
              if (a.reduce != ReduceKind::Add || a.dimensions.size() != 1 || x.rank() != 2 || t.rank() != 2) return false;
              if (!wrapping_integer(x.dtype) || !dot_types.allows(x.dtype) || !is_zero_constant(v.g, v.ctx, v.cls("?init"))) return false;
              const auto kept = x.dims[a.dimensions[0] == 0 ? 1 : 0];
              return (t.dims[0] == kept && t.dims[1] == 1) || (t.dims[0] == 1 && t.dims[1] == kept);
            },
            [](const View& v, Build& b) {
              const Shape x = v.type("?x");
              const Shape t = v.root_type();
              const auto d = v.attr("r").dimensions[0];
              const auto n = x.dims[static_cast<std::size_t>(d)];
              const auto one = [](std::int64_t, std::int64_t) { return 1.0; };
              const auto kept = x.dims[d == 0 ? 1 : 0];
              if (t.dims[1] == 1 && t.dims[0] == kept)
                return b.dot(v.cls("?x"), b.patterned(x.dtype, {n, 1}, "ones", one), contracting(d, 0), x.dtype);
              return b.dot(b.patterned(x.dtype, {1, n}, "ones", one), v.cls("?x"), contracting(1, d), x.dtype);
            });
}

}  // namespace act::select::axiom_detail
