// A compiled program in the three forms `act compile --format` offers (DESIGN.md "Assembly text"):
//   text    the assembly (assembly.hpp), preceded by comments giving the HBM regions
//   json    {"isa", "kernel", "hbm": {"size", "inputs", "outputs", "constant_pool", "alignment"},
//            "instructions": [{"name", "attributes": {alpha..., beta...}}], "constants": [...]}
//   python  the kernel file TAIDL test oracles run (reference/isa_facts.md §4):
//             def <kernel>(kernel, api):
//                 @kernel(hbm=N, input=[{'addr': A, 'shape': (64, 64), 'dtype': jnp.bfloat16}, ...],
//                         constant=[...], output=[...])
//                 def <kernel>_():
//                     api.load_rm(n = 64, addr_in = 0, addr_out = 64)
//                 return <kernel>_
//           hbm is the end of the highest HBM byte the program touches (image, constants and
//           any HBM slice an instruction reads or writes). A constant block is listed as
//           {'addr': A, 'shape': (bytes,), 'dtype': jnp.uint8, 'value': jnp.frombuffer(bytes.fromhex('..'), dtype=jnp.uint8)}.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/core/dtype.hpp"
#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sym/expr.hpp"

namespace act::sim {

enum class ProgramFormat { Text, Json, Python };

// "text" | "json" | "python"; nothing for anything else.
inline std::optional<ProgramFormat> parse_program_format(std::string_view name) {
  if (name == "text") return ProgramFormat::Text;
  if (name == "json") return ProgramFormat::Json;
  if (name == "python") return ProgramFormat::Python;
  return std::nullopt;
}

struct ProgramFormatOptions {
  bool hex = false;            // text: attribute values as 0x..
  std::string kernel_name;     // python: the function name; json: "kernel" (default "kernel")
  std::string source;          // the input file, for header comments (optional)
  std::vector<std::string> extra_header;  // text/python: more comment lines (e.g. cost)
};

namespace formats_detail {

inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else out += c;
    }
  }
  return out + "\"";
}

inline std::string hex_bytes(const std::vector<std::uint8_t>& bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

// A Python identifier from a kernel name ("my-kernel.1" -> "my_kernel_1"). A keyword gets a
// trailing '_' (PEP 8's convention: `class` -> `class_`), and so does `jnp`, which the
// function would otherwise shadow at module level.
inline std::string python_identifier(std::string_view name) {
  static constexpr std::string_view kReserved[] = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
      "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
      "pass", "raise", "return", "try", "while", "with", "yield", "jnp"};
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 0x80) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "kernel_" + out;
  if (std::find(std::begin(kReserved), std::end(kReserved), out) != std::end(kReserved)) out += '_';
  return out;
}

inline std::string jnp_dtype(DType t) {
  switch (t) {
    case DType::pred: return "jnp.bool_";
    case DType::s8: return "jnp.int8";
    case DType::s16: return "jnp.int16";
    case DType::s32: return "jnp.int32";
    case DType::s64: return "jnp.int64";
    case DType::u8: return "jnp.uint8";
    case DType::u16: return "jnp.uint16";
    case DType::u32: return "jnp.uint32";
    case DType::u64: return "jnp.uint64";
    case DType::f16: return "jnp.float16";
    case DType::bf16: return "jnp.bfloat16";
    case DType::f32: return "jnp.float32";
    case DType::f64: return "jnp.float64";
    default: return fmt::format("'{}'", name(t));
  }
}

inline std::string python_shape(const std::vector<std::int64_t>& dims) {
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

inline const isa::Instruction& instruction_of(const ConcreteInstruction& ci, const isa::IsaView& isa) {
  const isa::Instruction* instruction = isa.find_instruction(ci.name);
  if (!instruction) throw Error(ErrorKind::Isa, fmt::format("unknown instruction '{}' in ISA {}", ci.name, isa.name));
  if (attribute_names(*instruction).size() != ci.attributes.size())
    throw Error(ErrorKind::Isa, fmt::format("'{}' takes {} attributes, the program gives {}", ci.name,
                                            attribute_names(*instruction).size(), ci.attributes.size()));
  return *instruction;
}

}  // namespace formats_detail

// One past the highest HBM byte the program touches: the kernel image, the constant pool and
// every HBM slice an instruction reads or writes (evaluated from the ISA's address maps).
inline std::int64_t hbm_extent(const Program& program, const isa::IsaView& isa, const KernelImage& image) {
  std::int64_t end = image.constant_pool_address;
  for (const auto& c : program.constants) end = std::max(end, c.address + static_cast<std::int64_t>(c.bytes.size()));
  for (const auto& ci : program.instructions) {
    const isa::Instruction& instruction = formats_detail::instruction_of(ci, isa);
    sym::Bindings env;
    const auto names = attribute_names(instruction);
    for (std::size_t k = 0; k < names.size(); ++k) env.set(names[k], ci.attributes[k]);
    auto visit = [&](const isa::SliceMap& map) {
      const isa::Buffer* buffer = isa.find_buffer(map.buffer);
      if (!buffer || !buffer->is_hbm || map.start.empty() || map.length.empty()) return;
      const auto start = sym::try_evaluate(sym::try_parse(map.start[0]).expr, env);
      const auto length = sym::try_evaluate(sym::try_parse(map.length[0]).expr, env);
      if (start.ok() && length.ok()) end = std::max(end, start.value + length.value);
    };
    for (const auto& m : instruction.inputs) visit(m);
    for (const auto& m : instruction.outputs) visit(m);
  }
  return end;
}

