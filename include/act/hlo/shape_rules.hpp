// XLA's shape rules, written once: the result type of an operator from its operand types and
// attributes, or the first problem found. Used by the HLO parser's checks (hlo/shape_check.hpp),
// phase 1's type inference (select/ir/type_inference.hpp) and compile-time ISA validation
// (isa/validate.hpp).
//
// Constexpr functions over plain data: operand types are views (element type + dims), the answer
// is a ResultType holding the inferred type or a Finding (a Problem plus which operand, dim or
// attribute entry). Callers word their own messages (fmt at run time, a fixed-capacity message
// at compile time) from the Finding and their own data.
//
// A size below 0 is not a known static size (`?`, `<=N`, a symbolic semantics dim): it agrees
// with every size and makes what depends on it unknown. Arithmetic on sizes (pad, concatenate,
// reduce-window, element counts) is checked: a result beyond int64 is Problem::SizeOverflow.
//
// Where act departs from XLA, on purpose: broadcast dimensions need not be sorted (only unique;
// transpose-of-broadcast folds a permutation into them), a select predicate and clamp bounds
// may be scalars, and dot operands may have different element types (the result type is the
// preferred one, which the caller passes).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "act/core/dtype.hpp"
#include "act/core/view.hpp"
#include "act/hlo/opcode.hpp"

namespace act::hlo {

// slice={[start:limit:stride], ...}, one per dimension.
struct SliceRange {
  std::int64_t start = 0, limit = 0, stride = 1;
  friend constexpr bool operator==(const SliceRange&, const SliceRange&) = default;
};

// padding=low_high_interior per dimension.
struct PadDimension {
  std::int64_t low = 0, high = 0, interior = 0;
  friend constexpr bool operator==(const PadDimension&, const PadDimension&) = default;
};

namespace shape_rules {

inline constexpr std::int64_t kUnknownSize = -1;
// Results have at most this many dimensions (operands may have any number).
inline constexpr std::size_t kMaxRank = 64;
// Finding::operand / Finding::other naming the result type as written, not an operand.
inline constexpr int kResult = -1;

// An operand (or a written result type) as the rules see it.
struct TensorType {
  DType dtype = DType::f32;
  View<std::int64_t> dims;
  constexpr std::size_t rank() const { return dims.size(); }
};

enum class Problem : std::uint8_t {
  None,
  NotModelled,                // no shape rule for this opcode here
  ResultTypeRequired,         // the opcode's result type must be written (reshape, broadcast, ...)
  OperandCount,               // value operands given, bound expected (the minimum when variadic)
  RankTooLarge,               // the result would have `value` dims, more than kMaxRank
  SizeOverflow,               // a size (of dim `index`, or an element count) does not fit int64
  ElementTypesDiffer,         // `operand` and `other` (or kResult) have different element types
  DimensionsDiffer,           // `operand` and `other` (or kResult) have different dims; concatenate: dim `index`
  RanksDiffer,                // `operand` and `other` have different ranks
  NotPred,                    // `operand` (select's predicate) is not pred
  NotScalar,                  // `operand` must be a scalar
  ListLength,                 // the attribute list has `value` entries, `bound` wanted
  DimensionOutOfRange,        // list entry `index` (= `value`) of `operand`'s list is outside [0, bound)
  DimensionRepeated,          // list entry `index` (= `value`) appeared before
  ElementCountsDiffer,        // reshape: `value` elements in, `bound` out
  UnsizedElementType,         // bitcast-convert of a type without a bit width
  IncompatibleBitWidths,      // bitcast-convert: neither width divides the other
  RatioDimensionMissing,      // bitcast-convert: the narrow side (`operand`) needs one more dim of size `value`
  RatioDimensionWrong,        // bitcast-convert: minor-most dim of `operand` is `bound`, must be `value`
  DimensionsDifferBesidesRatio,  // bitcast-convert: the narrow side without its last dim differs from the wide
  BroadcastSizeMismatch,      // operand dim `index` (size `value`) vs result dim dimensions[index] (size `bound`)
  BadStride,                  // slice: stride `value` of dim `index` is not positive
  SliceOutOfBounds,           // slice: range of dim `index` outside [0, `bound`]
  StartIndexVectorType,       // dynamic-(update-)slice: the legacy index vector is not integral
  StartIndexCount,            // `value` start indices for an operand of rank `bound`
  BadStartIndex,              // start index operand `operand` is not an integer scalar
  SliceSizeTooLarge,          // dynamic-slice: size `value` of dim `index` outside [0, `bound`]
  UpdateTooLarge,             // dynamic-update-slice: update dim `index` size `value` > operand's `bound`
  NegativeInterior,           // pad: interior padding `value` of dim `index`
  NegativeSize,               // pad: dim `index` would have size `value`
  ContractingCountsDiffer,    // dot: lhs/rhs contracting lists differ in length
  BatchCountsDiffer,          // dot: lhs/rhs batch lists differ in length
  ContractingSizesDiffer,     // dot: contracting pair `index`: lhs size `value`, rhs size `bound`
  BatchSizesDiffer,           // dot: batch pair `index`: lhs size `value`, rhs size `bound`
  IotaOfScalar,               // iota with a rank-0 result
  WindowNotPositive,          // reduce-window: a size, stride or dilation of dim `index` is not positive
};

// Where a rule failed. Which fields mean something depends on the problem (see Problem).
struct Finding {
  Problem problem = Problem::None;
  int operand = 0;
  int other = 0;
  std::size_t index = 0;
  std::int64_t value = 0;
  std::int64_t bound = 0;
};

// A rule's answer: the result type, or the finding that stopped it.
struct ResultType {
  Finding finding;
  DType dtype = DType::f32;
  std::array<std::int64_t, kMaxRank> dims{};
  std::size_t rank = 0;

