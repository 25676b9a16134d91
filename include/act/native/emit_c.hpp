// A program as C: one straight-line function per kernel over the HBM image, from the ISA's C
// mapping (isa/c_mapping.hpp). Generic: everything ISA-specific comes from the mapping.
//
//   std::string c = act::native::emit_c(program, isa, image, {.function_name = "k3"});
//
// The file (valid C11 and C++; extern "C" under C++) defines, per kernel NAME:
//   const char* NAME_init(void)     once per thread before NAME: checks (and enables) every CPU
//                                   feature the program uses and runs their configuration (the
//                                   tile configuration); NULL, or the name of the first feature
//                                   this CPU lacks (then nothing else was done)
//   void NAME(uint8_t* hbm)         runs the program on the HBM image at `hbm`
//                                   (NAME_hbm_bytes() bytes: the image, the constant pool and any
//                                   scratch; give it the image's alignment, 64 bytes by default)
//   void NAME_release(void)         once when done (releases the tiles)
//   size_t NAME_hbm_bytes(void)
// Why configuration and release are not in NAME: configuring tiles costs 55-75 ns, more than K1
// itself, and TILERELEASE forgets the configuration, so both happen once, outside the calls.
//
// Registers: one C variable per unit the program touches (the mapping's `declare`); a unit read
// before the program writes it is zeroed first, as the simulator starts from zeroed buffers.
// Constants: read in place from static arrays; if an instruction writes into the pool, or
// reads across a block's edge, the blocks are copied into `hbm` at every call instead.
// Exactness: the kernel carries its CPU features as a target attribute, so the rest of the file
// (the CPU checks) runs anywhere; `#pragma GCC optimize("fp-contract=off")` (and the build's
// -ffp-contract=off) keeps the compiler from fusing a multiply with a later add.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/c_mapping.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sim/machine.hpp"
#include "act/sim/program_formats.hpp"
#include "act/sym/expr.hpp"

