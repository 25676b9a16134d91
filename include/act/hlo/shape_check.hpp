// Shape inference and checking per opcode, run by the parser on every instruction.
//
// For the opcodes act evaluates, the result shape is inferred from the operands and the typed
// attributes; a declared shape must agree with it (element type and dimensions; layouts are the
// writer's choice). Other opcodes get an arity check where XLA fixes the arity, and keep their
// declared shape. A dimension that is not a known static size (`?`, `<=N`, or -1 for a symbolic
// semantics dimension) matches anything.
#pragma once

#include <algorithm>
#include <charconv>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/module.hpp"

namespace act::hlo {

namespace shape_detail {

// The static size of dim i, or -1 when it is dynamic or symbolic.
inline std::int64_t known_dim(const Shape& s, std::size_t i) {
  if (!s.dim_kinds.empty() && s.dim_kinds[i] != DimKind::Static) return -1;
  return s.dims[i] < 0 ? -1 : s.dims[i];
}
inline bool dims_agree(std::int64_t a, std::int64_t b) { return a < 0 || b < 0 || a == b; }
inline bool fully_known(const Shape& s) {
  for (std::size_t i = 0; i < s.dims.size(); ++i)
    if (known_dim(s, i) < 0) return false;
  return true;
}

// Same element type and dimensions, unknown dims matching anything; tuples element-wise.
inline bool compatible(const Shape& a, const Shape& b) {
  if (a.is_tuple != b.is_tuple) return false;
  if (a.is_tuple) {
    if (a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
    for (std::size_t i = 0; i < a.tuple_shapes.size(); ++i)
      if (!compatible(a.tuple_shapes[i], b.tuple_shapes[i])) return false;
    return true;
  }
  if (a.dtype != b.dtype || a.dims.size() != b.dims.size()) return false;
  for (std::size_t i = 0; i < a.dims.size(); ++i)
    if (!dims_agree(known_dim(a, i), known_dim(b, i))) return false;
  return true;
}

// Dims of `s` with unknown ones as -1 (so inferred shapes carry "unknown" on).
inline std::vector<std::int64_t> dims_of(const Shape& s) {
  std::vector<std::int64_t> d(s.dims.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = known_dim(s, i);
  return d;
}

inline Shape array(DType t, std::vector<std::int64_t> dims) { return Shape(t, std::move(dims)); }

inline std::string list(std::span<const std::int64_t> v) {
  return fmt::format("{{{}}}", fmt::join(v, ","));
}

class Checker {
 public:
  Checker(const Instruction& inst, std::span<const Shape* const> operands, const Module& module)
      : inst_(inst), ops_(operands), module_(module), op_(opcode_name(inst.opcode)) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(ErrorKind::Shape, fmt::format("{}: {}", op_, message), inst_.location);
  }

  // Size arithmetic on attribute values (padding, window sizes) that may be any int64: an
  // overflow is the input's error, not undefined behaviour.
  std::int64_t add(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) fail(fmt::format("size arithmetic overflows ({} + {})", a, b));
    return r;
  }
  std::int64_t multiply(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) fail(fmt::format("size arithmetic overflows ({} * {})", a, b));
    return r;
  }

  const Shape& operand(std::size_t i) const { return *ops_[i]; }
  std::size_t count() const { return ops_.size(); }

  const Shape& array_operand(std::size_t i) const {
    if (operand(i).is_tuple) fail(fmt::format("operand {} is a tuple {}, expected an array", i, to_string(operand(i))));
    return operand(i);
  }

  void expect_count(std::size_t n) const {
    if (count() != n) fail(fmt::format("expects {} operand{}, got {}", n, n == 1 ? "" : "s", count()));
  }

  void expect_same_dims(const Shape& a, const Shape& b, std::string_view what) const {
    bool ok = a.dims.size() == b.dims.size();
    for (std::size_t i = 0; ok && i < a.dims.size(); ++i) ok = dims_agree(known_dim(a, i), known_dim(b, i));
    if (!ok) fail(fmt::format("{}: {} and {} have different dimensions", what, to_string(a), to_string(b)));
  }

