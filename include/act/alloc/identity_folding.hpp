// Folding identity round trips out of a pii graph before allocation.
//
// Extraction may meet a request with slice^H(concat^H(a, b)) that selects exactly `a`: the two
// identity instructions cost nothing to run, but concat^H asks phase 2 to place a and b side by
// side, which in a register file (AVX-512's zmm) means two adjacent registers and, in a
// 500-node graph, a CSP the constructive path cannot place and Z3 cannot decide in seconds.
// Reading `a` itself is the same value with one constraint less. Roots are left as they are
// (a root is never a leaf, and the kernel's outputs sit where the image puts them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "act/select/pii_graph.hpp"

namespace act::alloc {

namespace identity_folding_detail {

// Where slice^H `s` reads from once it descends through every concat^H whose one operand holds
// all it selects: that operand (`target`) and the ranges within it. `target` is the concat^H
// `s` reads when it straddles two operands (or is no slice^H of a concat^H at all: then `s`).
struct SliceSource {
  std::size_t target;
  std::vector<hlo::SliceRange> ranges;
  bool descended = false;  // target is not the node `s` reads
};

inline bool selects_whole(const std::vector<hlo::SliceRange>& ranges, const std::vector<std::int64_t>& dims) {
  if (ranges.size() != dims.size()) return false;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (ranges[d].start != 0 || ranges[d].limit != dims[d] || ranges[d].stride != 1) return false;
  return true;
}

inline SliceSource slice_source(const std::vector<select::PiiNode>& nodes, std::size_t s) {
  const select::PiiNode& slice = nodes[s];
  if (slice.kind != select::PiiNodeKind::SliceH || slice.operands.size() != 1) return {s, {}};
  SliceSource source{slice.operands[0], slice.slice};
  for (;;) {
    const select::PiiNode& concat = nodes[source.target];
    if (concat.kind != select::PiiNodeKind::ConcatH || concat.dimension < 0) return source;
    const auto dim = static_cast<std::size_t>(concat.dimension);
    if (source.ranges.size() != concat.type.dims.size() || dim >= source.ranges.size()) return source;
    const hlo::SliceRange along = source.ranges[dim];
    if (along.stride != 1) return source;
    std::int64_t offset = 0;
    bool inside = false;
    for (std::size_t o : concat.operands) {
      const auto& part = nodes[o].type.dims;
      if (part.size() != source.ranges.size()) return source;
      if (along.start >= offset && along.limit <= offset + part[dim]) {
        source.target = o;
        source.ranges[dim] = hlo::SliceRange{along.start - offset, along.limit - offset, 1};
        source.descended = inside = true;
        break;
      }
      offset += part[dim];
    }
    if (!inside) return source;
  }
}

}  // namespace identity_folding_detail

// `graph` where every non-root read of a slice^H that lies inside one operand of a concat^H
// (repeatedly, through nested concat^H) reads that operand instead: the operand itself when
// the slice selects all of it, else a slice^H of it. Unchanged when no slice^H does.
// Why the partial case matters: a row of a 32-row concat^H of zmm rows (the rows of
// concatenate(x, x) read one at a time) keeps all 32 registers adjacent and live together,
// more than AVX-512's 32 registers allow next to anything else; the row's own piece does not
// (AMX sound-soak kernel 10 of seed 7).
inline select::PiiGraph fold_slices_of_concats(const select::PiiGraph& graph) {
  std::vector<select::PiiNode> nodes = graph.nodes();
  const std::size_t given = nodes.size();
  bool changed = false;
  // The slice^H nodes added, by (target, ranges), so equal reads share one.
  std::map<std::pair<std::size_t, std::vector<std::int64_t>>, std::size_t> added;
  for (std::size_t i = 0; i < given; ++i)
    for (std::size_t k = 0; k < nodes[i].operands.size(); ++k)
      for (;;) {  // the operand read instead may be a slice^H of a concat^H again
        const std::size_t o = nodes[i].operands[k];
        identity_folding_detail::SliceSource source = identity_folding_detail::slice_source(nodes, o);
        if (!source.descended) break;
        changed = true;
        if (identity_folding_detail::selects_whole(source.ranges, nodes[source.target].type.dims)) {
          nodes[i].operands[k] = source.target;
          continue;
        }
        std::vector<std::int64_t> key;
        for (const hlo::SliceRange& r : source.ranges) key.insert(key.end(), {r.start, r.limit, r.stride});
        auto [at, fresh] = added.try_emplace({source.target, std::move(key)}, nodes.size());
        if (fresh) {
          select::PiiNode slice = nodes[o];  // same type, buffer and e-class: the same value
          slice.operands = {source.target};
          slice.slice = std::move(source.ranges);
          nodes.push_back(std::move(slice));
        }
        nodes[i].operands[k] = at->second;
        break;
      }
  if (!changed) return graph;
  return select::PiiGraph(std::move(nodes), graph.roots());
}

}  // namespace act::alloc
