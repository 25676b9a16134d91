// What each node of a pii graph occupies, independently of any schedule (phase 2 groundwork):
// its buffer and slice lengths, which nodes own storage and which merely alias it (slice^H,
// concat^H), the fixed HBM positions (kernel inputs, outputs, the constant pool), and the
// parsed address maps and constraints of every instruction used.
//
//   lengths     a value of type T in a buffer with access dims A[0..k) and unit dims U occupies
//               T.dims[0..k) units along the access dims (rank(T) must be k + |U|); in HBM
//               (k = 1, no unit dims) it occupies T's byte size.
//   storage     Pii nodes and Input/Constant leaves own storage; identity nodes alias their
//               operands. An Undefined leaf (a don't-care input) owns none and aliases nothing:
//               it has no producer and no place; its reader's input address map alone decides
//               where the reader looks, and no def-use equality ties it (csp.hpp).
//   aliases     the storage nodes an identity node's memory lies in (transitively).
//   footprint   the slice a node's value occupies for interference and bounds: its length,
//               except for an operand of overlay^H, a store's window of which only the part
//               inside the overlay is written (its window may run past the overlay's end; the
//               bytes there are read and written back unchanged). Siblings of one overlay^H
//               never interfere: their written bytes are disjoint by construction.
//   needed      the part of its footprint a value must keep while it lives (needed_begin,
//               needed_length per access dim): its footprint, except for HBM storage an
//               instruction writes and every reader and root uses only part of (through
//               slice^H/concat^H): then the hull of the bytes they use. The rest of its window
//               is written and then dead, so a value written later may overwrite it (a store of
//               a whole tile of which the output keeps some rows, the others written over by
//               the next store; schedule.hpp orders such interference edges, csp.hpp CSP4).
//   pinned      Input leaves at their kernel-image address; Constant leaves in the pool (in
//               order of constant id, each aligned to kConstantAlignment, starting at the pool
//               address); roots at the kernel's output addresses.
//   scratch     HBM storage that is neither a leaf nor a root lies at or above `scratch_base`
//               (the end of the constant pool): phase 2 never writes inputs or constants.
//               HBM storage a root aliases lies within the outputs' regions (root_region).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/select/pii_graph.hpp"
#include "act/select/constant_pool.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sym/expr.hpp"

namespace act::alloc {

inline constexpr std::int64_t kConstantAlignment = 64;

// One data slice an instruction reads or writes, parsed.
struct PreparedSlice {
  int buffer = -1;
  std::vector<sym::Expr> start, length;  // one per access dim of `buffer`
};

// An instruction's address maps and validity constraints, parsed once.
struct PreparedInstruction {
  const isa::Instruction* instruction = nullptr;
  std::vector<sym::Expr> constraints;
  std::vector<PreparedSlice> inputs;
  PreparedSlice output;  // Out0: the value the pii node stands for
};

struct ConstantPlacement {
  std::int64_t id = -1;
  std::int64_t address = 0;
  std::vector<std::uint8_t> bytes;
};

struct GraphValues {
  const select::PiiGraph* graph = nullptr;
  isa::IsaView isa;
  int hbm = 0;                                        // index of the HBM buffer
  std::vector<std::vector<std::int64_t>> length;      // per node, per access dim of its buffer
  std::vector<std::vector<std::int64_t>> footprint;   // per node: the part of `length` it writes
  std::vector<std::int64_t> overlay;                  // per node: the overlay^H it is an operand of, or -1
  std::vector<std::vector<std::int64_t>> needed_begin;   // per node: where in its footprint the needed part starts
  std::vector<std::vector<std::int64_t>> needed_length;  // per node: the needed part's extent (see above)
  std::vector<std::int64_t> bytes;                    // per node: memory it denotes, in bytes
  std::vector<bool> storage;                          // per node: owns memory (Pii or leaf)
  std::vector<std::vector<std::size_t>> aliases;      // per node: storage nodes its memory lies in
  std::vector<std::optional<std::int64_t>> pinned;    // per node: fixed HBM start
  std::vector<bool> root_storage;                     // per node: storage a root aliases (live to the end)
  // Per HBM storage node a root aliases: the bytes it may occupy, the hull of those roots'
  // output regions. A value whose slice is an output (a store of a whole tile of which the
  // kernel returns some rows) is written whole; outside the outputs it would overwrite inputs.
  std::vector<std::optional<std::pair<std::int64_t, std::int64_t>>> root_region;
  std::vector<std::optional<PreparedInstruction>> instructions;  // per ISA instruction used
  std::vector<ConstantPlacement> constants;           // the constant pool, by address
  std::int64_t scratch_base = 0;                      // first byte of HBM scratch

