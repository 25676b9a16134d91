// The HBM image of a kernel (DESIGN.md "HBM image of a kernel"): the inputs byte-flattened in
// parameter order from address 0, each under its layout; then the output (tuple elements in
// order); then the constant pool. HBM beyond the pool is scratch.
// Every region, and the constant pool, starts at a multiple of ImageOptions::alignment (64 bytes
// by default: a region packed right after a 352-byte one straddles cache lines, which halved
// K3's native speed; docs/design-decisions.md). Alignment 1 packs regions back to back.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/layout.hpp"
#include "act/core/literal.hpp"
#include "act/hlo/module.hpp"

namespace act::sim {

// One array of the kernel in HBM.
struct HbmRegion {
  std::string name;         // parameter or output instruction name
  Shape shape;              // dtype, dims and the layout it is stored under
  std::int64_t address = 0;
  std::int64_t bytes = 0;   // physical size (tiling padding included)
  std::int64_t end() const { return address + bytes; }
};

struct ImageOptions {
  std::int64_t alignment = 64;  // bytes, a power of two
};

struct KernelImage {
  std::vector<HbmRegion> inputs;   // by parameter number
  std::vector<HbmRegion> outputs;  // one per result (tuple elements in order)
  std::int64_t constant_pool_address = 0;  // first aligned byte after the outputs
  std::int64_t alignment = 1;              // of every region start (ImageOptions::alignment)

  // Comment lines for an assembly header: "q bf16[64,64]{1,0} at 0 (8192 bytes)".
  std::vector<std::string> describe() const {
    std::vector<std::string> lines{"HBM image:"};
    auto line = [](const char* role, const HbmRegion& r) {
      return fmt::format("  {} {} {}{} at {} ({} bytes)", role, r.name, to_string(r.shape), layout_suffix(r.shape), r.address, r.bytes);
    };
    for (const auto& r : inputs) lines.push_back(line("input ", r));
    for (const auto& r : outputs) lines.push_back(line("output", r));
    lines.push_back(fmt::format("  constant pool from {}", constant_pool_address));
    lines.push_back(fmt::format("  regions aligned to {} bytes", alignment));
    return lines;
  }

