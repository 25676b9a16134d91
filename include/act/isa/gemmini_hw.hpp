// Gemmini's hardware ISA at DIM = 16, after the TAIDL v1 specification of the MICRO'25 artifact
// (accelerators/gemmini/TAIDL_gemmini.py; reference/isa_facts.md §2.3): weights and bias
// registers, the dataflow and preload state, `matmul_preload` followed by a compute that reads
// what the preload latched, strided mvin/mvout. Capacities are the real ones of the artifact's
// gemmini_params_16.h (BANK_NUM 4 x BANK_ROWS 4096 scratchpad rows, ACC_ROWS 1024 * 16):
//
//   d0       HBM, u8[1 MiB], byte-addressed
//   sp       scratchpad: 16384 rows of s8[16]
//   acc      accumulator: 16384 rows of s32[16]
//   weights  the systolic array's stationary B (WS): 16 rows of s8[16]
//   bias     the array's s32 partial sums (OS accumulation): 16 rows of s32[16]
//   state    s_dataflow (0 OS, 1 WS), s_preload (1 between a preload and its compute), s_rs1,
//            s_rs2 (the addresses the last preload latched). TAIDL's `@s.x` is `s_x` here: act
//            does not let an attribute and a register share a name (TAIDL has both rs1's).
//
// How the state reaches the generic pipeline: the stateful instructions write several slices
// (C, the bias and weights registers) at addresses a *previous* instruction latched, which no
// pii node can express. The two macros at the end (isa/expansion.hpp) are what phase 1 and 2
// use: `matmul8_os` = dataflow_config(0) + matmul_preload + matmul8_compute_preloaded_os and
// `matmul32_ws` = dataflow_config(1) + matmul_preload + matmul32_compute_accumulated, each a
// function of its own slices. sim::expand_macros turns a compiled program into hardware
// instructions (dropping dataflow_configs that change nothing). Phase 1 skips the stateful
// instructions by itself (they have zero or several outputs). The macros' expansions also
// overwrite `bias` and `weights`, which no macro reads: values never live there in compiled code.
//
// TAIDL constructs act has no spelling for: `IF(@a.x)` on an attribute becomes one instruction
// per branch (mvin_acc_stride / mvin_acc_repeat, bias_load / bias_load_s8, ...); `IF(@s.dataflow)`
// becomes one instruction per dataflow, constrained to it (..._os, ..._ws; both encode as the
// same RoCC command). Strides keep TAIDL's units (bytes for sp, s32 elements for acc and bias).
//
// The specification's slips, fixed here:
// 1. acc had 64 * DIM = 1024 rows; gemmini_params_16.h has ACC_ROWS = 1024 * 16.
// 2. bias_load (s8 branch) converted the wrong value (`%Out.32 = convert(%Out.32)`, typed s8);
//    bias_load_s8 widens the loaded s8 block.
// 3. mvin_acc_stride's repeating bias and bias_load_repeat broadcast the vector along dim 0
//    (out[i, j] = v[i]); a repeated bias row is out[i, j] = v[j] (every row the vector).
// 4. matmul8_compute_accumulated in OS read B at the preload's rs1 (the revision after the
//    first one changed it from rs2): in OS, rs1 of a compute is A and rs2 is B (as in
//    compute_preloaded and Gemmini's COMPUTE_AND_STAY); B is sp[rs2].
// 5. matmul32_compute_accumulated did not record B in `weights`, unlike every other compute:
//    in WS the preload loads B into the array, which a later compute_accumulated reuses.
// 6. mvin_acc_stride's `tiles` is dropped: MAX_BLOCK_LEN_ACC = 64 / (16 * 4) = 1, one block.
// 7. mvout_spad moves at most DIM rows (one block), and its HBM rows need stride >= 16 only
//    (the specification reshaped by stride / 16, requiring a multiple of 16).
// Kept as specified: mvin_spad reads the whole 16 * stride window (the last row's unused bytes
// too) and needs stride to be a multiple of 16 * tiles; mvout_acc_stride writes the value
// saturated to [-128, 127] as a 4-byte s32 (the artifact's exo goldens hold such int32 outputs;
// the hardware's default writes one saturated byte, its full-width mode the raw s32).
// Left out: softmax, gelu, layernorm, add and transpose of the I-BERT kernel: HBM-to-HBM
// operations of the host side, not Gemmini RoCC instructions.
//
// cost: cycles (isa/gemmini_timing.hpp states the numbers and their sources): a DMA transfer
// costs 16 cycles of latency plus one cycle per 16-byte beat of the 128-bit bus; preload and
// compute each stream DIM = 16 rows through the 16x16 array, one per cycle.
#pragma once