  void expect_dimension(std::int64_t d, std::int64_t rank, std::string_view what) const {
    if (d < 0 || d >= rank) fail(fmt::format("{} {} is out of range for rank {}", what, d, rank));
  }

  void expect_unique_dimensions(std::span<const std::int64_t> dims, std::int64_t rank, std::string_view what) const {
    std::vector<bool> seen(static_cast<std::size_t>(rank), false);
    for (const auto d : dims) {
      expect_dimension(d, rank, what);
      if (seen[static_cast<std::size_t>(d)]) fail(fmt::format("{} {} appears twice", what, d));
      seen[static_cast<std::size_t>(d)] = true;
    }
  }

  Shape elementwise_binary() const {
    expect_count(2);
    const Shape& a = array_operand(0);
    const Shape& b = array_operand(1);
    expect_same_dims(a, b, "operands");
    if (a.dtype != b.dtype)
      fail(fmt::format("operand element types differ: {} and {}", name(a.dtype), name(b.dtype)));
    return array(a.dtype, dims_of(a));
  }

  Shape elementwise_unary() const {
    expect_count(1);
    const Shape& a = array_operand(0);
    DType t = a.dtype;
    if (inst_.opcode == Opcode::IsFinite) t = DType::pred;
    if ((inst_.opcode == Opcode::Real || inst_.opcode == Opcode::Imag || inst_.opcode == Opcode::Abs) &&
        (a.dtype == DType::c64 || a.dtype == DType::c128))
      t = a.dtype == DType::c64 ? DType::f32 : DType::f64;
    return array(t, dims_of(a));
  }

  Shape compare() const {
    Shape s = elementwise_binary();
    if (!inst_.comparison_direction) fail("missing direction=");
    s.dtype = DType::pred;
    return s;
  }

  Shape select() const {
    expect_count(3);
    const Shape& p = array_operand(0);
    const Shape& t = array_operand(1);
    const Shape& f = array_operand(2);
    if (p.dtype != DType::pred) fail(fmt::format("predicate has element type {}, expected pred", name(p.dtype)));
    expect_same_dims(t, f, "on_true and on_false");
    if (t.dtype != f.dtype) fail(fmt::format("on_true is {} but on_false is {}", name(t.dtype), name(f.dtype)));
    if (p.rank() != 0) expect_same_dims(p, t, "predicate and on_true");
    return array(t.dtype, dims_of(t));
  }

  Shape clamp() const {
    expect_count(3);
    const Shape& lo = array_operand(0);
    const Shape& x = array_operand(1);
    const Shape& hi = array_operand(2);
    for (const Shape* bound : {&lo, &hi}) {
      if (bound->dtype != x.dtype)
        fail(fmt::format("bound element type {} differs from operand {}", name(bound->dtype), name(x.dtype)));
      if (bound->rank() != 0) expect_same_dims(*bound, x, "bound and operand");
    }
    return array(x.dtype, dims_of(x));
  }

  void convert(const Shape& declared) const {
    expect_count(1);
    expect_same_dims(array_operand(0), declared, "operand and result");
  }