 private:
  static std::string layout_suffix(const Shape& s) {
    if (s.rank() == 0) return "";
    std::string out = "{";
    const auto m2m = s.minor_to_major();
    for (std::size_t i = 0; i < m2m.size(); ++i) out += fmt::format("{}{}", i ? "," : "", m2m[i]);
    if (s.has_layout && !s.layout.tiles.empty()) {
      out += ":";
      for (const auto& t : s.layout.tiles) {
        out += "T(";
        for (std::size_t i = 0; i < t.dims.size(); ++i) {
          if (i) out += ",";
          out += t.dims[i] == Tile::kCombineDimension ? std::string("*") : std::to_string(t.dims[i]);
        }
        out += ")";
      }
    }
    return out + "}";
  }
};

namespace kernel_image_detail {

// The parameter's shape with the layout of entry_computation_layout when the module gives one.
inline Shape with_layout(const Shape& declared, const Shape* layout) {
  if (!layout || layout->is_tuple || !layout->same_type(declared) || !layout->has_layout) return declared;
  return *layout;
}

inline void check_storable(const Shape& s, std::string_view what) {
  if (s.is_tuple) throw Error(ErrorKind::Unsupported, fmt::format("{} is a nested tuple; HBM holds arrays only", what));
  if (!is_computable(s.dtype))
    throw Error(ErrorKind::Unsupported, fmt::format("{} has element type {}, which act cannot store or compute", what, name(s.dtype)));
}

}  // namespace kernel_image_detail

inline KernelImage kernel_image(const hlo::Module& kernel, const ImageOptions& options = {}) {
  const std::int64_t alignment = options.alignment;
  if (alignment < 1 || (alignment & (alignment - 1)) != 0 || alignment > (std::int64_t{1} << 30))
    throw Error(ErrorKind::Shape, fmt::format("HBM alignment must be a power of two from 1 to 2^30, got {}", alignment));
  if (kernel.entry < 0 || kernel.entry >= static_cast<int>(kernel.computations.size()))
    throw Error(ErrorKind::Shape, "the module has no ENTRY computation");
  const hlo::Computation& entry = kernel.entry_computation();
  KernelImage image;
  image.alignment = alignment;
  std::int64_t address = 0;
  auto align = [&] {
    if (__builtin_add_overflow(address, alignment - 1, &address)) throw Error(ErrorKind::Shape, "the kernel's HBM image is too large");
    address &= ~(alignment - 1);
  };
  auto place = [&](std::string name, Shape shape) {
    align();
    HbmRegion r{std::move(name), std::move(shape), address, 0};
    r.bytes = physical_byte_size(r.shape);
    if (__builtin_add_overflow(address, r.bytes, &address)) throw Error(ErrorKind::Shape, "the kernel's HBM image is too large");
    return r;
  };
  for (std::size_t p = 0; p < entry.parameters.size(); ++p) {
    const int index = entry.parameters[p];
    if (index < 0 || index >= static_cast<int>(entry.instructions.size()))
      throw Error(ErrorKind::Shape, fmt::format("parameter({}) is missing from the ENTRY computation", p));
    const hlo::Instruction& param = entry.instructions[static_cast<std::size_t>(index)];
    const Shape* layout = nullptr;
    if (kernel.entry_parameter_layouts && p < kernel.entry_parameter_layouts->size()) layout = &(*kernel.entry_parameter_layouts)[p];
    Shape shape = kernel_image_detail::with_layout(param.shape, layout);
    kernel_image_detail::check_storable(shape, fmt::format("parameter '{}'", param.name));
    image.inputs.push_back(place(param.name, std::move(shape)));
  }
  if (entry.root < 0 || entry.root >= static_cast<int>(entry.instructions.size()))
    throw Error(ErrorKind::Shape, "the ENTRY computation has no ROOT");
  const hlo::Instruction& root = entry.root_instruction();
  const Shape* result_layout = kernel.entry_result_layout ? &*kernel.entry_result_layout : nullptr;
  if (root.shape.is_tuple) {
    for (std::size_t i = 0; i < root.shape.tuple_shapes.size(); ++i) {
      const Shape* layout = result_layout && result_layout->is_tuple && i < result_layout->tuple_shapes.size()
                                ? &result_layout->tuple_shapes[i] : nullptr;
      Shape element = root.shape.tuple_shapes[i];
      std::string name = fmt::format("{}.{}", root.name, i);
      if (root.opcode == hlo::Opcode::Tuple && i < root.operands.size() && root.operands[i] >= 0 &&
          root.operands[i] < static_cast<int>(entry.instructions.size())) {
        const hlo::Instruction& operand = entry.instructions[static_cast<std::size_t>(root.operands[i])];
        name = operand.name;
        // A tuple written without its shape gets it from the operands; keep their layouts.
        if (!element.has_layout && operand.shape.same_type(element)) element = operand.shape;
      }
      Shape shape = kernel_image_detail::with_layout(element, layout);
      kernel_image_detail::check_storable(shape, fmt::format("output '{}'", name));
      image.outputs.push_back(place(std::move(name), std::move(shape)));
    }
  } else {
    Shape shape = kernel_image_detail::with_layout(root.shape, result_layout);
    kernel_image_detail::check_storable(shape, fmt::format("output '{}'", root.name));
    image.outputs.push_back(place(root.name, std::move(shape)));
  }
  align();
  image.constant_pool_address = address;
  return image;
}

// Writes the kernel's inputs into `hbm` under their layouts.
inline void write_inputs(const KernelImage& image, std::span<const Literal> inputs, std::span<std::uint8_t> hbm) {
  if (inputs.size() != image.inputs.size())
    throw Error(ErrorKind::Shape, fmt::format("the kernel takes {} inputs, got {}", image.inputs.size(), inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const HbmRegion& r = image.inputs[i];
    if (r.end() > static_cast<std::int64_t>(hbm.size()))
      throw Error(ErrorKind::Execution, fmt::format("input '{}' at {}..{} does not fit in HBM of {} bytes", r.name, r.address, r.end(), hbm.size()));
    const auto bytes = to_physical_bytes(inputs[i], r.shape);
    std::copy(bytes.begin(), bytes.end(), hbm.begin() + r.address);
  }
}

// Reads the kernel's outputs back from `hbm` (one literal per output region).
inline std::vector<Literal> read_outputs(const KernelImage& image, std::span<const std::uint8_t> hbm) {
  std::vector<Literal> out;
  for (const auto& r : image.outputs) {
    if (r.end() > static_cast<std::int64_t>(hbm.size()))
      throw Error(ErrorKind::Execution, fmt::format("output '{}' at {}..{} does not fit in HBM of {} bytes", r.name, r.address, r.end(), hbm.size()));
    out.push_back(from_physical_bytes(r.shape, hbm.subspan(static_cast<std::size_t>(r.address), static_cast<std::size_t>(r.bytes))));
  }
  return out;
}

}  // namespace act::sim
