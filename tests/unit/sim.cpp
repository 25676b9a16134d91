// sim/: physical layouts, the kernel HBM image, assembly text, instruction execution, verify().
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <fstream>
#include <sstream>
#include <string>

#include "act/core/layout.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/qkv.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sim/machine.hpp"
#include "act/sim/program_formats.hpp"
#include "act/sim/verify.hpp"

using namespace act;
using namespace act::sim;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::string shared(const std::string& rel) { return std::string(ACT_SHARED_DIR) + "/" + rel; }
std::string source(const std::string& rel) { return std::string(ACT_SOURCE_DIR) + "/" + rel; }

Shape tiled(DType t, std::vector<std::int64_t> dims, std::vector<std::int64_t> m2m, std::vector<std::vector<std::int64_t>> tiles) {
  Shape s(t, std::move(dims));
  s.has_layout = true;
  s.layout.minor_to_major = std::move(m2m);
  for (auto& tile : tiles) s.layout.tiles.push_back(Tile{std::move(tile)});
  return s;
}

// Fills element i with i (wrapped to the dtype).
Literal iota_literal(DType t, std::vector<std::int64_t> dims) {
  Literal l(Shape(t, std::move(dims)));
  for (std::int64_t i = 0; i < l.element_count(); ++i) l.set_int(i, i);
  return l;
}

// A small ISA exercising what QKV lacks: 2-D access dims, state registers, two outputs.
struct Tiny {
  static constexpr std::string_view name = "tiny";
  static constexpr std::array buffers{
      isa::hbm("d0", 256),
      isa::Buffer{.name = "r", .access_dims = {4, 2}, .unit_dims = {2}, .dtype = DType::s32},
  };
  static constexpr std::array state{isa::StateRegister{"count", 5}};
  static constexpr std::array instructions{
      // rows units of s32[2] from HBM into column `col` of rows row..row+rows-1.
      isa::Instruction{.name = "ld", .alpha = {"rows"}, .beta = {"src", "row", "col"},
                       .inputs = {{"d0", {"src"}, {"rows * 8"}}},
                       .outputs = {{"r", {"row", "col"}, {"rows", "1"}}},
                       .constraints = {"rows >= 1"},
                       .updates = {{"count", "count + rows"}},
                       .semantics = R"(ENTRY ld {
  %In1 = u8[`rows * 8`] parameter(0)
  %a = u8[`rows`, 1, 2, 4] reshape(%In1)
  ROOT %Out0 = s32[`rows`, 1, 2] bitcast-convert(%a)
})"},
      // Two whole rows to HBM.
      isa::Instruction{.name = "st", .alpha = {}, .beta = {"row", "dst"},
                       .inputs = {{"r", {"row", "0"}, {"2", "2"}}},
                       .outputs = {{"d0", {"dst"}, {"32"}}},
                       .semantics = R"(ENTRY st {
  %In1 = s32[2, 2, 2] parameter(0)
  %a = u8[2, 2, 2, 4] bitcast-convert(%In1)
  ROOT %Out0 = u8[32] reshape(%a)
})"},
      // r[s] = r[a] + r[b] and r[d] = r[a] - r[b]: two outputs.
      isa::Instruction{.name = "addsub", .alpha = {}, .beta = {"a", "b", "s", "d"},
                       .inputs = {{"r", {"a", "0"}, {"1", "2"}}, {"r", {"b", "0"}, {"1", "2"}}},
                       .outputs = {{"r", {"s", "0"}, {"1", "2"}}, {"r", {"d", "0"}, {"1", "2"}}},
                       .constraints = {"s != d"},
                       .semantics = R"(ENTRY addsub {
  %In1 = s32[1, 2, 2] parameter(0)
  %In2 = s32[1, 2, 2] parameter(1)
  %Out1 = s32[1, 2, 2] subtract(%In1, %In2)
  ROOT %Out0 = s32[1, 2, 2] add(%In1, %In2)
})"},
  };
};

const isa::IsaView kQkv = isa::view<isa::Qkv>();
const isa::IsaView kTiny = isa::view<Tiny>();

std::int32_t s32_at(std::span<const std::uint8_t> bytes, std::size_t element) {
  std::int32_t v;
  std::memcpy(&v, bytes.data() + element * 4, 4);
  return v;
}

}  // namespace

// ---------------------------------------------------------------- layouts

TEST_CASE("row-major untiled layout is the identity") {
  const Shape s = tiled(DType::s16, {3, 5}, {1, 0}, {});
  CHECK(physical_byte_size(s) == 30);
  const Literal value = iota_literal(DType::s16, {3, 5});
  const auto bytes = to_physical_bytes(value, s);
  CHECK(std::equal(bytes.begin(), bytes.end(), value.bytes().begin(), value.bytes().end()));
  CHECK(from_physical_bytes(s, bytes).bitwise_equal(value));
}

