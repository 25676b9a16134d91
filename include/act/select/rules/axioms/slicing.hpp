// Slicing, concatenation, padding, reverse and broadcast axioms: the rules that let a tensor be
// cut into instruction-sized tiles and glued back (rewrites.md §8–9, TensorRight slice/concat).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "act/select/rules/axioms/support.hpp"

namespace act::select::axiom_detail {

// The slice `r` of an array of dims `y`, when it is one contiguous block in row-major order
// (single elements on the leading dims, a unit-stride range on one dim, whole trailing dims):
// {first element, element count}.
inline std::optional<std::pair<std::int64_t, std::int64_t>> flat_block(const std::vector<hlo::SliceRange>& r, const Dims& y) {
  if (r.size() != y.size() || y.empty()) return std::nullopt;
  std::size_t j = y.size();
  while (j > 0 && canonical(r[j - 1]) == canonical(hlo::SliceRange{0, y[j - 1], 1})) --j;
  if (j == 0) return std::nullopt;  // the whole array
  --j;                              // the dim with a partial range
  if (canonical(r[j]).stride != 1) return std::nullopt;
  for (std::size_t d = 0; d < j; ++d)
    if (range_count(r[d]) != 1) return std::nullopt;
  std::int64_t start = 0, count = 0, inner = 1;
  for (std::size_t d = y.size(); d-- > 0;) {
    if (d == j) count = range_count(r[d]) * inner;
    start += r[d].start * inner;
    inner *= y[d];
  }
  return std::make_pair(start, count);
}

// The inverse of flat_block: bytes [start, start + count) of a flattened x (rank 1, row-major)
// as a slice of x, when they are one block of x: whole rows of some dim d, all inside one index
// of the dims before d (bytes 0..8191 of u8[16384] = reshape(u8[128,64,2]) are rows 0..63).
inline std::optional<std::vector<hlo::SliceRange>> block_of_flat(std::int64_t start, std::int64_t count, const Dims& x) {
  if (count <= 0 || x.empty()) return std::nullopt;
  for (std::size_t d = 0; d < x.size(); ++d) {
    std::int64_t inner = 1;
    for (std::size_t k = d + 1; k < x.size(); ++k) inner *= x[k];
    if (start % inner != 0 || count % inner != 0) continue;
    const std::int64_t lo = start / inner, hi = (start + count) / inner;  // rows of dims 0..d flattened
    if (lo / x[d] != (hi - 1) / x[d]) continue;                            // crosses a dim-(d-1) boundary
    std::vector<hlo::SliceRange> r(x.size());
    std::int64_t prefix = lo / x[d];
    for (std::size_t k = d; k-- > 0;) {
      r[k] = {prefix % x[k], prefix % x[k] + 1, 1};
      prefix /= x[k];
    }
    r[d] = {lo % x[d], (hi - 1) % x[d] + 1, 1};
    for (std::size_t k = d + 1; k < x.size(); ++k) r[k] = {0, x[k], 1};
    return r;
  }
  return std::nullopt;
}

// The slice takes whole rows of an array of dims d: every dim after the first kept whole.
inline bool whole_rows(const std::vector<hlo::SliceRange>& r, const Dims& d) {
  if (r.size() != d.size()) return false;
  for (std::size_t k = 1; k < d.size(); ++k)
    if (!(canonical(r[k]) == canonical(hlo::SliceRange{0, d[k], 1}))) return false;
  return true;
}

// The nodes of a class with opcode `code`, in ascending order. A copy, for right-hand sides
// (building adds nodes to classes); conditions read the class's nodes in place.
inline std::vector<Id> operator_nodes(const TensorGraph& g, Id cls, hlo::Opcode code) {
  std::vector<Id> r;
  for (Id n : g.class_nodes(cls))
    if (is_operator_node(g, n, code)) r.push_back(n);
  return r;
}

// slice(concat<d>(x1..xn)) when the range along d falls inside one operand: (operand, offset).
struct ConcatHit {
  Id operand = egraph::kNoId;
  std::int64_t offset = 0;
};
inline std::optional<ConcatHit> slice_inside_concat_operand(const TensorGraph& g, const SelectionContext& ctx, Id concat_node,
                                                            const std::vector<hlo::SliceRange>& ranges) {
  const auto view = g.node(concat_node);
  const auto d = static_cast<std::size_t>(ctx.attributes_of(view.op).dimensions.at(0));
  const hlo::SliceRange r = canonical(ranges[d]);
  if (range_count(r) == 0) return std::nullopt;
  std::int64_t offset = 0;
  for (Id child : view.children) {
    const std::int64_t n = g.data(child).type.dims[d];
    if (r.start >= offset && r.limit <= offset + n) return ConcatHit{g.find(child), offset};
    offset += n;
  }
  return std::nullopt;
}

// slice(concat<d>(x1..xn)) with an unstrided range along d: calls f(operand, part) for each
// operand the range touches, with the part of the range inside it (in the operand's own
// indices), in order.
template <class F>
void for_each_spanned_operand(const TensorGraph& g, const SelectionContext& ctx, Id concat_node,
                              const std::vector<hlo::SliceRange>& ranges, F&& f) {
  const auto view = g.node(concat_node);
  const auto d = static_cast<std::size_t>(ctx.attributes_of(view.op).dimensions.at(0));
  const hlo::SliceRange r = canonical(ranges[d]);
  if (r.stride != 1 || range_count(r) == 0) return;
  std::int64_t offset = 0;
  for (Id child : view.children) {
    const std::int64_t n = g.data(child).type.dims[d];
    const std::int64_t lo = std::max(r.start, offset), hi = std::min(r.limit, offset + n);
    if (lo < hi) f(g.find(child), hlo::SliceRange{lo - offset, hi - offset, 1});
    offset += n;
  }
}
inline std::vector<std::pair<Id, hlo::SliceRange>> concat_operands_spanned(const TensorGraph& g, const SelectionContext& ctx, Id concat_node,
                                                                         const std::vector<hlo::SliceRange>& ranges) {
  std::vector<std::pair<Id, hlo::SliceRange>> out;
  for_each_spanned_operand(g, ctx, concat_node, ranges, [&](Id operand, const hlo::SliceRange& part) { out.push_back({operand, part}); });
  return out;
}
// How many operands the range spans, without building the list: the slice-of-concat conditions
// ask for every slice match of every iteration (with the list and operator_nodes' copy, 4 % of
// the samples of AMX compiles that end without a program).
inline std::size_t concat_operands_spanned_count(const TensorGraph& g, const SelectionContext& ctx, Id concat_node,
                                                 const std::vector<hlo::SliceRange>& ranges) {
  std::size_t count = 0;
  for_each_spanned_operand(g, ctx, concat_node, ranges, [&](Id, const hlo::SliceRange&) { ++count; });
  return count;
}

inline void add_slicing_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  using hlo::Opcode;
  using enum hlo::Opcode;
  const auto info = [](std::string name, AxiomFamily family, std::vector<Opcode> lhs, std::vector<Opcode> rhs,
                       std::string source) {
    return AxiomInfo{name, family, name, std::move(lhs), std::move(rhs), false, std::move(source)};
  };
  const auto S = AxiomFamily::Slicing, P = AxiomFamily::Padding, L = AxiomFamily::Layout, R = AxiomFamily::Reduction;
  AxiomRules rules(ctx, out);
  // Slices through a flattening reshape and through byte bitcasts (an output's byte rows are
  // the bytes of its rows) act only in a retry that splits a row-major output module 1 first
  // left whole (SelectionContext::row_piece_retry), and always without an ISA (the soundness
  // tests): for tiled outputs the byte views do this work, and these rules grew K5's e-graph by
  // 16 % and pushed AMX's int8 GEMM m48 x n64 retry past its node limit.
  const bool row_pieces = ctx.row_piece_retry || ctx.isa.instructions.empty();

