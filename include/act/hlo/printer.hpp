// hlo::Module -> XLA's text form. The output re-parses (parse_module) to a structurally equal
// module, whatever dialect the module was read from:
//   HloModule header (entry_computation_layout when the module had one, other module attributes
//   verbatim), computations callees-first with program shapes, `%` names, `ROOT`, shapes with
//   layouts where the module had them, typed attributes in XLA's per-opcode order, then the
//   called computations, then raw attributes verbatim. Metadata is not kept, so not printed.
// Constants print all their values (XLA would elide more than 10 as `{...}`); only constants
// that were elided in the input print as `{...}`.
#pragma once

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "act/core/literal.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/module.hpp"

namespace act::hlo {

// `{1,0:T(8,128)(2,1)E(4)}`; empty when there is nothing to print.
inline std::string print_layout(const Shape& shape) {
  if (!shape.has_layout) return {};
  const Layout& l = shape.layout;
  std::string props;
  std::string_view other = l.other_properties;
  if (other.substr(0, 2) == "D(") {  // dim-level types come before tiles
    int depth = 0;
    std::size_t end = 0;
    for (std::size_t j = 1; j < other.size(); ++j) {
      if (other[j] == '(') ++depth;
      else if (other[j] == ')' && --depth == 0) {
        end = j + 1;
        break;
      }
    }
    props += std::string(other.substr(0, end));
    other.remove_prefix(end);
  }
  if (!l.tiles.empty()) {
    props += "T";
    for (const auto& t : l.tiles) {
      props += "(";
      for (std::size_t i = 0; i < t.dims.size(); ++i) {
        if (i) props += ",";
        props += t.dims[i] == Tile::kCombineDimension ? std::string("*") : std::to_string(t.dims[i]);
      }
      props += ")";
    }
  }
  props += std::string(other);
  if (l.minor_to_major.empty() && props.empty()) return {};
  std::string out = fmt::format("{{{}", fmt::join(l.minor_to_major, ","));
  if (!props.empty()) out += ":" + props;
  return out + "}";
}

inline std::string print_shape(const Shape& shape, bool with_layout = true) {
  if (shape.is_tuple) {
    std::string out = "(";
    for (std::size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (i) out += ", ";
      out += print_shape(shape.tuple_shapes[i], with_layout);
    }
    return out + ")";
  }
  std::string out = fmt::format("{}[", name(shape.dtype));
  for (std::size_t i = 0; i < shape.dims.size(); ++i) {
    if (i) out += ",";
    const DimKind k = shape.dim_kinds.empty() ? DimKind::Static : shape.dim_kinds[i];
    if (k == DimKind::Unbounded || shape.dims[i] < 0) out += "?";
    else if (k == DimKind::Bounded) out += fmt::format("<={}", shape.dims[i]);
    else out += std::to_string(shape.dims[i]);
  }
  out += "]";
  if (with_layout) out += print_layout(shape);
  return out;
}

namespace printer_detail {

inline std::string element(const Literal& l, std::int64_t i) {
  const DType t = l.dtype();
  if (t == DType::pred) return l.get_bits(i) ? "true" : "false";
  if (is_float(t)) {
    const double v = l.get_float(i);
    if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (t == DType::f64) return fmt::format("{}", v);
    return fmt::format("{}", static_cast<float>(v));  // shortest text that reads back to the same value
  }
  if (is_signed_integer(t)) return std::to_string(l.get_int(i));
  return std::to_string(l.get_bits(i));
}

inline void nested(const Literal& l, std::size_t level, std::int64_t& next, std::string& out) {
  const auto& dims = l.shape().dims;
  out += "{";
  for (std::int64_t k = 0; k < dims[level]; ++k) {
    if (k) out += ", ";
    if (level + 1 < dims.size()) nested(l, level + 1, next, out);
    else out += element(l, next++);
  }
  out += "}";
}

inline std::string literal(const Instruction& inst) {
  if (!inst.literal) return inst.literal_text;
  const Literal& l = *inst.literal;
  if (l.elided) return "{...}";
  if (l.shape().dims.empty()) return element(l, 0);
  std::string out;
  std::int64_t next = 0;
  nested(l, 0, next, out);
  return out;
}

inline const char* direction_name(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::EQ: return "EQ";
    case ComparisonDirection::NE: return "NE";
    case ComparisonDirection::GE: return "GE";
    case ComparisonDirection::GT: return "GT";
    case ComparisonDirection::LE: return "LE";
    case ComparisonDirection::LT: return "LT";
  }
  return "EQ";
}

inline std::string int_list(const std::vector<std::int64_t>& v) { return fmt::format("{{{}}}", fmt::join(v, ",")); }

// Typed attributes in XLA's order for the opcode, then called computations, then raw ones.
inline std::string attributes(const Module& module, const Instruction& inst) {
  std::vector<std::string> a;
  const Opcode op = inst.opcode;
  const bool always_dimensions = op == Opcode::Broadcast || op == Opcode::Transpose || op == Opcode::Reduce ||
                                 op == Opcode::Reverse || op == Opcode::Concatenate;
  if (!inst.dimensions.empty() || always_dimensions) a.push_back("dimensions=" + int_list(inst.dimensions));
  switch (op) {
    case Opcode::Iota: a.push_back(fmt::format("iota_dimension={}", inst.iota_dimension)); break;
    case Opcode::GetTupleElement: a.push_back(fmt::format("index={}", inst.tuple_index)); break;
    case Opcode::Compare:
      if (inst.comparison_direction) a.push_back(fmt::format("direction={}", direction_name(*inst.comparison_direction)));
      if (!inst.comparison_type.empty()) a.push_back("type=" + inst.comparison_type);
      break;
    case Opcode::Slice: {
      bool strided = false;
      for (const auto& r : inst.slice) strided = strided || r.stride != 1;
      std::vector<std::string> ranges;
      for (const auto& r : inst.slice)
        ranges.push_back(strided ? fmt::format("[{}:{}:{}]", r.start, r.limit, r.stride)
                                 : fmt::format("[{}:{}]", r.start, r.limit));
      a.push_back(fmt::format("slice={{{}}}", fmt::join(ranges, ", ")));
      break;
    }
    case Opcode::DynamicSlice: a.push_back("dynamic_slice_sizes=" + int_list(inst.dynamic_slice_sizes)); break;
    case Opcode::Pad: {
      std::vector<std::string> groups;
      for (const auto& p : inst.padding)
        groups.push_back(p.interior ? fmt::format("{}_{}_{}", p.low, p.high, p.interior)
                                    : fmt::format("{}_{}", p.low, p.high));
      a.push_back("padding=" + fmt::format("{}", fmt::join(groups, "x")));
      break;
    }
    case Opcode::Dot:
      if (!inst.dot.lhs_batch.empty()) a.push_back("lhs_batch_dims=" + int_list(inst.dot.lhs_batch));
      a.push_back("lhs_contracting_dims=" + int_list(inst.dot.lhs_contracting));
      if (!inst.dot.rhs_batch.empty()) a.push_back("rhs_batch_dims=" + int_list(inst.dot.rhs_batch));
      a.push_back("rhs_contracting_dims=" + int_list(inst.dot.rhs_contracting));
      break;
    default: break;
  }
  for (std::size_t i = 0; i < inst.called_computations.size();) {
    const std::string& attribute = inst.called_computation_attributes[i];
    const bool is_list = attribute == "branch_computations" || attribute == "called_computations";
    std::vector<std::string> names;
    std::size_t j = i;
    do names.push_back("%" + module.computations.at(static_cast<std::size_t>(inst.called_computations[j++])).name);
    while (is_list && j < inst.called_computations.size() && inst.called_computation_attributes[j] == attribute);
    a.push_back(is_list ? fmt::format("{}={{{}}}", attribute, fmt::join(names, ", "))
                        : fmt::format("{}={}", attribute, names[0]));
    i = j;
  }
  for (const auto& r : inst.raw_attributes) a.push_back(r.name + "=" + r.value);
  std::string out;
  for (const auto& s : a) out += ", " + s;
  return out;
}

}  // namespace printer_detail

