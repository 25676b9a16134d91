// The tensor language of phase 1: what an e-node of the instruction-selection e-graph is.
//
// An e-node is a TensorOp (kind + HLO opcode + an interned attribute record) plus children:
//   Operator  an HLO tensor operator (opcode + attributes: dims, slice bounds, dot dims, ...)
//   Input     a kernel input, byte-flattened in HBM: u8[bytes] (attributes.index = parameter)
//   Constant  a compile-time constant tensor (attributes.index = id in the ConstantTable)
//   Pii       a partially instantiated instruction: ISA instruction (attributes.index) with its
//             alpha values fixed (attributes.alpha) and beta unknown; children are its inputs
//   SliceH    the identity instruction slice^H inside buffer attributes.index (attributes.slice)
//   ConcatH   the identity instruction concat^H inside buffer attributes.index (attributes.dimensions[0])
//   Undefined a value nobody reads (attributes.dtype/shape): the don't-care input of an
//             instruction whose result does not depend on it (tilestored's old memory window
//             when the stored rows cover it). IR->ISA rules create it; it is never part of a
//             kernel's semantics, and phase 2 gives it no producer (isa_rules.hpp, alloc/).
//   Embed     one child placed in a larger don't-care value: dynamic-update-slice of an Undefined
//             value of type (child dtype, attributes.shape) by the child at the constant start
//             indices attributes.dimensions. What a store that writes part of its window
//             (mvout_acc_stride, tilestored at a stride wider than its rows) computes when the
//             window's old bytes do not matter; only such a store's searcher matches it.
//   OverlayH  the identity instruction overlay^H inside buffer attributes.index (HBM): a
//             u8[attributes.shape[0]] value assembled from byte windows whose *written* bytes
//             are disjoint and cover it; child k's window starts attributes.dimensions[k]
//             bytes in and may run past the end (its bytes there are the store's don't-care
//             window, never written). Module 1 builds it over Embed windows (output_overlay.hpp).
// Attributes are interned in a NodeAttributesTable so an e-node is three small integers and
// hashing and comparing e-nodes never touches vectors.
#pragma once

#include <cstdint>
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "act/core/dtype.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"
#include "act/egraph/chunked_vector.hpp"
#include "act/egraph/id.hpp"
#include "act/egraph/language.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/opcode.hpp"
#include "act/isa/description.hpp"
#include "act/select/constant_pool.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::select {

enum class NodeKind : std::uint8_t { Operator, Input, Constant, Pii, SliceH, ConcatH, Undefined, Embed, OverlayH };

constexpr std::string_view to_string(NodeKind k) {
  switch (k) {
    case NodeKind::Operator: return "op";
    case NodeKind::Input: return "input";
    case NodeKind::Constant: return "constant";
    case NodeKind::Pii: return "pii";
    case NodeKind::SliceH: return "slice^H";
    case NodeKind::ConcatH: return "concat^H";
    case NodeKind::Undefined: return "undefined";
    case NodeKind::Embed: return "embed";
    case NodeKind::OverlayH: return "overlay^H";
  }
  return "?";
}

// The binary operation a reduce applies (its to_apply computation, recognised).
enum class ReduceKind : std::uint8_t { None, Add, Multiply, Maximum, Minimum, And, Or };

// The binary operation of a reducer computation: root = op(param0, param1) in either order.
inline ReduceKind recognise_reducer(const hlo::Computation& c) {
  if (c.parameters.size() != 2 || c.root < 0) return ReduceKind::None;
  const hlo::Instruction& root = c.root_instruction();
  if (root.operands.size() != 2) return ReduceKind::None;
  const int a = root.operands[0], b = root.operands[1];
  const bool params = (a == c.parameters[0] && b == c.parameters[1]) || (a == c.parameters[1] && b == c.parameters[0]);
  if (!params) return ReduceKind::None;
  switch (root.opcode) {
    case hlo::Opcode::Add: return ReduceKind::Add;
    case hlo::Opcode::Multiply: return ReduceKind::Multiply;
    case hlo::Opcode::Maximum: return ReduceKind::Maximum;
    case hlo::Opcode::Minimum: return ReduceKind::Minimum;
    case hlo::Opcode::And: return ReduceKind::And;
    case hlo::Opcode::Or: return ReduceKind::Or;
    default: return ReduceKind::None;
  }
}

