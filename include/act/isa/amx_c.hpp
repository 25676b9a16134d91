// The `amx` ISA as C: one intrinsic template per instruction of isa/amx.hpp (grammar in
// isa/c_mapping.hpp), the CPU checks (CPUID, XCR0, Linux's per-process permission for tile
// data) and the tile configuration derived from the `tmm` buffer's shape.
//
// Exactness: every template computes what the instruction's semantics in amx.hpp compute, bit
// for bit, also where Intel's instruction differs from the model (docs/isa-amx.md, "Decisions
// and deviations"):
//   vfmadd231ps   the model rounds twice (multiply, then add): emitted as vmulps + vaddps, the
//                 product hidden behind an empty asm so no compiler can fuse them again
//   vmaxps/vminps XLA's NaN propagation and tie rule: the operands swapped (Intel returns the
//                 second source on ties and NaN) plus one masked move for a NaN second operand
//   vcvt(t)ps2dq  XLA's saturating convert: lanes >= 2^31 become INT32_MAX, NaN lanes 0
//                 (Intel writes 0x80000000 for both)
// Everything else maps to its one instruction.
#pragma once

#include <array>

#include "act/isa/c_mapping.hpp"

namespace act::isa {

namespace amx_c_detail {

inline constexpr std::string_view kPrologue = R"(#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* CPU checks: plain code (no AVX), safe to run on any x86-64. */
static inline void act_cpuid(unsigned leaf, unsigned subleaf, unsigned r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(subleaf));
}
/* CPUID.(7,0) register `reg` (0 eax .. 3 edx), bit `bit`. */
static inline int act_leaf7_bit(int reg, int bit) {
  unsigned r[4];
  act_cpuid(0, 0, r);
  if (r[0] < 7) return 0;
  act_cpuid(7, 0, r);
  return (int)((r[reg] >> bit) & 1u);
}
/* XCR0: the state the OS saves on context switches (0 without OSXSAVE). */
static inline uint64_t act_xcr0(void) {
  unsigned r[4], lo, hi;
  act_cpuid(1, 0, r);
  if (!(r[2] & (1u << 27))) return 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}
/* AVX-512F: CPUID.(7,0):EBX[16]; XCR0 saves SSE, AVX, opmask and all ZMM state (bits 1,2,5,6,7). */
static inline int act_avx512f_usable(void) { return act_leaf7_bit(1, 16) && (act_xcr0() & 0xe6) == 0xe6; }
/* AMX-TILE: CPUID.(7,0):EDX[24]; XCR0 bits 17-18 (XTILECFG, XTILEDATA); on Linux the process must
   ask for XTILEDATA once: arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18). */
static inline int act_amx_tile_usable(void) {
#ifdef ACT_EMULATE_AMX
  return 1;
#else
  if (!act_leaf7_bit(3, 24) || (act_xcr0() & 0x60000) != 0x60000) return 0;
#if defined(__linux__)
  return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
  return 1;
#endif
#endif
}
/* AMX-INT8: CPUID.(7,0):EDX[25], on top of AMX-TILE. */
static inline int act_amx_int8_usable(void) {
#ifdef ACT_EMULATE_AMX
  return 1;
#else
  return act_leaf7_bit(3, 25) && act_amx_tile_usable();
#endif
}

#ifdef ACT_EMULATE_AMX
/* Software tiles for testing on CPUs without AMX, written from the pseudo-code of Intel's SDM
   (LDTILECFG, TILELOADD, TILESTORED, TILEZERO, TDPBUSD, TILERELEASE). Not thread safe. */
static struct {
  uint16_t colsb[16];
  uint8_t rows[16];
  uint8_t data[8][16][64];
} act_tiles;
static inline void act_emulated_loadconfig(const void* config) {
  const uint8_t* c = (const uint8_t*)config;
  for (int t = 0; t < 16; ++t) {
    act_tiles.colsb[t] = (uint16_t)(c[16 + 2 * t] | (c[17 + 2 * t] << 8));
    act_tiles.rows[t] = c[48 + t];
  }
  memset(act_tiles.data, 0, sizeof act_tiles.data);
}
static inline void act_emulated_release(void) { memset(&act_tiles, 0, sizeof act_tiles); }
static inline void act_emulated_zero(int t) { memset(act_tiles.data[t], 0, sizeof act_tiles.data[t]); }
static inline void act_emulated_loadd(int t, const void* base, long stride) {
  act_emulated_zero(t);
  for (int r = 0; r < act_tiles.rows[t]; ++r) memcpy(act_tiles.data[t][r], (const uint8_t*)base + r * stride, act_tiles.colsb[t]);
}
static inline void act_emulated_stored(int t, void* base, long stride) {
  for (int r = 0; r < act_tiles.rows[t]; ++r) memcpy((uint8_t*)base + r * stride, act_tiles.data[t][r], act_tiles.colsb[t]);
}
/* dst.dword[m][n] += sum over k, j of u8(a[m][4k+j]) * s8(b[k][4n+j]), wrapping in 32 bits. */
static inline void act_emulated_dpbusd(int dst, int a, int b) {
  for (int m = 0; m < act_tiles.rows[dst]; ++m)
    for (int n = 0; n < act_tiles.colsb[dst] / 4; ++n) {
      uint32_t acc;
      memcpy(&acc, &act_tiles.data[dst][m][4 * n], 4);
      for (int k = 0; k < act_tiles.colsb[a] / 4; ++k)
        for (int j = 0; j < 4; ++j)
          acc += (uint32_t)((int32_t)act_tiles.data[a][m][4 * k + j] * (int32_t)(int8_t)act_tiles.data[b][k][4 * n + j]);
      memcpy(&act_tiles.data[dst][m][4 * n], &acc, 4);
    }
}
#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbusd
#define _tile_loadconfig(config) act_emulated_loadconfig(config)
#define _tile_release() act_emulated_release()
#define _tile_loadd(dst, base, stride) act_emulated_loadd(dst, base, stride)
#define _tile_stored(src, base, stride) act_emulated_stored(src, base, stride)
#define _tile_zero(dst) act_emulated_zero(dst)
#define _tile_dpbusd(dst, a, b) act_emulated_dpbusd(dst, a, b)
#endif
)";

