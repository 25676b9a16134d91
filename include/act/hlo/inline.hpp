// Module passes that make a kernel as XLA dumps it into one computation of the tensor
// language, before instruction selection:
//   select_computation  a module whose entry is one named computation (a fused computation of
//                       an XLA dump is a tiled kernel of its own);
//   inline_calls        every `call` and `fusion` the entry reaches replaced by its callee's
//                       instructions, parameters bound to the operands.
// Both are pure rewrites: `call` and `fusion` are functions of their operands (a fusion is a
// call that XLA chose to compile as one kernel), so inlining keeps the module's meaning, and
// the reference interpreter gives the same results before and after.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/hlo/module.hpp"

namespace act::hlo {

// Inlining copies a callee once per call site, so nested calls can grow a module
// exponentially; past this many instructions in the inlined entry it stops with an error.
inline constexpr std::size_t kMaxInlinedInstructions = 1'000'000;

// A copy of `module` whose entry is the computation named `name` (its parameters become the
// kernel's inputs, its root the output). The entry layout of the old entry no longer applies
// and is dropped. Throws Error(Parse) naming the computations when there is none of that name.
inline Module select_computation(const Module& module, std::string_view name) {
  const int index = module.find(name);
  if (index < 0) {
    std::string names;
    for (const auto& c : module.computations) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
    throw Error(ErrorKind::Parse, fmt::format("the module has no computation named '{}' (it has: {})", name, names));
  }
  Module out = module;
  if (out.entry == index) return out;
  for (auto& c : out.computations) c.is_entry = false;
  out.computations[static_cast<std::size_t>(index)].is_entry = true;
  out.entry = index;
  out.entry_parameter_layouts.reset();
  out.entry_result_layout.reset();
  return out;
}

namespace inline_detail {

inline bool is_pure_call(const Instruction& inst) {
  return (inst.opcode == Opcode::Call || inst.opcode == Opcode::Fusion) && inst.called_computations.size() == 1;
}

class Inliner {
 public:
  explicit Inliner(const Module& module) : module_(module) {}

  // `source` with its calls inlined, as a new computation of the same name.
  Computation run(const Computation& source) {
    Computation out;
    out.name = source.name;
    out.is_entry = source.is_entry;
    used_names_.clear();
    for (const auto& inst : source.instructions) used_names_.insert(inst.name);
    const std::vector<int> mapped = copy_body(source, {}, out, "", 0);
    out.root = mapped.at(static_cast<std::size_t>(source.root));
    for (const int p : source.parameters) out.parameters.push_back(mapped.at(static_cast<std::size_t>(p)));
    return out;
  }

 private:
  // Appends `source`'s instructions to `out` and returns, for each of them, its index in
  // `out`. With `arguments` (a callee's body) parameter(i) is not copied but maps to
  // arguments[i]; copied names get `prefix`.
  std::vector<int> copy_body(const Computation& source, const std::vector<int>& arguments, Computation& out,
                             const std::string& prefix, int depth) {
    if (depth > kMaxDepth)
      throw Error(ErrorKind::Unsupported, fmt::format("calls nest deeper than {} (at '{}'); act inlines at most that deep", kMaxDepth, source.name));
    const bool callee = depth > 0;
    std::vector<int> mapped(source.instructions.size(), -1);
    for (std::size_t i = 0; i < source.instructions.size(); ++i) {
      const Instruction& inst = source.instructions[i];
      if (callee && inst.opcode == Opcode::Parameter) {
        const auto n = static_cast<std::size_t>(inst.parameter_number);
        if (n >= arguments.size())
          throw Error(ErrorKind::Shape, fmt::format("'{}' reads parameter({}) but its call passes {} operands", source.name, n,
                                                    arguments.size()), inst.location);
        mapped[i] = arguments[n];
        continue;
      }
      std::vector<int> operands;
      for (const int o : inst.operands) operands.push_back(mapped.at(static_cast<std::size_t>(o)));
      if (is_pure_call(inst)) {
        const auto callee_index = static_cast<std::size_t>(inst.called_computations[0]);
        const Computation& body = module_.computations.at(callee_index);
        if (body.parameters.size() != operands.size())
          throw Error(ErrorKind::Shape, fmt::format("{} '{}' passes {} operands to '{}', which takes {}", opcode_name(inst.opcode),
                                                    inst.name, operands.size(), body.name, body.parameters.size()), inst.location);
        const std::vector<int> inner = copy_body(body, operands, out, prefix + inst.name + ".", depth + 1);
        const int result = inner.at(static_cast<std::size_t>(body.root));
        // The callee's root takes the call's name and declared shape (its layout), so the
        // kernel's output keeps its name; a root that is a parameter is the operand itself.
        const Instruction& root = body.root_instruction();
        if (root.opcode != Opcode::Parameter) {
          Instruction& copied = out.instructions[static_cast<std::size_t>(result)];
          used_names_.erase(copied.name);
          copied.name = unique(prefix + inst.name, true);
          copied.shape = inst.shape;
        }
        mapped[i] = result;
        continue;
      }
      Instruction copy = inst;
      copy.operands = std::move(operands);
      if (callee) copy.name = unique(prefix + inst.name, false);
      out.instructions.push_back(std::move(copy));
      if (out.instructions.size() > kMaxInlinedInstructions)
        throw Error(ErrorKind::Unsupported, fmt::format("inlining the calls of '{}' gives more than {} instructions",
                                                        source.name, kMaxInlinedInstructions));
      mapped[i] = static_cast<int>(out.instructions.size()) - 1;
    }
    return mapped;
  }

