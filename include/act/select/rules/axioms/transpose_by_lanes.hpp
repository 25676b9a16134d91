// Transposes on accelerators that cannot move a value across vector lanes (AVX-512's f32 in the
// AMX description: no instruction permutes lanes or transposes f32, but one broadcasts a single
// element to every lane and one blends by a lane-wise compare). Row i of transpose(x:[m,n]) is
// assembled from one broadcast and one blend per element, lane by lane into a row r:
//   r = 0;  for j in 0..m: r = select(compare(M_j, r, LT), broadcast(x[j,i]), r)
// with M_j the [1,m] constant that is -inf in lane j and +inf elsewhere. Lane j of r still holds
// the filler 0 when element j arrives, so -inf < 0 takes the broadcast there; in every other lane
// +inf < r is false whatever r holds (NaN and infinities included), so r keeps its lane. That
// holds bit for bit. It is one blend per element (AVX-512's vblendmps_lt compares its second
// operand with the value it keeps); a maximum over one select per lane, the first construction,
// took a third more instructions (AMX compile-time seed 2 kernel 87: 2,025 against 1,545).
// The facts are read from the semantics (outlined), never from the ISA's name: the axiom exists
// only where some instruction selects and one broadcasts in a float type that no instruction
// transposes; without an ISA (the soundness suite) every float type qualifies.
// A program built this way is long (about 2 instructions per element), so the axiom acts only
// on transposes of at most kMaxTransposedElements elements whose rows are as wide as a select,
// only on the group explorer's last retry (SelectionContext::last_retry, which a kernel with a
// float transpose gets), and not on transposes other axioms build from blended ones
// (transposed_otherwise).
// On the same attempts, transpose-through-value-wise-chain moves a kernel value's transpose
// through its whole value-wise computation in one step, down to the inputs the blends read.
#pragma once

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/hlo/semantics_outline.hpp"
#include "act/isa/derived_facts.hpp"
#include "act/select/rules/axioms/elementwise.hpp"
#include "act/select/rules/axioms/slicing.hpp"
#include "act/select/rules/axioms/support.hpp"

namespace act::select::axiom_detail {

inline constexpr std::int64_t kMaxTransposedElements = 256;

// A float type the axiom may act on for this ISA, and the row widths (lanes) its selects take:
// a blended row of m lanes is computed only where an instruction selects over m lanes.
struct LaneBlendType {
  DType dtype;
  std::vector<std::int64_t> lanes;  // empty: any width (no ISA)
};

inline std::vector<LaneBlendType> read_types_transposed_by_lanes(const isa::IsaView& isa) {
  if (isa.instructions.empty()) return {{DType::f32, {}}, {DType::bf16, {}}, {DType::f16, {}}, {DType::f64, {}}};
  std::vector<DType> broadcasts, transposes;
  std::vector<std::pair<DType, std::int64_t>> selects;  // dtype, lanes of a literal [1, m] select
  for (const auto& instruction : isa.instructions) {
    hlo::SemanticsOutline sem;
    if (!hlo::outline_semantics(instruction.semantics, sem).ok()) continue;
    for (std::size_t i = 0; i < sem.count; ++i) {
      const hlo::OutlineStatement& st = sem.statements[i];
      if (st.opcode == hlo::Opcode::Select && st.rank == 2 && st.dims[0].expression.empty() && st.dims[0].size == 1 &&
          st.dims[1].expression.empty())
        selects.push_back({st.dtype, st.dims[1].size});
      if (st.opcode == hlo::Opcode::Broadcast) broadcasts.push_back(st.dtype);
      if (st.opcode == hlo::Opcode::Transpose) transposes.push_back(st.dtype);
    }
  }
  const auto has = [](const std::vector<DType>& v, DType t) { return std::find(v.begin(), v.end(), t) != v.end(); };
  std::vector<LaneBlendType> out;
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    if (!has(broadcasts, t) || has(transposes, t)) continue;
    LaneBlendType type{t, {}};
    for (const auto& [dtype, lanes] : selects)
      if (dtype == t && std::find(type.lanes.begin(), type.lanes.end(), lanes) == type.lanes.end()) type.lanes.push_back(lanes);
    if (!type.lanes.empty()) out.push_back(std::move(type));
  }
  return out;
}

// read_types_transposed_by_lanes, once per process and description (isa/derived_facts.hpp).
inline const std::vector<LaneBlendType>& types_transposed_by_lanes(const isa::IsaView& isa) {
  static isa::PerIsaCache<std::vector<LaneBlendType>> cache;
  return *cache.get(isa, read_types_transposed_by_lanes);
}

