// A pii graph (§5.3): the DAG of partially instantiated instructions that phase 1 hands to
// phase 2. Nodes are
//   Pii       an ISA instruction with alpha fixed (beta is phase 2's job)
//   SliceH    the identity instruction slice^H inside one buffer
//   ConcatH   the identity instruction concat^H inside one buffer
//   OverlayH  the identity instruction overlay^H in HBM: a value assembled from the written bytes
//             of byte windows placed at fixed offsets (`offsets`); a window may run past the
//             value's end, and the windows' written bytes are disjoint (tensor_language.hpp)
//   Input     a kernel input, byte-flattened in HBM (a leaf)
//   Constant  a compile-time constant in HBM (a leaf; the HBM constant pool)
//   Undefined a don't-care instruction input (a leaf): no producer, no content, no place of its
//             own; phase 2 leaves its reader's input slice where the reader's address maps put
//             it (tilestored's old window is the memory it overwrites)
// Every node knows its output buffer (ISA buffer index) and its tensor type. Nodes are stored
// operands-before-users in a canonical order (post-order DFS from the roots, operands in order),
// so two pii graphs are the same program iff their node lists and roots are equal:
// `canonical_key` and `operator==` rely on that.
// This is the phase boundary: a pii graph and the constant pool (constant_pool.hpp) are all
// phase 2 and emission read. Nothing here refers to phase 1's tables; `eclass` is a label for
// diagnostics only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/select/constant_pool.hpp"

namespace act::select {

enum class PiiNodeKind : std::uint8_t { Pii, SliceH, ConcatH, Input, Constant, Undefined, OverlayH };

constexpr std::string_view to_string(PiiNodeKind k) {
  switch (k) {
    case PiiNodeKind::Pii: return "pii";
    case PiiNodeKind::SliceH: return "slice^H";
    case PiiNodeKind::ConcatH: return "concat^H";
    case PiiNodeKind::Input: return "input";
    case PiiNodeKind::Constant: return "constant";
    case PiiNodeKind::Undefined: return "undefined";
    case PiiNodeKind::OverlayH: return "overlay^H";
  }
  return "?";
}

struct PiiNode {
  static constexpr std::uint32_t kNoClass = 0xffffffffu;

  PiiNodeKind kind = PiiNodeKind::Pii;
  int buffer = 0;                      // output buffer: index into the ISA's buffers (HBM for leaves)
  std::int64_t index = -1;             // Pii: instruction; Input: parameter; Constant: constant id
                                       // (-1: a constant class without a folded literal); *H: buffer
  std::vector<std::int64_t> alpha;     // Pii: alpha values in declared order
  std::vector<hlo::SliceRange> slice;  // SliceH: the ranges
  std::int64_t dimension = -1;         // ConcatH: the concatenated dimension
  std::vector<std::int64_t> offsets;   // OverlayH: each operand's byte offset
  Shape type;                          // the tensor it produces
  std::uint32_t eclass = kNoClass;     // the e-class phase 1 extracted it from: printed, never read by phase 2
  std::vector<std::size_t> operands;   // node indices, in operand order (always smaller indices)

  bool is_leaf() const {
    return kind == PiiNodeKind::Input || kind == PiiNodeKind::Constant || kind == PiiNodeKind::Undefined;
  }
  bool is_identity() const {
    return kind == PiiNodeKind::SliceH || kind == PiiNodeKind::ConcatH || kind == PiiNodeKind::OverlayH;
  }
};

class PiiGraph {
 public:
  PiiGraph() = default;

