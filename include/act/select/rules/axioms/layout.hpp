// Layout axioms: reshape / transpose / bitcast-convert / convert / copy algebra, plus the
// guarded identity introduction x → copy(x).
#pragma once

#include <vector>

#include "act/select/rules/axioms/support.hpp"

namespace act::select::axiom_detail {

inline void add_layout_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  using hlo::Opcode;
  using enum hlo::Opcode;
  const auto info = [](std::string name, std::vector<Opcode> lhs, std::vector<Opcode> rhs, std::string source) {
    return AxiomInfo{name, AxiomFamily::Layout, name, std::move(lhs), std::move(rhs), false, std::move(source)};
  };
  AxiomRules rules(ctx, out);

  // rewrites.md RS-3: reshape(reshape(x)) → reshape(x).
  rules.add(info("reshape-of-reshape", {Reshape}, {Reshape}, "rewrites.md RS-3"), "(reshape@outer (reshape ?x))",
            [](const View& v, Build& b) { return b.reshape(v.cls("?x"), v.attr("outer").shape); });

  // rewrites.md RS-2: reshape(x) → x when the shape does not change.
  rules.add(info("reshape-identity", {Reshape}, {}, "rewrites.md RS-2"), "(reshape@outer ?x)",
            [](const View& v) { return v.type("?x").dims == v.attr("outer").shape; }, "?x");

  // rewrites.md TP-2 (TensorRight relabel/rule01): transpose(transpose(x)) → transpose(x) composed.
  rules.add(info("transpose-of-transpose", {Transpose}, {Transpose}, "rewrites.md TP-2"),
            "(transpose@outer (transpose@inner ?x))", [](const View& v, Build& b) {
              const Dims& p1 = v.attr("inner").dimensions;
              const Dims& p2 = v.attr("outer").dimensions;
              Dims q;
              for (auto d : p2) q.push_back(p1[static_cast<std::size_t>(d)]);
              return b.transpose(v.cls("?x"), q);
            });

  // rewrites.md TP-1 (TensorRight relabel/rule02): transpose with the identity permutation → x.
  rules.add(info("transpose-identity", {Transpose}, {}, "rewrites.md TP-1"), "(transpose@outer ?x)",
            [](const View& v) { return is_identity_permutation(v.attr("outer").dimensions); }, "?x");

  // rewrites.md TP-6: a transpose that only moves size-1 dims is a reshape.
  rules.add(
      info("transpose-as-reshape", {Transpose}, {Reshape}, "rewrites.md TP-6"), "(transpose@outer ?x)",
      [](const View& v) {
        const Dims& p = v.attr("outer").dimensions;
        const Dims& in = v.type("?x").dims;
        std::int64_t last = -1;
        for (auto d : p) {
          if (in[static_cast<std::size_t>(d)] == 1) continue;
          if (d < last) return false;
          last = d;
        }
        return !is_identity_permutation(p);
      },
      [](const View& v, Build& b) {
        const Dims dims = v.root_type().dims;
        return b.reshape(v.cls("?x"), dims);
      });

  // Inverse of TP-6 (issue: transpose ↔ reshape when it only moves size-1 dims): a same-rank
  // reshape that permutes dims without reordering the non-1 ones is a transpose.
  rules.add(
      info("reshape-as-transpose", {Reshape}, {Transpose}, "rewrites.md TP-6 (inverse)"), "(reshape@outer ?x)",
      [](const View& v) {
        const Dims& in = v.type("?x").dims;
        const Dims& outd = v.attr("outer").shape;
        if (in.size() != outd.size() || in == outd) return false;
        Dims a, c;
        for (auto d : in) if (d != 1) a.push_back(d);
        for (auto d : outd) if (d != 1) c.push_back(d);
        return a == c;
      },
      [](const View& v, Build& b) {
        const Dims in = v.type("?x").dims;
        const Dims outd = v.attr("outer").shape;
        // Non-1 dims pair up in order; size-1 dims pair up in order.
        Dims perm;
        std::size_t next_big = 0, next_one = 0;
        for (auto d : outd) {
          std::size_t& cursor = d == 1 ? next_one : next_big;
          while (cursor < in.size() && ((in[cursor] == 1) != (d == 1))) ++cursor;
          perm.push_back(static_cast<std::int64_t>(cursor++));
        }
        return b.transpose(v.cls("?x"), perm);
      });

