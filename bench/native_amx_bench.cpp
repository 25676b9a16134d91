// ns per call of act's emitted C for the AMX ISA's kernels against oneDNN doing the same
// computation (issue 17). Every variant is built, checked against the reference interpreter
// and set up once; only the call is timed. OMP_NUM_THREADS=1 (the program re-executes itself
// with it when the environment differs, since libgomp reads it at load time).
//
//   build/bench/native_amx_bench                           # defaults below
//   build/bench/native_amx_bench --ratios_out=ratios.json --benchmark_out=raw.json --benchmark_out_format=json
//
// Defaults: 10 repetitions, random interleaving of all variants (--benchmark_enable_random_interleaving),
// medians only. Variants per kernel:
//   act          the emitted C over the kernel image with 64-byte aligned regions (the default)
//   act_packed   the same kernel compiled and emitted with regions back to back (--align 1)
//   onednn       the oneDNN primitive computing the same values (matmul, or binary + post-ops)
//   dnnl_sgemm   outer-product kernels: dnnl_sgemm into a plain row-major C (same products, plain layout)
// Kernels using AMX instructions are skipped with the CPU's reason when it lacks AMX; their
// oneDNN primitive still runs (on whatever ISA oneDNN picks). Without oneDNN (ACT_HAVE_DNNL
// undefined) only the act variants run.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "act/codegen/backend.hpp"
#include "act/core/random.hpp"
#include "act/hlo/evaluate.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/amx.hpp"
#include "act/native/build.hpp"
#include "act/native/run.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sim/verify.hpp"

#ifdef ACT_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

using namespace act;

