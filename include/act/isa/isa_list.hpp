// A list of accelerators fixed at compile time and looked up by name at run time: what a tool
// such as `act` (act::cli::main<Isas...>) or a test picks an ISA from.
//
//   using MyIsas = act::isa::IsaList<tpu::TpuMini, act::isa::Qkv>;
//   MyIsas::find("tpu_mini")                   // the IsaView; Error(Isa) "unknown ISA 'x' (known: tpu_mini, qkv)"
//   MyIsas::with_isa("tpu_mini", [](auto isa) { using Isa = typename decltype(isa)::type; ... });
//   MyIsas::names()                            // {"tpu_mini", "qkv"}
//
// Every ISA of a list is validated while the list compiles (isa/validate.hpp), and two ISAs of
// one list may not share a name.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"

namespace act::isa {

// The ISA called `name` among `isas`; Error(Isa) naming the known ones otherwise.
inline const IsaView& find_isa(std::span<const IsaView> isas, std::string_view name) {
  for (const IsaView& isa : isas)
    if (isa.name == name) return isa;
  std::string known;
  for (const IsaView& isa : isas) known += (known.empty() ? "" : ", ") + std::string(isa.name);
  throw Error(ErrorKind::Isa, fmt::format("unknown ISA '{}' (known: {})", name, known));
}

template <class... Isas>
struct IsaList {
  static_assert(sizeof...(Isas) > 0, "an IsaList needs at least one ISA");
  static constexpr std::size_t size = sizeof...(Isas);

  // The descriptions, in list order (validated: a malformed one does not compile).
  static constexpr std::array<IsaView, size> views{view<Isas>()...};

  static_assert(
      [] {
        for (std::size_t i = 0; i < size; ++i)
          for (std::size_t j = 0; j < i; ++j)
            if (views[i].name == views[j].name) return false;
        return true;
      }(),
      "two ISAs of an act::isa::IsaList have the same name");

  static std::vector<std::string_view> names() { return {Isas::name...}; }

  static const IsaView& find(std::string_view name) { return find_isa(views, name); }

  // Calls f(std::type_identity<Isa>{}) for the ISA called `name`; f returns the same type for
  // every ISA. Throws like find() for an unknown name.
  template <class F>
  static decltype(auto) with_isa(std::string_view name, F&& f) {
    using R = decltype(f(std::type_identity<first>{}));
    return dispatch<R, Isas...>(name, f);
  }

 private:
  template <class First, class...>
  struct front {
    using type = First;
  };
  using first = typename front<Isas...>::type;

  template <class R, class Isa, class... Rest, class F>
  static R dispatch(std::string_view name, F& f) {
    if (Isa::name == name) return f(std::type_identity<Isa>{});
    if constexpr (sizeof...(Rest) > 0) return dispatch<R, Rest...>(name, f);
    else {
      find(name);  // throws: the name is none of the list's
      throw Error(ErrorKind::Internal, "IsaList::with_isa: unreachable");
    }
  }
};

}  // namespace act::isa