  // rewrites.md SL-5 (TensorRight slice/rule07), generalised to strides: slice(slice(x)) → slice(x).
  rules.add(info("slice-of-slice", S, {Slice}, {Slice}, "rewrites.md SL-5"), "(slice@outer (slice@inner ?x))",
            [](const View& v, Build& b) {
              const auto& in = v.attr("inner").slice;
              const auto& o = v.attr("outer").slice;
              std::vector<hlo::SliceRange> r;
              for (std::size_t d = 0; d < in.size(); ++d) {
                const auto n = range_count(o[d]);
                const auto start = in[d].start + o[d].start * in[d].stride;
                const auto stride = in[d].stride * o[d].stride;
                r.push_back({start, n == 0 ? start : start + (n - 1) * stride + 1, stride});
              }
              return b.slice(v.cls("?x"), r);
            });

  // rewrites.md SL-1 (TensorRight slice/rule01): a slice covering x → x.
  rules.add(info("slice-full-range", S, {Slice}, {}, "rewrites.md SL-1"), "(slice@outer ?x)",
            [](const View& v) { return covers(v.attr("outer").slice, v.type("?x").dims); }, "?x");

  // rewrites.md SL-10/SL-11 (TensorRight slice/rule08, 10, 11): a slice inside one operand of a
  // concatenate along the sliced dim → a slice of that operand (or the operand itself). The
  // concatenate is looked up in x's class, not matched: any of its concatenates may hold the range.
  // Two rules, so that each has a backoff schedule of its own: slices of one element
  // (slice-of-concat-element) and larger ones. The lane blends' element reads of a transposed
  // concat(s, s) gave the one rule over a thousand matches in the first iteration, and its ban
  // kept the rows of concat(s, s) apart from the rows of s the instructions compute for 11
  // iterations (AMX compile-time kernel 9: 20 iterations and 59k e-nodes to its program).
  // The larger pieces' rule is never banned; the one-element rule stays under the backoff:
  // never banned too, it flooded AMX sound-soak kernel 127 (seed 4242) to the node limit.
  for (const bool element : {false, true}) {
    AxiomInfo about = info(element ? "slice-of-concat-element" : "slice-of-concat", S, {Slice, Concatenate}, {Slice},
                           "rewrites.md SL-10, SL-11");
    about.never_banned = !element;
    rules.add(
        std::move(about), "(slice@outer ?x)",
        [element](const View& v) {
          const Id x = v.cls("?x");
          if ((v.root_type().element_count() == 1) != element || !may_hold_operator(v.g, x, Concatenate)) return false;
          for (Id n : v.g.class_nodes(x))
            if (is_operator_node(v.g, n, Concatenate) && slice_inside_concat_operand(v.g, v.ctx, n, v.attr("outer").slice))
              return true;
          return false;
        },
        [](const View& v, Build& b) -> std::optional<Id> {
          const auto ranges = v.attr("outer").slice;
          for (Id n : operator_nodes(v.g, v.cls("?x"), Concatenate)) {
            auto hit = slice_inside_concat_operand(v.g, v.ctx, n, ranges);
            if (!hit) continue;
            auto r = ranges;
            const auto d = static_cast<std::size_t>(v.ctx.attributes_of(v.g.node(n).op).dimensions[0]);
            r[d] = canonical(r[d]);
            r[d].start -= hit->offset;
            r[d].limit -= hit->offset;
            return b.slice(hit->operand, r);
          }
          return std::nullopt;
        });
  }

