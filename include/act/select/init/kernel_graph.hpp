// Module 1 (App. B): the kernel enters the e-graph.
//
// Every kernel input is a u8 vector in HBM (an Input node u8[bytes], bytes as the kernel's HBM
// image lays it out) and the kernel reads its logical value through byte views:
//   Input u8[B] -> reshape u8[P..., w] -> bitcast-convert dtype[P...]   (w = element bytes > 1)
//   Input u8[B] -> reshape u8[P...] (-> bitcast-convert dtype[P...] when dtype is not u8)
// where P are the physical dims (major to minor, tiling padding included); then the layout is
// undone: each tile (last first) by transpose (interleave tile counts with tile dims) + reshape
// (merge them) + slice (drop padding), and the minor_to_major order by a transpose. The root is
// the mirror image: transpose to physical order, pad + reshape + transpose per tile, bitcast to
// bytes and reshape to u8[B]. A row-major bf16[64,64] input is exactly
// bitcast-convert(reshape(Input)), the shape load_rm's semantics has.
// Kernel constants go into the ConstantTable as Constant nodes; reduce's to_apply is recognised
// as a ReduceKind; anything outside the tensor language is Error(Unsupported) at its location.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/layout.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/shape_check.hpp"
#include "act/select/init/layout_chains.hpp"
#include "act/select/init/output_groups.hpp"
#include "act/select/init/output_overlay.hpp"
#include "act/select/init/output_split.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/rules/axioms/dot.hpp"
#include "act/select/rules/axioms/transpose_by_lanes.hpp"
#include "act/select/rules/split_sizes.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::select {

struct InitialGraph {
  std::vector<egraph::Id> roots;    // byte-flattened outputs u8[bytes], one per result (tuple elements)
  std::vector<egraph::Id> inputs;   // the Input node u8[bytes] of each parameter, by parameter number
  std::vector<std::int64_t> input_addresses;   // HBM address of each input (kernel image)
  std::vector<std::int64_t> output_addresses;  // HBM address of each root (kernel image)
  std::vector<std::size_t> outputs;  // the kernel output (image.outputs index) each root stores
  std::int64_t smallest_output_piece = 0;  // bytes of the smallest byte piece of an output (0: none split)
  sim::KernelImage image;           // the whole HBM placement (phase 2 needs it)
  bool reorders_bytes = false;      // some input or output is tiled or not row-major
  std::size_t intermediate_dot_rows = 0;  // intermediate dots that intermediate_pieces would offer in pieces
  std::size_t transposed_intermediate_dots = 0;  // ... of them, those that contract an operand's rows (p0 . p1^T)
  std::size_t narrowing_converts = 0;     // converts of an integer to a narrower integer
  std::size_t narrowed_products = 0;      // ... of them, those of a product only narrowing-convert-of-dot computes
  std::size_t concatenated_narrowed_products = 0;  // ... of them, those where a concatenate joins the product to other rows
  std::size_t float_transposes = 0;       // rank-2 transposes of floats (transpose-by-lane-blends)
  std::size_t float_transposes_kept = 0;  // ... of them, those no other transpose undoes (transposes_undone)
  std::size_t computed_transposed = 0;    // computed values those transpose (computed_transposed_values)
  std::size_t transposed_in_narrow_pieces = 0;  // ... of them, those transposed_in_narrow_pieces
};

// Whether `s` (or a tuple element) is laid out other than row-major untiled.
inline bool reorders_bytes(const Shape& s) {
  if (s.is_tuple) {
    for (const Shape& e : s.tuple_shapes)
      if (reorders_bytes(e)) return true;
    return false;
  }
  if (!s.has_layout) return false;
  if (!s.layout.tiles.empty()) return true;
  const auto m2m = s.minor_to_major();
  for (std::size_t i = 0; i < m2m.size(); ++i)
    if (m2m[i] != static_cast<std::int64_t>(m2m.size() - 1 - i)) return true;
  return false;
}

// The ISA has registers of 2-D units (AMX tiles): outputs are also offered as byte pieces.
inline bool has_tile_unit(const isa::IsaView& isa) {
  for (const auto& b : isa.buffers)
    if (b.unit_dims.size() >= 2) return true;
  return false;
}