namespace act::native {

struct CEmitOptions {
  std::string function_name;  // a C identifier; default: "kernel"
  std::string source;         // the kernel's file, for the header comment (optional)
  bool comments = true;       // each instruction's assembly as a comment above its C
};

// One kernel of a file with several.
struct CKernel {
  const sim::Program* program = nullptr;
  const sim::KernelImage* image = nullptr;
  CEmitOptions options;
};

// Flags the emitted file needs besides the compiler's own (-O2 and -fPIC for a shared object are
// the caller's choice): C11 and no contraction of a multiply and an add into an FMA.
inline std::vector<std::string> c_compile_flags() { return {"-x", "c", "-std=c11", "-ffp-contract=off"}; }

// A C identifier from any name ("my-kernel.1" -> "my_kernel_1").
inline std::string c_identifier(std::string_view name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "kernel_" + out;
  return out;
}

namespace emit_c_detail {

// One data slice of one concrete instruction, evaluated.
struct Access {
  int buffer = -1;
  bool write = false;
  std::string_view start_text;  // the slice map's start expression (HBM: one access dim)
  std::int64_t start = 0, length = 0;
};

struct Step {
  const sim::ConcreteInstruction* concrete = nullptr;
  const isa::Instruction* instruction = nullptr;
  const isa::CInstruction* c = nullptr;
  std::vector<Access> accesses;  // inputs, then outputs
};

inline const isa::CMapping& mapping_of(const isa::IsaView& isa) {
  if (!isa.c_mapping)
    throw Error(ErrorKind::Unsupported, fmt::format("ISA {} has no C mapping: its programs cannot be emitted as C", isa.name));
  return *isa.c_mapping;
}

inline std::vector<Step> analyze(const sim::Program& program, const isa::IsaView& isa) {
  const isa::CMapping& mapping = mapping_of(isa);
  std::vector<Step> steps;
  for (const auto& ci : program.instructions) {
    Step step;
    step.concrete = &ci;
    step.instruction = isa.find_instruction(ci.name);
    if (!step.instruction) throw Error(ErrorKind::Isa, fmt::format("unknown instruction '{}' in ISA {}", ci.name, isa.name), ci.location);
    if (!step.instruction->updates.empty())
      throw Error(ErrorKind::Unsupported, fmt::format("'{}' of ISA {} updates state registers, which C emission does not model", ci.name, isa.name));
    step.c = mapping.find(ci.name);
    if (!step.c) throw Error(ErrorKind::Isa, fmt::format("ISA {}'s C mapping has no template for '{}'", isa.name, ci.name));
    const auto names = sim::attribute_names(*step.instruction);
    if (names.size() != ci.attributes.size())
      throw Error(ErrorKind::Isa, fmt::format("'{}' takes {} attributes, the program gives {}", ci.name, names.size(), ci.attributes.size()),
                  ci.location);
    sym::Bindings env;
    for (std::size_t k = 0; k < names.size(); ++k) env.set(names[k], ci.attributes[k]);
    auto evaluate = [&](std::string_view text) {
      const auto parsed = sym::try_parse(text);
      if (parsed.ok())
        if (const auto value = sym::try_evaluate(parsed.expr, env); value.ok()) return value.value;
      throw Error(ErrorKind::Isa, fmt::format("{}: cannot evaluate '{}'", sim::describe(ci, step.instruction), text), ci.location);
    };
    auto add = [&](const isa::SliceMap& map, bool write) {
      const int b = isa.buffer_index(map.buffer);
      if (b < 0) throw Error(ErrorKind::Isa, fmt::format("'{}' names an unknown buffer '{}'", ci.name, map.buffer));
      if (map.start.size() != 1 || map.length.size() != 1)
        throw Error(ErrorKind::Unsupported,
                    fmt::format("C emission needs buffers with one access dim; '{}' of ISA {} has {}", map.buffer, isa.name, map.start.size()));
      Access a{b, write, map.start[0], evaluate(map.start[0]), evaluate(map.length[0])};
      const auto size = isa.buffers[static_cast<std::size_t>(b)].access_dims[0];
      if (a.start < 0 || a.length < 1 || a.start > size - a.length)
        throw Error(ErrorKind::Execution, fmt::format("{}: the data slice {}[{}:{}] is outside the buffer", sim::describe(ci, step.instruction),
                                                      map.buffer, a.start, a.start + a.length), ci.location);
      step.accesses.push_back(a);
    };
    for (const auto& m : step.instruction->inputs) add(m, false);
    for (const auto& m : step.instruction->outputs) add(m, true);
    steps.push_back(std::move(step));
  }
  return steps;
}

// The features the steps use, in the mapping's declaration order.
inline std::vector<const isa::CFeature*> used_features(const std::vector<Step>& steps, const isa::CMapping& mapping) {
  std::vector<const isa::CFeature*> out;
  for (const auto& f : mapping.features)
    for (const auto& s : steps)
      if (std::find(s.c->features.begin(), s.c->features.end(), f.name) != s.c->features.end()) {
        out.push_back(&f);
        break;
      }
  return out;
}

// Replaces every placeholder with resolve(placeholder).
template <class Resolve>
std::string substitute(std::string_view text, Resolve&& resolve) {
  std::string out;
  std::size_t at = 0;
  for (isa::CPlaceholder p = isa::next_c_placeholder(text, 0); p.begin < text.size(); p = isa::next_c_placeholder(text, p.end)) {
    out.append(text.substr(at, p.begin - at));
    out += resolve(p);
    at = p.end;
  }
  out.append(text.substr(at));
  return out;
}

inline void append_indented(std::string& out, std::string_view code, std::string_view indent) {
  std::size_t at = 0;
  while (at < code.size()) {
    std::size_t end = code.find('\n', at);
    if (end == std::string_view::npos) end = code.size();
    const std::string_view line = code.substr(at, end - at);
    if (!line.empty()) out += fmt::format("{}{}\n", indent, line);
    at = end + 1;
  }
}

// $BUF.units / $BUF.rows / $BUF.row_bytes from the ISA's buffer shapes.
inline std::string buffer_property(const isa::IsaView& isa, std::string_view name) {
  const std::size_t dot = name.find('.');
  const isa::Buffer* b = dot == std::string_view::npos ? nullptr : isa.find_buffer(name.substr(0, dot));
  const std::string_view property = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  if (!b || b->unit_dims.empty()) throw Error(ErrorKind::Isa, fmt::format("C mapping of ISA {}: unknown placeholder ${}", isa.name, name));
  std::int64_t units = 1;
  for (auto d : b->access_dims) units *= d;
  std::int64_t row_bytes = byte_width(b->dtype);
  for (std::size_t d = 1; d < b->unit_dims.size(); ++d) row_bytes *= b->unit_dims[d];
  if (property == "units") return std::to_string(units);
  if (property == "rows") return std::to_string(b->unit_dims[0]);
  if (property == "row_bytes") return std::to_string(row_bytes);
  throw Error(ErrorKind::Isa, fmt::format("C mapping of ISA {}: unknown placeholder ${}", isa.name, name));
}

inline std::string target_attribute(const std::vector<const isa::CFeature*>& features) {
  std::vector<std::string_view> targets;
  for (const auto* f : features)
    if (!f->target.empty()) targets.push_back(f->target);
  if (targets.empty()) return "";
  return fmt::format("__attribute__((target(\"{}\"))) ", fmt::join(targets, ","));
}

inline std::string bytes_initializer(const std::vector<std::uint8_t>& bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i % 16 == 0) out += "\n   ";
    out += fmt::format(" 0x{:02x},", bytes[i]);
  }
  return out;
}