TEST_CASE("column-major layout transposes the bytes") {
  const Shape s = tiled(DType::s8, {2, 3}, {0, 1}, {});
  const auto bytes = to_physical_bytes(iota_literal(DType::s8, {2, 3}), s);
  // Element (i, j) = 3i + j sits at j*2 + i.
  CHECK(bytes == std::vector<std::uint8_t>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("s8[32,64]{1,0:T(16,4)} (the AMX weight layout)") {
  const Shape s = tiled(DType::s8, {32, 64}, {1, 0}, {{16, 4}});
  CHECK(physical_dims(s) == std::vector<std::int64_t>{2, 16, 16, 4});
  CHECK(physical_byte_size(s) == 2048);
  const auto offsets = physical_element_offsets(s);
  auto at = [&](std::int64_t r, std::int64_t c) { return offsets[static_cast<std::size_t>(r * 64 + c)]; };
  // ((r/16)*16 + c/4) * 64 + (r%16)*4 + c%4
  CHECK(at(0, 0) == 0);
  CHECK(at(0, 3) == 3);
  CHECK(at(0, 4) == 64);
  CHECK(at(1, 0) == 4);
  CHECK(at(16, 0) == 1024);
  CHECK(at(17, 5) == 1093);
  CHECK(at(31, 63) == 2047);
}

TEST_CASE("i32[32,32]{T(16,16)} (the paper's shorthand: default order, tiled)") {
  Shape s(DType::s32, {32, 32});
  s.has_layout = true;  // minor_to_major left empty: the default
  s.layout.tiles.push_back(Tile{{16, 16}});
  CHECK(physical_byte_size(s) == 4096);
  Literal value(Shape(DType::s32, {32, 32}));
  value.set_int(16, 7);       // (0, 16): tile (0,1) -> element 256 -> byte 1024
  value.set_int(16 * 32, 9);  // (16, 0): tile (1,0) -> element 512 -> byte 2048
  value.set_int(33, -3);      // (1, 1): element 17 -> byte 68
  const auto bytes = to_physical_bytes(value, s);
  CHECK(s32_at(bytes, 256) == 7);
  CHECK(s32_at(bytes, 512) == 9);
  CHECK(s32_at(bytes, 17) == -3);
  CHECK(from_physical_bytes(s, bytes).bitwise_equal(value));
}

TEST_CASE("tiling pads to a multiple of the tile, and padding reads back as nothing") {
  const Shape s = tiled(DType::u8, {3, 5}, {1, 0}, {{2, 4}});
  CHECK(physical_dims(s) == std::vector<std::int64_t>{2, 2, 2, 4});
  CHECK(physical_byte_size(s) == 32);
  const Literal value = iota_literal(DType::u8, {3, 5});
  const auto bytes = to_physical_bytes(value, s);
  CHECK(bytes[7] == 8);    // (1,3): tile (0,0), inner (1,3)
  CHECK(bytes[24] == 14);  // (2,4): tile (1,1), inner (0,0)
  CHECK(bytes[25] == 0);   // padding
  CHECK(from_physical_bytes(s, bytes).bitwise_equal(value));
}

TEST_CASE("a second tile re-tiles the minor-most dims of the first") {
  // T(2,2)(2,1): within each 2x2 tile the (2,1) sub-tiling stores columns contiguously.
  const Shape s = tiled(DType::bf16, {4, 4}, {1, 0}, {{2, 2}, {2, 1}});
  CHECK(physical_dims(s) == std::vector<std::int64_t>{2, 2, 1, 2, 2, 1});
  const auto offsets = physical_element_offsets(s);
  auto at = [&](std::int64_t r, std::int64_t c) { return offsets[static_cast<std::size_t>(r * 4 + c)]; };
  CHECK(at(1, 0) == 1);
  CHECK(at(0, 1) == 2);
  CHECK(at(1, 1) == 3);
  CHECK(at(2, 1) == 10);
  CHECK(at(0, 2) == 4);
}

TEST_CASE("a tile of higher rank than the array adds leading size-1 dims") {
  const Shape s = tiled(DType::f32, {3}, {0}, {{2, 4}});
  CHECK(physical_dims(s) == std::vector<std::int64_t>{1, 1, 2, 4});
  CHECK(physical_byte_size(s) == 32);
}

TEST_CASE("bad layouts are errors, not crashes") {
  CHECK_THROWS_AS(physical_byte_size(tiled(DType::f32, {2, 3}, {0, 0}, {})), Error);
  CHECK_THROWS_AS(physical_byte_size(tiled(DType::f32, {2, 3}, {1, 0}, {{0, 2}})), Error);
  CHECK_THROWS_AS(physical_byte_size(tiled(DType::f32, {2, 3}, {1, 0}, {{Tile::kCombineDimension, 2}})), Error);
  CHECK_THROWS_AS(physical_byte_size(tiled(DType::f32, {std::int64_t{1} << 40, std::int64_t{1} << 40}, {1, 0}, {})), Error);
  CHECK_THROWS_AS(from_physical_bytes(tiled(DType::f32, {2, 3}, {1, 0}, {}), std::vector<std::uint8_t>(5)), Error);
}

// ---------------------------------------------------------------- kernel image

TEST_CASE("QKV attention's HBM image: Q, K, V at 0, 8K, 16K, output at 24K") {
  const auto kernel = hlo::parse_module(read_text(shared("kernels/qkv/attention.hlo")));
  const KernelImage image = kernel_image(kernel);
  REQUIRE(image.inputs.size() == 3);
  REQUIRE(image.outputs.size() == 1);
  CHECK(image.inputs[0].address == 0);
  CHECK(image.inputs[1].address == 8192);
  CHECK(image.inputs[2].address == 16384);
  CHECK(image.inputs[1].name == "k");
  CHECK(image.outputs[0].address == 24576);
  CHECK(image.outputs[0].bytes == 8192);
  CHECK(image.constant_pool_address == 32768);
  const auto lines = image.describe();
  REQUIRE(lines.size() == 7);
  CHECK(lines[6] == "  regions aligned to 64 bytes");
  CHECK(lines[2] == "  input  k bf16[64,64]{1,0} at 8192 (8192 bytes)");
  CHECK(lines[4] == "  output output bf16[64,64]{1,0} at 24576 (8192 bytes)");
}

TEST_CASE("a tiled kernel's image uses the tiled sizes; tuple outputs follow in order") {
  const auto kernel = hlo::parse_module(read_text(shared("kernels/paper/k5_cnn_inf_mix.hlo")));
  const KernelImage image = kernel_image(kernel);
  REQUIRE(image.inputs.size() == 6);
  CHECK(image.inputs[1].address == 2048);  // after X u8[32,64]
  CHECK(image.inputs[2].address == 4096);  // after Y i8[32,64]{T(16,4)}: 2048 bytes
  REQUIRE(image.outputs.size() == 2);
  // inputs: 2048 + 2048 + 192 + 64 * 3 = 4480; dot.3 is i32[32,32]{T(16,16)}
  CHECK(image.outputs[0].address == 4480);
  CHECK(image.outputs[0].bytes == 4096);
  CHECK(image.outputs[0].shape.layout.tiles.size() == 1);
  CHECK(image.outputs[1].address == 8576);
  CHECK(image.constant_pool_address == 8640);  // 8576 + 48, up to a multiple of 64
}

TEST_CASE("HBM regions start at multiples of the image alignment (64 bytes by default)") {
  const auto kernel = hlo::parse_module(read_text(shared("kernels/paper/k3_mem_format_avx.hlo")));
  // A f32[32] (128 bytes), B f32[14,4] (224 bytes), the output f32[14,32]{T(14,16)} (1792 bytes).
  const KernelImage aligned = kernel_image(kernel);
  CHECK(aligned.alignment == 64);
  CHECK(aligned.inputs[1].address == 128);
  CHECK(aligned.outputs[0].address == 384);  // 128 + 224 = 352, rounded up
  CHECK(aligned.constant_pool_address == 384 + 1792);
  const KernelImage packed = kernel_image(kernel, ImageOptions{.alignment = 1});
  CHECK(packed.outputs[0].address == 352);
  CHECK(packed.constant_pool_address == 352 + 1792);
  const KernelImage pages = kernel_image(kernel, ImageOptions{.alignment = 4096});
  CHECK(pages.inputs[1].address == 4096);
  CHECK(pages.outputs[0].address == 8192);
  CHECK(pages.constant_pool_address == 12288);
  for (std::int64_t bad : {0, -64, 3, 48})
    CHECK_THROWS_WITH(kernel_image(kernel, ImageOptions{.alignment = bad}), Catch::Contains("power of two"));
}

// ---------------------------------------------------------------- assembly text

TEST_CASE("the paper's QKV program parses as is, and prints back identically") {
  const std::string text = read_text(shared("kernels/qkv/attention.expected.asm"));
  const Program program = parse_program(text, kQkv);
  REQUIRE(program.instructions.size() == 9);
  CHECK(program.instructions[0] == ConcreteInstruction{"load_rm", {64, 0, 0}, {}});
  CHECK(program.instructions[2] == ConcreteInstruction{"gemm", {0, 64, 0}, {}});
  CHECK(program.instructions[2].location == SourceLocation{5, 1});
  CHECK(program.instructions[8].attributes == std::vector<std::int64_t>{64, 0, 24576});
  const std::string printed = print_program(program, kQkv);
  std::string without_comments;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] != '#') without_comments += line + "\n";
  CHECK(printed == without_comments);
  CHECK(parse_program(printed, kQkv) == program);
}

