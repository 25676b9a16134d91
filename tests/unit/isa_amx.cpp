// isa/amx.hpp: single instructions checked against hand-computed values (Intel's semantics), and
// replays of the TAIDL artifact's hand-written AMX/AVX-512 kernels against Intel SDE's golden
// outputs (shared/reference/golden/amx, format: reference/isa_facts.md §3.1).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/hlo/parser.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/registry.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/machine.hpp"
#include "act/sim/verify.hpp"
#include "amx_golden_replays.hpp"

using namespace act;
using namespace act::sim;

namespace {

const isa::IsaView kAmx = isa::view<isa::Amx>();

// ---- machine access -------------------------------------------------------------------------

Machine run(const std::string& text, const std::function<void(Machine&)>& setup = {}) {
  Machine m(kAmx);
  if (setup) setup(m);
  m.run(parse_program(text, kAmx));
  return m;
}

std::int8_t& tile_byte(Machine& m, int tile, int row, int col) {
  return reinterpret_cast<std::int8_t&>(m.bytes("tmm")[static_cast<std::size_t>(tile * 1024 + row * 64 + col)]);
}
std::int32_t tile_dword(Machine& m, int tile, int row, int n) {
  std::int32_t v;
  std::memcpy(&v, m.bytes("tmm").data() + tile * 1024 + row * 64 + 4 * n, 4);
  return v;
}
void set_tile_dword(Machine& m, int tile, int row, int n, std::int32_t v) {
  std::memcpy(m.bytes("tmm").data() + tile * 1024 + row * 64 + 4 * n, &v, 4);
}
std::uint32_t zmm_bits(Machine& m, int reg, int lane) {
  std::uint32_t v;
  std::memcpy(&v, m.bytes("zmm").data() + reg * 64 + lane * 4, 4);
  return v;
}
float zmm_float(Machine& m, int reg, int lane) { return std::bit_cast<float>(zmm_bits(m, reg, lane)); }
std::int32_t zmm_int(Machine& m, int reg, int lane) { return static_cast<std::int32_t>(zmm_bits(m, reg, lane)); }
void set_zmm_bits(Machine& m, int reg, int lane, std::uint32_t bits) {
  std::memcpy(m.bytes("zmm").data() + reg * 64 + lane * 4, &bits, 4);
}
void set_zmm_floats(Machine& m, int reg, const std::vector<float>& lanes) {
  for (std::size_t i = 0; i < lanes.size(); ++i) set_zmm_bits(m, reg, static_cast<int>(i), std::bit_cast<std::uint32_t>(lanes[i]));
}
void set_zmm_ints(Machine& m, int reg, const std::vector<std::int32_t>& lanes) {
  for (std::size_t i = 0; i < lanes.size(); ++i) set_zmm_bits(m, reg, static_cast<int>(i), static_cast<std::uint32_t>(lanes[i]));
}

// A deterministic byte stream (xorshift), independent of the standard library.
struct Bytes {
  std::uint64_t state;
  std::uint8_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<std::uint8_t>(state >> 24);
  }
};

}  // namespace

// ---- the description --------------------------------------------------------------------------

TEST_CASE("amx: description and registry", "[isa][amx]") {
  CHECK_NOTHROW(isa::check(kAmx));
  CHECK(isa::find_view("amx").name == "amx");
  CHECK(kAmx.instructions.size() == 28);  // 4 AMX-INT8 + 24 AVX-512
  const auto* load = kAmx.find_instruction("tileloadd");
  REQUIRE(load != nullptr);
  CHECK(attribute_names(*load) == std::vector<std::string_view>{"stride", "dst", "mem_addr"});
  const auto* mul = kAmx.find_instruction("tdpbusd");
  REQUIRE(mul != nullptr);
  CHECK(attribute_names(*mul) == std::vector<std::string_view>{"dst", "src0", "src1"});
  // Register files: register number = access dim.
  CHECK(kAmx.find_buffer("tmm")->access_dims[0] == 8);
  CHECK(kAmx.find_buffer("zmm")->access_dims[0] == 32);
  // The paper's K1 listing parses (register numbers for tmmN, stride 64 for full tiles).
  const std::string k1 = R"(
tilezero(dst = 0)
tileloadd(dst = 4, mem_addr = 0x0000, stride = 64)
tdpbusd(dst = 0, src0 = 4, src1 = 6)
tilestored(src = 0, mem_addr = 0x1000, stride = 64)
)";
  const Program p = parse_program(k1, kAmx);
  REQUIRE(p.instructions.size() == 4);
  CHECK(print_program(p, kAmx, {.hex = true}).find("tileloadd(stride = 0x40, dst = 0x4, mem_addr = 0x0)") != std::string::npos);
}

