// The AMX ISA's programs as C (native/emit_c.hpp, isa/amx_c.hpp), built with the system compiler
// and run on this CPU, compared with the simulator bit for bit and with the reference interpreter.
//
// What runs where: AVX-512 instructions run natively when the CPU has AVX-512F (else the test
// says it skipped, with WARN). Tile instructions run natively when the CPU has AMX; otherwise
// the same C runs with the tiles emulated in software (the mapping's ACT_EMULATE_AMX), and each
// such test WARNs that the native run was skipped and names what this CPU lacks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/codegen/backend.hpp"
#include "act/core/random.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/qkv.hpp"
#include "act/isa/validate.hpp"
#include "act/native/build.hpp"
#include "act/native/emit_c.hpp"
#include "act/native/run.hpp"
#include "act/sim/machine.hpp"
#include "act/testing/random_program.hpp"
#include "amx_golden_replays.hpp"

using namespace act;

namespace {

const isa::IsaView kAmx = isa::view<isa::Amx>();

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The flags /proc/cpuinfo lists (Linux); empty elsewhere.
const std::set<std::string>& cpu_flags() {
  static const std::set<std::string> flags = [] {
    std::set<std::string> out;
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) out.insert(w);
      break;
    }
    return out;
  }();
  return flags;
}
bool cpu_has_avx512() { return cpu_flags().count("avx512f") > 0; }
bool cpu_has_amx() { return cpu_flags().count("amx_tile") > 0 && cpu_flags().count("amx_int8") > 0; }

// Native build options for a program that uses tiles: emulated when this CPU has no AMX.
native::BuildOptions tile_build() { return cpu_has_amx() ? native::BuildOptions{} : native::with_emulation({}, kAmx); }

void warn_if_emulated(std::string_view what) {
  if (!cpu_has_amx())
    WARN(what << ": native AMX run SKIPPED (this CPU lacks amx_tile/amx_int8); the emitted C ran with its tile instructions "
              "emulated in software instead");
}

// Runs `program` over an HBM image prefilled with `init` in the simulator and as emitted C;
// returns both HBMs (the simulator's cut to the native extent). The constant pool's bytes are
// zeroed in both: the simulator writes them into HBM, the C reads them from static arrays.
std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>> run_both(const sim::Program& program, const std::vector<std::uint8_t>& init,
                                                                       const native::NativeKernel& native) {
  sim::Machine machine(kAmx);
  std::copy(init.begin(), init.end(), machine.hbm().begin());
  machine.run(program);
  const auto extent = static_cast<std::int64_t>(native.hbm_bytes());
  REQUIRE(extent >= static_cast<std::int64_t>(init.size()));
  native::HbmBuffer hbm(extent);
  std::copy(init.begin(), init.end(), hbm.bytes().begin());
  REQUIRE(native.init() == nullptr);
  native.run(hbm.bytes().data());
  native.release();
  std::vector<std::uint8_t> simulated(machine.hbm().begin(), machine.hbm().begin() + extent);
  std::vector<std::uint8_t> got(hbm.bytes().begin(), hbm.bytes().end());
  for (const auto& block : program.constants)
    for (std::size_t i = 0; i < block.bytes.size(); ++i) simulated[static_cast<std::size_t>(block.address) + i] = got[static_cast<std::size_t>(block.address) + i] = 0;
  return {simulated, got};
}

// Bytes whose f32 lanes are the awkward cases of the model's numerics (NaN, zeros of both signs,
// infinities, conversion limits, rounding ties, denormals), in a different order per 64 bytes.
std::vector<std::uint8_t> special_floats(std::size_t bytes, std::uint64_t seed) {
  const float values[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 2147483648.0f,
                          -2147483648.0f, 2.5f, -2.5f, 0.5f, 1.5f, 1e-40f, 3e9f, -3e9f, 1.0f, 255.5f, -129.0f, 65536.0f, 0.75f};
  SplitMix64 random{seed};
  std::vector<std::uint8_t> out(bytes);
  for (std::size_t at = 0; at + 4 <= bytes; at += 4) {
    const float v = values[random.below(std::size(values))];
    std::memcpy(&out[at], &v, 4);
  }
  return out;
}