#include <array>
#include <string_view>

#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"

namespace act::isa {

namespace gemmini_hw_detail {

// The matmul8 computes' data path, shared by both dataflows: C32 = A.B + D in s32; C8 is C32
// saturated to s8. Out0 = C8 (to sp at the latched rs2), Out1 = C32 (bias), Out2 = B (weights).
#define ACT_GEMMINI_MATMUL8(NAME, D_TYPE, D_WIDEN) \
  "ENTRY " NAME " {\n"                                                                                \
  "  %In1 = s8[16, 16] parameter(0)\n"                                                                \
  "  %In2 = s8[16, 16] parameter(1)\n"                                                                \
  "  %In3 = " D_TYPE "[16, 16] parameter(2)\n"                                                        \
  "  %a = s32[16, 16] convert(%In1)\n"                                                                \
  "  %b = s32[16, 16] convert(%In2)\n"                                                                \
  "  %d = s32[16, 16] " D_WIDEN "(%In3)\n"                                                            \
  "  %ab = s32[16, 16] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"             \
  "  %Out1 = s32[16, 16] add(%ab, %d)\n"                                                              \
  "  %lo = s32[] constant(-128)\n"                                                                    \
  "  %hi = s32[] constant(127)\n"                                                                     \
  "  %sat = s32[16, 16] clamp(%lo, %Out1, %hi)\n"                                                     \
  "  ROOT %Out0 = s8[16, 16] convert(%sat)\n"                                                         \
  "  %Out2 = s8[16, 16] copy(%In2)\n"                                                                 \
  "}"

}  // namespace gemmini_hw_detail

struct GemminiHw {
  static constexpr std::string_view name = "gemmini_hw";

  static constexpr std::array buffers{
      hbm("d0", 1 << 20),
      Buffer{.name = "sp", .access_dims = {16384}, .unit_dims = {16}, .dtype = DType::s8},
      Buffer{.name = "acc", .access_dims = {16384}, .unit_dims = {16}, .dtype = DType::s32},
      Buffer{.name = "weights", .access_dims = {16}, .unit_dims = {16}, .dtype = DType::s8},
      Buffer{.name = "bias", .access_dims = {16}, .unit_dims = {16}, .dtype = DType::s32},
  };

  static constexpr std::array state{
      StateRegister{"s_dataflow", 0},
      StateRegister{"s_preload", 0},
      StateRegister{"s_rs1", -1},
      StateRegister{"s_rs2", 0},
  };

  static constexpr std::array instructions{
      // ---------------------------------------------------------------- DMA: HBM -> sp / acc / bias

      // A 16 x (16 * tiles) block of a row-major s8 matrix with row pitch `stride` bytes: each
      // 16-wide column block becomes 16 consecutive sp rows (row sp_addr + 16 t + m holds
      // M[m, 16 t : 16 t + 16]). MAX_BLOCK_LEN = 64 / 16 = 4 blocks.
      Instruction{.name = "mvin_spad", .alpha = {"tiles", "stride"}, .beta = {"hbm_addr", "sp_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"16 * stride"}}},
                  .outputs = {{"sp", {"sp_addr"}, {"16 * tiles"}}},
                  .constraints = {"tiles >= 1", "tiles <= 4", "stride >= 16 * tiles", "stride % (16 * tiles) == 0"},
                  .semantics = R"(ENTRY mvin_spad {
  %In1 = u8[`16 * stride`] parameter(0)
  %lines = u8[16, `stride`] reshape(%In1)
  %rows = u8[16, `stride / (16 * tiles)`, `16 * tiles`] reshape(%lines)
  %first = u8[16, 1, `16 * tiles`] slice(%rows), dimensions=[:, 0, :]
  %blocks = u8[16, `tiles`, 16] reshape(%first)
  %t = u8[`tiles`, 16, 16] transpose(%blocks), dimensions={1,0,2}
  %r = u8[`16 * tiles`, 16] reshape(%t)
  ROOT %Out0 = s8[`16 * tiles`, 16] bitcast-convert(%r)
})",
                  .cost = "16 + 16 * tiles"},

