// Bytes a program moves between HBM and the accelerator: what the paper's "data movement"
// comparisons count (App. F, Fig. 17 right: mvin + mvout bytes).
//
// Per instruction: every HBM input slice is read and every HBM output slice written, in full,
// except a read-modify-write window (an HBM input with exactly the start and length of an HBM
// output: the bytes between strided rows, which the instruction keeps). Such an instruction
// writes what its on-chip inputs hold, so it counts their bytes instead of the window's.
// Instructions that touch no HBM move nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/core/dtype.hpp"
#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sym/expr.hpp"

namespace act::codegen {

struct HbmTraffic {
  std::int64_t read = 0;     // bytes HBM -> accelerator
  std::int64_t written = 0;  // bytes accelerator -> HBM
  std::int64_t total() const { return read + written; }
};

namespace traffic_detail {

struct EvaluatedSlice {
  const isa::Buffer* buffer = nullptr;
  std::vector<std::int64_t> start, length;
  std::int64_t bytes() const {
    std::int64_t n = byte_width(buffer->dtype);
    for (std::int64_t l : length) n *= l;
    for (std::int64_t u : buffer->unit_dims) n *= u;
    return n;
  }
  bool same_place(const EvaluatedSlice& o) const { return buffer == o.buffer && start == o.start && length == o.length; }
};

inline std::vector<EvaluatedSlice> evaluate(const isa::IsaView& isa, const isa::Instruction& instruction,
                                            const isa::List<isa::SliceMap, isa::kMaxSlices>& slices,
                                            const sim::ConcreteInstruction& ci) {
  const auto names = sim::attribute_names(instruction);
  auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
    for (std::size_t k = 0; k < names.size() && k < ci.attributes.size(); ++k)
      if (names[k] == name) return ci.attributes[k];
    for (const auto& r : isa.state)  // a slice at a latched address: its length never depends on it
      if (r.name == name) return r.initial;
    return std::nullopt;
  };
  auto eval = [&](std::string_view text) {
    const sym::EvalResult r = sym::try_evaluate(sym::parse(text), env);
    if (!r.ok()) throw Error(ErrorKind::Isa, fmt::format("hbm_traffic: '{}' of '{}' does not evaluate: {}", text, ci.name, r.error));
    return r.value;
  };
  std::vector<EvaluatedSlice> out;
  for (const isa::SliceMap& s : slices) {
    EvaluatedSlice e;
    e.buffer = isa.find_buffer(s.buffer);
    if (!e.buffer) throw Error(ErrorKind::Isa, fmt::format("hbm_traffic: '{}' names an unknown buffer '{}'", ci.name, s.buffer));
    for (std::size_t d = 0; d < s.start.size(); ++d) {
      e.start.push_back(eval(s.start[d]));
      e.length.push_back(eval(s.length[d]));
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace traffic_detail

// HBM bytes one instruction reads and writes.
inline HbmTraffic instruction_traffic(const sim::ConcreteInstruction& ci, const isa::IsaView& isa) {
  const isa::Instruction* instruction = isa.find_instruction(ci.name);
  if (!instruction) throw Error(ErrorKind::Isa, fmt::format("hbm_traffic: unknown instruction '{}' in ISA {}", ci.name, isa.name));
  const auto inputs = traffic_detail::evaluate(isa, *instruction, instruction->inputs, ci);
  const auto outputs = traffic_detail::evaluate(isa, *instruction, instruction->outputs, ci);
  HbmTraffic t;
  for (const auto& out : outputs) {
    if (!out.buffer->is_hbm) continue;
    bool rmw = false;
    for (const auto& in : inputs) rmw = rmw || in.same_place(out);
    if (!rmw) {
      t.written += out.bytes();
      continue;
    }
    for (const auto& in : inputs)
      if (!in.buffer->is_hbm) t.written += in.bytes();
  }
  for (const auto& in : inputs) {
    if (!in.buffer->is_hbm) continue;
    bool rmw = false;
    for (const auto& out : outputs) rmw = rmw || in.same_place(out);
    if (!rmw) t.read += in.bytes();
  }
  return t;
}

inline HbmTraffic program_traffic(const sim::Program& program, const isa::IsaView& isa) {
  HbmTraffic t;
  for (const auto& ci : program.instructions) {
    const HbmTraffic i = instruction_traffic(ci, isa);
    t.read += i.read;
    t.written += i.written;
  }
  return t;
}

}  // namespace act::codegen