std::vector<std::uint8_t> random_bytes(std::size_t bytes, std::uint64_t seed) {
  SplitMix64 random{seed};
  std::vector<std::uint8_t> out(bytes);
  for (auto& b : out) b = static_cast<std::uint8_t>(random.next());
  return out;
}

// The first differing 4-byte word, as "word at N: simulator X, native Y", or "". Two f32 NaNs are
// equal (native/run.hpp: which NaN an operation on two NaNs returns is not fixed); `nan_words`
// counts the words that differed only that way.
std::string first_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, int* nan_words = nullptr) {
  if (a.size() != b.size()) return "sizes differ";
  for (std::size_t i = 0; i < a.size(); i += 4) {
    const std::size_t n = std::min<std::size_t>(4, a.size() - i);
    std::uint32_t x = 0, y = 0;
    std::memcpy(&x, &a[i], n);
    std::memcpy(&y, &b[i], n);
    if (x == y) continue;
    if (n == 4 && std::isnan(std::bit_cast<float>(x)) && std::isnan(std::bit_cast<float>(y))) {
      if (nan_words) ++*nan_words;
      continue;
    }
    return fmt::format("word at {}: simulator 0x{:08x}, native 0x{:08x}", i, x, y);
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------- the mapping itself

TEST_CASE("amx C mapping: every instruction of isa/amx.hpp has a checked template", "[native][amx]") {
  REQUIRE(kAmx.c_mapping != nullptr);
  CHECK(isa::diagnose(kAmx).ok());
  CHECK(kAmx.instructions.size() == 28);
  for (const auto& instruction : kAmx.instructions) {
    INFO(instruction.name);
    CHECK(kAmx.c_mapping->find(instruction.name) != nullptr);
  }
  // The validator rejects a mapping that leaves an instruction out, or names an unknown attribute.
  std::vector<isa::CInstruction> partial(kAmx.c_mapping->instructions.begin() + 1, kAmx.c_mapping->instructions.end());
  isa::CMapping missing = *kAmx.c_mapping;
  missing.instructions = partial;
  isa::IsaView view = kAmx;
  view.c_mapping = &missing;
  const isa::Diagnostic d = isa::diagnose(view);
  CHECK(d.instruction == kAmx.instructions[0].name);
  CHECK(std::string(d.message.view()) == "C mapping: no C template for this instruction");
  std::vector<isa::CInstruction> typo(kAmx.c_mapping->instructions.begin(), kAmx.c_mapping->instructions.end());
  typo[0].code = "_tile_zero($dest);";
  isa::CMapping misspelt = *kAmx.c_mapping;
  misspelt.instructions = typo;
  view.c_mapping = &misspelt;
  CHECK_THAT(std::string(isa::diagnose(view).message.view()), Catch::Contains("$dest, which is no attribute"));
}

TEST_CASE("C emission: an ISA without a C mapping is refused with a clear error", "[native]") {
  const isa::IsaView qkv = isa::view<isa::Qkv>();
  const sim::Program program = sim::parse_program("load_rm(n = 64, addr_in = 0, addr_out = 0)\n", qkv);
  CHECK_THROWS_WITH(native::emit_c(program, qkv, sim::KernelImage{}), Catch::Contains("ISA qkv has no C mapping"));
}

TEST_CASE("C emission: the file states the image, its alignment and the features; constants stay static", "[native][amx]") {
  const hlo::Module k5 = hlo::parse_module(read_text(std::string(ACT_SOURCE_DIR) + "/examples/kernels/amx/k5_avx_rows2.hlo"));
  const sim::Program program = sim::parse_program(
      "vmovupsz(dst = 0, mem_addr = 0)\nvmulpsz(dst = 1, src0 = 0, mem_addr = 1024)\nvmovupsz_store(src = 1, mem_addr = 512)\n"
      ".constant addr = 1024, bytes = " + std::string(128, '1') + "\n",
      kAmx);
  for (std::int64_t alignment : {1, 64}) {
    const sim::KernelImage image = sim::kernel_image(k5, {.alignment = alignment});
    const std::string c = native::emit_c(program, kAmx, image, {.function_name = "k5_rows2"});
    CHECK_THAT(c, Catch::Contains(fmt::format("regions aligned to {} bytes", alignment)));
    CHECK_THAT(c, Catch::Contains("CPU features: avx512f"));
    CHECK_THAT(c, Catch::Contains("void k5_rows2(uint8_t* hbm)"));
    CHECK_THAT(c, Catch::Contains("__attribute__((target(\"avx512f\")))"));
    CHECK_THAT(c, Catch::Contains("_mm512_loadu_ps((k5_rows2_constants_0 + 0))"));  // read in place
    CHECK_THAT(c, !Catch::Contains("memcpy(hbm"));
    CHECK_THAT(c, !Catch::Contains("k5_rows2_configure"));  // no tile configuration without tiles
    CHECK_THAT(c, !Catch::Contains("_tile_release();"));
  }
  // A store into the pool: the blocks are copied into HBM at every call, and read there.
  const sim::Program writes_pool = sim::parse_program(
      "vmovupsz(dst = 0, mem_addr = 1024)\nvmovupsz_store(src = 0, mem_addr = 1056)\nvmovupsz(dst = 1, mem_addr = 1056)\n"
      "vmovupsz_store(src = 1, mem_addr = 0)\n.constant addr = 1024, bytes = " + std::string(128, '2') + "\n",
      kAmx);
  const std::string c = native::emit_c(writes_pool, kAmx, sim::KernelImage{}, {.function_name = "f"});
  CHECK_THAT(c, Catch::Contains("memcpy(hbm + 1024, f_constants_0, 64);"));
  if (!cpu_has_avx512()) {
    WARN("native run SKIPPED: this CPU lacks avx512f");
    return;
  }
  const native::CKernel kernels[] = {{&program, nullptr, {.function_name = "in_place"}}, {&writes_pool, nullptr, {.function_name = "copied"}}};
  const sim::KernelImage empty;
  native::CKernel with_images[2] = {kernels[0], kernels[1]};
  for (auto& k : with_images) k.image = &empty;
  const native::NativeBuild built(with_images, kAmx);
  for (const auto& [name, p] : {std::pair{"in_place", &program}, std::pair{"copied", &writes_pool}}) {
    INFO(name);
    const auto [simulated, got] = run_both(*p, random_bytes(512, 3), built.kernel(name));
    CHECK(first_difference(simulated, got) == "");
  }
}

// ---------------------------------------------------------------- every instruction, natively

TEST_CASE("every AVX-512 instruction: emitted C on this CPU equals the simulator on all of HBM", "[native][amx]") {
  const sim::Program program = sim::parse_program(read_text(std::string(ACT_SOURCE_DIR) + "/tests/data/amx/avx512_every_instruction.asm"), kAmx);
  std::set<std::string> used;
  for (const auto& ci : program.instructions) used.insert(ci.name);
  CHECK(used.size() == 24);  // all of isa/amx.hpp but the four tile instructions
  if (!cpu_has_avx512()) {
    WARN("native run SKIPPED: this CPU lacks avx512f");
    return;
  }
  const sim::KernelImage image;
  // Built once more with contraction forced on: the file keeps the ISA's two roundings anyway.
  for (const bool contract : {false, true}) {
    native::BuildOptions options;
    if (contract) options.extra_flags = {"-ffp-contract=fast"};
    const native::CKernel kernel{&program, &image, {.function_name = "every_avx512"}};
    const native::NativeBuild built(std::span<const native::CKernel>(&kernel, 1), kAmx, options);
    int nan_words = 0;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      const auto init = seed % 2 ? special_floats(1024, seed) : random_bytes(1024, seed);
      const auto [simulated, got] = run_both(program, init, built.kernel("every_avx512"));
      INFO("seed " << seed << (seed % 2 ? " (special values)" : " (random bytes)") << (contract ? ", -ffp-contract=fast" : ""));
      CHECK(first_difference(simulated, got, &nan_words) == "");
    }
    // NaN against NaN of another sign or payload: only from an operation on two NaNs.
    CHECK(nan_words <= 4);
  }
}

TEST_CASE("vfmadd231ps rounds twice, as the model does, not once as the hardware's FMA", "[native][amx]") {
  if (!cpu_has_avx512()) {
    WARN("native run SKIPPED: this CPU lacks avx512f");
    return;
  }
  // a = b = 1 + 2^-12, c = -(1 + 2^-11): a*b = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11, so the sum
  // is 0; fused it would be 2^-24.
  const sim::Program program = sim::parse_program(
      "vbroadcastssl(dst = 0, mem_addr = 0)\nvbroadcastssl(dst = 1, mem_addr = 4)\nvfmadd231ps(dst = 1, src0 = 0, src1 = 0)\n"
      "vmovupsz_store(src = 1, mem_addr = 64)\n",
      kAmx);
  std::vector<std::uint8_t> init(64, 0);
  const float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  std::memcpy(&init[0], &a, 4);
  std::memcpy(&init[4], &c, 4);
  const sim::KernelImage image;
  const native::CKernel kernel{&program, &image, {.function_name = "fma"}};
  const native::NativeBuild built(std::span<const native::CKernel>(&kernel, 1), kAmx, {.extra_flags = {"-ffp-contract=fast"}});
  const auto [simulated, got] = run_both(program, init, built.kernel("fma"));
  float lane0 = 1;
  std::memcpy(&lane0, &got[64], 4);
  CHECK(lane0 == 0.0f);
  CHECK(std::fma(a, a, c) != 0.0f);  // the single rounding would differ
  CHECK(first_difference(simulated, got) == "");
}

TEST_CASE("the four tile instructions: emitted C equals the simulator on all of HBM", "[native][amx]") {
  const sim::Program program = sim::parse_program(read_text(std::string(ACT_SOURCE_DIR) + "/tests/data/amx/amx_tile_every_instruction.asm"), kAmx);
  const sim::KernelImage image;
  const native::CKernel kernel{&program, &image, {.function_name = "every_tile"}};
  const native::NativeBuild built(std::span<const native::CKernel>(&kernel, 1), kAmx, tile_build());
  warn_if_emulated("tile instructions");
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const auto [simulated, got] = run_both(program, random_bytes(10240, seed), built.kernel("every_tile"));
    INFO("seed " << seed);
    CHECK(first_difference(simulated, got) == "");
  }
}