// ---- AMX ----------------------------------------------------------------------------------------

TEST_CASE("amx: tdpbusd on hand-computed values, with the B interleave", "[isa][amx]") {
  Machine m(kAmx);
  // A = tmm4 (u8), B = tmm6 (s8, 4 K-values per dword), C = tmm0 (s32 accumulators).
  const std::int8_t a_row0[8] = {1, 2, 3, 4, static_cast<std::int8_t>(200), 0, 0, 0};  // 200 is u8
  for (int c = 0; c < 8; ++c) tile_byte(m, 4, 0, c) = a_row0[c];
  // B row k = 0: dword n = 0 holds K = 0..3 of column 0, dword n = 1 those of column 1.
  const std::int8_t b_row0[8] = {1, 1, 1, 1, 10, 20, 30, 40};
  for (int c = 0; c < 8; ++c) tile_byte(m, 6, 0, c) = b_row0[c];
  // B row k = 1: K = 4 of column 0 is -1 (s8), K = 5..7 are 0; column 1: K = 4 is 2.
  tile_byte(m, 6, 1, 0) = -1;
  tile_byte(m, 6, 1, 4) = 2;
  set_tile_dword(m, 0, 0, 0, 1000);
  set_tile_dword(m, 0, 0, 1, std::numeric_limits<std::int32_t>::max());
  set_tile_dword(m, 0, 3, 2, -5);
  m.execute(parse_program("tdpbusd(dst = 0, src0 = 4, src1 = 6)", kAmx).instructions[0]);
  // C[0,0] = 1000 + (1+2+3+4)*1 + 200 * (-1)
  CHECK(tile_dword(m, 0, 0, 0) == 1000 + 10 - 200);
  // C[0,1] = MAX + (1*10 + 2*20 + 3*30 + 4*40) + 200 * 2 wraps
  CHECK(tile_dword(m, 0, 0, 1) == static_cast<std::int32_t>(0x7fffffffu + 300u + 400u));
  CHECK(tile_dword(m, 0, 0, 2) == 0);
  CHECK(tile_dword(m, 0, 3, 2) == -5);  // row 3 of A is zero: C unchanged
  CHECK(tile_dword(m, 0, 1, 0) == 0);
}

TEST_CASE("amx: tdpbusd agrees with Intel's pseudocode on random tiles", "[isa][amx]") {
  Machine m(kAmx);
  Bytes rng{0x1234567};
  for (int t : {1, 2, 3})
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 64; ++c) tile_byte(m, t, r, c) = static_cast<std::int8_t>(rng.next());
  std::int32_t expected[16][16];
  for (int row = 0; row < 16; ++row)
    for (int n = 0; n < 16; ++n) {
      // TDPBUSD: tsrcdest.row[m].dword[n] += sum over k of u8(tsrc1.row[m].byte[4k+j]) * s8(tsrc2.row[k].byte[4n+j])
      std::uint32_t acc = static_cast<std::uint32_t>(tile_dword(m, 3, row, n));
      for (int k = 0; k < 16; ++k)
        for (int j = 0; j < 4; ++j)
          acc += static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::uint8_t>(tile_byte(m, 1, row, 4 * k + j))) *
                                            static_cast<std::int32_t>(tile_byte(m, 2, k, 4 * n + j)));
      expected[row][n] = static_cast<std::int32_t>(acc);
    }
  m.execute(parse_program("tdpbusd(dst = 3, src0 = 1, src1 = 2)", kAmx).instructions[0]);
  int mismatches = 0;
  for (int row = 0; row < 16; ++row)
    for (int n = 0; n < 16; ++n) mismatches += tile_dword(m, 3, row, n) != expected[row][n];
  CHECK(mismatches == 0);
}