TEST_CASE("attributes in any order, hex values, comments, constants: round trip") {
  const Program program = parse_program(
      "  # header\n"
      "\n"
      "store_rm(addr_out = 0x6000, n = 64, addr_in = 0)   # trailing comment\r\n"
      ".constant bytes = 803f, addr = 32770\n"
      ".constant addr = 32768, bytes = 0x0000\n"
      "gemm( addr_1=1 ,addr_2=2,addr_out=-3 )\n",
      kQkv);
  REQUIRE(program.instructions.size() == 2);
  CHECK(program.instructions[0].attributes == std::vector<std::int64_t>{64, 0, 24576});
  CHECK(program.instructions[1].attributes == std::vector<std::int64_t>{1, 2, -3});
  REQUIRE(program.constants.size() == 1);  // the two blocks touch: merged
  CHECK(program.constants[0].address == 32768);
  CHECK(program.constants[0].bytes == std::vector<std::uint8_t>{0, 0, 0x80, 0x3f});

  PrintOptions hex;
  hex.hex = true;
  hex.header = {"act assembly for ISA qkv"};
  const std::string printed = print_program(program, kQkv, hex);
  CHECK(printed ==
        "# act assembly for ISA qkv\n"
        "store_rm(n = 0x40, addr_in = 0x0, addr_out = 0x6000)\n"
        "gemm(addr_1 = 0x1, addr_2 = 0x2, addr_out = -0x3)\n"
        ".constant addr = 0x8000, bytes = 0000803f\n");
  CHECK(parse_program(printed, kQkv) == program);
  CHECK(parse_program(print_program(program, kQkv), kQkv) == program);
}

TEST_CASE("long constant blocks print over several lines and read back as one") {
  Program program;
  program.constants.push_back({100, std::vector<std::uint8_t>(150)});
  for (std::size_t i = 0; i < 150; ++i) program.constants[0].bytes[i] = static_cast<std::uint8_t>(i * 7);
  const std::string printed = print_program(program, kQkv);
  CHECK(std::count(printed.begin(), printed.end(), '\n') == 3);
  CHECK(printed.find(".constant addr = 228, bytes = ") != std::string::npos);
  CHECK(parse_program(printed, kQkv) == program);
}