TEST_CASE("CPU detection: the emitted init agrees with /proc/cpuinfo", "[native][amx]") {
  if (cpu_flags().empty()) {
    WARN("SKIPPED: no /proc/cpuinfo flags on this system");
    return;
  }
  const sim::Program tiles = sim::parse_program("tilezero(dst = 0)\ntilestored(stride = 64, src = 0, mem_addr = 0)\n", kAmx);
  const sim::Program dot = sim::parse_program("tilezero(dst = 0)\ntdpbusd(dst = 2, src0 = 0, src1 = 1)\n", kAmx);
  const sim::Program vectors = sim::parse_program("vpxord(dst = 0, src0 = 0, src1 = 0)\n", kAmx);
  CHECK(native::required_features(tiles, kAmx) == std::vector<std::string>{"amx-tile"});
  CHECK(native::required_features(dot, kAmx) == std::vector<std::string>{"amx-tile", "amx-int8"});
  CHECK(native::required_features(vectors, kAmx) == std::vector<std::string>{"avx512f"});
  const sim::KernelImage image;
  const native::CKernel kernels[] = {{&tiles, &image, {.function_name = "tiles"}}, {&dot, &image, {.function_name = "dot"}},
                                     {&vectors, &image, {.function_name = "vectors"}}};
  const native::NativeBuild built(kernels, kAmx);
  auto missing = [&](const char* name) {
    const char* m = built.kernel(name).init();
    return m ? std::string(m) : std::string();
  };
  CHECK(missing("vectors") == (cpu_has_avx512() ? "" : "avx512f"));
  CHECK(missing("tiles") == (cpu_flags().count("amx_tile") ? "" : "amx-tile"));
  CHECK(missing("dot") == (cpu_has_amx() ? "" : cpu_flags().count("amx_tile") ? "amx-int8" : "amx-tile"));
  if (!cpu_has_amx()) WARN("this CPU lacks AMX: the emitted init reports '" << missing("dot") << "' as /proc/cpuinfo predicts");
}

