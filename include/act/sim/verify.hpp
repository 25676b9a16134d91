// verify(): run a program on random inputs in the simulator and compare its outputs with the
// reference interpreter (hlo::evaluate) on the kernel.
//
// Inputs (deterministic from the seed): floats uniform in [-1, 1] rounded to the dtype,
// integers uniform over their full range, pred 0/1.
// Comparison: integers and pred exactly. Floats pass when
//     |got - expected| <= relative_ulps * ulp(expected) + absolute_ulps * eps * max_abs
// where eps is the dtype's machine epsilon (bf16 2^-7, f16 2^-10, f32 2^-23, f64 2^-52),
// ulp(x) = max(eps * |x|, the smallest subnormal) (subnormals are spaced by the smallest one,
// not by eps * |x|), and max_abs the largest |expected| in that output. This admits the
// few-ulp differences that re-association (a dot split into partial sums, a reduction in
// another order, a product of three factors in another order) causes, and nothing coarser.
// NaN matches NaN; infinities must match exactly.
//
// Nothing else is free: every on-chip buffer and all of HBM start with random bytes (a
// different stream per trial) before the inputs and the constant pool are written, so a
// program that reads a byte it never wrote does not get zeros. After the run every byte of
// HBM outside scratch is checked: the inputs' bytes (tiling padding included) and the
// constant pool's must be unchanged, and the outputs' elements equal the reference. Scratch
// is HBM from the constant pool's address on, except the program's constant blocks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/core/random.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sim/machine.hpp"

