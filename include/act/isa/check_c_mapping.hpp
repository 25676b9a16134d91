// The C-mapping checks of ISA validation (isa/validate.hpp), for an ISA with a mapping to C
// (isa/c_mapping.hpp): every instruction has a template whose placeholders are its attributes
// (`$&x` the start of an HBM slice), CPU features are declared, every non-HBM buffer has a
// register file.
//
// Lookups go by index or yield bool, never a pointer compared with null: g++ with the
// sanitizers does not fold such a comparison of a pointer into static data in a constant
// expression, which would break ACT_VALIDATE_ISA in sanitized builds.
#pragma once

#include <string_view>

#include "act/isa/c_mapping.hpp"
#include "act/isa/description.hpp"
#include "act/isa/diagnostic.hpp"

namespace act::isa::detail {

constexpr bool is_attribute(const Instruction& instr, std::string_view name) {
  for (auto a : instr.alpha)
    if (a == name) return true;
  for (auto b : instr.beta)
    if (b == name) return true;
  return false;
}

// `$&name` needs an HBM slice of the instruction whose start is exactly `name`.
constexpr bool is_hbm_start(const IsaView& isa, const Instruction& instr, std::string_view name) {
  auto in = [&](const List<SliceMap, kMaxSlices>& slices) {
    for (const auto& s : slices) {
      const int b = isa.buffer_index(s.buffer);
      if (b >= 0 && isa.buffers[b].is_hbm && s.start.size() == 1 && s.start[0] == name) return true;
    }
    return false;
  };
  return in(instr.inputs) || in(instr.outputs);
}

constexpr bool check_c_instruction(const IsaView& isa, const Instruction& instr, const CInstruction& c, Message& msg) {
  if (c.code.empty()) {
    msg << "C mapping: empty template";
    return false;
  }
  for (CPlaceholder p = next_c_placeholder(c.code, 0); p.begin < c.code.size(); p = next_c_placeholder(c.code, p.end)) {
    if (!is_attribute(instr, p.name)) {
      msg << "C mapping: the template uses $" << (p.pointer ? "&" : "") << p.name << ", which is no attribute of the instruction";
      return false;
    }
    if (p.pointer && !is_hbm_start(isa, instr, p.name)) {
      msg << "C mapping: $&" << p.name << " needs an HBM slice that starts at '" << p.name << "'";
      return false;
    }
  }
  if (c.features.empty()) {
    msg << "C mapping: the template names no CPU feature";
    return false;
  }
  for (auto f : c.features)
    if (!isa.c_mapping->has_feature(f)) {
      msg << "C mapping: unknown CPU feature '" << f << "'";
      return false;
    }
  return true;
}

// $BUF.units, $BUF.rows, $BUF.row_bytes of a non-HBM buffer with unit dims; nothing else.
constexpr bool check_c_feature_template(const IsaView& isa, std::string_view text, Message& msg) {
  for (CPlaceholder p = next_c_placeholder(text, 0); p.begin < text.size(); p = next_c_placeholder(text, p.end)) {
    const std::size_t dot = p.name.find('.');
    const std::string_view buffer = dot == std::string_view::npos ? std::string_view() : p.name.substr(0, dot);
    const std::string_view property = dot == std::string_view::npos ? std::string_view() : p.name.substr(dot + 1);
    const int b = isa.buffer_index(buffer);
    if (p.pointer || b < 0 || isa.buffers[b].is_hbm || isa.buffers[b].unit_dims.empty() ||
        (property != "units" && property != "rows" && property != "row_bytes")) {
      msg << "C mapping: a feature template uses $" << (p.pointer ? "&" : "") << p.name
          << " (allowed: $BUFFER.units, $BUFFER.rows, $BUFFER.row_bytes of a register buffer)";
      return false;
    }
  }
  return true;
}

constexpr bool check_c_mapping(const IsaView& isa, Message& msg) {
  const CMapping& m = *isa.c_mapping;
  for (std::size_t i = 0; i < m.features.size(); ++i) {
    if (m.features[i].name.empty() || m.features[i].usable.empty()) {
      msg << "C mapping: a CPU feature needs a name and a `usable` check";
      return false;
    }
    for (std::size_t j = 0; j < i; ++j)
      if (m.features[j].name == m.features[i].name) {
        msg << "C mapping: CPU feature '" << m.features[i].name << "' declared twice";
        return false;
      }
    if (!check_c_feature_template(isa, m.features[i].configure, msg)) return false;
  }
  for (const auto& r : m.registers) {
    const int b = isa.buffer_index(r.buffer);
    if (b < 0 || isa.buffers[b].is_hbm) {
      msg << "C mapping: register file '" << r.buffer << "' is not a non-HBM buffer of the ISA";
      return false;
    }
    for (std::string_view text : {r.declare, r.zero})
      for (CPlaceholder p = next_c_placeholder(text, 0); p.begin < text.size(); p = next_c_placeholder(text, p.end))
        if (p.pointer || p.name != "unit") {
          msg << "C mapping: register file '" << r.buffer << "' uses $" << p.name << " (only $unit)";
          return false;
        }
  }
  for (const auto& b : isa.buffers)
    if (!b.is_hbm && !m.has_registers(b.name)) {
      msg << "C mapping: buffer '" << b.name << "' has no register file";
      return false;
    }
  for (auto f : m.emulated_features)
    if (!m.has_feature(f)) {
      msg << "C mapping: unknown emulated CPU feature '" << f << "'";
      return false;
    }
  for (const auto& c : m.instructions)
    if (!isa.has_instruction(c.name)) {
      msg << "C mapping: '" << c.name << "' is no instruction of the ISA";
      return false;
    }
  return true;
}

}  // namespace act::isa::detail