namespace init_detail {

[[noreturn]] inline void unsupported(const hlo::Instruction& inst, const std::string& why) {
  throw Error(ErrorKind::Unsupported, fmt::format("instruction selection: {} '{}' {}", hlo::opcode_name(inst.opcode), inst.name, why),
              inst.location);
}

// Whether `inst` is a concatenate whose row-major bytes are its operands' in turn (only
// size-1 dims before the joined one).
inline bool joins_bytes(const hlo::Instruction& inst) {
  if (inst.opcode != hlo::Opcode::Concatenate || inst.dimensions.size() != 1) return false;
  const auto d = static_cast<std::size_t>(inst.dimensions[0]);
  for (std::size_t k = 0; k < d && k < inst.shape.dims.size(); ++k)
    if (inst.shape.dims[k] != 1) return false;
  return true;
}

// The bytes of the row-major value of `inst` as the concatenation of its operands' bytes, when
// `inst` is a concatenate along a dim with only size-1 dims before it (then its bytes are each
// operand's in turn); operands that are such concatenates themselves are cut the same way.
// Returns kNoId when `inst` is no such concatenate. An output assembled from the results of
// several instructions (two loop_ws writing a 32-row output's halves) is then written piece by
// piece, concat^H in HBM placing the pieces, where no axiom cuts the output's bytes at the rows
// the kernel joins (row-unit ISAs split an output only on a retry, see add_kernel).
inline Id row_concat_bytes(TensorBuilder& b, const hlo::Computation& entry, const std::vector<Id>& value, int index,
                           int depth = 0) {
  const hlo::Instruction& inst = entry.instructions[static_cast<std::size_t>(index)];
  if (!joins_bytes(inst) || depth > 4) return egraph::kNoId;
  std::vector<Id> pieces;
  for (int o : inst.operands) {
    const hlo::Instruction& operand = entry.instructions[static_cast<std::size_t>(o)];
    if (Shape(operand.shape.dtype, operand.shape.dims).element_count() == 0) continue;
    Id bytes = row_concat_bytes(b, entry, value, o, depth + 1);
    if (bytes == egraph::kNoId) bytes = write_array(b, value[static_cast<std::size_t>(o)], Shape(operand.shape.dtype, operand.shape.dims));
    pieces.push_back(bytes);
  }
  if (pieces.size() < 2) return egraph::kNoId;
  Id acc = pieces[0];
  for (std::size_t k = 1; k < pieces.size(); ++k) acc = b.concat({acc, pieces[k]}, 0);
  return acc;
}

// The intermediate dot results of two or more rows (consumed by another instruction, not only
// by the ROOT tuple) among the `needed` instructions: values an ISA may compute only a row at a
// time (Gemmini: p0 . p1^T, a matmul8 per row stored alone) while a later instruction reads
// them whole.
inline std::vector<std::size_t> intermediate_dot_rows(const hlo::Computation& entry, const std::vector<bool>& needed) {
  std::vector<bool> consumed(entry.instructions.size(), false);
  for (std::size_t i = 0; i < entry.instructions.size(); ++i) {
    const hlo::Instruction& inst = entry.instructions[i];
    if (inst.opcode == hlo::Opcode::Tuple || !needed[i]) continue;
    for (int o : operands_read(entry, i)) consumed[static_cast<std::size_t>(o)] = true;
  }
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < entry.instructions.size(); ++i) {
    const hlo::Instruction& inst = entry.instructions[i];
    if (consumed[i] && inst.opcode == hlo::Opcode::Dot && inst.shape.dims.size() == 2 && inst.shape.dims[0] >= 2)
      found.push_back(i);
  }
  return found;
}

// Each of those values also as its row-major bytes cut into row pieces (split_bytes), as
// outputs are, so concat^H in HBM can assemble it from rows stored one at a time and a later
// instruction load it whole. Without the pieces its bytes exist only whole, and no instruction
// writes them whole. Dots only: offering every intermediate grows the e-graph for nothing.
inline void offer_intermediate_bytes(TensorBuilder& b, const hlo::Computation& entry, const std::vector<Id>& value,
                                     std::span<const std::size_t> dots) {
  for (std::size_t i : dots) {
    const hlo::Instruction& inst = entry.instructions[i];
    int depth = 0;
    while (depth < 6 && (std::int64_t{1} << depth) < inst.shape.dims[0]) ++depth;
    split_bytes(b, write_array(b, value[i], Shape(inst.shape.dtype, inst.shape.dims)), depth);
  }
}

// Whether `inst` is a rank-2 transpose of a float (what transpose-by-lane-blends builds).
inline bool is_float_transpose_2d(const hlo::Instruction& inst) {
  return inst.opcode == hlo::Opcode::Transpose && inst.shape.rank() == 2 && is_float(inst.shape.dtype);
}

// The computed operands (not parameters or constants) of the rank-2 float transposes that
// are kept (not undone by another transpose), small enough for the lane blends to transpose.
inline std::vector<std::size_t> computed_transposed_values(const hlo::Computation& entry, const std::vector<bool>& needed,
                                                           const std::vector<bool>& undone) {
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < entry.instructions.size(); ++i) {
    const hlo::Instruction& inst = entry.instructions[i];
    if (!needed[i] || undone[i] || !is_float_transpose_2d(inst)) continue;
    auto o = static_cast<std::size_t>(inst.operands[0]);
    for (int x; (x = reshape_round_trip_source(entry, o)) >= 0;) o = static_cast<std::size_t>(x);
    const hlo::Opcode code = entry.instructions[o].opcode;
    const bool small = Shape(inst.shape.dtype, inst.shape.dims).element_count() <= axiom_detail::kMaxTransposedElements;
    if (small && code != hlo::Opcode::Parameter && code != hlo::Opcode::Constant && std::ranges::find(found, o) == found.end())
      found.push_back(o);
  }
  return found;
}

// The value below `value`'s layout changes (reshape, transpose, copy, one-operand slices): what
// a convert above them reads element for element.
inline std::size_t through_layout_changes(const hlo::Computation& entry, std::size_t value) {
  for (;;) {
    const hlo::Instruction& inst = entry.instructions[value];
    const bool layout = inst.opcode == hlo::Opcode::Reshape || inst.opcode == hlo::Opcode::Transpose ||
                        inst.opcode == hlo::Opcode::Copy || inst.opcode == hlo::Opcode::Slice;
    if (!layout || inst.operands.size() != 1) return value;
    value = static_cast<std::size_t>(inst.operands[0]);
  }
}