namespace act::sim {

struct VerifyOptions {
  int trials = 10;
  std::uint64_t seed = 0;
  double relative_ulps = 4;
  double absolute_ulps = 1;  // of the output's largest magnitude
  // HBM size; default: what the ISA declares.
  std::optional<std::int64_t> hbm_bytes;
  ImageOptions image;  // must be the layout the program was compiled for
};

struct VerifyResult {
  bool ok = false;
  // "verification holds (N trials, seed S): ..." saying what was checked, or the first
  // mismatch (an output element, a changed input or constant byte, an execution error).
  std::string message;
  int trials_run = 0;   // trials that completed (the failing one included)
};

// How a float dtype's values are spaced: epsilon (from 1 to the next larger value) and the
// smallest positive subnormal (the spacing near zero).
struct FloatSpacing {
  double epsilon, smallest_subnormal;
};
constexpr FloatSpacing float_spacing(DType t) {
  switch (t) {
    case DType::bf16: return {0x1p-7, 0x1p-133};
    case DType::f16: return {0x1p-10, 0x1p-24};
    case DType::f32: return {0x1p-23, 0x1p-149};
    default: return {0x1p-52, 0x1p-1074};
  }
}
constexpr double machine_epsilon(DType t) { return float_spacing(t).epsilon; }

namespace verify_detail {

using Random = SplitMix64;  // portable: inputs are the same on every standard library

inline Literal random_literal(const Shape& shape, Random& random) {
  Literal l(Shape(shape.dtype, shape.dims));
  const std::int64_t n = l.element_count();
  for (std::int64_t i = 0; i < n; ++i) {
    if (shape.dtype == DType::pred) l.set_bits(i, random.next() & 1u);
    else if (is_float(shape.dtype)) l.set_float(i, random.uniform_minus_one_to_one());
    else l.set_bits(i, random.next());  // set_bits keeps the element's width: full range
  }
  return l;
}

inline std::string format_index(const Shape& shape, std::int64_t linear) {
  std::vector<std::int64_t> index(shape.dims.size());
  for (std::size_t d = shape.dims.size(); d-- > 0;) {
    index[d] = shape.dims[d] ? linear % shape.dims[d] : 0;
    linear = shape.dims[d] ? linear / shape.dims[d] : 0;
  }
  return fmt::format("[{}]", fmt::join(index, ","));
}

inline std::string format_element(const Literal& l, std::int64_t i) {
  if (is_float(l.dtype()))
    return fmt::format("{} (bits 0x{:0{}x})", l.get_float(i), l.get_bits(i), byte_width(l.dtype()) * 2);
  if (l.dtype() == DType::u64) return fmt::format("{}", l.get_bits(i));
  return fmt::format("{}", l.get_int(i));
}

// The first element where `got` differs from `expected`, or -1.
inline std::int64_t first_mismatch(const Literal& expected, const Literal& got, const VerifyOptions& options) {
  const std::int64_t n = expected.element_count();
  if (!is_float(expected.dtype())) {
    for (std::int64_t i = 0; i < n; ++i)
      if (expected.get_bits(i) != got.get_bits(i)) return i;
    return -1;
  }
  double max_abs = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (std::isfinite(expected.get_float(i))) max_abs = std::max(max_abs, std::fabs(expected.get_float(i)));
  const auto [eps, tiny] = float_spacing(expected.dtype());
  for (std::int64_t i = 0; i < n; ++i) {
    const double e = expected.get_float(i), g = got.get_float(i);
    if (std::isnan(e) || std::isnan(g)) {
      if (std::isnan(e) != std::isnan(g)) return i;
      continue;
    }
    if (std::isinf(e) || std::isinf(g)) {
      if (e != g) return i;
      continue;
    }
    const double ulp = std::max(eps * std::fabs(e), tiny);
    if (std::fabs(g - e) > options.relative_ulps * ulp + options.absolute_ulps * eps * max_abs) return i;
  }
  return -1;
}

// The first byte where `after` differs from `before`, or -1.
inline std::int64_t first_changed_byte(std::span<const std::uint8_t> before, std::span<const std::uint8_t> after) {
  const auto [b, a] = std::mismatch(before.begin(), before.end(), after.begin(), after.end());
  return b == before.end() ? -1 : static_cast<std::int64_t>(b - before.begin());
}

// The seed of trial `trial`'s random inputs, and of its random initial memory (another stream).
inline std::uint64_t input_seed(std::uint64_t seed, int trial) { return seed * 0x100000001b3ull + static_cast<std::uint64_t>(trial); }
inline std::uint64_t memory_seed(std::uint64_t seed, int trial) { return ~input_seed(seed, trial) * 0x9e3779b97f4a7c15ull; }

// Says which protected HBM byte the program changed: an input's (every byte of its region) or
// a constant block's. Empty when none.
inline std::string changed_protected_bytes(const KernelImage& image, const Program& program, std::span<const std::uint8_t> before,
                                           std::span<const std::uint8_t> hbm) {
  for (const HbmRegion& r : image.inputs) {
    const auto at = static_cast<std::size_t>(r.address), n = static_cast<std::size_t>(r.bytes);
    const std::int64_t i = first_changed_byte(before.subspan(at, n), hbm.subspan(at, n));
    if (i >= 0)
      return fmt::format("the program changed input '{}' ({} at HBM {}): byte {} (HBM {}) was 0x{:02x}, is 0x{:02x}", r.name,
                         to_string(r.shape), r.address, i, r.address + i, before[at + static_cast<std::size_t>(i)],
                         hbm[at + static_cast<std::size_t>(i)]);
  }
  for (const ConstantBlock& c : program.constants) {
    const auto at = static_cast<std::size_t>(c.address);
    const std::int64_t i = first_changed_byte(c.bytes, hbm.subspan(at, c.bytes.size()));
    if (i >= 0)
      return fmt::format("the program changed its constant pool: byte HBM {} was 0x{:02x}, is 0x{:02x}", c.address + i,
                         c.bytes[static_cast<std::size_t>(i)], hbm[at + static_cast<std::size_t>(i)]);
  }
  return {};
}

}  // namespace verify_detail

// Runs `program` options.trials times on random inputs and compares with hlo::evaluate(kernel).
// A mismatch or an execution error of the program is a failed result; a kernel that cannot be
// laid out or evaluated throws act::Error (bad input, not a verification failure).
inline VerifyResult verify(const hlo::Module& kernel, const isa::IsaView& isa, const Program& program,
                           const VerifyOptions& options = {}) {
  const KernelImage image = kernel_image(kernel, options.image);
  const hlo::Computation& entry = kernel.entry_computation();
  MachineOptions machine_options;
  machine_options.hbm_bytes = options.hbm_bytes;
  Machine machine(isa, machine_options);
  if (static_cast<std::int64_t>(machine.hbm().size()) < image.constant_pool_address)
    throw Error(ErrorKind::Execution, fmt::format("the kernel's inputs and outputs need {} bytes of HBM; ISA {} has {}",
                                                  image.constant_pool_address, isa.name, machine.hbm().size()));
  VerifyResult result;
  for (const ConstantBlock& c : program.constants)
    if (c.address < image.constant_pool_address) {
      result.message = fmt::format("the program's constant block at HBM {} lies inside the kernel's inputs and outputs (0..{})",
                                   c.address, image.constant_pool_address);
      return result;
    }
  std::vector<std::uint8_t> before;  // HBM as the program starts (inputs and constants written)
  for (int trial = 0; trial < options.trials; ++trial) {
    verify_detail::Random random{verify_detail::input_seed(options.seed, trial)};
    std::vector<Literal> inputs;
    for (int p : entry.parameters) inputs.push_back(verify_detail::random_literal(entry.instructions.at(static_cast<std::size_t>(p)).shape, random));
    Literal reference = hlo::evaluate(kernel, std::span<const Literal>(inputs));
    std::vector<Literal> expected;
    if (reference.is_tuple()) expected = reference.elements();
    else expected.push_back(std::move(reference));
    if (expected.size() != image.outputs.size())
      throw Error(ErrorKind::Internal, fmt::format("the kernel returns {} values but its image has {} outputs", expected.size(), image.outputs.size()));

    verify_detail::Random memory{verify_detail::memory_seed(options.seed, trial)};
    machine.randomize(memory);
    ++result.trials_run;
    std::vector<Literal> got;
    try {
      write_inputs(image, inputs, machine.hbm());
      machine.load_constants(program.constants);
      before.assign(machine.hbm().begin(), machine.hbm().end());
      for (const auto& ci : program.instructions) machine.execute(ci);
      got = read_outputs(image, machine.hbm());
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Execution && e.kind() != ErrorKind::Isa) throw;
      result.message = fmt::format("the program failed in trial {} (seed {}): {}", trial, options.seed, e.what());
      return result;
    }
    for (std::size_t o = 0; o < expected.size(); ++o) {
      if (expected[o].is_tuple() || !expected[o].shape().same_type(got[o].shape()))
        throw Error(ErrorKind::Unsupported, fmt::format("output {} of the kernel is {} but its HBM region holds {}", o,
                                                        to_string(expected[o].shape()), to_string(got[o].shape())));
      const std::int64_t i = verify_detail::first_mismatch(expected[o], got[o], options);
      if (i < 0) continue;
      const HbmRegion& r = image.outputs[o];
      result.message = fmt::format(
          "mismatch in output {} ('{}' {} at HBM {}) at index {}: expected {}, got {} (trial {}, seed {})", o, r.name,
          to_string(r.shape), r.address, verify_detail::format_index(r.shape, i), verify_detail::format_element(expected[o], i),
          verify_detail::format_element(got[o], i), trial, options.seed);
      return result;
    }
    const std::string changed = verify_detail::changed_protected_bytes(image, program, before, machine.hbm());
    if (!changed.empty()) {
      result.message = fmt::format("{} (trial {}, seed {})", changed, trial, options.seed);
      return result;
    }
  }
  result.ok = true;
  result.message = fmt::format("verification holds ({} trials, seed {}): buffers and HBM scratch started random; outputs equal, "
                               "inputs and constant pool unchanged",
                               options.trials, options.seed);
  return result;
}

inline VerifyResult verify(const hlo::Module& kernel, const isa::IsaView& isa, const Program& program, int trials,
                           std::uint64_t seed) {
  VerifyOptions options;
  options.trials = trials;
  options.seed = seed;
  return verify(kernel, isa, program, options);
}

}  // namespace act::sim
