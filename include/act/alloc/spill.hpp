// Moving a value out of an on-chip buffer and back, with the ISA's own instructions: the store
// and load phase 2 inserts to split a live range (live_range_split.hpp).
//
// For a value of type T in buffer b, a *spill pair* is
//   store  an instruction reading T from b (its data input) and writing u8[bytes(T)] to HBM,
//          equal to T's row-major bytes whatever its other inputs hold (those are don't-care
//          inputs, Undefined leaves in the pii graph: tilestored's old window);
//   load   an instruction reading those u8[bytes(T)] from HBM and writing T to b.
// Nothing is assumed from names: candidates are the instructions whose slices have those
// buffers, alpha values are drawn from T's dims and byte counts, the alpha-only constraints must
// hold, and the semantics are *evaluated* (hlo::evaluate) on random bits, twice, with different
// don't-care contents: load(store(x)) must give x back bit for bit. Beta is phase 2's: a pair
// whose beta constraints cannot be met simply leaves the split unallocatable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "act/core/literal.hpp"
#include "act/core/random.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/isa/description.hpp"
#include "act/isa/semantics.hpp"

namespace act::alloc {

// One instruction of a spill pair, alpha fixed.
struct TransferInstruction {
  std::size_t instruction = 0;
  std::vector<std::int64_t> alpha;
  std::size_t data_input = 0;       // the input that carries the value
  std::vector<Shape> input_types;   // every input's type at this alpha (don't-care ones included)
  Shape output_type;
};

struct SpillPair {
  TransferInstruction store;  // b -> HBM
  TransferInstruction load;   // HBM -> b
};

class SpillTable {
 public:
  explicit SpillTable(isa::IsaView isa) : isa_(isa) {
    for (std::size_t b = 0; b < isa_.buffers.size(); ++b)
      if (isa_.buffers[b].is_hbm) hbm_ = static_cast<int>(b);
  }

  // The spill pair for T in `buffer`, or nothing when the ISA has none (cached).
  const std::optional<SpillPair>& find(int buffer, const Shape& type) {
    auto key = std::make_pair(buffer, std::pair(type.dtype, type.dims));
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, search(buffer, type)).first;
    return it->second;
  }

 private:
  // Alpha tuples to try: every combination of T's dims and byte counts (row bytes, all bytes).
  std::vector<std::vector<std::int64_t>> alpha_candidates(const isa::Instruction& inst, const Shape& type) const {
    std::set<std::int64_t> values(type.dims.begin(), type.dims.end());
    const std::int64_t bytes = type.byte_size();
    values.insert(bytes);
    if (!type.dims.empty() && type.dims[0] > 0) values.insert(bytes / type.dims[0]);
    if (!type.dims.empty() && type.dims.back() > 0) values.insert(byte_width(type.dtype) * type.dims.back());
    values.erase(0);
    std::vector<std::vector<std::int64_t>> out{{}};
    for (std::size_t a = 0; a < inst.alpha.size(); ++a) {
      std::vector<std::vector<std::int64_t>> next;
      for (const auto& prefix : out)
        for (std::int64_t v : values) {
          auto t = prefix;
          t.push_back(v);
          next.push_back(std::move(t));
          if (next.size() > 4096) return {};
        }
      out = std::move(next);
    }
    return out;
  }

  // The instruction at alpha with its input and output types, when its semantics instantiate.
  static std::optional<std::pair<hlo::Module, TransferInstruction>> instantiate(const isa::Instruction& inst, std::size_t index,
                                                                                const std::vector<std::int64_t>& alpha) {
    if (!isa::alpha_constraints_hold(inst, alpha)) return std::nullopt;
    hlo::Module module;
    try {
      module = isa::instantiate_semantics(inst, alpha);
    } catch (const Error&) {
      return std::nullopt;
    }
    const hlo::Computation& entry = module.entry_computation();
    TransferInstruction t;
    t.instruction = index;
    t.alpha = alpha;
    t.input_types.resize(inst.inputs.size());
    for (int p : entry.parameters) {
      const hlo::Instruction& param = entry.instructions[static_cast<std::size_t>(p)];
      if (param.parameter_number < 0 || static_cast<std::size_t>(param.parameter_number) >= t.input_types.size())
        return std::nullopt;
      t.input_types[static_cast<std::size_t>(param.parameter_number)] = Shape(param.shape.dtype, param.shape.dims);
    }
    const Shape& root = entry.root_instruction().shape;
    if (root.is_tuple) return std::nullopt;
    t.output_type = Shape(root.dtype, root.dims);
    return std::make_pair(std::move(module), std::move(t));
  }

