// Array plumbing for the reference interpreter: decoding literals into the compute domains of
// evaluate_numerics.hpp and back, and one strided element copy that every data-movement op
// (transpose, broadcast, slice, reverse, pad, concatenate, dynamic slices) is expressed with.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/hlo/evaluate_numerics.hpp"

namespace act::hlo::eval_detail {

inline std::vector<std::int64_t> row_major_strides(std::span<const std::int64_t> dims) {
  std::vector<std::int64_t> strides(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// ---------------------------------------------------------------------------------------------
// Decoding (whole arrays; the dtype switch sits outside the element loop)

// bf16/f16/f32 exactly; other types converted (used only for mixed-type dots).
inline std::vector<float> decode_f32(const Literal& x) {
  const std::int64_t n = x.element_count();
  std::vector<float> out(static_cast<std::size_t>(n));
  const std::uint8_t* p = x.bytes().data();
  switch (x.dtype()) {
    case DType::f32: if (n > 0) std::memcpy(out.data(), p, static_cast<std::size_t>(n) * 4); break;  // n = 0: p may be null
    case DType::bf16:
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = bf16_bits_to_f32(h);
      }
      break;
    case DType::f16:
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = f16_bits_to_f32(h);
      }
      break;
    default:
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x.get_float(i));
  }
  return out;
}

// Any computable type; exact for every float type and for integers below 2^53.
inline std::vector<double> decode_f64(const Literal& x) {
  const std::int64_t n = x.element_count();
  std::vector<double> out(static_cast<std::size_t>(n));
  if (x.dtype() == DType::f64) {
    if (n > 0) std::memcpy(out.data(), x.bytes().data(), static_cast<std::size_t>(n) * 8);
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = x.get_float(i);
  }
  return out;
}

// Integers and pred as canonical values (see evaluate_numerics.hpp).
inline std::vector<std::int64_t> decode_int(const Literal& x) {
  const std::int64_t n = x.element_count();
  const IntType t = int_type(x.dtype());
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out[i] = canonical(x.get_bits(i), t);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Encoding (rounds floats to the literal's type, wraps integers)

inline void encode_f32(Literal& out, std::span<const float> values) {
  std::uint8_t* p = out.bytes().data();
  const std::size_t n = values.size();
  switch (out.dtype()) {
    case DType::f32: if (n > 0) std::memcpy(p, values.data(), n * 4); break;
    case DType::bf16:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = f32_to_bf16_bits(values[i]);
        std::memcpy(p + 2 * i, &h, 2);
      }
      break;
    case DType::f16:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = f32_to_f16_bits(values[i]);
        std::memcpy(p + 2 * i, &h, 2);
      }
      break;
    default:
      for (std::size_t i = 0; i < n; ++i) out.set_float(static_cast<std::int64_t>(i), values[i]);
  }
}

inline void encode_f64(Literal& out, std::span<const double> values) {
  if (out.dtype() == DType::f64) {
    if (!values.empty()) std::memcpy(out.bytes().data(), values.data(), values.size() * 8);
  } else {
    for (std::size_t i = 0; i < values.size(); ++i) out.set_float(static_cast<std::int64_t>(i), values[i]);
  }
}

inline void encode_int(Literal& out, std::span<const std::int64_t> values) {
  const bool pred = out.dtype() == DType::pred;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto v = static_cast<std::uint64_t>(values[i]);
    out.set_bits(static_cast<std::int64_t>(i), pred ? (v & 1u) : v);
  }
}

// ---------------------------------------------------------------------------------------------
// Strided copy: for every index i in [0, extents), element dst[dst.offset + sum i_d*dst.strides_d]
// = src[src.offset + sum i_d*src.strides_d]. Offsets and strides count elements; strides may be
// zero (broadcast) or negative (reverse).

struct StridedView {
  std::int64_t offset = 0;
  std::vector<std::int64_t> strides;
};

namespace strided_copy_impl {

// The [lowest, highest] element index a view touches over the extents.
inline std::pair<std::int64_t, std::int64_t> reach(const StridedView& v, std::span<const std::int64_t> extents) {
  std::int64_t lo = v.offset, hi = v.offset;
  for (std::size_t d = 0; d < extents.size(); ++d) {
    const std::int64_t span = (extents[d] - 1) * v.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

template <int Width>
void copy_rows(std::uint8_t* dst, const StridedView& dv, const std::uint8_t* src, const StridedView& sv,
               std::span<const std::int64_t> extents) {
  const std::size_t rank = extents.size();
  const std::int64_t inner = rank == 0 ? 1 : extents[rank - 1];
  const std::int64_t ds = rank == 0 ? 0 : dv.strides[rank - 1];
  const std::int64_t ss = rank == 0 ? 0 : sv.strides[rank - 1];
  std::vector<std::int64_t> index(rank == 0 ? 0 : rank - 1, 0);
  std::int64_t d_off = dv.offset, s_off = sv.offset;
  while (true) {
    std::uint8_t* d = dst + d_off * Width;
    const std::uint8_t* s = src + s_off * Width;
    if (ds == 1 && ss == 1) {
      std::memcpy(d, s, static_cast<std::size_t>(inner) * Width);
    } else {
      for (std::int64_t i = 0; i < inner; ++i) std::memcpy(d + i * ds * Width, s + i * ss * Width, Width);
    }
    // Advance the odometer over the outer dimensions.
    std::size_t dim = index.size();
    while (dim > 0) {
      --dim;
      ++index[dim];
      d_off += dv.strides[dim];
      s_off += sv.strides[dim];
      if (index[dim] < extents[dim]) break;
      d_off -= dv.strides[dim] * extents[dim];
      s_off -= sv.strides[dim] * extents[dim];
      index[dim] = 0;
      if (dim == 0) return;
    }
    if (index.empty()) return;
  }
}

}  // namespace strided_copy_impl

inline void copy_strided(std::span<std::uint8_t> dst, const StridedView& dv, std::span<const std::uint8_t> src,
                         const StridedView& sv, std::span<const std::int64_t> extents, int width) {
  for (auto e : extents)
    if (e <= 0) return;
  // Guard against an inconsistent caller rather than touching memory out of bounds.
  const auto [dlo, dhi] = strided_copy_impl::reach(dv, extents);
  const auto [slo, shi] = strided_copy_impl::reach(sv, extents);
  if (width <= 0 || dlo < 0 || slo < 0 || (dhi + 1) * width > static_cast<std::int64_t>(dst.size()) ||
      (shi + 1) * width > static_cast<std::int64_t>(src.size()))
    throw Error(ErrorKind::Internal, "evaluate: strided copy out of bounds");
  switch (width) {
    case 1: return strided_copy_impl::copy_rows<1>(dst.data(), dv, src.data(), sv, extents);
    case 2: return strided_copy_impl::copy_rows<2>(dst.data(), dv, src.data(), sv, extents);
    case 4: return strided_copy_impl::copy_rows<4>(dst.data(), dv, src.data(), sv, extents);
    case 8: return strided_copy_impl::copy_rows<8>(dst.data(), dv, src.data(), sv, extents);
    default: throw Error(ErrorKind::Internal, fmt::format("evaluate: element width {} bytes", width));
  }
}

// The row-major view of a whole array.
inline StridedView row_major_view(std::span<const std::int64_t> dims) { return {0, row_major_strides(dims)}; }

}  // namespace act::hlo::eval_detail