  const select::PiiNode& node(std::size_t i) const { return graph->node(i); }
  std::size_t size() const { return length.size(); }
  const isa::Buffer& buffer_of(std::size_t i) const { return isa.buffers[static_cast<std::size_t>(node(i).buffer)]; }
  // Part of node i's written window is dead at once: the order of its interference edges matters.
  bool partly_needed(std::size_t i) const { return needed_length[i] != footprint[i]; }
  const PreparedInstruction& prepared(std::size_t i) const {
    return *instructions[static_cast<std::size_t>(node(i).index)];
  }
};

namespace values_detail {

inline sym::Expr parse_attribute(std::string_view text, const isa::Instruction& inst, std::string_view role) {
  const sym::ParseResult r = sym::try_parse(text);
  if (!r.ok())
    throw Error(ErrorKind::Isa, fmt::format("instruction '{}': {} '{}' does not parse: {}", inst.name, role, text, r.error));
  for (std::string_view id : sym::free_identifiers(r.expr)) {
    const bool known = std::find(inst.alpha.begin(), inst.alpha.end(), id) != inst.alpha.end() ||
                       std::find(inst.beta.begin(), inst.beta.end(), id) != inst.beta.end();
    if (!known)
      throw Error(ErrorKind::Unsupported, fmt::format("instruction '{}': {} '{}' mentions '{}', which is neither a "
                                                      "computational nor an addressing attribute", inst.name, role, text, id));
  }
  return r.expr;
}

inline PreparedSlice prepare_slice(const isa::IsaView& isa, const isa::Instruction& inst, const isa::SliceMap& map,
                                   std::string_view role) {
  PreparedSlice s;
  s.buffer = isa.buffer_index(map.buffer);
  if (s.buffer < 0) throw Error(ErrorKind::Isa, fmt::format("instruction '{}': {} names unknown buffer '{}'", inst.name, role, map.buffer));
  const auto& buffer = isa.buffers[static_cast<std::size_t>(s.buffer)];
  if (map.start.size() != buffer.access_dims.size() || map.length.size() != buffer.access_dims.size())
    throw Error(ErrorKind::Isa, fmt::format("instruction '{}': {} needs one start and one length per access dim of '{}'",
                                            inst.name, role, buffer.name));
  for (std::size_t d = 0; d < map.start.size(); ++d) {
    s.start.push_back(parse_attribute(map.start[d], inst, fmt::format("{} start", role)));
    s.length.push_back(parse_attribute(map.length[d], inst, fmt::format("{} length", role)));
  }
  return s;
}

inline PreparedInstruction prepare(const isa::IsaView& isa, const isa::Instruction& inst) {
  PreparedInstruction p;
  p.instruction = &inst;
  if (inst.outputs.size() != 1)
    throw Error(ErrorKind::Unsupported, fmt::format("instruction '{}' writes {} slices; phase 2 handles exactly one output",
                                                    inst.name, inst.outputs.size()));
  for (const auto& c : inst.constraints) p.constraints.push_back(parse_attribute(c, inst, "constraint"));
  for (std::size_t i = 0; i < inst.inputs.size(); ++i)
    p.inputs.push_back(prepare_slice(isa, inst, inst.inputs[i], fmt::format("In{}", i + 1)));
  p.output = prepare_slice(isa, inst, inst.outputs[0], "Out0");
  return p;
}

inline std::int64_t align_up(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }

// The needed parts (see the header): needs flow from the roots and from every instruction's
// operands down through the identity nodes to the storage they alias, as byte ranges of HBM.
inline void find_needed_parts(GraphValues& v) {
  const std::size_t n = v.size();
  v.needed_length = v.footprint;
  v.needed_begin.assign(n, {});
  for (std::size_t i = 0; i < n; ++i) v.needed_begin[i].assign(v.footprint[i].size(), 0);
  std::vector<std::optional<std::pair<std::int64_t, std::int64_t>>> need(n);  // hull of bytes used, per HBM node
  auto use = [&](std::size_t i, std::int64_t lo, std::int64_t hi) {
    if (v.node(i).buffer != v.hbm) return;
    lo = std::max<std::int64_t>(lo, 0);
    hi = std::min(hi, v.length[i][0]);
    if (lo >= hi) return;
    need[i] = need[i] ? std::pair{std::min(need[i]->first, lo), std::max(need[i]->second, hi)} : std::pair{lo, hi};
  };
  for (std::size_t r : v.graph->roots()) use(r, 0, v.length[r][0]);
  for (std::size_t q = 0; q < n; ++q)
    if (v.node(q).kind == select::PiiNodeKind::Pii)
      for (std::size_t o : v.node(q).operands) use(o, 0, v.length[o][0]);
  for (std::size_t i = n; i-- > 0;) {  // users come after their operands
    const select::PiiNode& x = v.node(i);
    if (!need[i] || x.buffer != v.hbm) continue;
    const auto [lo, hi] = *need[i];
    if (x.kind == select::PiiNodeKind::SliceH) {
      use(x.operands[0], lo + x.slice[0].start, hi + x.slice[0].start);
    } else if (x.kind == select::PiiNodeKind::ConcatH) {
      std::int64_t offset = 0;
      for (std::size_t o : x.operands) {
        use(o, lo - offset, hi - offset);
        offset += v.length[o][0];
      }
    } else if (x.kind == select::PiiNodeKind::OverlayH) {
      for (std::size_t o : x.operands) use(o, 0, v.length[o][0]);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!v.storage[i] || v.node(i).kind != select::PiiNodeKind::Pii || v.node(i).buffer != v.hbm || v.overlay[i] >= 0 || !need[i])
      continue;
    v.needed_begin[i][0] = need[i]->first;
    v.needed_length[i][0] = need[i]->second - need[i]->first;
  }
}

}  // namespace values_detail

// Throws act::Error when the graph does not fit the ISA or the kernel (a type that does not fit
// its buffer, a root count that differs from the kernel's outputs, a constant without a value).
inline GraphValues analyze_values(const select::PiiGraph& graph, const isa::IsaView& isa,
                                  const select::ConstantTable& constants, const sim::KernelImage& image) {
  GraphValues v;
  v.graph = &graph;
  v.isa = isa;
  v.hbm = -1;
  for (std::size_t b = 0; b < v.isa.buffers.size(); ++b)
    if (v.isa.buffers[b].is_hbm) v.hbm = static_cast<int>(b);
  if (v.hbm < 0) throw Error(ErrorKind::Isa, fmt::format("ISA {} declares no HBM buffer", v.isa.name));
  const std::size_t n = graph.nodes().size();
  v.length.resize(n);
  v.bytes.assign(n, 0);
  v.storage.assign(n, false);
  v.aliases.resize(n);
  v.pinned.assign(n, std::nullopt);
  v.root_storage.assign(n, false);
  v.root_region.assign(n, std::nullopt);
  v.instructions.resize(v.isa.instructions.size());

  v.overlay.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const select::PiiNode& x = graph.node(i);
    if (x.buffer < 0 || static_cast<std::size_t>(x.buffer) >= v.isa.buffers.size())
      throw Error(ErrorKind::Internal, fmt::format("pii node %{} names buffer #{}", i, x.buffer));
    const isa::Buffer& buffer = v.isa.buffers[static_cast<std::size_t>(x.buffer)];
    if (x.type.is_tuple) throw Error(ErrorKind::Internal, fmt::format("pii node %{} has a tuple type", i));
    v.bytes[i] = x.type.byte_size();
    if (buffer.is_hbm) {
      v.length[i] = {v.bytes[i]};
    } else {
      const std::size_t k = buffer.access_dims.size(), u = buffer.unit_dims.size();
      if (x.type.dims.size() != k + u)
        throw Error(ErrorKind::Internal, fmt::format("pii node %{} of type {} does not fit buffer '{}'", i, to_string(x.type), buffer.name));
      v.length[i].assign(x.type.dims.begin(), x.type.dims.begin() + static_cast<std::ptrdiff_t>(k));
    }
    for (std::size_t o : x.operands)
      if (o >= i) throw Error(ErrorKind::Internal, "pii graph: operands must precede their users");
    switch (x.kind) {
      case select::PiiNodeKind::Pii: {
        if (x.index < 0 || static_cast<std::size_t>(x.index) >= v.isa.instructions.size())
          throw Error(ErrorKind::Internal, fmt::format("pii node %{} names instruction #{}", i, x.index));
        auto& prepared = v.instructions[static_cast<std::size_t>(x.index)];
        if (!prepared) prepared = values_detail::prepare(v.isa, v.isa.instructions[static_cast<std::size_t>(x.index)]);
        const auto& inst = *prepared->instruction;
        if (x.alpha.size() != inst.alpha.size() || x.operands.size() != prepared->inputs.size() || prepared->output.buffer != x.buffer)
          throw Error(ErrorKind::Internal, fmt::format("pii node %{} does not match instruction '{}' (alpha, operands or buffer)", i, inst.name));
        for (std::size_t k = 0; k < x.operands.size(); ++k)
          if (graph.node(x.operands[k]).buffer != prepared->inputs[k].buffer)
            throw Error(ErrorKind::Internal, fmt::format("pii node %{}: operand {} lives in another buffer than '{}' reads", i, k + 1, inst.name));
        v.storage[i] = true;
        v.aliases[i] = {i};
        break;
      }
      case select::PiiNodeKind::Input: {
        if (x.index < 0 || static_cast<std::size_t>(x.index) >= image.inputs.size())
          throw Error(ErrorKind::Internal, fmt::format("pii node %{} names kernel input {}", i, x.index));
        const auto& region = image.inputs[static_cast<std::size_t>(x.index)];
        if (x.buffer != v.hbm || region.bytes != v.bytes[i])
          throw Error(ErrorKind::Internal, fmt::format("pii node %{}: input {} is {} bytes in HBM, the node says {} bytes",
                                                       i, x.index, region.bytes, v.bytes[i]));
        v.storage[i] = true;
        v.aliases[i] = {i};
        v.pinned[i] = region.address;
        break;
      }
      case select::PiiNodeKind::Constant: {
        if (x.buffer != v.hbm) throw Error(ErrorKind::Internal, fmt::format("pii node %{}: a constant outside HBM", i));
        if (x.index < 0 || static_cast<std::size_t>(x.index) >= constants.size())
          throw Error(ErrorKind::Unsupported, fmt::format("pii node %{}: a constant whose value phase 1 did not fold", i));
        const Literal& literal = constants[x.index];
        if (literal.elided || literal.is_tuple() || static_cast<std::int64_t>(literal.bytes().size()) != v.bytes[i])
          throw Error(ErrorKind::Unsupported, fmt::format("pii node %{}: constant {} has no usable {}-byte value", i, x.index, v.bytes[i]));
        v.storage[i] = true;
        v.aliases[i] = {i};
        break;
      }
      case select::PiiNodeKind::Undefined:
        if (!x.operands.empty()) throw Error(ErrorKind::Internal, fmt::format("pii node %{}: an undefined leaf with operands", i));
        break;
      case select::PiiNodeKind::SliceH: {
        if (x.operands.size() != 1 || x.slice.size() < v.length[i].size())
          throw Error(ErrorKind::Internal, fmt::format("pii node %{}: slice^H needs one operand and a range per access dim", i));
        v.aliases[i] = v.aliases[x.operands[0]];
        break;
      }
      case select::PiiNodeKind::ConcatH: {
        if (x.operands.empty() || x.dimension < 0 || static_cast<std::size_t>(x.dimension) >= v.length[i].size())
          throw Error(ErrorKind::Internal, fmt::format("pii node %{}: concat^H along dim {} of a {}-dim buffer", i, x.dimension, v.length[i].size()));
        for (std::size_t o : x.operands)
          for (std::size_t s : v.aliases[o])
            if (std::find(v.aliases[i].begin(), v.aliases[i].end(), s) == v.aliases[i].end()) v.aliases[i].push_back(s);
        std::sort(v.aliases[i].begin(), v.aliases[i].end());
        break;
      }
      case select::PiiNodeKind::OverlayH: break;  // below, once the operands are known storage
    }
    v.footprint.push_back(v.length[i]);
    if (x.kind == select::PiiNodeKind::OverlayH) {
      if (x.buffer != v.hbm || x.offsets.size() != x.operands.size())
        throw Error(ErrorKind::Internal, fmt::format("pii node %{}: overlay^H needs HBM and one offset per operand", i));
      for (std::size_t k = 0; k < x.operands.size(); ++k) {
        const std::size_t o = x.operands[k];
        if (!v.storage[o] || graph.node(o).is_leaf() || v.overlay[o] >= 0 || x.offsets[k] < 0 || x.offsets[k] >= v.bytes[i])
          throw Error(ErrorKind::Internal, fmt::format("pii node %{}: overlay^H operand %{} must be a store's own window", i, o));
        v.overlay[o] = static_cast<std::int64_t>(i);
        v.footprint[o][0] = std::min(v.length[o][0], v.bytes[i] - x.offsets[k]);
        v.aliases[i].push_back(o);
      }
      std::sort(v.aliases[i].begin(), v.aliases[i].end());
    }
    if (x.is_identity())
      for (std::size_t o : x.operands)
        if (graph.node(o).buffer != x.buffer)
          throw Error(ErrorKind::Internal, fmt::format("pii node %{}: an identity instruction across buffers", i));
  }