TEST_CASE("assembly errors point at line:column") {
  auto error_at = [](std::string_view text) -> std::pair<SourceLocation, std::string> {
    try {
      parse_program(text, kQkv);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Parse);
      return {e.location(), e.message()};
    }
    FAIL("no error for: " << text);
    return {};
  };
  auto [loc1, msg1] = error_at("# c\n  fma(n = 1)\n");
  CHECK(loc1 == SourceLocation{2, 3});
  CHECK_THAT(msg1, Catch::Contains("unknown instruction 'fma'"));
  auto [loc2, msg2] = error_at("mov(n = 1, addr_in = 0, adr_out = 0)");
  CHECK(loc2 == SourceLocation{1, 25});
  CHECK_THAT(msg2, Catch::Contains("no attribute 'adr_out'"));
  auto [loc3, msg3] = error_at("mov(n = 1, addr_in = 0)");
  CHECK(loc3 == SourceLocation{1, 1});
  CHECK_THAT(msg3, Catch::Contains("missing attribute 'addr_out'"));
  auto [loc4, msg4] = error_at("\nmov(n = 1, n = 2, addr_in = 0, addr_out = 0)");
  CHECK(loc4 == SourceLocation{2, 12});
  CHECK_THAT(msg4, Catch::Contains("given twice"));
  auto [loc5, msg5] = error_at("mov(n = 1x, addr_in = 0, addr_out = 0)");
  CHECK(loc5 == SourceLocation{1, 9});
  CHECK_THAT(msg5, Catch::Contains("bad number '1x'"));
  auto [loc6, msg6] = error_at("mov(n = 99999999999999999999, addr_in = 0, addr_out = 0)");
  CHECK(loc6 == SourceLocation{1, 9});
  auto [loc7, msg7] = error_at("mov(n = 1, addr_in = 0, addr_out = 0");
  CHECK(loc7 == SourceLocation{1, 37});
  auto [loc8, msg8] = error_at("mov(n = 1, addr_in = 0, addr_out = 0) x");
  CHECK(loc8 == SourceLocation{1, 39});
  auto [loc9, msg9] = error_at(".constant addr = 4, bytes = 123");
  CHECK(loc9 == SourceLocation{1, 29});
  CHECK_THAT(msg9, Catch::Contains("even number"));
  auto [loc10, msg10] = error_at(".data addr = 4");
  CHECK(loc10 == SourceLocation{1, 1});
  auto [loc11, msg11] = error_at("mov(n = , addr_in = 0, addr_out = 0)");
  CHECK(loc11 == SourceLocation{1, 9});
  auto [loc12, msg12] = error_at(".constant addr = 4");
  CHECK_THAT(msg12, Catch::Contains("'bytes' is missing"));
}

// ---------------------------------------------------------------- executing instructions

TEST_CASE("load_rm then store_rm moves bytes exactly") {
  Machine m(kQkv);
  auto hbm = m.hbm();
  REQUIRE(hbm.size() == (1u << 20));
  for (std::size_t i = 0; i < 3 * 128; ++i) hbm[1000 + i] = static_cast<std::uint8_t>(i * 31 + 7);
  m.execute({"load_rm", {3, 1000, 5}, {}});
  // d1 rows 5..7 hold the bytes; row 4 and 8 stay zero.
  const auto d1 = m.bytes("d1");
  CHECK(d1[5 * 128] == hbm[1000]);
  CHECK(d1[8 * 128 - 1] == hbm[1000 + 3 * 128 - 1]);
  CHECK(d1[4 * 128 + 127] == 0);
  CHECK(d1[8 * 128] == 0);
  m.execute({"store_rm", {2, 6, 50000}, {}});
  for (std::size_t i = 0; i < 256; ++i) REQUIRE(hbm[50000 + i] == hbm[1000 + 128 + i]);
  CHECK(hbm[50000 + 256] == 0);
}

TEST_CASE("load_cm transposes: d1 row j holds column j of the loaded matrix") {
  Machine m(kQkv);
  Literal a(Shape(DType::bf16, {64, 64}));
  for (std::int64_t i = 0; i < 64 * 64; ++i) a.set_float(i, static_cast<double>(i % 97) - 40.0);
  std::copy(a.bytes().begin(), a.bytes().end(), m.hbm().begin());
  m.execute({"load_cm", {64, 0, 64}, {}});
  const Literal d1 = Literal::from_bytes(Shape(DType::bf16, {128, 64}), m.bytes("d1"));
  for (int r : {0, 5, 63})
    for (int c : {0, 17, 63}) CHECK(d1.get_float((64 + c) * 64 + r) == a.get_float(r * 64 + c));
}

TEST_CASE("gemm equals a hand-computed dot product") {
  Machine m(kQkv);
  Literal a(Shape(DType::bf16, {64, 64})), b(Shape(DType::bf16, {64, 64}));
  for (std::int64_t i = 0; i < 64 * 64; ++i) {
    a.set_float(i, (i % 5) - 2);       // small integers: exact in bf16 and in the f32 sum
    b.set_float(i, ((i / 64) % 3) - 1);
  }
  auto d1 = m.bytes("d1");
  std::copy(a.bytes().begin(), a.bytes().end(), d1.begin() + 64 * 128);
  std::copy(b.bytes().begin(), b.bytes().end(), d1.begin());
  m.execute({"gemm", {64, 0, 0}, {}});
  const Literal out = Literal::from_bytes(Shape(DType::bf16, {64, 64}), m.bytes("d2"));
  for (int r : {0, 1, 33, 63})
    for (int c : {0, 7, 63}) {
      double sum = 0;
      for (int k = 0; k < 64; ++k) sum += a.get_float(r * 64 + k) * b.get_float(k * 64 + c);
      CHECK(out.get_float(r * 64 + c) == sum);
    }
}

TEST_CASE("softmax rows sum to about one") {
  Machine m(kQkv);
  Literal x(Shape(DType::bf16, {2, 64}));
  for (std::int64_t i = 0; i < 128; ++i) x.set_float(i, (i % 9) * 0.25);
  std::copy(x.bytes().begin(), x.bytes().end(), m.bytes("d2").begin() + 3 * 128);
  m.execute({"softmax", {2, 3}, {}});
  const Literal y = Literal::from_bytes(Shape(DType::bf16, {64, 64}), m.bytes("d2"));
  double sum = 0;
  for (int c = 0; c < 64; ++c) sum += y.get_float(4 * 64 + c);
  CHECK(sum == Approx(1.0).epsilon(0.05));
  // Row 4 holds x's second row, x[64 + c] = ((64 + c) % 9) / 4: column 7 has the largest input, 8 the smallest.
  CHECK(y.get_float(4 * 64 + 7) > y.get_float(4 * 64 + 8));
  CHECK(y.get_float(0) == 0);                                 // row 0 untouched
  CHECK(m.cached_semantics() == 1);
}