  constexpr bool ok() const { return finding.problem == Problem::None; }
  constexpr Problem problem() const { return finding.problem; }
  constexpr View<std::int64_t> dimensions() const { return {dims.data(), rank}; }
  constexpr TensorType type() const { return {dtype, dimensions()}; }
};

struct DotDims {
  View<std::int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
};

// reduce-window's window, one entry per operand dimension in each list.
struct Window {
  View<std::int64_t> size, stride, padding_low, padding_high, base_dilation, window_dilation;
};

// The typed attributes the rules read; each opcode reads the ones XLA gives it.
struct Attributes {
  View<std::int64_t> dimensions;  // transpose broadcast reduce reverse concatenate
  DotDims dot;
  View<SliceRange> slice;
  View<PadDimension> padding;
  View<std::int64_t> dynamic_slice_sizes;
  std::int64_t iota_dimension = -1;
  Window window;
};

// ---- small helpers, exposed because callers compare types the same way

constexpr bool sizes_agree(std::int64_t a, std::int64_t b) { return a < 0 || b < 0 || a == b; }

constexpr bool same_dims(View<std::int64_t> a, View<std::int64_t> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!sizes_agree(a[i], b[i])) return false;
  return true;
}

// Same element type and agreeing dims.
constexpr bool agree(const TensorType& a, const TensorType& b) { return a.dtype == b.dtype && same_dims(a.dims, b.dims); }

constexpr bool fully_known(View<std::int64_t> dims) {
  for (auto d : dims)
    if (d < 0) return false;
  return true;
}

// The product of known dims; false when it does not fit in int64.
constexpr bool element_count(View<std::int64_t> dims, std::int64_t& count) {
  count = 1;
  for (auto d : dims)
    if (__builtin_mul_overflow(count, d, &count)) return false;
  return true;
}

namespace detail {

constexpr ResultType failed(const Finding& f) {
  ResultType r;
  r.finding = f;
  return r;
}

constexpr ResultType failure(Problem p, int operand = 0, int other = 0, std::size_t index = 0, std::int64_t value = 0,
                             std::int64_t bound = 0) {
  ResultType r;
  r.finding = {p, operand, other, index, value, bound};
  return r;
}

// An attribute list with `given` entries where `wanted` belong.
constexpr ResultType wrong_length(std::size_t given, std::size_t wanted) {
  return failure(Problem::ListLength, 0, 0, 0, static_cast<std::int64_t>(given), static_cast<std::int64_t>(wanted));
}

// A result being built; push() reports RankTooLarge instead of writing past kMaxRank.
struct Builder {
  ResultType result;
  std::size_t wanted = 0;

