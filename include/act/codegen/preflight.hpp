// Checks a kernel against an ISA before a compile searches for a program: a kernel whose HBM
// image (inputs and outputs, DESIGN.md "HBM image of a kernel") is larger than the ISA's HBM
// has no program, whatever the search does, and a search over it would only spend the budget
// (or memory: tensors of billions of elements) to say so. `act verify` checks the same thing.
// Zero-element outputs are refused here too (see below).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::codegen {

// The ISA's HBM size in bytes (its first access dim), or -1 when it declares no HBM.
inline std::int64_t hbm_bytes(const isa::IsaView& isa) {
  for (const auto& b : isa.buffers)
    if (b.is_hbm) return b.access_dims.empty() ? 0 : b.access_dims[0];
  return -1;
}

// Why no program can exist for `kernel` on `isa` before any search, or nothing. Throws
// act::Error for a kernel act cannot lay out at all (a tuple inside a tuple, an element type
// act does not compute), as sim::kernel_image does.
inline std::optional<std::string> preflight(const hlo::Module& kernel, const isa::IsaView& isa) {
  const sim::KernelImage image = sim::kernel_image(kernel);
  // An output without elements needs no instruction, but the search would look for a way to
  // produce its zero bytes until the budget ends; act says so at once instead.
  for (const sim::HbmRegion& r : image.outputs)
    if (r.shape.element_count() == 0)
      return fmt::format("no program for kernel '{}' on ISA {}: output '{}' ({}) has no elements; act does not compile "
                         "zero-element outputs (the empty program computes them)",
                         kernel.name, isa.name, r.name, to_string(r.shape));
  const std::int64_t hbm = hbm_bytes(isa);
  if (hbm >= 0 && image.constant_pool_address > hbm)
    return fmt::format("no program for kernel '{}' on ISA {}: its inputs and outputs need {} bytes of HBM and the ISA has {}",
                       kernel.name, isa.name, image.constant_pool_address, hbm);
  return std::nullopt;
}

}  // namespace act::codegen