TEST_CASE("random AVX-512 programs (lifted kernels): emitted C equals the simulator", "[native][amx]") {
  if (!cpu_has_avx512()) {
    WARN("native run SKIPPED: this CPU lacks avx512f");
    return;
  }
  std::vector<testing::LiftedProgram> lifted;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) lifted.push_back(testing::random_program(kAmx, seed));
  std::vector<sim::KernelImage> images;
  for (const auto& p : lifted) images.push_back(sim::kernel_image(p.kernel));
  std::vector<native::CKernel> kernels;
  std::set<std::string> used;
  for (std::size_t i = 0; i < lifted.size(); ++i) {
    kernels.push_back({&lifted[i].program, &images[i], {.function_name = fmt::format("lifted_{}", i)}});
    for (const auto& ci : lifted[i].program.instructions) used.insert(ci.name);
  }
  const native::NativeBuild built(kernels, kAmx);
  for (std::size_t i = 0; i < lifted.size(); ++i) {
    const auto r = native::run_built(built.kernel(fmt::format("lifted_{}", i)), lifted[i].kernel, kAmx, lifted[i].program, {.trials = 3});
    INFO("random program seed " << lifted[i].seed << ":\n" << sim::print_program(lifted[i].program, kAmx) << r.message);
    CHECK(r.ok());
  }
  INFO("instructions drawn: " << fmt::format("{}", fmt::join(used, ", ")));
  CHECK(used.size() >= 15);
}

