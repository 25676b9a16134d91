// `act isas`: the accelerators the tool knows, with their buffers and instructions.
#pragma once

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/cli/args.hpp"
#include "act/cli/context.hpp"
#include "act/cli/exit_codes.hpp"

namespace act::cli {

inline std::string buffer_description(const isa::Buffer& b) {
  std::vector<std::int64_t> access(b.access_dims.begin(), b.access_dims.end());
  std::vector<std::int64_t> unit(b.unit_dims.begin(), b.unit_dims.end());
  if (b.is_hbm) return fmt::format("{:<8} HBM, {} bytes", b.name, access.empty() ? 0 : access[0]);
  return fmt::format("{:<8} [{}] of {}[{}]", b.name, fmt::join(access, ","), name(b.dtype), fmt::join(unit, ","));
}

inline int run_isas(Args& args, Context& context) {
  args.positionals(0);
  for (const isa::IsaView& isa : context.isas) {
    std::cout << isa.name << "\n  buffers:\n";
    for (const auto& b : isa.buffers) std::cout << "    " << buffer_description(b) << "\n";
    if (!isa.state.empty()) {
      std::cout << "  state:\n";
      for (const auto& s : isa.state) std::cout << fmt::format("    {} (initially {})\n", s.name, s.initial);
    }
    std::cout << "  instructions:\n";
    for (const auto& i : isa.instructions) {
      const auto names = [](const isa::Names& list) {
        return list.empty() ? std::string("none") : fmt::format("{}", fmt::join(list.begin(), list.end(), ", "));
      };
      std::cout << fmt::format("    {}(alpha: {}; beta: {})\n", i.name, names(i.alpha), names(i.beta));
    }
  }
  return kExitOk;
}

}  // namespace act::cli
