// A kernel-library baseline (paper §8.4, App. F): the kernel run as a sequence of library calls,
// each compiled on its own, with every intermediate stored to HBM by one call and loaded back by
// the next, as a library whose calling convention cannot keep data on chip runs it.
//
//   auto calls = codegen::split_library_calls(kernel, gemmini_library);   // MAC, GEMM, ADD
//   auto base = codegen::compile_library_baseline<isa::GemminiUnitScale>(calls, options);
//   base.cost, base.traffic.total(), base.calls[k].program
//
// Splitting: every instruction of the entry computation other than a parameter is one call,
// except that a producer joins its consumer's call when the library fuses the pair (Gemmini's
// MAC is a dot whose only user is an add). A call's operands become parameters of its own
// module, in the order they are first used. Calls with an opcode the library lacks (Gemmini's
// broadcast, reduce, reverse) make the kernel unsupported: the library would run it on the host.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/codegen/backend.hpp"
#include "act/codegen/hbm_traffic.hpp"
#include "act/core/error.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/opcode.hpp"

namespace act::codegen {

// What a kernel library offers: which opcodes it has a kernel for, and which producer/consumer
// pairs one of its kernels computes together.
struct LibraryCallPolicy {
  std::function<bool(const hlo::Instruction&)> supported;
  std::function<bool(const hlo::Instruction& producer, const hlo::Instruction& consumer)> fuses;
};

// Gemmini's SW library (gemmini.h): tiled_matmul (GEMM, and MAC with a D operand) and
// tiled_resadd (ADD). Constants are operands of the call that uses them.
inline LibraryCallPolicy gemmini_library() {
  LibraryCallPolicy p;
  p.supported = [](const hlo::Instruction& i) {
    return i.opcode == hlo::Opcode::Dot || i.opcode == hlo::Opcode::Add || i.opcode == hlo::Opcode::Constant;
  };
  p.fuses = [](const hlo::Instruction& producer, const hlo::Instruction& consumer) {
    return producer.opcode == hlo::Opcode::Dot && consumer.opcode == hlo::Opcode::Add;
  };
  return p;
}

struct LibraryCall {
  hlo::Module kernel;               // the call as a kernel of its own
  std::vector<std::string> values;  // the original instructions it computes
};

struct LibrarySplit {
  std::vector<LibraryCall> calls;
  std::vector<std::string> unsupported;  // instructions the library has no kernel for
  bool supported() const { return unsupported.empty(); }
};

inline LibrarySplit split_library_calls(const hlo::Module& kernel, const LibraryCallPolicy& policy) {
  const hlo::Computation& entry = kernel.entry_computation();
  const std::size_t n = entry.instructions.size();
  std::vector<int> users(n, 0);
  for (const auto& i : entry.instructions)
    for (int o : i.operands) ++users[static_cast<std::size_t>(o)];
  // The call each instruction belongs to (-1: a parameter or constant, an operand of calls).
  std::vector<int> call_of(n, -1);
  std::vector<std::vector<int>> members;
  LibrarySplit split;
  for (std::size_t k = 0; k < n; ++k) {
    const hlo::Instruction& i = entry.instructions[k];
    if (i.opcode == hlo::Opcode::Parameter || i.opcode == hlo::Opcode::Constant) continue;
    if (!policy.supported(i)) split.unsupported.push_back(i.name);
    int call = -1;
    for (int o : i.operands) {
      const auto& producer = entry.instructions[static_cast<std::size_t>(o)];
      const int pc = call_of[static_cast<std::size_t>(o)];
      if (pc >= 0 && users[static_cast<std::size_t>(o)] == 1 && members[static_cast<std::size_t>(pc)].size() == 1 &&
          policy.fuses(producer, i)) {
        call = pc;  // one producer joins (a MAC takes one dot)
        break;
      }
    }
    if (call < 0) {
      call = static_cast<int>(members.size());
      members.emplace_back();
    }
    members[static_cast<std::size_t>(call)].push_back(static_cast<int>(k));
    call_of[k] = call;
  }
  if (!split.supported()) return split;  // the host runs the kernel: no calls (reduce's to_apply is not copied)
  for (std::size_t c = 0; c < members.size(); ++c) {
    hlo::Computation comp;
    comp.name = "main";
    comp.is_entry = true;
    std::map<int, int> index;  // original instruction -> index in comp
    LibraryCall call;
    for (int k : members[c]) {
      hlo::Instruction copy = entry.instructions[static_cast<std::size_t>(k)];
      if (!copy.called_computations.empty())
        throw Error(ErrorKind::Unsupported, fmt::format("split_library_calls: '{}' calls a computation", copy.name));
      for (int& o : copy.operands) {
        if (auto it = index.find(o); it != index.end()) {
          o = it->second;
          continue;
        }
        const hlo::Instruction& source = entry.instructions[static_cast<std::size_t>(o)];
        hlo::Instruction operand = source;
        if (source.opcode != hlo::Opcode::Constant) {  // a value from HBM: a parameter of the call
          operand = hlo::Instruction{};
          operand.name = source.name;
          operand.opcode = hlo::Opcode::Parameter;
          operand.shape = source.shape;
          operand.parameter_number = static_cast<std::int64_t>(comp.parameters.size());
          comp.parameters.push_back(static_cast<int>(comp.instructions.size()));
        }
        comp.instructions.push_back(std::move(operand));
        index[o] = static_cast<int>(comp.instructions.size()) - 1;
        o = index[o];
      }
      call.values.push_back(copy.name);
      comp.instructions.push_back(std::move(copy));
      index[k] = static_cast<int>(comp.instructions.size()) - 1;
    }
    comp.root = static_cast<int>(comp.instructions.size()) - 1;
    call.kernel.name = fmt::format("{}_call{}", kernel.name, c);
    call.kernel.computations.push_back(std::move(comp));
    call.kernel.entry = 0;
    split.calls.push_back(std::move(call));
  }
  return split;
}

struct LibraryBaseline {
  std::vector<CompileResult> calls;  // one program per call, each with its own HBM image
  double cost = 0;                   // the sum of the calls' costs (the compile's cost model)
  HbmTraffic traffic;                // the sum of the calls' HBM traffic
};

// Compiles every call for Isa; throws Error(NoProgram) naming the call that found no program.
template <class Isa>
LibraryBaseline compile_library_baseline(const LibrarySplit& split, const Options& options) {
  if (!split.supported())
    throw Error(ErrorKind::Unsupported, fmt::format("the library has no kernel for '{}'", split.unsupported.front()));
  LibraryBaseline b;
  for (const LibraryCall& call : split.calls) {
    CompileOutcome outcome = Backend<Isa>().try_compile(call.kernel, options);
    if (!outcome) throw Error(ErrorKind::NoProgram, fmt::format("library call {}: {}", call.kernel.name, outcome.message));
    const HbmTraffic t = program_traffic(outcome.result->program, isa::view<Isa>());
    b.traffic.read += t.read;
    b.traffic.written += t.written;
    b.cost += outcome.result->cost;
    b.calls.push_back(std::move(*outcome.result));
  }
  return b;
}

}  // namespace act::codegen
