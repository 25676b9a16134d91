// Whole compiles (phase 1 + phase 2, deterministic, no verification) of the paper's kernels:
// the numbers the paper reports per kernel in §7 / App. G, measured on this machine.
//   cmake -S . -B build-bench -DACT_BUILD_BENCHMARKS=ON -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-bench --target compile_bench && build-bench/bench/compile_bench
// Counters: instructions of the chosen program, e-nodes, rewrite iterations, IR->IR axiom
// applications (the paper's "rewrites applied").
#include <benchmark/benchmark.h>

#include <string>

#include "act/codegen/backend.hpp"
#include "act/isa/amx.hpp"
#include "act/isa/qkv.hpp"
#include "act/testing/files.hpp"

namespace {

const std::string kShared = ACT_SHARED_DIR;
const std::string kExamples = std::string(ACT_SOURCE_DIR) + "/examples/kernels";

template <class Isa>
void compile_kernel(benchmark::State& state, const std::string& path) {
  const act::hlo::Module kernel = act::testing::load_kernel(path);
  act::codegen::Options options;
  options.deterministic = true;
  options.timeout = std::chrono::duration<double>(60.0);
  act::codegen::CompileOutcome last;
  for (auto _ : state) {
    last = act::Backend<Isa>().try_compile(kernel, options);
    if (!last) state.SkipWithError(last.message.c_str());
  }
  if (last) {
    state.counters["instructions"] = static_cast<double>(last.result->program.instructions.size());
    state.counters["enodes"] = static_cast<double>(last.statistics.enodes);
    state.counters["iterations"] = static_cast<double>(last.statistics.iterations);
    state.counters["axioms_applied"] = static_cast<double>(last.statistics.axioms_applied);
  }
}

void compile_qkv(benchmark::State& state, const std::string& path) { compile_kernel<act::isa::Qkv>(state, path); }
void compile_amx(benchmark::State& state, const std::string& path) { compile_kernel<act::isa::Amx>(state, path); }

}  // namespace

BENCHMARK_CAPTURE(compile_qkv, qkv_attention, kShared + "/kernels/qkv/attention.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, amx_k1, kShared + "/kernels/paper/k1_cnn_inf_amx.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, amx_k2, kShared + "/kernels/paper/k2_rnn_inf_amx.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, amx_int8_gemm_m64_n64, kExamples + "/amx/int8_gemm_m64_n64.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, avx_k3, kShared + "/kernels/paper/k3_mem_format_avx.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, avx_k4, kShared + "/kernels/paper/k4_sgemm_avx.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, k5_amx_half, kExamples + "/amx/k5_amx_half.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, k5_avx_half, kExamples + "/amx/k5_avx_rows3.hlo")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_amx, k5_whole, kShared + "/kernels/paper/k5_cnn_inf_mix.hlo")
    ->Unit(benchmark::kMillisecond);
