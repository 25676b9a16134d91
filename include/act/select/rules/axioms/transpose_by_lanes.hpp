// Transposes on accelerators that cannot move a value across vector lanes (AVX-512's f32 in the
// AMX description: no instruction permutes lanes or transposes f32, but one broadcasts a single
// element to every lane and one blends by a lane-wise compare). Row i of transpose(x:[m,n]) is
// assembled from one broadcast per element:
//   row_i = maximum_j select(compare(0, K_j, LT), broadcast(x[j,i]), K_j)
// with K_j the [1,m] constant that is +inf in lane j and -inf elsewhere. The select keeps x[j,i]
// in lane j and puts -inf in every other lane; the maximum over j keeps in each lane its one
// value that is not the -inf filler. That holds bit for bit, NaN, infinities and signed zeros
// included (the maximum of -inf and v is v, of -inf and NaN is NaN).
// The facts are read from the semantics (outlined), never from the ISA's name: the axiom exists
// only where some instruction selects, takes the maximum and broadcasts in a float type that no
// instruction transposes; without an ISA (the soundness suite) every float type qualifies.
// A program built this way is long (about 3 instructions per element), so the axiom acts only
// on transposes of at most kMaxTransposedElements elements, and only on the group explorer's
// last retry (SelectionContext::last_retry, which a kernel with a float transpose gets).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/hlo/semantics_outline.hpp"
#include "act/select/rules/axioms/support.hpp"

namespace act::select::axiom_detail {

inline constexpr std::int64_t kMaxTransposedElements = 256;

// The float types the axiom may act on for this ISA.
inline std::vector<DType> types_transposed_by_lanes(const isa::IsaView& isa) {
  if (isa.instructions.empty()) return {DType::f32, DType::bf16, DType::f16, DType::f64};
  std::vector<DType> selects, maximums, broadcasts, transposes;
  for (const auto& instruction : isa.instructions) {
    hlo::SemanticsOutline sem;
    if (!hlo::outline_semantics(instruction.semantics, sem).ok()) continue;
    for (std::size_t i = 0; i < sem.count; ++i) {
      const hlo::OutlineStatement& st = sem.statements[i];
      if (st.opcode == hlo::Opcode::Select) selects.push_back(st.dtype);
      if (st.opcode == hlo::Opcode::Maximum) maximums.push_back(st.dtype);
      if (st.opcode == hlo::Opcode::Broadcast) broadcasts.push_back(st.dtype);
      if (st.opcode == hlo::Opcode::Transpose) transposes.push_back(st.dtype);
    }
  }
  const auto has = [](const std::vector<DType>& v, DType t) { return std::find(v.begin(), v.end(), t) != v.end(); };
  std::vector<DType> out;
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::f64})
    if (has(selects, t) && has(maximums, t) && has(broadcasts, t) && !has(transposes, t)) out.push_back(t);
  return out;
}

inline void add_transpose_by_lanes_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  using enum hlo::Opcode;
  const std::vector<DType> types = types_transposed_by_lanes(ctx.isa);
  if (types.empty()) return;
  AxiomRules rules(ctx, out);
  rules.add(
      AxiomInfo{"transpose-by-lane-blends", AxiomFamily::Layout, "transpose-by-lane-blends", {Transpose},
                {Concatenate, Maximum, Select, Compare, Broadcast, Reshape, Slice, Constant}, false,
                "act: row i of xᵀ from one broadcast per element, blended by lane"},
      "(transpose@t ?x)",
      [types](const View& v) {
        // Read at match time: only on the group explorer's last retry (every attempt's rule list
        // holds the same rules). In every attempt, K4's 48-row product was cut into transposed
        // pieces that each grew by hundreds of e-nodes, and the node limit came before its program.
        if (!v.ctx.last_retry && !v.ctx.isa.instructions.empty()) return false;
        const Shape& x = v.type("?x");
        return x.rank() == 2 && v.attr("t").dimensions == Dims{1, 0} && x.dims[0] > 1 && x.dims[1] > 1 &&
               x.dims[0] * x.dims[1] <= kMaxTransposedElements && std::find(types.begin(), types.end(), x.dtype) != types.end();
      },
      [](const View& v, Build& b) {
        const Shape x = v.type("?x");
        const std::int64_t m = x.dims[0], n = x.dims[1];
        const Id zero = b.broadcast(b.scalar(x.dtype, 0.0), {1, m});
        NodeAttributes less;
        less.direction = hlo::ComparisonDirection::LT;
        std::vector<Id> keep, filler;  // per lane j: compare(0, K_j, LT) and K_j
        for (std::int64_t j = 0; j < m; ++j) {
          filler.push_back(b.patterned(x.dtype, {1, m}, fmt::format("lane-{}-inf", j), [j](std::int64_t, std::int64_t lane) {
            return lane == j ? INFINITY : -INFINITY;
          }));
          keep.push_back(b.op(Compare, less, {zero, filler.back()}));
        }
        std::vector<Id> rows;
        for (std::int64_t i = 0; i < n; ++i) {
          Id row = 0;
          for (std::int64_t j = 0; j < m; ++j) {
            const Id element = b.reshape(b.slice(v.cls("?x"), {{j, j + 1, 1}, {i, i + 1, 1}}), {});
            const Id lane = b.op(Select, NodeAttributes{}, {keep[static_cast<std::size_t>(j)], b.broadcast(element, {1, m}),
                                                            filler[static_cast<std::size_t>(j)]});
            row = j == 0 ? lane : b.op(Maximum, NodeAttributes{}, {row, lane});
          }
          rows.push_back(row);
        }
        return b.concat(rows, 0);
      });
}

}  // namespace act::select::axiom_detail