// ---- QKV numerics, bit-exact against values worked out by hand (or by the test's own few
// lines of float arithmetic), never through the reference interpreter: a numerics bug that the
// simulator and the interpreter share (they run the same evaluator) must still show here.

namespace {

// f32 -> bf16 bits, round to nearest even, written independently of core/float16.hpp.
std::uint16_t bf16_bits_by_hand(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t low = u & 0xffffu, high = u >> 16;
  if (low > 0x8000u || (low == 0x8000u && (high & 1u))) return static_cast<std::uint16_t>(high + 1);
  return static_cast<std::uint16_t>(high);
}
float bf16_value(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::uint16_t bf16_bits_at(std::span<const std::uint8_t> bytes, std::size_t element) {
  return static_cast<std::uint16_t>(bytes[2 * element] | (bytes[2 * element + 1] << 8));
}
void put_bf16(std::span<std::uint8_t> bytes, std::size_t element, std::uint16_t bits) {
  bytes[2 * element] = static_cast<std::uint8_t>(bits & 0xff);
  bytes[2 * element + 1] = static_cast<std::uint8_t>(bits >> 8);
}

}  // namespace

TEST_CASE("QKV gemm, bit-exact: f32 accumulation, one round-to-nearest-even to bf16") {
  // Row 0 of A is [1, 2^-8, 2^-9, 2^-8, 0...]; B's columns pick sums of it. Expected bits by hand:
  //   col 0: 1 + 2^-8 + 2^-8 = 1 + 2^-7 exactly        -> 0x3f81 (bf16 accumulation: 1, 1 -> 0x3f80)
  //   col 1: 1 + 2^-8, a tie                           -> 0x3f80 (to even)
  //   col 2: 1 + 3 * 2^-8, a tie                       -> 0x3f82 (to even; truncation: 0x3f81)
  //   col 3: 1 + 2^-8 + 2^-9, above the tie            -> 0x3f81 (truncation: 0x3f80)
  //   col 4: -(1 + 3 * 2^-8)                           -> 0xbf82
  //   col 5: 256 + 1 (257 needs 9 bits), a tie         -> 256 = 0x4380
  //   col 6: 256 + 3 (259), a tie between 258 and 260  -> 260 = 0x4382
  Machine m(kQkv);
  auto hbm = m.hbm();
  std::fill(hbm.begin(), hbm.begin() + 16384, std::uint8_t{0});
  auto a = hbm.subspan(0, 8192), b = hbm.subspan(8192, 8192);
  put_bf16(a, 0, 0x3f80);  // 1
  put_bf16(a, 1, 0x3b80);  // 2^-8
  put_bf16(a, 2, 0x3b00);  // 2^-9
  put_bf16(a, 3, 0x3b80);  // 2^-8
  put_bf16(a, 4, 0x4380);  // 256
  const auto one = std::uint16_t{0x3f80}, three = std::uint16_t{0x4040}, minus_one = std::uint16_t{0xbf80},
             minus_three = std::uint16_t{0xc040};
  auto B = [&](int k, int n, std::uint16_t v) { put_bf16(b, static_cast<std::size_t>(k * 64 + n), v); };
  B(0, 0, one), B(1, 0, one), B(3, 0, one);
  B(0, 1, one), B(1, 1, one);
  B(0, 2, one), B(1, 2, three);
  B(0, 3, one), B(1, 3, one), B(2, 3, one);
  B(0, 4, minus_one), B(1, 4, minus_three);
  B(4, 5, one), B(0, 5, one);
  B(4, 6, one), B(0, 6, three);
  const Program program = parse_program(
      "load_rm(n = 64, addr_in = 0, addr_out = 0)\nload_rm(n = 64, addr_in = 8192, addr_out = 64)\n"
      "gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)\nmov(n = 64, addr_in = 0, addr_out = 0)\n"
      "store_rm(n = 64, addr_in = 0, addr_out = 16384)\n",
      kQkv);
  m.run(program);
  const auto out = std::span<const std::uint8_t>(m.hbm()).subspan(16384, 8192);
  CHECK(bf16_bits_at(out, 0) == 0x3f81);
  CHECK(bf16_bits_at(out, 1) == 0x3f80);
  CHECK(bf16_bits_at(out, 2) == 0x3f82);
  CHECK(bf16_bits_at(out, 3) == 0x3f81);
  CHECK(bf16_bits_at(out, 4) == 0xbf82);
  CHECK(bf16_bits_at(out, 5) == 0x4380);
  CHECK(bf16_bits_at(out, 6) == 0x4382);
  CHECK(bf16_bits_at(out, 7) == 0x0000);
  CHECK(bf16_bits_at(out, 64) == 0x0000);  // row 1 of A is zero
}

TEST_CASE("QKV softmax, bit-exact: exp and divide in f32 rounded to bf16, a bf16 running sum") {
  // A row of zeros: exp(0) = 1, the sum is 64 (exact in bf16), 1/64 = 2^-6 -> 0x3c80.
  // A row [1, -1, 0.5, 0...]: each step worked out with f32 arithmetic and the test's own
  // rounding, as the semantics define it: a = bf16(exp(x)), r = bf16(r + a) left to right,
  // y = bf16(a / r).
  Machine m(kQkv);
  auto d2 = m.bytes("d2");
  std::fill(d2.begin(), d2.end(), std::uint8_t{0});
  auto row1 = d2.subspan(128, 128);
  put_bf16(row1, 0, 0x3f80);  // 1
  put_bf16(row1, 1, 0xbf80);  // -1
  put_bf16(row1, 2, 0x3f00);  // 0.5
  m.execute(parse_program("softmax(n = 2, addr = 0)\n", kQkv).instructions[0]);
  for (std::size_t c = 0; c < 64; ++c) CHECK(bf16_bits_at(d2, c) == 0x3c80);
  const float x[3] = {1.0f, -1.0f, 0.5f};
  std::uint16_t a[64];
  for (int c = 0; c < 64; ++c) a[c] = bf16_bits_by_hand(std::exp(c < 3 ? x[c] : 0.0f));
  CHECK(a[0] == 0x402e);  // e = 2.71828... -> 2.71875
  CHECK(a[1] == 0x3ebc);  // 1/e = 0.36788... -> 0.367188
  std::uint16_t r = 0;
  for (int c = 0; c < 64; ++c) r = bf16_bits_by_hand(bf16_value(r) + bf16_value(a[c]));
  for (std::size_t c = 0; c < 64; ++c) {
    INFO("column " << c);
    CHECK(bf16_bits_at(d2, 64 + c) == bf16_bits_by_hand(bf16_value(a[c]) / bf16_value(r)));
  }
  CHECK(bf16_bits_at(d2, 64) != bf16_bits_at(d2, 65));
}

TEST_CASE("semantics are parsed once per (instruction, alpha)") {
  Machine m(kQkv);
  m.execute({"load_rm", {2, 0, 0}, {}});
  m.execute({"load_rm", {2, 256, 4}, {}});
  CHECK(m.cached_semantics() == 1);
  m.execute({"load_rm", {3, 0, 0}, {}});
  CHECK(m.cached_semantics() == 2);
}

TEST_CASE("a violated constraint is an execution error naming the instruction") {
  Machine m(kQkv);
  try {
    m.execute({"load_cm", {32, 0, 0}, {7, 3}});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Execution);
    CHECK(e.location() == SourceLocation{7, 3});
    CHECK_THAT(e.message(), Catch::Contains("load_cm(n = 32, addr_in = 0, addr_out = 0)"));
    CHECK_THAT(e.message(), Catch::Contains("n == 64"));
  }
}