  // rewrites.md SL-11 (TensorRight slice/rule12): an unstrided slice spanning operands j..k of a
  // concatenate (a proper subset) → a slice of concat(xj..xk).
  rules.add(
      info("slice-of-concat-narrow", S, {Slice, Concatenate}, {Slice, Concatenate}, "rewrites.md SL-11"),
      "(slice@outer ?x)",
      [](const View& v) {
        const Id x = v.cls("?x");
        if (!may_hold_operator(v.g, x, Concatenate)) return false;
        for (Id n : v.g.class_nodes(x)) {
          if (!is_operator_node(v.g, n, Concatenate)) continue;
          const std::size_t spanned = concat_operands_spanned_count(v.g, v.ctx, n, v.attr("outer").slice);
          if (spanned >= 2 && spanned < v.g.node(n).children.size()) return true;
        }
        return false;
      },
      [](const View& v, Build& b) -> std::optional<Id> {
        const auto ranges = v.attr("outer").slice;
        for (Id n : operator_nodes(v.g, v.cls("?x"), Concatenate)) {
          const auto spanned = concat_operands_spanned(v.g, v.ctx, n, ranges);
          if (spanned.size() < 2 || spanned.size() == v.g.node(n).children.size()) continue;
          const auto d = static_cast<std::size_t>(v.ctx.attributes_of(v.g.node(n).op).dimensions[0]);
          std::vector<Id> picked;
          for (const auto& [operand, range] : spanned) picked.push_back(operand);
          // The range starts where it enters the first operand picked.
          auto nr = ranges;
          const std::int64_t start = spanned.front().second.start;
          nr[d] = {start, start + range_count(canonical(ranges[d])), 1};
          return b.slice(b.concat(picked, static_cast<std::int64_t>(d)), nr);
        }
        return std::nullopt;
      });