// Whether the axiom acts on a transpose of x: rank 2, at most kMaxTransposedElements, a type it
// blends, and rows (x's first dimension) as wide as some select.
inline bool blends_transpose_of(const std::vector<LaneBlendType>& types, const Shape& x) {
  if (x.rank() != 2 || x.dims[0] <= 1 || x.dims[1] <= 1 || x.dims[0] * x.dims[1] > kMaxTransposedElements) return false;
  for (const LaneBlendType& t : types)
    if (t.dtype == x.dtype && (t.lanes.empty() || std::find(t.lanes.begin(), t.lanes.end(), x.dims[0]) != t.lanes.end())) return true;
  return false;
}

// Whether canonical class c is one of the kernel's own values (SelectionContext::kernel_values).
inline bool is_kernel_value(const TensorGraph& g, const SelectionContext& ctx, Id c) {
  return std::ranges::any_of(ctx.kernel_values, [&](Id k) { return g.find(k) == c; });
}

// Whether class x is one of the kernel's own values or a slice of one (SelectionContext::
// kernel_values). Only those are blended: every other class whose transpose the axioms ask for
// is built from them (a value-wise operation, a concatenate of pieces, a reshape), so its
// transpose is reached by moving the transpose through it. Blending such classes too only
// multiplied e-nodes: the concatenates mixing pieces of x and of a clamp's bound that the split
// and idempotence axioms offer were each blended (AMX soak kernel 5: 32 transposes blended,
// 157k e-nodes, for a kernel with one transpose).
inline bool of_kernel_value_or_piece(const TensorGraph& g, const SelectionContext& ctx, Id x) {
  if (ctx.kernel_values.empty()) return true;
  x = g.find(x);
  if (is_kernel_value(g, ctx, x)) return true;
  for (Id n : g.class_nodes(x)) {
    const auto& node = g.node(n);
    if (node.op.kind == NodeKind::Operator && node.op.opcode == hlo::Opcode::Slice && is_kernel_value(g, ctx, g.find(node.children[0])))
      return true;
  }
  return false;
}

// Whether the axiom blends a transpose of class c: its type qualifies and it is a kernel value
// or a piece of one.
inline bool blends_transpose_of_class(const TensorGraph& g, const SelectionContext& ctx,
                                      const std::vector<LaneBlendType>& types, Id c) {
  return blends_transpose_of(types, g.data(c).type) && of_kernel_value_or_piece(g, ctx, c);
}

// Whether transpose(x) is built from other transposes the axiom blends, so blending it as well
// would only add e-nodes: x's class holds a transpose (transpose-of-transpose), a broadcast
// (transpose-of-broadcast), a slice of a value whose transpose is blended (transpose-of-slice),
// or a value-wise operation over such values other than x itself (transpose-of-<op>), or the
// transpose is x again. In the AMX sound soak, blending every such transpose spent the last
// retry's node limit on transposes of intermediate values and of their pieces (10 kernels).
// "Blended" is judged as the axiom judges it, kernel values and their pieces only: x =
// concat(p0 + p0, p1 + p1) also holds concat(p0, p1) + concat(p0, p1), whose operand is no
// kernel value, and skipping x for it left the transpose with no blend at all. A value whose
// transpose, pushed inward, meets pieces nothing computes is always blended from its own
// elements where module 1 offers them (SelectionContext::blended_from_own_elements).
inline bool transposed_otherwise(const View& v, const std::vector<LaneBlendType>& types) {
  using enum hlo::Opcode;
  const TensorGraph& g = v.g;
  const Id x = v.cls("?x");
  if (g.find(v.root) == x) return true;
  // The transposes such a value would otherwise be built from need elements of computed
  // values that no instruction broadcasts (transpose(maximum(concat(d, d), p0)) with d = s / s:
  // d's elements). Blending every value offered as bytes instead found longer programs first
  // (AMX sound-soak kernel 127: 1,999 instructions instead of 1,310).
  if (std::ranges::any_of(v.ctx.blended_from_own_elements, [&](Id e) { return g.find(e) == x; })) return false;
  const auto blended = [&](Id c) { return blends_transpose_of_class(g, v.ctx, types, c); };
  const auto value_wise = [](hlo::Opcode code) {
    return code != Copy && (std::ranges::find(kThroughBinary, code) != std::end(kThroughBinary) ||
                            std::ranges::find(kThroughUnary, code) != std::end(kThroughUnary));
  };
  for (Id n : g.class_nodes(x)) {
    const auto& node = g.node(n);
    if (node.op.kind != NodeKind::Operator) continue;
    const hlo::Opcode code = node.op.opcode;
    if (code == Transpose || code == Broadcast) return true;
    if (code == Slice && blended(g.find(node.children[0]))) return true;
    if (value_wise(code) && std::ranges::all_of(node.children, [&](Id c) { return g.find(c) != x && blended(g.find(c)); }))
      return true;
  }
  return false;
}

