// Why extraction finds no pii graph: the operations no instruction computes, the IR->ISA rule
// that came closest and the precondition it missed, and whether a deeper output split might
// help (search/group_explorer.hpp), read off a RequestGraph.
#pragma once

#include <algorithm>
#include <chrono>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/select/rules/isa/alpha_solver.hpp"
#include "act/select/rules/isa/rule_info.hpp"
#include "act/select/rules/isa_rules.hpp"
#include "act/select/rules/rule_set.hpp"
#include "act/select/search/request_graph.hpp"

namespace act::select {

// The IR->ISA rule that came closest to producing a value the search could not produce, and the
// precondition it missed -- what to change in the kernel or the ISA. The rules are generated
// again from the ISA (in a copy of the selection context), and each one's searcher is matched,
// without its condition, at the classes in question; a match is as close as the preconditions
// it meets before the first it misses (type checks, dims, constraints, beta, then inputs that
// can be produced in the buffers the instruction reads). Only for diagnosis: it costs one
// generation of the rules.
class NearestRule {
 public:
  struct Miss {
    std::size_t rule = 0;
    std::uint32_t cls = 0;  // dense class the rule matched
    std::size_t held = 0;   // preconditions met before the one missed
    std::string reason;
    std::optional<RequestGraph::Request> unmet_input;  // an input that cannot be produced where it is read
    bool on_constraint = false;                        // the missed precondition is an alpha constraint
  };

  explicit NearestRule(const RequestGraph& requests) : requests_(requests), context_(requests.context()) {
    rules_ = isa_rules(context_);
  }

  // The closest miss among the rules whose instruction writes `buffer` (any buffer when < 0),
  // matched at `classes` (dense ids, earlier ones preferred on ties). Classes after `until`
  // has passed are not looked at.
  std::optional<Miss> find(const std::vector<std::uint32_t>& classes, int buffer,
                           std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max()) const {
    std::optional<Miss> best;
    for (const std::uint32_t c : classes) {
      if (until != std::chrono::steady_clock::time_point::max() && std::chrono::steady_clock::now() >= until) break;
      for (std::size_t r = 0; r < rules_.rules.size(); ++r) {
        const IsaRuleInfo& info = *rules_.infos[r];
        const isa::Instruction& inst = context_.isa.instructions[info.instruction];
        if (buffer >= 0 && (inst.outputs.empty() || context_.isa.buffer_index(inst.outputs[0].buffer) != buffer)) continue;
        std::size_t matches = 0;
        rules_.rules[r].searcher().search_class(requests_.graph(), requests_.eclass(c), [&](egraph::Id, const egraph::Subst& s) {
          if (std::optional<Miss> m = judge(r, c, s); m && (!best || m->held > best->held)) best = std::move(m);
          return ++matches < kMatchesPerClass;
        });
      }
    }
    return best;
  }

  // "matmul at class 12 (s32[8,16]): input 2 (s8[16,16], class 9) cannot be produced in buffer
  // 'weights' (written by read_weight)"
  std::string describe(const Miss& m) const {
    return fmt::format("{} at class {} ({}): {}", rules_.infos[m.rule]->name, requests_.eclass(m.cls), type_of(m.cls), m.reason);
  }

 private:
  static constexpr std::size_t kMatchesPerClass = 16;

  std::string type_of(std::uint32_t dense_class) const {
    return to_string(requests_.graph().data(requests_.eclass(dense_class)).type);
  }

  // How close one match of rule r at class c comes; nothing when it meets every precondition
  // (then some other reason keeps its pii node out, and it is no miss).
  std::optional<Miss> judge(std::size_t r, std::uint32_t c, const egraph::Subst& s) const {
    const IsaRuleInfo& info = *rules_.infos[r];
    const isa::Instruction& inst = context_.isa.instructions[info.instruction];
    Miss miss{r, c, 0, {}, {}};
    isa_rule_detail::AlphaMiss why;
    const auto alpha = isa_rule_detail::solve_alpha(info, context_, inst, requests_.graph(), requests_.eclass(c), s, 0, &why);
    miss.held = why.held;
    if (!alpha) {
      miss.reason = std::move(why.reason);
      miss.on_constraint = why.on_constraint;
      return miss;
    }
    const IsaPatternVariant& primary = info.variants.front();
    for (std::size_t k = 0; k < inst.inputs.size() && k < info.inputs.size(); ++k) {
      if (k < primary.bindings.size() && primary.bindings[k].source != InputSource::Matched) continue;
      const std::uint32_t input = requests_.dense(requests_.graph().find(s[info.inputs[k]]));
      const int buffer = context_.isa.buffer_index(inst.inputs[k].buffer);
      if (buffer >= 0 && !requests_.producible(requests_.key({input, buffer}))) {
        std::vector<std::string_view> writers;
        for (const isa::Instruction& w : context_.isa.instructions)
          if (!w.outputs.empty() && w.outputs[0].buffer == inst.inputs[k].buffer) writers.push_back(w.name);
        miss.reason = fmt::format("input {} ({}, class {}) cannot be produced in buffer '{}' (written by {})", k + 1,
                                  type_of(input), requests_.eclass(input), inst.inputs[k].buffer,
                                  writers.empty() ? std::string("no instruction") : fmt::format("{}", fmt::join(writers, ", ")));
        miss.unmet_input = RequestGraph::Request{input, buffer};
        return miss;
      }
      ++miss.held;
    }
    return std::nullopt;
  }

