// The TAIDL artifact's hand-written AMX/AVX-512 kernels as act programs, and their replay against
// Intel SDE's golden outputs (shared/reference/golden/amx, format: reference/isa_facts.md §3.1).
// Shared by isa_amx.cpp (in the simulator) and native_amx.cpp (the emitted C on this CPU).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/isa/amx.hpp"
#include "act/sim/assembly.hpp"

namespace amx_golden {

using act::sim::Program;
using act::sim::parse_program;

inline const act::isa::IsaView kAmxGolden = act::isa::view<act::isa::Amx>();

// // The TAIDL artifact's hand-written kernels (accelerators/amx/tests/kernels.py, isa_facts §3.2),
// transcribed instruction for instruction with the loops unrolled here, run on the inputs of the
// golden files; the outputs must equal what the C baselines produced under Intel SDE.
// Artifact -> act: mm512_load -> vmovupsz, mm512_store -> vmovupsz_store, mm512_xor -> vpxord,
// mm512_fmadd -> vfmadd231ps, mm512_add/mul/max/min -> vaddps/vmulps/vmaxps/vminps,
// mm512_add_mem/max_mem(dst, addr, src) -> vaddpsz/vmaxpsz(dst, src0 = src, mem_addr = addr),
// mm512_broadcast_mem -> vbroadcastssl, mm128_loadi(r, v) + mm512_broadcast(r, r) ->
// vbroadcastss_imm, mm512_cvt_i32 -> vcvtps2dq, mm512_cvt_i8_store -> vpmovusdbx.

struct GoldenArray {
  std::string name;
  std::vector<std::int64_t> dims;
  std::string dtype;  // i8, i32, u8, f32
  std::vector<std::string> values;
};

inline std::vector<GoldenArray> read_golden(const std::string& kernel) {
  const std::string path = std::string(ACT_SHARED_DIR) + "/reference/golden/amx/" + kernel + ".txt";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<GoldenArray> arrays;
  std::string header, values;
  while (std::getline(in, header) && std::getline(in, values)) {
    std::istringstream h(header);
    GoldenArray a;
    int rank = 0;
    h >> a.name >> rank;
    std::int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      std::int64_t n = 0;
      h >> n;
      a.dims.push_back(n);
      count *= n;
    }
    h >> a.dtype;
    std::istringstream v(values);
    for (std::string x; v >> x;) a.values.push_back(x);
    REQUIRE(static_cast<std::int64_t>(a.values.size()) == count);
    arrays.push_back(std::move(a));
  }
  return arrays;
}

inline void write_array(std::span<std::uint8_t> hbm, std::int64_t address, const GoldenArray& a) {
  std::size_t at = static_cast<std::size_t>(address);
  for (const auto& x : a.values) {
    if (a.dtype == "i8" || a.dtype == "u8") {
      hbm[at++] = static_cast<std::uint8_t>(std::stoi(x));
    } else if (a.dtype == "i32") {
      const auto v = static_cast<std::int32_t>(std::stol(x));
      std::memcpy(&hbm[at], &v, 4);
      at += 4;
    } else {
      REQUIRE(a.dtype == "f32");
      const float v = std::strtof(x.c_str(), nullptr);
      std::memcpy(&hbm[at], &v, 4);
      at += 4;
    }
  }
}

// One replay: the program, where each golden array lives in HBM (inputs first, file order).
struct Replay {
  std::string program;
  std::vector<std::int64_t> addresses;
  // Bound on |got - expected| for f32 outputs (see the float comparison below).
  double float_tolerance = 0;
};

struct ReplayResult {
  std::size_t instructions = 0;
  std::int64_t compared = 0;
  std::int64_t mismatches = 0;
  double max_float_error = 0;
};

// Runs `program` over `hbm` (the golden inputs written, everything else zero), in the simulator or
// natively.
using ReplayRunner = std::function<void(const act::sim::Program& program, std::span<std::uint8_t> hbm)>;

