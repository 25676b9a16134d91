// The ISA description DSL: plain constexpr data that mirrors TAIDL construct for construct.
//
// An accelerator is a struct with static constexpr members (see isa/qkv.hpp):
//   name          std::string_view
//   buffers       std::array<act::isa::Buffer, N>          data models; one of them is HBM
//   state         std::array<act::isa::StateRegister, M>   optional: TAIDL v1 `@s` registers
//   expansions    std::array<act::isa::Expansion, E>       optional: assembler macros (isa/expansion.hpp)
//   instructions  std::array<act::isa::Instruction, K>
// Attribute expressions (`n * 128`, `addr_out + n`, `n <= 128`) are strings in the sym/ syntax;
// semantics are an HLO ENTRY block whose shapes may hold backtick expressions (u8[`n * 128`]).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <span>
#include <string_view>

#include "act/core/dtype.hpp"

namespace act::isa {

// A fixed-capacity list usable in constant expressions and designated initializers:
//   .alpha = {"n"}, .beta = {"addr_in", "addr_out"}
template <class T, std::size_t Capacity>
struct List {
  std::array<T, Capacity> items{};
  std::size_t count = 0;

  constexpr List() = default;
  constexpr List(std::initializer_list<T> init) {
    if (init.size() > Capacity) throw "act::isa::List: too many entries for its capacity";
    for (const T& x : init) items[count++] = x;
  }
  constexpr std::size_t size() const { return count; }
  constexpr bool empty() const { return count == 0; }
  constexpr const T* begin() const { return items.data(); }
  constexpr const T* end() const { return items.data() + count; }
  constexpr const T& operator[](std::size_t i) const { return items[i]; }
};

inline constexpr std::size_t kMaxAttributes = 10;  // per kind (alpha or beta) per instruction
inline constexpr std::size_t kMaxSlices = 6;        // inputs or outputs per instruction
inline constexpr std::size_t kMaxAccessDims = 3;
inline constexpr std::size_t kMaxUnitDims = 4;
inline constexpr std::size_t kMaxConstraints = 8;
inline constexpr std::size_t kMaxUpdates = 6;

using Names = List<std::string_view, kMaxAttributes>;
using DimExpressions = List<std::string_view, kMaxAccessDims>;

// A data model (tensor buffer): access dims S0 addressed by instructions, each addressed unit
// an E[S1] tensor. HBM is the byte-addressed 1-D buffer u8[size] (S0 = [size], S1 = []).
struct Buffer {
  std::string_view name;
  List<std::int64_t, kMaxAccessDims> access_dims;
  List<std::int64_t, kMaxUnitDims> unit_dims;
  DType dtype = DType::u8;
  bool is_hbm = false;
};

constexpr Buffer hbm(std::string_view name, std::int64_t bytes) {
  return Buffer{name, {bytes}, {}, DType::u8, true};
}

// One data slice an instruction reads or writes: start and length per access dim of `buffer`.
struct SliceMap {
  std::string_view buffer;
  DimExpressions start;
  DimExpressions length;
};

// TAIDL v1 architectural state (Gemmini's dataflow/preload, TPUv1's weight FIFO head).
struct StateRegister {
  std::string_view name;
  std::int64_t initial = 0;
};

// `state = value` run after the instruction executes; value is an expression over attributes
// and state registers (read before any update of this instruction).
struct StateUpdate {
  std::string_view state;
  std::string_view value;
};

struct Instruction {
  std::string_view name;
  Names alpha{};  // computational attributes: fixed by phase 1 (shapes, modes)
  Names beta{};   // addressing attributes: fixed by phase 2 (addresses, register numbers)
  List<SliceMap, kMaxSlices> inputs{};   // In1, In2, ... = parameter(0), parameter(1), ...
  List<SliceMap, kMaxSlices> outputs{};  // written from Out0, Out1, ... (Out0 is the ROOT)
  List<std::string_view, kMaxConstraints> constraints{};  // validity: all must hold
  List<StateUpdate, kMaxUpdates> updates{};
  std::string_view semantics{};  // `ENTRY name { ... }`
  std::string_view cost = "1"; // expression over alpha, for the default cost model
  // Where the initializer of this instruction ends (filled in by the compiler), so validation
  // messages can point into the ISA header.
  std::source_location where = std::source_location::current();
};

// The two slice maps name the same slice: one buffer, equal start and length expressions.
constexpr bool same_slice(const SliceMap& a, const SliceMap& b) {
  if (a.buffer != b.buffer || a.start.size() != b.start.size() || a.length.size() != b.length.size()) return false;
  for (std::size_t i = 0; i < a.start.size(); ++i)
    if (a.start[i] != b.start[i]) return false;
  for (std::size_t i = 0; i < a.length.size(); ++i)
    if (a.length[i] != b.length[i]) return false;
  return true;
}

// Input k is read from the very slice one of the outputs writes (an in-place instruction:
// QKV's softmax, AMX's tdpbusd accumulator): running it destroys that input.
constexpr bool reads_in_place(const Instruction& instruction, std::size_t k) {
  if (k >= instruction.inputs.size()) return false;
  for (const SliceMap& out : instruction.outputs)
    if (same_slice(instruction.inputs[k], out)) return true;
  return false;
}

// An assembler macro and the hardware instructions it stands for (isa/expansion.hpp).
inline constexpr std::size_t kMaxExpansionSteps = 6;
struct Expansion {
  std::string_view instruction;                        // the macro: an instruction of the ISA
  List<std::string_view, kMaxExpansionSteps> steps{};  // "matmul_preload(rs1 = D_src, rs2 = C_dst)"
};

struct CMapping;  // isa/c_mapping.hpp: how the instructions become C (optional per ISA)

// A non-owning, type-erased view of an accelerator description, for code that works on any ISA
// chosen at run time (the simulator, the CLI).
struct IsaView {
  std::string_view name;
  std::span<const Buffer> buffers;
  std::span<const StateRegister> state;
  std::span<const Instruction> instructions;
  const CMapping* c_mapping = nullptr;  // null: the ISA cannot be emitted as C
  std::span<const Expansion> expansions;  // assembler macros (isa/expansion.hpp); usually none