// ---------------------------------------------------------------- kernels, compiled by act

TEST_CASE("the AMX example kernels and the paper's K1-K5 compile, and their C runs as the simulator and the interpreter say",
          "[native][amx][kernels]") {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ACT_SHARED_DIR) + "/kernels/paper")) files.push_back(e.path());
  for (const auto& e : std::filesystem::directory_iterator(std::string(ACT_SOURCE_DIR) + "/examples/kernels/amx"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 30);

  struct Compiled {
    std::string name;
    hlo::Module kernel;
    sim::Program program;
    sim::KernelImage image;
    bool tiles = false;
    bool vectors = false;  // needs avx512f, which no emulation stands in for
  };
  std::vector<Compiled> compiled;
  codegen::Options options;
  options.deterministic = true;
  options.max_candidates = 1;  // any program act finds must run right; the first comes fastest
  options.timeout = std::chrono::duration<double>(20.0);
  for (const auto& f : files) {
    Compiled c;
    c.name = native::c_identifier(f.stem().string());
    c.kernel = hlo::parse_module(read_text(f));
    codegen::CompileOutcome outcome = Backend<isa::Amx>().try_compile(c.kernel, options);
    INFO(f.string() << ": " << outcome.message);
    REQUIRE(outcome);
    c.program = outcome.result->program;
    c.image = outcome.result->image;
    for (const auto& feature : native::required_features(c.program, kAmx)) {
      c.tiles = c.tiles || feature.rfind("amx", 0) == 0;
      c.vectors = c.vectors || feature == "avx512f";
    }
    compiled.push_back(std::move(c));
  }
  auto build = [&](bool tiles) {
    std::vector<native::CKernel> kernels;
    for (const auto& c : compiled)
      if (c.tiles == tiles) kernels.push_back({&c.program, &c.image, {.function_name = c.name}});
    return std::make_unique<native::NativeBuild>(kernels, kAmx, tiles ? tile_build() : native::BuildOptions{});
  };
  const auto vectors = build(false);
  const auto tiles = build(true);
  int native_runs = 0, emulated_runs = 0, skipped = 0;
  for (const auto& c : compiled) {
    const native::NativeBuild& built = c.tiles ? *tiles : *vectors;
    // Tile instructions run emulated where the CPU lacks AMX; AVX-512 ones (K5 mixes both)
    // only on a CPU that has it.
    if (c.vectors && !cpu_has_avx512()) {
      WARN(c.name << ": native run SKIPPED: this CPU lacks avx512f");
      ++skipped;
      continue;
    }
    const auto r = native::run_built(built.kernel(c.name), c.kernel, kAmx, c.program, {.trials = 20});
    INFO(c.name << " (" << c.program.instructions.size() << " instructions): " << r.message);
    CHECK(r.ok());
    ++(c.tiles && !cpu_has_amx() ? emulated_runs : native_runs);
  }
  warn_if_emulated(fmt::format("{} kernels with tile instructions", emulated_runs));
  CHECK(native_runs + emulated_runs + skipped == 30);
  const auto needing_avx512 = std::count_if(compiled.begin(), compiled.end(), [](const Compiled& c) { return c.vectors; });
  CHECK(skipped == (cpu_has_avx512() ? 0 : static_cast<int>(needing_avx512)));
}

