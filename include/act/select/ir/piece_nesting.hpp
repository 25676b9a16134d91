// How equal pieces enter the e-graph as binary concatenates (concat^H and the concatenate
// axioms are binary): the way init/output_split.hpp cuts an output into byte pieces, so that a
// byte piece of the output is the value of one subtree and needs no re-association. A 32-row
// output written one row per store then compiles without the axioms peeling a 31-deep chain.
// n = m * 2^k pieces with m odd: m groups of 2^k chained left to right, each group halved
// recursively; more than 32 groups (no output is cut that way) chain left to right.
#pragma once

#include <cstddef>
#include <span>

namespace act::select {

// `combine(a, b)` adds concatenate(a, b) and returns it; `parts` is not empty. A Piece is an
// e-class id, or anything a caller tracks along with one (the rows a piece covers).
template <class Piece, class Combine>
Piece nest_equal_pieces(std::span<const Piece> parts, Combine&& combine) {
  const auto balanced = [&combine](auto& self, std::span<const Piece> run) -> Piece {
    if (run.size() == 1) return run[0];
    const std::size_t half = run.size() / 2;
    const Piece lo = self(self, run.first(half));
    return combine(lo, self(self, run.subspan(half)));
  };
  std::size_t power = 1;
  while (parts.size() % (power * 2) == 0) power *= 2;
  const std::size_t groups = parts.size() / power;
  if (groups > 32) {
    Piece chain = parts[0];
    for (std::size_t k = 1; k < parts.size(); ++k) chain = combine(chain, parts[k]);
    return chain;
  }
  Piece chain = balanced(balanced, parts.first(power));
  for (std::size_t g = 1; g < groups; ++g) chain = combine(chain, balanced(balanced, parts.subspan(g * power, power)));
  return chain;
}

}  // namespace act::select