  // rewrites.md SL-11, split form: an unstrided slice spanning operands j..k (k > j) of a
  // concatenate → concat(slice(xj), x(j+1), ..., slice(xk)). Without it a row piece that spans
  // two inputs can only be cut from their concatenation assembled on chip; with it each part is
  // loaded from its own input straight into place (an output assembled from such pieces).
  rules.add(
      info("slice-of-concat-split", S, {Slice, Concatenate}, {Slice, Concatenate}, "rewrites.md SL-11"), "(slice@outer ?x)",
      [](const View& v) {
        const Id x = v.cls("?x");
        if (!may_hold_operator(v.g, x, Concatenate)) return false;
        for (Id n : v.g.class_nodes(x))
          if (is_operator_node(v.g, n, Concatenate) && concat_operands_spanned_count(v.g, v.ctx, n, v.attr("outer").slice) >= 2)
            return true;
        return false;
      },
      [](const View& v, Build& b) -> std::optional<Id> {
        const auto ranges = v.attr("outer").slice;
        for (Id n : operator_nodes(v.g, v.cls("?x"), Concatenate)) {
          const auto spanned = concat_operands_spanned(v.g, v.ctx, n, ranges);
          if (spanned.size() < 2) continue;
          const auto d = static_cast<std::size_t>(v.ctx.attributes_of(v.g.node(n).op).dimensions[0]);
          std::vector<Id> parts;
          for (const auto& [operand, range] : spanned) {
            auto r = ranges;
            r[d] = range;
            const auto& dims = v.g.data(operand).type.dims;
            parts.push_back(covers(r, dims) ? operand : b.slice(operand, r));
          }
          return b.concat(parts, static_cast<std::int64_t>(d));
        }
        return std::nullopt;
      });

  // rewrites.md CAT-4 (TensorRight concat/rule04): concat of adjacent slices of one x → slice.
  rules.add(
      info("concat-of-adjacent-slices", S, {Concatenate, Slice}, {Slice}, "rewrites.md CAT-4"),
      "(concatenate@outer (slice@a ?x) (slice@b ?x))",
      [](const View& v) {
        const auto d = static_cast<std::size_t>(v.attr("outer").dimensions[0]);
        const auto& a = v.attr("a").slice;
        const auto& c = v.attr("b").slice;
        for (std::size_t k = 0; k < a.size(); ++k) {
          const auto ra = canonical(a[k]), rc = canonical(c[k]);
          if (k == d) {
            if (ra.stride != 1 || rc.stride != 1 || ra.limit != rc.start) return false;
          } else if (!(ra == rc)) {
            return false;
          }
        }
        return true;
      },
      [](const View& v, Build& b) {
        const auto d = static_cast<std::size_t>(v.attr("outer").dimensions[0]);
        std::vector<hlo::SliceRange> r;
        for (auto x : v.attr("a").slice) r.push_back(canonical(x));
        r[d].limit = canonical(v.attr("b").slice[d]).limit;
        return b.slice(v.cls("?x"), r);
      });

  // rewrites.md CAT-3 (TensorRight concat/rule02, rule07): flatten nested concatenates.
  const auto same_dim = [](const View& v) { return v.attr("inner").dimensions == v.attr("outer").dimensions; };
  // rewrites.md CAT-2: an operand with no elements adds nothing (binary concatenates: module 1
  // enters n-ary ones as chains).
  const auto empty = [](std::string_view var) {
    return [var](const View& v) {
      const auto& d = v.attr("outer").dimensions;
      return d.size() == 1 && v.type(var).dims.at(static_cast<std::size_t>(d[0])) == 0;
    };
  };
  rules.add(info("concat-drop-empty-right", S, {Concatenate}, {}, "rewrites.md CAT-2"), "(concatenate@outer ?a ?b)", empty("?b"),
            "?a");
  rules.add(info("concat-drop-empty-left", S, {Concatenate}, {}, "rewrites.md CAT-2"), "(concatenate@outer ?a ?b)", empty("?a"),
            "?b");
  rules.add(info("concat-of-concat-left", S, {Concatenate}, {Concatenate}, "rewrites.md CAT-3"),
            "(concatenate@outer (concatenate@inner ?a ?b) ?c)", same_dim, [](const View& v, Build& b) {
              return b.concat({v.cls("?a"), v.cls("?b"), v.cls("?c")}, v.attr("outer").dimensions[0]);
            });
  rules.add(info("concat-of-concat-right", S, {Concatenate}, {Concatenate}, "rewrites.md CAT-3"),
            "(concatenate@outer ?c (concatenate@inner ?a ?b))", same_dim, [](const View& v, Build& b) {
              return b.concat({v.cls("?c"), v.cls("?a"), v.cls("?b")}, v.attr("outer").dimensions[0]);
            });