// ---------------------------------------------------------------- the artifact's kernels vs Intel SDE

TEST_CASE("golden replays: the emitted C reproduces Intel SDE's outputs of the artifact's kernels", "[native][amx][golden]") {
  using namespace amx_golden;
  for (const auto& c : golden_cases())
    for (int blocks : {4, 8}) {
      const std::string kernel = fmt::format("{}_{}", c.kernel, blocks);
      SECTION(kernel) {
        // Tiles run emulated where the CPU lacks AMX; AVX-512 instructions only where it has them.
        if (c.uses_vectors && !cpu_has_avx512()) {
          WARN(kernel << ": native run SKIPPED: this CPU lacks avx512f");
          continue;
        }
        if (c.uses_tiles) warn_if_emulated(kernel);
        const ReplayRunner run_native = [&](const sim::Program& program, std::span<std::uint8_t> hbm) {
          const auto features = native::required_features(program, kAmx);
          CHECK((std::find(features.begin(), features.end(), "avx512f") != features.end()) == c.uses_vectors);
          const sim::KernelImage image;
          const native::CKernel k{&program, &image, {.function_name = "replay"}};
          const native::NativeBuild built(std::span<const native::CKernel>(&k, 1), kAmx, c.uses_tiles ? tile_build() : native::BuildOptions{});
          const native::NativeKernel& n = built.kernel("replay");
          REQUIRE(n.init() == nullptr);
          native::HbmBuffer memory(static_cast<std::int64_t>(hbm.size()));
          std::copy(hbm.begin(), hbm.end(), memory.bytes().begin());
          n.run(memory.bytes().data());
          n.release();
          std::copy(memory.bytes().begin(), memory.bytes().end(), hbm.begin());
        };
        const Replay r = c.build(blocks);
        const ReplayResult result = replay(kernel, r, run_native);
        INFO(kernel << ": " << result.compared << " values compared, max f32 error " << result.max_float_error);
        CHECK(result.compared > 0);
        CHECK(result.mismatches == 0);
      }
    }
}