inline ReplayResult replay(const std::string& kernel, const Replay& r, const ReplayRunner& run) {
  const auto arrays = read_golden(kernel);
  REQUIRE(arrays.size() == r.addresses.size());
  const Program program = parse_program(r.program, kAmxGolden);
  std::vector<std::uint8_t> memory(std::size_t{1} << 20, 0);
  const std::span<std::uint8_t> hbm(memory);
  for (std::size_t i = 0; i < arrays.size(); ++i)
    if (arrays[i].name.rfind("out", 0) != 0) write_array(hbm, r.addresses[i], arrays[i]);
  run(program, hbm);
  ReplayResult result;
  result.instructions = program.instructions.size();
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const GoldenArray& a = arrays[i];
    if (a.name.rfind("out", 0) != 0) continue;
    std::size_t at = static_cast<std::size_t>(r.addresses[i]);
    for (std::size_t k = 0; k < a.values.size(); ++k) {
      ++result.compared;
      bool ok = true;
      if (a.dtype == "u8") {
        ok = hbm[at] == static_cast<std::uint8_t>(std::stoi(a.values[k]));
        at += 1;
      } else if (a.dtype == "i32") {
        std::int32_t got;
        std::memcpy(&got, &hbm[at], 4);
        ok = got == static_cast<std::int32_t>(std::stol(a.values[k]));
        at += 4;
      } else {
        float got;
        std::memcpy(&got, &hbm[at], 4);
        const double error = std::fabs(static_cast<double>(got) - std::strtod(a.values[k].c_str(), nullptr));
        result.max_float_error = std::max(result.max_float_error, error);
        ok = error <= r.float_tolerance;
        at += 4;
      }
      if (!ok) {
        if (result.mismatches < 5) UNSCOPED_INFO(kernel << ": " << a.name << "[" << k << "] = " << a.values[k] << " mismatches");
        ++result.mismatches;
      }
    }
  }
  return result;
}

// Float tolerance of a golden f32 output that is a sum of `terms` products of inputs bounded by
// `bound` (plus at most one more input): the files print 6 decimals, so every input and the
// output are known to +-5e-7 (each product a*b then moves by at most 5e-7 * (|a| + |b|)), and
// the f32 arithmetic (a rounding per multiply and per add, in any order, fused or not) adds at
// most 2 * terms * 2^-24 * |sum of |products|| (the DESIGN bound is tighter per step; this one
// also covers FMA's single rounding against our two).
inline double sum_of_products_tolerance(int terms, double bound) {
  const double print = 5e-7;
  return print * (2 + 2 * terms * bound) + 2.0 * (terms + 1) * std::ldexp(1.0, -24) * (terms * bound * bound + bound);
}

inline std::string line(const std::string& s) { return s + "\n"; }

inline Replay cnn_inference_amx(int blocks) {
  const std::int64_t t4 = 0, size_a = 1024 + 64 * (blocks - 1), t5 = t4 + size_a, t6 = t5 + size_a, t7 = t6 + 64,
                     out = t6 + 2048 * blocks;
  std::string p;
  for (int t = 0; t < 4; ++t) p += line(fmt::format("tilezero(dst = {})", t));
  for (int i = 0; i < blocks; ++i) {
    p += line(fmt::format("tileloadd(stride = 64, dst = 4, mem_addr = {})", t4 + 64 * i));
    p += line(fmt::format("tileloadd(stride = 64, dst = 6, mem_addr = {})", t6 + 2048 * i));
    p += line(fmt::format("tileloadd(stride = 64, dst = 7, mem_addr = {})", t7 + 2048 * i));
    p += line("tdpbusd(dst = 0, src0 = 4, src1 = 6)");
    p += line(fmt::format("tileloadd(stride = 64, dst = 5, mem_addr = {})", t5 + 64 * i));
    p += line("tdpbusd(dst = 1, src0 = 4, src1 = 7)");
    p += line("tdpbusd(dst = 2, src0 = 5, src1 = 6)");
    p += line("tdpbusd(dst = 3, src0 = 5, src1 = 7)");
  }
  for (int t = 0; t < 4; ++t) p += line(fmt::format("tilestored(stride = 64, src = {}, mem_addr = {})", t, out + 1024 * t));
  return {p, {t4, t5, t6, out}};
}

inline Replay rnn_inference_amx(int blocks) {
  const std::int64_t t2 = 0, t3 = t2 + 1024 + 64 * (blocks - 1), t4 = t3 + 64, out = t3 + 2048 * blocks;
  std::string p;
  p += line("tilezero(dst = 0)");
  p += line("tilezero(dst = 1)");
  for (int i = 0; i < blocks; ++i) {
    p += line(fmt::format("tileloadd(stride = 64, dst = 2, mem_addr = {})", t2 + 64 * i));
    p += line(fmt::format("tileloadd(stride = 64, dst = 3, mem_addr = {})", t3 + 2048 * i));
    p += line("tdpbusd(dst = 0, src0 = 2, src1 = 3)");
    p += line(fmt::format("tileloadd(stride = 64, dst = 4, mem_addr = {})", t4 + 2048 * i));
    p += line("tdpbusd(dst = 1, src0 = 2, src1 = 4)");
  }
  p += line(fmt::format("tilestored(stride = 64, src = 0, mem_addr = {})", out));
  p += line(fmt::format("tilestored(stride = 64, src = 1, mem_addr = {})", out + 1024));
  return {p, {t2, t3, out}};
}

