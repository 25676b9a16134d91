// The e-graph phase 1 works on: the tensor language plus an analysis giving every e-class its
// tensor type (all members compute the same value, so they have one type) and whether it is a
// compile-time constant (App. B module 3: a class is constant if one of its nodes has only
// constant operands; leaves such as Constant nodes are constant).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <span>
#include <vector>

#include "act/core/error.hpp"
#include "act/core/shape.hpp"
#include "act/egraph/egraph.hpp"
#include "act/egraph/pattern.hpp"
#include "act/egraph/rewrite.hpp"
#include "act/isa/description.hpp"
#include "act/select/ir/tensor_language.hpp"
#include "act/select/ir/type_inference.hpp"

namespace act::select {

struct TensorData {
  Shape type;                // dtype + dims (no layout)
  bool is_constant = false;  // computable at compile time from constants alone
  friend bool operator==(const TensorData&, const TensorData&) = default;
};

class TensorAnalysis {
 public:
  using Data = TensorData;

  explicit TensorAnalysis(const SelectionContext* context = nullptr) : context_(context) {}

  template <class G, class NodeViewT>
  Data make(const G& graph, const NodeViewT& node) {
    child_types_.clear();
    bool all_constant = true;
    for (auto child : node.children) {
      const Data& d = graph.data(child);
      child_types_.push_back(&d.type);
      all_constant = all_constant && d.is_constant;
    }
    Data data;
    data.type = infer_type(*context_, node.op, child_types_);
    data.is_constant = node.op.kind == NodeKind::Constant ||
                       (node.op.kind == NodeKind::Operator && all_constant && !node.children.empty()) ||
                       (node.op.kind == NodeKind::Operator && node.children.empty() &&
                        node.op.opcode == hlo::Opcode::Iota);
    return data;
  }

  // Members of one class must have one type: a rule that unites different types is a bug.
  egraph::MergeResult merge(Data& into, const Data& from) {
    if (!into.type.same_type(from.type))
      throw Error(ErrorKind::Internal, fmt::format("e-graph: uniting classes of types {} and {}",
                                                   to_string(into.type), to_string(from.type)));
    if (!into.is_constant && from.is_constant) {
      into.is_constant = true;
      return {true, false};
    }
    return {false, into.is_constant != from.is_constant};
  }

  const SelectionContext& context() const { return *context_; }

 private:
  const SelectionContext* context_;
  std::vector<const Shape*> child_types_;
};

using TensorGraph = egraph::EGraph<TensorLanguage, TensorAnalysis>;
using TensorRewrite = egraph::Rewrite<TensorLanguage, TensorAnalysis>;
using TensorPattern = egraph::Pattern<TensorLanguage>;
using TensorPatternBuilder = egraph::PatternBuilder<TensorLanguage>;

// The pii nodes of a class as (instruction name, alpha values), in node order.
inline std::vector<std::pair<std::string, std::vector<std::int64_t>>> pii_nodes(const TensorGraph& g,
                                                                              const SelectionContext& c, egraph::Id cls) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
  for (auto n : g.class_nodes(cls)) {
    const auto node = g.node(n);
    if (node.op.kind != NodeKind::Pii) continue;
    const auto& a = c.attributes_of(node.op);
    out.emplace_back(std::string(c.isa.instructions[static_cast<std::size_t>(a.index)].name), a.alpha);
  }
  return out;
}

}  // namespace act::select