  // Takes nodes whose operands index into `nodes` (any acyclic order) and roots; keeps the nodes
  // reachable from the roots, renumbered into the canonical order (`renumbered`, if given, gets
  // each given node's new index, or kDropped). Throws Error(Internal) on an out-of-range operand
  // or a cycle.
  static constexpr std::size_t kDropped = static_cast<std::size_t>(-1);
  PiiGraph(std::vector<PiiNode> nodes, const std::vector<std::size_t>& roots, std::vector<std::size_t>* renumbered = nullptr) {
    const std::size_t n = nodes.size();
    std::vector<std::size_t> number(n, kUnvisited);
    std::vector<std::uint8_t> on_path(n, 0);
    std::vector<std::size_t> order;
    // Iterative post-order DFS: a frame is (node, next operand position).
    std::vector<std::pair<std::size_t, std::size_t>> stack;
    for (std::size_t r : roots) {
      check_index(r, n);
      if (number[r] != kUnvisited) continue;
      stack.emplace_back(r, 0);
      on_path[r] = 1;
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < nodes[node].operands.size()) {
          const std::size_t child = nodes[node].operands[next++];
          check_index(child, n);
          if (on_path[child]) throw Error(ErrorKind::Internal, "pii graph: the nodes form a cycle");
          if (number[child] != kUnvisited) continue;
          on_path[child] = 1;
          stack.emplace_back(child, 0);
          continue;
        }
        number[node] = order.size();
        order.push_back(node);
        on_path[node] = 0;
        stack.pop_back();
      }
    }
    // Put the kept nodes in canonical order within the given storage (swaps, following where
    // each node has gone): phase 2 builds a graph per spill plan and schedule, and moving 300-byte
    // nodes into a fresh array each time was a tenth of a lane-blend kernel's compile.
    std::vector<std::size_t> position(n), occupant(n);  // old node -> its slot; slot -> old node
    for (std::size_t i = 0; i < n; ++i) position[i] = occupant[i] = i;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::size_t old = order[i], from = position[old], displaced = occupant[i];
      if (from != i) {
        std::swap(nodes[i], nodes[from]);
        position[displaced] = from;
        occupant[from] = displaced;
        position[old] = i;
        occupant[i] = old;
      }
      for (std::size_t& o : nodes[i].operands) o = number[o];
    }
    nodes.resize(order.size());
    nodes_ = std::move(nodes);
    roots_.reserve(roots.size());
    for (std::size_t r : roots) roots_.push_back(number[r]);
    if (renumbered) *renumbered = std::move(number);  // kUnvisited == kDropped
  }

  const std::vector<PiiNode>& nodes() const { return nodes_; }
  const PiiNode& node(std::size_t i) const { return nodes_.at(i); }
  const std::vector<std::size_t>& roots() const { return roots_; }

  // Instruction nodes (pii + identity): the size the extractor orders by.
  std::size_t size() const {
    return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const PiiNode& x) { return !x.is_leaf(); }));
  }
  std::size_t pii_count() const {
    return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const PiiNode& x) { return x.kind == PiiNodeKind::Pii; }));
  }
  std::size_t identity_count() const {
    return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const PiiNode& x) { return x.is_identity(); }));
  }

  // The program, as integers: equal keys <=> equal pii graphs (same instructions, alpha,
  // identity attributes, buffers, types, leaves and sharing).
  std::vector<std::int64_t> canonical_key() const {
    std::vector<std::int64_t> key;
    key.reserve(nodes_.size() * 8 + roots_.size() + 1);
    const auto list = [&key](const auto& values) {
      key.push_back(static_cast<std::int64_t>(values.size()));
      for (auto v : values) key.push_back(static_cast<std::int64_t>(v));
    };
    for (const PiiNode& x : nodes_) {
      key.push_back(static_cast<std::int64_t>(x.kind));
      key.push_back(x.index);
      key.push_back(x.buffer);
      key.push_back(x.dimension);
      list(x.offsets);
      list(x.alpha);
      key.push_back(static_cast<std::int64_t>(x.slice.size()));
      for (const auto& r : x.slice) {
        key.push_back(r.start);
        key.push_back(r.limit);
        key.push_back(r.stride);
      }
      key.push_back(static_cast<std::int64_t>(x.type.dtype));
      list(x.type.dims);
      list(x.operands);
    }
    key.push_back(-1);
    for (std::size_t r : roots_) key.push_back(static_cast<std::int64_t>(r));
    return key;
  }

  friend bool operator==(const PiiGraph& a, const PiiGraph& b) { return a.canonical_key() == b.canonical_key(); }

  // "name(a=v, ...)" of every Pii node, sorted: the instruction multiset (identity nodes aside).
  std::vector<std::string> instruction_multiset(const isa::IsaView& isa) const {
    std::vector<std::string> out;
    for (const PiiNode& x : nodes_)
      if (x.kind == PiiNodeKind::Pii) out.push_back(instruction_text(isa, x));
    std::sort(out.begin(), out.end());
    return out;
  }

  // One line per node, e.g. `%3 = gemm() %1 %2 : bf16[64,64] @d2 (class 17)`, then the roots.
  std::string to_string(const isa::IsaView& isa) const {
    std::string out;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const PiiNode& x = nodes_[i];
      out += fmt::format("%{} = {}", i, label(isa, x));
      for (std::size_t o : x.operands) out += fmt::format(" %{}", o);
      out += fmt::format(" : {} @{}", act::to_string(x.type), buffer_name(isa, x.buffer));
      if (x.eclass != PiiNode::kNoClass) out += fmt::format(" (class {})", x.eclass);
      out += '\n';
    }
    out += "roots:";
    for (std::size_t r : roots_) out += fmt::format(" %{}", r);
    out += '\n';
    return out;
  }

  // Graphviz, for `--dot`: one box per node, edges operand -> user labelled with the position.
  std::string to_dot(const isa::IsaView& isa) const {
    std::string out = "digraph pii {\n  rankdir=BT;\n";
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const PiiNode& x = nodes_[i];
      out += fmt::format("  n{} [shape={}, label=\"{}\\n@{}\"];\n", i, x.is_leaf() ? "ellipse" : "box",
                         label(isa, x), buffer_name(isa, x.buffer));
      for (std::size_t k = 0; k < x.operands.size(); ++k)
        out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", x.operands[k], i, k + 1);
    }
    out += "}\n";
    return out;
  }

  static std::string instruction_text(const isa::IsaView& isa, const PiiNode& x) {
    if (x.index < 0 || static_cast<std::size_t>(x.index) >= isa.instructions.size())
      return fmt::format("instruction#{}", x.index);
    const isa::Instruction& inst = isa.instructions[static_cast<std::size_t>(x.index)];
    std::string text = fmt::format("{}(", inst.name);
    for (std::size_t a = 0; a < x.alpha.size(); ++a) {
      if (a) text += ", ";
      text += a < inst.alpha.size() ? fmt::format("{} = {}", inst.alpha[a], x.alpha[a]) : fmt::format("{}", x.alpha[a]);
    }
    return text + ")";
  }

 private:
  static constexpr std::size_t kUnvisited = static_cast<std::size_t>(-1);

  static void check_index(std::size_t i, std::size_t n) {
    if (i >= n) throw Error(ErrorKind::Internal, fmt::format("pii graph: node index {} out of range ({} nodes)", i, n));
  }

  static std::string buffer_name(const isa::IsaView& isa, int buffer) {
    if (buffer >= 0 && static_cast<std::size_t>(buffer) < isa.buffers.size())
      return std::string(isa.buffers[static_cast<std::size_t>(buffer)].name);
    return fmt::format("buffer#{}", buffer);
  }

  static std::string label(const isa::IsaView& isa, const PiiNode& x) {
    switch (x.kind) {
      case PiiNodeKind::Pii: return instruction_text(isa, x);
      case PiiNodeKind::Input: return fmt::format("input(param {})", x.index);
      case PiiNodeKind::Constant: return fmt::format("constant(id {})", x.index);
      case PiiNodeKind::Undefined: return "undefined";
      case PiiNodeKind::SliceH: {
        std::string text = "slice^H([";
        for (std::size_t d = 0; d < x.slice.size(); ++d)
          text += fmt::format("{}{}:{}{}", d ? "," : "", x.slice[d].start, x.slice[d].limit,
                              x.slice[d].stride == 1 ? std::string() : fmt::format(":{}", x.slice[d].stride));
        return text + "])";
      }
      case PiiNodeKind::ConcatH: return fmt::format("concat^H(dim {})", x.dimension);
      case PiiNodeKind::OverlayH: return fmt::format("overlay^H(offsets {})", fmt::join(x.offsets, ","));
    }
    return "?";
  }

  std::vector<PiiNode> nodes_;
  std::vector<std::size_t> roots_;
};