      // 16 rows of 16 s32 from an s32 matrix with row pitch `stride` elements (TAIDL's
      // repeating_bias = 0).
      Instruction{.name = "mvin_acc_stride", .alpha = {"stride"}, .beta = {"hbm_addr", "acc_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"64 * stride"}}},
                  .outputs = {{"acc", {"acc_addr"}, {"16"}}},
                  .constraints = {"stride >= 16"},
                  .semantics = R"(ENTRY mvin_acc_stride {
  %In1 = u8[`64 * stride`] parameter(0)
  %lines = u8[16, `stride`, 4] reshape(%In1)
  %b = u8[16, 16, 4] slice(%lines), slice={[0:16], [0:16], [0:4]}
  ROOT %Out0 = s32[16, 16] bitcast-convert(%b)
})",
                  .cost = "16 + 64"},

      // One row of 16 s32 repeated into 16 acc rows (TAIDL's repeating_bias = 1; slip 3 fixed).
      Instruction{.name = "mvin_acc_repeat", .beta = {"hbm_addr", "acc_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"64"}}},
                  .outputs = {{"acc", {"acc_addr"}, {"16"}}},
                  .semantics = R"(ENTRY mvin_acc_repeat {
  %In1 = u8[64] parameter(0)
  %b = u8[16, 4] reshape(%In1)
  %v = s32[16] bitcast-convert(%b)
  ROOT %Out0 = s32[16, 16] broadcast(%v), dimensions={1}
})",
                  .cost = "16 + 4"},

      // 16 * rows contiguous acc rows from rows * 1 KiB of HBM (the kernels clear acc with it).
      Instruction{.name = "mvin_acc", .alpha = {"rows"}, .beta = {"hbm_addr", "acc_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"rows * 1024"}}},
                  .outputs = {{"acc", {"acc_addr"}, {"16 * rows"}}},
                  .constraints = {"rows >= 1"},
                  .semantics = R"(ENTRY mvin_acc {
  %In1 = u8[`rows * 1024`] parameter(0)
  %blocks = u8[`rows`, 16, 16, 4] reshape(%In1)
  %r = u8[`16 * rows`, 16, 4] reshape(%blocks)
  ROOT %Out0 = s32[`16 * rows`, 16] bitcast-convert(%r)
})",
                  .cost = "16 + 64 * rows"},

      // The bias register from 16 rows of an s32 matrix (pitch `stride` elements).
      Instruction{.name = "bias_load", .alpha = {"stride"}, .beta = {"hbm_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"64 * stride"}}},
                  .outputs = {{"bias", {"0"}, {"16"}}},
                  .constraints = {"stride >= 16"},
                  .semantics = R"(ENTRY bias_load {
  %In1 = u8[`64 * stride`] parameter(0)
  %lines = u8[16, `stride`, 4] reshape(%In1)
  %b = u8[16, 16, 4] slice(%lines), slice={[0:16], [0:16], [0:4]}
  ROOT %Out0 = s32[16, 16] bitcast-convert(%b)
})",
                  .cost = "16 + 64"},

      // The bias register from 16 rows of an s8 matrix (pitch `stride` bytes), widened (slip 2).
      Instruction{.name = "bias_load_s8", .alpha = {"stride"}, .beta = {"hbm_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"16 * stride"}}},
                  .outputs = {{"bias", {"0"}, {"16"}}},
                  .constraints = {"stride >= 16"},
                  .semantics = R"(ENTRY bias_load_s8 {
  %In1 = u8[`16 * stride`] parameter(0)
  %lines = u8[16, `stride`] reshape(%In1)
  %b = u8[16, 16] slice(%lines), slice={[0:16], [0:16]}
  %s = s8[16, 16] bitcast-convert(%b)
  ROOT %Out0 = s32[16, 16] convert(%s)
})",
                  .cost = "16 + 16"},

      // One s32 row repeated into every row of the bias register (slip 3).
      Instruction{.name = "bias_load_repeat", .beta = {"hbm_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"64"}}},
                  .outputs = {{"bias", {"0"}, {"16"}}},
                  .semantics = R"(ENTRY bias_load_repeat {
  %In1 = u8[64] parameter(0)
  %b = u8[16, 4] reshape(%In1)
  %v = s32[16] bitcast-convert(%b)
  ROOT %Out0 = s32[16, 16] broadcast(%v), dimensions={1}
})",
                  .cost = "16 + 4"},

      Instruction{.name = "bias_load_repeat_s8", .beta = {"hbm_addr"},
                  .inputs = {{"d0", {"hbm_addr"}, {"16"}}},
                  .outputs = {{"bias", {"0"}, {"16"}}},
                  .semantics = R"(ENTRY bias_load_repeat_s8 {
  %In1 = u8[16] parameter(0)
  %s = s8[16] bitcast-convert(%In1)
  %v = s32[16] convert(%s)
  ROOT %Out0 = s32[16, 16] broadcast(%v), dimensions={1}
})",
                  .cost = "16 + 1"},

      // ---------------------------------------------------------------- DMA: sp / acc -> HBM

      // `rows` sp rows to HBM rows of pitch `stride` bytes; the bytes between rows keep their
      // value (the window is read too).
      Instruction{.name = "mvout_spad", .alpha = {"stride", "rows"}, .beta = {"hbm_addr", "sp_addr"},
                  .inputs = {{"sp", {"sp_addr"}, {"rows"}}, {"d0", {"hbm_addr"}, {"rows * stride"}}},
                  .outputs = {{"d0", {"hbm_addr"}, {"rows * stride"}}},
                  .constraints = {"rows >= 1", "rows <= 16", "stride >= 16"},
                  .semantics = R"(ENTRY mvout_spad {
  %In1 = s8[`rows`, 16] parameter(0)
  %In2 = u8[`rows * stride`] parameter(1)
  %b = u8[`rows`, 16] bitcast-convert(%In1)
  %old = u8[`rows`, `stride`] reshape(%In2)
  %zero = s32[] constant(0)
  %new = u8[`rows`, `stride`] dynamic-update-slice(%old, %b, %zero, %zero)
  ROOT %Out0 = u8[`rows * stride`] reshape(%new)
})",
                  .cost = "16 + rows"},

      // 16 acc rows saturated to [-128, 127], each written as 16 little-endian s32 at row pitch
      // `stride` elements.
      Instruction{.name = "mvout_acc_stride", .alpha = {"stride"}, .beta = {"hbm_addr", "acc_addr"},
                  .inputs = {{"acc", {"acc_addr"}, {"16"}}, {"d0", {"hbm_addr"}, {"64 * stride"}}},
                  .outputs = {{"d0", {"hbm_addr"}, {"64 * stride"}}},
                  .constraints = {"stride >= 16"},
                  .semantics = R"(ENTRY mvout_acc_stride {
  %In1 = s32[16, 16] parameter(0)
  %In2 = u8[`64 * stride`] parameter(1)
  %lo = s32[] constant(-128)
  %hi = s32[] constant(127)
  %sat = s32[16, 16] clamp(%lo, %In1, %hi)
  %bytes = u8[16, 16, 4] bitcast-convert(%sat)
  %old = u8[16, `stride`, 4] reshape(%In2)
  %zero = s32[] constant(0)
  %new = u8[16, `stride`, 4] dynamic-update-slice(%old, %bytes, %zero, %zero, %zero)
  ROOT %Out0 = u8[`64 * stride`] reshape(%new)
})",
                  .cost = "16 + 64"},

      // ---------------------------------------------------------------- configuration and state

      Instruction{.name = "dataflow_config", .alpha = {"dataflow"},
                  .constraints = {"dataflow >= 0", "dataflow <= 1"},
                  .updates = {{"s_dataflow", "dataflow"}},
                  .cost = "4"},

      // Latches two sp (or acc) addresses for the next compute: in OS, D (rs1) and C (rs2); in
      // WS, B (rs1, loaded into the array) and C (rs2).
      Instruction{.name = "matmul_preload", .beta = {"rs1", "rs2"},
                  .constraints = {"s_preload == 0"},
                  .updates = {{"s_rs1", "rs1"}, {"s_rs2", "rs2"}, {"s_preload", "1"}},
                  .cost = "16"},

      // ---------------------------------------------------------------- computes (stateful)

      // OS: A = sp[rs1], B = sp[rs2], D = sp[s_rs1]; C8 -> sp[s_rs2].
      Instruction{.name = "matmul8_compute_preloaded_os", .beta = {"rs1", "rs2"},
                  .inputs = {{"sp", {"rs1"}, {"16"}}, {"sp", {"rs2"}, {"16"}}, {"sp", {"s_rs1"}, {"16"}}},
                  .outputs = {{"sp", {"s_rs2"}, {"16"}}, {"bias", {"0"}, {"16"}}, {"weights", {"0"}, {"16"}}},
                  .constraints = {"s_preload == 1", "s_dataflow == 0"},
                  .updates = {{"s_preload", "0"}},
                  .semantics = ACT_GEMMINI_MATMUL8("matmul8_compute_preloaded_os", "s8", "convert"),
                  .cost = "16"},

      // WS: A = sp[rs1], B = sp[s_rs1] (preloaded), D = sp[rs2]; C8 -> sp[s_rs2].
      Instruction{.name = "matmul8_compute_preloaded_ws", .beta = {"rs1", "rs2"},
                  .inputs = {{"sp", {"rs1"}, {"16"}}, {"sp", {"s_rs1"}, {"16"}}, {"sp", {"rs2"}, {"16"}}},
                  .outputs = {{"sp", {"s_rs2"}, {"16"}}, {"bias", {"0"}, {"16"}}, {"weights", {"0"}, {"16"}}},
                  .constraints = {"s_preload == 1", "s_dataflow == 1"},
                  .updates = {{"s_preload", "0"}},
                  .semantics = ACT_GEMMINI_MATMUL8("matmul8_compute_preloaded_ws", "s8", "convert"),
                  .cost = "16"},

      // OS, accumulating in the array: A = sp[rs1], B = sp[rs2] (slip 4), D = the bias register.
      Instruction{.name = "matmul8_compute_accumulated_os", .beta = {"rs1", "rs2"},
                  .inputs = {{"sp", {"rs1"}, {"16"}}, {"sp", {"rs2"}, {"16"}}, {"bias", {"0"}, {"16"}}},
                  .outputs = {{"sp", {"s_rs2"}, {"16"}}, {"bias", {"0"}, {"16"}}, {"weights", {"0"}, {"16"}}},
                  .constraints = {"s_preload == 1", "s_dataflow == 0"},
                  .updates = {{"s_preload", "0"}},
                  .semantics = ACT_GEMMINI_MATMUL8("matmul8_compute_accumulated_os", "s32", "copy"),
                  .cost = "16"},

      // WS, reusing the weights: A = sp[rs1], B = the weights register, D = sp[rs2].
      Instruction{.name = "matmul8_compute_accumulated_ws", .beta = {"rs1", "rs2"},
                  .inputs = {{"sp", {"rs1"}, {"16"}}, {"weights", {"0"}, {"16"}}, {"sp", {"rs2"}, {"16"}}},
                  .outputs = {{"sp", {"s_rs2"}, {"16"}}, {"bias", {"0"}, {"16"}}, {"weights", {"0"}, {"16"}}},
                  .constraints = {"s_preload == 1", "s_dataflow == 1"},
                  .updates = {{"s_preload", "0"}},
                  .semantics = ACT_GEMMINI_MATMUL8("matmul8_compute_accumulated_ws", "s8", "convert"),
                  .cost = "16"},

      // WS into the accumulator: acc[s_rs2] += A . B with A = sp[rs1], B = sp[s_rs1]; B also
      // becomes the weights (slip 5). rs2 is unused (the kernels pass -1).
      Instruction{.name = "matmul32_compute_accumulated", .beta = {"rs1", "rs2"},
                  .inputs = {{"sp", {"rs1"}, {"16"}}, {"sp", {"s_rs1"}, {"16"}}, {"acc", {"s_rs2"}, {"16"}}},
                  .outputs = {{"acc", {"s_rs2"}, {"16"}}, {"weights", {"0"}, {"16"}}},
                  .constraints = {"s_preload == 1", "s_dataflow == 1"},
                  .updates = {{"s_preload", "0"}},
                  .semantics = R"(ENTRY matmul32_compute_accumulated {
  %In1 = s8[16, 16] parameter(0)
  %In2 = s8[16, 16] parameter(1)
  %In3 = s32[16, 16] parameter(2)
  %a = s32[16, 16] convert(%In1)
  %b = s32[16, 16] convert(%In2)
  %ab = s32[16, 16] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %Out0 = s32[16, 16] add(%ab, %In3)
  %Out1 = s8[16, 16] copy(%In2)
})",
                  .cost = "16"},

      // ---------------------------------------------------------------- macros (isa/expansion.hpp)

      // C = sat8(A . B + D), all s8 in sp: a preload of D and C, then an OS compute.
      Instruction{.name = "matmul8_os", .beta = {"C_dst", "A_src", "B_src", "D_src"},
                  .inputs = {{"sp", {"A_src"}, {"16"}}, {"sp", {"B_src"}, {"16"}}, {"sp", {"D_src"}, {"16"}}},
                  .outputs = {{"sp", {"C_dst"}, {"16"}}},
                  .semantics = R"(ENTRY matmul8_os {
  %In1 = s8[16, 16] parameter(0)
  %In2 = s8[16, 16] parameter(1)
  %In3 = s8[16, 16] parameter(2)
  %a = s32[16, 16] convert(%In1)
  %b = s32[16, 16] convert(%In2)
  %d = s32[16, 16] convert(%In3)
  %ab = s32[16, 16] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c = s32[16, 16] add(%ab, %d)
  %lo = s32[] constant(-128)
  %hi = s32[] constant(127)
  %sat = s32[16, 16] clamp(%lo, %c, %hi)
  ROOT %Out0 = s8[16, 16] convert(%sat)
})",
                  .cost = "32"},

      // acc[C] += A . B in s32: a WS preload of B with C, then matmul32_compute_accumulated.
      Instruction{.name = "matmul32_ws", .beta = {"C_dst", "A_src", "B_src"},
                  .inputs = {{"sp", {"A_src"}, {"16"}}, {"sp", {"B_src"}, {"16"}}, {"acc", {"C_dst"}, {"16"}}},
                  .outputs = {{"acc", {"C_dst"}, {"16"}}},
                  .semantics = R"(ENTRY matmul32_ws {
  %In1 = s8[16, 16] parameter(0)
  %In2 = s8[16, 16] parameter(1)
  %In3 = s32[16, 16] parameter(2)
  %a = s32[16, 16] convert(%In1)
  %b = s32[16, 16] convert(%In2)
  %ab = s32[16, 16] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %Out0 = s32[16, 16] add(%ab, %In3)
})",
                  .cost = "32"},
  };

  // The macros' hardware instructions. A dataflow_config that changes nothing is dropped by
  // sim::expand_macros, so a run of one macro costs one config in total.
  static constexpr std::array expansions{
      Expansion{"matmul8_os", {"dataflow_config(dataflow = 0)", "matmul_preload(rs1 = D_src, rs2 = C_dst)",
                               "matmul8_compute_preloaded_os(rs1 = A_src, rs2 = B_src)"}},
      Expansion{"matmul32_ws", {"dataflow_config(dataflow = 1)", "matmul_preload(rs1 = B_src, rs2 = C_dst)",
                                "matmul32_compute_accumulated(rs1 = A_src, rs2 = 0 - 1)"}},
  };
};

}  // namespace act::isa

#undef ACT_GEMMINI_MATMUL8

ACT_VALIDATE_ISA(act::isa::GemminiHw);
