// Gemmini as ACT's evaluation describes it (paper §8.4; the ACT artifact's accelerators/gemmini.py,
// reference/isa_facts.md §2.3b): the stateless description the 15 SW-library kernels and the
// NNSmith kernels of kernels/gemmini-act/ were compiled against. Construct for construct:
//
//   d0    HBM, u8[1 MiB], byte-addressed
//   spad  scratchpad: access dims [16384, 16] of s8, no unit dims (256 KiB)
//   acc   accumulator: access dims [1024, 16] of s32, no unit dims (64 KiB)
//
// Both on-chip buffers are two-dimensional: every instruction reads or writes a [rows, cols]
// window starting at (addr, 0), so allocation is genuinely 2-D (a value of s8[16, 8] occupies 16
// rows, 8 columns). Attribute names and order are the artifact's: alpha (`@c.`) first, beta
// (`@a.`) second, `mvin_spad(rows = 16, cols = 16, scale = 1, hbm_addr = 0, sp_addr = 0)`.
//
// Deviations from the artifact, each because act's semantics blocks are XLA-HLO:
// - `scale`: the artifact writes `s8[1] constant(@c.scale)` broadcast with dimensions={} (a rank
//   slip: the operand is not a scalar). act's semantics reach alpha only through shapes, so the
//   scale is counted out as the sum of `scale` ones (as amx.hpp's vbroadcastss_imm does), in s8
//   for the s8 loads: scale in [0, 255] covers every s8 multiplier (255 is -1, wrapping like the
//   artifact's s8 multiply). mvin_acc's s32 scale is the s8 value sign-extended, so it too is
//   one of -128..127; the artifact allows any s32 (no kernel here scales by more).
// - buffer bounds (cols <= 16) are the buffers' own, as in the artifact; rows, cols >= 1.
// - matmul8/mac8 dot s8 operands into an s8 result: XLA accumulates in s32 and wraps once, which
//   equals the artifact's wrapping s8 arithmetic.
//
// cost: cycles, from the cost model of isa/gemmini_timing.hpp (DMA 16 bytes per cycle on
// the 128-bit system bus plus a fixed request latency; the 16x16 systolic array streams one
// row of A per cycle after a 2 x 16-cycle fill). The sources and the calibration against the
// paper's RTL measurements (App. E) are in docs/design-decisions.md (Gemmini).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "act/isa/description.hpp"
#include "act/isa/expansion.hpp"
#include "act/isa/validate.hpp"

namespace act::isa {

namespace gemmini_detail {

// The loads, as the artifact writes them: alpha `scale` multiplies what is loaded.
inline constexpr std::array kScaledLoads{
    // rows x cols bytes from HBM (row-major) into spad[sp_addr.., 0..cols), times `scale`.
    Instruction{.name = "mvin_spad", .alpha = {"rows", "cols", "scale"}, .beta = {"hbm_addr", "sp_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .outputs = {{"spad", {"sp_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1", "scale >= 0", "scale <= 255"},
                .semantics = R"(ENTRY mvin_spad {
  %In1 = u8[`rows * cols`] parameter(0)
  %data = u8[`rows`, `cols`] reshape(%In1)
  %val = s8[`rows`, `cols`] bitcast-convert(%data)
  %one = s8[] constant(1)
  %ones = s8[`scale`] broadcast(%one), dimensions={}
  %scale = s8[] reduce_add(%ones), dimensions={0}
  %scale_bc = s8[`rows`, `cols`] broadcast(%scale), dimensions={}
  ROOT %Out0 = s8[`rows`, `cols`] multiply(%val, %scale_bc)
})",
                .cost = "16 + (rows * cols + 15) / 16"},