// How convert `inst` narrows an integer dot that only narrowing-convert-of-dot (axioms/dot.hpp)
// lets an instruction compute: convert<T>(dot<U>(a, b)), T narrower than U, with an operand that
// is no integer widened from at most T's width (the rule's condition, narrowing_pays), on an ISA
// that computes T dots of operands as they are. No instruction computes such a U dot itself
// (Gemmini's s32 dots widen s8 operands; an s32 parameter or another product is no such
// operand), so only the attempts with the narrowing rules (SelectionContext::last_retry) can
// find a program for it (Gemmini sound soaks: p1 . p2 of an s32 parameter p2, stored as s8,
// which matmul8 computes from p2's low bytes). The dot may lie below layout changes (Direct) or
// be rows a concatenate joins (InConcatenate: convert<s8>(concat(x, dot(p0 . p1, p0)))).
enum class NarrowedProduct { None, Direct, InConcatenate };

inline NarrowedProduct narrowed_product(const hlo::Computation& entry, const hlo::Instruction& inst, const axiom_detail::IsaDotTypes& dots) {
  if (inst.opcode != hlo::Opcode::Convert || inst.operands.size() != 1 || dots.any) return NarrowedProduct::None;
  const DType to = inst.shape.dtype;
  const auto widened = [&](int operand) {
    const hlo::Instruction& o = entry.instructions[through_layout_changes(entry, static_cast<std::size_t>(operand))];
    if (o.opcode != hlo::Opcode::Convert || o.operands.empty()) return false;
    const DType from = entry.instructions[static_cast<std::size_t>(o.operands[0])].shape.dtype;
    return is_integer(from) && from != DType::pred && bit_width(from) <= bit_width(to);
  };
  const auto uncomputed = [&](const hlo::Instruction& dot) {
    return dot.opcode == hlo::Opcode::Dot && is_integer_narrowing(dot.shape.dtype, to) && dots.allows(to) &&
           !std::ranges::all_of(dot.operands, widened);
  };
  const std::size_t below = through_layout_changes(entry, static_cast<std::size_t>(inst.operands[0]));
  if (uncomputed(entry.instructions[below])) return NarrowedProduct::Direct;
  // The concatenates below, and what they join; each value once (concat(c, c) chains).
  std::vector<std::size_t> joined{below};
  std::vector<bool> seen(entry.instructions.size(), false);
  while (!joined.empty()) {
    const std::size_t k = joined.back();
    joined.pop_back();
    if (seen[k]) continue;
    seen[k] = true;
    const hlo::Instruction& v = entry.instructions[k];
    if (v.opcode == hlo::Opcode::Concatenate)
      for (int o : v.operands) joined.push_back(through_layout_changes(entry, static_cast<std::size_t>(o)));
    else if (uncomputed(v))
      return NarrowedProduct::InConcatenate;
  }
  return NarrowedProduct::None;
}

// Whether `value` is a kernel input or rows sliced from one (through reshape round trips).
inline bool rows_of_kernel_input(const hlo::Computation& entry, std::size_t value) {
  for (;;) {
    for (int x; (x = reshape_round_trip_source(entry, value)) >= 0;) value = static_cast<std::size_t>(x);
    const hlo::Instruction& inst = entry.instructions[value];
    if (inst.opcode == hlo::Opcode::Parameter) return true;
    if (inst.opcode != hlo::Opcode::Slice || inst.operands.empty()) return false;
    value = static_cast<std::size_t>(inst.operands[0]);
  }
}

// The value a row concatenate puts back together in order (its operands are whole-width,
// unstrided row slices of that value, consecutive from its first row to its last), if any.
inline std::optional<std::size_t> reassembled_rows_source(const hlo::Computation& entry, const hlo::Instruction& concat) {
  std::optional<std::size_t> source;
  std::int64_t next_row = 0;
  for (int o : concat.operands) {
    const hlo::Instruction& piece = entry.instructions[static_cast<std::size_t>(o)];
    if (piece.opcode != hlo::Opcode::Slice || piece.operands.empty() || piece.slice.size() != 2) return std::nullopt;
    const auto from = static_cast<std::size_t>(piece.operands[0]);
    const hlo::Instruction& whole = entry.instructions[from];
    if ((source && *source != from) || whole.shape.rank() != 2) return std::nullopt;
    source = from;
    const auto& rows = piece.slice[0];
    const auto& cols = piece.slice[1];
    if (rows.start != next_row || rows.stride != 1 || cols.start != 0 || cols.stride != 1 || cols.limit != whole.shape.dims[1])
      return std::nullopt;
    next_row = rows.limit;
  }
  if (!source || next_row != entry.instructions[*source].shape.dims[0]) return std::nullopt;
  return source;
}

