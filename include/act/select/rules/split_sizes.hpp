// Where the split axioms cut a dimension: at the sizes the ISA's instructions compute at, read
// off the description, never off its name.
//
// For every instruction and every node of its semantics, each dimension is a literal or an
// expression over alpha; an alpha ranges over the values (1 .. kMaxSize) that satisfy the
// constraints mentioning it alone. That gives, per element type:
//   dot roles     the lhs free, rhs free and contracting extents of the semantics' dots; a
//                 multiply counts as a dot with contracting extent 1 (dot-unit-contracting-
//                 as-multiply turns one into the other), its extents as free extents;
//   rows          dim 0 of each elementwise operator's result, per opcode; a value of higher
//                 rank than an instruction's result is also computed a row at a time by it (an
//                 f32[16] vector unit computes an f32[16,32] product in rows of 1), so for such a
//                 value the extents include 1;
//   widths        the smallest last dimension of each elementwise operator's result, per
//                 opcode: a value narrower than that (a column f32[8,1] where AVX-512 computes
//                 rows of 16) is not split at all, since no piece of it is computed either.
// A dimension of extent n that an instruction computes whole is not split. Otherwise it is cut
// in halves when halving reaches an instruction's extent (64 = 16 x 2^2: halves stay balanced
// and the e-graph linear in n), else at the largest extent below n (48 = 16 + 32, then
// 32 = 16 + 16). A contracting extent that a larger-than-1 extent divides is instead peeled by
// that extent (64 = 16 + 48 = 16 + 16 + 32 ...): its sum is then a chain of accumulations.
// A dot extent some instruction computes whole is split all the same when another instruction
// computes only a smaller extent (above 1) dividing it (gemmini_plus: loop_ws and matmul32_ws). No extent at all: nothing to cut towards, no split. A context without an ISA
// (the axioms' soundness tests) cuts every even extent in halves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/derived_facts.hpp"
#include "act/isa/semantics.hpp"
#include "act/isa/description.hpp"
#include "act/sym/expr.hpp"

namespace act::select {

enum class SplitRole : std::uint8_t { DotLhsFree, DotRhsFree, DotContracting, Rows };

class SplitSizes {
 public:
  static constexpr std::int64_t kMaxSize = 4096;  // alpha values tried per attribute

  SplitSizes() = default;
  explicit SplitSizes(const isa::IsaView& isa) : unconstrained_(isa.instructions.size() == 0) {
    for (const isa::Instruction& inst : isa.instructions) add_instruction(inst);
    merge_rows();
  }

  // Where to cut an extent n of `role` (for `opcode` when the role is Rows) of element type t:
  // the size of the first piece, or nothing when n should stay whole.
  // `rank` is the rank of the value whose dim 0 is cut (Rows only).
  std::optional<std::int64_t> split_point(SplitRole role, DType t, std::int64_t n, hlo::Opcode opcode = hlo::Opcode::Copy,
                                          std::size_t rank = 1) const {
    if (n < 2) return std::nullopt;
    if (unconstrained_) return n % 2 == 0 ? std::optional(n / 2) : std::nullopt;
    const Extents s = extents_for(role, t, opcode, rank);
    if (s.empty()) return std::nullopt;
    if (s.contains(n)) {
      // Computed whole by some instruction: split only towards one that computes less.
      const auto u = smaller_needed(role, t, n);
      if (!u) return std::nullopt;
      if (role == SplitRole::DotContracting || (n / 2) % *u != 0) return *u;
      return n / 2;
    }
    // A contracting extent that is a multiple of an instruction's (above 1) is peeled one
    // instruction's extent at a time: the sum becomes the chain d_0 + (d_1 + (... + d_k)) that
    // accumulating instructions (matmul with a bias, tdpbusd) compute link by link. Halves give
    // a balanced tree that only reassociation turns into a chain: Gemmini's 16x16x64 GEMM grew
    // past 60k e-nodes without a program that way.
    if (role == SplitRole::DotContracting)
      if (const auto u = s.largest_divisor_below(n); u && *u > 1) return *u;
    for (std::int64_t m = n; m % 2 == 0; m /= 2)
      if (s.contains(m / 2)) return n / 2;
    // Rows of elementwise operators are only halved: peeling single rows off odd extents
    // (vmulps computes one row) multiplied the e-graph without enabling an instruction.
    if (role == SplitRole::Rows) return std::nullopt;
    return s.largest_below(n);
  }