  constexpr explicit Builder(DType t) { result.dtype = t; }
  constexpr void push(std::int64_t size) {
    if (result.rank < kMaxRank) result.dims[result.rank++] = size;
    ++wanted;
  }
  constexpr void push_all(View<std::int64_t> dims) {
    for (auto d : dims) push(d);
  }
  constexpr ResultType done() const {
    if (wanted > kMaxRank) return failure(Problem::RankTooLarge, 0, 0, 0, static_cast<std::int64_t>(wanted));
    return result;
  }
};

constexpr ResultType of_type(const TensorType& t) {
  Builder b(t.dtype);
  b.push_all(t.dims);
  return b.done();
}

constexpr bool contains(View<std::int64_t> list, std::size_t d) {
  for (auto x : list)
    if (x == static_cast<std::int64_t>(d)) return true;
  return false;
}

// Entries of first ++ second are distinct dims of a rank-`rank` operand. Findings count
// positions in the concatenation and name `operand`.
constexpr Finding check_dimension_list(View<std::int64_t> first, View<std::int64_t> second,
                                       std::size_t rank, int operand) {
  const std::size_t n = first.size() + second.size();
  auto at = [&](std::size_t i) { return i < first.size() ? first[i] : second[i - first.size()]; };
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t d = at(i);
    if (d < 0 || d >= static_cast<std::int64_t>(rank))
      return {Problem::DimensionOutOfRange, operand, 0, i, d, static_cast<std::int64_t>(rank)};
    for (std::size_t j = 0; j < i; ++j)
      if (at(j) == d) return {Problem::DimensionRepeated, operand, 0, i, d, static_cast<std::int64_t>(rank)};
  }
  return {};
}

constexpr Finding check_dimension_list(View<std::int64_t> list, std::size_t rank, int operand = 0) {
  return check_dimension_list(list, {}, rank, operand);
}

// Start index operands of dynamic-slice (first = 1) and dynamic-update-slice (first = 2).
constexpr Finding check_start_indices(const TensorType& operand, View<TensorType> indices, int first) {
  const std::size_t n = indices.size();
  if (n == 1 && operand.rank() != 1 && indices[0].rank() == 1) {  // XLA's legacy R1 index vector
    if (!is_integer(indices[0].dtype)) return {Problem::StartIndexVectorType, first};
    if (!sizes_agree(indices[0].dims[0], static_cast<std::int64_t>(operand.rank())))
      return {Problem::StartIndexCount, 0, 0, 0, indices[0].dims[0], static_cast<std::int64_t>(operand.rank())};
    return {};
  }
  if (n != operand.rank())
    return {Problem::StartIndexCount, 0, 0, 0, static_cast<std::int64_t>(n), static_cast<std::int64_t>(operand.rank())};
  for (std::size_t i = 0; i < n; ++i)
    if (indices[i].rank() != 0 || !is_integer(indices[i].dtype) || indices[i].dtype == DType::pred)
      return {Problem::BadStartIndex, first + static_cast<int>(i), 0, i};
  return {};
}

}  // namespace detail

// ---- the rules, one per operator (operand numbers in findings follow the operand order)

constexpr bool is_elementwise_binary(Opcode op) {
  switch (op) {
    case Opcode::Add: case Opcode::Subtract: case Opcode::Multiply: case Opcode::Divide: case Opcode::Maximum:
    case Opcode::Minimum: case Opcode::Power: case Opcode::Remainder: case Opcode::And: case Opcode::Or:
    case Opcode::Xor: case Opcode::ShiftLeft: case Opcode::ShiftRightLogical: case Opcode::ShiftRightArithmetic:
    case Opcode::Atan2:
      return true;
    default: return false;
  }
}

constexpr bool is_elementwise_unary(Opcode op) {
  switch (op) {
    case Opcode::Abs: case Opcode::Negate: case Opcode::Sign: case Opcode::Floor: case Opcode::Ceil:
    case Opcode::RoundNearestEven: case Opcode::RoundNearestAfz: case Opcode::Not: case Opcode::Copy:
    case Opcode::Real: case Opcode::Imag: case Opcode::IsFinite: case Opcode::Popcnt:
    case Opcode::CountLeadingZeros: case Opcode::Exponential: case Opcode::Log: case Opcode::Tanh:
    case Opcode::Logistic: case Opcode::Sqrt: case Opcode::Rsqrt: case Opcode::Cbrt: case Opcode::Sine:
    case Opcode::Cosine: case Opcode::Tan: case Opcode::ExponentialMinusOne: case Opcode::LogPlusOne:
    case Opcode::Erf: case Opcode::Acos: case Opcode::Acosh: case Opcode::Asin: case Opcode::Asinh:
    case Opcode::Atanh: case Opcode::Sinh: case Opcode::Cosh:
      return true;
    default: return false;
  }
}

// Same dims; is-finite gives pred, real/imag/abs of a complex type its component type.
constexpr ResultType elementwise_unary(Opcode op, const TensorType& x) {
  ResultType r = detail::of_type(x);
  if (op == Opcode::IsFinite) r.dtype = DType::pred;
  if ((op == Opcode::Real || op == Opcode::Imag || op == Opcode::Abs) && (x.dtype == DType::c64 || x.dtype == DType::c128))
    r.dtype = x.dtype == DType::c64 ? DType::f32 : DType::f64;
  return r;
}

constexpr ResultType elementwise_binary(const TensorType& a, const TensorType& b) {
  if (!same_dims(a.dims, b.dims)) return detail::failure(Problem::DimensionsDiffer, 0, 1);
  if (a.dtype != b.dtype) return detail::failure(Problem::ElementTypesDiffer, 0, 1);
  return detail::of_type(a);
}