// Whether a transpose of `value`, pushed inward as the axioms push it (transpose-of-<op>
// through elementwise operators, and through row concatenates to their pieces), meets an
// operator on pieces narrower (`width`, the pieces' rows, which become lanes) than every
// instruction computing that operator gives: transpose(concat(a + a, b + b)) of f32[8,16]
// halves is a concatenate of f32[16,8] columns, and AVX-512 adds only rows of 16. Such a
// transpose is built only from the value's own elements (offer_element_bytes); pushed inward it
// meets pieces nothing computes, and the lane-blend attempt without element bytes grew to its
// node limit first (0.6-1.5 s on the AMX compile-time set's kernels 9, 68, 81 and 84). A slice
// is passed whole (transpose-of-slice moves the transpose onto its source, at the source's
// width). A clamp counts as computed by a clamp instruction or else by the maximum and minimum
// it is made of (SplitSizes::clamp_narrower_than_computed). A row concatenate of computed
// pieces narrower than every lane select is narrow by itself: transposed, they are joined
// along lanes. `seen` holds (value, width) pairs already visited: a kernel's DAG reads one
// value many times.
inline bool transposed_in_narrow_pieces(const hlo::Computation& entry, std::size_t value, std::int64_t width,
                                        const SplitSizes& sizes, std::vector<std::pair<std::size_t, std::int64_t>>& seen) {
  using hlo::Opcode;
  if (std::ranges::find(seen, std::pair{value, width}) != seen.end()) return false;
  seen.emplace_back(value, width);
  for (int x; (x = reshape_round_trip_source(entry, value)) >= 0;) value = static_cast<std::size_t>(x);
  const hlo::Instruction& inst = entry.instructions[value];
  if (inst.shape.rank() != 2) return false;
  const auto operand = [&](std::size_t k) { return static_cast<std::size_t>(inst.operands[k]); };
  const bool elementwise = std::ranges::find(axiom_detail::kThroughUnary, inst.opcode) != std::end(axiom_detail::kThroughUnary) ||
                           std::ranges::find(axiom_detail::kThroughBinary, inst.opcode) != std::end(axiom_detail::kThroughBinary) ||
                           inst.opcode == Opcode::Clamp;
  if (elementwise) {
    if (inst.opcode == Opcode::Clamp ? sizes.clamp_narrower_than_computed(inst.shape.dtype, width)
                                     : sizes.narrower_than_computed(inst.opcode, inst.shape.dtype, width))
      return true;
    for (std::size_t k = 0; k < inst.operands.size(); ++k)
      if (entry.instructions[operand(k)].shape.rank() == 2 && transposed_in_narrow_pieces(entry, operand(k), width, sizes, seen))
        return true;
    return false;
  }
  if (inst.opcode == Opcode::Slice && !inst.operands.empty()) {
    const hlo::Instruction& source = entry.instructions[operand(0)];
    return source.shape.rank() == 2 && transposed_in_narrow_pieces(entry, operand(0), source.shape.dims[0], sizes, seen);
  }
  if (inst.opcode == Opcode::Concatenate && inst.dimensions == std::vector<std::int64_t>{0}) {
    if (const auto source = reassembled_rows_source(entry, inst)) return transposed_in_narrow_pieces(entry, *source, width, sizes, seen);
    for (std::size_t k = 0; k < inst.operands.size(); ++k) {
      const std::int64_t rows = entry.instructions[operand(k)].shape.dims[0];
      // Transposed, the pieces are joined along lanes, which takes a lane select (a blend)
      // no narrower than the ISA's: transpose(concat(s, s)) with s rows 8..15 of p0 + p0 puts
      // lanes 8..15 of a computed row in lanes 0..7 too (AMX sound soak seed 31337, kernel 188).
      // A kernel input's own rows are not computed: the blends broadcast its elements.
      if (!rows_of_kernel_input(entry, operand(k)) && sizes.narrower_than_computed(Opcode::Select, inst.shape.dtype, std::min(width, rows)))
        return true;
      if (transposed_in_narrow_pieces(entry, operand(k), std::min(width, rows), sizes, seen)) return true;
    }
  }
  return false;
}

// Each element of such a value also as bytes of its row-major bytes, which are offered in row
// pieces too (offer_intermediate_bytes): the lane-blend transpose (axioms/transpose_by_lanes.hpp)
// broadcasts every element, and an ISA that broadcasts only from memory (AMX's vbroadcastssl)
// then reads it from the rows stored to HBM. Without them, an element of a computed value was
// only its own term: transpose(concat(p0 + p0, p1 + p1)) ended on the node limit. Only on the
// attempts SelectionContext::element_bytes marks (GroupExplorer).
inline void offer_element_bytes(TensorBuilder& b, const hlo::Computation& entry, const std::vector<Id>& value,
                                std::span<const std::size_t> values) {
  for (std::size_t i : values) {
    const hlo::Instruction& inst = entry.instructions[i];
    const Shape type(inst.shape.dtype, inst.shape.dims);
    const std::int64_t width = bit_width(type.dtype) / 8;
    if (type.rank() != 2 || width <= 0) continue;
    const Id bytes = write_array(b, value[i], type);
    const std::int64_t rows = type.dims[0], cols = type.dims[1];
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t at = (r * cols + c) * width;
        const Id element = b.reshape(b.slice(value[i], {{r, r + 1, 1}, {c, c + 1, 1}}), {});
        const Id stored = b.bitcast(b.slice_dim(bytes, 0, at, at + width), type.dtype);
        b.g.unite(element, b.reshape(stored, {}));
      }
  }
}

// Whether `inst` is maximum(x, x), minimum(x, x) or select(p, x, x): its value is x.
inline bool of_one_value_twice(const hlo::Instruction& inst, const std::vector<Id>& operands) {
  using hlo::Opcode;
  if ((inst.opcode == Opcode::Maximum || inst.opcode == Opcode::Minimum) && operands.size() == 2) return operands[0] == operands[1];
  return inst.opcode == Opcode::Select && operands.size() == 3 && operands[1] == operands[2];
}