  // Whether every instruction computing `opcode` on type t gives results wider (last dimension)
  // than `width`: then no piece of a value of that width (a column of a transposed value) is
  // computed by one, and splitting its rows only adds pieces nothing computes. False without
  // an ISA, or when no instruction computes the operator at all.
  bool narrower_than_computed(hlo::Opcode opcode, DType t, std::int64_t width) const {
    if (unconstrained_) return false;
    const auto it = narrowest_.find(Key{SplitRole::Rows, opcode, t});
    return it != narrowest_.end() && width < it->second;
  }

  // narrower_than_computed for a clamp, which an ISA without a clamp instruction computes as
  // max(min(x, hi), lo): then it is narrower than computed when the maximum or the minimum is
  // (AMX sound soak seed 9001, kernel 9: a transposed sum with clamp(s) of f32[8,16] rows under
  // it, judged computable and so never blended from its own elements, had no program).
  bool clamp_narrower_than_computed(DType t, std::int64_t width) const {
    if (unconstrained_) return false;
    if (narrowest_.contains(Key{SplitRole::Rows, hlo::Opcode::Clamp, t})) return narrower_than_computed(hlo::Opcode::Clamp, t, width);
    return narrower_than_computed(hlo::Opcode::Maximum, t, width) || narrower_than_computed(hlo::Opcode::Minimum, t, width);
  }

  // Whether the sizes come from an ISA (false: the axioms' soundness tests, every even extent halved).
  bool from_isa() const { return !unconstrained_; }

  // Whether n is an extent of `role` some instruction computes, or halves into one within
  // `halvings` halvings (64 -> 32 -> 16 on Gemmini; not 48, whose halves are 24).
  bool halves_to_extent(SplitRole role, DType t, std::int64_t n, int halvings = 64) const {
    if (unconstrained_) return false;
    const Extents s = extents_for(role, t, hlo::Opcode::Copy, 1);
    for (std::int64_t m = n; m >= 1 && halvings >= 0; m /= 2, --halvings) {
      if (s.contains(m)) return true;
      if (m % 2 != 0) break;
    }
    return false;
  }

  // Whether some instruction computes an extent n of `role` whole (so it is never split).
  bool computes_whole(SplitRole role, DType t, std::int64_t n) const {
    if (unconstrained_) return false;
    return extents_for(role, t, hlo::Opcode::Copy, 1).contains(n);
  }

  // Whether an introduced square constant of extent n (the identity of x -> dot(x, I)) can be
  // an operand of some instruction's dot of element type t as it is: n at most the largest
  // contracting extent. A larger one only ever reaches an instruction after the dot is split, and
  // splitting would build n x n literals for what the same axiom offers on the value's slices.
  // No ISA, or an ISA whose dots record no extent: any n.
  bool contracting_fits(DType t, std::int64_t n) const {
    if (unconstrained_) return true;
    const Extents s = extents_for(SplitRole::DotContracting, t, hlo::Opcode::Copy, 1);
    return s.empty() || n <= s.largest();
  }

  // The extents recorded for a role (tests and `act rules`).
  std::vector<std::int64_t> sizes(SplitRole role, DType t, hlo::Opcode opcode = hlo::Opcode::Copy, std::size_t rank = 1) const {
    const Extents s = extents_for(role, t, opcode, rank);
    std::vector<std::int64_t> out;
    if (s.plus_one) out.push_back(1);
    if (s.values)
      for (std::int64_t v : *s.values)
        if (!(s.plus_one && v == 1)) out.push_back(v);
    return out;
  }

 private:
  struct Key {
    SplitRole role;
    hlo::Opcode opcode;
    DType dtype;
    std::size_t rank = 0;  // of the instruction's result (Rows only)
    friend auto operator<=>(const Key&, const Key&) = default;
  };