inline std::string emit_kernel(const CKernel& kernel, const isa::IsaView& isa) {
  const isa::CMapping& mapping = mapping_of(isa);
  const sim::Program& program = *kernel.program;
  const sim::KernelImage& image = *kernel.image;
  const std::string name = c_identifier(kernel.options.function_name.empty() ? "kernel" : kernel.options.function_name);
  const std::vector<Step> steps = analyze(program, isa);
  const std::vector<const isa::CFeature*> features = used_features(steps, mapping);
  const int hbm = isa.buffer_index(isa.hbm().name);
  const std::int64_t hbm_bytes = sim::hbm_extent(program, isa, image);

  // Constants: in place unless written to or read across a block's edge.
  auto block_of = [&](std::int64_t start, std::int64_t length) -> std::optional<std::size_t> {
    for (std::size_t b = 0; b < program.constants.size(); ++b) {
      const auto& block = program.constants[b];
      if (start >= block.address && start + length <= block.address + static_cast<std::int64_t>(block.bytes.size())) return b;
    }
    return std::nullopt;
  };
  auto overlaps_pool = [&](std::int64_t start, std::int64_t length) {
    for (const auto& block : program.constants)
      if (start < block.address + static_cast<std::int64_t>(block.bytes.size()) && block.address < start + length) return true;
    return false;
  };
  bool copy_pool = false;
  for (const auto& s : steps)
    for (const auto& a : s.accesses)
      if (a.buffer == hbm && overlaps_pool(a.start, a.length) && (a.write || !block_of(a.start, a.length))) copy_pool = true;

  // Register units touched, and those read before written.
  std::map<int, std::set<std::int64_t>> touched, zeroed;
  {
    std::map<int, std::set<std::int64_t>> written;
    for (const auto& s : steps) {
      for (const auto& a : s.accesses) {
        if (a.buffer == hbm) continue;
        for (std::int64_t u = a.start; u < a.start + a.length; ++u) {
          touched[a.buffer].insert(u);
          if (!a.write && !written[a.buffer].count(u)) zeroed[a.buffer].insert(u);
        }
      }
      for (const auto& a : s.accesses)
        if (a.write && a.buffer != hbm)
          for (std::int64_t u = a.start; u < a.start + a.length; ++u) written[a.buffer].insert(u);
    }
  }
  auto registers_of = [&](int buffer) -> const isa::CRegisterFile& {
    const auto& b = isa.buffers[static_cast<std::size_t>(buffer)];
    const isa::CRegisterFile* r = mapping.find_registers(b.name);
    if (!r) throw Error(ErrorKind::Unsupported, fmt::format("ISA {}'s C mapping has no storage for buffer '{}'", isa.name, b.name));
    return *r;
  };
  auto per_unit = [&](std::string_view text, std::int64_t unit) {
    return substitute(text, [&](const isa::CPlaceholder& p) -> std::string {
      if (p.name != "unit" || p.pointer) throw Error(ErrorKind::Isa, fmt::format("C mapping of ISA {}: unknown placeholder ${}", isa.name, p.name));
      return std::to_string(unit);
    });
  };

  std::string out;
  out += fmt::format("/* ---- kernel {}{}: {} instructions for ISA {} */\n\n", name,
                     kernel.options.source.empty() ? "" : fmt::format(" (from {})", kernel.options.source), program.instructions.size(), isa.name);
  out += "/*\n";
  for (const auto& line : image.describe()) out += fmt::format("   {}\n", line);
  out += fmt::format("   CPU features: {}\n*/\n\n",
                     features.empty() ? std::string("none")
                                      : fmt::format("{}", fmt::join([&] {
                                                      std::vector<std::string_view> n;
                                                      for (const auto* f : features) n.push_back(f->name);
                                                      return n;
                                                    }(), ", ")));
  for (std::size_t b = 0; b < program.constants.size(); ++b)
    out += fmt::format("static const uint8_t {}_constants_{}[{}] __attribute__((aligned(64))) = {{{}\n}};\n\n", name, b,
                       program.constants[b].bytes.size(), bytes_initializer(program.constants[b].bytes));

  out += fmt::format("size_t {}_hbm_bytes(void) {{ return {}; }}\n\n", name, hbm_bytes);

  // Configuration, one function per feature that has some (it needs that feature's target).
  std::vector<std::string> configure_calls;
  for (const auto* f : features) {
    if (f->configure.empty()) continue;
    const std::string fn = fmt::format("{}_configure_{}", name, c_identifier(f->name));
    out += fmt::format("{}static void {}(void) {{\n", target_attribute({f}), fn);
    append_indented(out, substitute(f->configure, [&](const isa::CPlaceholder& p) {
                      if (p.pointer) throw Error(ErrorKind::Isa, fmt::format("C mapping of ISA {}: unknown placeholder $&{}", isa.name, p.name));
                      return buffer_property(isa, p.name);
                    }),
                    "  ");
    out += "}\n\n";
    configure_calls.push_back(fn);
  }

  out += fmt::format("const char* {}_init(void) {{\n", name);
  for (const auto* f : features) out += fmt::format("  if (!({})) return \"{}\";\n", f->usable, f->name);
  for (const auto& call : configure_calls) out += fmt::format("  {}();\n", call);
  out += "  return (const char*)0;\n}\n\n";

  out += fmt::format("{}void {}_release(void) {{\n", target_attribute(features), name);
  for (const auto* f : features) append_indented(out, f->release, "  ");
  out += "}\n\n";

  out += fmt::format("{}void {}(uint8_t* hbm) {{\n", target_attribute(features), name);
  for (const auto& [buffer, units] : touched) {
    const auto& r = registers_of(buffer);
    for (std::int64_t u : units) append_indented(out, per_unit(r.declare, u), "  ");
  }
  for (const auto& [buffer, units] : zeroed) {
    const auto& r = registers_of(buffer);
    for (std::int64_t u : units) append_indented(out, per_unit(r.zero, u), "  ");
  }
  if (copy_pool)
    for (std::size_t b = 0; b < program.constants.size(); ++b)
      out += fmt::format("  memcpy(hbm + {}, {}_constants_{}, {});\n", program.constants[b].address, name, b, program.constants[b].bytes.size());
  for (std::size_t t = 0; t < steps.size(); ++t) {
    const Step& s = steps[t];
    const auto names = sim::attribute_names(*s.instruction);
    auto value_of = [&](std::string_view attr) -> std::int64_t {
      for (std::size_t k = 0; k < names.size(); ++k)
        if (names[k] == attr) return s.concrete->attributes[k];
      throw Error(ErrorKind::Isa, fmt::format("C template of '{}' uses ${}, which is no attribute of it", s.instruction->name, attr));
    };
    const std::string code = substitute(s.c->code, [&](const isa::CPlaceholder& p) -> std::string {
      if (!p.pointer) return std::to_string(value_of(p.name));
      // Every HBM slice starting at the attribute: a read inside one constant block points there.
      bool all_reads = true, any = false;
      std::optional<std::size_t> block;
      std::int64_t address = value_of(p.name);
      for (const auto& a : s.accesses) {
        if (a.buffer != hbm || a.start_text != p.name) continue;
        any = true;
        address = a.start;
        const auto b = block_of(a.start, a.length);
        if (a.write || !b || (block && *block != *b)) all_reads = false;
        block = b;
      }
      if (!any) throw Error(ErrorKind::Isa, fmt::format("C template of '{}' uses $&{}, but no HBM slice starts there", s.instruction->name, p.name));
      if (all_reads && block && !copy_pool)
        return fmt::format("({}_constants_{} + {})", name, *block, address - program.constants[*block].address);
      return fmt::format("(hbm + {})", address);
    });
    if (kernel.options.comments) out += fmt::format("  /* {}: {} */\n", t + 1, sim::describe(*s.concrete, s.instruction));
    append_indented(out, code, "  ");
  }
  for (const auto* f : features) append_indented(out, f->epilogue, "  ");
  out += "}\n\n";
  return out;
}

}  // namespace emit_c_detail