// Which rank-2 transposes of the entry another transpose undoes, through value-wise operations
// of one value (f(x), f(x, x), clamp(lo, x, hi) with scalar bounds): transpose(clamp(transpose(x)))
// is clamp(x) once the axioms push the outer transpose inward. The inner transpose is undone too
// when nothing else reads it or the values between. Such kernels need no transpose built (the
// group explorer then keeps the usual order of attempts). Nor do two more kinds, counted as
// undone: a transpose with a dimension of 1, whose bytes are its operand's, and a transpose of
// an outer product (a dot contracting one element), which dot-swap-operands turns into the
// outer product of the swapped operands, vectors whose transposes move no bytes either (the
// AVX outer product stored in [16,16] tiles started with the lane blends' attempts and spent
// 3.5 of its 5 s on them).
inline std::vector<bool> transposes_undone(const hlo::Computation& entry, const std::vector<bool>& needed) {
  using hlo::Opcode;
  const std::size_t n = entry.instructions.size();
  std::vector<std::size_t> readers(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (needed[i])
      for (int o : operands_read(entry, i)) ++readers[static_cast<std::size_t>(o)];
  const auto transpose_2d = [&](std::size_t i) {
    const hlo::Instruction& t = entry.instructions[i];
    return t.opcode == Opcode::Transpose && t.shape.rank() == 2;
  };
  // The one non-scalar operand of a value-wise operation of one value, or -1. The operations are
  // those the transpose-of-<op> axioms push a transpose through (axioms/elementwise.hpp's
  // kThroughUnary and kThroughBinary, which module 1 does not include) and clamp.
  const auto value_operand = [&](const hlo::Instruction& inst) -> int {
    constexpr Opcode kValueWise[] = {Opcode::Negate, Opcode::Exponential, Opcode::Abs,      Opcode::Sqrt,
                                     Opcode::Rsqrt,  Opcode::Tanh,        Opcode::Logistic, Opcode::Log,
                                     Opcode::Copy,   Opcode::Add,         Opcode::Subtract, Opcode::Multiply,
                                     Opcode::Divide, Opcode::Maximum,     Opcode::Minimum,  Opcode::Clamp};
    if (std::ranges::find(kValueWise, inst.opcode) == std::end(kValueWise) || inst.operands.empty()) return -1;
    int x = -1;
    for (int o : inst.operands) {
      if (entry.instructions[static_cast<std::size_t>(o)].shape.rank() == 0) continue;
      if (x >= 0 && o != x) return -1;
      x = o;
    }
    return x >= 0 && inst.shape.same_type(entry.instructions[static_cast<std::size_t>(x)].shape) ? x : -1;
  };
  const auto moves_no_bytes = [&](std::size_t i) {
    const auto& dims = entry.instructions[i].shape.dims;
    return std::ranges::find(dims, std::int64_t{1}) != dims.end();
  };
  const auto outer_product = [&](int v) {
    if (v < 0) return false;
    const hlo::Instruction& d = entry.instructions[static_cast<std::size_t>(v)];
    if (d.opcode != Opcode::Dot || d.shape.rank() != 2 || !d.dot.lhs_batch.empty() || d.operands.empty()) return false;
    const auto& lhs = entry.instructions[static_cast<std::size_t>(d.operands[0])].shape.dims;
    std::int64_t contracted = 1;
    for (std::int64_t c : d.dot.lhs_contracting) contracted *= lhs.at(static_cast<std::size_t>(c));
    return contracted == 1;
  };
  std::vector<bool> undone(n, false), undoes(n, false);  // undoes: the outer transpose of a pair
  for (std::size_t i = 0; i < n; ++i) {
    if (!needed[i] || !transpose_2d(i)) continue;
    if (moves_no_bytes(i) || outer_product(entry.instructions[i].operands[0])) {
      undone[i] = true;
      continue;
    }
    std::vector<std::size_t> between;
    int v = entry.instructions[i].operands[0];
    while (v >= 0 && !transpose_2d(static_cast<std::size_t>(v))) {
      between.push_back(static_cast<std::size_t>(v));
      v = value_operand(entry.instructions[static_cast<std::size_t>(v)]);
    }
    // transpose(transpose(transpose(x))) is a transpose of x: the outer one pairs with none.
    if (v < 0 || undoes[static_cast<std::size_t>(v)]) continue;
    undone[i] = undoes[i] = true;
    bool alone = readers[static_cast<std::size_t>(v)] == 1;
    for (std::size_t b : between) alone = alone && readers[b] == 1;
    if (alone) undone[static_cast<std::size_t>(v)] = true;
  }
  return undone;
}

}  // namespace init_detail

