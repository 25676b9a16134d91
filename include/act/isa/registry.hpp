// The accelerators act ships, for code that picks one by name at run time (the `act` command,
// tests). A tool for other accelerators names its own list: act::isa::IsaList<Mine, ...>
// (isa/isa_list.hpp) or act::cli::main<Mine, ...>(argc, argv) (cli/main.hpp).
//
//   act::isa::with_isa("qkv", [](auto isa) { using Isa = typename decltype(isa)::type; ... });
//   act::isa::find_view("qkv")     // the type-erased IsaView
//   act::isa::isa_names()          // {"qkv", ...} in list order
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "act/isa/amx.hpp"
#include "act/isa/gemmini.hpp"
#include "act/isa/gemmini_hw.hpp"
#include "act/isa/gemmini_plus.hpp"
#include "act/isa/isa_list.hpp"
#include "act/isa/qkv.hpp"

namespace act::isa {

using BuiltinIsas = IsaList<Qkv, Amx, Gemmini, GemminiUnitScale, GemminiHw, GemminiPlus>;

inline constexpr std::size_t kIsaCount = BuiltinIsas::size;

// Names in list order.
inline std::vector<std::string_view> isa_names() { return BuiltinIsas::names(); }

// Calls f(std::type_identity<Isa>{}) for the built-in ISA called `name`; f must return the same
// type for every ISA. Throws act::Error(ErrorKind::Isa, "unknown ISA 'foo' (known: qkv, amx)").
template <class F>
decltype(auto) with_isa(std::string_view name, F&& f) {
  return BuiltinIsas::with_isa(name, f);
}

// The IsaView of the built-in ISA called `name` (throws like with_isa).
inline IsaView find_view(std::string_view name) { return BuiltinIsas::find(name); }

}  // namespace act::isa
