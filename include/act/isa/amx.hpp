// Intel AMX (AMX-INT8) + AVX-512 FP32: the ISA of the paper's oneDNN kernels K1-K5 (App. G),
// after the TAIDL artifact's accelerators/amx/TAIDL_amx.py, with Intel's semantics where the
// artifact simplified (docs/isa-amx.md lists every deviation and the cost sources).
//
//   d0   HBM, u8[1 MiB], byte-addressed
//   tmm  tile registers tmm0..7: 8 units of s8[16, 64] (16 rows x 64 bytes; palette 1, full tiles)
//   zmm  vector registers zmm0..31: 32 units of f32[16]
//
// A register is one unit of its buffer, so a register number is an access-dim start (tmm[dst:+1])
// and phase 2 allocates registers like rows of a scratchpad. Integers in zmm lanes are raw bits
// in f32 lanes (bitcast), as the artifact keeps them. Names follow the paper's listings:
// `tileloadd(dst = tmm4, mem_addr = 0x0000)`, `vfmadd231ps(dst, src0, src1)`; register operands
// are written as their number (tmm4 -> 4).
// Alpha: `stride` of tileloadd/tilestored (it shapes the data) and the immediate of
// vbroadcastss_imm. Everything else is beta.
// cost: reciprocal throughput in half cycles on Sapphire Rapids (docs/isa-amx.md).
#pragma once

#include <array>
#include <string_view>

#include "act/isa/amx_c.hpp"
#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"

namespace act::isa {

struct Amx {
  static constexpr std::string_view name = "amx";
  // Each instruction as C intrinsics, for `act compile --format c` and `act run` (isa/amx_c.hpp).
  static constexpr const CMapping* c_mapping = &kAmxC;

  static constexpr std::array buffers{
      hbm("d0", 1 << 20),
      Buffer{.name = "tmm", .access_dims = {8}, .unit_dims = {16, 64}, .dtype = DType::s8},
      Buffer{.name = "zmm", .access_dims = {32}, .unit_dims = {16}, .dtype = DType::f32},
  };

  static constexpr std::array instructions{
      // ---------------------------------------------------------------- AMX-INT8 (tiles)

      Instruction{.name = "tilezero", .beta = {"dst"},
                  .outputs = {{"tmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY tilezero {
  %z = s8[] constant(0)
  ROOT %Out0 = s8[1, 16, 64] broadcast(%z), dimensions={}
})",
                  .cost = "2"},

      // 16 rows of 64 bytes, row r at mem_addr + r * stride (Intel TILELOADD with a full tile).
      // The data slice is the (16 * stride)-byte window, so 16 rows of `stride` bytes are sliced
      // to their first 64; the window's last stride - 64 bytes are read but unused.
      // Overlapping rows (stride < 64) are not modelled.
      Instruction{.name = "tileloadd", .alpha = {"stride"}, .beta = {"dst", "mem_addr"},
                  .inputs = {{"d0", {"mem_addr"}, {"16 * stride"}}},
                  .outputs = {{"tmm", {"dst"}, {"1"}}},
                  .constraints = {"stride >= 64"},
                  .semantics = R"(ENTRY tileloadd {
  %In1 = u8[`16 * stride`] parameter(0)
  %rows = u8[16, `stride`] reshape(%In1)
  %tile = u8[16, 64] slice(%rows), slice={[0:16], [0:64]}
  %bytes = s8[16, 64] bitcast-convert(%tile)
  ROOT %Out0 = s8[1, 16, 64] reshape(%bytes)
})",
                  .cost = "16"},