// Everything about an e-node besides its kind, opcode and children. Fields unused by an
// opcode stay at their defaults so equal operators compare equal.
struct NodeAttributes {
  DType dtype = DType::u8;                    // result element type where the operator sets it
  std::vector<std::int64_t> shape;            // result dims where the operator sets them
  std::vector<std::int64_t> dimensions;       // transpose/broadcast/reduce/reverse/concatenate dims
  std::vector<hlo::SliceRange> slice;         // slice, slice^H
  std::vector<hlo::PadDimension> padding;     // pad
  hlo::DotDimensions dot;                     // dot
  ReduceKind reduce = ReduceKind::None;       // reduce
  std::optional<hlo::ComparisonDirection> direction;  // compare
  std::int64_t index = -1;                    // Input: parameter; Constant: table id; Pii: instruction; *H: buffer
  std::vector<std::int64_t> alpha;            // Pii: alpha values in declared order

  friend bool operator==(const NodeAttributes&, const NodeAttributes&) = default;

  std::uint64_t hash() const {
    std::uint64_t h = egraph::mix_hash(static_cast<std::uint64_t>(dtype), static_cast<std::uint64_t>(index));
    const auto mix_all = [&h](const auto& values) {
      h = egraph::mix_hash(h, values.size());
      for (auto v : values) h = egraph::mix_hash(h, static_cast<std::uint64_t>(v));
    };
    mix_all(shape);
    mix_all(dimensions);
    mix_all(alpha);
    for (const auto& s : slice) h = egraph::mix_hash(egraph::mix_hash(egraph::mix_hash(h, s.start), s.limit), s.stride);
    for (const auto& p : padding) h = egraph::mix_hash(egraph::mix_hash(egraph::mix_hash(h, p.low), p.high), p.interior);
    mix_all(dot.lhs_batch);
    mix_all(dot.lhs_contracting);
    mix_all(dot.rhs_batch);
    mix_all(dot.rhs_contracting);
    h = egraph::mix_hash(h, static_cast<std::uint64_t>(reduce));
    h = egraph::mix_hash(h, direction ? static_cast<std::uint64_t>(*direction) + 1 : 0);
    return egraph::finish_hash(h);
  }
};

// Interns NodeAttributes: equal records get the same id, forever (ids are never reused).
// Id 0 is the default record.
class NodeAttributesTable {
 public:
  NodeAttributesTable() { intern(NodeAttributes{}); }

  // Open addressing over the records' hashes (linear probing, at most half full): every rule
  // that builds a node interns its attributes, and a node-based hash map cost a few percent of
  // a compile.
  std::uint32_t intern(const NodeAttributes& a) {
    const std::uint64_t h = a.hash();
    if (2 * (records_.size() + 1) > slots_.size()) grow();
    std::size_t i = h & (slots_.size() - 1);
    for (; slots_[i] != 0; i = (i + 1) & (slots_.size() - 1)) {
      const std::uint32_t id = slots_[i] - 1;
      if (hashes_[id] == h && records_[id] == a) return id;
    }
    const auto id = static_cast<std::uint32_t>(records_.size());
    records_.emplace_back(a);
    hashes_.push_back(h);
    slots_[i] = id + 1;
    return id;
  }
  // Stable reference: records live in chunks, so interning more never moves them.
  const NodeAttributes& operator[](std::uint32_t id) const { return records_[id]; }
  std::size_t size() const { return records_.size(); }

 private:
  void grow() {
    std::vector<std::uint32_t> slots(std::max<std::size_t>(64, 2 * slots_.size()), 0);
    for (std::uint32_t id = 0; id < records_.size(); ++id) {
      std::size_t i = hashes_[id] & (slots.size() - 1);
      while (slots[i] != 0) i = (i + 1) & (slots.size() - 1);
      slots[i] = id + 1;
    }
    slots_ = std::move(slots);
  }

  egraph::ChunkedVector<NodeAttributes> records_;
  std::vector<std::uint64_t> hashes_;  // per record
  std::vector<std::uint32_t> slots_;   // record id + 1, or 0 for an empty slot; a power of two long
};

// The operator payload of an e-node.
struct TensorOp {
  NodeKind kind = NodeKind::Operator;
  hlo::Opcode opcode = hlo::Opcode::Copy;  // meaningful for Operator only
  std::uint32_t attributes = 0;            // id in the NodeAttributesTable