constexpr ResultType compare(const TensorType& a, const TensorType& b) {
  ResultType r = elementwise_binary(a, b);
  r.dtype = DType::pred;
  return r;
}

// select(pred, on_true, on_false); a scalar predicate selects whole arrays.
constexpr ResultType select(const TensorType& p, const TensorType& t, const TensorType& f) {
  if (p.dtype != DType::pred) return detail::failure(Problem::NotPred, 0);
  if (!same_dims(t.dims, f.dims)) return detail::failure(Problem::DimensionsDiffer, 1, 2);
  if (t.dtype != f.dtype) return detail::failure(Problem::ElementTypesDiffer, 1, 2);
  if (p.rank() != 0 && !same_dims(p.dims, t.dims)) return detail::failure(Problem::DimensionsDiffer, 0, 1);
  return detail::of_type(t);
}

// clamp(lo, x, hi); bounds may be scalars.
constexpr ResultType clamp(const TensorType& lo, const TensorType& x, const TensorType& hi) {
  const TensorType* bounds[] = {&lo, &hi};
  for (int i = 0; i < 2; ++i) {
    const TensorType& b = *bounds[i];
    const int operand = i == 0 ? 0 : 2;
    if (b.dtype != x.dtype) return detail::failure(Problem::ElementTypesDiffer, operand, 1);
    if (b.rank() != 0 && !same_dims(b.dims, x.dims)) return detail::failure(Problem::DimensionsDiffer, operand, 1);
  }
  return detail::of_type(x);
}

// The rules below, for opcodes whose result type is written (result_is_written), check the
// operands against it and return it.

constexpr ResultType convert(const TensorType& x, const TensorType& result) {
  if (!same_dims(x.dims, result.dims)) return detail::failure(Problem::DimensionsDiffer, 0, kResult);
  return detail::of_type(result);
}

// XLA's bitcast-convert: equal widths keep the dims; otherwise the narrow side has one more,
// minor-most dim whose size is the width ratio, and the other dims are the wide side's.
constexpr ResultType bitcast_convert(const TensorType& x, const TensorType& result) {
  const int in_bits = bit_width(x.dtype), out_bits = bit_width(result.dtype);
  if (in_bits == 0 || out_bits == 0) return detail::failure(Problem::UnsizedElementType);
  if (in_bits == out_bits) {
    if (!same_dims(x.dims, result.dims)) return detail::failure(Problem::DimensionsDiffer, 0, kResult);
    return detail::of_type(result);
  }
  const bool narrowing = in_bits > out_bits;
  const int wide_bits = narrowing ? in_bits : out_bits, narrow_bits = narrowing ? out_bits : in_bits;
  if (wide_bits % narrow_bits != 0) return detail::failure(Problem::IncompatibleBitWidths);
  const std::int64_t ratio = wide_bits / narrow_bits;
  const TensorType& wide = narrowing ? x : result;
  const TensorType& narrow = narrowing ? result : x;
  const int narrow_side = narrowing ? kResult : 0;
  if (narrow.rank() != wide.rank() + 1) return detail::failure(Problem::RatioDimensionMissing, narrow_side, 0, 0, ratio);
  const std::int64_t last = narrow.dims[narrow.rank() - 1];
  if (!sizes_agree(last, ratio))
    return detail::failure(Problem::RatioDimensionWrong, narrow_side, 0, narrow.rank() - 1, ratio, last);
  if (!same_dims(narrow.dims.first(wide.rank()), wide.dims))
    return detail::failure(Problem::DimensionsDifferBesidesRatio, narrow_side);
  return detail::of_type(result);
}

// bitcast-convert to `to` when only the element type is known: the result dims follow from the
// operand (one minor-most dim added or removed), then the rule above checks them.
constexpr ResultType bitcast_convert_to(const TensorType& x, DType to) {
  const int in_bits = bit_width(x.dtype), out_bits = bit_width(to);
  detail::Builder b(to);
  if (in_bits > out_bits && out_bits > 0) {
    b.push_all(x.dims);
    b.push(in_bits / out_bits);
  } else if (in_bits < out_bits && x.rank() > 0) {
    b.push_all(x.dims.first(x.rank() - 1));
  } else {
    b.push_all(x.dims);
  }
  const ResultType proposal = b.done();
  if (!proposal.ok()) return proposal;
  return bitcast_convert(x, proposal.type());
}