      // The inverse: row r to mem_addr + r * stride. The bytes between rows keep their value, so
      // the window is read too (In2) and the rows are written over its first 64 columns.
      Instruction{.name = "tilestored", .alpha = {"stride"}, .beta = {"src", "mem_addr"},
                  .inputs = {{"tmm", {"src"}, {"1"}}, {"d0", {"mem_addr"}, {"16 * stride"}}},
                  .outputs = {{"d0", {"mem_addr"}, {"16 * stride"}}},
                  .constraints = {"stride >= 64"},
                  .semantics = R"(ENTRY tilestored {
  %In1 = s8[1, 16, 64] parameter(0)
  %In2 = u8[`16 * stride`] parameter(1)
  %tile = s8[16, 64] reshape(%In1)
  %rows = u8[16, 64] bitcast-convert(%tile)
  %old = u8[16, `stride`] reshape(%In2)
  %zero = s32[] constant(0)
  %new = u8[16, `stride`] dynamic-update-slice(%old, %rows, %zero, %zero)
  ROOT %Out0 = u8[`16 * stride`] reshape(%new)
})",
                  .cost = "32"},

      // C[m, n] += sum_{k<16, j<4} u8(A[m, 4k + j]) * s8(B[k, 4n + j]) in s32 (wrapping), with
      // A = tmm[src0], B = tmm[src1] (VNNI: 4 consecutive K values per dword), C = tmm[dst] as
      // s32[16, 16]. Intel raises #UD unless dst, src0, src1 are distinct.
      Instruction{.name = "tdpbusd", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"tmm", {"src0"}, {"1"}}, {"tmm", {"src1"}, {"1"}}, {"tmm", {"dst"}, {"1"}}},
                  .outputs = {{"tmm", {"dst"}, {"1"}}},
                  .constraints = {"dst != src0", "dst != src1", "src0 != src1"},
                  .semantics = R"(ENTRY tdpbusd {
  %In1 = s8[1, 16, 64] parameter(0)
  %In2 = s8[1, 16, 64] parameter(1)
  %In3 = s8[1, 16, 64] parameter(2)
  %a8 = s8[16, 64] reshape(%In1)
  %au = u8[16, 64] bitcast-convert(%a8)
  %a = s32[16, 64] convert(%au)
  %b4 = s8[16, 16, 4] reshape(%In2)
  %bt = s8[16, 4, 16] transpose(%b4), dimensions={0,2,1}
  %b8 = s8[64, 16] reshape(%bt)
  %b = s32[64, 16] convert(%b8)
  %ab = s32[16, 16] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c4 = s8[16, 16, 4] reshape(%In3)
  %c = s32[16, 16] bitcast-convert(%c4)
  %sum = s32[16, 16] add(%ab, %c)
  %out = s8[16, 16, 4] bitcast-convert(%sum)
  ROOT %Out0 = s8[1, 16, 64] reshape(%out)
})",
                  .cost = "32"},

      // ---------------------------------------------------------------- AVX-512 moves

      // Bitwise xor of the lane bits (vpxord x, x, x zeroes a register).
      Instruction{.name = "vpxord", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vpxord {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  %a = s32[1, 16] bitcast-convert(%In1)
  %b = s32[1, 16] bitcast-convert(%In2)
  %x = s32[1, 16] xor(%a, %b)
  ROOT %Out0 = f32[1, 16] bitcast-convert(%x)
})",
                  .cost = "1"},

      Instruction{.name = "vmovaps", .beta = {"dst", "src"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vmovaps {
  %In1 = f32[1, 16] parameter(0)
  ROOT %Out0 = f32[1, 16] copy(%In1)
})",
                  .cost = "1"},

      // 64 bytes (16 f32, little-endian) from HBM, any alignment.
      Instruction{.name = "vmovupsz", .beta = {"dst", "mem_addr"},
                  .inputs = {{"d0", {"mem_addr"}, {"64"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vmovupsz {
  %In1 = u8[64] parameter(0)
  %b = u8[16, 4] reshape(%In1)
  %f = f32[16] bitcast-convert(%b)
  ROOT %Out0 = f32[1, 16] reshape(%f)
})",
                  .cost = "1"},

      // The store form of vmovupsz (the paper's listings print both as vmovupsz).
      Instruction{.name = "vmovupsz_store", .beta = {"src", "mem_addr"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"d0", {"mem_addr"}, {"64"}}},
                  .semantics = R"(ENTRY vmovupsz_store {
  %In1 = f32[1, 16] parameter(0)
  %f = f32[16] reshape(%In1)
  %b = u8[16, 4] bitcast-convert(%f)
  ROOT %Out0 = u8[64] reshape(%b)
})",
                  .cost = "2"},

      // Lane 0 of src to all 16 lanes.
      Instruction{.name = "vbroadcastss", .beta = {"dst", "src"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vbroadcastss {
  %In1 = f32[1, 16] parameter(0)
  %lane = f32[1, 1] slice(%In1), slice={[0:1], [0:1]}
  %x = f32[] reshape(%lane)
  ROOT %Out0 = f32[1, 16] broadcast(%x), dimensions={}
})",
                  .cost = "2"},

      // One f32 from HBM to all 16 lanes.
      Instruction{.name = "vbroadcastssl", .beta = {"dst", "mem_addr"},
                  .inputs = {{"d0", {"mem_addr"}, {"4"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vbroadcastssl {
  %In1 = u8[4] parameter(0)
  %x = f32[] bitcast-convert(%In1)
  ROOT %Out0 = f32[1, 16] broadcast(%x), dimensions={}
})",
                  .cost = "1"},

      // The 32-bit pattern imm_hi * 65536 + imm_lo in all 16 lanes: oneDNN's
      // `mov ebx, imm; vmovq xmm, rbx; vbroadcastss zmm, xmm` as one instruction. Semantics
      // shapes are the only place alpha reaches, so each 16-bit half is counted out as the sum
      // of that many ones.
      Instruction{.name = "vbroadcastss_imm", .alpha = {"imm_hi", "imm_lo"}, .beta = {"dst"},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .constraints = {"imm_hi >= 0", "imm_hi <= 65535", "imm_lo >= 0", "imm_lo <= 65535"},
                  .semantics = R"(ENTRY vbroadcastss_imm {
  %one = s32[] constant(1)
  %hi_ones = s32[`imm_hi`] broadcast(%one), dimensions={}
  %hi = s32[] reduce_add(%hi_ones), dimensions={0}
  %lo_ones = s32[`imm_lo`] broadcast(%one), dimensions={}
  %lo = s32[] reduce_add(%lo_ones), dimensions={0}
  %shift = s32[] constant(65536)
  %high = s32[] multiply(%hi, %shift)
  %bits = s32[] add(%high, %lo)
  %x = f32[] bitcast-convert(%bits)
  ROOT %Out0 = f32[1, 16] broadcast(%x), dimensions={}
})",
                  .cost = "4"},

      // ---------------------------------------------------------------- AVX-512 FP32 arithmetic

      Instruction{.name = "vaddps", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vaddps {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  ROOT %Out0 = f32[1, 16] add(%In1, %In2)
})",
                  .cost = "1"},

      // vaddps with its second source read from HBM (64 bytes).
      Instruction{.name = "vaddpsz", .beta = {"dst", "src0", "mem_addr"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"d0", {"mem_addr"}, {"64"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vaddpsz {
  %In1 = f32[1, 16] parameter(0)
  %In2 = u8[64] parameter(1)
  %b = u8[1, 16, 4] reshape(%In2)
  %m = f32[1, 16] bitcast-convert(%b)
  ROOT %Out0 = f32[1, 16] add(%In1, %m)
})",
                  .cost = "1"},

      Instruction{.name = "vsubps", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vsubps {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  ROOT %Out0 = f32[1, 16] subtract(%In1, %In2)
})",
                  .cost = "1"},

      Instruction{.name = "vmulps", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vmulps {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  ROOT %Out0 = f32[1, 16] multiply(%In1, %In2)
})",
                  .cost = "1"},

      Instruction{.name = "vmulpsz", .beta = {"dst", "src0", "mem_addr"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"d0", {"mem_addr"}, {"64"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vmulpsz {
  %In1 = f32[1, 16] parameter(0)
  %In2 = u8[64] parameter(1)
  %b = u8[1, 16, 4] reshape(%In2)
  %m = f32[1, 16] bitcast-convert(%b)
  ROOT %Out0 = f32[1, 16] multiply(%In1, %m)
})",
                  .cost = "1"},

      Instruction{.name = "vdivps", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vdivps {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  ROOT %Out0 = f32[1, 16] divide(%In1, %In2)
})",
                  .cost = "20"},

      // XLA maximum/minimum: equal to Intel's for ordered, non-zero-tie inputs (NaN and +-0
      // differ: Intel returns the second source; docs/isa-amx.md).
      Instruction{.name = "vmaxps", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vmaxps {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  ROOT %Out0 = f32[1, 16] maximum(%In1, %In2)
})",
                  .cost = "1"},

      Instruction{.name = "vmaxpsz", .beta = {"dst", "src0", "mem_addr"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"d0", {"mem_addr"}, {"64"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vmaxpsz {
  %In1 = f32[1, 16] parameter(0)
  %In2 = u8[64] parameter(1)
  %b = u8[1, 16, 4] reshape(%In2)
  %m = f32[1, 16] bitcast-convert(%b)
  ROOT %Out0 = f32[1, 16] maximum(%In1, %m)
})",
                  .cost = "1"},

      Instruction{.name = "vminps", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vminps {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  ROOT %Out0 = f32[1, 16] minimum(%In1, %In2)
})",
                  .cost = "1"},

      // dst = src0 * src1 + dst. Modelled as an f32 multiply then an f32 add (two roundings, as
      // XLA's dot accumulates); the hardware rounds once (docs/isa-amx.md).
      Instruction{.name = "vfmadd231ps", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}, {"zmm", {"dst"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vfmadd231ps {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  %In3 = f32[1, 16] parameter(2)
  %p = f32[1, 16] multiply(%In1, %In2)
  ROOT %Out0 = f32[1, 16] add(%p, %In3)
})",
                  .cost = "1"},

      // dst = (src1 < src2) ? src0 : src2 per lane: vcmpltps k, src1, src2 + vblendmps, the
      // artifact's `select` (its operand order).
      Instruction{.name = "vblendmps_lt", .beta = {"dst", "src0", "src1", "src2"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}, {"zmm", {"src2"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vblendmps_lt {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  %In3 = f32[1, 16] parameter(2)
  %lt = pred[1, 16] compare(%In2, %In3), direction=LT
  ROOT %Out0 = f32[1, 16] select(%lt, %In1, %In3)
})",
                  .cost = "3"},

      // ---------------------------------------------------------------- AVX-512 integer lanes

      // s32 lane add (wrapping) on the raw lane bits.
      Instruction{.name = "vpaddd", .beta = {"dst", "src0", "src1"},
                  .inputs = {{"zmm", {"src0"}, {"1"}}, {"zmm", {"src1"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vpaddd {
  %In1 = f32[1, 16] parameter(0)
  %In2 = f32[1, 16] parameter(1)
  %a = s32[1, 16] bitcast-convert(%In1)
  %b = s32[1, 16] bitcast-convert(%In2)
  %c = s32[1, 16] add(%a, %b)
  ROOT %Out0 = f32[1, 16] bitcast-convert(%c)
})",
                  .cost = "1"},

      // s32 lane bits to f32 values, rounding to nearest even.
      Instruction{.name = "vcvtdq2ps", .beta = {"dst", "src"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vcvtdq2ps {
  %In1 = f32[1, 16] parameter(0)
  %i = s32[1, 16] bitcast-convert(%In1)
  ROOT %Out0 = f32[1, 16] convert(%i)
})",
                  .cost = "2"},

      // f32 to s32 lane bits, rounding to nearest even (MXCSR's default mode).
      Instruction{.name = "vcvtps2dq", .beta = {"dst", "src"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vcvtps2dq {
  %In1 = f32[1, 16] parameter(0)
  %r = f32[1, 16] round-nearest-even(%In1)
  %i = s32[1, 16] convert(%r)
  ROOT %Out0 = f32[1, 16] bitcast-convert(%i)
})",
                  .cost = "2"},

      // f32 to s32 lane bits, truncating toward zero (XLA's float -> int convert).
      Instruction{.name = "vcvttps2dq", .beta = {"dst", "src"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"zmm", {"dst"}, {"1"}}},
                  .semantics = R"(ENTRY vcvttps2dq {
  %In1 = f32[1, 16] parameter(0)
  %i = s32[1, 16] convert(%In1)
  ROOT %Out0 = f32[1, 16] bitcast-convert(%i)
})",
                  .cost = "2"},

      // 16 lanes read as UNSIGNED dwords, saturated to 255, stored as 16 bytes (VPMOVUSDB m128).
      Instruction{.name = "vpmovusdbx", .beta = {"src", "mem_addr"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"d0", {"mem_addr"}, {"16"}}},
                  .semantics = R"(ENTRY vpmovusdbx {
  %In1 = f32[1, 16] parameter(0)
  %f = f32[16] reshape(%In1)
  %u = u32[16] bitcast-convert(%f)
  %max = u32[] constant(255)
  %maxes = u32[16] broadcast(%max), dimensions={}
  %sat = u32[16] minimum(%u, %maxes)
  ROOT %Out0 = u8[16] convert(%sat)
})",
                  .cost = "4"},

      // 16 lanes read as signed dwords, saturated to [-128, 127], stored as 16 bytes (VPMOVSDB m128).
      Instruction{.name = "vpmovsdbx", .beta = {"src", "mem_addr"},
                  .inputs = {{"zmm", {"src"}, {"1"}}},
                  .outputs = {{"d0", {"mem_addr"}, {"16"}}},
                  .semantics = R"(ENTRY vpmovsdbx {
  %In1 = f32[1, 16] parameter(0)
  %f = f32[16] reshape(%In1)
  %i = s32[16] bitcast-convert(%f)
  %lo = s32[] constant(-128)
  %hi = s32[] constant(127)
  %sat = s32[16] clamp(%lo, %i, %hi)
  %b = s8[16] convert(%sat)
  ROOT %Out0 = u8[16] bitcast-convert(%b)
})",
                  .cost = "4"},
  };
};

}  // namespace act::isa

ACT_VALIDATE_ISA(act::isa::Amx);
