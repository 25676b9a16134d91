// Dot axioms: splitting a dot along free and contracted dims, operand swap, transpose folding,
// zero padding, slicing through a dot, and broadcast / reduce / reverse / transpose / identity
// expressed as a dot with a constant (ones, identity, reversed identity).
#pragma once

#include <algorithm>
#include <cctype>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "act/select/ir/piece_nesting.hpp"
#include "act/select/rules/axioms/support.hpp"
#include "act/select/rules/split_sizes.hpp"

namespace act::select::axiom_detail {

// The dot's operands and dims, read from a match of dot(?a, ?b) captured as "dot".
struct DotMatch {
  Id a, b;
  Shape ta, tb;
  hlo::DotDimensions dims;
  DType result;
  Dims lhs_free, rhs_free;
};
inline DotMatch read_dot(const View& v) {
  DotMatch m{v.cls("?a"), v.cls("?b"), v.type("?a"), v.type("?b"), v.attr("dot").dot, v.attr("dot").dtype, {}, {}};
  m.lhs_free = free_dims(m.ta.rank(), m.dims.lhs_batch, m.dims.lhs_contracting);
  m.rhs_free = free_dims(m.tb.rank(), m.dims.rhs_batch, m.dims.rhs_contracting);
  return m;
}
// The first dim of an operand of rank `rank` that is neither batch nor contracted, or -1. The
// conditions read this instead of read_dot, which copies the shapes and dims: a condition runs
// on every match of every iteration (read_dot was 5 % of the 385-node Gemmini kernel's
// compile, most of it in conditions).
inline std::int64_t first_free_dim(std::int64_t rank, const Dims& batch, const Dims& contracting) {
  for (std::int64_t d = 0; d < rank; ++d)
    if (is_free_dim(d, batch, contracting)) return d;
  return -1;
}
// The most rows dot-transposed-rhs-by-rows computes one at a time (a 128-row product is 385
// Gemmini instructions; beyond that the pieces would dominate the e-graph).
inline constexpr std::int64_t kMaxRowsByRows = 128;
inline bool plain_2d(const View& v) {  // a rank-2 × rank-2 dot without batch dims
  const auto& d = v.attr("dot").dot;
  return v.type("?a").rank() == 2 && v.type("?b").rank() == 2 && d.lhs_batch.empty() && d.lhs_contracting.size() == 1;
}

// The n x n identity constant of type t (built once per type and size, ir/builder.hpp).
inline Id identity_constant(Build& b, DType t, std::int64_t n) {
  return b.patterned(t, {n, n}, "identity", [](std::int64_t i, std::int64_t j) { return i == j ? 1.0 : 0.0; });
}
// Dot dimensions contracting the lhs's dim `lhs` with the rhs's dim `rhs`, no batch dims.
inline hlo::DotDimensions contracting(std::int64_t lhs, std::int64_t rhs) {
  hlo::DotDimensions dims;
  dims.lhs_contracting = {lhs};
  dims.rhs_contracting = {rhs};
  return dims;
}

// Element types of the dots in the ISA's instruction semantics (read from the text: the
// semantics may hold backtick dims, which the HLO parser rejects). The axioms that introduce a
// dot (x -> dot(x, I), broadcast/reduce/reverse/transpose as dots) only help a value whose type
// an instruction's dot computes from its operands as they are: on AMX (tdpbusd: an s32 dot of
// widened u8/s8) no introduced dot can be selected, and splitting f32 and s32 identity dots was
// most of the e-graph on K5's f32 chain. A context without an ISA (the
// axiom soundness tests) allows every type.
struct IsaDotTypes {
  bool any = true;
  std::vector<DType> types;
  std::shared_ptr<const SplitSizes> sizes;
  bool allows(DType t) const { return any || std::find(types.begin(), types.end(), t) != types.end(); }
  // An introduced n x n constant operand (identity, reversed or negated identity) only where an
  // instruction's dot takes it whole (split_sizes.hpp: contracting_fits).
  bool allows_square(DType t, std::int64_t n) const { return allows(t) && (!sizes || sizes->contracting_fits(t, n)); }
};

inline IsaDotTypes isa_dot_types(const isa::IsaView& isa) {
  IsaDotTypes out;
  out.any = isa.instructions.empty();
  out.sizes = split_sizes_of(isa);
  for (const auto& inst : isa.instructions) {
    const std::string_view text = inst.semantics;
    for (std::size_t at = text.find(" dot("); at != std::string_view::npos; at = text.find(" dot(", at + 1)) {
      const std::size_t newline = text.rfind('\n', at);
      const std::size_t line = newline == std::string_view::npos ? 0 : newline + 1;
      const std::size_t eq = text.find("= ", line);
      if (eq == std::string_view::npos || eq > at) continue;
      const std::size_t bracket = text.find('[', eq);
      if (bracket == std::string_view::npos || bracket > at) continue;
      // A dot over converted operands (AMX: s32 dot of u8/s8 widened) only matches values that
      // are such converts already; a dot introduced over any value of its type would not.
      const std::size_t close = text.find(')', at);
      bool converted = false;
      for (std::size_t name = text.find('%', at); name != std::string_view::npos && name < close; name = text.find('%', name + 1)) {
        std::size_t end = name + 1;
        while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' || text[end] == '.')) ++end;
        const std::string definition = std::string(text.substr(name, end - name)) + " = ";
        const std::size_t def = text.find(definition);
        const std::size_t def_end = def == std::string_view::npos ? def : text.find('\n', def);
        if (def != std::string_view::npos && text.substr(def, def_end - def).find(" convert(") != std::string_view::npos)
          converted = true;
      }
      const std::optional<DType> t = parse_dtype(text.substr(eq + 2, bracket - eq - 2));
      if (t && !converted && !out.allows(*t)) out.types.push_back(*t);
    }
  }
  return out;
}

inline void add_dot_axioms(SelectionContext& ctx, std::vector<Axiom>& out) {
  const IsaDotTypes dot_types = isa_dot_types(ctx.isa);
  using hlo::Opcode;
  using enum hlo::Opcode;
  const auto D = AxiomFamily::Dot, P = AxiomFamily::Padding, R = AxiomFamily::Reduction;
  const auto info = [](std::string name, AxiomFamily family, std::vector<Opcode> lhs, std::vector<Opcode> rhs, bool reassoc,
                       std::string source) {
    return AxiomInfo{name, family, name, std::move(lhs), std::move(rhs), reassoc, std::move(source)};
  };
  const std::string_view dot = "(dot@dot ?a ?b)";
  AxiomRules rules(ctx, out);

  // Split a dot along its first free dim of one operand → concat of the pieces, cut where the
  // ISA's dots compute (split_sizes.hpp).
  const std::shared_ptr<const SplitSizes> sizes = split_sizes_of(ctx.isa);
  for (bool lhs : {true, false})
    rules.add(
        info(lhs ? "dot-split-lhs-free" : "dot-split-rhs-free", D, {Dot}, {Concatenate, Dot, Slice}, false,
             "issue 3; rewrites.md DMG-1 (inverse)"),
        dot,
        [lhs, sizes](const View& v) {
          const hlo::DotDimensions& d = v.attr("dot").dot;
          const Shape& operand = v.type(lhs ? "?a" : "?b");
          const std::int64_t free = lhs ? first_free_dim(operand.rank(), d.lhs_batch, d.lhs_contracting)
                                        : first_free_dim(operand.rank(), d.rhs_batch, d.rhs_contracting);
          if (free < 0) return false;
          const auto n = operand.dims[static_cast<std::size_t>(free)];
          return sizes->split_point(lhs ? SplitRole::DotLhsFree : SplitRole::DotRhsFree, v.type("?a").dtype, n).has_value();
        },
        [lhs, sizes](const View& v, Build& b) {
          const DotMatch m = read_dot(v);
          const Dims& free = lhs ? m.lhs_free : m.rhs_free;
          const auto dim = static_cast<std::size_t>(free[0]);
          const Id x = lhs ? m.a : m.b;
          const auto n = (lhs ? m.ta : m.tb).dims[dim];
          const auto h = *sizes->split_point(lhs ? SplitRole::DotLhsFree : SplitRole::DotRhsFree, m.ta.dtype, n);
          const Id lo = b.slice_dim(x, dim, 0, h), hi = b.slice_dim(x, dim, h, n);
          const Id d1 = lhs ? b.dot(lo, m.b, m.dims, m.result) : b.dot(m.a, lo, m.dims, m.result);
          const Id d2 = lhs ? b.dot(hi, m.b, m.dims, m.result) : b.dot(m.a, hi, m.dims, m.result);
          // Output dims: batch, lhs free, rhs free.
          const auto out_dim = static_cast<std::int64_t>(m.dims.lhs_batch.size() + (lhs ? 0 : m.lhs_free.size()));
          return b.concat({d1, d2}, out_dim);
        });

  // Split along the first contracted dim → add of partial dots. Float results round each
  // partial dot separately (re-association); exact for integers.
  rules.add(
      info("dot-split-contracting", D, {Dot}, {Add, Dot, Slice}, true, "issue 3; rewrites.md DOT-9; TensorRight dot/rule01"),
      dot,
      [sizes](const View& v) {
        const hlo::DotDimensions& d = v.attr("dot").dot;
        if (d.lhs_contracting.empty()) return false;
        const Shape& ta = v.type("?a");
        const auto n = ta.dims[static_cast<std::size_t>(d.lhs_contracting[0])];
        return sizes->split_point(SplitRole::DotContracting, ta.dtype, n).has_value();
      },
      [sizes](const View& v, Build& b) {
        const DotMatch m = read_dot(v);
        const auto la = static_cast<std::size_t>(m.dims.lhs_contracting[0]);
        const auto rb = static_cast<std::size_t>(m.dims.rhs_contracting[0]);
        const auto n = m.ta.dims[la];
        const auto h = *sizes->split_point(SplitRole::DotContracting, m.ta.dtype, n);
        const Id d1 = b.dot(b.slice_dim(m.a, la, 0, h), b.slice_dim(m.b, rb, 0, h), m.dims, m.result);
        const Id d2 = b.dot(b.slice_dim(m.a, la, h, n), b.slice_dim(m.b, rb, h, n), m.dims, m.result);
        return b.op(Add, NodeAttributes{}, {d1, d2});
      });

  // rewrites.md DOT-13 / TP-5 (TensorRight dot/rule02): dot(a, b) → transpose(dot(b, a)).
  rules.add(info("dot-swap-operands", D, {Dot}, {Transpose, Dot}, false, "rewrites.md DOT-13, TP-5; TensorRight dot/rule02"),
            dot, [](const View& v, Build& b) {
              const DotMatch m = read_dot(v);
              hlo::DotDimensions s{m.dims.rhs_batch, m.dims.rhs_contracting, m.dims.lhs_batch, m.dims.lhs_contracting};
              const Id swapped = b.dot(m.b, m.a, s, m.result);
              // swapped dims: batch, rhs free, lhs free → back to batch, lhs free, rhs free.
              const auto nb = static_cast<std::int64_t>(m.dims.lhs_batch.size());
              const auto nl = static_cast<std::int64_t>(m.lhs_free.size());
              const auto nr = static_cast<std::int64_t>(m.rhs_free.size());
              Dims perm = iota_dims(static_cast<std::size_t>(nb));
              for (std::int64_t i = 0; i < nl; ++i) perm.push_back(nb + nr + i);
              for (std::int64_t i = 0; i < nr; ++i) perm.push_back(nb + i);
              return b.transpose(swapped, perm);
            });

  // rewrites.md TF-1: dot(transpose<p>(a), b) → dot(a, b) with dims mapped through p, when the
  // transposed operand's free dims keep their order (so the output order is unchanged).
  for (bool lhs : {true, false}) {
    // The dot's dims with the transposed operand's batch and contracting dims mapped through p.
    const auto mapped = [lhs](const View& v) {
      const Dims& p = v.attr("t").dimensions;
      hlo::DotDimensions d = v.attr("dot").dot;
      for (auto& x : lhs ? d.lhs_batch : d.rhs_batch) x = p[static_cast<std::size_t>(x)];
      for (auto& x : lhs ? d.lhs_contracting : d.rhs_contracting) x = p[static_cast<std::size_t>(x)];
      return d;
    };
    // The transposed operand's free dims, in order, map to increasing dims of x.
    const auto keeps_free_order = [lhs](const View& v) {
      const Dims& p = v.attr("t").dimensions;
      const hlo::DotDimensions& d = v.attr("dot").dot;
      const Dims& batch = lhs ? d.lhs_batch : d.rhs_batch;
      const Dims& contracting = lhs ? d.lhs_contracting : d.rhs_contracting;
      std::int64_t previous = -1;
      for (std::int64_t f = 0; f < static_cast<std::int64_t>(p.size()); ++f) {
        if (!is_free_dim(f, batch, contracting)) continue;
        if (p[static_cast<std::size_t>(f)] < previous) return false;
        previous = p[static_cast<std::size_t>(f)];
      }
      return true;
    };
    rules.add(info(lhs ? "dot-fold-transpose-lhs" : "dot-fold-transpose-rhs", D, {Dot, Transpose}, {Dot}, false,
                   "rewrites.md TF-1"),
              lhs ? "(dot@dot (transpose@t ?x) ?o)" : "(dot@dot ?o (transpose@t ?x))",
              keeps_free_order,
              [mapped, lhs](const View& v, Build& b) {
                const auto d = mapped(v);
                const DType t = v.attr("dot").dtype;
                return lhs ? b.dot(v.cls("?x"), v.cls("?o"), d, t) : b.dot(v.cls("?o"), v.cls("?x"), d, t);
              });
  }

  // rewrites.md DD-1 (canonical operand forms [M,K] × [K,N]): a 2-D dot contracting the lhs's
  // dim 0 (or the rhs's dim 1) → a dot of the transposed operand, for ISAs with one gemm form.
  for (bool lhs : {true, false})
    rules.add(
        info(lhs ? "dot-canonical-lhs" : "dot-canonical-rhs", D, {Dot}, {Dot, Transpose}, false, "rewrites.md DD-1"), dot,
        [lhs](const View& v) {
          if (!plain_2d(v)) return false;
          const auto& d = v.attr("dot").dot;
          return lhs ? d.lhs_contracting[0] == 0 : d.rhs_contracting[0] == 1;
        },
        [lhs](const View& v, Build& b) {
          DotMatch m = read_dot(v);
          if (lhs) {
            m.dims.lhs_contracting = {1};
            return b.dot(b.transpose(m.a, {1, 0}), m.b, m.dims, m.result);
          }
          m.dims.rhs_contracting = {0};
          return b.dot(m.a, b.transpose(m.b, {1, 0}), m.dims, m.result);
        });

  // A dot contracting both operands' dim 1, a·bᵀ (a:[m,k], b:[n,k]), a row at a time with no
  // transpose: row i is b·a[i] with a[i] read as a column, and a [k] row and a [k,1] column are
  // the same bytes, so  dot(a, b) → concat_i reshape(dot(b, reshape(a[i], [k,1])), [1,n]).
  // For ISAs that cannot transpose (Gemmini: one matmul, canonical): there the generic route to
  // those rows (swap the operands, halve the rows down to 1, fold the transposes of vectors)
  // took 56 rewrite iterations for a 32-row product and never reached a 128-row one. The rows
  // nest as an output's row pieces do (ir/piece_nesting.hpp), and each subtree is united with
  // the dot of its rows of a, so a row piece of the product is found at once.
  // Only in the attempts that offer row pieces of outputs or intermediate dots (GroupExplorer):
  // with an output whole, the rows let a first attempt find a program that reloads them to
  // store the output in one piece (66 instructions for gemmini_dot_transposed_rhs, where the
  // retry that offers the output's rows stores each row where it belongs: 49).
  // Not where an operand is itself a transpose: every canonical a·b becomes transpose(b)·aᵀ by
  // dot-swap-operands and dot-canonical-lhs, and cutting those into rows doubled the NNSmith
  // kernels' compile times.
  AxiomInfo rows_of_transposed = info("dot-transposed-rhs-by-rows", D, {Dot}, {Concatenate, Reshape, Dot, Slice}, false,
                                      "act: row i of a·bᵀ is b·a[i]");
  rows_of_transposed.replaces_transposed_contraction = true;
  rules.add(
      std::move(rows_of_transposed), dot,
      [](const View& v) {
        // Read at match time, not when the rules are built: every output group's rule set
        // must hold the same rules in the same order (backend.hpp sums their counts by index).
        const bool offers_row_pieces = v.ctx.row_piece_retry || v.ctx.intermediate_row_pieces || v.ctx.isa.instructions.empty();
        const auto& d = v.attr("dot").dot;
        return offers_row_pieces && plain_2d(v) && d.lhs_contracting[0] == 1 && d.rhs_contracting[0] == 1 &&
               v.type("?a").dims[0] <= kMaxRowsByRows && !has_operator(v.g, v.cls("?a"), Transpose) &&
               !has_operator(v.g, v.cls("?b"), Transpose);
      },
      [](const View& v, Build& b) {
        const DotMatch m = read_dot(v);
        const std::int64_t rows = m.ta.dims[0], k = m.ta.dims[1], n = m.tb.dims[0];
        // Each piece (a row, or a concatenate of rows lo..hi) is also the dot of those rows of
        // a, the class slice-of-dot gives a slice of the product (an output's row piece).
        struct Rows {
          Id id;
          std::int64_t lo, hi;
        };
        const auto same_as_dot_of_rows = [&](Id piece, std::int64_t lo, std::int64_t hi) {
          b.g.unite(piece, b.dot(b.slice_dim(m.a, 0, lo, hi), m.b, m.dims, m.result));
          return Rows{b.g.find(piece), lo, hi};
        };
        std::vector<Rows> pieces;
        for (std::int64_t i = 0; i < rows; ++i) {
          const Id column = b.reshape(b.slice_dim(m.a, 0, i, i + 1), {k, 1});
          pieces.push_back(same_as_dot_of_rows(b.reshape(b.dot(m.b, column, contracting(1, 0), m.result), {1, n}), i, i + 1));
        }
        return nest_equal_pieces(std::span<const Rows>(pieces), [&](const Rows& lo, const Rows& hi) {
                 return same_as_dot_of_rows(b.concat({lo.id, hi.id}, 0), lo.lo, hi.hi);
               }).id;
      });

  // rewrites.md SL-9: slice(dot(a, b)) → dot(slice(a), slice(b)) for a 2-D dot (free dims sliced
  // on the owning operand). Exact: every output element sums the same products in the same order.
  // Not through an identity operand: slice(dot(x, I)) is slice(x), a class with its own
  // dot(slice(x), I), while slicing I's columns made partial identities whose dots, swapped and
  // transposed, became new classes with dots of their own. A Gemmini soak kernel's e-graph grew
  // that way to 92,856 e-nodes at the iteration limit without a pii graph; with this guard it
  // finds a program (tests/regressions/gemmini_mixed_stores_rewriting_limit.hlo).
  rules.add(info("slice-of-dot", D, {Slice, Dot}, {Dot, Slice}, false, "rewrites.md SL-9"),
            "(slice@outer (dot@dot ?a ?b))",
            [](const View& v) {
              return plain_2d(v) && !is_identity_constant(v.g, v.ctx, v.cls("?a")) && !is_identity_constant(v.g, v.ctx, v.cls("?b"));
            },
            [](const View& v, Build& b) {
              const DotMatch m = read_dot(v);
              const auto r = v.attr("outer").slice;
              auto ra = full_ranges(m.ta.dims), rb = full_ranges(m.tb.dims);
              ra[static_cast<std::size_t>(m.lhs_free[0])] = r[0];
              rb[static_cast<std::size_t>(m.rhs_free[0])] = r[1];
              return b.dot(b.slice(m.a, ra), b.slice(m.b, rb), m.dims, m.result);
            });

  // rewrites.md DOT-5 (with the [v = 0] it needs) and issue 3: zero padding of the contracted
  // dim up to a power of two, so K fits an instruction; 0·0 products keep the sum exact.
  rules.add(
      info("dot-pad-contracting", P, {Dot}, {Dot, Pad, Constant}, false, "rewrites.md DOT-5; issue 3"), dot,
      [sizes](const View& v) {
        if (!plain_2d(v)) return false;
        const auto k = v.type("?a").dims[static_cast<std::size_t>(v.attr("dot").dot.lhs_contracting[0])];
        // A k the split reaches an instruction's extent from needs no padding (K = 48 on Gemmini).
        if (sizes->from_isa() && sizes->split_point(SplitRole::DotContracting, v.type("?a").dtype, k)) return false;
        return k > 0 && next_power_of_two(k) != k;
      },
      [](const View& v, Build& b) {
        const DotMatch m = read_dot(v);
        const auto la = static_cast<std::size_t>(m.dims.lhs_contracting[0]);
        const auto rb = static_cast<std::size_t>(m.dims.rhs_contracting[0]);
        const auto k = m.ta.dims[la], extra = next_power_of_two(k) - k;
        const Id zero = b.scalar(m.ta.dtype, 0);
        std::vector<hlo::PadDimension> pa(2), pbd(2);
        pa[la].high = extra;
        pbd[rb].high = extra;
        return b.dot(b.pad(m.a, zero, pa), b.pad(m.b, zero, pbd), m.dims, m.result);
      });

  // Issue 3: pad the lhs free dim m of a 2-D dot [m,k]x[k,n] with zero rows and slice the result
  // back: slice(dot(concat(a, 0), b)). The zero rows are a constant block (not pad(a, 0)): a
  // concatenation with a constant is what accelerators can build (concat^H of a value and a
  // loaded constant), and no instruction computes pad. Target rows t = max(P(m), P(k)), P the
  // next power of two: a power of two, and at least the contracted size, since matrix units are
  // square (QKV's gemm is 64x64x64: a 32-row Q must become 64 rows). Applies when t > m; the
  // padded dot has t rows and never pads again.
  const auto padded_rows = [](const View& v) {
    const auto m = v.root_type().dims[0];
    const auto k = v.type("?a").dims[static_cast<std::size_t>(v.attr("dot").dot.lhs_contracting[0])];
    return std::max(next_power_of_two(m), next_power_of_two(k));
  };
  rules.add(
      info("dot-pad-lhs-free", P, {Dot}, {Slice, Dot, Concatenate, Constant}, false, "issue 3: pad to fit"), dot,
      [padded_rows, sizes](const View& v) {
        if (!plain_2d(v)) return false;
        const auto m = v.root_type().dims[0];
        // Rows an instruction computes, or that halve into such rows, need no padding (on
        // Gemmini a 16-row dot with K = 48, 32 rows with K = 64). Other rows pad when the
        // padded rows are an instruction's rows within two halvings: QKV's 32 rows to 64, AMX's
        // M = 48 to 64 (= 4 x 16). A QKV dot of 3072 rows is not padded to 4096: its 64-row
        // pieces come from splitting, and padding every remainder of the split blew it up.
        const DType t = v.type("?a").dtype;
        if (sizes->halves_to_extent(SplitRole::DotLhsFree, t, m)) return false;
        const auto padded = padded_rows(v);
        if (sizes->from_isa() && !sizes->halves_to_extent(SplitRole::DotLhsFree, t, padded, 2)) return false;
        return m > 0 && padded > m;
      },
      [padded_rows](const View& v, Build& b) {
        const DotMatch m = read_dot(v);
        const Dims result = v.root_type().dims;
        const auto f = static_cast<std::size_t>(m.lhs_free[0]);
        Dims zeros = m.ta.dims;
        zeros[f] = padded_rows(v) - result[0];
        const Id block = b.patterned(m.ta.dtype, zeros, "zeros", [](std::int64_t, std::int64_t) { return 0.0; });
        const Id padded = b.dot(b.concat({m.a, block}, static_cast<std::int64_t>(f)), m.b, m.dims, m.result);
        return b.slice(padded, full_ranges(result));
      });

  // rewrites.md DOT-5 reversed: dot(pad(a, 0), pad(b, 0)) padded only at the high end of the
  // contracted dims by the same amount → dot(a, b).
  rules.add(
      info("dot-unpad-contracting", P, {Dot, Pad}, {Dot}, false, "rewrites.md DOT-5"),
      "(dot@dot (pad@pa ?a ?za) (pad@pb ?b ?zb))",
      [](const View& v) {
        if (!is_zero_constant(v.g, v.ctx, v.cls("?za")) || !is_zero_constant(v.g, v.ctx, v.cls("?zb"))) return false;
        const auto& d = v.attr("dot").dot;
        const auto& p = v.attr("pa").padding;
        const auto& q = v.attr("pb").padding;
        if (d.lhs_contracting.size() != 1) return false;
        for (std::size_t i = 0; i < p.size(); ++i) {
          const bool c = static_cast<std::int64_t>(i) == d.lhs_contracting[0];
          if (p[i].low != 0 || p[i].interior != 0 || (!c && p[i].high != 0)) return false;
        }
        for (std::size_t i = 0; i < q.size(); ++i) {
          const bool c = static_cast<std::int64_t>(i) == d.rhs_contracting[0];
          if (q[i].low != 0 || q[i].interior != 0 || (!c && q[i].high != 0)) return false;
        }
        return p[static_cast<std::size_t>(d.lhs_contracting[0])].high == q[static_cast<std::size_t>(d.rhs_contracting[0])].high;
      },
      [](const View& v, Build& b) { return b.dot(v.cls("?a"), v.cls("?b"), v.attr("dot").dot, v.attr("dot").dtype); });

  // rewrites.md DOT-11 then DOT-2 (TensorRight dot/rule04): a dot whose contracting dims all
  // have size 1 is an outer product: multiply(broadcast(a'), broadcast(b')) where a', b' are the
  // operands' free dims (reshape drops the size-1 contracting dims, order kept). Exact when the
  // operands already have the result type: each output is one product, rounded once either way
  // (0 + p == p, -0 becoming +0 aside). No batch dims.
  AxiomInfo outer_product = info("dot-unit-contracting-as-multiply", D, {Dot}, {Multiply, Broadcast, Reshape}, false,
                                 "rewrites.md DOT-11 + DOT-2 (TensorRight dot/rule04)");
  outer_product.binary_root_over_data = Multiply;
  rules.add(
      std::move(outer_product),
      dot,
      [](const View& v) {
        const NodeAttributes& dot = v.attr("dot");
        const Shape& ta = v.type("?a");
        const DType result = dot.dtype;
        if (!dot.dot.lhs_batch.empty() || ta.dtype != result || v.type("?b").dtype != result || result == DType::pred)
          return false;
        for (auto d : dot.dot.lhs_contracting)
          if (ta.dims[static_cast<std::size_t>(d)] != 1) return false;
        return true;  // rhs contracting sizes equal lhs's (type inference checked it)
      },
      [](const View& v, Build& b) {
        const DotMatch m = read_dot(v);
        const Shape& t = v.root_type();
        Dims a_free, b_free;
        for (auto d : m.lhs_free) a_free.push_back(m.ta.dims[static_cast<std::size_t>(d)]);
        for (auto d : m.rhs_free) b_free.push_back(m.tb.dims[static_cast<std::size_t>(d)]);
        NodeAttributes ba, bb;
        ba.shape = bb.shape = t.dims;
        ba.dimensions = iota_dims(a_free.size());
        for (std::size_t k = 0; k < b_free.size(); ++k) bb.dimensions.push_back(static_cast<std::int64_t>(a_free.size() + k));
        const Id x = b.op(Broadcast, ba, {b.reshape(m.a, a_free)});
        const Id y = b.op(Broadcast, bb, {b.reshape(m.b, b_free)});
        return b.op(Multiply, NodeAttributes{}, {x, y});
      });

  // Integers wrap, so keeping the low w bits is a ring homomorphism: a narrowing integer
  // convert of a dot is the dot of the narrowed operands in the narrow type,
  // convert<T>(dot<U>(a, b)) → dot<T>(convert<T>(a), convert<T>(b)) (XLA converts int → int by
  // wrapping; the reference interpreter accumulates with wrap). Only where an instruction
  // computes a T dot as it is: Gemmini's matmul8 then computes the low byte of an s32 product
  // of s32 values, which no instruction multiplies. Not for a dot of operands widened from T
  // (matmul32 + mvout_acc_low computes it as it is): there it only grew the e-graph.
  // Only on the last retry (SelectionContext::last_retry) and without an ISA (the soundness
  // tests): in every attempt they grew e-graphs enough that two Gemmini soak kernels the
  // earlier retries compile reached the node limit first.
  if (ctx.last_retry || ctx.isa.instructions.empty()) {
    rules.add(info("narrowing-convert-of-dot", D, {Convert, Dot}, {Dot, Convert}, false, "act (wrapping integer arithmetic)"),
              "(convert@outer (dot@dot ?a ?b))",
              [dot_types](const View& v) {
                const DType to = v.attr("outer").dtype;
                return dot_types.allows(to) && narrowing_pays(v.g, v.attr("dot").dtype, to, v.cls("?a"), v.cls("?b"));
              },
              [](const View& v, Build& b) {
                const DotMatch m = read_dot(v);
                const DType to = v.attr("outer").dtype;
                const auto narrow = [&](Id x, const Shape& t) {
                  if (t.dtype == to) return x;
                  NodeAttributes a;
                  a.dtype = to;
                  return b.op(Convert, a, {x});
                };
                return b.dot(narrow(m.a, m.ta), narrow(m.b, m.tb), m.dims, to);
              });
  }

  // ---- operators expressed as a dot with a constant (issue 3; App. C completeness) ----------
  // broadcast<{0}>(x:[n]) to [n,m] → dot(reshape(x,[n,1]), ones[1,m]); broadcast<{1}> to [m,n]
  // → dot(ones[m,1], reshape(x,[1,n])). x·1 summed from 0 is exact (−0 becomes +0).
  rules.add(
      info("broadcast-as-dot", R, {Broadcast}, {Dot, Reshape, Constant}, false, "issue 3: broadcast as a dot with ones"),
      "(broadcast@outer ?x)",
      [dot_types](const View& v) {
        // The operand dim must map exactly (not a repeated size-1 dim) for the reshape to fit.
        const Shape& x = v.type("?x");
        return x.rank() == 1 && v.root_type().rank() == 2 && x.dtype != DType::pred && dot_types.allows(x.dtype) &&
               x.dims[0] == v.root_type().dims[static_cast<std::size_t>(v.attr("outer").dimensions[0])];
      },
      [](const View& v, Build& b) {
        const Shape t = v.root_type();
        const auto d = v.attr("outer").dimensions[0];
        const hlo::DotDimensions dims = contracting(1, 0);
        const auto one = [](std::int64_t, std::int64_t) { return 1.0; };
        if (d == 0) {
          const Id x = b.reshape(v.cls("?x"), {t.dims[0], 1});
          return b.dot(x, b.patterned(t.dtype, {1, t.dims[1]}, "ones", one), dims, t.dtype);
        }
        const Id x = b.reshape(v.cls("?x"), {1, t.dims[1]});
        return b.dot(b.patterned(t.dtype, {t.dims[0], 1}, "ones", one), x, dims, t.dtype);
      });

  // reduce-add(x:[n,m], 0) over one dim → dot with a ones vector. The reduce accumulates in its
  // own type, the dot in f32: float results differ by rounding (re-association).
  rules.add(
      info("reduce-as-dot", R, {Reduce}, {Dot, Constant}, true, "issue 3: reduce as a dot with ones; rewrites.md DOT-7 (reversed)"),
      "(reduce@outer ?x ?init)",
      [dot_types](const View& v) {
        const auto& a = v.attr("outer");
        return a.reduce == ReduceKind::Add && a.dimensions.size() == 1 && v.type("?x").rank() == 2 &&
               dot_types.allows(v.type("?x").dtype) && v.type("?x").dtype != DType::pred &&
               is_zero_constant(v.g, v.ctx, v.cls("?init"));
      },
      [](const View& v, Build& b) {
        const Shape x = v.type("?x");
        const auto d = v.attr("outer").dimensions[0];
        const Id ones = b.patterned(x.dtype, {x.dims[static_cast<std::size_t>(d)]}, "ones", [](auto, auto) { return 1.0; });
        return b.dot(v.cls("?x"), ones, contracting(d, 0), x.dtype);
      });

  // reverse<{0}>(x:[n,m]) → dot(J, x); reverse<{1}> → dot(x, J) with J the reversed identity.
  rules.add(
      info("reverse-as-dot", R, {Reverse}, {Dot, Constant}, false, "issue 3: reverse as a dot with the reversed identity"),
      "(reverse@outer ?x)",
      [dot_types](const View& v) {
        const Shape& x = v.type("?x");
        return x.rank() == 2 && v.attr("outer").dimensions.size() == 1 && x.dtype != DType::pred &&
               dot_types.allows_square(x.dtype, x.dims[static_cast<std::size_t>(v.attr("outer").dimensions[0])]);
      },
      [](const View& v, Build& b) {
        const Shape x = v.type("?x");
        const auto d = v.attr("outer").dimensions[0];
        const auto n = x.dims[static_cast<std::size_t>(d)];
        const Id J = b.patterned(x.dtype, {n, n}, "reversed-identity",
                                 [n](std::int64_t i, std::int64_t j) { return i + j == n - 1 ? 1.0 : 0.0; });
        return d == 0 ? b.dot(J, v.cls("?x"), contracting(1, 0), x.dtype) : b.dot(v.cls("?x"), J, contracting(1, 0), x.dtype);
      });

  // transpose<{1,0}>(x:[n,m]) → dot(I[m,m], x) contracting I's dim 1 with x's dim 1.
  AxiomInfo transpose_as_dot = info("transpose-as-dot", R, {Transpose}, {Dot, Constant}, false,
                                    "issue 3: transpose as a dot with the identity");
  transpose_as_dot.builds_transposed_contraction = true;
  rules.add(
      std::move(transpose_as_dot),
      "(transpose@outer ?x)",
      [dot_types](const View& v) {
        const Shape& x = v.type("?x");
        return x.rank() == 2 && v.attr("outer").dimensions == Dims{1, 0} && x.dtype != DType::pred &&
               dot_types.allows_square(x.dtype, x.dims[1]);
      },
      [](const View& v, Build& b) {
        const Shape x = v.type("?x");
        return b.dot(identity_constant(b, x.dtype, x.dims[1]), v.cls("?x"), contracting(1, 1), x.dtype);
      });

  // Issue 3 (x ↔ dot(x, I)). Guarded like copy-introduction: rank-2 non-constant classes with
  // no dot yet, so each class gains at most one such node (in its own class).
  rules.add(
      info("dot-identity-introduction", R, {}, {Dot, Constant}, false, "issue 3: x ↔ dot(x, I)"), "?x",
      [dot_types](const View& v) {
        const TensorData& d = v.g.data(v.cls("?x"));
        return !d.is_constant && d.type.rank() == 2 && d.type.dtype != DType::pred && is_computable(d.type.dtype) &&
               dot_types.allows_square(d.type.dtype, d.type.dims[1]) && !has_operator(v.g, v.cls("?x"), Dot);
      },
      [](const View& v, Build& b) {
        const Shape x = v.type("?x");
        return b.dot(v.cls("?x"), identity_constant(b, x.dtype, x.dims[1]), contracting(1, 0), x.dtype);
      });
}

}  // namespace act::select::axiom_detail