const isa::IsaView kAmx = isa::view<isa::Amx>();

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::Io, fmt::format("cannot open '{}'", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The shapes a kernel family is recognised by (oneDNN's side needs to know the computation).
enum class Family { Outer, Int8Gemm, Requantise, Mixed };

struct KernelFile {
  std::string name;
  std::string path;
  Family family;
};

std::vector<KernelFile> kernel_files() {
  const std::string paper = std::string(ACT_SHARED_DIR) + "/kernels/paper/", examples = std::string(ACT_SOURCE_DIR) + "/examples/kernels/amx/";
  return {
      {"k1", paper + "k1_cnn_inf_amx.hlo", Family::Int8Gemm},
      {"k2", paper + "k2_rnn_inf_amx.hlo", Family::Int8Gemm},
      {"k3", paper + "k3_mem_format_avx.hlo", Family::Outer},
      {"k4", paper + "k4_sgemm_avx.hlo", Family::Outer},
      {"k5", paper + "k5_cnn_inf_mix.hlo", Family::Mixed},
      {"avx_outer_a16_b4x4", examples + "avx_outer_a16_b4x4.hlo", Family::Outer},
      {"avx_outer_a32_b16x4", examples + "avx_outer_a32_b16x4.hlo", Family::Outer},
      {"avx_outer_a64_b6x2", examples + "avx_outer_a64_b6x2.hlo", Family::Outer},
      {"avx_outer_a80_b3x8", examples + "avx_outer_a80_b3x8.hlo", Family::Outer},
      {"k5_avx_rows2", examples + "k5_avx_rows2.hlo", Family::Requantise},
      {"k5_avx_rows3", examples + "k5_avx_rows3.hlo", Family::Requantise},
      {"k5_avx_rows4", examples + "k5_avx_rows4.hlo", Family::Requantise},
      {"int8_gemm_m16_n32", examples + "int8_gemm_m16_n32.hlo", Family::Int8Gemm},
      {"int8_gemm_m32_n64", examples + "int8_gemm_m32_n64.hlo", Family::Int8Gemm},
      {"int8_gemm_m64_n64", examples + "int8_gemm_m64_n64.hlo", Family::Int8Gemm},
  };
}

// One compiled kernel: its program for one image alignment, and that image filled with inputs.
struct ActVariant {
  sim::Program program;
  sim::KernelImage image;
  std::unique_ptr<native::HbmBuffer> hbm;
  const native::NativeKernel* native = nullptr;
  std::string skipped;  // why it cannot run here
};

struct Kernel {
  KernelFile file;
  hlo::Module module;
  std::vector<Literal> inputs;     // one random draw (sim::verify's generator, seed 0)
  std::vector<Literal> reference;  // hlo::evaluate on them
  ActVariant aligned, packed;
  bool packed_differs = false;     // some region moves with --align 1
};

std::vector<std::unique_ptr<Kernel>> g_kernels;
std::unique_ptr<native::NativeBuild> g_build;

ActVariant compile(const Kernel& k, std::int64_t alignment) {
  codegen::Options options;
  options.image.alignment = alignment;
  CompileResult r = Backend<isa::Amx>().compile(k.module, options);
  ActVariant v;
  v.program = std::move(r.program);
  v.image = std::move(r.image);
  return v;
}

// Writes the kernel's inputs into a fresh HBM image for the variant's native kernel.
void prepare(Kernel& k, ActVariant& v, const native::NativeKernel& native, const std::string& tag) {
  v.native = &native;
  if (const char* missing = native.init()) {
    v.skipped = fmt::format("this CPU lacks {} (the kernel needs {}): act's kernel cannot run here", missing,
                            fmt::join(native::required_features(v.program, kAmx), ", "));
    return;
  }
  // Once through the checker: the emitted C against the simulator and the reference interpreter.
  const auto check = native::run_built(native, k.module, kAmx, v.program, {.trials = 3, .image = {.alignment = v.image.alignment}});
  if (!check.ok()) throw Error(ErrorKind::Verification, fmt::format("{} ({}): {}", k.file.name, tag, check.message));
  if (native.init()) throw Error(ErrorKind::Internal, "init failed after a successful check");
  v.hbm = std::make_unique<native::HbmBuffer>(static_cast<std::int64_t>(native.hbm_bytes()), v.image.alignment);
  sim::write_inputs(v.image, k.inputs, v.hbm->bytes());
}

void set_up_act() {
  std::vector<native::CKernel> sources;
  for (const auto& f : kernel_files()) {
    auto k = std::make_unique<Kernel>();
    k->file = f;
    k->module = hlo::parse_module(read_text(f.path));
    sim::verify_detail::Random random{0};
    const hlo::Computation& entry = k->module.entry_computation();
    for (int p : entry.parameters) k->inputs.push_back(sim::verify_detail::random_literal(entry.instructions.at(static_cast<std::size_t>(p)).shape, random));
    Literal ref = hlo::evaluate(k->module, std::span<const Literal>(k->inputs));
    if (ref.is_tuple()) k->reference = ref.elements();
    else k->reference.push_back(std::move(ref));
    k->aligned = compile(*k, 64);
    const sim::KernelImage packed_image = sim::kernel_image(k->module, {.alignment = 1});
    for (std::size_t i = 0; i < packed_image.outputs.size(); ++i)
      k->packed_differs = k->packed_differs || packed_image.outputs[i].address != k->aligned.image.outputs[i].address;
    for (std::size_t i = 0; i < packed_image.inputs.size(); ++i)
      k->packed_differs = k->packed_differs || packed_image.inputs[i].address != k->aligned.image.inputs[i].address;
    if (k->packed_differs) k->packed = compile(*k, 1);
    fmt::print(stderr, "act: {} compiled to {} instructions{}\n", f.name, k->aligned.program.instructions.size(),
               k->packed_differs ? fmt::format(" ({} with packed regions)", k->packed.program.instructions.size()) : "");
    g_kernels.push_back(std::move(k));
  }
  for (const auto& k : g_kernels) {
    sources.push_back({&k->aligned.program, &k->aligned.image, {.function_name = k->file.name}});
    if (k->packed_differs) sources.push_back({&k->packed.program, &k->packed.image, {.function_name = k->file.name + "_packed"}});
  }
  g_build = std::make_unique<native::NativeBuild>(sources, kAmx);
  fmt::print(stderr, "act: built with {}\n", g_build->command());
  for (auto& k : g_kernels) {
    prepare(*k, k->aligned, g_build->kernel(k->file.name), "aligned");
    if (k->packed_differs) prepare(*k, k->packed, g_build->kernel(k->file.name + "_packed"), "packed");
    if (!k->aligned.skipped.empty()) fmt::print(stderr, "act: {}: SKIPPED: {}\n", k->file.name, k->aligned.skipped);
  }
}

void bm_act(benchmark::State& state, const ActVariant* v) {
  if (!v->skipped.empty()) {
    state.SkipWithError(v->skipped.c_str());
    return;
  }
  std::uint8_t* hbm = v->hbm->bytes().data();
  for (auto _ : state) {
    v->native->run(hbm);
    benchmark::ClobberMemory();
  }
}

#ifdef ACT_HAVE_DNNL

// A oneDNN computation set up once: primitives, memories and argument maps; run() executes them.
struct OneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::vector<dnnl::primitive> primitives;
  std::vector<std::unordered_map<int, dnnl::memory>> arguments;
  std::vector<std::vector<std::uint8_t>> buffers;  // the data the memories point to
  std::function<std::string()> check;              // "" when the result matches the reference
  std::vector<std::string> implementations;        // oneDNN's implementation of each primitive
  void run() {
    for (std::size_t i = 0; i < primitives.size(); ++i) primitives[i].execute(stream, arguments[i]);
    stream.wait();
  }
  void* buffer(std::size_t bytes) {
    buffers.emplace_back(bytes + 64);
    return buffers.back().data();
  }
};

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

void* copy_literal(OneDnn& o, const Literal& l) {
  void* p = o.buffer(l.bytes().size());
  std::memcpy(p, l.bytes().data(), l.bytes().size());
  return p;
}

// out[b][a] = A[a] * B[b][0], stored as the kernel's tiles [a/16][b][16]: a batched matmul with
// batch a/16, src = B's column 0 [b, 1] broadcast over the batch, weights = A's 16-wide pieces.
void outer(OneDnn& o, const Kernel& k) {
  const auto a = k.inputs[0].shape().dims[0], b = k.inputs[1].shape().dims[0], c = k.inputs[1].shape().dims[1];
  void* pa = copy_literal(o, k.inputs[0]);
  void* pb = copy_literal(o, k.inputs[1]);
  void* pd = o.buffer(static_cast<std::size_t>(a * b * 4));
  const dnnl::memory::desc src({1, b, 1}, dt::f32, dims{b * c, c, 1});
  const dnnl::memory::desc wei({a / 16, 1, 16}, dt::f32, dims{16, 16, 1});
  const dnnl::memory::desc dst({a / 16, b, 16}, dt::f32, dims{b * 16, 16, 1});
  const dnnl::matmul::primitive_desc pd_(dnnl::matmul::desc(src, wei, dst), o.engine);
  o.implementations.push_back(pd_.impl_info_str());
  o.primitives.push_back(dnnl::matmul(pd_));
  o.arguments.push_back({{DNNL_ARG_SRC, dnnl::memory(src, o.engine, pb)},
                         {DNNL_ARG_WEIGHTS, dnnl::memory(wei, o.engine, pa)},
                         {DNNL_ARG_DST, dnnl::memory(dst, o.engine, pd)}});
  const sim::HbmRegion& out = k.aligned.image.outputs[0];
  o.check = [&k, pd, out] {
    // The tiled bytes of the reference, as act's image stores them, against oneDNN's dst.
    const auto bytes = to_physical_bytes(k.reference[0], out.shape);
    return std::memcmp(bytes.data(), pd, bytes.size()) == 0 ? std::string() : std::string("outer product differs");
  };
}

// dnnl_sgemm: C[b][a] = B[b][0] * A[a] into a plain row-major C.
struct Sgemm {
  std::vector<float> a, b, c;
  std::int64_t m = 0, n = 0, lda = 0;
  void run() { dnnl_sgemm('N', 'N', m, n, 1, 1.0f, b.data(), lda, a.data(), n, 0.0f, c.data(), n); }
};

std::unique_ptr<Sgemm> sgemm(const Kernel& k) {
  auto s = std::make_unique<Sgemm>();
  s->n = k.inputs[0].shape().dims[0];
  s->m = k.inputs[1].shape().dims[0];
  s->lda = k.inputs[1].shape().dims[1];
  s->a.resize(static_cast<std::size_t>(s->n));
  s->b.resize(static_cast<std::size_t>(s->m * s->lda));
  s->c.resize(static_cast<std::size_t>(s->m * s->n));
  std::memcpy(s->a.data(), k.inputs[0].bytes().data(), s->a.size() * 4);
  std::memcpy(s->b.data(), k.inputs[1].bytes().data(), s->b.size() * 4);
  s->run();
  if (std::memcmp(s->c.data(), k.reference[0].bytes().data(), s->c.size() * 4) != 0)
    throw Error(ErrorKind::Verification, fmt::format("{}: dnnl_sgemm differs from the reference", k.file.name));
  return s;
}

// C[m][n] = sum_k A[m][k] * B[n][k] (u8 x s8 -> s32): a matmul with B as [K, N] weights, reordered
// once into the layout oneDNN prefers (outside the timing, as a framework prepacks weights).
void int8_gemm(OneDnn& o, const Kernel& k, std::size_t a_input, std::size_t reference) {
  const Literal& A = k.inputs[a_input];
  const Literal& B = k.inputs[a_input + 1];
  const auto m = A.shape().dims[0], kk = A.shape().dims[1], n = B.shape().dims[0];
  void* pa = copy_literal(o, A);
  void* pb = copy_literal(o, B);
  void* pd = o.buffer(static_cast<std::size_t>(m * n * 4));
  const dnnl::memory::desc src({m, kk}, dt::u8, dims{kk, 1});
  const dnnl::memory::desc plain_wei({kk, n}, dt::s8, dims{1, kk});
  const dnnl::memory::desc any_wei({kk, n}, dt::s8, dnnl::memory::format_tag::any);
  const dnnl::memory::desc dst({m, n}, dt::s32, dims{n, 1});
  const dnnl::matmul::primitive_desc pd_(dnnl::matmul::desc(src, any_wei, dst), o.engine);
  dnnl::memory packed(pd_.weights_desc(), o.engine);
  dnnl::memory plain(plain_wei, o.engine, pb);
  dnnl::reorder(plain, packed).execute(o.stream, plain, packed);
  o.stream.wait();
  o.implementations.push_back(pd_.impl_info_str());
  o.primitives.push_back(dnnl::matmul(pd_));
  o.arguments.push_back({{DNNL_ARG_SRC, dnnl::memory(src, o.engine, pa)}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, dnnl::memory(dst, o.engine, pd)}});
  auto previous = o.check;
  o.check = [&k, pd, reference, previous] {
    if (previous) {
      const std::string p = previous();
      if (!p.empty()) return p;
    }
    return std::memcmp(k.reference[reference].bytes().data(), pd, k.reference[reference].bytes().size()) == 0 ? std::string()
                                                                                                             : std::string("int8 matmul differs");
  };
}