TEST_CASE("an out-of-range slice is an execution error giving the range") {
  Machine m(kQkv);
  try {
    m.execute({"load_rm", {64, 0, 100}, {}});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Execution);
    CHECK_THAT(e.message(), Catch::Contains("load_rm(n = 64, addr_in = 0, addr_out = 100)"));
    CHECK_THAT(e.message(), Catch::Contains("d1[100:164]"));
  }
  CHECK_THROWS_AS(m.execute({"load_rm", {1, (1 << 20) - 100, 0}, {}}), Error);
  CHECK_THROWS_AS(m.execute({"load_rm", {1, -128, 0}, {}}), Error);
  CHECK_THROWS_AS(m.execute({"store_rm", {1, 0, INT64_MAX}, {}}), Error);
  CHECK_THROWS_AS(m.execute({"mov", {1, 0}, {}}), Error);        // attribute count
  CHECK_THROWS_AS(m.execute({"nop", {}, {}}), Error);            // unknown instruction
  CHECK(std::all_of(m.bytes("d1").begin(), m.bytes("d1").end(), [](auto b) { return b == 0; }));
}

TEST_CASE("2-D access dims, state updates and two outputs (a tiny ISA)") {
  Machine m(kTiny);
  CHECK(m.state("count") == 5);
  for (int i = 0; i < 8; ++i) {
    const std::int32_t v = i + 1;
    std::memcpy(m.hbm().data() + 4 * i, &v, 4);
  }
  m.execute({"ld", {4, 0, 0, 1}, {}});  // 4 units into column 1 of rows 0..3
  CHECK(m.state("count") == 9);
  const auto r = m.bytes("r");  // s32[4,2,2]: element (i, j, k) at i*4 + j*2 + k
  for (int i = 0; i < 4; ++i) {
    CHECK(s32_at(r, static_cast<std::size_t>(i * 4 + 2)) == 2 * i + 1);
    CHECK(s32_at(r, static_cast<std::size_t>(i * 4 + 3)) == 2 * i + 2);
    CHECK(s32_at(r, static_cast<std::size_t>(i * 4 + 0)) == 0);
  }
  m.execute({"addsub", {0, 1, 2, 3}, {}});
  CHECK(s32_at(r, 2 * 4 + 2) == 1 + 3);
  CHECK(s32_at(r, 2 * 4 + 3) == 2 + 4);
  CHECK(s32_at(r, 3 * 4 + 2) == 1 - 3);
  CHECK(s32_at(r, 3 * 4 + 3) == 2 - 4);
  m.execute({"st", {2, 100}, {}});
  CHECK(s32_at(m.hbm().subspan(100), 2) == 4);
  CHECK(s32_at(m.hbm().subspan(100), 7) == -2);
  CHECK_THROWS_AS(m.execute({"ld", {1, 0, 0, 2}, {}}), Error);  // column 2 of 2
  CHECK_THROWS_AS(m.execute({"addsub", {0, 1, 2, 2}, {}}), Error);
  m.reset();
  CHECK(m.state("count") == 5);
}

// ---------------------------------------------------------------- verify

namespace {
hlo::Module attention() { return hlo::parse_module(read_text(shared("kernels/qkv/attention.hlo"))); }
Program expected_program() { return parse_program(read_text(shared("kernels/qkv/attention.expected.asm")), kQkv); }
}  // namespace

TEST_CASE("verify: the paper's QKV program computes attention") {
  const VerifyResult r = verify(attention(), kQkv, expected_program(), 3, 42);
  INFO(r.message);
  CHECK(r.ok);
  CHECK(r.message ==
        "verification holds (3 trials, seed 42): buffers and HBM scratch started random; outputs equal, inputs and constant "
        "pool unchanged");
}

TEST_CASE("verify: the tutorial's variant program (other d1 rows) also holds") {
  const Program program = parse_program(read_text(source("examples/kernels/qkv/attention_swapped_rows.asm")), kQkv);
  const VerifyResult r = verify(attention(), kQkv, program, 2, 1);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("verify: swapping gemm's operands is caught") {
  Program program = expected_program();
  std::swap(program.instructions[2].attributes[0], program.instructions[2].attributes[1]);
  const VerifyResult r = verify(attention(), kQkv, program, 2, 7);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Catch::Contains("mismatch in output 0 ('output'"));
  CHECK_THAT(r.message, Catch::Contains("trial 0, seed 7"));
}