  // Row-major concatenation along a dim with only size-1 dims before it lays x's bytes, then
  // y's: concat(reshape(x), reshape(y)) → reshape(concat(x, y)) for flat x, y. It names the
  // window that straddles two adjacent kernel inputs in the HBM image (the last rows of in0 and
  // the first of in1), which an instruction reading one contiguous HBM operand can then take
  // through concat^H (gemmini_plus loop_ws, tests/regressions/gemmini_plus_window_across_inputs).
  rules.add(
      info("concat-of-flat-reshapes", S, {Concatenate, Reshape}, {Reshape, Concatenate}, "act (HBM image windows)"),
      "(concatenate@outer (reshape ?x) (reshape ?y))",
      [](const View& v) {
        const Shape& x = v.type("?x");
        const Shape& y = v.type("?y");
        if (x.dims.size() != 1 || y.dims.size() != 1 || x.dtype != y.dtype) return false;
        // One value twice has no adjacent copy in the image: thousands of pii graphs that no
        // allocation can place (concat(p0, p0) on Gemmini).
        if (v.cls("?x") == v.cls("?y")) return false;
        const Dims& out = v.root_type().dims;
        const auto d = static_cast<std::size_t>(v.attr("outer").dimensions[0]);
        for (std::size_t k = 0; k < d; ++k)
          if (out[k] != 1) return false;
        return true;
      },
      [](const View& v, Build& b) { return b.reshape(b.concat({v.cls("?x"), v.cls("?y")}, 0), v.root_type().dims); });

  // rewrites.md SH-1: slice(transpose<p>(x)) → transpose<p>(slice(x)).
  rules.add(info("slice-of-transpose", S, {Slice, Transpose}, {Transpose, Slice}, "rewrites.md SH-1"),
            "(slice@outer (transpose@inner ?x))", [](const View& v, Build& b) {
              const Dims p = v.attr("inner").dimensions;
              const auto o = v.attr("outer").slice;
              std::vector<hlo::SliceRange> r(p.size());
              for (std::size_t i = 0; i < p.size(); ++i) r[static_cast<std::size_t>(p[i])] = o[i];
              return b.transpose(b.slice(v.cls("?x"), r), p);
            });

  // rewrites.md SH-1 reversed: transpose<p>(slice(x)) → slice(transpose<p>(x)).
  rules.add(info("transpose-of-slice", S, {Transpose, Slice}, {Slice, Transpose}, "rewrites.md SH-1 (reversed)"),
            "(transpose@outer (slice@inner ?x))", [](const View& v, Build& b) {
              const Dims p = v.attr("outer").dimensions;
              const auto in = v.attr("inner").slice;
              std::vector<hlo::SliceRange> r;
              for (auto d : p) r.push_back(in[static_cast<std::size_t>(d)]);
              return b.slice(b.transpose(v.cls("?x"), p), r);
            });

  // rewrites.md SL-13 generalised: slice(reshape(x)) → reshape(slice(x)) when the reshape keeps
  // a common leading prefix of dims and the slice only cuts dims of that prefix, or when x is
  // flat (module 1's byte inputs) and the slice is one contiguous row-major block of the
  // reshape (rows 16..31 of u8[32,64] = reshape(u8[2048]) are bytes 1024..2047), or the other
  // way round: the reshape flattens x and the slice is one block of x (an output's byte pieces).
  rules.add(
      info("slice-of-reshape", S, {Slice, Reshape}, {Reshape, Slice}, "rewrites.md SL-13"),
      "(slice@outer (reshape@inner ?x))",
      [row_pieces](const View& v) {
        const Dims& x = v.type("?x").dims;
        const Dims& y = v.attr("inner").shape;
        const auto& r = v.attr("outer").slice;
        std::size_t k = 0;
        while (k < x.size() && k < y.size() && x[k] == y[k]) ++k;
        if (covers(r, y)) return false;
        if (x.size() == 1 && y.size() > 1 && flat_block(r, y)) return true;
        if (y.size() == 1 && x.size() > 1)
          return row_pieces && canonical(r[0]).stride == 1 && block_of_flat(r[0].start, range_count(r[0]), x).has_value();
        for (std::size_t d = k; d < y.size(); ++d)
          if (!(canonical(r[d]) == canonical(hlo::SliceRange{0, y[d], 1}))) return false;
        return k > 0;
      },
      [](const View& v, Build& b) {
        const Dims x = v.type("?x").dims;
        const Dims y = v.attr("inner").shape;
        const auto r = v.attr("outer").slice;
        const Dims result = v.root_type().dims;
        if (x.size() == 1 && y.size() > 1)
          if (const auto block = flat_block(r, y))
            return b.reshape(b.slice(v.cls("?x"), {{block->first, block->first + block->second, 1}}), result);
        if (y.size() == 1 && x.size() > 1) return b.reshape(b.slice(v.cls("?x"), *block_of_flat(r[0].start, range_count(r[0]), x)), result);
        std::size_t k = 0;
        while (k < x.size() && k < y.size() && x[k] == y[k]) ++k;
        auto xr = full_ranges(x);
        for (std::size_t d = 0; d < k; ++d) xr[d] = r[d];
        return b.reshape(b.slice(v.cls("?x"), xr), result);
      });