TEST_CASE("amx: tdpbusd needs three distinct tiles", "[isa][amx]") {
  for (const char* text : {"tdpbusd(dst = 1, src0 = 1, src1 = 2)", "tdpbusd(dst = 1, src0 = 2, src1 = 1)",
                           "tdpbusd(dst = 0, src0 = 2, src1 = 2)"}) {
    Machine m(kAmx);
    try {
      m.run(parse_program(text, kAmx));
      FAIL("no error for " << text);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Execution);
      CHECK(std::string(e.what()).find("violates the constraint") != std::string::npos);
    }
  }
  // Register numbers are bounded by the register file.
  Machine m(kAmx);
  CHECK_THROWS_AS(m.run(parse_program("tdpbusd(dst = 8, src0 = 1, src1 = 2)", kAmx)), Error);
  CHECK_THROWS_AS(m.run(parse_program("vaddps(dst = 32, src0 = 1, src1 = 2)", kAmx)), Error);
}

TEST_CASE("amx: tileloadd with a row stride other than 64", "[isa][amx]") {
  auto fill = [](Machine& m) {
    auto hbm = m.hbm();
    for (std::size_t i = 0; i < 4096; ++i) hbm[i] = static_cast<std::uint8_t>(i * 7 + i / 256);
  };
  Machine m = run("tileloadd(stride = 100, dst = 5, mem_addr = 8)", fill);
  int mismatches = 0;
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 64; ++c) {
      const std::size_t at = static_cast<std::size_t>(8 + r * 100 + c);
      mismatches += static_cast<std::uint8_t>(tile_byte(m, 5, r, c)) != static_cast<std::uint8_t>(at * 7 + at / 256);
    }
  CHECK(mismatches == 0);
  CHECK(tile_byte(m, 4, 0, 0) == 0);  // other tiles untouched
  // Overlapping rows are not modelled; the window must lie in HBM.
  CHECK_THROWS_WITH(run("tileloadd(stride = 32, dst = 5, mem_addr = 0)"), Catch::Contains("stride >= 64"));
  CHECK_THROWS_WITH(run("tileloadd(stride = 64, dst = 5, mem_addr = 1048000)"), Catch::Contains("outside the buffer"));
}

TEST_CASE("amx: tilestored writes 16 rows and keeps the bytes between them", "[isa][amx]") {
  auto setup = [](Machine& m) {
    auto hbm = m.hbm();
    std::fill(hbm.begin(), hbm.begin() + 8192, std::uint8_t{0xee});
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 64; ++c) tile_byte(m, 2, r, c) = static_cast<std::int8_t>(r * 64 + c);
  };
  Machine m = run("tilestored(stride = 96, src = 2, mem_addr = 32)", setup);
  auto hbm = m.hbm();
  int row_mismatches = 0, gap_mismatches = 0;
  for (int i = 0; i < 8192; ++i) {
    const int offset = i - 32;
    const bool in_row = offset >= 0 && offset < 16 * 96 && offset % 96 < 64;
    if (in_row)
      row_mismatches += hbm[static_cast<std::size_t>(i)] != static_cast<std::uint8_t>((offset / 96) * 64 + offset % 96);
    else
      gap_mismatches += hbm[static_cast<std::size_t>(i)] != 0xee;
  }
  CHECK(row_mismatches == 0);
  CHECK(gap_mismatches == 0);
  // The window (16 * stride bytes) must lie in HBM (here it ends one byte past 1 MiB).
  CHECK_THROWS_WITH(run("tilestored(stride = 65536, src = 2, mem_addr = 1)"), Catch::Contains("outside the buffer"));
  // Load back with the same stride: the tile round-trips.
  m.execute(parse_program("tileloadd(stride = 96, dst = 7, mem_addr = 32)", kAmx).instructions[0]);
  CHECK(std::memcmp(m.bytes("tmm").data() + 7 * 1024, m.bytes("tmm").data() + 2 * 1024, 1024) == 0);
}