inline std::string format_text(const Program& program, const isa::IsaView& isa, const KernelImage& image,
                               const ProgramFormatOptions& options = {}) {
  PrintOptions print;
  print.hex = options.hex;
  print.header.push_back(fmt::format("act: {} for ISA {}{}", options.kernel_name.empty() ? "kernel" : options.kernel_name,
                                     isa.name, options.source.empty() ? "" : fmt::format(" (from {})", options.source)));
  for (const auto& line : image.describe()) print.header.push_back(line);
  for (const auto& line : options.extra_header) print.header.push_back(line);
  return print_program(program, isa, print);
}

inline std::string format_json(const Program& program, const isa::IsaView& isa, const KernelImage& image,
                               const ProgramFormatOptions& options = {}) {
  using formats_detail::json_string;
  auto region = [](const HbmRegion& r) {
    return fmt::format("{{\"name\": {}, \"dtype\": \"{}\", \"dims\": [{}], \"address\": {}, \"bytes\": {}}}", json_string(r.name),
                       name(r.shape.dtype), fmt::join(r.shape.dims, ", "), r.address, r.bytes);
  };
  std::string out = "{\n";
  out += fmt::format("  \"isa\": {},\n  \"kernel\": {},\n", json_string(isa.name),
                     json_string(options.kernel_name.empty() ? "kernel" : options.kernel_name));
  out += fmt::format("  \"hbm\": {{\n    \"size\": {},\n    \"inputs\": [", hbm_extent(program, isa, image));
  for (std::size_t i = 0; i < image.inputs.size(); ++i) out += fmt::format("{}\n      {}", i ? "," : "", region(image.inputs[i]));
  out += "\n    ],\n    \"outputs\": [";
  for (std::size_t i = 0; i < image.outputs.size(); ++i) out += fmt::format("{}\n      {}", i ? "," : "", region(image.outputs[i]));
  out += fmt::format("\n    ],\n    \"constant_pool\": {},\n    \"alignment\": {}\n  }},\n  \"instructions\": [", image.constant_pool_address,
                     image.alignment);
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    const auto& ci = program.instructions[i];
    const auto names = attribute_names(formats_detail::instruction_of(ci, isa));
    std::string attributes;
    for (std::size_t k = 0; k < names.size(); ++k) attributes += fmt::format("{}{}: {}", k ? ", " : "", json_string(names[k]), ci.attributes[k]);
    out += fmt::format("{}\n    {{\"name\": {}, \"attributes\": {{{}}}}}", i ? "," : "", json_string(ci.name), attributes);
  }
  out += "\n  ],\n  \"constants\": [";
  for (std::size_t i = 0; i < program.constants.size(); ++i)
    out += fmt::format("{}\n    {{\"address\": {}, \"bytes\": \"{}\"}}", i ? "," : "", program.constants[i].address,
                       formats_detail::hex_bytes(program.constants[i].bytes));
  out += "\n  ]\n}\n";
  return out;
}

inline std::string format_python(const Program& program, const isa::IsaView& isa, const KernelImage& image,
                                 const ProgramFormatOptions& options = {}) {
  const std::string fn = formats_detail::python_identifier(options.kernel_name.empty() ? "kernel" : options.kernel_name);
  auto region = [](const HbmRegion& r) {
    return fmt::format("{{'addr': {}, 'shape': {}, 'dtype': {}}}", r.address, formats_detail::python_shape(r.shape.dims),
                       formats_detail::jnp_dtype(r.shape.dtype));
  };
  std::string out;
  if (!options.source.empty()) out += fmt::format("# Input file: {}\n", comment_text(options.source));
  out += fmt::format("# Kernel name: {}\n# ISA: {}\n# HBM regions aligned to {} bytes\n", fn, comment_text(isa.name), image.alignment);
  for (const auto& line : options.extra_header) out += fmt::format("# {}\n", comment_text(line));
  out += "# Do not edit!\n\nimport jax.numpy as jnp\n\n\n";
  out += fmt::format("def {}(kernel, api):\n", fn);
  out += fmt::format("    @kernel(hbm={},\n            input=[\n", hbm_extent(program, isa, image));
  for (const auto& r : image.inputs) out += fmt::format("                {},\n", region(r));
  out += "            ],\n            constant=[";
  if (!program.constants.empty()) out += "\n";
  for (const auto& c : program.constants)
    out += fmt::format("                {{'addr': {}, 'shape': ({},), 'dtype': jnp.uint8, "
                       "'value': jnp.frombuffer(bytes.fromhex('{}'), dtype=jnp.uint8)}},\n",
                       c.address, c.bytes.size(), formats_detail::hex_bytes(c.bytes));
  out += program.constants.empty() ? "],\n" : "            ],\n";
  out += "            output=[\n";
  for (const auto& r : image.outputs) out += fmt::format("                {},\n", region(r));
  out += "            ]\n            )\n";
  out += fmt::format("    def {}_():\n", fn);
  if (program.instructions.empty()) out += "        pass\n";
  for (const auto& ci : program.instructions) {
    const auto names = attribute_names(formats_detail::instruction_of(ci, isa));
    std::string attributes;
    for (std::size_t k = 0; k < names.size(); ++k) attributes += fmt::format("{}{} = {}", k ? ", " : "", names[k], ci.attributes[k]);
    out += fmt::format("        api.{}({})\n", ci.name, attributes);
  }
  out += fmt::format("\n    return {}_\n", fn);
  return out;
}

inline std::string format_program(ProgramFormat format, const Program& program, const isa::IsaView& isa,
                                  const KernelImage& image, const ProgramFormatOptions& options = {}) {
  switch (format) {
    case ProgramFormat::Text: return format_text(program, isa, image, options);
    case ProgramFormat::Json: return format_json(program, isa, image, options);
    case ProgramFormat::Python: return format_python(program, isa, image, options);
  }
  throw Error(ErrorKind::Internal, "unknown program format");
}

}  // namespace act::sim
