// What the e-graph needs from a language and an analysis. The engine knows nothing about the
// operators themselves: a language is a traits type naming an operator payload `Op` (any
// equality-comparable value, e.g. opcode + attributes) with a hash and a small-integer
// discriminant (the operator kind, used to index classes for e-matching).
//
//   struct MyLanguage {
//     using Op = ...;                                     // copyable, ==
//     static std::uint64_t hash(const Op&);               // must agree with ==, deterministic
//     static std::uint32_t discriminant(const Op&);       // operator kind, < kMaxDiscriminant
//   };
//
// An analysis attaches a `Data` value to every e-class:
//
//   struct MyAnalysis {
//     using Data = ...;
//     template <class G> Data make(const G& egraph, NodeView<Op> node);
//     MergeResult merge(Data& into, Data from);           // join; report which side changed
//     template <class G> void modify(G& egraph, Id cls);  // optional: may add nodes and unite
//   };
//
// `make` must read child data through `egraph.data(child)`: while rebuilding, a node's children
// may not be canonical yet and `data` canonicalises for you. Analysis hooks must not throw (the
// e-graph would be left half-updated).
#pragma once

#include <concepts>
#include <cstdint>
#include <span>

#include "act/egraph/id.hpp"

namespace act::egraph {

// Discriminants index a dense table; opcodes and enum values fit comfortably.
inline constexpr std::uint32_t kMaxDiscriminant = 1u << 16;

template <class L>
concept Language = std::copy_constructible<typename L::Op> &&
    requires(const typename L::Op& a, const typename L::Op& b) {
      { a == b } -> std::convertible_to<bool>;
      { L::hash(a) } -> std::convertible_to<std::uint64_t>;
      { L::discriminant(a) } -> std::convertible_to<std::uint32_t>;
    };

// A read-only look at one e-node. Valid until the e-graph is next modified.
template <class Op>
struct NodeView {
  Id id;                        // the node's own id (find(id) is its class)
  const Op& op;
  std::span<const Id> children; // canonical class ids when the e-graph is clean
};

// Result of joining two analysis values: whether the result differs from `into` as it was
// (a_changed) and from `from` (b_changed). Conservative answers (true) are allowed; they only
// cost extra propagation.
struct MergeResult {
  bool a_changed = false;
  bool b_changed = false;
};

// The analysis used when none is wanted.
struct NoAnalysis {
  struct Data {
    friend bool operator==(const Data&, const Data&) = default;
  };
  template <class G, class NodeViewT>
  Data make(const G&, const NodeViewT&) { return {}; }
  MergeResult merge(Data&, const Data&) { return {}; }
};

// Mixing used for node hashes: deterministic across runs and platforms.
constexpr std::uint64_t mix_hash(std::uint64_t seed, std::uint64_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  return seed;
}

constexpr std::uint64_t finish_hash(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace act::egraph
