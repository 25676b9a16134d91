// Facts read off an ISA description once per process instead of once per compile.
//
// Phase 1 reads several facts off the instructions' semantics (the sizes its split axioms cut
// at, which operators some instruction applies to two inputs, which types a lane blend may
// transpose): pure functions of the description, yet each compile built them again for every
// rule set (several per compile: one per output group and attempt), up to a tenth of an AMX
// compile. A PerIsaCache keeps one answer per description.
//
// A description is named by its instruction array's address and length plus a fingerprint of
// what the facts read (names, alpha names, constraints, semantics text): the built-in
// descriptions are static data, and a description built at run time (tests) at an address an
// earlier one used is told apart by its text. Thread-safe: soak workers compile in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <utility>

#include "act/isa/description.hpp"

namespace act::isa {

// FNV-1a over every instruction's name, alpha names, constraints and semantics.
inline std::uint64_t semantics_fingerprint(const IsaView& isa) {
  std::uint64_t h = 14695981039346656037ull;
  const auto mix = [&h](std::string_view text) {
    for (char c : text) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // separator: ("ab", "c") and ("a", "bc") differ
    h *= 1099511628211ull;
  };
  for (const Instruction& inst : isa.instructions) {
    mix(inst.name);
    for (std::string_view a : inst.alpha) mix(a);
    for (std::string_view c : inst.constraints) mix(c);
    mix(inst.semantics);
  }
  return h;
}

template <class Fact>
class PerIsaCache {
 public:
  // The fact for `isa`, computed by `compute(isa)` the first time this description is asked for.
  template <class Compute>
  std::shared_ptr<const Fact> get(const IsaView& isa, Compute&& compute) {
    const Key key{isa.instructions.data(), isa.instructions.size(), semantics_fingerprint(isa)};
    const std::lock_guard lock(mutex_);
    std::shared_ptr<const Fact>& slot = facts_[key];
    if (!slot) slot = std::make_shared<const Fact>(std::forward<Compute>(compute)(isa));
    return slot;
  }

 private:
  using Key = std::tuple<const void*, std::size_t, std::uint64_t>;
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const Fact>> facts_;
};

}  // namespace act::isa
