// "Gemmini+" (paper App. F.3): the hardware ISA of gemmini_hw.hpp plus the CISC `loop_ws`, a
// whole tiled matmul streamed from HBM by Gemmini's LoopMatmul FSM, which double-buffers the
// DMA against the systolic array. The RISC instructions stay, so their programs remain among
// the candidates; the cost model decides.
//
// loop_ws(DIM_I, DIM_J, DIM_K; A_addr, B_addr, C_addr): C = A . B with A s8[DIM_I, DIM_K] and
// B s8[DIM_K, DIM_J] row-major in HBM, C written as mvout_acc_stride writes it (each s32
// saturated to [-128, 127], 4 bytes, row pitch DIM_J elements). The bounds are in rows and
// columns, multiples of 16 (the hardware's I, J, K tile counts are these / 16): act solves
// alpha from dims that are one attribute alone. Gemmini's LOOP_WS takes its bounds, addresses and strides
// in five RoCC commands (CONFIG_BOUNDS, ADDRS_AB, ADDRS_DC, STRIDES_AB, STRIDES_DC) before LOOP_WS;
// here that is one instruction whose strides are the matrices' widths, without the optional
// bias D, transposes, activation or full-width C. The FSM stages A and B in half of the
// scratchpad and C in half of the accumulator (it double-buffers): A and B at most 8192 sp rows
// (131072 bytes), C at most 8192 acc rows.
// Not modelled: it overwrites those sp and acc rows. Compiled code keeps nothing on chip across
// a loop_ws only because the cost model makes mixing unattractive; act has no way yet to say
// that an instruction clobbers buffers it does not declare (see docs/design-decisions.md (Gemmini)).
//
// cost: max(DMA beats, array cycles) + 48 (a DMA latency and the array's 2 x 16-cycle fill):
// the FSM overlaps the two (isa/gemmini_timing.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "act/isa/description.hpp"
#include "act/isa/gemmini_hw.hpp"
#include "act/isa/validate.hpp"

namespace act::isa {

namespace gemmini_plus_detail {

inline constexpr Instruction kLoopWs{
    .name = "loop_ws", .alpha = {"DIM_I", "DIM_J", "DIM_K"}, .beta = {"A_addr", "B_addr", "C_addr"},
    .inputs = {{"d0", {"A_addr"}, {"DIM_I * DIM_K"}}, {"d0", {"B_addr"}, {"DIM_K * DIM_J"}}},
    .outputs = {{"d0", {"C_addr"}, {"4 * DIM_I * DIM_J"}}},
    .constraints = {"DIM_I >= 16", "DIM_J >= 16", "DIM_K >= 16", "DIM_I % 16 == 0", "DIM_J % 16 == 0", "DIM_K % 16 == 0",
                    "DIM_I * DIM_K + DIM_K * DIM_J <= 131072", "DIM_I * DIM_J <= 131072"},
    .semantics = R"(ENTRY loop_ws {
  %In1 = u8[`DIM_I * DIM_K`] parameter(0)
  %In2 = u8[`DIM_K * DIM_J`] parameter(1)
  %a8 = u8[`DIM_I`, `DIM_K`] reshape(%In1)
  %as = s8[`DIM_I`, `DIM_K`] bitcast-convert(%a8)
  %a = s32[`DIM_I`, `DIM_K`] convert(%as)
  %b8 = u8[`DIM_K`, `DIM_J`] reshape(%In2)
  %bs = s8[`DIM_K`, `DIM_J`] bitcast-convert(%b8)
  %b = s32[`DIM_K`, `DIM_J`] convert(%bs)
  %ab = s32[`DIM_I`, `DIM_J`] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %lo = s32[] constant(-128)
  %hi = s32[] constant(127)
  %sat = s32[`DIM_I`, `DIM_J`] clamp(%lo, %ab, %hi)
  %bytes = u8[`DIM_I`, `DIM_J`, 4] bitcast-convert(%sat)
  ROOT %Out0 = u8[`4 * DIM_I * DIM_J`] reshape(%bytes)
})",
    .cost = "48 + max((DIM_I * DIM_K + DIM_K * DIM_J + 4 * DIM_I * DIM_J) / 16, DIM_I * DIM_J * DIM_K / 256)"};

template <std::size_t N>
constexpr std::array<Instruction, N + 1> with_loop_ws(const std::array<Instruction, N>& risc) {
  std::array<Instruction, N + 1> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = risc[i];
  out[N] = kLoopWs;
  return out;
}

}  // namespace gemmini_plus_detail

struct GemminiPlus {
  static constexpr std::string_view name = "gemmini_plus";
  static constexpr auto buffers = GemminiHw::buffers;
  static constexpr auto state = GemminiHw::state;
  static constexpr auto instructions = gemmini_plus_detail::with_loop_ws(GemminiHw::instructions);
  static constexpr auto expansions = GemminiHw::expansions;
};

}  // namespace act::isa

ACT_VALIDATE_ISA(act::isa::GemminiPlus);
