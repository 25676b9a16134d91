// tpu_mini: a scaled-down TPUv1 written the way a newcomer writes an accelerator for act, outside
// act's source tree. The package test builds it against the installed act with its own `act`
// tool and Catch2 tests (tests/package/build_against_installed.cmake).
//
//   hbm      host memory, 64 KiB, byte-addressed
//   unb      unified buffer: 64 rows of s8[16]
//   acc      accumulators: 32 rows of s32[16]
//   weights  the matrix unit's weight tile: 16 rows of s8[16]
//
// TAIDL's `activate(function ∈ {0,1})` is a mode attribute: act reads alpha off tensor shapes,
// so each mode is an instruction of its own (activate, activate_relu).
#pragma once

#include <act/isa/description.hpp>
#include <act/isa/validate.hpp>

namespace tpu {

struct TpuMini {
  static constexpr std::string_view name = "tpu_mini";

  static constexpr std::array buffers{
      act::isa::hbm("hbm", 1 << 16),
      act::isa::Buffer{.name = "unb", .access_dims = {64}, .unit_dims = {16}, .dtype = act::DType::s8},
      act::isa::Buffer{.name = "acc", .access_dims = {32}, .unit_dims = {16}, .dtype = act::DType::s32},
      act::isa::Buffer{.name = "weights", .access_dims = {16}, .unit_dims = {16}, .dtype = act::DType::s8},
  };

  static constexpr std::array instructions{
      // n rows of 16 bytes from host memory into the unified buffer.
      act::isa::Instruction{
          .name = "read",
          .alpha = {"n"},
          .beta = {"hbm_addr", "unb_addr"},
          .inputs = {{"hbm", {"hbm_addr"}, {"n * 16"}}},
          .outputs = {{"unb", {"unb_addr"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 64"},
          .semantics = R"(ENTRY read {
  %In1 = u8[`n * 16`] parameter(0)
  %rows = u8[`n`, 16] reshape(%In1)
  ROOT %Out0 = s8[`n`, 16] bitcast-convert(%rows)
})",
          .cost = "n"},
      // n rows of the unified buffer back to host memory.
      act::isa::Instruction{
          .name = "write",
          .alpha = {"n"},
          .beta = {"unb_addr", "hbm_addr"},
          .inputs = {{"unb", {"unb_addr"}, {"n"}}},
          .outputs = {{"hbm", {"hbm_addr"}, {"n * 16"}}},
          .constraints = {"n >= 1", "n <= 64"},
          .semantics = R"(ENTRY write {
  %In1 = s8[`n`, 16] parameter(0)
  %bytes = u8[`n`, 16] bitcast-convert(%In1)
  ROOT %Out0 = u8[`n * 16`] reshape(%bytes)
})",
          .cost = "n"},
      // A 16x16 weight tile, 256 contiguous bytes of host memory, into the matrix unit.
      act::isa::Instruction{
          .name = "read_weight",
          .beta = {"hbm_addr"},
          .inputs = {{"hbm", {"hbm_addr"}, {"256"}}},
          .outputs = {{"weights", {"0"}, {"16"}}},
          .semantics = R"(ENTRY read_weight {
  %In1 = u8[256] parameter(0)
  %rows = u8[16, 16] reshape(%In1)
  ROOT %Out0 = s8[16, 16] bitcast-convert(%rows)
})",
          .cost = "16"},
      // n rows of activations times the weight tile; products and sums in s32.
      act::isa::Instruction{
          .name = "matmul",
          .alpha = {"n"},
          .beta = {"unb_addr", "acc_addr"},
          .inputs = {{"unb", {"unb_addr"}, {"n"}}, {"weights", {"0"}, {"16"}}},
          .outputs = {{"acc", {"acc_addr"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 32"},
          .semantics = R"(ENTRY matmul {
  %In1 = s8[`n`, 16] parameter(0)
  %In2 = s8[16, 16] parameter(1)
  %x = s32[`n`, 16] convert(%In1)
  %w = s32[16, 16] convert(%In2)
  ROOT %Out0 = s32[`n`, 16] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
          .cost = "n + 16"},
      // Accumulators back to 8 bits, saturating: XLA's convert from s32 to s8 wraps (keeps the
      // low byte), so the saturation is written out as a clamp.
      act::isa::Instruction{
          .name = "activate",
          .alpha = {"n"},
          .beta = {"acc_addr", "unb_addr"},
          .inputs = {{"acc", {"acc_addr"}, {"n"}}},
          .outputs = {{"unb", {"unb_addr"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 32"},
          .semantics = R"(ENTRY activate {
  %In1 = s32[`n`, 16] parameter(0)
  %lo = s32[] constant(-128)
  %hi = s32[] constant(127)
  %sat = s32[`n`, 16] clamp(%lo, %In1, %hi)
  ROOT %Out0 = s8[`n`, 16] convert(%sat)
})",
          .cost = "n"},
      // activate with TAIDL's function = 1: ReLU, then saturate.
      act::isa::Instruction{
          .name = "activate_relu",
          .alpha = {"n"},
          .beta = {"acc_addr", "unb_addr"},
          .inputs = {{"acc", {"acc_addr"}, {"n"}}},
          .outputs = {{"unb", {"unb_addr"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 32"},
          .semantics = R"(ENTRY activate_relu {
  %In1 = s32[`n`, 16] parameter(0)
  %lo = s32[] constant(0)
  %hi = s32[] constant(127)
  %sat = s32[`n`, 16] clamp(%lo, %In1, %hi)
  ROOT %Out0 = s8[`n`, 16] convert(%sat)
})",
          .cost = "n"},
  };
};

}  // namespace tpu

ACT_VALIDATE_ISA(tpu::TpuMini);
