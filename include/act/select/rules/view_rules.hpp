// The view rule: every reshape / transpose / slice / bitcast-convert node is united with the
// canonical chain of the view it computes (views.hpp), over each base its operand reaches. So
// two movement chains that read the same bytes of the same value in the same order are one
// e-class after one iteration, without composing layout axioms step by step (K1's tiled B read
// by tdpbusd's VNNI pattern, K1's tiled output written tile by tile).
//
// Each node is processed once (the rule remembers node ids), so the rule costs one view
// computation per new movement node: over one base, 6 operators deep, and none for a node
// straight over a value that is not a view (it is its own canonical chain). The base is the
// first of the walk's first kBasesLooked that holds a kernel input (the walk stops there), else
// the first: a view of an input is read straight from HBM, while the same bytes as a view of an
// output being written, or of the input's value in its logical type (a kernel whose output joins
// an input p0 with p0's transpose), gave the lane-blend transpose's element reads no class to read
// from, and the kernel was "proved" to have no program. A slice (an element or row read) whose
// first bases hold no input is based on the first input below it instead, when there is one:
// beside an output holding p0 twice, all three bases were the output's rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "act/egraph/pattern.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/views.hpp"

namespace act::select {

inline constexpr std::size_t kBasesLooked = 3;

inline bool holds_input(const TensorGraph& g, egraph::Id cls) {
  for (egraph::Id n : g.class_nodes(cls))
    if (g.node(n).op.kind == NodeKind::Input) return true;
  return false;
}

namespace view_rule_detail {

// The first view of `cls` over a class holding a kernel input, in class_views' order (a class's
// movement nodes in node order, each child's views before the class itself), at most `depth`
// operators deep. Only the views along the path found are computed, and at most 64 classes are
// entered: the cheap form of class_views with no limit, for reads whose first bases miss every
// input.
inline std::optional<ClassView> first_input_view(const TensorGraph& g, const SelectionContext& ctx, egraph::Id cls,
                                                 int depth, std::vector<egraph::Id>& path, std::size_t& budget,
                                                 std::vector<egraph::Id>* visited = nullptr) {
  cls = g.find(cls);
  const Shape& type = g.data(cls).type;
  if (type.is_tuple || type.element_count() > kMaxViewElements || budget == 0) return std::nullopt;
  --budget;
  std::optional<ClassView> found;
  path.push_back(cls);
  if (visited) visited->push_back(cls);
  if (depth > 0)
    for (egraph::Id n : g.class_nodes(cls)) {
      const auto node = g.node(n);
      if (!is_movement(node.op) || node.children.size() != 1) continue;
      const egraph::Id child = g.find(node.children[0]);
      if (std::find(path.begin(), path.end(), child) != path.end()) continue;
      if (auto below = first_input_view(g, ctx, child, depth - 1, path, budget, visited))
        if (auto v = apply_movement(ctx, node.op, type, below->view)) {
          found = ClassView{below->base, std::move(*v)};
          break;
        }
    }
  path.pop_back();
  if (!found && holds_input(g, cls)) found = ClassView{cls, identity_view(type)};
  return found;
}

// The view a movement node over class `child` is based on: the first of the child's first
// kBasesLooked views over a kernel input, else its first; for a slice whose first views miss
// every input, the first input view below (first_input_view) when there is one. Nullopt when the
// child has no view (too large, a tuple).
//
// Remembered per (child, slice or not) until a class the walk read changes
// (EGraph::unchanged_since): the rows of one value are its slices, matched one after another,
// and on Gemmini compile_time kernel 84 these walks were 15 % of the compile. A walk reads the
// nodes of the classes it visits and the types below `child` (which unions keep), so while
// those classes stand a remembered answer is the one a fresh walk would give. The unions the
// rule's own matches make elsewhere leave it standing: checking a version of the whole e-graph
// instead kept one walk in six.
struct BaseViewMemo {
  struct Entry {
    std::uint64_t version = 0;         // the e-graph's structure version when walked
    std::vector<egraph::Id> visited;   // the classes whose nodes the walk read
    std::optional<ClassView> below;
  };
  std::uint64_t graph = 0;  // EGraph::serial of the e-graph the entries describe
  std::unordered_map<std::uint64_t, Entry> entries;  // by child class * 2 + slice
  std::vector<egraph::Id> path;  // the walks' scratch list, kept for its capacity
};

inline const std::optional<ClassView>& base_view(const TensorGraph& g, const SelectionContext& ctx, egraph::Id child,
                                                 bool slice, BaseViewMemo& memo) {
  child = g.find(child);
  if (memo.graph != g.serial()) {
    memo.graph = g.serial();
    memo.entries.clear();
  }
  BaseViewMemo::Entry& entry = memo.entries[std::uint64_t{child} * 2 + (slice ? 1 : 0)];
  if (!entry.visited.empty() &&
      std::all_of(entry.visited.begin(), entry.visited.end(), [&](egraph::Id c) { return g.unchanged_since(c, entry.version); }))
    return entry.below;
  entry.version = g.structure_version();
  entry.visited.clear();
  entry.visited.reserve(8);
  std::optional<ClassView> first, on_input;
  std::vector<egraph::Id>& path = memo.path;
  path.clear();
  auto look = [&](ClassView&& v) {
    if (holds_input(g, v.base)) {
      on_input = std::move(v);
      return false;
    }
    if (!first) first = std::move(v);
    return true;
  };
  for_each_class_view(g, ctx, child, 6, kBasesLooked, path, look, &entry.visited);
  if (!on_input && first && slice) {
    // Only slices, and only the views on the path to the input: up to twelve whole views for
    // every movement node without an input base cost AMX compile_time seed 3 kernel 60 about
    // 25 ms more rewriting (a quarter) and a bigger e-graph, for the same programs.
    std::size_t budget = 64;
    on_input = first_input_view(g, ctx, child, 6, path, budget, &entry.visited);
  }
  entry.below = on_input ? std::move(on_input) : std::move(first);
  return entry.below;
}

}  // namespace view_rule_detail

inline TensorRewrite view_canonical_rule(SelectionContext& context) {
  using egraph::Id;
  using Matcher = egraph::OpMatcher<TensorLanguage>;
  SelectionContext* ctx = &context;
  auto done = std::make_shared<std::vector<bool>>();
  auto memo = std::make_shared<view_rule_detail::BaseViewMemo>();
  auto searcher = [](hlo::Opcode code) {
    TensorPatternBuilder p;
    const auto x = p.var("?x");
    return p.build(p.op(Matcher::of_kind(static_cast<std::uint32_t>(code),
                                         [](const TensorOp& op) { return op.kind == NodeKind::Operator; }),
                        {x}, "@m"));
  };
  auto not_done = [done](const TensorPattern& pattern) {
    const egraph::Var m = pattern.slot("@m");
    return [done, m](const TensorGraph&, Id, const egraph::Subst& s) {
      return s[m] >= done->size() || !(*done)[s[m]];
    };
  };
  auto apply = [ctx, done, memo](const TensorPattern& pattern) {
    const egraph::Var m = pattern.slot("@m");
    return [ctx, done, memo, m](TensorGraph& g, Id cls, const egraph::Subst& s) {
      std::vector<Id> out;
      const Id node_id = s[m];
      if (done->size() <= node_id) done->resize(static_cast<std::size_t>(node_id) + 1, false);
      (*done)[node_id] = true;
      const auto node = g.node(node_id);
      const TensorOp op = node.op;
      const Id child = g.find(node.children[0]);
      // A movement node straight over a value that is no view is its own canonical chain.
      bool chain = false;
      for (Id n : g.class_nodes(child)) chain = chain || is_movement(g.node(n).op);
      if (!chain) return out;
      const Shape& type = g.data(cls).type;  // read before canonical_view adds nodes
      const std::optional<ClassView>& base = view_rule_detail::base_view(g, *ctx, child, op.opcode == hlo::Opcode::Slice, *memo);
      if (!base) return out;
      const ClassView& below = *base;
      if (const auto view = apply_movement(*ctx, op, type, below.view))
        if (auto id = canonical_view(g, *ctx, below.base, *view)) out.push_back(*id);
      return out;
    };
  };
  const hlo::Opcode codes[] = {hlo::Opcode::Reshape, hlo::Opcode::Transpose, hlo::Opcode::Slice,
                               hlo::Opcode::BitcastConvert};
  TensorPattern first = searcher(codes[0]);
  TensorRewrite rule("view-canonical", first, apply(first));
  rule.when(not_done(first));
  for (std::size_t i = 1; i < 4; ++i) {
    TensorPattern p = searcher(codes[i]);
    rule.or_search(p, apply(p));
    rule.when(not_done(p));
  }
  return rule;
}

}  // namespace act::select