inline Replay mem_format_prop_avx(int blocks) {
  const std::int64_t z0 = 0, z2_3 = z0 + 14 * 4 * 4, out = z2_3 + blocks * 2 * 16 * 4;
  std::string p;
  for (int r = 31; r > 3; --r) p += line(fmt::format("vpxord(dst = {0}, src0 = {0}, src1 = {0})", r));
  for (int i = 0; i < blocks; ++i) {
    p += line(fmt::format("vmovupsz(dst = 3, mem_addr = {})", z2_3 + 128 * i + 64));
    p += line(fmt::format("vmovupsz(dst = 2, mem_addr = {})", z2_3 + 128 * i));
    for (int j = 0; j < 14; ++j) {
      p += line(fmt::format("vbroadcastssl(dst = 0, mem_addr = {})", z0 + 16 * j));
      p += line(fmt::format("vfmadd231ps(dst = {}, src0 = 0, src1 = 3)", 31 - 2 * j));
      p += line(fmt::format("vfmadd231ps(dst = {}, src0 = 0, src1 = 2)", 30 - 2 * j));
    }
  }
  for (int r = 31; r > 3; --r) p += line(fmt::format("vmovupsz_store(src = {}, mem_addr = {})", r, out + 64 * r));
  // Inputs are uniform in (-4, 4); each output sums `blocks` products.
  return {p, {z0, z2_3, out}, sum_of_products_tolerance(blocks, 4.0)};
}

inline Replay sgemm_avx(int blocks) {
  const std::int64_t in = 0, z6_7 = in + blocks * 3 * 16 * 4, offset = z6_7 + 5 * 2 * 4 * 4, out = offset + 32 * 16 * 4;
  std::string p;
  for (int r = 8; r < 32; ++r) p += line(fmt::format("vpxord(dst = {0}, src0 = {0}, src1 = {0})", r));
  p += line(fmt::format("vbroadcastssl(dst = 6, mem_addr = {})", z6_7 + 4 * 32));
  p += line(fmt::format("vbroadcastssl(dst = 7, mem_addr = {})", z6_7 + 4 * 32 + 16));
  for (int i = 0; i < blocks; ++i) {
    for (int k = 0; k < 3; ++k) p += line(fmt::format("vmovupsz(dst = {}, mem_addr = {})", k, in + 192 * i + 64 * k));
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 3; ++k) p += line(fmt::format("vfmadd231ps(dst = {}, src0 = {}, src1 = 6)", 8 * (k + 1) + 2 * j, k));
      p += line(fmt::format("vbroadcastssl(dst = 6, mem_addr = {})", z6_7 + 32 * j));
      for (int k = 0; k < 3; ++k) p += line(fmt::format("vfmadd231ps(dst = {}, src0 = {}, src1 = 7)", 8 * (k + 1) + 2 * j + 1, k));
      p += line(fmt::format("vbroadcastssl(dst = 7, mem_addr = {})", z6_7 + 32 * j + 16));
    }
  }
  for (int i = 0; i < 8; ++i) {
    for (int k = 1; k <= 3; ++k)
      p += line(fmt::format("vaddpsz(dst = {0}, src0 = {0}, mem_addr = {1})", 8 * k + i, offset + (8 * k + i) * 64));
    for (int k = 1; k <= 3; ++k) {
      p += line(fmt::format("vmovupsz_store(src = {}, mem_addr = {})", 8 * k + i, out + (8 * k + i) * 64));
      p += line(fmt::format("vpxord(dst = {0}, src0 = {0}, src1 = {0})", 8 * k + i));
    }
  }
  return {p, {in, z6_7, offset, out}, sum_of_products_tolerance(blocks, 4.0)};
}