// LDTILECFG's 64-byte operand: palette 1, then per tile its bytes per row (u16 at 16 + 2t) and
// rows (u8 at 48 + t). Static so the stores before the barrier cannot be dropped: GCC's
// _tile_loadconfig only tells the compiler it reads 8 bytes.
inline constexpr std::string_view kTileConfiguration = R"(static uint8_t config[64];
memset(config, 0, sizeof config);
config[0] = 1;
for (int t = 0; t < $tmm.units; ++t) {
  config[16 + 2 * t] = (uint8_t)($tmm.row_bytes & 0xff);
  config[17 + 2 * t] = (uint8_t)($tmm.row_bytes >> 8);
  config[48 + t] = (uint8_t)$tmm.rows;
}
__asm__ volatile("" ::: "memory");
_tile_loadconfig(config);)";

// The XLA maximum/minimum of z$src0 (a) and `b`: Intel's op with the operands swapped returns a
// on ties and on a NaN a; a NaN b (with a ordered) is put back by a masked move.
#define ACT_AMX_C_MINMAX(op, b)                                                                  \
  "{ __m512 a_ = z$src0, b_ = " b ";\n"                                                          \
  "  __mmask16 b_nan_ = _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(a_, a_, _CMP_ORD_Q), b_, b_, _CMP_UNORD_Q);\n" \
  "  z$dst = _mm512_mask_mov_ps(_mm512_" op "_ps(b_, a_), b_nan_, b_); }"

// f32 -> s32 as XLA converts: Intel's conversion, then INT32_MAX for lanes >= 2^31, 0 for NaN.
#define ACT_AMX_C_CONVERT(intrinsic)                                                                    \
  "{ __m512 x_ = z$src;\n"                                                                              \
  "  __m512i r_ = " intrinsic "(x_);\n"                                                                 \
  "  r_ = _mm512_mask_mov_epi32(r_, _mm512_cmp_ps_mask(x_, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ),\n" \
  "                             _mm512_set1_epi32(0x7fffffff));\n"                                     \
  "  z$dst = _mm512_castsi512_ps(_mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(x_, x_, _CMP_ORD_Q), r_)); }"