  constexpr const Instruction* find_instruction(std::string_view n) const {
    for (const auto& i : instructions)
      if (i.name == n) return &i;
    return nullptr;
  }
  constexpr const Expansion* find_expansion(std::string_view n) const {
    for (const auto& e : expansions)
      if (e.instruction == n) return &e;
    return nullptr;
  }
  // Indices, not pointers, for constant evaluation (see isa/validate.hpp); -1: none.
  constexpr int instruction_index(std::string_view n) const {
    for (std::size_t i = 0; i < instructions.size(); ++i)
      if (instructions[i].name == n) return static_cast<int>(i);
    return -1;
  }
  constexpr bool has_expansion(std::string_view n) const {
    for (const auto& e : expansions)
      if (e.instruction == n) return true;
    return false;
  }
  constexpr bool has_instruction(std::string_view n) const {
    for (const auto& i : instructions)
      if (i.name == n) return true;
    return false;
  }
  constexpr const Buffer* find_buffer(std::string_view n) const {
    for (const auto& b : buffers)
      if (b.name == n) return &b;
    return nullptr;
  }
  constexpr int buffer_index(std::string_view n) const {
    for (std::size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].name == n) return static_cast<int>(i);
    return -1;
  }
  constexpr const Buffer& hbm() const {
    for (const auto& b : buffers)
      if (b.is_hbm) return b;
    return buffers[0];
  }
};

template <class Isa>
concept HasState = requires { Isa::state; };

template <class Isa>
concept HasExpansions = requires { Isa::expansions; };

template <class Isa>
concept HasCMapping = requires { { Isa::c_mapping } -> std::convertible_to<const CMapping*>; };

// The description without validating it, for the validator itself. Everyone else calls
// act::isa::view<Isa>() (isa/validate.hpp), which validates the description while it compiles.
template <class Isa>
constexpr IsaView unchecked_view() {
  IsaView v{Isa::name, std::span<const Buffer>(Isa::buffers), {}, std::span<const Instruction>(Isa::instructions)};
  if constexpr (HasState<Isa>) v.state = std::span<const StateRegister>(Isa::state);
  if constexpr (HasCMapping<Isa>) v.c_mapping = Isa::c_mapping;
  if constexpr (HasExpansions<Isa>) v.expansions = std::span<const Expansion>(Isa::expansions);
  return v;
}

}  // namespace act::isa