  const RequestGraph& requests_;
  SelectionContext context_;  // a copy: generating rules interns attributes and constants
  IsaRuleSet rules_;
};

inline bool is_data_movement(hlo::Opcode op) {
  switch (op) {
    case hlo::Opcode::Reshape:
    case hlo::Opcode::Transpose:
    case hlo::Opcode::Slice:
    case hlo::Opcode::BitcastConvert:
    case hlo::Opcode::Concatenate:
    case hlo::Opcode::Broadcast: return true;
    default: return false;
  }
}

// A value too large for any buffer (Gemmini's 64-wide products: spad and acc rows are 16 wide)
// exists only in pieces, so it is never producible whole. The search from a root counts it as
// ready when its pieces could be: it is a view (concatenate, reshape, bitcast-convert: the
// same bytes; not a transpose, which an ISA may lack) of available bytes, or an operation some
// instruction's semantics performs in its element type (a convert to s32, an s32 dot) over
// ready operands -- and its element type is one some on-chip buffer holds. Views in other
// types (the u8 reshapes of an input's HBM bytes) only pass bytes on: they make no value ready
// by themselves, so QKV, whose loads read bf16, still cannot view an f32 input. The search
// then stops at the operation no instruction performs at any size (the s32 clamp of
// gemm_64x64x64 on gemmini) rather than at the kernel's input reshapes.
inline std::vector<std::uint8_t> producible_or_assembled(const RequestGraph& requests) {
  const isa::IsaView& isa = requests.context().isa;
  std::vector<std::pair<hlo::Opcode, DType>> performed;  // (opcode, result type) of the semantics
  rule_set_detail::for_each_outline(isa, [&performed](const hlo::SemanticsOutline& sem) {
    for (std::size_t i = 0; i < sem.count; ++i) performed.emplace_back(sem.statements[i].opcode, sem.statements[i].dtype);
  });
  const auto in_pieces_only = [&isa](const Shape& type) {  // some buffer holds the type, none the value whole
    bool held = false;
    for (const isa::Buffer& b : isa.buffers) {
      if (b.is_hbm) continue;
      if (fits_buffer(type, b)) return false;
      held = held || (!type.is_tuple && b.dtype == type.dtype);
    }
    return held;
  };
  std::vector<std::uint8_t> ready(requests.class_count(), 0), bytes(requests.class_count(), 0);
  for (std::uint32_t c = 0; c < ready.size(); ++c) ready[c] = bytes[c] = requests.producible_somewhere(c) ? 1 : 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t c = 0; c < ready.size(); ++c) {
      if (ready[c]) continue;
      const Shape& type = requests.graph().data(requests.eclass(c)).type;
      const bool pieces = in_pieces_only(type);
      for (egraph::Id n : requests.graph().eclass(requests.eclass(c)).nodes) {
        const auto view = requests.graph().node(n);
        if (view.op.kind != NodeKind::Operator || view.children.empty()) continue;
        const hlo::Opcode op = view.op.opcode;
        const bool byte_view = op == hlo::Opcode::Concatenate || op == hlo::Opcode::Reshape || op == hlo::Opcode::BitcastConvert;
        if (!byte_view && !(pieces && std::find(performed.begin(), performed.end(), std::pair{op, type.dtype}) != performed.end()))
          continue;
        const std::vector<std::uint8_t>& needed = byte_view ? bytes : ready;
        bool operands = true;
        for (egraph::Id child : view.children) operands = operands && needed[requests.dense(requests.graph().find(child))];
        if (!operands) continue;
        changed = changed || !bytes[c] || pieces;
        bytes[c] = 1;
        ready[c] = pieces ? 1 : 0;
        if (pieces) break;
      }
    }
  }
  return ready;
}