  // The extents of one role: a recorded set, and for rows also 1 when the value has a higher
  // rank than some instruction's result. A view into sizes_ / rows_: split_point runs for every
  // split axiom's match, and copying sets of up to kMaxSize values there dominated rewriting.
  // The values are sorted and unique (sorted vectors: building std::sets of up to kMaxSize
  // values per attribute was most of the construction time, about 50 ms for gemmini).
  struct Extents {
    const std::vector<std::int64_t>* values = nullptr;
    bool plus_one = false;
    bool empty() const { return !plus_one && (!values || values->empty()); }
    bool contains(std::int64_t n) const { return (plus_one && n == 1) || (values && std::binary_search(values->begin(), values->end(), n)); }
    std::int64_t largest() const {
      const std::int64_t recorded = values && !values->empty() ? values->back() : 0;
      return std::max<std::int64_t>(recorded, plus_one ? 1 : 0);
    }
    // The largest extent below n, if any.
    std::optional<std::int64_t> largest_below(std::int64_t n) const {
      std::optional<std::int64_t> best;
      if (plus_one && 1 < n) best = 1;
      if (values)
        if (const auto it = std::lower_bound(values->begin(), values->end(), n); it != values->begin())
          best = std::max(best.value_or(1), *std::prev(it));
      return best;
    }
    std::optional<std::int64_t> largest_divisor_below(std::int64_t n) const {
      if (values)
        for (auto it = std::lower_bound(values->begin(), values->end(), n); it != values->begin();) {
          --it;
          if (n % *it == 0) return *it;
        }
      if (plus_one && 1 < n) return 1;
      return std::nullopt;
    }
  };

  // A dot extent n that some instruction computes whole is still split when another
  // instruction computes only a smaller extent u that divides n (1 < u < n): gemmini_plus's
  // loop_ws computes a 64x64x64 GEMM whole, its matmul32_ws in 16s, and both programs are
  // candidates. u = 1 (vector units, a multiply as a dot) never asks for a split.
  // Returns the largest such u; the split peels it (contracting) or halves towards it.
  std::optional<std::int64_t> smaller_needed(SplitRole role, DType t, std::int64_t n) const {
    if (role == SplitRole::Rows) return std::nullopt;
    const auto it = per_instruction_.find(Key{role, hlo::Opcode::Copy, t});
    if (it == per_instruction_.end()) return std::nullopt;
    std::optional<std::int64_t> best;
    for (const std::vector<std::int64_t>& own : it->second) {
      if (std::binary_search(own.begin(), own.end(), n)) continue;
      for (std::int64_t u : own)
        if (u > 1 && u < n && n % u == 0 && (!best || u > *best)) best = u;
    }
    return best;
  }

  // Rows of one (opcode, type): every rank's extents merged, and the lowest rank recorded.
  struct RowExtents {
    std::vector<std::int64_t> values;  // sorted, unique
    std::size_t lowest_rank = std::numeric_limits<std::size_t>::max();
  };

  Extents extents_for(SplitRole role, DType t, hlo::Opcode opcode, std::size_t rank) const {
    if (role != SplitRole::Rows) {
      const auto it = sizes_.find(Key{role, hlo::Opcode::Copy, t});
      return it == sizes_.end() ? Extents{} : Extents{&it->second, false};
    }
    const auto it = rows_.find(Key{role, opcode, t});
    if (it == rows_.end()) return Extents{};
    return Extents{&it->second.values, it->second.lowest_rank < rank};
  }

  // Fills rows_ from sizes_ once every instruction is recorded.
  void merge_rows() {
    for (const auto& [k, values] : sizes_) {
      if (k.role != SplitRole::Rows || values.empty()) continue;
      RowExtents& r = rows_[Key{k.role, k.opcode, k.dtype}];
      merge_into(r.values, values);
      r.lowest_rank = std::min(r.lowest_rank, k.rank);
    }
  }

  // into := into U values, both sorted and unique.
  static void merge_into(std::vector<std::int64_t>& into, const std::vector<std::int64_t>& values) {
    if (values.empty() || into == values) return;
    std::vector<std::int64_t> merged;
    merged.reserve(into.size() + values.size());
    std::set_union(into.begin(), into.end(), values.begin(), values.end(), std::back_inserter(merged));
    into = std::move(merged);
  }

