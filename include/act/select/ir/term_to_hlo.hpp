// Turns an e-graph term into an hlo::Module so it can be evaluated: start at one e-node, and for
// every child class take the e-node `choose(class)` names. Shared classes become one
// instruction (a DAG). Input nodes become parameters u8[bytes] (parameter k ↔ inputs[k]),
// Constant nodes constants from the ConstantTable, Operators the HLO instruction with the class
// type, SliceH/ConcatH plain slice/concatenate. Pii and Undefined nodes are not expanded
// (Unsupported). A class whose value the caller already knows (`known`: its constant-pool
// index) becomes that constant instead of a term.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/hlo/builder.hpp"
#include "act/hlo/module.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select {

struct TermModule {
  hlo::Module module;
  std::vector<std::int64_t> inputs;  // Input index (kernel parameter) of each module parameter
};

// Picks the node of each class; the default takes the smallest node id, which is always acyclic
// (a node's children existed before it, so each child class holds a smaller id).
using NodeChoice = std::function<egraph::Id(const TensorGraph&, egraph::Id cls)>;

inline egraph::Id smallest_node(const TensorGraph& g, egraph::Id cls) { return g.class_nodes(cls).front(); }

// The constant-pool index of a class's value when the caller knows it, else nullopt.
using KnownConstant = std::function<std::optional<std::int64_t>(egraph::Id cls)>;

namespace term_detail {

inline hlo::Opcode reduce_opcode(ReduceKind k) {
  switch (k) {
    case ReduceKind::Add: return hlo::Opcode::Add;
    case ReduceKind::Multiply: return hlo::Opcode::Multiply;
    case ReduceKind::Maximum: return hlo::Opcode::Maximum;
    case ReduceKind::Minimum: return hlo::Opcode::Minimum;
    case ReduceKind::And: return hlo::Opcode::And;
    case ReduceKind::Or: return hlo::Opcode::Or;
    case ReduceKind::None: break;
  }
  throw Error(ErrorKind::Internal, "term_to_hlo: reduce without a reduction kind");
}

struct Converter {
  const TensorGraph& g;
  const SelectionContext& ctx;
  const NodeChoice& choose;
  const KnownConstant* known;  // may be null
  hlo::Module& module;
  std::vector<hlo::Instruction> instructions;
  std::vector<int> parameters;
  std::vector<std::int64_t> inputs;
  std::map<egraph::Id, int> done;         // class → instruction
  std::vector<egraph::Id> in_progress;    // classes on the current path (cycle check)
  std::map<std::pair<int, int>, int> reducers;  // (kind, dtype) → computation

  int emit(hlo::Instruction instr) {
    if (instr.name.empty()) instr.name = fmt::format("{}.{}", hlo::opcode_name(instr.opcode), instructions.size());
    instructions.push_back(std::move(instr));
    return static_cast<int>(instructions.size()) - 1;
  }

  int reducer(ReduceKind k, DType t) {
    const auto key = std::make_pair(static_cast<int>(k), static_cast<int>(t));
    if (auto it = reducers.find(key); it != reducers.end()) return it->second;
    const int index = hlo::add_computation(
        module, hlo::scalar_binary_computation(fmt::format("reducer.{}", reducers.size()), reduce_opcode(k), t));
    reducers.emplace(key, index);
    return index;
  }