constexpr ResultType reshape(const TensorType& x, const TensorType& result) {
  if (x.dtype != result.dtype) return detail::failure(Problem::ElementTypesDiffer, 0, kResult);
  if (fully_known(x.dims) && fully_known(result.dims)) {
    std::int64_t in = 0, out = 0;
    if (!element_count(x.dims, in) || !element_count(result.dims, out)) return detail::failure(Problem::SizeOverflow);
    if (in != out) return detail::failure(Problem::ElementCountsDiffer, 0, kResult, 0, in, out);
  }
  return detail::of_type(result);
}

// XLA's broadcast-in-dim: operand dim k becomes result dim dimensions[k]; a size-1 operand dim
// may become any size.
constexpr ResultType broadcast(const TensorType& x, const TensorType& result, View<std::int64_t> dimensions) {
  if (dimensions.size() != x.rank())
    return detail::wrong_length(dimensions.size(), x.rank());
  if (x.dtype != result.dtype) return detail::failure(Problem::ElementTypesDiffer, 0, kResult);
  if (const Finding f = detail::check_dimension_list(dimensions, result.rank(), kResult); f.problem != Problem::None) return detail::failed(f);
  for (std::size_t k = 0; k < dimensions.size(); ++k) {
    const std::int64_t from = x.dims[k], to = result.dims[static_cast<std::size_t>(dimensions[k])];
    if (from != 1 && !sizes_agree(from, to)) return detail::failure(Problem::BroadcastSizeMismatch, 0, kResult, k, from, to);
  }
  return detail::of_type(result);
}

constexpr ResultType iota(const TensorType& result, std::int64_t dimension) {
  if (result.rank() == 0 && dimension < 0) return detail::failure(Problem::IotaOfScalar, kResult);
  if (dimension < 0 || dimension >= static_cast<std::int64_t>(result.rank()))
    return detail::failure(Problem::DimensionOutOfRange, kResult, 0, 0, dimension, static_cast<std::int64_t>(result.rank()));
  return detail::of_type(result);
}

// Result dim i is operand dim permutation[i].
constexpr ResultType transpose(const TensorType& x, View<std::int64_t> permutation) {
  if (permutation.size() != x.rank())
    return detail::wrong_length(permutation.size(), x.rank());
  if (const Finding f = detail::check_dimension_list(permutation, x.rank()); f.problem != Problem::None) return detail::failed(f);
  detail::Builder b(x.dtype);
  for (auto d : permutation) b.push(x.dims[static_cast<std::size_t>(d)]);
  return b.done();
}

constexpr ResultType slice(const TensorType& x, View<SliceRange> ranges) {
  if (ranges.size() != x.rank())
    return detail::wrong_length(ranges.size(), x.rank());
  detail::Builder b(x.dtype);
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const SliceRange& r = ranges[d];
    const std::int64_t size = x.dims[d];
    if (r.stride < 1) return detail::failure(Problem::BadStride, 0, 0, d, r.stride);
    if (size < 0 && r.limit < 0 && r.start >= 0) {  // `[k:]` of an unknown (symbolic) dim: unknown
      b.push(-1);
      continue;
    }
    if (r.start < 0 || r.limit < r.start || (size >= 0 && r.limit > size))
      return detail::failure(Problem::SliceOutOfBounds, 0, 0, d, r.start, size);
    const std::int64_t extent = r.limit - r.start;  // cannot overflow: 0 <= start <= limit
    b.push(extent / r.stride + (extent % r.stride != 0 ? 1 : 0));
  }
  return b.done();
}

// dynamic-slice(operand, start indices...), dynamic_slice_sizes.
constexpr ResultType dynamic_slice(const TensorType& x, View<TensorType> indices,
                                   View<std::int64_t> sizes) {
  if (const Finding f = detail::check_start_indices(x, indices, 1); f.problem != Problem::None) return detail::failed(f);
  if (sizes.size() != x.rank())
    return detail::wrong_length(sizes.size(), x.rank());
  for (std::size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || (x.dims[d] >= 0 && sizes[d] > x.dims[d]))
      return detail::failure(Problem::SliceSizeTooLarge, 0, 0, d, sizes[d], x.dims[d]);
  detail::Builder b(x.dtype);
  b.push_all(sizes);
  return b.done();
}

// dynamic-update-slice(operand, update, start indices...).
constexpr ResultType dynamic_update_slice(const TensorType& x, const TensorType& update, View<TensorType> indices) {
  if (const Finding f = detail::check_start_indices(x, indices, 2); f.problem != Problem::None) return detail::failed(f);
  if (update.rank() != x.rank()) return detail::failure(Problem::RanksDiffer, 1, 0);
  if (update.dtype != x.dtype) return detail::failure(Problem::ElementTypesDiffer, 1, 0);
  for (std::size_t d = 0; d < x.rank(); ++d)
    if (update.dims[d] >= 0 && x.dims[d] >= 0 && update.dims[d] > x.dims[d])
      return detail::failure(Problem::UpdateTooLarge, 1, 0, d, update.dims[d], x.dims[d]);
  return detail::of_type(x);
}