  static void sort_unique(std::vector<std::int64_t>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  // The extents of one instruction's dimension expressions, by text: its semantics repeat the
  // same few expressions on every node, and each reading evaluates up to kMaxSize values.
  using ExtentsByText = std::map<std::string, std::vector<std::int64_t>, std::less<>>;

  // The values dim `d` of `i` takes as alpha ranges over its feasible values (sorted, unique).
  static const std::vector<std::int64_t>& extents(const isa::Instruction& inst,
                                                  const std::vector<std::vector<std::int64_t>>& feasible,
                                                  const hlo::Instruction& i, std::size_t d, ExtentsByText& known) {
    const std::string_view text = d < i.dimension_expressions.size() ? std::string_view(i.dimension_expressions[d]) : std::string_view();
    if (text.empty()) {
      std::vector<std::int64_t>& literal = known[fmt::format("#{}", i.shape.dims[d])];  // '#' is no expression's first character
      literal = {i.shape.dims[d]};
      return literal;
    }
    if (const auto it = known.find(text); it != known.end()) return it->second;
    return known[std::string(text)] = read_extents(inst, feasible, text);
  }

  static std::vector<std::int64_t> read_extents(const isa::Instruction& inst, const std::vector<std::vector<std::int64_t>>& feasible,
                                                std::string_view text) {
    const sym::ParseResult parsed = sym::try_parse(text);
    if (!parsed.ok()) return {};
    // A dim that is one alpha takes exactly that alpha's feasible values (ascending, in range).
    if (parsed.expr.count == 1 && parsed.expr.top().op == sym::Op::Var)
      if (const auto a = std::find(inst.alpha.begin(), inst.alpha.end(), parsed.expr.top().name); a != inst.alpha.end())
        return feasible[static_cast<std::size_t>(a - inst.alpha.begin())];
    std::vector<std::size_t> used;
    for (std::string_view id : sym::free_identifiers(parsed.expr)) {
      const auto a = std::find(inst.alpha.begin(), inst.alpha.end(), id);
      if (a == inst.alpha.end()) return {};
      used.push_back(static_cast<std::size_t>(a - inst.alpha.begin()));
    }
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    if (used.size() != 1) return {};  // several alpha in one extent: not read (none of ours)
    std::vector<std::int64_t> out;
    for (std::int64_t value : feasible[used[0]]) {
      const sym::EvalResult r = sym::try_evaluate(parsed.expr, [&](std::string_view) -> std::optional<std::int64_t> { return value; });
      if (r.ok() && r.value >= 1 && r.value <= kMaxSize) out.push_back(r.value);
    }
    sort_unique(out);
    return out;
  }

  // Per alpha: the values 1 .. kMaxSize (ascending) that satisfy every constraint mentioning it alone.
  static std::vector<std::vector<std::int64_t>> feasible_alpha(const isa::Instruction& inst) {
    std::vector<std::vector<std::int64_t>> out(inst.alpha.size());
    for (std::size_t a = 0; a < inst.alpha.size(); ++a) {
      std::vector<sym::Expr> own;
      for (std::string_view c : inst.constraints) {
        const sym::ParseResult parsed = sym::try_parse(c);
        if (!parsed.ok()) continue;
        bool only_a = true, mentions_a = false;
        for (std::string_view id : sym::free_identifiers(parsed.expr)) {
          mentions_a = mentions_a || id == inst.alpha[a];
          only_a = only_a && id == inst.alpha[a];
        }
        if (only_a && mentions_a) own.push_back(parsed.expr);
      }
      for (std::int64_t v = 1; v <= kMaxSize; ++v) {
        bool ok = true;
        for (const sym::Expr& e : own) {
          const sym::EvalResult r = sym::try_evaluate(e, [&](std::string_view) -> std::optional<std::int64_t> { return v; });
          ok = ok && r.ok() && r.value != 0;
        }
        if (ok) out[a].push_back(v);
      }
    }
    return out;
  }

  // `values` sorted and unique.
  void record(SplitRole role, hlo::Opcode opcode, DType t, const std::vector<std::int64_t>& values, std::size_t rank = 0) {
    if (values.empty()) return;
    merge_into(sizes_[Key{role, opcode, t, rank}], values);
    if (role != SplitRole::Rows) merge_into(instruction_[Key{role, opcode, t, rank}], values);
  }

  void add_instruction(const isa::Instruction& inst) {
    instruction_.clear();
    add_semantics(inst);
    for (auto& [key, values] : instruction_) per_instruction_[key].push_back(std::move(values));
  }

  void add_semantics(const isa::Instruction& inst) {
    std::shared_ptr<const hlo::Module> m;
    try {
      m = isa::symbolic_semantics(inst);
    } catch (const Error&) {
      return;  // validation reports malformed semantics; nothing to learn here
    }
    const std::vector<std::vector<std::int64_t>> feasible = feasible_alpha(inst);
    ExtentsByText known;
    const hlo::Computation& entry = m->entry_computation();
    for (const hlo::Instruction& i : entry.instructions) {
      if (i.shape.is_tuple) continue;
      if (i.opcode == hlo::Opcode::Dot && i.operands.size() == 2) {
        const hlo::Instruction& lhs = entry.instructions[static_cast<std::size_t>(i.operands[0])];
        const hlo::Instruction& rhs = entry.instructions[static_cast<std::size_t>(i.operands[1])];
        if (lhs.shape.is_tuple || rhs.shape.is_tuple) continue;
        const DType t = lhs.shape.dtype;
        const auto& d = i.dot;
        const auto used = [](const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b, std::int64_t k) {
          return std::find(a.begin(), a.end(), k) != a.end() || std::find(b.begin(), b.end(), k) != b.end();
        };
        for (std::size_t k = 0; k < lhs.shape.dims.size(); ++k) {
          const auto kk = static_cast<std::int64_t>(k);
          if (std::find(d.lhs_contracting.begin(), d.lhs_contracting.end(), kk) != d.lhs_contracting.end())
            record(SplitRole::DotContracting, hlo::Opcode::Copy, t, extents(inst, feasible, lhs, k, known));
          else if (!used(d.lhs_batch, d.lhs_contracting, kk))
            record(SplitRole::DotLhsFree, hlo::Opcode::Copy, t, extents(inst, feasible, lhs, k, known));
        }
        for (std::size_t k = 0; k < rhs.shape.dims.size(); ++k)
          if (!used(d.rhs_batch, d.rhs_contracting, static_cast<std::int64_t>(k)))
            record(SplitRole::DotRhsFree, hlo::Opcode::Copy, t, extents(inst, feasible, rhs, k, known));
        continue;
      }
      if (i.operands.empty() || i.opcode == hlo::Opcode::Parameter || i.opcode == hlo::Opcode::Constant) continue;
      const DType t = i.shape.dtype;
      if (!i.shape.dims.empty()) record(SplitRole::Rows, i.opcode, t, extents(inst, feasible, i, 0, known), i.shape.dims.size());
      {
        // A scalar result, or a width not read off the description, computes any width.
        const std::vector<std::int64_t> widths =
            i.shape.dims.empty() ? std::vector<std::int64_t>{} : extents(inst, feasible, i, i.shape.dims.size() - 1, known);
        const std::int64_t narrowest = widths.empty() ? 1 : widths.front();
        auto [at, fresh] = narrowest_.try_emplace(Key{SplitRole::Rows, i.opcode, t}, narrowest);
        if (!fresh) at->second = std::min(at->second, narrowest);
      }
      if (i.opcode == hlo::Opcode::Multiply) {  // a dot with contracting extent 1
        record(SplitRole::DotContracting, hlo::Opcode::Copy, t, {1});
        for (std::size_t k = 0; k < i.shape.dims.size(); ++k) {
          const auto& e = extents(inst, feasible, i, k, known);
          record(SplitRole::DotLhsFree, hlo::Opcode::Copy, t, e);
          record(SplitRole::DotRhsFree, hlo::Opcode::Copy, t, e);
        }
      }
    }
  }

  bool unconstrained_ = true;
  std::map<Key, std::vector<std::int64_t>> sizes_;  // sorted, unique
  std::map<Key, RowExtents> rows_;  // key rank 0
  std::map<Key, std::int64_t> narrowest_;  // Rows, key rank 0: the smallest last extent of a result
  std::map<Key, std::vector<std::vector<std::int64_t>>> per_instruction_;  // dot roles: sorted extents per instruction
  std::map<Key, std::vector<std::int64_t>> instruction_;  // the instruction being recorded (sorted, unique)
};

// The split sizes of `isa`, computed once per process and description (isa/derived_facts.hpp).
// Reading the sizes tries every alpha value up to kMaxSize.
inline std::shared_ptr<const SplitSizes> split_sizes_of(const isa::IsaView& isa) {
  static isa::PerIsaCache<SplitSizes> cache;
  if (isa.instructions.empty()) return std::make_shared<const SplitSizes>();
  return cache.get(isa, [](const isa::IsaView& d) { return SplitSizes(d); });
}

}  // namespace act::select