  // rewrites.md BCVT-4: bitcast-convert to the operand's own type → x.
  rules.add(info("bitcast-convert-identity", {BitcastConvert}, {}, "rewrites.md BCVT-4"), "(bitcast-convert@outer ?x)",
            [](const View& v) { return v.type("?x").dtype == v.attr("outer").dtype; }, "?x");

  // rewrites.md BCVT-1: bitcast-convert(bitcast-convert(x)) → bitcast-convert(x), or x when it
  // round-trips (the u8 ↔ bf16 pairs the kernel entry creates).
  rules.add(
      info("bitcast-convert-of-bitcast-convert", {BitcastConvert}, {BitcastConvert}, "rewrites.md BCVT-1"),
      "(bitcast-convert@outer (bitcast-convert ?x))",
      [](const View& v) {
        const Shape& x = v.type("?x");
        const DType to = v.attr("outer").dtype;
        const Shape& result = v.root_type();
        const int wi = bit_width(x.dtype), wo = bit_width(to);
        Dims direct = x.dims;
        if (wi > wo) direct.push_back(wi / wo);
        else if (wi < wo) {
          if (direct.empty() || direct.back() * wi != wo) return false;
          direct.pop_back();
        }
        return direct == result.dims;
      },
      [](const View& v, Build& b) { return b.bitcast(v.cls("?x"), v.attr("outer").dtype); });

  // rewrites.md CVT-1: convert to the operand's own type → x.
  rules.add(info("convert-identity", {Convert}, {}, "rewrites.md CVT-1"), "(convert@outer ?x)",
            [](const View& v) { return v.type("?x").dtype == v.attr("outer").dtype; }, "?x");

  // rewrites.md CVT-2 generalised: convert<T>(convert<U>(x)) → convert<T>(x) (or x) when the
  // inner convert is exact, i.e. U represents every value of x's type.
  rules.add(
      info("convert-of-convert", {Convert}, {Convert}, "rewrites.md CVT-2"), "(convert@outer (convert@inner ?x))",
      [](const View& v) { return represents_all(v.attr("inner").dtype, v.type("?x").dtype); },
      [](const View& v, Build& b) {
        const DType to = v.attr("outer").dtype;
        if (v.type("?x").dtype == to) return v.cls("?x");
        NodeAttributes a;
        a.dtype = to;
        return b.op(Convert, a, {v.cls("?x")});
      });

  // rewrites.md COPY-2: copy(x) → x.
  rules.add(info("copy-elimination", {Copy}, {}, "rewrites.md COPY-2"), "(copy ?x)", "?x");

  // Bitcast-convert between equal widths is elementwise, so it commutes with reshape
  // (rewrites.md BIT-3 in spirit): bitcast-convert(reshape(x)) → reshape(bitcast-convert(x)).
  // (reshape-of-bitcast-convert, the other direction, is an instance of reshape-of-<op>.)
  rules.add(
      info("bitcast-convert-of-reshape", {BitcastConvert, Reshape}, {Reshape, BitcastConvert},
           "rewrites.md BIT-3 / CM-2"),
      "(bitcast-convert@outer (reshape@inner ?x))",
      [](const View& v) { return bit_width(v.type("?x").dtype) == bit_width(v.attr("outer").dtype); },
      [](const View& v, Build& b) {
        NodeAttributes a;
        a.dtype = v.attr("outer").dtype;
        const Dims dims = v.attr("inner").shape;
        return b.reshape(b.op(BitcastConvert, a, {v.cls("?x")}), dims);
      });

  // Issue 3 (x ↔ copy(x)). Guard against growth: only classes that hold no copy yet, and not
  // compile-time constants (they become the constant pool, never need a move). So every class
  // gains at most one copy node, and copy(x) sits in x's own class, so it creates no new class.
  AxiomInfo copy_introduction = info("copy-introduction", {}, {Copy}, "issue 3: x ↔ copy(x)");
  copy_introduction.wraps_in_instruction_operator = true;
  rules.add(
      std::move(copy_introduction), "?x",
      [](const View& v) {
        const TensorData& d = v.g.data(v.cls("?x"));
        return !d.is_constant && !d.type.is_tuple && d.type.rank() >= 1 && !has_operator(v.g, v.cls("?x"), Copy);
      },
      [](const View& v, Build& b) { return b.op(Copy, NodeAttributes{}, {v.cls("?x")}); });
}

}  // namespace act::select::axiom_detail