// Operands of one element type and rank, equal but along dimensions[0], where sizes add up.
constexpr ResultType concatenate(View<TensorType> operands, View<std::int64_t> dimensions) {
  if (operands.empty()) return detail::failure(Problem::OperandCount, 0, 0, 0, 0, 1);
  if (dimensions.size() != 1)
    return detail::wrong_length(dimensions.size(), 1);
  const TensorType& first = operands[0];
  const std::int64_t d = dimensions[0];
  if (d < 0 || d >= static_cast<std::int64_t>(first.rank()))
    return detail::failure(Problem::DimensionOutOfRange, 0, 0, 0, d, static_cast<std::int64_t>(first.rank()));
  ResultType out = detail::of_type(first);
  if (!out.ok()) return out;
  const auto axis = static_cast<std::size_t>(d);
  for (std::size_t i = 1; i < operands.size(); ++i) {
    const TensorType& s = operands[i];
    const int operand = static_cast<int>(i);
    if (s.dtype != first.dtype) return detail::failure(Problem::ElementTypesDiffer, operand, 0);
    if (s.rank() != first.rank()) return detail::failure(Problem::RanksDiffer, operand, 0);
    for (std::size_t k = 0; k < s.rank(); ++k) {
      if (k == axis) {
        if (out.dims[k] < 0 || s.dims[k] < 0) out.dims[k] = kUnknownSize;
        else if (__builtin_add_overflow(out.dims[k], s.dims[k], &out.dims[k]))
          return detail::failure(Problem::SizeOverflow, operand, 0, k);
      } else if (!sizes_agree(out.dims[k], s.dims[k])) {
        return detail::failure(Problem::DimensionsDiffer, operand, 0, k, s.dims[k], out.dims[k]);
      }
    }
  }
  return out;
}

// pad(operand, scalar value): size low + high + n + (n - 1) * interior per dim. As XLA's
// InferPadShape, the value may differ from the operand in floating-point precision only (bf16
// data, f32 value); the result has the more precise of the two (a declared result may have
// either: XLA's mixed-precision verifier; the parser then converts both to it).
constexpr ResultType pad(const TensorType& x, const TensorType& value, View<PadDimension> padding) {
  if (value.rank() != 0) return detail::failure(Problem::NotScalar, 1);
  const bool both_float = is_float(value.dtype) && is_float(x.dtype);
  if (value.dtype != x.dtype && !both_float) return detail::failure(Problem::ElementTypesDiffer, 1, 0);
  if (padding.size() != x.rank())
    return detail::wrong_length(padding.size(), x.rank());
  detail::Builder b(byte_width(value.dtype) > byte_width(x.dtype) ? value.dtype : x.dtype);
  for (std::size_t d = 0; d < padding.size(); ++d) {
    const PadDimension& p = padding[d];
    if (p.interior < 0) return detail::failure(Problem::NegativeInterior, 0, 0, d, p.interior);
    const std::int64_t n = x.dims[d];
    if (n < 0) {
      b.push(kUnknownSize);
      continue;
    }
    std::int64_t size = 0;
    if (__builtin_mul_overflow(n > 0 ? n - 1 : 0, p.interior, &size) || __builtin_add_overflow(size, n, &size) ||
        __builtin_add_overflow(size, p.low, &size) || __builtin_add_overflow(size, p.high, &size))
      return detail::failure(Problem::SizeOverflow, 0, 0, d);
    if (size < 0) return detail::failure(Problem::NegativeSize, 0, 0, d, size);
    b.push(size);
  }
  return b.done();
}

constexpr ResultType reverse(const TensorType& x, View<std::int64_t> dimensions) {
  if (const Finding f = detail::check_dimension_list(dimensions, x.rank()); f.problem != Problem::None) return detail::failed(f);
  return detail::of_type(x);
}

// reduce(inputs..., inits...) over `dimensions`: each input (all of one shape) loses those dims;
// result i has init i's element type (the answer carries result 0's; variadic callers make a
// tuple with the others').
constexpr ResultType reduce(View<TensorType> inputs, View<TensorType> inits,
                            View<std::int64_t> dimensions) {
  if (inputs.empty() || inputs.size() != inits.size())
    return detail::failure(Problem::OperandCount, 0, 0, 0, static_cast<std::int64_t>(inputs.size() + inits.size()), 2);
  const TensorType& first = inputs[0];
  if (const Finding f = detail::check_dimension_list(dimensions, first.rank()); f.problem != Problem::None) return detail::failed(f);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0 && !same_dims(inputs[i].dims, first.dims))
      return detail::failure(Problem::DimensionsDiffer, static_cast<int>(i), 0);
    if (inits[i].rank() != 0) return detail::failure(Problem::NotScalar, static_cast<int>(inputs.size() + i), 0, i);
  }
  detail::Builder b(inits[0].dtype);
  for (std::size_t d = 0; d < first.rank(); ++d)
    if (!detail::contains(dimensions, d)) b.push(first.dims[d]);
  return b.done();
}