    // rows x cols little-endian s32 from HBM into acc, times `scale` (s8, sign-extended).
    Instruction{.name = "mvin_acc", .alpha = {"rows", "cols", "scale"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols * 4"}}},
                .outputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1", "scale >= 0", "scale <= 255"},
                .semantics = R"(ENTRY mvin_acc {
  %In1 = u8[`rows * cols * 4`] parameter(0)
  %r = u8[`rows`, `cols`, 4] reshape(%In1)
  %val = s32[`rows`, `cols`] bitcast-convert(%r)
  %one = s8[] constant(1)
  %ones = s8[`scale`] broadcast(%one), dimensions={}
  %scale8 = s8[] reduce_add(%ones), dimensions={0}
  %scale = s32[] convert(%scale8)
  %scale_bc = s32[`rows`, `cols`] broadcast(%scale), dimensions={}
  ROOT %Out0 = s32[`rows`, `cols`] multiply(%val, %scale_bc)
})",
                .cost = "16 + (rows * cols * 4 + 15) / 16"},

    // rows x cols s8 bytes, times the s8 `scale` (wrapping), widened to s32.
    Instruction{.name = "mvin_acc_low", .alpha = {"rows", "cols", "scale"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .outputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1", "scale >= 0", "scale <= 255"},
                .semantics = R"(ENTRY mvin_acc_low {
  %In1 = u8[`rows * cols`] parameter(0)
  %a = u8[`rows`, `cols`] reshape(%In1)
  %b = s8[`rows`, `cols`] bitcast-convert(%a)
  %one = s8[] constant(1)
  %ones = s8[`scale`] broadcast(%one), dimensions={}
  %scale = s8[] reduce_add(%ones), dimensions={0}
  %scale_bc = s8[`rows`, `cols`] broadcast(%scale), dimensions={}
  %c = s8[`rows`, `cols`] multiply(%b, %scale_bc)
  ROOT %Out0 = s32[`rows`, `cols`] convert(%c)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
};

// The same loads with scale 1 and no `scale` attribute (GemminiUnitScale below).
inline constexpr std::array kUnitLoads{
    Instruction{.name = "mvin_spad", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "sp_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .outputs = {{"spad", {"sp_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvin_spad {
  %In1 = u8[`rows * cols`] parameter(0)
  %data = u8[`rows`, `cols`] reshape(%In1)
  ROOT %Out0 = s8[`rows`, `cols`] bitcast-convert(%data)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
    Instruction{.name = "mvin_acc", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols * 4"}}},
                .outputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvin_acc {
  %In1 = u8[`rows * cols * 4`] parameter(0)
  %r = u8[`rows`, `cols`, 4] reshape(%In1)
  ROOT %Out0 = s32[`rows`, `cols`] bitcast-convert(%r)
})",
                .cost = "16 + (rows * cols * 4 + 15) / 16"},
    Instruction{.name = "mvin_acc_low", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .outputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvin_acc_low {
  %In1 = u8[`rows * cols`] parameter(0)
  %a = u8[`rows`, `cols`] reshape(%In1)
  %b = s8[`rows`, `cols`] bitcast-convert(%a)
  ROOT %Out0 = s32[`rows`, `cols`] convert(%b)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
};

// The same, named as the macros of `gemmini` (below).
inline constexpr std::array kUnitMacros{
    Instruction{.name = "mvin_spad_unit", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "sp_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .outputs = {{"spad", {"sp_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvin_spad_unit {
  %In1 = u8[`rows * cols`] parameter(0)
  %data = u8[`rows`, `cols`] reshape(%In1)
  ROOT %Out0 = s8[`rows`, `cols`] bitcast-convert(%data)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
    Instruction{.name = "mvin_acc_unit", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols * 4"}}},
                .outputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvin_acc_unit {
  %In1 = u8[`rows * cols * 4`] parameter(0)
  %r = u8[`rows`, `cols`, 4] reshape(%In1)
  ROOT %Out0 = s32[`rows`, `cols`] bitcast-convert(%r)
})",
                .cost = "16 + (rows * cols * 4 + 15) / 16"},
    Instruction{.name = "mvin_acc_low_unit", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .outputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvin_acc_low_unit {
  %In1 = u8[`rows * cols`] parameter(0)
  %a = u8[`rows`, `cols`] reshape(%In1)
  %b = s8[`rows`, `cols`] bitcast-convert(%a)
  ROOT %Out0 = s32[`rows`, `cols`] convert(%b)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
};

// Stores, matmuls and macs: the same in both.
inline constexpr std::array kStoresAndMatmuls{
    Instruction{.name = "mvout_spad", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "sp_addr"},
                .inputs = {{"spad", {"sp_addr", "0"}, {"rows", "cols"}}},
                .outputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvout_spad {
  %In1 = s8[`rows`, `cols`] parameter(0)
  %data = u8[`rows`, `cols`] bitcast-convert(%In1)
  ROOT %Out0 = u8[`rows * cols`] reshape(%data)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
    Instruction{.name = "mvout_spad_relu", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "sp_addr"},
                .inputs = {{"spad", {"sp_addr", "0"}, {"rows", "cols"}}},
                .outputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvout_spad_relu {
  %In1 = s8[`rows`, `cols`] parameter(0)
  %zero = s8[] constant(0)
  %zeros = s8[`rows`, `cols`] broadcast(%zero), dimensions={}
  %relu = s8[`rows`, `cols`] maximum(%In1, %zeros)
  %data = u8[`rows`, `cols`] bitcast-convert(%relu)
  ROOT %Out0 = u8[`rows * cols`] reshape(%data)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
    Instruction{.name = "mvout_acc", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .outputs = {{"d0", {"hbm_addr"}, {"rows * cols * 4"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvout_acc {
  %In1 = s32[`rows`, `cols`] parameter(0)
  %data = u8[`rows`, `cols`, 4] bitcast-convert(%In1)
  ROOT %Out0 = u8[`rows * cols * 4`] reshape(%data)
})",
                .cost = "16 + (rows * cols * 4 + 15) / 16"},
    Instruction{.name = "mvout_acc_relu", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .outputs = {{"d0", {"hbm_addr"}, {"rows * cols * 4"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvout_acc_relu {
  %In1 = s32[`rows`, `cols`] parameter(0)
  %zero = s32[] constant(0)
  %zeros = s32[`rows`, `cols`] broadcast(%zero), dimensions={}
  %relu = s32[`rows`, `cols`] maximum(%In1, %zeros)
  %data = u8[`rows`, `cols`, 4] bitcast-convert(%relu)
  ROOT %Out0 = u8[`rows * cols * 4`] reshape(%data)
})",
                .cost = "16 + (rows * cols * 4 + 15) / 16"},
    // s32 -> s8 by XLA's convert (wraps: keeps the low byte, no saturation).
    Instruction{.name = "mvout_acc_low", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .outputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvout_acc_low {
  %In1 = s32[`rows`, `cols`] parameter(0)
  %a = s8[`rows`, `cols`] convert(%In1)
  %b = u8[`rows`, `cols`] bitcast-convert(%a)
  ROOT %Out0 = u8[`rows * cols`] reshape(%b)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
    Instruction{.name = "mvout_acc_low_relu", .alpha = {"rows", "cols"}, .beta = {"hbm_addr", "acc_addr"},
                .inputs = {{"acc", {"acc_addr", "0"}, {"rows", "cols"}}},
                .outputs = {{"d0", {"hbm_addr"}, {"rows * cols"}}},
                .constraints = {"rows >= 1", "cols >= 1"},
                .semantics = R"(ENTRY mvout_acc_low_relu {
  %In1 = s32[`rows`, `cols`] parameter(0)
  %zero = s32[] constant(0)
  %zeros = s32[`rows`, `cols`] broadcast(%zero), dimensions={}
  %relu = s32[`rows`, `cols`] maximum(%In1, %zeros)
  %a = s8[`rows`, `cols`] convert(%relu)
  %b = u8[`rows`, `cols`] bitcast-convert(%a)
  ROOT %Out0 = u8[`rows * cols`] reshape(%b)
})",
                .cost = "16 + (rows * cols + 15) / 16"},
    // C[DIM_I, DIM_J] = A[DIM_I, DIM_K] . B[DIM_K, DIM_J], all s8 in spad (wrapping).
    Instruction{.name = "matmul8", .alpha = {"DIM_I", "DIM_J", "DIM_K"}, .beta = {"C_dst", "A_src", "B_src"},
                .inputs = {{"spad", {"A_src", "0"}, {"DIM_I", "DIM_K"}}, {"spad", {"B_src", "0"}, {"DIM_K", "DIM_J"}}},
                .outputs = {{"spad", {"C_dst", "0"}, {"DIM_I", "DIM_J"}}},
                .constraints = {"DIM_I >= 1", "DIM_J >= 1", "DIM_K >= 1"},
                .semantics = R"(ENTRY matmul8 {
  %In1 = s8[`DIM_I`, `DIM_K`] parameter(0)
  %In2 = s8[`DIM_K`, `DIM_J`] parameter(1)
  ROOT %Out0 = s8[`DIM_I`, `DIM_J`] dot(%In1, %In2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                .cost = "16 + DIM_I"},
    // The same product of s8 operands widened to s32, into acc.
    Instruction{.name = "matmul32", .alpha = {"DIM_I", "DIM_J", "DIM_K"}, .beta = {"C_dst", "A_src", "B_src"},
                .inputs = {{"spad", {"A_src", "0"}, {"DIM_I", "DIM_K"}}, {"spad", {"B_src", "0"}, {"DIM_K", "DIM_J"}}},
                .outputs = {{"acc", {"C_dst", "0"}, {"DIM_I", "DIM_J"}}},
                .constraints = {"DIM_I >= 1", "DIM_J >= 1", "DIM_K >= 1"},
                .semantics = R"(ENTRY matmul32 {
  %In1 = s8[`DIM_I`, `DIM_K`] parameter(0)
  %In2 = s8[`DIM_K`, `DIM_J`] parameter(1)
  %a = s32[`DIM_I`, `DIM_K`] convert(%In1)
  %b = s32[`DIM_K`, `DIM_J`] convert(%In2)
  ROOT %Out0 = s32[`DIM_I`, `DIM_J`] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                .cost = "16 + DIM_I"},
    // C = A . B + D, all s8 in spad (wrapping).
    Instruction{.name = "mac8", .alpha = {"DIM_I", "DIM_J", "DIM_K"}, .beta = {"C_dst", "A_src", "B_src", "D_src"},
                .inputs = {{"spad", {"A_src", "0"}, {"DIM_I", "DIM_K"}}, {"spad", {"B_src", "0"}, {"DIM_K", "DIM_J"}},
                           {"spad", {"D_src", "0"}, {"DIM_I", "DIM_J"}}},
                .outputs = {{"spad", {"C_dst", "0"}, {"DIM_I", "DIM_J"}}},
                .constraints = {"DIM_I >= 1", "DIM_J >= 1", "DIM_K >= 1"},
                .semantics = R"(ENTRY mac8 {
  %In1 = s8[`DIM_I`, `DIM_K`] parameter(0)
  %In2 = s8[`DIM_K`, `DIM_J`] parameter(1)
  %In3 = s8[`DIM_I`, `DIM_J`] parameter(2)
  %dot = s8[`DIM_I`, `DIM_J`] dot(%In1, %In2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %Out0 = s8[`DIM_I`, `DIM_J`] add(%dot, %In3)
})",
                .cost = "16 + DIM_I"},
    // C = A . B + D in s32: A, B s8 in spad, D and C s32 in acc.
    Instruction{.name = "mac32", .alpha = {"DIM_I", "DIM_J", "DIM_K"}, .beta = {"C_dst", "A_src", "B_src", "D_src"},
                .inputs = {{"spad", {"A_src", "0"}, {"DIM_I", "DIM_K"}}, {"spad", {"B_src", "0"}, {"DIM_K", "DIM_J"}},
                           {"acc", {"D_src", "0"}, {"DIM_I", "DIM_J"}}},
                .outputs = {{"acc", {"C_dst", "0"}, {"DIM_I", "DIM_J"}}},
                .constraints = {"DIM_I >= 1", "DIM_J >= 1", "DIM_K >= 1"},
                .semantics = R"(ENTRY mac32 {
  %In1 = s8[`DIM_I`, `DIM_K`] parameter(0)
  %In2 = s8[`DIM_K`, `DIM_J`] parameter(1)
  %In3 = s32[`DIM_I`, `DIM_J`] parameter(2)
  %a = s32[`DIM_I`, `DIM_K`] convert(%In1)
  %b = s32[`DIM_K`, `DIM_J`] convert(%In2)
  %dot = s32[`DIM_I`, `DIM_J`] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %Out0 = s32[`DIM_I`, `DIM_J`] add(%dot, %In3)
})",
                .cost = "16 + DIM_I"},
};

template <std::size_t A, std::size_t B>
constexpr std::array<Instruction, A + B> concat(const std::array<Instruction, A>& a, const std::array<Instruction, B>& b) {
  std::array<Instruction, A + B> out{};
  for (std::size_t i = 0; i < A; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < B; ++i) out[A + i] = b[i];
  return out;
}

inline constexpr std::array kBuffers{
    hbm("d0", 1 << 20),
    Buffer{.name = "spad", .access_dims = {16384, 16}, .unit_dims = {}, .dtype = DType::s8},
    Buffer{.name = "acc", .access_dims = {1024, 16}, .unit_dims = {}, .dtype = DType::s32},
};

// The loads with scale 1 as assembler macros (isa/expansion.hpp) of `gemmini`: phase 1 does not
// take `multiply(x, broadcast(c))` with a constant c that is 1 for some alpha as x, so a scaled
// load never matches a kernel that does not multiply (every kernel of kernels/gemmini-act/). The
// macros' semantics are the loads' at scale = 1; sim::expand_macros turns a program into the 13
// instructions of the artifact (`mvin_spad_unit(rows = 16, ...)` -> `mvin_spad(rows = 16, cols =
// 16, scale = 1, ...)`), and the simulator runs either form.

}  // namespace gemmini_detail

struct Gemmini {
  static constexpr std::string_view name = "gemmini";
  static constexpr auto buffers = gemmini_detail::kBuffers;
  static constexpr auto instructions = gemmini_detail::concat(
      gemmini_detail::concat(gemmini_detail::kScaledLoads, gemmini_detail::kStoresAndMatmuls), gemmini_detail::kUnitMacros);
  static constexpr std::array expansions{
      Expansion{"mvin_spad_unit", {"mvin_spad(rows = rows, cols = cols, scale = 1, hbm_addr = hbm_addr, sp_addr = sp_addr)"}},
      Expansion{"mvin_acc_unit", {"mvin_acc(rows = rows, cols = cols, scale = 1, hbm_addr = hbm_addr, acc_addr = acc_addr)"}},
      Expansion{"mvin_acc_low_unit", {"mvin_acc_low(rows = rows, cols = cols, scale = 1, hbm_addr = hbm_addr, acc_addr = acc_addr)"}},
  };
};

// Gemmini with every load's scale fixed to 1 (no `scale` attribute, no multiply, no macros): the
// 13 instructions as the programs of `gemmini` use them, for the library baseline and tables.
struct GemminiUnitScale {
  static constexpr std::string_view name = "gemmini_unit_scale";
  static constexpr auto buffers = gemmini_detail::kBuffers;
  static constexpr auto instructions = gemmini_detail::concat(gemmini_detail::kUnitLoads, gemmini_detail::kStoresAndMatmuls);
};

}  // namespace act::isa

ACT_VALIDATE_ISA(act::isa::Gemmini);
ACT_VALIDATE_ISA(act::isa::GemminiUnitScale);
