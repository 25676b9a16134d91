// What each instruction of a pii graph reads of the on-chip buffers at once, whatever the
// schedule: phase 2 keeps every storage node an operand lies in live while the instruction
// runs, and a slice^H / concat^H operand lies in the storage nodes it views (all of each).
// When one instruction reads more units of a buffer than the buffer holds (units: the product
// of the access-dim extents), no schedule or allocation of the graph exists.
// Two readers, one rule: phase 2 proves such graphs unallocatable at once (alloc/allocate.hpp,
// overfull_instruction), and the greedy graph gives the views of such an instruction copies of
// their own (select/search/greedy.hpp, views_to_own).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "act/isa/description.hpp"
#include "act/select/pii_graph.hpp"

namespace act::select {

class OnChipReads {
 public:
  OnChipReads(const PiiGraph& graph, const isa::IsaView& isa) : graph_(graph), isa_(isa) {
    const std::size_t n = graph.nodes().size();
    owners_.resize(n);
    units_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const PiiNode& x = graph.node(i);
      const isa::Buffer& buffer = isa.buffers[static_cast<std::size_t>(x.buffer)];
      if (!buffer.is_hbm && x.type.dims.size() >= buffer.access_dims.size()) {
        units_[i] = 1;
        for (std::size_t d = 0; d < buffer.access_dims.size(); ++d) units_[i] *= x.type.dims[d];
      }
      if (x.kind == PiiNodeKind::Pii) owners_[i] = {i};
      if (x.kind == PiiNodeKind::SliceH || x.kind == PiiNodeKind::ConcatH)
        for (std::size_t o : x.operands)
          for (std::size_t s : owners_[o])
            if (std::find(owners_[i].begin(), owners_[i].end(), s) == owners_[i].end()) owners_[i].push_back(s);
    }
  }

  // The instruction (Pii) nodes whose bytes node `i` lies in: itself for an instruction, the
  // viewed ones for slice^H / concat^H, none for leaves (they stay in HBM) and overlay^H.
  const std::vector<std::size_t>& owners(std::size_t i) const { return owners_[i]; }
  // Node `i`'s extent in units of its on-chip buffer (0 in HBM).
  std::int64_t units(std::size_t i) const { return units_[i]; }
  // What buffer `b` holds, in units (its access dims' product).
  std::int64_t capacity(std::size_t b) const {
    std::int64_t c = 1;
    for (auto a : isa_.buffers[b].access_dims) c *= a;
    return c;
  }
  // The units of on-chip buffer `b` that instruction node `q` reads at once: the distinct
  // storage its operands lie in (0 for HBM).
  std::int64_t reads(std::size_t q, std::size_t b) const {
    if (isa_.buffers[b].is_hbm) return 0;
    std::vector<std::size_t> read;
    for (std::size_t o : graph_.node(q).operands)
      for (std::size_t s : owners_[o])
        if (static_cast<std::size_t>(graph_.node(s).buffer) == b && std::find(read.begin(), read.end(), s) == read.end())
          read.push_back(s);
    std::int64_t need = 0;
    for (std::size_t s : read) need += units_[s];
    return need;
  }
  bool overfills(std::size_t q, std::size_t b) const { return reads(q, b) > capacity(b); }

 private:
  const PiiGraph& graph_;
  isa::IsaView isa_;
  std::vector<std::vector<std::size_t>> owners_;
  std::vector<std::int64_t> units_;
};

}  // namespace act::select