  friend bool operator==(const TensorOp&, const TensorOp&) = default;
};

// Discriminants: HLO opcodes first, then one per node kind, then one per ISA instruction, so
// e-matching seeds a pattern rooted at `dot` only from classes holding a dot.
inline constexpr std::uint32_t kInputDiscriminant = 512;
inline constexpr std::uint32_t kConstantDiscriminant = 513;
inline constexpr std::uint32_t kSliceHDiscriminant = 514;
inline constexpr std::uint32_t kConcatHDiscriminant = 515;
inline constexpr std::uint32_t kUndefinedDiscriminant = 516;
inline constexpr std::uint32_t kEmbedDiscriminant = 517;
inline constexpr std::uint32_t kOverlayHDiscriminant = 518;
inline constexpr std::uint32_t kPiiDiscriminantBase = 1024;

struct TensorLanguage {
  using Op = TensorOp;
  static std::uint64_t hash(const Op& op) {
    return egraph::finish_hash(egraph::mix_hash(
        egraph::mix_hash(static_cast<std::uint64_t>(op.kind), static_cast<std::uint64_t>(op.opcode)), op.attributes));
  }
  // Pii discriminants need the instruction index, which lives in the attributes; the language
  // cannot see the table, so Pii nodes carry it in `opcode`'s place: see make_pii().
  static std::uint32_t discriminant(const Op& op) {
    switch (op.kind) {
      case NodeKind::Operator: return static_cast<std::uint32_t>(op.opcode);
      case NodeKind::Input: return kInputDiscriminant;
      case NodeKind::Constant: return kConstantDiscriminant;
      case NodeKind::SliceH: return kSliceHDiscriminant;
      case NodeKind::ConcatH: return kConcatHDiscriminant;
      case NodeKind::Undefined: return kUndefinedDiscriminant;
      case NodeKind::Embed: return kEmbedDiscriminant;
      case NodeKind::OverlayH: return kOverlayHDiscriminant;
      case NodeKind::Pii: return kPiiDiscriminantBase + static_cast<std::uint32_t>(op.opcode);
    }
    return 0;
  }
};
static_assert(egraph::Language<TensorLanguage>);

// Constructors for TensorOps: they intern the attributes.
inline TensorOp make_operator(NodeAttributesTable& table, hlo::Opcode opcode, const NodeAttributes& a = {}) {
  return TensorOp{NodeKind::Operator, opcode, table.intern(a)};
}
inline TensorOp make_input(NodeAttributesTable& table, std::int64_t parameter, std::int64_t bytes) {
  NodeAttributes a;
  a.index = parameter;
  a.shape = {bytes};
  return TensorOp{NodeKind::Input, hlo::Opcode::Parameter, table.intern(a)};
}
inline TensorOp make_constant(NodeAttributesTable& table, std::int64_t constant_id, const Shape& type) {
  NodeAttributes a;
  a.index = constant_id;
  a.dtype = type.dtype;
  a.shape = type.dims;
  return TensorOp{NodeKind::Constant, hlo::Opcode::Constant, table.intern(a)};
}
// A don't-care value of the given type (see NodeKind::Undefined).
inline TensorOp make_undefined(NodeAttributesTable& table, const Shape& type) {
  NodeAttributes a;
  a.dtype = type.dtype;
  a.shape = type.dims;
  return TensorOp{NodeKind::Undefined, hlo::Opcode::Parameter, table.intern(a)};
}
// `part` (its type from the child) placed at `start` in a don't-care value of dims `dims`.
inline TensorOp make_embed(NodeAttributesTable& table, std::vector<std::int64_t> dims, std::vector<std::int64_t> start) {
  NodeAttributes a;
  a.shape = std::move(dims);
  a.dimensions = std::move(start);
  return TensorOp{NodeKind::Embed, hlo::Opcode::DynamicUpdateSlice, table.intern(a)};
}
// overlay^H of byte windows starting at `offsets` into a u8[bytes] value of buffer `buffer`.
inline TensorOp make_overlay_h(NodeAttributesTable& table, int buffer, std::int64_t bytes, std::vector<std::int64_t> offsets) {
  NodeAttributes a;
  a.index = buffer;
  a.shape = {bytes};
  a.dimensions = std::move(offsets);
  return TensorOp{NodeKind::OverlayH, hlo::Opcode::Concatenate, table.intern(a)};
}
// The instruction index doubles as the `opcode` field so the discriminant can tell
// instructions apart (Opcode is 8 bits: at most 256 instructions per ISA).
inline TensorOp make_pii(NodeAttributesTable& table, std::size_t instruction, std::vector<std::int64_t> alpha) {
  NodeAttributes a;
  a.index = static_cast<std::int64_t>(instruction);
  a.alpha = std::move(alpha);
  return TensorOp{NodeKind::Pii, static_cast<hlo::Opcode>(instruction), table.intern(a)};
}
inline TensorOp make_slice_h(NodeAttributesTable& table, int buffer, std::vector<hlo::SliceRange> ranges) {
  NodeAttributes a;
  a.index = buffer;
  a.slice = std::move(ranges);
  return TensorOp{NodeKind::SliceH, hlo::Opcode::Slice, table.intern(a)};
}
inline TensorOp make_concat_h(NodeAttributesTable& table, int buffer, std::int64_t dimension) {
  NodeAttributes a;
  a.index = buffer;
  a.dimensions = {dimension};
  return TensorOp{NodeKind::ConcatH, hlo::Opcode::Concatenate, table.intern(a)};
}