TEST_CASE("amx: tilezero clears one tile", "[isa][amx]") {
  Machine m = run("tilezero(dst = 3)", [](Machine& m) {
    for (int t = 2; t <= 4; ++t) tile_byte(m, t, 15, 63) = 9;
  });
  CHECK(tile_byte(m, 3, 15, 63) == 0);
  CHECK(tile_byte(m, 2, 15, 63) == 9);
  CHECK(tile_byte(m, 4, 15, 63) == 9);
}

// ---- AVX-512 ----------------------------------------------------------------------------------

TEST_CASE("amx: float->int conversions round as Intel defines them", "[isa][amx]") {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, -2.6f, 3.5f, 254.5f, 255.49f, -0.0f, 7.0f, 1e9f, -3.5f, 0.49999997f};
  Machine m = run("vcvtps2dq(dst = 1, src = 0)\nvcvttps2dq(dst = 2, src = 0)", [&](Machine& m) { set_zmm_floats(m, 0, x); });
  const std::vector<std::int32_t> nearest_even = {0, 2, 2, 0, -2, -2, 2, -3, 4, 254, 255, 0, 7, 1000000000, -4, 0};
  const std::vector<std::int32_t> truncated = {0, 1, 2, 0, -1, -2, 2, -2, 3, 254, 255, 0, 7, 1000000000, -3, 0};
  for (int i = 0; i < 16; ++i) {
    INFO("lane " << i << " x = " << x[static_cast<std::size_t>(i)]);
    CHECK(zmm_int(m, 1, i) == nearest_even[static_cast<std::size_t>(i)]);
    CHECK(zmm_int(m, 2, i) == truncated[static_cast<std::size_t>(i)]);
  }
}

TEST_CASE("amx: vcvtdq2ps rounds to nearest even", "[isa][amx]") {
  Machine m = run("vcvtdq2ps(dst = 4, src = 3)", [](Machine& m) {
    set_zmm_ints(m, 3, {0, -7, 16777217, 16777219, -16777217, 2147483647, std::numeric_limits<std::int32_t>::min(), 255});
  });
  CHECK(zmm_float(m, 4, 0) == 0.0f);
  CHECK(zmm_float(m, 4, 1) == -7.0f);
  CHECK(zmm_float(m, 4, 2) == 16777216.0f);  // tie: to the even neighbour
  CHECK(zmm_float(m, 4, 3) == 16777220.0f);
  CHECK(zmm_float(m, 4, 4) == -16777216.0f);
  CHECK(zmm_float(m, 4, 5) == 2147483648.0f);
  CHECK(zmm_float(m, 4, 6) == -2147483648.0f);
  CHECK(zmm_float(m, 4, 7) == 255.0f);
}