// dot: batch dims, then lhs's free dims, then rhs's. `result_type` is the preferred element type.
constexpr ResultType dot(const TensorType& lhs, const TensorType& rhs, const DotDims& d, DType result_type) {
  if (d.lhs_contracting.size() != d.rhs_contracting.size()) return detail::failure(Problem::ContractingCountsDiffer);
  if (d.lhs_batch.size() != d.rhs_batch.size()) return detail::failure(Problem::BatchCountsDiffer);
  for (int side = 0; side < 2; ++side) {
    const Finding f = side == 0 ? detail::check_dimension_list(d.lhs_batch, d.lhs_contracting, lhs.rank(), 0)
                                : detail::check_dimension_list(d.rhs_batch, d.rhs_contracting, rhs.rank(), 1);
    if (f.problem != Problem::None) return detail::failed(f);
  }
  for (std::size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    const std::int64_t l = lhs.dims[static_cast<std::size_t>(d.lhs_contracting[i])];
    const std::int64_t r = rhs.dims[static_cast<std::size_t>(d.rhs_contracting[i])];
    if (!sizes_agree(l, r)) return detail::failure(Problem::ContractingSizesDiffer, 0, 1, i, l, r);
  }
  for (std::size_t i = 0; i < d.lhs_batch.size(); ++i) {
    const std::int64_t l = lhs.dims[static_cast<std::size_t>(d.lhs_batch[i])];
    const std::int64_t r = rhs.dims[static_cast<std::size_t>(d.rhs_batch[i])];
    if (!sizes_agree(l, r)) return detail::failure(Problem::BatchSizesDiffer, 0, 1, i, l, r);
  }
  detail::Builder b(result_type);
  for (auto x : d.lhs_batch) b.push(lhs.dims[static_cast<std::size_t>(x)]);
  for (std::size_t i = 0; i < lhs.rank(); ++i)
    if (!detail::contains(d.lhs_batch, i) && !detail::contains(d.lhs_contracting, i)) b.push(lhs.dims[i]);
  for (std::size_t i = 0; i < rhs.rank(); ++i)
    if (!detail::contains(d.rhs_batch, i) && !detail::contains(d.rhs_contracting, i)) b.push(rhs.dims[i]);
  return b.done();
}

// reduce-window(operand, init) with one window entry per dim (the caller fills defaults: size 1,
// stride 1, no padding, dilations 1). Output size: how many strided window positions fit in
// the padded, base-dilated operand.
constexpr ResultType reduce_window(const TensorType& x, const Window& w) {
  for (const auto* list : {&w.size, &w.stride, &w.padding_low, &w.padding_high, &w.base_dilation, &w.window_dilation})
    if (list->size() != x.rank())
      return detail::wrong_length(list->size(), x.rank());
  detail::Builder b(x.dtype);
  for (std::size_t d = 0; d < x.rank(); ++d) {
    const std::int64_t n = x.dims[d];
    if (n < 0) {
      b.push(kUnknownSize);
      continue;
    }
    const std::int64_t size = w.size[d], stride = w.stride[d], base = w.base_dilation[d], dilation = w.window_dilation[d];
    if (stride < 1 || base < 1 || dilation < 1 || size < 0) return detail::failure(Problem::WindowNotPositive, 0, 0, d);
    std::int64_t padded = 0, extent = 0;
    if (__builtin_mul_overflow(n > 0 ? n - 1 : 0, base, &padded) || __builtin_add_overflow(padded, n > 0 ? 1 : 0, &padded) ||
        __builtin_add_overflow(padded, w.padding_low[d], &padded) ||
        __builtin_add_overflow(padded, w.padding_high[d], &padded) ||
        __builtin_mul_overflow(size > 0 ? size - 1 : 0, dilation, &extent) ||
        __builtin_add_overflow(extent, size > 0 ? 1 : 0, &extent))
      return detail::failure(Problem::SizeOverflow, 0, 0, d);
    b.push(padded < extent ? 0 : (padded - extent) / stride + 1);
  }
  return b.done();
}

// ---- by opcode