  // slice(bitcast-convert<narrow>(x)) → bitcast-convert<narrow>(slice(x)) when the bitcast
  // splits each element into a new trailing dim (bf16[n,64] → u8[n,64,2]) and the slice takes
  // whole rows: the rows of an output's bytes are the bytes of the output's rows.
  rules.add(
      info("slice-of-narrowing-bitcast", S, {Slice, BitcastConvert}, {BitcastConvert, Slice}, "XLA operation semantics of BitcastConvert"),
      "(slice@outer (bitcast-convert@inner ?x))",
      [row_pieces](const View& v) {
        const Shape& x = v.type("?x");
        const DType to = v.attr("inner").dtype;
        if (!row_pieces || bit_width(to) >= bit_width(x.dtype)) return false;
        // Row blocks only: what an output's byte pieces are. Tiles of the bytes are the byte
        // views' business (views.hpp); taking them here too grew AMX's e-graphs by 7 %
        // without a program more.
        Dims bytes = x.dims;
        bytes.push_back(bit_width(x.dtype) / bit_width(to));
        return whole_rows(v.attr("outer").slice, bytes);
      },
      [](const View& v, Build& b) {
        auto r = v.attr("outer").slice;
        r.pop_back();
        return b.bitcast(b.slice(v.cls("?x"), r), v.attr("inner").dtype);
      });

  // The other way: bitcast-convert<wide>(x) folds x's trailing dim into each element (u8[n,64,2]
  // → bf16[n,64]); slice(bitcast-convert<wide>(x)) → bitcast-convert<wide>(slice(x)), the
  // trailing dim kept whole: rows of an input are the bytes of the input's rows.
  rules.add(
      info("slice-of-widening-bitcast", S, {Slice, BitcastConvert}, {BitcastConvert, Slice}, "XLA operation semantics of BitcastConvert"),
      "(slice@outer (bitcast-convert@inner ?x))",
      [row_pieces](const View& v) {
        const Shape& x = v.type("?x");
        if (!row_pieces || bit_width(v.attr("inner").dtype) <= bit_width(x.dtype) || x.rank() == 0) return false;
        return whole_rows(v.attr("outer").slice, Dims(x.dims.begin(), x.dims.end() - 1));  // row blocks only, as above
      },
      [](const View& v, Build& b) {
        auto r = v.attr("outer").slice;
        r.push_back({0, v.type("?x").dims.back(), 1});
        return b.bitcast(b.slice(v.cls("?x"), r), v.attr("inner").dtype);
      });

  // rewrites.md SL-7 (TensorRight slice/rule03): slice(broadcast<D>(x)) → broadcast<D>(slice(x)).
  rules.add(info("slice-of-broadcast", S, {Slice, Broadcast}, {Broadcast, Slice}, "rewrites.md SL-7"),
            "(slice@outer (broadcast@inner ?x))", [](const View& v, Build& b) {
              const Dims D = v.attr("inner").dimensions;
              const auto o = v.attr("outer").slice;
              const Dims result = v.root_type().dims;
              const Dims& x = v.type("?x").dims;
              std::vector<hlo::SliceRange> r;
              for (std::size_t k = 0; k < D.size(); ++k) {
                const auto& q = o[static_cast<std::size_t>(D[k])];
                // A size-1 operand dim that the broadcast repeats keeps its one row.
                if (x[k] == 1) r.push_back({0, range_count(q) == 0 ? 0 : 1, 1});
                else r.push_back(q);
              }
              const Id sliced = b.slice(v.cls("?x"), r);
              NodeAttributes a;
              a.shape = result;
              a.dimensions = D;
              return b.op(Broadcast, a, {sliced});
            });

  // rewrites.md SL-14 (TensorRight slice/rule13): slice(reverse<D>(x)) → reverse<D>(slice'(x)).
  rules.add(info("slice-of-reverse", S, {Slice, Reverse}, {Reverse, Slice}, "rewrites.md SL-14"),
            "(slice@outer (reverse@inner ?x))", [](const View& v, Build& b) {
              const Dims D = v.attr("inner").dimensions;
              const Dims x = v.type("?x").dims;
              auto r = v.attr("outer").slice;
              for (auto d : D) {
                auto& q = r[static_cast<std::size_t>(d)];
                const auto n = range_count(q);
                if (n == 0) continue;
                const auto last = x[static_cast<std::size_t>(d)] - 1 - q.start;
                q = {last - (n - 1) * q.stride, last + 1, q.stride};
              }
              NodeAttributes a;
              a.dimensions = D;
              return b.op(Reverse, a, {b.slice(v.cls("?x"), r)});
            });