TEST_CASE("amx: narrowing stores saturate", "[isa][amx]") {
  const std::vector<std::int32_t> lanes = {0, 1, 127, 128, 255, 256, 1000, -1, -128, -129,
                                           std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(), 77, -77, 200, 65535};
  Machine m = run("vpmovusdbx(src = 6, mem_addr = 100)\nvpmovsdbx(src = 6, mem_addr = 200)", [&](Machine& m) {
    set_zmm_ints(m, 6, lanes);
    std::fill(m.hbm().begin(), m.hbm().begin() + 300, std::uint8_t{0xaa});
  });
  // VPMOVUSDB reads the lanes as unsigned dwords: negative lanes are huge and saturate to 255.
  const std::vector<int> unsigned_sat = {0, 1, 127, 128, 255, 255, 255, 255, 255, 255, 255, 255, 77, 255, 200, 255};
  const std::vector<int> signed_sat = {0, 1, 127, 127, 127, 127, 127, -1, -128, -128, -128, 127, 77, -77, 127, 127};
  auto hbm = m.hbm();
  for (int i = 0; i < 16; ++i) {
    INFO("lane " << i << " = " << lanes[static_cast<std::size_t>(i)]);
    CHECK(hbm[static_cast<std::size_t>(100 + i)] == unsigned_sat[static_cast<std::size_t>(i)]);
    CHECK(static_cast<std::int8_t>(hbm[static_cast<std::size_t>(200 + i)]) == signed_sat[static_cast<std::size_t>(i)]);
  }
  CHECK(hbm[99] == 0xaa);
  CHECK(hbm[116] == 0xaa);  // exactly 16 bytes written
  CHECK(hbm[216] == 0xaa);
}

TEST_CASE("amx: vpxord is a bitwise xor of the lane bits", "[isa][amx]") {
  Machine m = run("vpxord(dst = 2, src0 = 0, src1 = 1)\nvpxord(dst = 3, src0 = 0, src1 = 0)", [](Machine& m) {
    set_zmm_floats(m, 0, {1.0f, 2.5f, -3.0f});
    set_zmm_floats(m, 1, {-1.0f, 2.5f, 0.0f});
  });
  CHECK(zmm_bits(m, 2, 0) == 0x80000000u);  // 1.0 ^ -1.0: only the sign bit differs
  CHECK(zmm_bits(m, 2, 1) == 0u);
  CHECK(zmm_bits(m, 2, 2) == std::bit_cast<std::uint32_t>(-3.0f));
  for (int i = 0; i < 16; ++i) CHECK(zmm_bits(m, 3, i) == 0u);
}

TEST_CASE("amx: loads, stores, broadcasts and the immediate", "[isa][amx]") {
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[static_cast<std::size_t>(i)] = 0.25f * static_cast<float>(i) - 1.0f;
  const std::string text = R"(
vmovupsz(dst = 1, mem_addr = 3)               # unaligned load of 16 floats
vbroadcastssl(dst = 2, mem_addr = 11)          # values[2]
vbroadcastss(dst = 3, src = 1)                 # lane 0 of zmm1
vbroadcastss_imm(imm_hi = 0x437f, imm_lo = 0, dst = 4)
vbroadcastss_imm(imm_hi = 0xbf80, imm_lo = 0x0001, dst = 5)
vmovaps(dst = 6, src = 1)
vmovupsz_store(src = 6, mem_addr = 500)
vaddpsz(dst = 7, src0 = 2, mem_addr = 500)
vmulpsz(dst = 8, src0 = 2, mem_addr = 500)
vmaxpsz(dst = 9, src0 = 2, mem_addr = 500)
)";
  Machine m = run(text, [&](Machine& m) { std::memcpy(m.hbm().data() + 3, values.data(), 64); });
  for (int i = 0; i < 16; ++i) {
    const float v = values[static_cast<std::size_t>(i)];
    CHECK(zmm_float(m, 1, i) == v);
    CHECK(zmm_float(m, 2, i) == -0.5f);
    CHECK(zmm_float(m, 3, i) == -1.0f);
    CHECK(zmm_float(m, 4, i) == 255.0f);
    CHECK(zmm_bits(m, 5, i) == 0xbf800001u);
    CHECK(zmm_float(m, 7, i) == v - 0.5f);
    CHECK(zmm_float(m, 8, i) == v * -0.5f);
    CHECK(zmm_float(m, 9, i) == std::max(v, -0.5f));
  }
  CHECK(std::memcmp(m.hbm().data() + 500, values.data(), 64) == 0);
  CHECK(m.hbm()[564] == 0);
  CHECK_THROWS_WITH(run("vbroadcastss_imm(imm_hi = 65536, imm_lo = 0, dst = 4)"), Catch::Contains("imm_hi <= 65535"));
  // The extremes of the immediate: all bits clear (empty sums) and all bits set (wrapping).
  Machine edges = run("vbroadcastss_imm(imm_hi = 0, imm_lo = 0, dst = 1)\nvbroadcastss_imm(imm_hi = 0xffff, imm_lo = 0xffff, dst = 2)",
                      [](Machine& m) { set_zmm_floats(m, 1, {5.0f}); });
  CHECK(zmm_bits(edges, 1, 0) == 0u);
  CHECK(zmm_bits(edges, 2, 15) == 0xffffffffu);
}