  // Converts `node` (whose class is `cls`).
  int node(egraph::Id node_id, egraph::Id cls) {
    const auto view = g.node(node_id);
    const TensorOp op = view.op;
    const std::vector<egraph::Id> kids(view.children.begin(), view.children.end());
    const NodeAttributes& a = ctx.attributes_of(op);
    hlo::Instruction instr;
    instr.shape = g.data(cls).type;
    for (egraph::Id c : kids) instr.operands.push_back(of_class(c));
    switch (op.kind) {
      case NodeKind::Input:
        instr.opcode = hlo::Opcode::Parameter;
        instr.parameter_number = static_cast<std::int64_t>(parameters.size());
        instr.name = fmt::format("input{}", a.index);
        inputs.push_back(a.index);
        parameters.push_back(emit(std::move(instr)));
        return parameters.back();
      case NodeKind::Constant:
        instr.opcode = hlo::Opcode::Constant;
        instr.literal = ctx.constants[a.index];
        return emit(std::move(instr));
      case NodeKind::SliceH:
        instr.opcode = hlo::Opcode::Slice;
        instr.slice = a.slice;
        return emit(std::move(instr));
      case NodeKind::ConcatH:
        instr.opcode = hlo::Opcode::Concatenate;
        instr.dimensions = a.dimensions;
        return emit(std::move(instr));
      case NodeKind::Pii:
        throw Error(ErrorKind::Unsupported, "term_to_hlo: pii nodes are not expanded");
      case NodeKind::Undefined:
        // Only a Pii reads it (a don't-care input), and Pii nodes are not expanded either.
        throw Error(ErrorKind::Unsupported, "term_to_hlo: an undefined (don't-care) value has no HLO form");
      case NodeKind::Embed:
      case NodeKind::OverlayH:
        // Their don't-care bytes have no HLO form.
        throw Error(ErrorKind::Unsupported, "term_to_hlo: a partial window (embed, overlay^H) has no HLO form");
      case NodeKind::Operator: break;
    }
    instr.opcode = op.opcode;
    instr.dimensions = a.dimensions;
    instr.slice = a.slice;
    instr.padding = a.padding;
    instr.dot = a.dot;
    instr.comparison_direction = a.direction;
    if (op.opcode == hlo::Opcode::Iota) {
      instr.iota_dimension = a.dimensions.empty() ? 0 : a.dimensions[0];
      instr.dimensions.clear();
    }
    if (op.opcode == hlo::Opcode::Reduce) {
      instr.called_computations = {reducer(a.reduce, instr.shape.dtype)};
      instr.called_computation_attributes = {"to_apply"};
    }
    return emit(std::move(instr));
  }

  int of_class(egraph::Id cls) {
    cls = g.find(cls);
    if (auto it = done.find(cls); it != done.end()) return it->second;
    if (std::find(in_progress.begin(), in_progress.end(), cls) != in_progress.end())
      throw Error(ErrorKind::Internal, fmt::format("term_to_hlo: the chosen nodes form a cycle through class {}", cls));
    if (known)
      if (const auto id = (*known)(cls)) {
        hlo::Instruction instr;
        instr.shape = g.data(cls).type;
        instr.opcode = hlo::Opcode::Constant;
        instr.literal = ctx.constants[*id];
        const int index = emit(std::move(instr));
        done.emplace(cls, index);
        return index;
      }
    in_progress.push_back(cls);
    const int index = node(choose(g, cls), cls);
    in_progress.pop_back();
    done.emplace(cls, index);
    return index;
  }
};

}  // namespace term_detail

// The term rooted at e-node `root_node`; child classes resolved by `choose`, or by `known`
// when it names their value.
inline TermModule term_to_hlo(const TensorGraph& g, const SelectionContext& ctx, egraph::Id root_node,
                              const NodeChoice& choose = smallest_node, const KnownConstant* known = nullptr) {
  TermModule out;
  out.module.name = "term";
  term_detail::Converter c{g, ctx, choose, known, out.module, {}, {}, {}, {}, {}, {}};
  // The root's own class is not marked in progress: a node may use its own class (copy(x) in
  // x's class) as long as the choice there picks another node.
  const int root = c.node(root_node, g.find(root_node));
  hlo::Computation main;
  main.name = "main";
  main.instructions = std::move(c.instructions);
  main.parameters = std::move(c.parameters);
  main.root = root;
  hlo::add_computation(out.module, std::move(main), /*entry=*/true);
  out.inputs = std::move(c.inputs);
  return out;
}

}  // namespace act::select