  // rewrites.md SL-3/SL-4 (TensorRight slice/rule04, rule06): a unit-stride slice of pad(x)
  // that stays inside x (no interior padding) → slice(x) or x.
  rules.add(
      info("slice-of-pad", P, {Slice, Pad}, {Slice}, "rewrites.md SL-3, SL-4"), "(slice@outer (pad@inner ?x ?v))",
      [](const View& v) {
        const auto& pad = v.attr("inner").padding;
        const auto& r = v.attr("outer").slice;
        const Dims& x = v.type("?x").dims;
        for (std::size_t d = 0; d < x.size(); ++d) {
          const auto q = canonical(r[d]);
          if (pad[d].interior != 0 && x[d] > 1) return false;
          if (range_count(q) > 0 && (q.start < pad[d].low || q.limit > pad[d].low + x[d])) return false;
        }
        return true;
      },
      [](const View& v, Build& b) {
        const auto pad = v.attr("inner").padding;
        auto r = v.attr("outer").slice;
        for (std::size_t d = 0; d < r.size(); ++d) {
          r[d] = canonical(r[d]);
          r[d].start -= pad[d].low;
          r[d].limit -= pad[d].low;
        }
        return b.slice(v.cls("?x"), r);
      });

  // rewrites.md PAD-3 (TensorRight pad/rule01): pad with nothing → x.
  rules.add(
      info("pad-identity", P, {Pad}, {}, "rewrites.md PAD-3"), "(pad@outer ?x ?v)",
      [](const View& v) {
        for (const auto& p : v.attr("outer").padding)
          if (p.low != 0 || p.high != 0 || p.interior != 0) return false;
        return true;
      },
      "?x");

  // rewrites.md REV-2 (TensorRight reverse/rule02, rule03): reverse<A>(reverse<B>(x)) → reverse<A△B>(x).
  rules.add(info("reverse-of-reverse", L, {Reverse}, {Reverse}, "rewrites.md REV-2"),
            "(reverse@outer (reverse@inner ?x))", [](const View& v, Build& b) {
              Dims sym;
              const Dims A = v.attr("outer").dimensions, B = v.attr("inner").dimensions;
              for (auto d : A) if (!contains(B, d)) sym.push_back(d);
              for (auto d : B) if (!contains(A, d)) sym.push_back(d);
              std::sort(sym.begin(), sym.end());
              if (sym.empty()) return v.cls("?x");
              NodeAttributes a;
              a.dimensions = sym;
              return b.op(Reverse, a, {v.cls("?x")});
            });

  // reverse<{d, rest...}>(x) → reverse<{d}>(reverse<{rest...}>(x)): one dimension at a time
  // (the converse of reverse-of-reverse), so reverse-as-dot reaches a reverse of both dims of a
  // matrix, as two dots with the reversed identity.
  rules.add(info("reverse-one-dimension-at-a-time", L, {Reverse}, {Reverse}, "issue 16: converse of rewrites.md REV-2"),
            "(reverse@outer ?x)", [](const View& v) { return v.attr("outer").dimensions.size() >= 2; },
            [](const View& v, Build& b) {
              const Dims all = v.attr("outer").dimensions;
              NodeAttributes first, rest;
              first.dimensions = {all.front()};
              rest.dimensions = Dims(all.begin() + 1, all.end());
              return b.op(Reverse, first, {b.op(Reverse, rest, {v.cls("?x")})});
            });

  // rewrites.md REV-1 (TensorRight reverse/rule01): reversing only size-1 dims → x.
  rules.add(
      info("reverse-size-one", L, {Reverse}, {}, "rewrites.md REV-1"), "(reverse@outer ?x)",
      [](const View& v) {
        for (auto d : v.attr("outer").dimensions)
          if (v.type("?x").dims[static_cast<std::size_t>(d)] != 1) return false;
        return true;
      },
      "?x");

  // rewrites.md BC-5 (TensorRight broadcast/rule08): broadcast(broadcast(x)) → broadcast(x).
  rules.add(info("broadcast-of-broadcast", R, {Broadcast}, {Broadcast}, "rewrites.md BC-5"),
            "(broadcast@outer (broadcast@inner ?x))", [](const View& v, Build& b) {
              const Dims D1 = v.attr("inner").dimensions, D2 = v.attr("outer").dimensions;
              NodeAttributes a;
              a.shape = v.attr("outer").shape;
              for (auto d : D1) a.dimensions.push_back(D2[static_cast<std::size_t>(d)]);
              return b.op(Broadcast, a, {v.cls("?x")});
            });

  // rewrites.md BC-1: a broadcast that only adds size-1 dims (dims sorted) is a reshape.
  rules.add(
      info("broadcast-as-reshape", R, {Broadcast}, {Reshape}, "rewrites.md BC-1"), "(broadcast@outer ?x)",
      [](const View& v) {
        const Dims& D = v.attr("outer").dimensions;
        return std::is_sorted(D.begin(), D.end()) && product(v.attr("outer").shape) == product(v.type("?x").dims);
      },
      [](const View& v, Build& b) { return b.reshape(v.cls("?x"), v.attr("outer").shape); });