TEST_CASE("verify: a wrong store address is caught") {
  Program program = expected_program();
  program.instructions[8].attributes[2] = 24576 + 128;
  const VerifyResult r = verify(attention(), kQkv, program, 1, 0);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Catch::Contains("at index [0,0]"));  // row 0 was never written
}

TEST_CASE("verify: an execution error is a failed result, not an exception") {
  Program program = expected_program();
  program.instructions[5].attributes[2] = 100;  // load_rm into d1[100:164]
  const VerifyResult r = verify(attention(), kQkv, program, 1, 0);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Catch::Contains("d1[100:164]"));
}

TEST_CASE("verify compares integers exactly and floats within the stated bound") {
  VerifyOptions options;
  Literal e(Shape(DType::f32, {3})), g(Shape(DType::f32, {3}));
  e.set_float(0, 1.0);
  e.set_float(1, 2.0);
  e.set_float(2, -4.0);
  g = e;
  CHECK(verify_detail::first_mismatch(e, g, options) == -1);
  g.set_float(1, 2.0 + 4 * 0x1p-23);  // 2 ulps at 2.0 (= 4 eps) is within 4 eps * 2 + eps * 4
  CHECK(verify_detail::first_mismatch(e, g, options) == -1);
  g.set_float(1, 2.0 + 0x1p-15);
  CHECK(verify_detail::first_mismatch(e, g, options) == 1);
  Literal ei(Shape(DType::s8, {2})), gi(Shape(DType::s8, {2}));
  gi.set_int(1, 1);
  CHECK(verify_detail::first_mismatch(ei, gi, options) == 1);
}

TEST_CASE("verify: near zero an ulp is the smallest subnormal, not eps times the value") {
  // An AMX soak program multiplied three f32 factors in another order than its kernel; every
  // output was subnormal (~3e-40) and differed by one subnormal step, which eps * |x| bounds
  // (about 3e-47) rejected.
  VerifyOptions options;
  Literal e(Shape(DType::f32, {2})), g(Shape(DType::f32, {2}));
  e.set_bits(0, 0x000335a8);
  e.set_bits(1, 0x00030a5a);
  g = e;
  g.set_bits(1, 0x00030a59);  // one subnormal step below
  CHECK(verify_detail::first_mismatch(e, g, options) == -1);
  g.set_bits(1, 0x00030a5a + 5);  // five steps: more than relative_ulps (4) plus the absolute term
  CHECK(verify_detail::first_mismatch(e, g, options) == 1);
}

TEST_CASE("verify writes inputs and reads outputs through their layouts") {
  // A column-major input is stored transposed, so a plain row load already yields k^T.
  const auto transpose_kernel = hlo::parse_module(R"(HloModule t
ENTRY main {
  %k = bf16[64,64]{0,1} parameter(0)
  ROOT %t = bf16[64,64]{1,0} transpose(%k), dimensions={1,0}
})");
  const Program plain = parse_program("load_rm(n = 64, addr_in = 0, addr_out = 0)\nstore_rm(n = 64, addr_in = 0, addr_out = 8192)\n", kQkv);
  const Program transposing = parse_program("load_cm(n = 64, addr_in = 0, addr_out = 0)\nstore_rm(n = 64, addr_in = 0, addr_out = 8192)\n", kQkv);
  CHECK(verify(transpose_kernel, kQkv, plain, 2, 5).ok);
  CHECK_FALSE(verify(transpose_kernel, kQkv, transposing, 2, 5).ok);
  // A column-major output: copying a row-major input needs the transposing load.
  const auto copy_kernel = hlo::parse_module(R"(HloModule c
ENTRY main {
  %k = bf16[64,64]{1,0} parameter(0)
  ROOT %c = bf16[64,64]{0,1} copy(%k)
})");
  CHECK(verify(copy_kernel, kQkv, transposing, 2, 5).ok);
  CHECK_FALSE(verify(copy_kernel, kQkv, plain, 2, 5).ok);
}

// ---------------------------------------------------------------- verify: no free bytes

TEST_CASE("Machine::randomize fills every buffer from the stream and resets the state registers") {
  Machine m(kTiny);
  m.execute(parse_program("ld(rows = 1, src = 0, row = 0, col = 0)\n", kTiny).instructions[0]);
  CHECK(m.state("count") == 6);
  SplitMix64 a{1}, b{1}, c{2};
  m.randomize(a);
  CHECK(m.state("count") == 5);
  const std::vector<std::uint8_t> hbm_a(m.hbm().begin(), m.hbm().end());
  const std::vector<std::uint8_t> r_a(m.bytes("r").begin(), m.bytes("r").end());
  m.randomize(b);  // the same stream: the same bytes
  CHECK(std::vector<std::uint8_t>(m.hbm().begin(), m.hbm().end()) == hbm_a);
  CHECK(std::vector<std::uint8_t>(m.bytes("r").begin(), m.bytes("r").end()) == r_a);
  m.randomize(c);  // another stream: other bytes, everywhere
  CHECK(std::vector<std::uint8_t>(m.hbm().begin(), m.hbm().end()) != hbm_a);
  CHECK(std::vector<std::uint8_t>(m.bytes("r").begin(), m.bytes("r").end()) != r_a);
  CHECK(std::count(hbm_a.begin(), hbm_a.end(), std::uint8_t{0}) < 16);  // not zeroed (256 bytes)
}

TEST_CASE("verify: a program that reads on-chip bytes it never wrote fails") {
  // gemm reads K^T from d1 rows 64.. without load_cm having put it there: with zeroed buffers
  // this computed softmax(0) @ V, which is wrong, but a program reading a zeroed accumulator
  // would have passed. With random buffers the result is garbage, and differs per trial.
  Program program = expected_program();
  program.instructions.erase(program.instructions.begin() + 1);  // drop load_cm
  const VerifyResult r = verify(attention(), kQkv, program, 2, 3);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Catch::Contains("mismatch in output 0"));
}

