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

// concat^H and the concatenate axioms are binary, so an n-ary concatenate enters nested. Equal
// pieces nest the way split_bytes cuts an output (an odd number m <= 32 of groups chained
// left to right, each group halved recursively), so a byte piece of the output is the value of
// one subtree and needs no re-association: a 32-row output written one row per store compiles
// without the axioms peeling a 31-deep chain. Unequal pieces enter as the left-nested chain
// concat(concat(a, b), c); the axioms re-associate it when needed.
inline egraph::Id nest_balanced(TensorGraph& graph, const TensorOp& op, std::span<const egraph::Id> parts) {
  if (parts.size() == 1) return parts[0];
  const std::size_t half = parts.size() / 2;
  return graph.add(op, {nest_balanced(graph, op, parts.first(half)), nest_balanced(graph, op, parts.subspan(half))});
}

inline egraph::Id nest_concatenate(TensorGraph& graph, const TensorOp& op, const std::vector<egraph::Id>& parts,
                                   std::int64_t dimension) {
  const auto extent = [&](egraph::Id id) { return graph.data(id).type.dims.at(static_cast<std::size_t>(dimension)); };
  bool equal = true;
  for (const egraph::Id part : parts) equal = equal && extent(part) == extent(parts[0]);
  std::size_t power = 1;
  while (parts.size() % (power * 2) == 0) power *= 2;
  const std::size_t groups = parts.size() / power;
  if (!equal || groups > 32) {
    egraph::Id chain = parts[0];
    for (std::size_t k = 1; k < parts.size(); ++k) chain = graph.add(op, {chain, parts[k]});
    return chain;
  }
  const std::span<const egraph::Id> all(parts);
  egraph::Id chain = nest_balanced(graph, op, all.first(power));
  for (std::size_t g = 1; g < groups; ++g)
    chain = graph.add(op, {chain, nest_balanced(graph, op, all.subspan(g * power, power))});
  return chain;
}

}  // namespace act::select::init_detail