  static Literal random_literal(const Shape& type, SplitMix64& random) {
    Literal l(type);
    for (auto& byte : l.bytes()) byte = static_cast<std::uint8_t>(random.next());
    return l;
  }

  // Runs `module` with `data` at input `k` and random bits elsewhere, twice (different bits):
  // the result when both runs agree, nothing when the other inputs matter or evaluation fails.
  static std::optional<Literal> run(const hlo::Module& module, const TransferInstruction& t, const Literal& data) {
    std::optional<Literal> first;
    for (std::uint64_t seed : {0x5eedull, 0xfeedull}) {
      SplitMix64 random{seed};
      std::vector<Literal> inputs;
      for (std::size_t k = 0; k < t.input_types.size(); ++k)
        inputs.push_back(k == t.data_input ? data : random_literal(t.input_types[k], random));
      try {
        Literal out = hlo::evaluate(module, std::span<const Literal>(inputs));
        if (first && !first->bitwise_equal(out)) return std::nullopt;
        if (!first) first = std::move(out);
      } catch (const Error&) {
        return std::nullopt;
      }
    }
    return first;
  }

  std::optional<SpillPair> search(int buffer, const Shape& type) const {
    if (hbm_ < 0 || buffer == hbm_ || type.is_tuple) return std::nullopt;
    const std::string_view hbm_name = isa_.buffers[static_cast<std::size_t>(hbm_)].name;
    const std::string_view name = isa_.buffers[static_cast<std::size_t>(buffer)].name;
    const Shape bytes_type(DType::u8, {type.byte_size()});
    SplitMix64 random{0xa11ce};
    const Literal value = random_literal(type, random);
    const Literal value_bytes = Literal::from_bytes(bytes_type, value.bytes());

    std::optional<TransferInstruction> store, load;
    for (std::size_t i = 0; i < isa_.instructions.size() && !(store && load); ++i) {
      const isa::Instruction& inst = isa_.instructions[i];
      if (inst.outputs.size() != 1) continue;
      const bool to_hbm = inst.outputs[0].buffer == hbm_name, to_buffer = inst.outputs[0].buffer == name;
      if (!(to_hbm && !store) && !(to_buffer && !load)) continue;
      for (std::size_t k = 0; k < inst.inputs.size(); ++k) {
        const std::string_view from = inst.inputs[k].buffer;
        if (!(to_hbm && from == name) && !(to_buffer && from == hbm_name)) continue;
        for (const auto& alpha : alpha_candidates(inst, type)) {
          auto made = instantiate(inst, i, alpha);
          if (!made) continue;
          auto& [module, t] = *made;
          t.data_input = k;
          if (to_hbm && from == name && !store && t.input_types[k].same_type(type) && t.output_type.same_type(bytes_type)) {
            const auto out = run(module, t, value);
            if (out && std::equal(out->bytes().begin(), out->bytes().end(), value_bytes.bytes().begin(), value_bytes.bytes().end()))
              store = t;
          } else if (to_buffer && from == hbm_name && !load && t.input_types[k].same_type(bytes_type) &&
                     t.output_type.same_type(type)) {
            const auto out = run(module, t, value_bytes);
            if (out && out->bitwise_equal(value)) load = t;
          }
          if ((to_hbm && store) || (to_buffer && load)) break;
        }
      }
    }
    if (!store || !load) return std::nullopt;
    return SpillPair{*store, *load};
  }

  isa::IsaView isa_;
  int hbm_ = -1;
  std::map<std::pair<int, std::pair<DType, std::vector<std::int64_t>>>, std::optional<SpillPair>> cache_;
};

}  // namespace act::alloc