// Adds the kernel's entry computation to `graph`; see the header comment. With `outputs` (kernel
// output indices, ascending), only those outputs become roots and only the instructions they
// depend on enter the graph (one group of output_groups.hpp); the HBM image is the whole
// kernel's either way. Empty: every output and every instruction. `deeper_split`: levels of
// output byte split beyond the default (see below). `intermediate_pieces`: intermediate dots'
// bytes are offered as row pieces too (offer_intermediate_bytes).
inline InitialGraph add_kernel(TensorGraph& graph, SelectionContext& context, const hlo::Module& kernel,
                               std::span<const std::size_t> outputs = {}, int deeper_split = 0,
                               bool intermediate_pieces = false) {
  using hlo::Opcode;
  using init_detail::Id;
  TensorBuilder b(graph, context);
  InitialGraph result;
  result.image = sim::kernel_image(kernel, context.image);
  const hlo::Computation& entry = kernel.entry_computation();
  // Only what the outputs read is built: dead instructions would grow with rewriting too.
  // Every parameter keeps its input when all outputs are built (the HBM image has them all).
  std::vector<int> wanted;
  if (outputs.empty()) {
    wanted.push_back(entry.root);
  } else {
    const hlo::Instruction& root = entry.root_instruction();
    for (std::size_t k : outputs) {
      if (k >= result.image.outputs.size()) throw Error(ErrorKind::Internal, fmt::format("add_kernel: no output {}", k));
      wanted.push_back(root.opcode == Opcode::Tuple ? root.operands.at(k) : entry.root);
    }
  }
  std::vector<bool> needed = instructions_needed_by(entry, wanted);
  if (outputs.empty())
    for (int p : entry.parameters) needed.at(static_cast<std::size_t>(p)) = true;
  for (const hlo::Instruction& inst : entry.instructions)
    if (inst.opcode == Opcode::Parameter || &inst == &entry.root_instruction())
      result.reorders_bytes = result.reorders_bytes || reorders_bytes(inst.shape);

  std::vector<Id> value(entry.instructions.size(), egraph::kNoId);
  for (std::size_t p = 0; p < result.image.inputs.size(); ++p) {
    const sim::HbmRegion& region = result.image.inputs[p];
    if (!needed[static_cast<std::size_t>(entry.parameters[p])]) {
      result.inputs.push_back(egraph::kNoId);
      result.input_addresses.push_back(region.address);
      continue;
    }
    const Id input = graph.add(make_input(context.attributes, static_cast<std::int64_t>(p), region.bytes));
    result.inputs.push_back(input);
    result.input_addresses.push_back(region.address);
    value[static_cast<std::size_t>(entry.parameters[p])] = init_detail::read_array(b, input, region.shape);
  }

  for (std::size_t i = 0; i < entry.instructions.size(); ++i) {
    const hlo::Instruction& inst = entry.instructions[i];
    if (inst.opcode == Opcode::Parameter) continue;
    if (!needed[i] && static_cast<int>(i) != entry.root) continue;
    // The ROOT tuple's elements outside `outputs` were not built.
    const bool subset_root = !outputs.empty() && inst.opcode == Opcode::Tuple && static_cast<int>(i) == entry.root;
    if (const int x = reshape_round_trip_source(entry, i); x >= 0) {
      value[i] = value[static_cast<std::size_t>(x)];
      continue;
    }
    std::vector<Id> operands;
    for (int o : inst.operands) {
      if (o < 0 || static_cast<std::size_t>(o) >= i || (!subset_root && value[static_cast<std::size_t>(o)] == egraph::kNoId))
        init_detail::unsupported(inst, "uses a value outside the tensor language (a tuple?)");
      operands.push_back(value[static_cast<std::size_t>(o)]);
    }
    if (inst.opcode == Opcode::Tuple) {
      if (static_cast<int>(i) != entry.root) init_detail::unsupported(inst, "is not the ROOT (only a ROOT tuple is supported)");
      continue;
    }
    if (inst.shape.is_tuple) init_detail::unsupported(inst, "has a tuple result");
    // A concatenate of one operand is that operand. As a node of its own it matches none of the
    // binary concat rules, while rules on its operand grow the e-graph around it (a soak kernel
    // shrunk to one took 40 rewrite iterations and found nothing).
    if (inst.opcode == Opcode::Concatenate && operands.size() == 1) {
      value[i] = operands[0];
      continue;
    }
    // The maximum or minimum of a value and itself, and a select between a value and itself,
    // are that value (rewrites.md MAX-1, SEL-1; bit for bit but for a NaN's payload, which
    // verification does not tell apart). Random kernels write them; built, such a node was
    // another class for the axioms to split, transpose and re-associate (AMX soak kernel 3's
    // lane-blend transpose of minimum(p0, clamp(lo, minimum(p0, p0), hi)) hit the node limit,
    // the same kernel with p0 for minimum(p0, p0) compiles in 5 iterations). Module 1, not an
    // axiom: as an axiom it also absorbed re-associated terms (min(a, min(a, b)) = min(a, b)),
    // and the e-graphs of kernels with clamps grew by half.
    if (init_detail::of_one_value_twice(inst, operands)) {
      value[i] = operands.back();
      continue;
    }
    NodeAttributes a;
    TensorOp op;
    bool is_operator = true;
    switch (inst.opcode) {
      case Opcode::Constant: {
        if (!inst.literal) init_detail::unsupported(inst, "has a constant act cannot hold");
        const auto id = context.constants.intern(*inst.literal);
        op = make_constant(context.attributes, id, Shape(inst.shape.dtype, inst.shape.dims));
        is_operator = false;
        break;
      }
      case Opcode::Iota:
        a.dtype = inst.shape.dtype;
        a.shape = inst.shape.dims;
        a.dimensions = {inst.iota_dimension};
        break;
      case Opcode::Convert:
      case Opcode::BitcastConvert:
        a.dtype = inst.shape.dtype;
        break;
      case Opcode::Reshape:
      case Opcode::Broadcast:
        a.shape = inst.shape.dims;
        a.dimensions = inst.opcode == Opcode::Broadcast ? inst.dimensions : std::vector<std::int64_t>{};
        break;
      case Opcode::Transpose:
      case Opcode::Reverse:
      case Opcode::Concatenate:
        a.dimensions = inst.dimensions;
        break;
      case Opcode::Slice: a.slice = inst.slice; break;
      case Opcode::Pad: a.padding = inst.padding; break;
      case Opcode::Dot:
        a.dot = inst.dot;
        a.dtype = inst.shape.dtype;
        break;
      case Opcode::Compare: a.direction = inst.comparison_direction; break;
      case Opcode::Reduce: {
        if (operands.size() != 2) init_detail::unsupported(inst, "reduces several inputs at once");
        const auto callee = inst.called_computations.empty() ? -1 : inst.called_computations[0];
        if (callee < 0 || static_cast<std::size_t>(callee) >= kernel.computations.size())
          init_detail::unsupported(inst, "has no to_apply computation");
        a.reduce = recognise_reducer(kernel.computations[static_cast<std::size_t>(callee)]);
        if (a.reduce == ReduceKind::None)
          init_detail::unsupported(inst, fmt::format("applies '{}', which is not add/multiply/maximum/minimum/and/or",
                                                     kernel.computations[static_cast<std::size_t>(callee)].name));
        a.dimensions = inst.dimensions;
        break;
      }
      case Opcode::Select:
      case Opcode::Clamp:
        break;
      case Opcode::Bitcast:
        // A bitcast that keeps the element type is a reshape of the logical value only when
        // the layouts agree; act does not track layouts of intermediates, so require that.
        init_detail::unsupported(inst, "(layout-changing bitcast) is not supported; use reshape");
      default:
        if (!hlo::shape_detail::is_elementwise_unary(inst.opcode) &&
            !hlo::shape_detail::is_elementwise_binary(inst.opcode))
          init_detail::unsupported(inst, "is outside the tensor language of instruction selection");
    }
    if (is_operator) op = make_operator(context.attributes, inst.opcode, a);
    try {
      value[i] = inst.opcode == Opcode::Concatenate && operands.size() > 2
                     ? init_detail::nest_concatenate(graph, op, operands, inst.dimensions.at(0))
                     : graph.add(op, operands);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Internal) throw;
      init_detail::unsupported(inst, fmt::format("does not fit the tensor language: {}", e.message()));
    }
    if (!graph.data(value[i]).type.same_type(Shape(inst.shape.dtype, inst.shape.dims)))
      init_detail::unsupported(inst, fmt::format("has type {} in the tensor language, declared {}",
                                                 to_string(graph.data(value[i]).type), to_string(inst.shape)));
  }

  context.kernel_values.clear();
  for (const Id v : value)
    if (v != egraph::kNoId) context.kernel_values.push_back(v);

  const hlo::Instruction& root = entry.root_instruction();
  std::vector<Id> results;
  if (root.opcode == Opcode::Tuple) {
    for (int o : root.operands) results.push_back(value[static_cast<std::size_t>(o)]);
  } else {
    results.push_back(value[static_cast<std::size_t>(entry.root)]);
  }
  if (results.size() != result.image.outputs.size())
    init_detail::unsupported(root, "has a result act cannot place in HBM");
  for (std::size_t r = 0; r < results.size(); ++r)
    if (outputs.empty() || std::find(outputs.begin(), outputs.end(), r) != outputs.end()) result.outputs.push_back(r);
  for (std::size_t r : result.outputs) {
    result.roots.push_back(init_detail::write_array(b, results[r], result.image.outputs[r].shape));
    result.output_addresses.push_back(result.image.outputs[r].address);
  }
  // When the output is tiled or the ISA's registers are 2-D tiles, every output is also offered
  // as equal byte pieces (split_bytes: concat of byte slices, which concat^H in HBM realises for
  // free), so an instruction that writes part of an output (AMX: tilestored writes 1 KiB of
  // K1's 4 KiB result) can be used without an axiom splitting arbitrary values. Row-major
  // outputs on row-unit ISAs (QKV) are stored whole or split by the axioms, as before.
  // The split is 4 levels deep, deeper when the output has more rows (32 rows of f32[32,16]:
  // 5 levels, one piece per 64-byte row, which vmovups stores) or is a row concatenate of 2^k
  // equal pieces, so the pieces reach rows the instructions write. A 2-row piece would need
  // the axioms to split the value and its bytes, which they do not reach in time. K2's
  // s32[16,32] stays at 4 levels: 5 grew its e-graph past the point where K2 compiles.
  // `deeper_split` adds levels: the group explorer retries with it when an enumeration ends
  // without any pii graph (f32[16,32]{T(16,16)} needs 64-byte rows, 5 levels).
  // Row-major outputs on row-unit ISAs are split only on a retry (deeper_split > 0, from 4
  // levels): an output larger than any one store writes (QKV: 256 rows, store_rm takes 128)
  // is written piece by piece, and no axiom cuts an output's bytes.
  // An untiled row-major output wider than a partial store's block is also offered as the
  // overlay^H of such stores, band by band (output_overlay.hpp).
  for (std::size_t k = 0; k < result.roots.size(); ++k) {
    const Shape& shape = result.image.outputs[result.outputs[k]].shape;
    if (!reorders_bytes(shape)) init_detail::add_output_overlays(b, result.roots[k], Shape(shape.dtype, shape.dims));
  }
  const bool split_first = result.reorders_bytes || has_tile_unit(context.isa);
  const bool split_now = split_first || deeper_split > 0;
  // An output joined from several operands is also offered piece by piece (row_concat_bytes),
  // on tile-unit ISAs at once and on row-unit ISAs only on a retry, like the split above: on
  // QKV the pieces reorder extraction and the first candidates got dearer.
  if (split_now)
    for (std::size_t k = 0; k < result.roots.size(); ++k) {
      if (reorders_bytes(result.image.outputs[result.outputs[k]].shape)) continue;
      const int producer = root.opcode == Opcode::Tuple ? root.operands[result.outputs[k]] : entry.root;
      const Id pieces = init_detail::row_concat_bytes(b, entry, value, producer);
      if (pieces != egraph::kNoId) b.g.unite(result.roots[k], pieces);
    }
  if (split_now)
    for (std::size_t k = 0; k < result.roots.size(); ++k) {
      const std::size_t r = result.outputs[k];
      const hlo::Instruction& producer =
          root.opcode == Opcode::Tuple ? entry.instructions[static_cast<std::size_t>(root.operands[r])] : root;
      const auto& dims = producer.shape.dims;
      std::int64_t rows = 1;
      for (std::size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
      int depth = 4;
      while (depth < 10 && (std::int64_t{1} << depth) < rows) ++depth;
      if (producer.opcode == Opcode::Concatenate && producer.dimensions == std::vector<std::int64_t>{0})
        while (depth < 10 && producer.operands.size() % (std::size_t{1} << (depth + 1)) == 0) ++depth;
      if (!split_first) depth = 3;
      const std::int64_t smallest = init_detail::split_bytes(b, result.roots[k], depth + deeper_split);
      if (result.smallest_output_piece == 0 || smallest < result.smallest_output_piece) result.smallest_output_piece = smallest;
    }
  // intermediate_pieces: the group explorer's last retry (group_explorer.hpp).
  const std::vector<std::size_t> dots = init_detail::intermediate_dot_rows(entry, needed);
  result.intermediate_dot_rows = dots.size();
  for (std::size_t i : dots) {
    const hlo::Instruction& dot = entry.instructions[i];
    const bool canonical = dot.dot.lhs_batch.empty() && dot.dot.rhs_batch.empty() && dot.dot.lhs_contracting == std::vector<std::int64_t>{1} &&
                           dot.dot.rhs_contracting == std::vector<std::int64_t>{0};
    const bool reads_transpose = std::any_of(dot.operands.begin(), dot.operands.end(), [&](int o) {
      return entry.instructions[static_cast<std::size_t>(o)].opcode == Opcode::Transpose;
    });
    if (!canonical || reads_transpose) ++result.transposed_intermediate_dots;
  }
  const std::vector<bool> undone = init_detail::transposes_undone(entry, needed);
  const axiom_detail::IsaDotTypes dot_types = axiom_detail::isa_dot_types(context.isa);
  for (std::size_t i = 0; i < entry.instructions.size(); ++i) {
    const hlo::Instruction& inst = entry.instructions[i];
    if (needed[i] && init_detail::is_float_transpose_2d(inst)) {
      ++result.float_transposes;
      if (!undone[i]) ++result.float_transposes_kept;
    }
    if (!needed[i] || inst.opcode != Opcode::Convert || inst.operands.empty()) continue;
    const DType from = entry.instructions[static_cast<std::size_t>(inst.operands[0])].shape.dtype, to = inst.shape.dtype;
    if (is_integer_narrowing(from, to)) ++result.narrowing_converts;
    const init_detail::NarrowedProduct narrowed = init_detail::narrowed_product(entry, inst, dot_types);
    if (narrowed != init_detail::NarrowedProduct::None) ++result.narrowed_products;
    if (narrowed == init_detail::NarrowedProduct::InConcatenate) ++result.concatenated_narrowed_products;
  }
  if (intermediate_pieces) init_detail::offer_intermediate_bytes(b, entry, value, dots);
  const std::vector<std::size_t> transposed = init_detail::computed_transposed_values(entry, needed, undone);
  result.computed_transposed = transposed.size();
  const std::shared_ptr<const SplitSizes> sizes = split_sizes_of(context.isa);
  std::vector<Id> narrow;  // the transposed values transposed_in_narrow_pieces
  for (std::size_t i : transposed) {
    std::vector<std::pair<std::size_t, std::int64_t>> seen;
    if (init_detail::transposed_in_narrow_pieces(entry, i, entry.instructions[i].shape.dims[0], *sizes, seen))
      narrow.push_back(value[i]);
  }
  result.transposed_in_narrow_pieces = narrow.size();
  context.blended_from_own_elements.clear();
  if (context.element_bytes) {
    init_detail::offer_intermediate_bytes(b, entry, value, transposed);
    init_detail::offer_element_bytes(b, entry, value, transposed);
    context.blended_from_own_elements = std::move(narrow);
  }
  graph.rebuild();
  return result;
}

}  // namespace act::select
