// The accelerators act ships, for code that picks one by name at run time (the CLI, tests).
//
//   act::isa::with_isa("qkv", [](auto isa) { using Isa = typename decltype(isa)::type; ... });
//   act::isa::find_view("qkv")     // the type-erased IsaView
//   act::isa::isa_names()          // {"qkv", ...} in registry order
//
// Adding an ISA: include its header and append `boost::hana::type_c<YourIsa>` to kIsas.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>

#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/gemmini.hpp"
#include "act/isa/gemmini_hw.hpp"
#include "act/isa/gemmini_plus.hpp"
#include "act/isa/qkv.hpp"

namespace act::isa {

inline constexpr auto kIsas = boost::hana::make_tuple(  //
    boost::hana::type_c<Qkv>,                           //
    boost::hana::type_c<Amx>,                           //
    boost::hana::type_c<Gemmini>,                       //
    boost::hana::type_c<GemminiUnitScale>,              //
    boost::hana::type_c<GemminiHw>,                     //
    boost::hana::type_c<GemminiPlus>                    //
);

inline constexpr std::size_t kIsaCount = decltype(boost::hana::length(kIsas))::value;

// Names in registry order.
inline std::vector<std::string_view> isa_names() {
  return boost::hana::unpack(kIsas, [](auto... isa) {
    return std::vector<std::string_view>{decltype(isa)::type::name...};
  });
}

namespace detail {

[[noreturn]] inline void throw_unknown_isa(std::string_view name) {
  std::string known;
  for (std::string_view n : isa_names()) known += (known.empty() ? "" : ", ") + std::string(n);
  throw Error(ErrorKind::Isa, fmt::format("unknown ISA '{}' (known: {})", name, known));
}

template <std::size_t I, class R, class F>
R dispatch_isa(std::string_view name, F& f) {
  if constexpr (I == kIsaCount) {
    throw_unknown_isa(name);
  } else {
    constexpr auto isa = boost::hana::at_c<I>(kIsas);
    if (decltype(isa)::type::name == name) return f(isa);
    return dispatch_isa<I + 1, R>(name, f);
  }
}

}  // namespace detail

// Calls f(boost::hana::type_c<Isa>) for the ISA called `name`; f must return the same type for
// every ISA. Throws act::Error(ErrorKind::Isa, "unknown ISA 'foo' (known: qkv)") otherwise.
template <class F>
decltype(auto) with_isa(std::string_view name, F&& f) {
  using R = decltype(f(boost::hana::at_c<0>(kIsas)));
  return detail::dispatch_isa<0, R>(name, f);
}

// The IsaView of the ISA called `name` (throws like with_isa).
inline IsaView find_view(std::string_view name) {
  return with_isa(name, [](auto isa) { return view<typename decltype(isa)::type>(); });
}

}  // namespace act::isa