// The same pii graph over another constant pool: its constants re-interned into `to` (their
// ids change with them), everything else as is.
inline PiiGraph translate_pii_graph(const PiiGraph& graph, const ConstantTable& from, ConstantTable& to) {
  std::vector<PiiNode> nodes = graph.nodes();
  for (PiiNode& x : nodes)
    if (x.kind == PiiNodeKind::Constant && x.index >= 0) x.index = to.intern(from[x.index]);
  return PiiGraph(std::move(nodes), graph.roots());
}

// One pii graph from the graphs of independent output groups (init/output_groups.hpp), all extracted
// over (or translated to) one constant pool: part p computes the kernel outputs `outputs[p]` (its roots in that
// order). The result has one root per kernel output (`output_count`, each covered once) and
// reads each kernel input and constant through one leaf, so phase 2 sees an input once.
inline PiiGraph merge_pii_graphs(const std::vector<const PiiGraph*>& parts, const std::vector<std::vector<std::size_t>>& outputs,
                                 std::size_t output_count) {
  if (parts.size() != outputs.size()) throw Error(ErrorKind::Internal, "merge_pii_graphs: one output list per part");
  std::vector<PiiNode> nodes;
  std::vector<std::size_t> roots(output_count, static_cast<std::size_t>(-1));
  std::vector<std::pair<std::pair<PiiNodeKind, std::int64_t>, std::size_t>> leaves;  // shared leaf -> node
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const PiiGraph& part = *parts[p];
    if (part.roots().size() != outputs[p].size()) throw Error(ErrorKind::Internal, "merge_pii_graphs: roots and outputs differ");
    std::vector<std::size_t> number(part.nodes().size());
    for (std::size_t i = 0; i < part.nodes().size(); ++i) {
      PiiNode x = part.node(i);
      const bool shared = (x.kind == PiiNodeKind::Input || x.kind == PiiNodeKind::Constant) && x.index >= 0;
      if (shared) {
        const auto key = std::make_pair(x.kind, x.index);
        const auto it = std::find_if(leaves.begin(), leaves.end(), [&](const auto& e) { return e.first == key; });
        if (it != leaves.end() && nodes[it->second].type.same_type(x.type)) {
          number[i] = it->second;
          continue;
        }
        leaves.emplace_back(key, nodes.size());
      }
      for (std::size_t& o : x.operands) o = number[o];
      number[i] = nodes.size();
      nodes.push_back(std::move(x));
    }
    for (std::size_t r = 0; r < outputs[p].size(); ++r) {
      const std::size_t k = outputs[p][r];
      if (k >= output_count || roots[k] != static_cast<std::size_t>(-1))
        throw Error(ErrorKind::Internal, fmt::format("merge_pii_graphs: output {} out of range or covered twice", k));
      roots[k] = number[part.roots()[r]];
    }
  }
  for (std::size_t k = 0; k < output_count; ++k)
    if (roots[k] == static_cast<std::size_t>(-1)) throw Error(ErrorKind::Internal, fmt::format("merge_pii_graphs: output {} has no root", k));
  return PiiGraph(std::move(nodes), roots);
}

}  // namespace act::select