// The value-wise node of class c that transpose-through-value-wise-chain follows: the first
// operator of kThroughBinary, clamp, or a same-width operator of kThroughUnary (not a copy)
// that does not read c itself. A bitcast-convert to another width changes the rank, so a kernel
// input's typed leaf (bitcast-convert of its bytes) ends a chain.
inline std::optional<Id> value_wise_node(const TensorGraph& g, const SelectionContext& ctx, Id c) {
  using enum hlo::Opcode;
  c = g.find(c);
  for (Id n : g.class_nodes(c)) {
    const auto node = g.node(n);
    if (node.op.kind != NodeKind::Operator) continue;
    const hlo::Opcode code = node.op.opcode;
    if (std::ranges::any_of(node.children, [&](Id k) { return g.find(k) == c; })) continue;
    if (code == Clamp) return n;
    if (std::ranges::find(kThroughBinary, code) != std::end(kThroughBinary)) return n;
    if (code != Copy && std::ranges::find(kThroughUnary, code) != std::end(kThroughUnary)) {
      if (code == BitcastConvert &&
          bit_width(ctx.attributes_of(node.op).dtype) != bit_width(g.data(node.children[0]).type.dtype))
        continue;
      return n;
    }
  }
  return std::nullopt;
}

// transpose(c) built through value_wise_node down the chain (memoised per class in `done`): the
// operator over its operands' transposes (a scalar operand, a clamp's bound, kept as it is), or
// transpose(c) itself where the chain ends.
inline Id transposed_chain(const TensorGraph& g, const SelectionContext& ctx, Build& b, Id c, std::map<Id, Id>& done,
                           int depth) {
  constexpr int kMaxDepth = 64;  // a bound on the recursion, far beyond a tiled kernel's chains
  c = g.find(c);
  if (const auto it = done.find(c); it != done.end()) return it->second;
  const std::optional<Id> n = depth < kMaxDepth ? value_wise_node(g, ctx, c) : std::nullopt;
  Id out;
  if (!n) {
    out = b.transpose(c, {1, 0});
  } else {
    const auto node = g.node(*n);
    const TensorOp op = node.op;
    // A copy: the recursion adds nodes, which may move the e-graph's child array under the view.
    const std::vector<Id> children(node.children.begin(), node.children.end());
    std::vector<Id> transposed;
    for (Id k : children)
      transposed.push_back(g.data(k).type.rank() == 0 ? g.find(k) : transposed_chain(g, ctx, b, k, done, depth + 1));
    out = b.add(op, transposed);
  }
  done.emplace(c, out);
  return out;
}

// Where element (r, c) of class x is read from: down through the slices and concatenates of
// x's classes (the first such node of each), to the class and position that hold it. The blends
// read that element directly. Left to slice-of-concat-element, which is under the backoff, the
// reads of a concatenate's elements reached the input rows the instructions load only after the
// rule's bans (AMX compile-time seed 3 kernel 52: concat(s, s) with s rows 0..7 of p0, its
// element reads joined p0's in the last of its output's 18 rewrite iterations). A value blended
// from its own elements keeps its reads: its bytes are what module 1 offers.
struct ElementSource {
  Id cls;
  std::int64_t row, col;
};
inline ElementSource element_source(const TensorGraph& g, const SelectionContext& ctx, Id x, std::int64_t row,
                                    std::int64_t col) {
  constexpr int kMaxSteps = 16;  // far beyond a tiled kernel's slice and concatenate chains
  ElementSource at{g.find(x), row, col};
  for (int step = 0; step < kMaxSteps; ++step) {
    if (std::ranges::any_of(ctx.blended_from_own_elements, [&](Id e) { return g.find(e) == at.cls; })) break;
    bool moved = false;
    for (Id n : g.class_nodes(at.cls)) {
      const auto node = g.node(n);
      if (node.op.kind != NodeKind::Operator) continue;
      const NodeAttributes& a = ctx.attributes_of(node.op);
      if (node.op.opcode == hlo::Opcode::Slice) {
        at = {g.find(node.children[0]), a.slice[0].start + at.row * a.slice[0].stride,
              a.slice[1].start + at.col * a.slice[1].stride};
        moved = true;
      } else if (node.op.opcode == hlo::Opcode::Concatenate) {
        const std::vector<hlo::SliceRange> element{{at.row, at.row + 1, 1}, {at.col, at.col + 1, 1}};
        if (const auto hit = slice_inside_concat_operand(g, ctx, n, element)) {
          const bool rows = a.dimensions[0] == 0;
          at = {hit->operand, rows ? at.row - hit->offset : at.row, rows ? at.col : at.col - hit->offset};
          moved = true;
        }
      }
      if (moved) break;
    }
    if (!moved) break;
  }
  return at;
}