inline std::string print_instruction(const Module& module, const Computation& c, const Instruction& inst) {
  std::string out = fmt::format("%{} = {} {}(", inst.name, print_shape(inst.shape), opcode_name(inst.opcode));
  if (inst.opcode == Opcode::Parameter) {
    out += std::to_string(inst.parameter_number);
  } else if (inst.opcode == Opcode::Constant) {
    out += printer_detail::literal(inst);
  } else {
    for (std::size_t i = 0; i < inst.operands.size(); ++i) {
      if (i) out += ", ";
      out += "%" + c.instructions.at(static_cast<std::size_t>(inst.operands[i])).name;
    }
  }
  return out + ")" + printer_detail::attributes(module, inst);
}

inline std::string print_computation(const Module& module, const Computation& c) {
  std::string out = c.is_entry ? "ENTRY " : "";
  std::vector<std::string> params;
  for (const int p : c.parameters) {
    const Instruction& inst = c.instructions.at(static_cast<std::size_t>(p));
    params.push_back(fmt::format("{}: {}", inst.name, print_shape(inst.shape, false)));
  }
  out += fmt::format("%{} ({}) -> {} {{\n", c.name, fmt::join(params, ", "), print_shape(c.root_instruction().shape, false));
  for (std::size_t i = 0; i < c.instructions.size(); ++i) {
    out += static_cast<int>(i) == c.root ? "  ROOT " : "  ";
    out += print_instruction(module, c, c.instructions[i]) + "\n";
  }
  return out + "}\n";
}

inline std::string print_module(const Module& module) {
  std::string out = "HloModule " + module.name;
  // Raw attributes keep their order; entry_computation_layout goes where XLA puts it: after
  // is_scheduled and the aliasing attributes.
  auto is_early = [](const RawAttribute& r) {
    return r.name == "is_scheduled" || r.name == "input_output_alias" || r.name == "buffer_donor" ||
           r.name == "alias_passthrough_params";
  };
  bool layout_printed = !(module.entry_parameter_layouts && module.entry_result_layout);
  auto print_layout_attribute = [&] {
    std::vector<std::string> params;
    for (const auto& s : *module.entry_parameter_layouts) params.push_back(print_shape(s));
    out += fmt::format(", entry_computation_layout={{({})->{}}}", fmt::join(params, ", "),
                       print_shape(*module.entry_result_layout));
    layout_printed = true;
  };
  for (const auto& r : module.raw_attributes) {
    if (!layout_printed && !is_early(r)) print_layout_attribute();
    out += ", " + r.name + "=" + r.value;
  }
  if (!layout_printed) print_layout_attribute();
  out += "\n";
  for (const auto& c : module.computations) out += "\n" + print_computation(module, c);
  return out;
}

}  // namespace act::hlo