// u8 = convert(clamp(max(0, A * B + C) * D, 0, 255)) with B, C, D one row broadcast: a binary
// multiply with post-ops add C, relu, multiply D, clip [0, 255], into u8. oneDNN rounds to
// nearest when it converts to u8, XLA truncates: the check allows 1.
void requantise(OneDnn& o, const Kernel& k, std::size_t first, std::size_t reference) {
  const auto rows = k.inputs[first].shape().dims[0];
  void* pa = copy_literal(o, k.inputs[first]);
  void* pb = copy_literal(o, k.inputs[first + 1]);
  void* pc = copy_literal(o, k.inputs[first + 2]);
  void* pdd = copy_literal(o, k.inputs[first + 3]);
  void* out = o.buffer(static_cast<std::size_t>(rows * 16));
  const dnnl::memory::desc a({rows, 16}, dt::f32, dims{16, 1});
  const dnnl::memory::desc row({1, 16}, dt::f32, dims{16, 1});
  const dnnl::memory::desc dst({rows, 16}, dt::u8, dims{16, 1});
  dnnl::post_ops ops;
  ops.append_binary(dnnl::algorithm::binary_add, row);
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  ops.append_binary(dnnl::algorithm::binary_mul, row);
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 255.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::binary::primitive_desc pd_(dnnl::binary::desc(dnnl::algorithm::binary_mul, a, row, dst), attr, o.engine);
  o.implementations.push_back(pd_.impl_info_str());
  o.primitives.push_back(dnnl::binary(pd_));
  o.arguments.push_back({{DNNL_ARG_SRC_0, dnnl::memory(a, o.engine, pa)},
                         {DNNL_ARG_SRC_1, dnnl::memory(row, o.engine, pb)},
                         {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, dnnl::memory(row, o.engine, pc)},
                         {DNNL_ARG_ATTR_MULTIPLE_POST_OP(2) | DNNL_ARG_SRC_1, dnnl::memory(row, o.engine, pdd)},
                         {DNNL_ARG_DST, dnnl::memory(dst, o.engine, out)}});
  auto previous = o.check;
  o.check = [&k, out, reference, rows, previous] {
    if (previous) {
      const std::string p = previous();
      if (!p.empty()) return p;
    }
    const auto* got = static_cast<const std::uint8_t*>(out);
    for (std::int64_t i = 0; i < rows * 16; ++i)
      if (std::abs(int(got[i]) - int(k.reference[reference].bytes()[static_cast<std::size_t>(i)])) > 1)
        return fmt::format("requantised value {} differs by more than 1", i);
    return std::string();
  };
}