// Read at match time: the blend axioms act only on the group explorer's last retry (every
// attempt's rule list holds the same rules), or without an ISA (the soundness suite). In every
// attempt, K4's 48-row product was cut into transposed pieces that each grew by hundreds of
// e-nodes, and the node limit came before its program.
inline bool on_blend_attempt(const SelectionContext& ctx) { return ctx.last_retry || ctx.isa.instructions.empty(); }

inline void add_transpose_by_lanes_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  using enum hlo::Opcode;
  const std::vector<LaneBlendType> types = types_transposed_by_lanes(ctx.isa);
  if (types.empty()) return;
  AxiomRules rules(ctx, out);
  rules.add(
      AxiomInfo{"transpose-by-lane-blends", AxiomFamily::Layout, "transpose-by-lane-blends", {Transpose},
                {Concatenate, Select, Compare, Broadcast, Reshape, Slice, Constant}, false,
                "act: row i of xᵀ from one broadcast per element, blended by lane"},
      "(transpose@t ?x)",
      [types](const View& v) {
        if (!on_blend_attempt(v.ctx)) return false;
        return blends_transpose_of_class(v.g, v.ctx, types, v.cls("?x")) && v.attr("t").dimensions == Dims{1, 0} &&
               !transposed_otherwise(v, types);
      },
      [](const View& v, Build& b) {
        const Shape x = v.type("?x");
        const std::int64_t m = x.dims[0], n = x.dims[1];
        const Id zero = b.broadcast(b.scalar(x.dtype, 0.0), {1, m});
        NodeAttributes less;
        less.direction = hlo::ComparisonDirection::LT;
        std::vector<Id> marker;  // M_j: -inf in lane j, +inf elsewhere
        for (std::int64_t j = 0; j < m; ++j)
          marker.push_back(b.patterned(x.dtype, {1, m}, fmt::format("lane-{}-below", j), [j](std::int64_t, std::int64_t lane) {
            return lane == j ? -INFINITY : INFINITY;
          }));
        std::vector<Id> rows;
        for (std::int64_t i = 0; i < n; ++i) {
          Id row = zero;
          for (std::int64_t j = 0; j < m; ++j) {
            const ElementSource from = element_source(b.g, v.ctx, v.cls("?x"), j, i);
            const Id element = b.reshape(b.slice(from.cls, {{from.row, from.row + 1, 1}, {from.col, from.col + 1, 1}}), {});
            const Id into_lane_j = b.op(Compare, less, {marker[static_cast<std::size_t>(j)], row});
            row = b.op(Select, NodeAttributes{}, {into_lane_j, b.broadcast(element, {1, m}), row});
          }
          rows.push_back(row);
        }
        return b.concat(rows, 0);
      });

  // The blends are needed below a whole value-wise computation: no element of a computed value
  // is broadcast on the attempts where they act (broadcast-of-<op> is off there), so only a
  // kernel input's transpose is blended, and transpose(f(g(h(p0)))) reaches it through f, g and
  // h. transpose-of-<op> moves a transpose one operator per iteration: AMX compile-time kernel
  // 72 (eleven operators from its transpose down to p0) found its program at iteration 14 of
  // rewriting, at 56k e-nodes. This rule builds the chain at once, transpose-of-<op> (or of a
  // clamp) composed along one value-wise node per class, down to the classes that hold none.
  // The step-by-step rules build the same nodes, so the two meet.
  rules.add(
      AxiomInfo{"transpose-through-value-wise-chain", AxiomFamily::Layout, "transpose-through-value-wise-chain", {Transpose},
                {Transpose, Add, Subtract, Multiply, Divide, Maximum, Minimum, Clamp}, false,
                "rewrites.md SH-2, RM-1 (transpose-of-<op>, composed)"},
      "(transpose@t ?x)",
      [types](const View& v) {
        if (!on_blend_attempt(v.ctx)) return false;
        if (v.attr("t").dimensions != Dims{1, 0} || !blends_transpose_of(types, v.type("?x"))) return false;
        // A kernel value only (any value without a kernel: the soundness suite): a transpose of
        // a piece or of an intermediate form is reached through the kernel value's chain.
        const Id x = v.cls("?x");
        if (!v.ctx.kernel_values.empty() && !is_kernel_value(v.g, v.ctx, x)) return false;
        return value_wise_node(v.g, v.ctx, x).has_value();
      },
      [](const View& v, Build& b) {
        std::map<Id, Id> done;
        return transposed_chain(v.g, v.ctx, b, v.cls("?x"), done, 0);
      });
}

}  // namespace act::select::axiom_detail