TEST_CASE("amx: vector arithmetic", "[isa][amx]") {
  const std::string text = R"(
vaddps(dst = 10, src0 = 0, src1 = 1)
vsubps(dst = 11, src0 = 0, src1 = 1)
vmulps(dst = 12, src0 = 0, src1 = 1)
vdivps(dst = 13, src0 = 0, src1 = 1)
vmaxps(dst = 14, src0 = 0, src1 = 1)
vminps(dst = 15, src0 = 0, src1 = 1)
vmovaps(dst = 16, src = 2)
vfmadd231ps(dst = 16, src0 = 0, src1 = 1)
vblendmps_lt(dst = 17, src0 = 2, src1 = 0, src2 = 1)
vpaddd(dst = 18, src0 = 3, src1 = 3)
)";
  Machine m = run(text, [](Machine& m) {
    set_zmm_floats(m, 0, {2.0f, -3.0f, 8.0f, 1.5f});
    set_zmm_floats(m, 1, {3.0f, 4.0f, -2.0f, 1.5f});
    set_zmm_floats(m, 2, {1.0f, 100.0f, 0.5f, 7.0f});
    set_zmm_ints(m, 3, {1, -5, std::numeric_limits<std::int32_t>::max(), 0});
  });
  CHECK(zmm_float(m, 10, 0) == 5.0f);
  CHECK(zmm_float(m, 11, 1) == -7.0f);
  CHECK(zmm_float(m, 12, 2) == -16.0f);
  CHECK(zmm_float(m, 13, 2) == -4.0f);
  CHECK(zmm_float(m, 14, 1) == 4.0f);
  CHECK(zmm_float(m, 15, 1) == -3.0f);
  CHECK(zmm_float(m, 16, 0) == 7.0f);     // 2 * 3 + 1
  CHECK(zmm_float(m, 16, 1) == 88.0f);    // -3 * 4 + 100
  CHECK(zmm_float(m, 16, 3) == 9.25f);    // 1.5 * 1.5 + 7
  CHECK(zmm_float(m, 17, 0) == 1.0f);     // 2 < 3: src0
  CHECK(zmm_float(m, 17, 1) == 100.0f);   // -3 < 4: src0
  CHECK(zmm_float(m, 17, 2) == -2.0f);    // 8 < -2 is false: src2
  CHECK(zmm_float(m, 17, 3) == 1.5f);     // equal: src2
  CHECK(zmm_int(m, 18, 0) == 2);
  CHECK(zmm_int(m, 18, 1) == -10);
  CHECK(zmm_int(m, 18, 2) == -2);  // wraps
}

// ---- golden replays (tests/unit/amx_golden_replays.hpp) ------------------------------------------

TEST_CASE("amx: golden replays of the artifact's kernels (Intel SDE outputs)", "[isa][amx][golden]") {
  using namespace amx_golden;
  const ReplayRunner simulate = [](const Program& program, std::span<std::uint8_t> hbm) {
    Machine m(kAmx);
    std::copy(hbm.begin(), hbm.end(), m.hbm().begin());
    m.run(program);
    std::copy(m.hbm().begin(), m.hbm().end(), hbm.begin());
  };
  for (const auto& c : golden_cases())
    for (int blocks : {4, 8}) {
      const std::string kernel = fmt::format("{}_{}", c.kernel, blocks);
      SECTION(kernel) {
        const Replay r = c.build(blocks);
        const ReplayResult result = replay(kernel, r, simulate);
        INFO(kernel << ": " << result.instructions << " instructions, " << result.compared << " values compared, max f32 error "
                    << result.max_float_error << " (tolerance " << r.float_tolerance << ")");
        if (blocks == 4) CHECK(result.instructions == c.instructions_4);
        CHECK(result.compared > 0);
        CHECK(result.mismatches == 0);
      }
    }
}