  // Roots: the kernel's outputs, in order.
  if (graph.roots().size() != image.outputs.size())
    throw Error(ErrorKind::Internal, fmt::format("the pii graph has {} roots but the kernel {} outputs", graph.roots().size(), image.outputs.size()));
  for (std::size_t r = 0; r < graph.roots().size(); ++r) {
    const std::size_t i = graph.roots()[r];
    if (graph.node(i).kind == select::PiiNodeKind::Undefined)
      throw Error(ErrorKind::Internal, fmt::format("root %{} is an undefined value", i));
    if (graph.node(i).buffer != v.hbm || v.bytes[i] != image.outputs[r].bytes)
      throw Error(ErrorKind::Internal, fmt::format("root %{} must be the {}-byte output '{}' in HBM", i, image.outputs[r].bytes, image.outputs[r].name));
    if (v.pinned[i] && *v.pinned[i] != image.outputs[r].address)
      throw Error(ErrorKind::Unsupported, fmt::format("root %{} is a kernel input; act does not copy inputs to outputs here", i));
    v.pinned[i] = image.outputs[r].address;
    for (std::size_t s : v.aliases[i]) {
      v.root_storage[s] = true;
      if (graph.node(s).is_leaf() || graph.node(s).buffer != v.hbm) continue;
      const std::int64_t begin = image.outputs[r].address, end = begin + image.outputs[r].bytes;
      auto& region = v.root_region[s];
      region = region ? std::pair{std::min(region->first, begin), std::max(region->second, end)} : std::pair{begin, end};
    }
  }

  // The constant pool, in order of constant id.
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < n; ++i)
    if (graph.node(i).kind == select::PiiNodeKind::Constant) ids.push_back(graph.node(i).index);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::int64_t address = image.constant_pool_address;
  for (std::int64_t id : ids) {
    address = values_detail::align_up(address, std::max(kConstantAlignment, image.alignment));
    const auto raw = constants[id].bytes();
    v.constants.push_back(ConstantPlacement{id, address, std::vector<std::uint8_t>(raw.begin(), raw.end())});
    address += static_cast<std::int64_t>(raw.size());
  }
  v.scratch_base = values_detail::align_up(address, std::max(kConstantAlignment, image.alignment));
  values_detail::find_needed_parts(v);
  for (std::size_t i = 0; i < n; ++i)
    if (graph.node(i).kind == select::PiiNodeKind::Constant)
      for (const auto& c : v.constants)
        if (c.id == graph.node(i).index) v.pinned[i] = c.address;
  return v;
}

}  // namespace act::alloc