inline constexpr std::array kInstructions{
    // ---- AMX-INT8 (tile numbers are literal: GCC's tile macros paste them into the asm)
    CInstruction{"tilezero", "_tile_zero($dst);", {"amx-tile"}},
    // GCC's tileloadd asm declares no memory input: the barrier keeps earlier stores before it.
    CInstruction{"tileloadd", "__asm__ volatile(\"\" ::: \"memory\");\n_tile_loadd($dst, $&mem_addr, $stride);", {"amx-tile"}},
    CInstruction{"tilestored", "_tile_stored($src, $&mem_addr, $stride);", {"amx-tile"}},
    CInstruction{"tdpbusd", "_tile_dpbusd($dst, $src0, $src1);", {"amx-tile", "amx-int8"}},

    // ---- AVX-512 moves
    CInstruction{"vpxord", "z$dst = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(z$src0), _mm512_castps_si512(z$src1)));",
                 {"avx512f"}},
    CInstruction{"vmovaps", "z$dst = z$src;", {"avx512f"}},
    CInstruction{"vmovupsz", "z$dst = _mm512_loadu_ps($&mem_addr);", {"avx512f"}},
    CInstruction{"vmovupsz_store", "_mm512_storeu_ps($&mem_addr, z$src);", {"avx512f"}},
    CInstruction{"vbroadcastss", "z$dst = _mm512_broadcastss_ps(_mm512_castps512_ps128(z$src));", {"avx512f"}},
    CInstruction{"vbroadcastssl", "{ float x_; memcpy(&x_, $&mem_addr, 4); z$dst = _mm512_set1_ps(x_); }", {"avx512f"}},
    CInstruction{"vbroadcastss_imm", "z$dst = _mm512_castsi512_ps(_mm512_set1_epi32((int)(uint32_t)($imm_hi * 65536u + $imm_lo)));",
                 {"avx512f"}},

    // ---- AVX-512 FP32 arithmetic
    CInstruction{"vaddps", "z$dst = _mm512_add_ps(z$src0, z$src1);", {"avx512f"}},
    CInstruction{"vaddpsz", "z$dst = _mm512_add_ps(z$src0, _mm512_loadu_ps($&mem_addr));", {"avx512f"}},
    CInstruction{"vsubps", "z$dst = _mm512_sub_ps(z$src0, z$src1);", {"avx512f"}},
    CInstruction{"vmulps", "z$dst = _mm512_mul_ps(z$src0, z$src1);", {"avx512f"}},
    CInstruction{"vmulpsz", "z$dst = _mm512_mul_ps(z$src0, _mm512_loadu_ps($&mem_addr));", {"avx512f"}},
    CInstruction{"vdivps", "z$dst = _mm512_div_ps(z$src0, z$src1);", {"avx512f"}},
    CInstruction{"vmaxps", ACT_AMX_C_MINMAX("max", "z$src1"), {"avx512f"}},
    CInstruction{"vmaxpsz", ACT_AMX_C_MINMAX("max", "_mm512_loadu_ps($&mem_addr)"), {"avx512f"}},
    CInstruction{"vminps", ACT_AMX_C_MINMAX("min", "z$src1"), {"avx512f"}},
    CInstruction{"vfmadd231ps",
                 "{ __m512 p_ = _mm512_mul_ps(z$src0, z$src1);\n"
                 "  __asm__(\"\" : \"+v\"(p_));\n"
                 "  z$dst = _mm512_add_ps(p_, z$dst); }",
                 {"avx512f"}},
    CInstruction{"vblendmps_lt", "z$dst = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(z$src1, z$src2, _CMP_LT_OS), z$src2, z$src0);",
                 {"avx512f"}},

    // ---- AVX-512 integer lanes
    CInstruction{"vpaddd", "z$dst = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(z$src0), _mm512_castps_si512(z$src1)));",
                 {"avx512f"}},
    CInstruction{"vcvtdq2ps", "z$dst = _mm512_cvtepi32_ps(_mm512_castps_si512(z$src));", {"avx512f"}},
    CInstruction{"vcvtps2dq", ACT_AMX_C_CONVERT("_mm512_cvtps_epi32"), {"avx512f"}},
    CInstruction{"vcvttps2dq", ACT_AMX_C_CONVERT("_mm512_cvttps_epi32"), {"avx512f"}},
    CInstruction{"vpmovusdbx", "_mm512_mask_cvtusepi32_storeu_epi8($&mem_addr, 0xffff, _mm512_castps_si512(z$src));", {"avx512f"}},
    CInstruction{"vpmovsdbx", "_mm512_mask_cvtsepi32_storeu_epi8($&mem_addr, 0xffff, _mm512_castps_si512(z$src));", {"avx512f"}},
};

#undef ACT_AMX_C_MINMAX
#undef ACT_AMX_C_CONVERT

}  // namespace amx_c_detail

inline constexpr CMapping kAmxC{
    .prologue = amx_c_detail::kPrologue,
    .features = {CFeature{.name = "avx512f", .target = "avx512f", .usable = "act_avx512f_usable()",
                          .epilogue = "_mm256_zeroupper();"},
                 CFeature{.name = "amx-tile", .target = "amx-tile", .usable = "act_amx_tile_usable()",
                          .configure = amx_c_detail::kTileConfiguration, .release = "_tile_release();"},
                 CFeature{.name = "amx-int8", .target = "amx-int8", .usable = "act_amx_int8_usable()"}},
    .registers = {CRegisterFile{.buffer = "zmm", .declare = "__m512 z$unit;", .zero = "z$unit = _mm512_setzero_ps();"},
                  CRegisterFile{.buffer = "tmm", .declare = "", .zero = "_tile_zero($unit);"}},
    .instructions = amx_c_detail::kInstructions,
    .emulation_define = "ACT_EMULATE_AMX",
    .emulated_features = {"amx-tile", "amx-int8"},
};

}  // namespace act::isa