  void bitcast_convert(const Shape& declared) const {
    expect_count(1);
    const Shape& in = array_operand(0);
    if (declared.is_tuple) fail("result must be an array");
    const int in_bits = bit_width(in.dtype), out_bits = bit_width(declared.dtype);
    if (in_bits == 0 || out_bits == 0) fail("operand and result need sized element types");
    if (in_bits == out_bits) return expect_same_dims(in, declared, "operand and result");
    const Shape& wide = in_bits > out_bits ? in : declared;
    const Shape& narrow = in_bits > out_bits ? declared : in;
    const std::int64_t ratio = std::max(in_bits, out_bits) / std::min(in_bits, out_bits);
    if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0)
      fail(fmt::format("cannot reinterpret {} as {}", name(in.dtype), name(declared.dtype)));
    if (narrow.rank() != wide.rank() + 1)
      fail(fmt::format("converting {} to {} needs the {} side to have one more (minor-most) dimension of size {}",
                       to_string(in), to_string(declared), name(narrow.dtype), ratio));
    const std::int64_t last = known_dim(narrow, narrow.dims.size() - 1);
    if (!dims_agree(last, ratio))
      fail(fmt::format("minor-most dimension of {} must be {} (bit width ratio), got {}", to_string(narrow), ratio, last));
    Shape prefix = narrow;
    prefix.dims.pop_back();
    if (!prefix.dim_kinds.empty()) prefix.dim_kinds.pop_back();
    expect_same_dims(prefix, wide, "operand and result (without the ratio dimension)");
  }