// What rules, the analysis and the extractor share: interned attributes, constants, the ISA.
struct SelectionContext {
  NodeAttributesTable attributes;
  ConstantTable constants;
  isa::IsaView isa;
  sim::ImageOptions image;  // how the kernel's HBM image is laid out (region alignment)
  // Output type of each (instruction, alpha) seen so far; filled lazily by infer_type
  // (type_inference.hpp) because computing it parses the instruction's semantics.
  mutable std::map<std::pair<std::size_t, std::vector<std::int64_t>>, Shape> pii_output_types;
  // Constant ids of the patterned constants rules build (identity, ones, zeros ...), by
  // "kind:dtype[dims]": building and interning a 64x64 literal per match dominated rewriting.
  std::map<std::string, std::int64_t> patterned_constants;
  // Whether constant id k is a square identity literal (axioms/support.hpp:
  // is_identity_constant), cached: slice-of-dot asks for every match, and scanning a 64x64
  // literal each time made rewriting a Gemmini GEMM several times slower.
  mutable std::map<std::int64_t, bool> identity_constants;
  // This context serves a retry that splits into row pieces an output module 1 first left
  // whole (GroupExplorer, row-unit ISAs). Then the axioms that move a slice through a
  // flattening reshape or a byte bitcast act too (axioms/slicing.hpp).
  bool row_piece_retry = false;
  // This context serves the group explorer's last retry: the axioms that narrow integer
  // arithmetic through a wrapping convert act too (narrowing-convert-of-dot and -of-<op>), and
  // transpose-by-lane-blends (axioms/transpose_by_lanes.hpp).
  bool last_retry = false;
  // This context serves an attempt that offers intermediate dots as row pieces (GroupExplorer).
  // Then, as on a row_piece_retry, dot-transposed-rhs-by-rows acts too (axioms/dot.hpp).
  bool intermediate_row_pieces = false;
  // This context serves an attempt where module 1 also writes each element of a transposed
  // computed value as 4 bytes of its stored rows (init/kernel_graph.hpp offer_element_bytes;
  // GroupExplorer decides when).
  bool element_bytes = false;
  // The class module 1 gave each value of the kernel (init/kernel_graph.hpp), for an axiom that
  // acts only on the kernel's own values and their pieces (transpose-by-lane-blends). Empty
  // when the e-graph was not built from a kernel (the soundness suite): no restriction then.
  std::vector<egraph::Id> kernel_values;
  // Of the classes whose elements module 1 offered as bytes (element_bytes), those whose
  // transpose, pushed inward, meets pieces no instruction computes (kernel_graph.hpp
  // transposed_in_narrow_pieces): their transposes are blended from their own elements whatever
  // else their classes hold (transposed_otherwise).
  std::vector<egraph::Id> blended_from_own_elements;

  const NodeAttributes& attributes_of(const TensorOp& op) const { return attributes[op.attributes]; }
};

}  // namespace act::select