// The CPU features (names from the ISA's C mapping) the program's instructions need.
inline std::vector<std::string> required_features(const sim::Program& program, const isa::IsaView& isa) {
  const auto steps = emit_c_detail::analyze(program, isa);
  std::vector<std::string> out;
  for (const auto* f : emit_c_detail::used_features(steps, emit_c_detail::mapping_of(isa))) out.emplace_back(f->name);
  return out;
}

// One C file holding every kernel (names must differ).
inline std::string emit_c(std::span<const CKernel> kernels, const isa::IsaView& isa) {
  const isa::CMapping& mapping = emit_c_detail::mapping_of(isa);
  std::set<std::string> names;
  for (const auto& k : kernels) {
    if (!k.program || !k.image) throw Error(ErrorKind::Internal, "emit_c: a kernel without program or image");
    if (!names.insert(c_identifier(k.options.function_name.empty() ? "kernel" : k.options.function_name)).second)
      throw Error(ErrorKind::Internal, fmt::format("emit_c: two kernels named '{}'", k.options.function_name));
  }
  std::string out = fmt::format(
      "/* Generated by act for ISA {}. Build: cc -std=c11 -O2 -ffp-contract=off -c FILE.c\n"
      "   (the kernels carry their CPU features as target attributes; see act/native/emit_c.hpp). */\n",
      isa.name);
  out += mapping.prologue;
  out += "\n#include <stddef.h>\n\n";
  out += "/* No contraction of a multiply and a later add into one rounding: the ISA rounds both. */\n";
  out += "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"fp-contract=off\")\n#endif\n\n";
  out += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (const auto& k : kernels) out += emit_c_detail::emit_kernel(k, isa);
  out += "#ifdef __cplusplus\n}\n#endif\n";
  return out;
}

inline std::string emit_c(const sim::Program& program, const isa::IsaView& isa, const sim::KernelImage& image,
                          const CEmitOptions& options = {}) {
  const CKernel kernel{&program, &image, options};
  return emit_c(std::span<const CKernel>(&kernel, 1), isa);
}

}  // namespace act::native
