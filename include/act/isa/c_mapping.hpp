// How an ISA's instructions become C: per-instruction intrinsic templates plus what the host needs
// around them (headers and helpers, CPU features, register variables). The mapping is knowledge
// about the ISA, so it lives with it (isa/amx_c.hpp); the generic emitter (native/emit_c.hpp)
// walks a program with it. An ISA opts in by declaring `static constexpr const CMapping*
// c_mapping` (isa::view() picks it up); ACT_VALIDATE_ISA then checks the mapping too.
//
// Templates are C text with `$` placeholders (C itself never uses `$`):
//   $attr            the attribute's value in decimal (any alpha or beta name of the instruction)
//   $&attr           a pointer to the HBM byte at `attr`: `(hbm + 128)`, or into the static
//                    constant pool when every HBM slice starting at `attr` is a read of constants
//   $unit            in CRegisterFile templates: the register number (unit index)
//   $BUF.units       in feature templates: the number of units of buffer BUF (e.g. $tmm.units)
//   $BUF.rows        its unit's first dim (rows of a tile)
//   $BUF.row_bytes   the bytes of one such row (the other unit dims x the element width)
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "act/isa/description.hpp"

namespace act::isa {

// A CPU capability some instructions need. The emitted init function checks and enables every
// feature the program uses, in declaration order, before it configures any.
struct CFeature {
  std::string_view name;       // what the user is told is missing: "amx-int8"
  std::string_view target;     // for __attribute__((target(...))) on the kernel: "amx-int8"
  std::string_view usable;     // C expression, nonzero when the CPU and OS can run it (may enable it)
  std::string_view configure;  // C statements, run once by init after every check passed
  std::string_view release;    // C statements of the release function (e.g. _tile_release())
  std::string_view epilogue;   // C statements at the end of every kernel call (e.g. vzeroupper)
};

// Storage of a non-HBM buffer: one C variable (or hardware register) per unit.
struct CRegisterFile {
  std::string_view buffer;   // the ISA buffer's name
  std::string_view declare;  // per unit the program touches, at the top of the kernel
  std::string_view zero;     // per unit the program reads before writing it: the simulator
                             // starts every run from zeroed buffers, so does the kernel
};

struct CInstruction {
  std::string_view name;  // the ISA instruction
  std::string_view code;  // C statements
  List<std::string_view, 4> features{};  // names of CFeatures this code needs
};

struct CMapping {
  std::string_view prologue;  // top of the file: includes and static inline helpers
  List<CFeature, 8> features{};
  List<CRegisterFile, 4> registers{};
  std::span<const CInstruction> instructions;
  // Compiled with -D<emulation_define>, the file runs the instructions of `emulated_features` in
  // software (for testing on CPUs without them); empty: no emulation.
  std::string_view emulation_define{};
  List<std::string_view, 4> emulated_features{};

  // Index-based lookups for constant evaluation: GCC with the sanitizers on does not fold a
  // pointer into a global compared with null, so ACT_VALIDATE_ISA uses these.
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  constexpr std::size_t index_of(std::string_view instruction) const {
    for (std::size_t i = 0; i < instructions.size(); ++i)
      if (instructions[i].name == instruction) return i;
    return npos;
  }
  constexpr bool has_feature(std::string_view feature) const {
    for (const auto& f : features)
      if (f.name == feature) return true;
    return false;
  }
  constexpr bool has_registers(std::string_view buffer) const {
    for (const auto& r : registers)
      if (r.buffer == buffer) return true;
    return false;
  }

  constexpr const CInstruction* find(std::string_view instruction) const {
    for (const auto& c : instructions)
      if (c.name == instruction) return &c;
    return nullptr;
  }
  constexpr const CFeature* find_feature(std::string_view feature) const {
    for (const auto& f : features)
      if (f.name == feature) return &f;
    return nullptr;
  }
  constexpr const CRegisterFile* find_registers(std::string_view buffer) const {
    for (const auto& r : registers)
      if (r.buffer == buffer) return &r;
    return nullptr;
  }
};

// One `$` placeholder of a template: text[begin, end) is `$name` or `$&name` (name may hold one
// dot: `$tmm.units`). A `$` not followed by a letter or `_` is no placeholder.
struct CPlaceholder {
  std::size_t begin = 0, end = 0;
  bool pointer = false;  // `$&name`
  std::string_view name;
};

constexpr bool is_c_placeholder_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

// The first placeholder at or after `from`; begin == end == text.size() when there is none.
constexpr CPlaceholder next_c_placeholder(std::string_view text, std::size_t from) {
  for (std::size_t i = from; i < text.size(); ++i) {
    if (text[i] != '$') continue;
    CPlaceholder p;
    p.begin = i;
    std::size_t j = i + 1;
    if (j < text.size() && text[j] == '&') {
      p.pointer = true;
      ++j;
    }
    const std::size_t name_begin = j;
    bool dotted = false;
    while (j < text.size()) {
      if (is_c_placeholder_char(text[j], j == name_begin)) {
        ++j;
      } else if (text[j] == '.' && !dotted && j > name_begin && j + 1 < text.size() && is_c_placeholder_char(text[j + 1], true)) {
        dotted = true;
        ++j;
      } else {
        break;
      }
    }
    if (j == name_begin) continue;
    p.end = j;
    p.name = text.substr(name_begin, j - name_begin);
    return p;
  }
  return CPlaceholder{text.size(), text.size(), false, {}};
}

}  // namespace act::isa