  // `name`, or `name.1`, `name.2`, ... when taken. `own` says the name belongs to the caller's
  // instruction being replaced (it is free again).
  std::string unique(const std::string& name, bool own) {
    std::string candidate = name;
    if (!own)
      for (int i = 1; used_names_.count(candidate); ++i) candidate = fmt::format("{}.{}", name, i);
    used_names_.insert(candidate);
    return candidate;
  }

  static constexpr int kMaxDepth = 64;
  const Module& module_;
  std::unordered_set<std::string> used_names_;
};

// A callee returning a tuple leaves `get-tuple-element(tuple(a, b), 1)` behind: forward every
// such get-tuple-element to the tuple's operand, then keep only what the root needs (and the
// parameters, which fix the kernel's inputs), in their order.
inline Computation forward_tuples_and_prune(const Computation& c) {
  std::vector<int> forward(c.instructions.size());
  for (std::size_t i = 0; i < c.instructions.size(); ++i) {
    forward[i] = static_cast<int>(i);
    const Instruction& inst = c.instructions[i];
    if (inst.opcode != Opcode::GetTupleElement || inst.operands.size() != 1) continue;
    const int source = forward[static_cast<std::size_t>(inst.operands[0])];
    const Instruction& tuple = c.instructions[static_cast<std::size_t>(source)];
    if (tuple.opcode == Opcode::Tuple && inst.tuple_index >= 0 && static_cast<std::size_t>(inst.tuple_index) < tuple.operands.size())
      forward[i] = forward[static_cast<std::size_t>(tuple.operands[static_cast<std::size_t>(inst.tuple_index)])];
  }
  std::vector<bool> live(c.instructions.size(), false);
  std::vector<int> stack{forward[static_cast<std::size_t>(c.root)]};
  for (const int p : c.parameters) stack.push_back(p);
  while (!stack.empty()) {
    const auto i = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    if (live[i]) continue;
    live[i] = true;
    for (const int o : c.instructions[i].operands) stack.push_back(forward[static_cast<std::size_t>(o)]);
  }
  Computation out;
  out.name = c.name;
  out.is_entry = c.is_entry;
  std::vector<int> index(c.instructions.size(), -1);
  for (std::size_t i = 0; i < c.instructions.size(); ++i) {
    if (!live[i]) continue;
    Instruction inst = c.instructions[i];
    for (int& o : inst.operands) o = index[static_cast<std::size_t>(forward[static_cast<std::size_t>(o)])];
    index[i] = static_cast<int>(out.instructions.size());
    out.instructions.push_back(std::move(inst));
  }
  out.root = index[static_cast<std::size_t>(forward[static_cast<std::size_t>(c.root)])];
  for (const int p : c.parameters) out.parameters.push_back(index[static_cast<std::size_t>(p)]);
  return out;
}

}  // namespace inline_detail

// True when the entry computation has a `call` or `fusion` instruction.
inline bool has_calls(const Module& module) {
  for (const auto& inst : module.entry_computation().instructions)
    if (inline_detail::is_pure_call(inst)) return true;
  return false;
}

// `module` with every call and fusion of its entry computation inlined (recursively), the
// get-tuple-elements of inlined tuples forwarded and the instructions the root no longer needs
// dropped. Other computations stay as they are (reduce's to_apply, unused ones). The result
// computes the same function of the same parameters.
inline Module inline_calls(const Module& module) {
  if (module.entry < 0 || !has_calls(module)) return module;
  Module out = module;
  inline_detail::Inliner inliner(module);
  out.computations[static_cast<std::size_t>(out.entry)] =
      inline_detail::forward_tuples_and_prune(inliner.run(module.entry_computation()));
  return out;
}

}  // namespace act::hlo