  void reshape(const Shape& declared) const {
    expect_count(1);
    const Shape& in = array_operand(0);
    if (declared.is_tuple) fail("result must be an array");
    if (in.dtype != declared.dtype)
      fail(fmt::format("element type changes from {} to {}", name(in.dtype), name(declared.dtype)));
    if (fully_known(in) && fully_known(declared) && in.element_count() != declared.element_count())
      fail(fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", to_string(in), in.element_count(),
                       to_string(declared), declared.element_count()));
  }

  Shape transpose() const {
    expect_count(1);
    const Shape& in = array_operand(0);
    const auto& p = inst_.dimensions;
    if (static_cast<std::int64_t>(p.size()) != in.rank())
      fail(fmt::format("permutation {} has {} entries for an operand of rank {}", list(p), p.size(), in.rank()));
    expect_unique_dimensions(p, in.rank(), "permutation entry");
    std::vector<std::int64_t> out;
    for (const auto d : p) out.push_back(known_dim(in, static_cast<std::size_t>(d)));
    return array(in.dtype, out);
  }

  void broadcast(const Shape& declared) const {
    expect_count(1);
    const Shape& in = array_operand(0);
    if (declared.is_tuple) fail("result must be an array");
    const auto& dims = inst_.dimensions;
    if (static_cast<std::int64_t>(dims.size()) != in.rank())
      fail(fmt::format("dimensions={} has {} entries for an operand of rank {}", list(dims), dims.size(), in.rank()));
    if (in.dtype != declared.dtype)
      fail(fmt::format("element type changes from {} to {}", name(in.dtype), name(declared.dtype)));
    expect_unique_dimensions(dims, declared.rank(), "dimension");
    for (std::size_t k = 0; k < dims.size(); ++k) {
      const auto from = known_dim(in, k), to = known_dim(declared, static_cast<std::size_t>(dims[k]));
      if (from != 1 && !dims_agree(from, to))
        fail(fmt::format("operand dimension {} has size {} but result dimension {} has size {}", k, from, dims[k], to));
    }
  }

  Shape slice() const {
    expect_count(1);
    const Shape& in = array_operand(0);
    if (static_cast<std::int64_t>(inst_.slice.size()) != in.rank())
      fail(fmt::format("{} slice ranges for an operand of rank {}", inst_.slice.size(), in.rank()));
    std::vector<std::int64_t> out;
    for (std::size_t d = 0; d < inst_.slice.size(); ++d) {
      const auto& r = inst_.slice[d];
      const auto size = known_dim(in, d);
      if (r.stride < 1) fail(fmt::format("stride {} of dimension {} must be positive", r.stride, d));
      if (r.start < 0 || r.limit < r.start || (size >= 0 && r.limit > size))
        fail(fmt::format("range [{}:{}] of dimension {} is out of bounds for size {}", r.start, r.limit, d, size));
      const std::int64_t extent = r.limit - r.start;  // >= 0, no overflow: 0 <= start <= limit
      out.push_back(extent / r.stride + (extent % r.stride != 0 ? 1 : 0));
    }
    return array(in.dtype, out);
  }

  Shape dynamic_slice() const {
    if (count() < 1) expect_count(1);
    const Shape& in = array_operand(0);
    check_start_indices(1, in);
    const auto& sizes = inst_.dynamic_slice_sizes;
    if (static_cast<std::int64_t>(sizes.size()) != in.rank())
      fail(fmt::format("dynamic_slice_sizes={} has {} entries for an operand of rank {}", list(sizes), sizes.size(), in.rank()));
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      const auto size = known_dim(in, d);
      if (sizes[d] < 0 || (size >= 0 && sizes[d] > size))
        fail(fmt::format("slice size {} of dimension {} exceeds the operand size {}", sizes[d], d, size));
    }
    return array(in.dtype, sizes);
  }

  Shape dynamic_update_slice() const {
    if (count() < 2) expect_count(2);
    const Shape& in = array_operand(0);
    const Shape& update = array_operand(1);
    check_start_indices(2, in);
    if (update.rank() != in.rank())
      fail(fmt::format("update {} and operand {} have different ranks", to_string(update), to_string(in)));
    if (update.dtype != in.dtype)
      fail(fmt::format("update element type {} differs from operand {}", name(update.dtype), name(in.dtype)));
    for (std::size_t d = 0; d < in.dims.size(); ++d) {
      const auto u = known_dim(update, d), o = known_dim(in, d);
      if (u >= 0 && o >= 0 && u > o)
        fail(fmt::format("update dimension {} has size {}, larger than the operand's {}", d, u, o));
    }
    return array(in.dtype, dims_of(in));
  }

  void check_start_indices(std::size_t first, const Shape& in) const {
    const std::size_t n = count() - first;
    if (n == 1 && in.rank() != 1 && array_operand(first).rank() == 1) {  // legacy R1 index vector
      if (!is_integer(operand(first).dtype)) fail("start index vector must have an integer type");
      return;
    }
    if (static_cast<std::int64_t>(n) != in.rank())
      fail(fmt::format("expects {} start indices for an operand of rank {}, got {}", in.rank(), in.rank(), n));
    for (std::size_t i = first; i < count(); ++i) {
      const Shape& s = array_operand(i);
      if (s.rank() != 0 || !is_integer(s.dtype) || s.dtype == DType::pred)
        fail(fmt::format("start index {} must be an integer scalar, got {}", i - first, to_string(s)));
    }
  }

  Shape concatenate() const {
    if (count() == 0) fail("expects at least one operand");
    if (inst_.dimensions.size() != 1)
      fail(fmt::format("dimensions={} must name exactly one dimension", list(inst_.dimensions)));
    const Shape& first = array_operand(0);
    const auto d = inst_.dimensions[0];
    expect_dimension(d, first.rank(), "dimension");
    auto out = dims_of(first);
    for (std::size_t i = 1; i < count(); ++i) {
      const Shape& s = array_operand(i);
      if (s.dtype != first.dtype || s.rank() != first.rank())
        fail(fmt::format("operand {} is {} but operand 0 is {}", i, to_string(s), to_string(first)));
      for (std::size_t k = 0; k < s.dims.size(); ++k) {
        const auto size = known_dim(s, k);
        if (static_cast<std::int64_t>(k) == d) {
          out[k] = out[k] < 0 || size < 0 ? -1 : add(out[k], size);
        } else if (!dims_agree(out[k], size)) {
          fail(fmt::format("operand {} dimension {} has size {} but operand 0 has {}", i, k, size, out[k]));
        }
      }
    }
    return array(first.dtype, out);
  }

  // As XLA's shape inference: the padding value's type may differ from the operand's in
  // floating-point precision only (bf16 data, f32 value), and the result has the more precise
  // of the two; a declared result may also have the other one (XLA's mixed-precision
  // verifier). The parser then converts the operands to the result type.
  Shape pad(const std::optional<Shape>& declared) const {
    expect_count(2);
    const Shape& in = array_operand(0);
    const Shape& value = array_operand(1);
    if (value.rank() != 0) fail(fmt::format("padding value must be a scalar, got {}", to_string(value)));
    const bool both_float = is_float(value.dtype) && is_float(in.dtype);
    if (value.dtype != in.dtype && !both_float)
      fail(fmt::format("padding value type {} differs from operand {}", name(value.dtype), name(in.dtype)));
    DType result = byte_width(value.dtype) > byte_width(in.dtype) ? value.dtype : in.dtype;
    if (declared && !declared->is_tuple && (declared->dtype == in.dtype || declared->dtype == value.dtype)) result = declared->dtype;
    if (static_cast<std::int64_t>(inst_.padding.size()) != in.rank())
      fail(fmt::format("padding has {} dimensions for an operand of rank {}", inst_.padding.size(), in.rank()));
    std::vector<std::int64_t> out;
    for (std::size_t d = 0; d < inst_.padding.size(); ++d) {
      const auto& p = inst_.padding[d];
      if (p.interior < 0) fail(fmt::format("interior padding {} of dimension {} is negative", p.interior, d));
      const auto n = known_dim(in, d);
      if (n < 0) {
        out.push_back(-1);
        continue;
      }
      const auto size = add(add(p.low, p.high), add(n, n > 0 ? multiply(n - 1, p.interior) : 0));
      if (size < 0) fail(fmt::format("padding of dimension {} gives negative size {}", d, size));
      out.push_back(size);
    }
    return array(result, out);
  }

  Shape reverse() const {
    expect_count(1);
    const Shape& in = array_operand(0);
    expect_unique_dimensions(inst_.dimensions, in.rank(), "dimension");
    return array(in.dtype, dims_of(in));
  }

  Shape reduce() const {
    if (count() == 0 || count() % 2 != 0) fail(fmt::format("expects inputs then as many init values, got {} operands", count()));
    const std::size_t n = count() / 2;
    const Shape& first = array_operand(0);
    expect_unique_dimensions(inst_.dimensions, first.rank(), "dimension");
    std::vector<Shape> results;
    for (std::size_t i = 0; i < n; ++i) {
      const Shape& input = array_operand(i);
      const Shape& init = array_operand(n + i);
      if (i > 0) expect_same_dims(input, first, "inputs");
      if (init.rank() != 0) fail(fmt::format("init value {} must be a scalar, got {}", i, to_string(init)));
      std::vector<std::int64_t> out;
      for (std::size_t d = 0; d < input.dims.size(); ++d)
        if (std::find(inst_.dimensions.begin(), inst_.dimensions.end(), static_cast<std::int64_t>(d)) ==
            inst_.dimensions.end())
          out.push_back(known_dim(input, d));
      results.push_back(array(init.dtype, out));
    }
    check_reducer(n);
    if (n == 1) return results[0];
    return Shape::tuple(std::move(results));
  }

  // to_apply takes 2N scalars (accumulators then elements) and returns N of them.
  void check_reducer(std::size_t n) const {
    if (inst_.called_computations.empty()) fail("missing to_apply=");
    const auto index = static_cast<std::size_t>(inst_.called_computations[0]);
    if (index >= module_.computations.size()) fail("to_apply refers to an unknown computation");
    const Computation& c = module_.computations[index];
    if (c.parameters.size() != 2 * n)
      fail(fmt::format("to_apply={} takes {} parameters, expected {}", c.name, c.parameters.size(), 2 * n));
    for (std::size_t i = 0; i < 2 * n; ++i) {
      const Shape& p = c.instructions[static_cast<std::size_t>(c.parameters[i])].shape;
      const Shape& init = operand(n + i % n);
      if (p.is_tuple || p.rank() != 0 || p.dtype != init.dtype)
        fail(fmt::format("to_apply={} parameter {} is {}, expected {}[]", c.name, i, to_string(p), name(init.dtype)));
    }
    if (c.root < 0) return;
    const Shape& r = c.root_instruction().shape;
    if (n == 1) {
      if (r.is_tuple || r.rank() != 0 || r.dtype != operand(1).dtype)
        fail(fmt::format("to_apply={} returns {}, expected {}[]", c.name, to_string(r), name(operand(1).dtype)));
    } else if (!r.is_tuple || r.tuple_shapes.size() != n) {
      fail(fmt::format("to_apply={} returns {}, expected a {}-tuple of scalars", c.name, to_string(r), n));
    }
  }

  Shape dot(const std::optional<Shape>& declared) const {
    expect_count(2);
    const Shape& a = array_operand(0);
    const Shape& b = array_operand(1);
    const auto& d = inst_.dot;
    if (d.lhs_contracting.size() != d.rhs_contracting.size())
      fail(fmt::format("lhs_contracting_dims={} and rhs_contracting_dims={} differ in length", list(d.lhs_contracting),
                       list(d.rhs_contracting)));
    if (d.lhs_batch.size() != d.rhs_batch.size())
      fail(fmt::format("lhs_batch_dims={} and rhs_batch_dims={} differ in length", list(d.lhs_batch), list(d.rhs_batch)));
    std::vector<std::int64_t> lhs_used = d.lhs_batch, rhs_used = d.rhs_batch;
    lhs_used.insert(lhs_used.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
    rhs_used.insert(rhs_used.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
    expect_unique_dimensions(lhs_used, a.rank(), "lhs dimension");
    expect_unique_dimensions(rhs_used, b.rank(), "rhs dimension");
    auto check_pairs = [&](const auto& l, const auto& r, std::string_view kind) {
      for (std::size_t i = 0; i < l.size(); ++i) {
        const auto ls = known_dim(a, static_cast<std::size_t>(l[i])), rs = known_dim(b, static_cast<std::size_t>(r[i]));
        if (!dims_agree(ls, rs))
          fail(fmt::format("lhs {} dim {} has size {} but rhs {} dim {} has size {}", kind, l[i], ls, kind, r[i], rs));
      }
    };
    check_pairs(d.lhs_contracting, d.rhs_contracting, "contracting");
    check_pairs(d.lhs_batch, d.rhs_batch, "batch");
    std::vector<std::int64_t> out;
    for (const auto x : d.lhs_batch) out.push_back(known_dim(a, static_cast<std::size_t>(x)));
    for (std::size_t i = 0; i < a.dims.size(); ++i)
      if (std::find(lhs_used.begin(), lhs_used.end(), static_cast<std::int64_t>(i)) == lhs_used.end())
        out.push_back(known_dim(a, i));
    for (std::size_t i = 0; i < b.dims.size(); ++i)
      if (std::find(rhs_used.begin(), rhs_used.end(), static_cast<std::int64_t>(i)) == rhs_used.end())
        out.push_back(known_dim(b, i));
    // The result element type may differ (preferred_element_type); it is the declared one.
    return array(declared && !declared->is_tuple ? declared->dtype : a.dtype, out);
  }

  // Only inferred when the shape is omitted: one input, `window={size=.. stride=.. pad=..
  // lhs_dilate=.. rhs_dilate=..}` (each field one entry per dimension, 'x'-separated).
  Shape reduce_window() const {
    if (count() != 2) fail("the result shape is required for a variadic reduce-window");
    const Shape& in = array_operand(0);
    const std::size_t rank = in.dims.size();
    std::vector<std::int64_t> size(rank, 1), stride(rank, 1), low(rank, 0), high(rank, 0), base(rank, 1), dilation(rank, 1);
    std::string_view window;
    for (const auto& r : inst_.raw_attributes)
      if (r.name == "window") window = r.value;
    if (window.size() >= 2 && window.front() == '{') window = window.substr(1, window.size() - 2);
    auto number = [&](std::string_view t) {
      std::int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || ptr != t.data() + t.size()) fail(fmt::format("bad window value '{}'", t));
      return v;
    };
    while (!window.empty()) {
      while (!window.empty() && window.front() == ' ') window.remove_prefix(1);
      const std::size_t end = std::min(window.find(' '), window.size());
      const std::string_view field = window.substr(0, end);
      window.remove_prefix(end);
      if (field.empty()) continue;
      const std::size_t eq = field.find('=');
      if (eq == std::string_view::npos) fail(fmt::format("bad window field '{}'", field));
      const std::string_view key = field.substr(0, eq);
      std::string_view values = field.substr(eq + 1);
      for (std::size_t d = 0; !values.empty(); ++d) {
        const std::size_t x = std::min(values.find('x'), values.size());
        const std::string_view v = values.substr(0, x);
        values.remove_prefix(std::min(x + 1, values.size()));
        if (d >= rank) fail(fmt::format("window field '{}' has more entries than the rank {}", key, rank));
        if (key == "size") size[d] = number(v);
        else if (key == "stride") stride[d] = number(v);
        else if (key == "lhs_dilate") base[d] = number(v);
        else if (key == "rhs_dilate") dilation[d] = number(v);
        else if (key == "pad") {
          const std::size_t u = v.find('_');
          if (u == std::string_view::npos) fail(fmt::format("bad window padding '{}'", v));
          low[d] = number(v.substr(0, u));
          high[d] = number(v.substr(u + 1));
        }
      }
    }
    std::vector<std::int64_t> out;
    for (std::size_t d = 0; d < rank; ++d) {
      const auto n = known_dim(in, d);
      if (n < 0) {
        out.push_back(-1);
        continue;
      }
      if (stride[d] < 1 || base[d] < 1 || dilation[d] < 1 || size[d] < 0) fail("window sizes, strides and dilations must be positive");
      const auto padded = add(n > 0 ? add(multiply(n - 1, base[d]), 1) : 0, add(low[d], high[d]));
      const auto window_extent = size[d] > 0 ? add(multiply(size[d] - 1, dilation[d]), 1) : 0;
      out.push_back(padded < window_extent ? 0 : (padded - window_extent) / stride[d] + 1);
    }
    return array(in.dtype, out);
  }

  Shape get_tuple_element() const {
    expect_count(1);
    const Shape& t = operand(0);
    if (!t.is_tuple) fail(fmt::format("operand {} is not a tuple", to_string(t)));
    if (inst_.tuple_index < 0 || inst_.tuple_index >= static_cast<std::int64_t>(t.tuple_shapes.size()))
      fail(fmt::format("index {} is out of range for a tuple of {} elements", inst_.tuple_index, t.tuple_shapes.size()));
    return t.tuple_shapes[static_cast<std::size_t>(inst_.tuple_index)];
  }

  Shape tuple() const {
    std::vector<Shape> elements;
    for (std::size_t i = 0; i < count(); ++i) elements.push_back(operand(i));
    return Shape::tuple(std::move(elements));
  }

  const Instruction& inst_;
  std::span<const Shape* const> ops_;
  const Module& module_;
  std::string_view op_;
};

