// The e-graph phase 1 works on: the tensor language plus an analysis giving every e-class its
// tensor type (all members compute the same value, so they have one type) and whether it is a
// compile-time constant (App. B module 3: a class is constant if one of its nodes has only
// constant operands; leaves such as Constant nodes are constant).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
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

// The distinct tensor types of one e-graph, each stored once and never moved. A class record
// refers to its type here instead of holding a Shape (about 180 bytes, its dims on the heap):
// a 20k-class AMX e-graph spent a tenth of its compile faulting in and moving class records.
class TypePool {
 public:
  const Shape& intern(Shape&& type) {
    std::uint64_t h = static_cast<std::uint64_t>(type.dtype);
    for (std::int64_t d : type.dims) h = egraph::mix_hash(h, static_cast<std::uint64_t>(d));
    auto [first, last] = index_.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (*it->second == type) return *it->second;
    const Shape& stored = types_.emplace_back(std::move(type));  // a deque never moves its elements
    index_.emplace(h, &stored);
    return stored;
  }
  std::size_t size() const { return types_.size(); }

 private:
  std::deque<Shape> types_;
  std::unordered_multimap<std::uint64_t, const Shape*> index_;
};

struct TensorData {
  const Shape& type;         // dtype + dims (no layout), interned in the e-graph's TypePool
  bool is_constant = false;  // computable at compile time from constants alone
  friend bool operator==(const TensorData& a, const TensorData& b) {
    return a.type == b.type && a.is_constant == b.is_constant;
  }
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
    const bool is_constant = node.op.kind == NodeKind::Constant ||
                             (node.op.kind == NodeKind::Operator && all_constant && !node.children.empty()) ||
                             (node.op.kind == NodeKind::Operator && node.children.empty() &&
                              node.op.opcode == hlo::Opcode::Iota);
    return Data{types_->intern(infer_type(*context_, node.op, child_types_)), is_constant};
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
  // Shared, so a copy of the analysis (and of its e-graph) keeps the types its data refers to.
  std::shared_ptr<TypePool> types_ = std::make_shared<TypePool>();
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