TEST_CASE("verify: the output region starts random, so an output must be written whole") {
  // A dot with K = 0 is all zeros; the empty program passed while HBM started zeroed.
  const auto zeros = hlo::parse_module(R"(HloModule dot_k0
ENTRY main {
  %a = bf16[64,0] parameter(0)
  %b = bf16[0,64] parameter(1)
  ROOT %d = bf16[64,64] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  const VerifyResult r = verify(zeros, kQkv, Program{}, 1, 0);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Catch::Contains("mismatch in output 0 ('d' bf16[64,64] at HBM 0)"));
}

TEST_CASE("verify: a program that overwrites an input fails, even with a correct output") {
  Program program = expected_program();
  program.instructions.push_back(parse_program("store_rm(n = 1, addr_in = 0, addr_out = 16384)\n", kQkv).instructions[0]);
  const VerifyResult r = verify(attention(), kQkv, program, 2, 0);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Catch::StartsWith("the program changed input 'v' (bf16[64,64] at HBM 16384): byte 0 (HBM 16384) was 0x"));
}

TEST_CASE("verify: a program that overwrites its constant pool fails; HBM scratch is free") {
  const std::string body = read_text(shared("kernels/qkv/attention.expected.asm"));
  const Program over_pool =
      parse_program(body + "store_rm(n = 1, addr_in = 0, addr_out = 32768)\n.constant addr = 32768, bytes = 0102030405060708\n", kQkv);
  const VerifyResult r = verify(attention(), kQkv, over_pool, 1, 0);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.message, Catch::StartsWith("the program changed its constant pool: byte HBM 32768 was 0x01"));
  // The same store past the pool (scratch) is a spill, allowed.
  const Program spill = parse_program(body + "store_rm(n = 1, addr_in = 0, addr_out = 40960)\n", kQkv);
  const VerifyResult s = verify(attention(), kQkv, spill, 2, 0);
  INFO(s.message);
  CHECK(s.ok);
  // A constant block inside the image is not a constant pool.
  const Program inside = parse_program(body + ".constant addr = 24576, bytes = 00\n", kQkv);
  CHECK_THAT(verify(attention(), kQkv, inside, 1, 0).message, Catch::Contains("lies inside the kernel's inputs and outputs (0..32768)"));
}

TEST_CASE("verify: AMX K1 without its first tilezero fails (the tile starts random)") {
  const auto k1 = hlo::parse_module(read_text(shared("kernels/paper/k1_cnn_inf_amx.hlo")));
  const isa::IsaView amx = isa::view<isa::Amx>();
  const Program good = parse_program(read_text(source("tests/data/amx/k1_onednn.asm")), amx);
  const VerifyResult g = verify(k1, amx, good, 3, 0);
  INFO(g.message);
  CHECK(g.ok);
  const Program mutant = parse_program(read_text(source("tests/data/amx/k1_first_tilezero_deleted.asm")), amx);
  REQUIRE(mutant.instructions.size() + 1 == good.instructions.size());
  const VerifyResult m = verify(k1, amx, mutant, 50, 0);
  CHECK_FALSE(m.ok);
  CHECK_THAT(m.message, Catch::Contains("mismatch in output 0 ('dot.3'"));
}

TEST_CASE("a header line cannot become a live instruction or live Python") {
  const Program program = expected_program();
  ProgramFormatOptions options;
  options.kernel_name = "qkv";
  options.source = "evil\nstore_rm(n = 64, addr_in = 0, addr_out = 0)\n.hlo";
  const KernelImage image = kernel_image(attention());
  const std::string text = format_text(program, kQkv, image, options);
  CHECK_THAT(text, Catch::Contains("(from evil\\x0astore_rm(n = 64, addr_in = 0, addr_out = 0)\\x0a.hlo)"));
  const Program again = parse_program(text, kQkv);
  CHECK(again.instructions.size() == program.instructions.size());  // nothing was injected
  const std::string python = format_python(program, kQkv, image, options);
  CHECK_THAT(python, Catch::StartsWith("# Input file: evil\\x0astore_rm(n = 64, addr_in = 0, addr_out = 0)\\x0a.hlo\n"));
  CHECK(comment_text("a\\b\tc\xff") == "a\\\\b\\x09c\\xff");
}

TEST_CASE("Python function names are identifiers that are not keywords") {
  using formats_detail::python_identifier;
  CHECK(python_identifier("class") == "class_");
  CHECK(python_identifier("jnp") == "jnp_");
  CHECK(python_identifier("my-kernel.1") == "my_kernel_1");
  CHECK(python_identifier("1x") == "kernel_1x");
  CHECK(python_identifier("") == "kernel_");
  CHECK(python_identifier("caf\xc3\xa9") == "caf__");
  ProgramFormatOptions options;
  options.kernel_name = "def";
  const std::string python = format_python(expected_program(), kQkv, kernel_image(attention()), options);
  CHECK_THAT(python, Catch::Contains("def def_(kernel, api):"));
  CHECK_THAT(python, Catch::Contains("    def def__():"));
}

TEST_CASE("random assembly text gives a result or an act::Error, never a crash") {
  const std::string alphabet = "load_rmgemv(n=,)0x9-# .constantaddrbytes\n\t";
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int parsed = 0, rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text = trial % 2 ? "mov(n = 1, addr_in = 0, addr_out = 0)\n" : "";
    const std::size_t length = next() % 40;
    for (std::size_t i = 0; i < length; ++i) text += alphabet[next() % alphabet.size()];
    try {
      parse_program(text, kQkv);
      ++parsed;
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Parse);
      ++rejected;
    }
  }
  CHECK(parsed > 0);
  CHECK(rejected > 0);
}
