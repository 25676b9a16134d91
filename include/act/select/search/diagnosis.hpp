// Why extraction finds no pii graph: the operations no instruction computes, and whether a
// deeper output split might help (search/group_explorer.hpp), read off a RequestGraph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/select/search/request_graph.hpp"

namespace act::select {

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

// Why there is no pii graph (empty when every root can reach HBM): for each root that cannot
// be produced in HBM, the first classes on the way up from the kernel's inputs that no
// instruction produces in any buffer, i.e. classes with an operator e-node whose operands can
// all be produced somewhere while the operation itself cannot (breadth-first from the root, at
// most `max_blockers` per root, computations before data movement). E.g. "root 0 (u8[16384])
// cannot be produced in d0; no instruction computes: u8[64,64,4] reshape(u8[16384]) [class 1]".
inline std::string explain_unmet_roots(const RequestGraph& requests, std::size_t max_blockers = 4) {
  using Request = RequestGraph::Request;
  std::string out;
  for (std::size_t r = 0; r < requests.roots().size(); ++r) {
    const Request root = requests.roots()[r];
    if (requests.producible(requests.key(root))) continue;
    if (!out.empty()) out += '\n';
    out += fmt::format("root {} ({}) cannot be produced in {}", r, to_string(requests.graph().data(requests.eclass(root.cls)).type),
                       requests.context().isa.buffers[static_cast<std::size_t>(requests.hbm())].name);
    std::vector<std::uint8_t> visited(requests.class_count(), 0);
    std::vector<std::uint32_t> queue{root.cls};
    visited[root.cls] = 1;
    // Computations are listed before data movement: a reshape of an input that no instruction
    // performs is usually a consequence, the operation ISA lacks is the cause.
    std::vector<std::string> computations, movements;
    for (std::size_t q = 0; q < queue.size() && q < 4096 && computations.size() < max_blockers; ++q) {
      const std::uint32_t c = queue[q];
      if (requests.producible_somewhere(c)) continue;  // producible, just not in the buffer its user needs
      std::string computation, movement;
      for (egraph::Id n : requests.graph().eclass(requests.eclass(c)).nodes) {
        const auto view = requests.graph().node(n);
        if (view.op.kind != NodeKind::Operator) continue;
        bool operands_ready = true;
        std::vector<std::string> operand_types;
        for (egraph::Id child : view.children) {
          const std::uint32_t d = requests.dense(requests.graph().find(child));
          operand_types.push_back(to_string(requests.graph().data(requests.eclass(d)).type));
          if (!requests.producible_somewhere(d)) {
            operands_ready = false;
            if (!visited[d]) {
              visited[d] = 1;
              queue.push_back(d);
            }
          }
        }
        if (!operands_ready) continue;
        std::string& text = is_data_movement(view.op.opcode) ? movement : computation;
        if (text.empty())
          text = fmt::format("{} {}({}) [class {}]", to_string(requests.graph().data(requests.eclass(c)).type), hlo::opcode_name(view.op.opcode),
                             fmt::join(operand_types, ", "), requests.eclass(c));
      }
      if (!computation.empty()) computations.push_back(std::move(computation));
      else if (!movement.empty()) movements.push_back(std::move(movement));
    }
    std::vector<std::string> blockers = std::move(computations);
    for (std::size_t k = 0; blockers.size() < max_blockers && k < movements.size(); ++k) blockers.push_back(movements[k]);
    if (!blockers.empty()) out += fmt::format("; no instruction computes: {}", fmt::join(blockers, "; "));
  }
  return out;
}

// Some root cannot be produced although a computed value behind it can: the search from the
// unmet roots (as explain_unmet_roots) meets a byte view, bitcast-convert to u8, of a
// producible value of another type. Splitting the output into smaller byte pieces may let
// a store write it (GroupExplorer retries with a deeper split only then).
inline bool unmet_byte_view_of_producible_value(const RequestGraph& requests) {
  using Request = RequestGraph::Request;
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
            requests.graph().data(requests.eclass(d)).type.dtype != DType::u8 && requests.producible_somewhere(d))
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

}  // namespace act::select