  // rewrites.md BC-8: broadcast<D>(x) → broadcast<D'>(reshape(x)) with x's size-1 dims dropped
  // (a size-1 operand dim contributes index 0 whatever its result dim's size).
  rules.add(
      info("broadcast-drop-unit-dims", R, {Broadcast}, {Broadcast, Reshape}, "rewrites.md BC-8"),
      "(broadcast@outer ?x)", [](const View& v) { return contains(v.type("?x").dims, 1); },
      [](const View& v, Build& b) {
        const Dims& x = v.type("?x").dims;
        const Dims& D = v.attr("outer").dimensions;
        Dims kept, D2;
        for (std::size_t k = 0; k < x.size(); ++k)
          if (x[k] != 1) kept.push_back(x[k]), D2.push_back(D[k]);
        NodeAttributes a;
        a.shape = v.attr("outer").shape;
        a.dimensions = D2;
        return b.op(Broadcast, a, {b.reshape(v.cls("?x"), kept)});
      });

  // TensorRight broadcast/rule03 (BC-6 for transpose), generalised from scalars to any operand:
  // transpose<p>(broadcast<D>(x)) → broadcast<D'>(x), D'[k] = p⁻¹[D[k]] (result dim j is p[j]).
  rules.add(info("transpose-of-broadcast", R, {Transpose, Broadcast}, {Broadcast},
                 "TensorRight broadcast/rule03, generalised; rewrites.md BC-6"),
            "(transpose@outer (broadcast@inner ?x))", [](const View& v, Build& b) {
              const Dims& p = v.attr("outer").dimensions;
              Dims inverse(p.size());
              for (std::size_t j = 0; j < p.size(); ++j) inverse[static_cast<std::size_t>(p[j])] = static_cast<std::int64_t>(j);
              NodeAttributes a;
              a.shape = v.root_type().dims;
              for (auto d : v.attr("inner").dimensions) a.dimensions.push_back(inverse[static_cast<std::size_t>(d)]);
              return b.op(Broadcast, a, {v.cls("?x")});
            });

  // rewrites.md BC-6 (reshape of a broadcast scalar) and BC-3 (reversed): reshape(broadcast<D>(x))
  // → broadcast<D'>(reshape(x)) when the reshape only inserts or removes size-1 dims (any reshape
  // if x has no dim above 1); x's size-1 dims are dropped, its other dims follow their result
  // dims to their new positions.
  rules.add(
      info("reshape-of-broadcast", R, {Reshape, Broadcast}, {Broadcast, Reshape}, "rewrites.md BC-6, BC-3 (reversed)"),
      "(reshape (broadcast@inner ?x))",
      [](const View& v) {
        const Dims& x = v.type("?x").dims;
        if (std::all_of(x.begin(), x.end(), [](std::int64_t n) { return n == 1; })) return true;
        const auto non_unit = [](const Dims& d) {
          Dims r;
          for (auto n : d)
            if (n != 1) r.push_back(n);
          return r;
        };
        return non_unit(v.type("?x").dims).size() > 0 && non_unit(v.attr("inner").shape) == non_unit(v.root_type().dims);
      },
      [](const View& v, Build& b) -> std::optional<Id> {
        const Dims& x = v.type("?x").dims;
        const Dims& old_shape = v.attr("inner").shape;
        const Dims& new_shape = v.root_type().dims;
        // The i-th dim above 1 of the broadcast's result is the i-th dim above 1 of the reshape's.
        std::vector<std::int64_t> new_position(old_shape.size(), -1);
        for (std::size_t o = 0, n = 0; o < old_shape.size(); ++o) {
          if (old_shape[o] == 1) continue;
          while (n < new_shape.size() && new_shape[n] == 1) ++n;
          if (n >= new_shape.size()) return std::nullopt;
          new_position[o] = static_cast<std::int64_t>(n++);
        }
        const Dims& D = v.attr("inner").dimensions;
        Dims kept, D2;
        for (std::size_t k = 0; k < x.size(); ++k) {
          if (x[k] == 1) continue;
          const auto to = new_position[static_cast<std::size_t>(D[k])];
          if (to < 0) return std::nullopt;
          kept.push_back(x[k]);
          D2.push_back(to);
        }
        NodeAttributes a;
        a.shape = new_shape;
        a.dimensions = D2;
        return b.op(Broadcast, a, {b.reshape(v.cls("?x"), kept)});
      });
}

}  // namespace act::select::axiom_detail