// Why there is no pii graph (empty when every root can reach HBM): for each root that cannot
// be produced in HBM, the first classes on the way up from the kernel's inputs that no
// instruction produces in any buffer, i.e. classes with an operator e-node whose operands can
// all be produced somewhere while the operation itself cannot (breadth-first from the root, at
// most `max_blockers` per root, computations before data movement). E.g. "root 0 (u8[16384])
// cannot be produced in d0; no instruction computes: u8[64,64,4] reshape(u8[16384]) [class 1]".
// Then the rule that came closest to producing the root or one of those classes, the
// precondition it missed, and, when that is an input the rule's instruction cannot get into
// the buffer it reads, the rule that came closest to putting it there (NearestRule).
// Each class costs a search of every ISA rule, so the nearest rule is looked for only for the
// first kNearestRuleRoots unmet roots, at the first kNearestRuleClasses unproducible classes
// met breadth-first (the closest to the root): on an e-graph of 80k nodes with 13 unmet roots,
// all of them took 120 ms, past a compile's budget.
inline constexpr std::size_t kNearestRuleRoots = 4;
inline constexpr std::size_t kNearestRuleClasses = 64;

// The nearest rules are looked for only until `until` (a compile's budget plus a little: on
// an e-graph of 40k nodes under ASan they took 130 ms); the message says when that cut them.
inline std::string explain_unmet_roots(const RequestGraph& requests, std::size_t max_blockers = 4,
                                       std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max()) {
  using Request = RequestGraph::Request;
  std::optional<NearestRule> nearest;
  std::string out;
  std::size_t unmet = 0;
  bool out_of_time = false;
  const auto past = [until] { return until != std::chrono::steady_clock::time_point::max() && std::chrono::steady_clock::now() >= until; };
  std::vector<std::uint8_t> ready;  // producible_or_assembled, once some root is unmet
  for (std::size_t r = 0; r < requests.roots().size(); ++r) {
    const Request root = requests.roots()[r];
    if (requests.producible(requests.key(root))) continue;
    if (ready.empty()) ready = producible_or_assembled(requests);
    ++unmet;
    if (!out.empty()) out += '\n';
    out += fmt::format("root {} ({}) cannot be produced in {}", r, to_string(requests.graph().data(requests.eclass(root.cls)).type),
                       requests.context().isa.buffers[static_cast<std::size_t>(requests.hbm())].name);
    // The first unmet root always gets its blockers; later ones only within the time (a
    // module with 14 unmet roots spent 80 ms here under ASan, after the budget).
    if (unmet > 1 && past()) {
      out_of_time = true;
      continue;
    }
    std::vector<std::uint8_t> visited(requests.class_count(), 0);
    std::vector<std::uint32_t> queue{root.cls};
    visited[root.cls] = 1;
    // Computations are listed before data movement: a reshape of an input that no instruction
    // performs is usually a consequence, the operation ISA lacks is the cause.
    std::vector<std::string> computations, movements;
    for (std::size_t q = 0; q < queue.size() && q < 4096 && computations.size() < max_blockers; ++q) {
      const std::uint32_t c = queue[q];
      if (ready[c]) continue;  // producible (or assembled), just not in the buffer its user needs
      std::string computation, movement;
      for (egraph::Id n : requests.graph().eclass(requests.eclass(c)).nodes) {
        const auto view = requests.graph().node(n);
        if (view.op.kind != NodeKind::Operator) continue;
        bool operands_ready = true;
        for (egraph::Id child : view.children) {
          const std::uint32_t d = requests.dense(requests.graph().find(child));
          if (!ready[d]) {
            operands_ready = false;
            if (!visited[d]) {
              visited[d] = 1;
              queue.push_back(d);
            }
          }
        }
        if (!operands_ready) continue;
        std::string& text = is_data_movement(view.op.opcode) ? movement : computation;
        if (!text.empty()) continue;
        std::vector<std::string> operand_types;  // only for the node that is reported
        for (egraph::Id child : view.children)
          operand_types.push_back(to_string(requests.graph().data(requests.graph().find(child)).type));
        text = fmt::format("{} {}({}) [class {}]", to_string(requests.graph().data(requests.eclass(c)).type),
                           hlo::opcode_name(view.op.opcode), fmt::join(operand_types, ", "), requests.eclass(c));
      }
      if (!computation.empty()) computations.push_back(std::move(computation));
      else if (!movement.empty()) movements.push_back(std::move(movement));
    }
    std::vector<std::string> blockers = std::move(computations);
    for (std::size_t k = 0; blockers.size() < max_blockers && k < movements.size(); ++k) blockers.push_back(movements[k]);
    if (!blockers.empty()) out += fmt::format("; no instruction computes: {}", fmt::join(blockers, "; "));

    if (unmet > kNearestRuleRoots) continue;
    if (past()) {
      out_of_time = true;
      continue;
    }
    if (!nearest) nearest.emplace(requests);
    std::optional<NearestRule::Miss> miss = nearest->find({root.cls}, root.buffer, until);
    std::vector<std::uint32_t> unproducible;
    for (std::size_t q = 0; q < queue.size() && unproducible.size() < kNearestRuleClasses; ++q)
      if (!requests.producible_somewhere(queue[q])) unproducible.push_back(queue[q]);
    if (std::optional<NearestRule::Miss> inner = nearest->find(unproducible, -1, until); inner && (!miss || inner->held > miss->held))
      miss = std::move(inner);
    if (!miss) continue;
    out += fmt::format("; nearest rule: {}", nearest->describe(*miss));
    if (miss->unmet_input)
      if (const auto there = nearest->find({miss->unmet_input->cls}, miss->unmet_input->buffer, until))
        out += fmt::format("; nearest rule for that input: {}", nearest->describe(*there));
  }
  if (out_of_time) out += "\n(the nearest rules, or what no instruction computes, were not looked for at every root: the diagnosis ran out of time)";
  return out;
}