// The opcodes whose result type is written and checked rather than inferred (XLA's text always
// writes it; phase 1 keeps it in the node's attributes).
constexpr bool result_is_written(Opcode op) {
  return op == Opcode::Convert || op == Opcode::BitcastConvert || op == Opcode::Reshape || op == Opcode::Broadcast ||
         op == Opcode::Iota;
}

// The opcodes infer() has a rule for.
constexpr bool has_rule(Opcode op) {
  if (is_elementwise_unary(op) || is_elementwise_binary(op) || result_is_written(op)) return true;
  switch (op) {
    case Opcode::Compare: case Opcode::Select: case Opcode::Clamp: case Opcode::Transpose: case Opcode::Slice:
    case Opcode::DynamicSlice: case Opcode::DynamicUpdateSlice: case Opcode::Concatenate: case Opcode::Pad:
    case Opcode::Reverse: case Opcode::Reduce: case Opcode::Dot: case Opcode::ReduceWindow:
      return true;
    default:
      return false;
  }
}

// XLA's operand count for the opcodes with a rule here: Finding::OperandCount when it is wrong
// (value = given, bound = expected, the minimum for variadic opcodes).
constexpr Finding check_operand_count(Opcode op, std::size_t count) {
  const auto n = static_cast<std::int64_t>(count);
  auto expect = [&](std::int64_t wanted, bool at_least = false) -> Finding {
    if (at_least ? n >= wanted : n == wanted) return {};
    return {Problem::OperandCount, 0, 0, 0, n, wanted};
  };
  switch (op) {
    case Opcode::Concatenate:
    case Opcode::DynamicSlice: return expect(1, true);
    case Opcode::DynamicUpdateSlice: return expect(2, true);
    case Opcode::Reduce: return n >= 2 && n % 2 == 0 ? Finding{} : Finding{Problem::OperandCount, 0, 0, 0, n, 2};
    case Opcode::ReduceWindow: return expect(2);
    default: return opcode_arity(op) >= 0 ? expect(opcode_arity(op)) : Finding{};
  }
}

// The result type of `op` applied to `operands` (in operand order) with attributes `a`.
// `written` is the result type as written: required for convert, bitcast-convert, reshape,
// broadcast and iota, the result element type of dot (default: lhs's), ignored otherwise.
// Reduce answers for its first result (see reduce()). Bitcast is not modelled (XLA's depends on
// layouts); callers that treat it as a reshape say so.
constexpr ResultType infer(Opcode op, View<TensorType> operands, const Attributes& a,
                           const TensorType* written = nullptr) {
  if (!has_rule(op)) return detail::failure(Problem::NotModelled);
  if (const Finding f = check_operand_count(op, operands.size()); f.problem != Problem::None) return detail::failed(f);
  if (result_is_written(op) && written == nullptr) return detail::failure(Problem::ResultTypeRequired, kResult);
  if (is_elementwise_unary(op)) return elementwise_unary(op, operands[0]);
  if (is_elementwise_binary(op)) return elementwise_binary(operands[0], operands[1]);
  switch (op) {
    case Opcode::Compare: return compare(operands[0], operands[1]);
    case Opcode::Select: return select(operands[0], operands[1], operands[2]);
    case Opcode::Clamp: return clamp(operands[0], operands[1], operands[2]);
    case Opcode::Convert: return convert(operands[0], *written);
    case Opcode::BitcastConvert: return bitcast_convert(operands[0], *written);
    case Opcode::Reshape: return reshape(operands[0], *written);
    case Opcode::Broadcast: return broadcast(operands[0], *written, a.dimensions);
    case Opcode::Iota: return iota(*written, a.iota_dimension);
    case Opcode::Transpose: return transpose(operands[0], a.dimensions);
    case Opcode::Slice: return slice(operands[0], a.slice);
    case Opcode::DynamicSlice: return dynamic_slice(operands[0], operands.subspan(1), a.dynamic_slice_sizes);
    case Opcode::DynamicUpdateSlice: return dynamic_update_slice(operands[0], operands[1], operands.subspan(2));
    case Opcode::Concatenate: return concatenate(operands, a.dimensions);
    case Opcode::Pad: return pad(operands[0], operands[1], a.padding);
    case Opcode::Reverse: return reverse(operands[0], a.dimensions);
    case Opcode::Reduce: {
      const std::size_t n = operands.size() / 2;
      return reduce(operands.first(n), operands.subspan(n), a.dimensions);
    }
    case Opcode::Dot: return dot(operands[0], operands[1], a.dot, written ? written->dtype : operands[0].dtype);
    case Opcode::ReduceWindow: return reduce_window(operands[0], a.window);
    default: return detail::failure(Problem::NotModelled);
  }
}

}  // namespace shape_rules
}  // namespace act::hlo
