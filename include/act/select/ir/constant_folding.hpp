// Folding constant e-classes that hold no Constant e-node into constant-pool entries.
//
// A kernel output computed from constants only (the lifted semantics of a broadcast immediate:
// reduce(broadcast(1)) * 65536 + ...) is a constant class whose members are operators. The
// extractor can use it as a constant leaf once its value is known, so the folder evaluates one
// of its constant-only terms with the reference interpreter, a node at a time: the node's
// child classes are folded first and enter its term as constants. The term must be acyclic: an
// e-class may contain reshape(reshape(itself)), so each class gets the height of its shortest
// constant-only term (a fixpoint over the e-graph) and the folder always picks a node whose
// children are strictly lower.
//
// Folding is bounded by work, not time: each class is folded at most once, and the elements the
// interpreter computes (summed over every instruction of every evaluated term, a dot's weighted
// by its contracting extent) stop at kMaxFoldedElements per folder. Without the bound, 1,024 row
// slices of an s32[4096,64] iota each evaluated the whole iota (AMX: 24 s on a 3 s budget), and
// QKV folded dots of 2048x2048 identity matrices (88 s).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include "act/core/error.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/term_to_hlo.hpp"

namespace act::select {

class ConstantFolder {
 public:
  ConstantFolder(const TensorGraph& graph, SelectionContext& context) : graph_(&graph), context_(&context) {}

  // The constant-pool index of the class's value, or -1 when it has no constant-only term or
  // the interpreter cannot evaluate it.
  std::int64_t operator()(egraph::Id cls) {
    refresh();
    cls = graph_->find(cls);
    if (!heights_.contains(cls)) return -1;
    if (const auto it = folded_.find(cls); it != folded_.end()) return it->second;
    return folded_[cls] = fold(cls);
  }

  static constexpr std::int64_t kMaxFoldedElements = std::int64_t{1} << 22;

  // The work spent so far: elements the interpreter computed (see the header comment).
  std::int64_t elements_evaluated() const { return elements_evaluated_; }

 private:
  std::int64_t fold(egraph::Id cls) {
    // A term evaluates at least its root's elements: a class larger than what is left of the
    // budget fails before its term is converted, which copies its constants (3,743 of 4,242
    // folds on a Gemmini sound-soak kernel failed so, with one element of the budget left).
    const Shape& type = graph_->data(cls).type;
    if (!type.is_tuple && type.element_count() > kMaxFoldedElements - elements_evaluated_) return -1;
    // The chosen node's children first, so this fold evaluates one operator over their values:
    // evaluating every class's whole term again from the pool's constants was most of the
    // folding's cost (Gemmini's scaled loads nest constant chains). Only values no larger than
    // this class enter its term so: a row slice of a folded s32[4096,64] iota would copy the
    // whole iota into its term (and the interpreter again), where computing the iota costs no
    // more, and 1,024 row slices did that until the budget ran out.
    const std::int64_t own = type.is_tuple ? std::numeric_limits<std::int64_t>::max() : type.element_count();
    const auto small_enough = [this, own](egraph::Id c) { return graph_->data(c).type.is_tuple || graph_->data(c).type.element_count() <= own; };
    const egraph::Id root = lowest_node(cls);
    for (egraph::Id child : graph_->node(root).children) {
      child = graph_->find(child);
      const auto height = heights_.find(child);  // 0: the class holds a Constant e-node itself
      if (child == cls || height == heights_.end() || height->second == 0 || folded_.contains(child) || !small_enough(child))
        continue;
      const std::int64_t index = fold(child);
      folded_[child] = index;
    }
    const KnownConstant known = [this, small_enough](egraph::Id c) -> std::optional<std::int64_t> {
      c = graph_->find(c);
      const auto it = folded_.find(c);
      if (it == folded_.end() || it->second < 0 || !small_enough(c)) return std::nullopt;
      return it->second;
    };
    auto choose = [this](const TensorGraph& graph, egraph::Id c) { return lowest_node(graph.find(c)); };
    try {
      const TermModule term = term_to_hlo(*graph_, *context_, root, choose, &known);
      if (!term.inputs.empty()) return -1;
      const auto& instructions = term.module.entry_computation().instructions;
      std::int64_t work = 0;
      for (const hlo::Instruction& i : instructions) {
        if (i.shape.is_tuple) continue;
        std::int64_t per_element = 1;  // a dot's elements each cost its contracting extent
        if (i.opcode == hlo::Opcode::Dot && !i.operands.empty())
          for (std::int64_t d : i.dot.lhs_contracting)
            per_element *= instructions[static_cast<std::size_t>(i.operands[0])].shape.dims[static_cast<std::size_t>(d)];
        work += i.shape.element_count() * per_element;
        if (work > kMaxFoldedElements) return -1;
      }
      if (work > kMaxFoldedElements - elements_evaluated_) return -1;
      elements_evaluated_ += work;
      return context_->constants.intern(hlo::evaluate(term.module, std::span<const Literal>{}));
    } catch (const Error&) {
      return -1;
    }
  }

  static constexpr int kNone = -1;

  // Height of the node's constant-only term, or kNone when a child has none.
  int node_height(egraph::Id node) const {
    const auto view = graph_->node(node);
    if (view.op.kind == NodeKind::Constant) return 0;
    if (view.op.kind != NodeKind::Operator) return kNone;
    int height = 0;
    for (egraph::Id child : view.children) {
      const auto it = heights_.find(graph_->find(child));
      if (it == heights_.end()) return kNone;
      height = std::max(height, it->second + 1);
    }
    return height;
  }

  egraph::Id lowest_node(egraph::Id cls) const {
    const auto nodes = graph_->class_nodes(cls);
    const auto it = heights_.find(cls);
    if (it != heights_.end())
      for (egraph::Id n : nodes)
        if (node_height(n) == it->second) return n;
    return nodes.front();
  }

  // Recomputed whenever the e-graph has changed since the last call (rewriting between rounds).
  void refresh() {
    const std::size_t stamp = graph_->num_ids() * 1000003u + graph_->classes().size();
    if (stamp == stamp_) return;
    stamp_ = stamp;
    heights_.clear();
    // A class's value does not change when rewriting merges it with others (they are equal), so
    // values found stay, under their classes' new canonical ids: refolding every constant class
    // each round (term_to_hlo copying its constants, the interpreter, interning) was 15 % of a
    // Gemmini kernel's compile. A class that did not fold may fold now (a merge can bring it a
    // constant-only term), so failures are forgotten; the work already spent stays spent.
    std::unordered_map<egraph::Id, std::int64_t> kept;
    for (const auto& [cls, index] : folded_)
      if (index >= 0) kept.emplace(graph_->find(cls), index);
    folded_ = std::move(kept);
    for (bool changed = true; changed;) {
      changed = false;
      for (egraph::Id c : graph_->classes()) {
        c = graph_->find(c);
        if (!graph_->data(c).is_constant) continue;
        for (egraph::Id n : graph_->class_nodes(c)) {
          const int h = node_height(n);
          if (h == kNone) continue;
          const auto [it, inserted] = heights_.try_emplace(c, h);
          if (inserted || h < it->second) {
            it->second = h;
            changed = true;
          }
        }
      }
    }
  }

  const TensorGraph* graph_;
  SelectionContext* context_;
  std::unordered_map<egraph::Id, int> heights_;
  std::unordered_map<egraph::Id, std::int64_t> folded_;  // class -> pool index or -1
  std::int64_t elements_evaluated_ = 0;
  std::size_t stamp_ = 0;
};

}  // namespace act::select