inline bool is_elementwise_binary(Opcode op) {
  switch (op) {
    case Opcode::Add: case Opcode::Subtract: case Opcode::Multiply: case Opcode::Divide: case Opcode::Maximum:
    case Opcode::Minimum: case Opcode::Power: case Opcode::Remainder: case Opcode::And: case Opcode::Or:
    case Opcode::Xor: case Opcode::ShiftLeft: case Opcode::ShiftRightLogical: case Opcode::ShiftRightArithmetic:
    case Opcode::Atan2:
      return true;
    default: return false;
  }
}

inline bool is_elementwise_unary(Opcode op) {
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

}  // namespace shape_detail

// Checks `inst` against its operand shapes and returns its result shape: `declared` when given
// (after checking it agrees with what the operands imply), otherwise the inferred shape.
// Throws Error(Shape) at inst.location when something does not fit, and Error(Parse) when the
// shape is omitted for an opcode whose result cannot be inferred.
inline Shape check_instruction(const Instruction& inst, std::span<const Shape* const> operands,
                               const std::optional<Shape>& declared, const Module& module) {
  using namespace shape_detail;
  const Checker c(inst, operands, module);
  const Opcode op = inst.opcode;
  auto need_declared = [&]() -> const Shape& {
    if (!declared)
      throw Error(ErrorKind::Parse, fmt::format("{}: the result shape is required", opcode_name(op)), inst.location);
    return *declared;
  };

  std::optional<Shape> inferred;
  if (is_elementwise_binary(op)) inferred = c.elementwise_binary();
  else if (is_elementwise_unary(op)) inferred = c.elementwise_unary();
  else switch (op) {
    case Opcode::Parameter:
    case Opcode::Constant:
      c.expect_count(0);
      return need_declared();
    case Opcode::Iota: {
      c.expect_count(0);
      const Shape& s = need_declared();
      if (s.is_tuple) c.fail("result must be an array");
      if (inst.iota_dimension < 0 && s.rank() == 0) c.fail("iota of a scalar");
      c.expect_dimension(inst.iota_dimension, s.rank(), "iota_dimension");
      return s;
    }
    case Opcode::Compare: inferred = c.compare(); break;
    case Opcode::Select: inferred = c.select(); break;
    case Opcode::Clamp: inferred = c.clamp(); break;
    case Opcode::Convert: c.convert(need_declared()); return *declared;
    case Opcode::BitcastConvert: c.bitcast_convert(need_declared()); return *declared;
    case Opcode::Reshape: c.reshape(need_declared()); return *declared;
    case Opcode::Bitcast:
      c.expect_count(1);
      return need_declared();
    case Opcode::Transpose: inferred = c.transpose(); break;
    case Opcode::Broadcast: c.broadcast(need_declared()); return *declared;
    case Opcode::Slice: inferred = c.slice(); break;
    case Opcode::DynamicSlice: inferred = c.dynamic_slice(); break;
    case Opcode::DynamicUpdateSlice: inferred = c.dynamic_update_slice(); break;
    case Opcode::Concatenate: inferred = c.concatenate(); break;
    case Opcode::Pad: inferred = c.pad(declared); break;
    case Opcode::Reverse: inferred = c.reverse(); break;
    case Opcode::Reduce: inferred = c.reduce(); break;
    case Opcode::Dot: inferred = c.dot(declared); break;
    case Opcode::Tuple: inferred = c.tuple(); break;
    case Opcode::GetTupleElement: inferred = c.get_tuple_element(); break;
    case Opcode::ReduceWindow:
      if (declared) return *declared;
      return c.reduce_window();
    case Opcode::OptBarrier:
      c.expect_count(1);
      inferred = c.operand(0);
      break;
    default: {
      const int arity = opcode_arity(op);
      if (arity >= 0) c.expect_count(static_cast<std::size_t>(arity));
      if (!declared && (op == Opcode::Call || op == Opcode::While) && !inst.called_computations.empty()) {
        const auto index = static_cast<std::size_t>(inst.called_computations.back());
        if (index < module.computations.size() && module.computations[index].root >= 0)
          return module.computations[index].root_instruction().shape;
      }
      return need_declared();
    }
  }
  if (!declared) {
    // An inferred shape has not been through the parser's size limit (pad, concatenate).
    if (!inferred->is_tuple && !bounded_byte_size(*inferred))
      c.fail(fmt::format("the result {} is larger than act's limit of 2^40 bytes for one array", to_string(*inferred)));
    return *inferred;
  }
  if (!compatible(*declared, *inferred))
    c.fail(fmt::format("declared shape {} does not match the inferred shape {}", to_string(*declared),
                       to_string(*inferred)));
  return *declared;
}

}  // namespace act::hlo