inline Replay cnn_inference_mix(int blocks) {
  const std::int64_t t4 = 0, size_a = 1024 + 64 * (blocks - 1), t5 = t4 + size_a, t6 = t5 + size_a, t7 = t6 + 64,
                     max = t6 + 2048 * blocks, z0 = max + 64, z10 = z0 + 16, z15 = z10 + 64, avx_in = z15 + 64,
                     amx_out = avx_in + blocks * 3 * 16 * 4, avx_out = amx_out + 4096;
  std::string p;
  p += line(fmt::format("vmovupsz(dst = 10, mem_addr = {})", z10));
  p += line(fmt::format("vmovupsz(dst = 15, mem_addr = {})", z15));
  p += line("vpxord(dst = 8, src0 = 8, src1 = 8)");
  p += line("vbroadcastss_imm(imm_hi = 0x437f, imm_lo = 0, dst = 9)  # 255.0f");
  for (int t = 0; t < 4; ++t) p += line(fmt::format("tilezero(dst = {})", t));
  for (int i = 0; i < blocks; ++i) {
    p += line(fmt::format("tileloadd(stride = 64, dst = 4, mem_addr = {})", t4 + 64 * i));
    p += line(fmt::format("tileloadd(stride = 64, dst = 6, mem_addr = {})", t6 + 2048 * i));
    p += line(fmt::format("tileloadd(stride = 64, dst = 7, mem_addr = {})", t7 + 2048 * i));
    p += line("tdpbusd(dst = 0, src0 = 4, src1 = 6)");
    for (int r = 31; r >= 29; --r) p += line(fmt::format("vmovupsz(dst = {}, mem_addr = {})", r, avx_in + 192 * i + 64 * (r - 29)));
    for (int r = 31; r >= 29; --r) p += line(fmt::format("vmulps(dst = {0}, src0 = 15, src1 = {0})", r));
    for (int r = 31; r >= 29; --r) p += line(fmt::format("vaddps(dst = {0}, src0 = 10, src1 = {0})", r));
    for (int r = 29; r <= 31; ++r) p += line(fmt::format("vmaxpsz(dst = {0}, src0 = {0}, mem_addr = {1})", r, max));
    p += line(fmt::format("vbroadcastssl(dst = 0, mem_addr = {})", z0));
    for (int r = 31; r >= 29; --r) p += line(fmt::format("vmulps(dst = {0}, src0 = 0, src1 = {0})", r));
    // Requantize rows 31, 30, 29 in turn; the remaining AMX work is interleaved after each.
    const std::string after[3] = {
        fmt::format("tileloadd(stride = 64, dst = 5, mem_addr = {})\ntdpbusd(dst = 1, src0 = 4, src1 = 7)", t5 + 64 * i),
        "tdpbusd(dst = 2, src0 = 5, src1 = 6)", "tdpbusd(dst = 3, src0 = 5, src1 = 7)"};
    for (int r = 31; r >= 29; --r) {
      p += line(fmt::format("vmaxps(dst = {0}, src0 = 8, src1 = {0})", r));
      p += line(fmt::format("vminps(dst = {0}, src0 = 9, src1 = {0})", r));
      p += line(fmt::format("vcvtps2dq(dst = {0}, src = {0})", r));
      p += line(fmt::format("vpmovusdbx(src = {}, mem_addr = {})", r, avx_out + 48 * i + 16 * (r - 29)));
      p += line(after[31 - r]);
    }
  }
  for (int t = 0; t < 4; ++t) p += line(fmt::format("tilestored(stride = 64, src = {}, mem_addr = {})", t, amx_out + 1024 * t));
  return {p, {t4, t5, t6, max, z0, z10, z15, avx_in, amx_out, avx_out}};
}

// The five artifact kernels, their instruction count at N = 4 (isa_facts §3.2; mm128_loadi +
// broadcast as one) and whether they use the tiles and the AVX-512 vectors.
struct GoldenCase {
  std::string kernel;
  Replay (*build)(int);
  std::size_t instructions_4;
  bool uses_tiles;
  bool uses_vectors;
};

inline const std::vector<GoldenCase>& golden_cases() {
  static const std::vector<GoldenCase> cases{
      {"cnn_inference_amx", cnn_inference_amx, 40, true, false},
      {"rnn_inference_amx", rnn_inference_amx, 24, true, false},
      {"mem_format_prop_avx", mem_format_prop_avx, 232, false, true},
      {"sgemm_avx", sgemm_avx, 238, false, true},
      {"cnn_inference_mix", cnn_inference_mix, 40 + 117 - 1, true, true},
  };
  return cases;
}

}  // namespace amx_golden
