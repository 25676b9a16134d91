// The functional simulator's machine: one byte array per ISA buffer plus the state registers,
// and the execution of one concrete instruction (paper, Def. "Execution of a Concrete
// Instruction"): bind the attributes, check the validity constraints, slice every input out of
// its buffer, run the semantics with alpha substituted, write the result into the output
// slice, apply the state updates. Every failure is an act::Error naming the instruction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/core/random.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sym/expr.hpp"

namespace act::sim {

struct MachineOptions {
  // HBM size in bytes; default: the size the ISA declares.
  std::optional<std::int64_t> hbm_bytes;
  // Refuse to allocate a buffer larger than this (an ISA may declare a huge address space).
  std::int64_t max_buffer_bytes = std::int64_t{1} << 30;
};

// "load_rm(n = 64, addr_in = 0, addr_out = 0)"
inline std::string describe(const ConcreteInstruction& ci, const isa::Instruction* instruction) {
  std::string out = ci.name + "(";
  std::vector<std::string_view> names;
  if (instruction) names = attribute_names(*instruction);
  for (std::size_t k = 0; k < ci.attributes.size(); ++k)
    out += fmt::format("{}{} = {}", k ? ", " : "", k < names.size() ? names[k] : std::string_view("?"), ci.attributes[k]);
  return out + ")";
}

class Machine {
 public:
  explicit Machine(isa::IsaView isa, MachineOptions options = {}) : isa_(isa), options_(options) {
    for (const auto& b : isa_.buffers) {
      Shape s = buffer_shape(b);
      if (b.is_hbm && options_.hbm_bytes) s.dims = {*options_.hbm_bytes};
      std::int64_t bytes = byte_width(s.dtype);
      for (auto d : s.dims)
        if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes)) bytes = -1;
      if (bytes < 0 || bytes > options_.max_buffer_bytes)
        throw Error(ErrorKind::Unsupported, fmt::format("buffer '{}' of ISA {} ({}) is too large to simulate (limit {} bytes)",
                                                        b.name, isa_.name, to_string(s), options_.max_buffer_bytes));
      shapes_.push_back(std::move(s));
      memory_.emplace_back(static_cast<std::size_t>(bytes), std::uint8_t{0});
    }
    for (const auto& r : isa_.state) state_.push_back(r.initial);
    prepared_.resize(isa_.instructions.size());
  }

  const isa::IsaView& isa() const { return isa_; }

  // Every buffer zero, every state register at its initial value.
  void reset() {
    for (auto& m : memory_) std::fill(m.begin(), m.end(), std::uint8_t{0});
    for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = isa_.state[i].initial;
  }

  // Every buffer filled with bytes from `random`, every state register at its initial value:
  // a program that reads a byte it never wrote (an accumulator it forgot to zero) computes
  // garbage instead of getting zeros for free. The ISA defines the registers' initial values.
  void randomize(SplitMix64& random) {
    for (auto& m : memory_) {
      std::size_t i = 0;
      for (; i + 8 <= m.size(); i += 8) {
        const std::uint64_t word = random.next();
        std::memcpy(m.data() + i, &word, 8);
      }
      for (std::uint64_t word = random.next(); i < m.size(); ++i, word >>= 8) m[i] = static_cast<std::uint8_t>(word);
    }
    for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = isa_.state[i].initial;
  }

  // The buffer as a tensor: access dims then unit dims (HBM: u8[size]).
  const Shape& buffer_shape(int buffer) const { return shapes_.at(static_cast<std::size_t>(buffer)); }
  std::span<std::uint8_t> bytes(int buffer) { return memory_.at(static_cast<std::size_t>(buffer)); }
  std::span<const std::uint8_t> bytes(int buffer) const { return memory_.at(static_cast<std::size_t>(buffer)); }
  std::span<std::uint8_t> bytes(std::string_view buffer) { return bytes(checked_buffer_index(buffer)); }
  std::span<std::uint8_t> hbm() { return bytes(hbm_index()); }
  std::span<const std::uint8_t> hbm() const { return bytes(hbm_index()); }

  std::int64_t state(std::string_view name) const {
    for (std::size_t i = 0; i < state_.size(); ++i)
      if (isa_.state[i].name == name) return state_[i];
    throw Error(ErrorKind::Isa, fmt::format("ISA {} has no state register '{}'", isa_.name, name));
  }

  // Writes the constant pool into HBM.
  void load_constants(std::span<const ConstantBlock> constants) {
    auto memory = hbm();
    for (const auto& block : constants) {
      const auto size = static_cast<std::int64_t>(block.bytes.size());
      if (block.address < 0 || block.address > static_cast<std::int64_t>(memory.size()) - size)
        throw Error(ErrorKind::Execution, fmt::format("constant block at {} ({} bytes) lies outside HBM of {} bytes",
                                                      block.address, size, memory.size()));
      std::copy(block.bytes.begin(), block.bytes.end(), memory.begin() + block.address);
    }
  }

  // Loads the constant pool, then executes every instruction in order.
  void run(const Program& program) {
    load_constants(program.constants);
    for (const auto& ci : program.instructions) execute(ci);
  }

  // Reads buffer[start : start + length] (per access dim) as a literal of shape
  // lengths ++ unit dims, or throws Execution naming `context` when out of range.
  Literal read_slice(int buffer, std::span<const std::int64_t> start, std::span<const std::int64_t> length,
                     std::string_view context = "") const {
    const Shape shape = slice_shape(buffer, start, length, context);
    Literal out(shape);
    const std::uint8_t* memory = memory_[static_cast<std::size_t>(buffer)].data();
    std::uint8_t* dense = out.bytes().data();
    for_each_run(buffer, start, length, [&](std::size_t at, std::size_t d, std::size_t n) { std::memcpy(dense + d, memory + at, n); });
    return out;
  }
  void write_slice(int buffer, std::span<const std::int64_t> start, std::span<const std::int64_t> length,
                   const Literal& value, std::string_view context = "") {
    const Shape shape = slice_shape(buffer, start, length, context);
    if (value.is_tuple() || !value.shape().same_type(shape))
      throw Error(ErrorKind::Isa, fmt::format("{}{}a value of {} does not fit the slice {}", context, context.empty() ? "" : ": ",
                                              to_string(value.shape()), to_string(shape)));
    std::uint8_t* memory = memory_[static_cast<std::size_t>(buffer)].data();
    const std::uint8_t* dense = value.bytes().data();
    for_each_run(buffer, start, length, [&](std::size_t at, std::size_t d, std::size_t n) { std::memcpy(memory + at, dense + d, n); });
  }

  // Executes one concrete instruction.
  void execute(const ConcreteInstruction& ci) {
    const int index = instruction_index(ci);
    const isa::Instruction& instruction = isa_.instructions[static_cast<std::size_t>(index)];
    const Prepared& prepared = prepare(index);
    const std::string who = describe(ci, &instruction);
    if (ci.attributes.size() != prepared.names.size())
      throw Error(ErrorKind::Execution, fmt::format("{}: '{}' takes {} attributes, got {}", who, ci.name, prepared.names.size(),
                                                    ci.attributes.size()), ci.location);
    auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
      for (std::size_t k = 0; k < prepared.names.size(); ++k)
        if (prepared.names[k] == name) return ci.attributes[k];
      for (std::size_t k = 0; k < state_.size(); ++k)
        if (isa_.state[k].name == name) return state_[k];
      return std::nullopt;
    };
    auto eval = [&](const sym::Expr& e, std::string_view text, std::string_view role) {
      const auto r = sym::try_evaluate(e, env);
      if (!r.ok())
        throw Error(ErrorKind::Execution, fmt::format("{}: cannot evaluate {} '{}': {}{}", who, role, text, r.error,
                                                      r.error_name.empty() ? "" : fmt::format(" '{}'", r.error_name)),
                    ci.location);
      return r.value;
    };

    for (std::size_t c = 0; c < prepared.constraints.size(); ++c)
      if (eval(prepared.constraints[c], instruction.constraints[c], "constraint") == 0)
        throw Error(ErrorKind::Execution, fmt::format("{}: violates the constraint '{}'", who, instruction.constraints[c]), ci.location);

    // Slices: evaluate every address first, then read (inputs before any output is written).
    auto addresses = [&](const PreparedSlice& s, const isa::SliceMap& map, std::string_view role) {
      std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> a;
      for (std::size_t d = 0; d < s.start.size(); ++d) {
        a.first.push_back(eval(s.start[d], map.start[d], fmt::format("{} start", role)));
        a.second.push_back(eval(s.length[d], map.length[d], fmt::format("{} length", role)));
      }
      return a;
    };
    if (prepared.outputs.empty()) {  // a configuration instruction (Gemmini's dataflow_config): state only
      apply_updates(prepared, instruction, eval);
      return;
    }
    std::vector<Literal> inputs;
    for (std::size_t i = 0; i < prepared.inputs.size(); ++i) {
      const auto role = fmt::format("input In{}", i + 1);
      const auto [start, length] = addresses(prepared.inputs[i], instruction.inputs[i], role);
      inputs.push_back(read_slice(prepared.inputs[i].buffer, start, length, fmt::format("{}: {}", who, role)));
    }
    std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> output_ranges;
    for (std::size_t o = 0; o < prepared.outputs.size(); ++o)
      output_ranges.push_back(addresses(prepared.outputs[o], instruction.outputs[o], fmt::format("output Out{}", o)));

    const Semantics& semantics = semantics_for(index, ci, who);
    for (std::size_t i = 0; i < inputs.size() && i < semantics.parameter_shapes.size(); ++i)
      if (!semantics.parameter_shapes[i].same_type(inputs[i].shape()))
        throw Error(ErrorKind::Isa, fmt::format("{}: the semantics take In{} as {}, but its data slice is {}", who, i + 1,
                                                to_string(semantics.parameter_shapes[i]), to_string(inputs[i].shape())), ci.location);
    Literal result;
    try {
      result = hlo::evaluate(semantics.module, std::span<const Literal>(inputs));
    } catch (const Error& e) {
      throw Error(e.kind(), fmt::format("{}: in its semantics: {}", who, e.what()), ci.location);
    }
    std::vector<const Literal*> results;
    if (prepared.outputs.size() == 1 && !result.is_tuple()) {
      results.push_back(&result);
    } else {
      if (!result.is_tuple() || result.elements().size() != prepared.outputs.size())
        throw Error(ErrorKind::Isa, fmt::format("{}: the semantics give {} results for {} output slices", who,
                                                result.is_tuple() ? result.elements().size() : 1, prepared.outputs.size()), ci.location);
      for (const auto& e : result.elements()) results.push_back(&e);
    }
    // Check every output before writing any, so a failing instruction changes nothing.
    std::vector<Literal> reshaped;
    reshaped.reserve(results.size());
    for (std::size_t o = 0; o < prepared.outputs.size(); ++o) {
      const auto& [start, length] = output_ranges[o];
      const Shape expected = slice_shape(prepared.outputs[o].buffer, start, length, fmt::format("{}: output Out{}", who, o));
      // Same dtype and element count: the value is stored row-major into the slice (a reshape),
      // as isa/validate.hpp accepts (e.g. load_cm's bf16[64,n] into n rows of 64).
      const Literal& r = *results[o];
      if (r.is_tuple() || r.dtype() != expected.dtype || r.element_count() != expected.element_count())
        throw Error(ErrorKind::Isa, fmt::format("{}: the semantics produce Out{} as {}, but its data slice is {}", who, o,
                                                to_string(r.shape()), to_string(expected)), ci.location);
      if (!r.shape().same_type(expected)) {
        reshaped.push_back(Literal::from_bytes(expected, r.bytes()));
        results[o] = &reshaped.back();
      }
    }
    std::vector<std::int64_t> new_state = updated_state(prepared, instruction, eval);
    for (std::size_t o = 0; o < prepared.outputs.size(); ++o)
      write_slice(prepared.outputs[o].buffer, output_ranges[o].first, output_ranges[o].second, *results[o]);
    for (std::size_t u = 0; u < prepared.updates.size(); ++u)
      state_[static_cast<std::size_t>(prepared.updates[u].state)] = new_state[u];
  }

  // Number of distinct (instruction, alpha) semantics parsed so far.
  std::size_t cached_semantics() const { return semantics_.size(); }

 private:
  struct Prepared;

  // Every update's value, read before any is written (updates see the state before the instruction).
  template <class Eval>
  static std::vector<std::int64_t> updated_state(const Prepared& prepared, const isa::Instruction& instruction, const Eval& eval) {
    std::vector<std::int64_t> values;
    for (std::size_t u = 0; u < prepared.updates.size(); ++u)
      values.push_back(eval(prepared.updates[u].value, instruction.updates[u].value, "state update"));
    return values;
  }
  template <class Eval>
  void apply_updates(const Prepared& prepared, const isa::Instruction& instruction, const Eval& eval) {
    const std::vector<std::int64_t> values = updated_state(prepared, instruction, eval);
    for (std::size_t u = 0; u < prepared.updates.size(); ++u) state_[static_cast<std::size_t>(prepared.updates[u].state)] = values[u];
  }

  struct PreparedSlice {
    int buffer = -1;
    std::vector<sym::Expr> start, length;
  };
  struct PreparedUpdate {
    int state = -1;
    sym::Expr value;
  };
  // The parsed expressions of one ISA instruction (parsed once per machine).
  struct Prepared {
    bool ready = false;
    std::vector<std::string_view> names;  // alpha then beta
    std::vector<sym::Expr> constraints;
    std::vector<PreparedSlice> inputs, outputs;
    std::vector<PreparedUpdate> updates;
  };
  struct Semantics {
    hlo::Module module;
    std::vector<Shape> parameter_shapes;  // by parameter number
  };

  static Shape buffer_shape(const isa::Buffer& b) {
    std::vector<std::int64_t> dims(b.access_dims.begin(), b.access_dims.end());
    dims.insert(dims.end(), b.unit_dims.begin(), b.unit_dims.end());
    return Shape(b.dtype, std::move(dims));
  }

  int hbm_index() const {
    for (std::size_t i = 0; i < isa_.buffers.size(); ++i)
      if (isa_.buffers[i].is_hbm) return static_cast<int>(i);
    throw Error(ErrorKind::Isa, fmt::format("ISA {} declares no HBM buffer", isa_.name));
  }
  int checked_buffer_index(std::string_view name) const {
    const int i = isa_.buffer_index(name);
    if (i < 0) throw Error(ErrorKind::Isa, fmt::format("ISA {} has no buffer '{}'", isa_.name, name));
    return i;
  }
  int instruction_index(const ConcreteInstruction& ci) const {
    for (std::size_t i = 0; i < isa_.instructions.size(); ++i)
      if (isa_.instructions[i].name == ci.name) return static_cast<int>(i);
    throw Error(ErrorKind::Execution, fmt::format("unknown instruction '{}' in ISA {}", ci.name, isa_.name), ci.location);
  }

  const Prepared& prepare(int index) {
    Prepared& p = prepared_[static_cast<std::size_t>(index)];
    if (p.ready) return p;
    const isa::Instruction& instruction = isa_.instructions[static_cast<std::size_t>(index)];
    auto parse = [&](std::string_view text, std::string_view role) {
      const auto r = sym::try_parse(text);
      if (!r.ok())
        throw Error(ErrorKind::Isa, fmt::format("instruction '{}' of ISA {}: {} '{}': {} at column {}", instruction.name, isa_.name,
                                                role, text, r.error, r.column));
      return r.expr;
    };
    auto slice = [&](const isa::SliceMap& map, std::string_view role) {
      PreparedSlice s;
      s.buffer = isa_.buffer_index(map.buffer);
      if (s.buffer < 0)
        throw Error(ErrorKind::Isa, fmt::format("instruction '{}' of ISA {}: {} names an unknown buffer '{}'", instruction.name,
                                                isa_.name, role, map.buffer));
      const auto rank = isa_.buffers[static_cast<std::size_t>(s.buffer)].access_dims.size();
      if (map.start.size() != rank || map.length.size() != rank)
        throw Error(ErrorKind::Isa, fmt::format("instruction '{}' of ISA {}: {} gives {} starts and {} lengths for the {} access dims of '{}'",
                                                instruction.name, isa_.name, role, map.start.size(), map.length.size(), rank, map.buffer));
      for (std::size_t d = 0; d < rank; ++d) {
        s.start.push_back(parse(map.start[d], fmt::format("{} start", role)));
        s.length.push_back(parse(map.length[d], fmt::format("{} length", role)));
      }
      return s;
    };
    p.names = attribute_names(instruction);
    for (const auto& c : instruction.constraints) p.constraints.push_back(parse(c, "constraint"));
    for (std::size_t i = 0; i < instruction.inputs.size(); ++i) p.inputs.push_back(slice(instruction.inputs[i], fmt::format("In{}", i + 1)));
    for (std::size_t o = 0; o < instruction.outputs.size(); ++o) p.outputs.push_back(slice(instruction.outputs[o], fmt::format("Out{}", o)));
    if (p.outputs.empty() && instruction.updates.empty())
      throw Error(ErrorKind::Isa, fmt::format("instruction '{}' of ISA {} has no output slice and no state update", instruction.name, isa_.name));
    for (const auto& u : instruction.updates) {
      PreparedUpdate pu;
      for (std::size_t k = 0; k < isa_.state.size(); ++k)
        if (isa_.state[k].name == u.state) pu.state = static_cast<int>(k);
      if (pu.state < 0)
        throw Error(ErrorKind::Isa, fmt::format("instruction '{}' of ISA {} updates an unknown state register '{}'", instruction.name,
                                                isa_.name, u.state));
      pu.value = parse(u.value, "state update");
      p.updates.push_back(pu);
    }
    p.ready = true;
    return p;
  }

  // The semantics with alpha substituted, parsed once per (instruction, alpha values).
  const Semantics& semantics_for(int index, const ConcreteInstruction& ci, const std::string& who) {
    const isa::Instruction& instruction = isa_.instructions[static_cast<std::size_t>(index)];
    const std::size_t alpha_count = instruction.alpha.size();
    std::vector<std::int64_t> key{index};
    key.insert(key.end(), ci.attributes.begin(), ci.attributes.begin() + static_cast<std::ptrdiff_t>(alpha_count));
    if (auto it = semantics_.find(key); it != semantics_.end()) return *it->second;

    auto alpha_env = [&](std::string_view name) -> std::optional<std::int64_t> {
      for (std::size_t k = 0; k < alpha_count; ++k)
        if (instruction.alpha[k] == name) return ci.attributes[k];
      return std::nullopt;
    };
    auto dimension = [&](std::string_view expression, SourceLocation where) -> std::int64_t {
      const auto parsed = sym::try_parse(expression);
      if (!parsed.ok())
        throw Error(ErrorKind::Isa, fmt::format("semantics of '{}': expression `{}`: {}", instruction.name, expression, parsed.error), where);
      const auto r = sym::try_evaluate(parsed.expr, alpha_env);
      if (!r.ok())
        throw Error(ErrorKind::Isa, fmt::format("semantics of '{}': expression `{}`: {}{}", instruction.name, expression, r.error,
                                                r.error_name.empty() ? "" : fmt::format(" '{}' (only alpha attributes may shape the semantics)", r.error_name)),
                    where);
      return r.value;
    };
    auto semantics = std::make_unique<Semantics>();
    try {
      semantics->module = hlo::parse_semantics(instruction.semantics, dimension);
    } catch (const Error& e) {
      throw Error(ErrorKind::Isa, fmt::format("{}: its semantics do not parse: {}", who, e.what()), ci.location);
    }
    collect_outputs(*semantics, instruction, who);
    auto& slot = semantics_[key];
    slot = std::move(semantics);
    return *slot;
  }

  // Records parameter shapes and, for several outputs, makes the ROOT a tuple of Out0, Out1, ...
  void collect_outputs(Semantics& s, const isa::Instruction& instruction, const std::string& who) const {
    if (s.module.entry < 0) throw Error(ErrorKind::Isa, fmt::format("{}: the semantics have no ENTRY computation", who));
    hlo::Computation& entry = s.module.entry_computation();
    for (int p : entry.parameters) s.parameter_shapes.push_back(entry.instructions.at(static_cast<std::size_t>(p)).shape);
    if (s.parameter_shapes.size() != instruction.inputs.size())
      throw Error(ErrorKind::Isa, fmt::format("{}: the semantics take {} parameters but the instruction reads {} slices", who,
                                              s.parameter_shapes.size(), instruction.inputs.size()));
    const std::size_t outputs = instruction.outputs.size();
    if (outputs <= 1 || entry.root_instruction().shape.is_tuple) return;
    hlo::Instruction tuple;
    tuple.name = "act.sim.outputs";
    tuple.opcode = hlo::Opcode::Tuple;
    std::vector<Shape> shapes;
    for (std::size_t o = 0; o < outputs; ++o) {
      int operand = entry.find(fmt::format("Out{}", o));
      if (operand < 0 && o == 0) operand = entry.root;
      if (operand < 0) throw Error(ErrorKind::Isa, fmt::format("{}: the semantics define no instruction named Out{}", who, o));
      tuple.operands.push_back(operand);
      shapes.push_back(entry.instructions[static_cast<std::size_t>(operand)].shape);
    }
    tuple.shape = Shape::tuple(std::move(shapes));
    entry.instructions.push_back(std::move(tuple));
    entry.root = static_cast<int>(entry.instructions.size()) - 1;
  }

  Shape slice_shape(int buffer, std::span<const std::int64_t> start, std::span<const std::int64_t> length,
                    std::string_view context) const {
    const isa::Buffer& b = isa_.buffers[static_cast<std::size_t>(buffer)];
    const Shape& full = shapes_[static_cast<std::size_t>(buffer)];
    const std::size_t rank = b.access_dims.size();
    if (start.size() != rank || length.size() != rank)
      throw Error(ErrorKind::Internal, fmt::format("{}: a slice of '{}' needs {} starts and lengths", context, b.name, rank));
    std::vector<std::int64_t> dims;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::int64_t size = full.dims[d];
      if (length[d] < 1 || start[d] < 0 || start[d] > size || length[d] > size - start[d]) {
        std::string range;  // start:end per access dim, as the paper writes data slices
        for (std::size_t k = 0; k < rank; ++k) {
          std::int64_t end = 0;
          range += __builtin_add_overflow(start[k], length[k], &end) ? fmt::format("{}{}:(overflow)", k ? ", " : "", start[k])
                                                                     : fmt::format("{}{}:{}", k ? ", " : "", start[k], end);
        }
        throw Error(ErrorKind::Execution, fmt::format("{}{}the data slice {}[{}] is outside the buffer {}", context,
                                                      context.empty() ? "" : ": ", b.name, range, to_string(full)));
      }
      dims.push_back(length[d]);
    }
    dims.insert(dims.end(), full.dims.begin() + static_cast<std::ptrdiff_t>(rank), full.dims.end());
    return Shape(b.dtype, std::move(dims));
  }

  // Calls f(buffer_byte_offset, dense_byte_offset, bytes) for each contiguous run of a
  // (bounds-checked) slice; runs follow the slice's row-major order.
  template <class F>
  void for_each_run(int buffer, std::span<const std::int64_t> start, std::span<const std::int64_t> length, F f) const {
    const isa::Buffer& b = isa_.buffers[static_cast<std::size_t>(buffer)];
    const Shape& full = shapes_[static_cast<std::size_t>(buffer)];
    const std::size_t rank = b.access_dims.size();
    std::int64_t unit = byte_width(b.dtype);
    for (std::size_t d = rank; d < full.dims.size(); ++d) unit *= full.dims[d];
    if (rank == 0) return f(std::size_t{0}, std::size_t{0}, static_cast<std::size_t>(unit));
    std::vector<std::int64_t> stride(rank, unit);  // bytes per step of each access dim
    for (std::size_t d = rank - 1; d > 0; --d) stride[d - 1] = stride[d] * full.dims[d];
    const auto run = static_cast<std::size_t>(length[rank - 1] * unit);  // contiguous along the last access dim
    std::vector<std::int64_t> index(rank - 1, 0);
    std::size_t dense = 0;
    while (true) {
      std::int64_t offset = start[rank - 1] * stride[rank - 1];
      for (std::size_t d = 0; d + 1 < rank; ++d) offset += (start[d] + index[d]) * stride[d];
      f(static_cast<std::size_t>(offset), dense, run);
      dense += run;
      std::size_t d = rank - 1;  // advance the outer index, last dim fastest
      while (d > 0) {
        if (++index[d - 1] < length[d - 1]) break;
        index[d - 1] = 0;
        --d;
      }
      if (d == 0) return;
    }
  }

  isa::IsaView isa_;
  MachineOptions options_;
  std::vector<Shape> shapes_;
  std::vector<std::vector<std::uint8_t>> memory_;
  std::vector<std::int64_t> state_;
  std::vector<Prepared> prepared_;
  std::map<std::vector<std::int64_t>, std::unique_ptr<Semantics>> semantics_;
};

}  // namespace act::sim
