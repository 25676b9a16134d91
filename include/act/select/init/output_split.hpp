// Module 1's shapes for outputs and n-ary concatenates: how an output is offered as byte pieces
// (so an instruction that writes part of it can be used, and concat^H in HBM assembles the
// pieces for free), and how an n-ary concatenate enters as binary ones (concat^H and the
// concatenate axioms are binary).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "act/select/ir/builder.hpp"
#include "act/select/ir/piece_nesting.hpp"

namespace act::select::init_detail {

// value (u8[n]) = concat of equal pieces: n = m * 2^k with m odd is first cut into m pieces of
// 2^k bytes (when 1 < m <= 32), then every power-of-two piece into halves, `depth` levels deep
// (4: 16 pieces; deeper splits grow the e-graph enough that backoff bans the dot-splitting
// axioms K1 needs), never below 16 bytes (the narrowest store, vpmovusdb's: K5's u8[3,16] output
// is three 16-byte rows). K1's 4 KiB output reaches its 1 KiB tiles; a 12 KiB one (3 x 4 KiB)
// does too.
inline std::int64_t split_bytes(TensorBuilder& b, egraph::Id value, int depth) {
  const Shape type = b.type(value);
  if (type.dims.size() != 1) return 0;
  const std::int64_t n = type.dims[0];
  if (depth <= 0 || n < 32) return n;
  std::int64_t power = 1;
  while (n % (power * 2) == 0) power *= 2;
  const std::int64_t pieces = n / power;
  if (pieces > 32 || (pieces == 1 && n % 2 != 0)) return n;
  const std::int64_t piece = pieces > 1 ? power : n / 2;
  if (piece < 16) return n;
  egraph::Id acc = b.slice_dim(value, 0, 0, piece);
  std::int64_t smallest = split_bytes(b, acc, pieces > 1 ? depth : depth - 1);
  for (std::int64_t at = piece; at < n; at += piece) {
    const egraph::Id part = b.slice_dim(value, 0, at, at + piece);
    smallest = std::min(smallest, split_bytes(b, part, pieces > 1 ? depth : depth - 1));
    acc = b.concat({acc, part}, 0);
  }
  b.g.unite(value, acc);
  return smallest;
}

// An n-ary concatenate enters as binary ones: equal pieces nested as ir/piece_nesting.hpp
// says (the way split_bytes cuts an output), unequal pieces as the left-nested chain
// concat(concat(a, b), c), which the axioms re-associate when needed.
inline egraph::Id nest_concatenate(TensorGraph& graph, const TensorOp& op, const std::vector<egraph::Id>& parts,
                                   std::int64_t dimension) {
  const auto extent = [&](egraph::Id id) { return graph.data(id).type.dims.at(static_cast<std::size_t>(dimension)); };
  bool equal = true;
  for (const egraph::Id part : parts) equal = equal && extent(part) == extent(parts[0]);
  const auto combine = [&](egraph::Id a, egraph::Id b) { return graph.add(op, {a, b}); };
  if (!equal) {
    egraph::Id chain = parts[0];
    for (std::size_t k = 1; k < parts.size(); ++k) chain = combine(chain, parts[k]);
    return chain;
  }
  return nest_equal_pieces(std::span<const egraph::Id>(parts), combine);
}

}  // namespace act::select::init_detail
