// What every command of the `act` tool shares: the accelerators it knows, and what it is doing
// (so that running out of memory can be reported as "while compiling 'k.hlo'").
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "act/isa/description.hpp"
#include "act/isa/isa_list.hpp"

namespace act::cli {

struct Context {
  std::span<const isa::IsaView> isas;  // the tool's ISAs, in the order `act isas` lists them
  std::string phase = "starting";      // "reading 'k.hlo'", "compiling 'k.hlo' for ISA qkv", ...

  // The ISA called `name`; act::Error(Isa) "unknown ISA 'x' (known: ...)" otherwise.
  const isa::IsaView& isa(std::string_view name) const { return isa::find_isa(isas, name); }
};

}  // namespace act::cli