// Some root cannot be produced although a computed value behind it can: the search from the
// unmet roots (as explain_unmet_roots) meets a byte view, bitcast-convert to u8, of a
// producible value of another type, or of a value joined along a minor dimension from
// producible values (concat(a, p1) along columns: an output piece of whole rows holds parts
// of both, and no instruction writes such a row; smaller pieces each hold one). Splitting the
// output into smaller byte pieces may let a store write it (GroupExplorer retries with a
// deeper split only then).
inline bool unmet_byte_view_of_producible_value(const RequestGraph& requests) {
  using Request = RequestGraph::Request;
  const auto joined_across_rows_from_producible = [&](std::uint32_t d) {
    const TensorGraph& g = requests.graph();
    for (egraph::Id n : g.eclass(requests.eclass(d)).nodes) {
      const auto node = g.node(n);
      if (node.op.kind != NodeKind::Operator || node.op.opcode != hlo::Opcode::Concatenate) continue;
      const auto& dims = requests.context().attributes_of(node.op).dimensions;
      if (dims.empty() || dims[0] == 0) continue;
      if (std::all_of(node.children.begin(), node.children.end(),
                      [&](egraph::Id k) { return requests.producible_somewhere(requests.dense(g.find(k))); }))
        return true;
    }
    return false;
  };
  std::vector<std::uint8_t> visited(requests.class_count(), 0);
  std::vector<std::uint32_t> queue;
  for (const Request root : requests.roots())
    if (!requests.producible(requests.key(root)) && !visited[root.cls]) {
      visited[root.cls] = 1;
      queue.push_back(root.cls);
    }
  for (std::size_t q = 0; q < queue.size() && q < 4096; ++q) {
    const std::uint32_t c = queue[q];
    if (requests.producible_somewhere(c)) continue;
    for (egraph::Id n : requests.graph().eclass(requests.eclass(c)).nodes) {
      const auto view = requests.graph().node(n);
      if (view.op.kind != NodeKind::Operator) continue;
      for (egraph::Id child : view.children) {
        const std::uint32_t d = requests.dense(requests.graph().find(child));
        if (view.op.opcode == hlo::Opcode::BitcastConvert && requests.graph().data(requests.eclass(c)).type.dtype == DType::u8 &&
            requests.graph().data(requests.eclass(d)).type.dtype != DType::u8 &&
            (requests.producible_somewhere(d) || joined_across_rows_from_producible(d)))
          return true;
        if (!requests.producible_somewhere(d) && !visited[d]) {
          visited[d] = 1;
          queue.push_back(d);
        }
      }
    }
  }
  return false;
}

// Some root cannot be produced, and the instruction that comes closest to writing it misses
// only on an alpha constraint: the root is too large for one store (QKV: store_rm of 256 rows,
// n <= 128). Writing the output in pieces may help; a root blocked by an operation no
// instruction computes (Gemmini: an s32 clamp) is not helped by pieces. GroupExplorer splits
// an output module 1 left whole only then.
inline bool unmet_root_exceeds_a_store(const RequestGraph& requests) {
  std::optional<NearestRule> nearest;
  for (const RequestGraph::Request root : requests.roots()) {
    if (requests.producible(requests.key(root))) continue;
    if (!nearest) nearest.emplace(requests);
    const std::optional<NearestRule::Miss> miss = nearest->find({root.cls}, root.buffer);
    if (miss && miss->on_constraint) return true;
  }
  return false;
}

}  // namespace act::select