std::map<std::string, std::unique_ptr<OneDnn>> g_onednn;
std::map<std::string, std::string> g_implementations;  // per kernel, for the JSON
std::map<std::string, std::unique_ptr<Sgemm>> g_sgemm;

void set_up_onednn() {
  for (const auto& k : g_kernels) {
    auto o = std::make_unique<OneDnn>();
    switch (k->file.family) {
      case Family::Outer: outer(*o, *k); g_sgemm[k->file.name] = sgemm(*k); break;
      case Family::Int8Gemm: int8_gemm(*o, *k, 0, 0); break;
      case Family::Requantise: requantise(*o, *k, 0, 0); break;
      case Family::Mixed: int8_gemm(*o, *k, 0, 0); requantise(*o, *k, 2, 1); break;
    }
    o->run();
    if (const std::string problem = o->check(); !problem.empty())
      throw Error(ErrorKind::Verification, fmt::format("{}: oneDNN's result: {}", k->file.name, problem));
    fmt::print(stderr, "oneDNN: {}: {}\n", k->file.name, fmt::join(o->implementations, " + "));
    g_implementations[k->file.name] = fmt::format("{}", fmt::join(o->implementations, " + "));
    g_onednn[k->file.name] = std::move(o);
  }
}

void bm_onednn(benchmark::State& state, OneDnn* o) {
  for (auto _ : state) {
    o->run();
    benchmark::ClobberMemory();
  }
}

