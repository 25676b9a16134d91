// The sizes a data slice can take: within its buffer. A slice of an instruction's input or
// output spans `length` units along each access dim from `start`, so for every length written
// over alpha alone, `length <= access dim - start` (start a literal, else 0) must hold for the
// instruction to exist at that alpha. The descriptions leave these bounds to the buffers
// (Gemmini's mvin_spad_unit only says cols >= 1; spad is 16 wide), and a rule that did not
// check them built mvin_spad_unit(rows = 1, cols = 256), which no allocation can place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/isa/description.hpp"
#include "act/sym/expr.hpp"

namespace act::select::isa_rule_detail {

// The bounds as constraint text over alpha, e.g. "(cols) <= 16".
inline std::vector<std::string> slice_bounds(const isa::IsaView& isa, const isa::Instruction& inst) {
  const auto is_alpha = [&inst](std::string_view name) {
    for (std::string_view a : inst.alpha)
      if (a == name) return true;
    return false;
  };
  std::vector<std::string> bounds;
  const auto add = [&](const isa::SliceMap& slice) {
    const isa::Buffer* buffer = isa.find_buffer(slice.buffer);
    if (!buffer) return;
    for (std::size_t d = 0; d < slice.length.size() && d < buffer->access_dims.size(); ++d) {
      const sym::ParsedText length(std::string(slice.length[d]));
      bool over_alpha = true;
      for (std::string_view id : sym::free_identifiers(length.expr)) over_alpha = over_alpha && is_alpha(id);
      if (!over_alpha) continue;
      std::int64_t room = buffer->access_dims[d];
      if (d < slice.start.size()) {
        const sym::ParsedText start(std::string(slice.start[d]));
        if (sym::free_identifiers(start.expr).size() == 0)
          if (const auto r = sym::try_evaluate(start.expr, sym::Bindings{}); r.ok()) room -= r.value;
      }
      bounds.push_back(fmt::format("({}) <= {}", slice.length[d], room));
    }
  };
  for (const isa::SliceMap& slice : inst.inputs) add(slice);
  for (const isa::SliceMap& slice : inst.outputs) add(slice);
  return bounds;
}

}  // namespace act::select::isa_rule_detail
