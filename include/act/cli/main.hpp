// The `act` tool as a library: a tool for your own accelerators is three lines,
//
//   #include <act/cli/main.hpp>
//   #include "my_accelerator.hpp"
//   int main(int argc, char** argv) { return act::cli::main<my::Accelerator>(argc, argv); }
//
// with every subcommand of the shipped `act` (parse, verify, compile, run, isas, rules, soak)
// over the ISAs named (validated while the tool compiles; an act::isa::IsaList<...> works in
// their place). The shipped tool is act::cli::main<act::isa::BuiltinIsas>.
#pragma once

#include <span>
#include <type_traits>

#include "act/core/linkage.hpp"
#include "act/isa/description.hpp"
#include "act/isa/isa_list.hpp"

namespace act::cli {

// Runs the tool on the command line over `isas`; returns the exit code. Never throws.
ACT_API int run(int argc, char** argv, std::span<const isa::IsaView> isas);

namespace main_detail {

template <class... Isas>
struct ListOf {
  using type = isa::IsaList<Isas...>;
};
template <class... Isas>
struct ListOf<isa::IsaList<Isas...>> {
  using type = isa::IsaList<Isas...>;
};

}  // namespace main_detail

template <class... Isas>
int main(int argc, char** argv) {
  return run(argc, argv, main_detail::ListOf<Isas...>::type::views);
}

}  // namespace act::cli

#if ACT_DEFINES_IMPLEMENTATION
#include "act/cli/run.hpp"
#endif