void bm_sgemm(benchmark::State& state, Sgemm* s) {
  for (auto _ : state) {
    s->run();
    benchmark::ClobberMemory();
  }
}

#endif  // ACT_HAVE_DNNL

// Keeps the median time per call of every variant ("act/k3" -> ns) and the skip messages. The
// ratios use CPU time (of the calling thread; OMP_NUM_THREADS=1): the machines are shared, and
// wall time counts the moments another process had the core.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      const std::string name = run.run_name.function_name;
      if (run.error_occurred) skipped[name] = run.error_message;
      else if (run.run_type == Run::RT_Aggregate ? run.aggregate_name == "median" : !ns.count(name)) {
        ns[name] = run.GetAdjustedCPUTime();
        wall_ns[name] = run.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> ns, wall_ns;
  std::map<std::string, std::string> skipped;
};

std::string g_implementation(const std::string& kernel) {
#ifdef ACT_HAVE_DNNL
  const auto it = g_implementations.find(kernel);
  if (it != g_implementations.end()) return it->second;
#endif
  return "";
}

std::string ratios_json(const RatioReporter& r) {
  auto value = [&](const std::string& key) -> std::optional<double> {
    const auto it = r.ns.find(key);
    return it == r.ns.end() ? std::nullopt : std::optional<double>(it->second);
  };
  auto number = [](std::optional<double> v) { return v ? fmt::format("{:.2f}", *v) : std::string("null"); };
  auto ratio = [](std::optional<double> a, std::optional<double> b) { return a && b && *b > 0 ? fmt::format("{:.3f}", *a / *b) : std::string("null"); };
  auto wall = [&](const std::string& key) {
    const auto it = r.wall_ns.find(key);
    return it == r.wall_ns.end() ? std::string("null") : fmt::format("{:.2f}", it->second);
  };
  std::string out = "{\n  \"omp_num_threads\": " + std::string(std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "unset") +
                    ",\n  \"unit\": \"ns per call: median CPU time of the calling thread (wall_* the median wall time)\",\n  \"kernels\": [";
  fmt::print("\nns per call (median CPU time)\n{:<22} {:>6} {:>10} {:>11} {:>10} {:>11} {:>12} {:>12} {:>15}\n", "kernel", "instr", "act", "act_packed", "onednn",
             "dnnl_sgemm", "act/onednn", "act/sgemm", "aligned/packed");
  for (std::size_t i = 0; i < g_kernels.size(); ++i) {
    const Kernel& k = *g_kernels[i];
    const std::string n = k.file.name;
    const auto act = value("act/" + n), packed = value("act_packed/" + n), onednn = value("onednn/" + n), sgemm = value("dnnl_sgemm/" + n);
    const std::string skip = r.skipped.count("act/" + n) ? r.skipped.at("act/" + n) : "";
    const std::string impl = g_implementation(n);
    out += fmt::format("{}\n    {{\"kernel\": \"{}\", \"instructions\": {}, \"act\": {}, \"act_packed\": {}, \"onednn\": {}, \"dnnl_sgemm\": {}, "
                       "\"act_over_onednn\": {}, \"act_over_sgemm\": {}, \"aligned_over_packed\": {}, \"wall_act\": {}, \"wall_act_packed\": {}, "
                       "\"wall_onednn\": {}, \"wall_dnnl_sgemm\": {}, \"onednn_implementation\": \"{}\"{}}}",
                       i ? "," : "", n, k.aligned.program.instructions.size(), number(act), number(packed), number(onednn), number(sgemm),
                       ratio(act, onednn), ratio(act, sgemm), ratio(act, packed), wall("act/" + n), wall("act_packed/" + n),
                       wall("onednn/" + n), wall("dnnl_sgemm/" + n), impl,
                       skip.empty() ? "" : fmt::format(", \"act_skipped\": \"{}\"", skip));
    fmt::print("{:<22} {:>6} {:>10} {:>11} {:>10} {:>11} {:>12} {:>12} {:>15}{}\n", n, k.aligned.program.instructions.size(), number(act),
               number(packed), number(onednn), number(sgemm), ratio(act, onednn), ratio(act, sgemm), ratio(act, packed),
               skip.empty() ? "" : "   (act skipped: " + skip + ")");
  }
  return out + "\n  ]\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  // libgomp reads OMP_NUM_THREADS when it is loaded: set it for a fresh image of this program.
  if (const char* threads = std::getenv("OMP_NUM_THREADS"); !threads || std::string(threads) != "1") {
    ::setenv("OMP_NUM_THREADS", "1", 1);
    ::execv("/proc/self/exe", argv);
    std::perror("native_amx_bench: re-exec with OMP_NUM_THREADS=1 failed");
    return 1;
  }
  std::string ratios_out;
  std::vector<char*> args{argv[0]};
  std::vector<std::string> defaults{"--benchmark_repetitions=10", "--benchmark_enable_random_interleaving=true",
                                    "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.05"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--ratios_out=", 0) == 0) {
      ratios_out = a.substr(13);
      continue;
    }
    for (auto& d : defaults)
      if (a.substr(0, a.find('=')) == d.substr(0, d.find('='))) d.clear();
    args.push_back(argv[i]);
  }
  for (auto& d : defaults)
    if (!d.empty()) args.push_back(d.data());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  try {
    set_up_act();
#ifdef ACT_HAVE_DNNL
    set_up_onednn();
#endif
  } catch (const std::exception& e) {
    fmt::print(stderr, "native_amx_bench: {}\n", e.what());
    return 1;
  }
  for (const auto& k : g_kernels) {
    const std::string n = k->file.name;
    benchmark::RegisterBenchmark(("act/" + n).c_str(), bm_act, &k->aligned)->Unit(benchmark::kNanosecond);
    if (k->packed_differs) benchmark::RegisterBenchmark(("act_packed/" + n).c_str(), bm_act, &k->packed)->Unit(benchmark::kNanosecond);
#ifdef ACT_HAVE_DNNL
    benchmark::RegisterBenchmark(("onednn/" + n).c_str(), bm_onednn, g_onednn.at(n).get())->Unit(benchmark::kNanosecond);
    if (g_sgemm.count(n)) benchmark::RegisterBenchmark(("dnnl_sgemm/" + n).c_str(), bm_sgemm, g_sgemm.at(n).get())->Unit(benchmark::kNanosecond);
#endif
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const std::string json = ratios_json(reporter);
  if (!ratios_out.empty()) {
    std::ofstream out(ratios_out);
    out << json;
  } else {
    fmt::print("\n{}", json);
  }
  for (auto& k : g_kernels) {
    if (k->aligned.skipped.empty()) k->aligned.native->release();
    if (k->packed_differs && k->packed.skipped.empty()) k->packed.native->release();
  }
  return 0;
}