// ---- the paper's K1 and K2 listings (App. G) against their HLO ------------------------------------
//
// oneDNN's code as the paper prints it (tests/data/amx/k{1,2}_onednn.asm), with stride 64 (full
// contiguous tiles; `act verify --isa amx` runs them too): the HBM image is
// A, then B in its VNNI tiled layout {T(16,4)}, then the output in {T(16,16)} (DESIGN.md), so
// these check tdpbusd's interleave and the tile layouts against the reference interpreter.

namespace {

std::string read_kernel(const std::string& name) {
  std::ifstream in(std::string(ACT_SHARED_DIR) + "/kernels/paper/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_listing(const std::string& name) {
  std::ifstream in(std::string(ACT_SOURCE_DIR) + "/tests/data/amx/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("amx: the paper's K1 and K2 listings verify against their HLO", "[isa][amx]") {
  const hlo::Module k1 = hlo::parse_module(read_kernel("k1_cnn_inf_amx.hlo"));
  const hlo::Module k2 = hlo::parse_module(read_kernel("k2_rnn_inf_amx.hlo"));
  const std::string k1_listing = read_listing("k1_onednn.asm"), k2_listing = read_listing("k2_onednn.asm");
  const VerifyResult r1 = verify(k1, kAmx, parse_program(k1_listing, kAmx), 3, 5);
  INFO(r1.message);
  CHECK(r1.ok);
  const VerifyResult r2 = verify(k2, kAmx, parse_program(k2_listing, kAmx), 3, 6);
  INFO(r2.message);
  CHECK(r2.ok);
  // Swapping A and B in one product, or storing two tiles in each other's place, is caught.
  std::string swapped = k1_listing;
  swapped.replace(swapped.find("tdpbusd(dst = 3, src0 = 5, src1 = 7)"), 36, "tdpbusd(dst = 3, src0 = 7, src1 = 5)");
  CHECK_FALSE(verify(k1, kAmx, parse_program(swapped, kAmx), 1, 5).ok);
  std::string misplaced = k2_listing;
  misplaced.replace(misplaced.find("src = 0, mem_addr = 0x0c00"), 26, "src = 1, mem_addr = 0x0c00");
  misplaced.replace(misplaced.rfind("src = 1, mem_addr = 0x1000"), 26, "src = 0, mem_addr = 0x1000");
  CHECK_FALSE(verify(k2, kAmx, parse_program(misplaced, kAmx), 1, 6).ok);
}

TEST_CASE("amx: K3's instructions verify once the stores follow the output layout", "[isa][amx]") {
  const hlo::Module k3 = hlo::parse_module(read_kernel("k3_mem_format_avx.hlo"));
  const std::string reordered = read_listing("k3_onednn_reordered.asm");
  const Program program = parse_program(reordered, kAmx);
  CHECK(program.instructions.size() == 100);  // the paper's count for K3
  const VerifyResult r = verify(k3, kAmx, program, 3, 9);
  INFO(r.message);
  CHECK(r.ok);
  // The paper's printed store order: zmm(31 - k) to slot k (slots from the aligned output address
  // 0x180; the listing itself packs the output at 0x160).
  Program as_printed = program;
  for (int k = 0; k < 28; ++k) {
    ConcreteInstruction& store = as_printed.instructions[static_cast<std::size_t>(72 + k)];
    REQUIRE(store.name == "vmovupsz_store");
    store.attributes = {31 - k, 0x180 + 64 * k};
  }
  CHECK_FALSE(verify(k3, kAmx, as_printed, 1, 9).ok);
}
