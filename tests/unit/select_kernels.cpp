// Phase 1 on the QKV kernels of issue 4 (examples/kernels/qkv/): the explorer must yield a first
// pii graph quickly for every kernel QKV can express (the instruction multisets below are worked
// out by hand from the ISA), and give up quickly, saying why, on one it cannot express.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "act/isa/qkv.hpp"
#include "act/select/search/explorer.hpp"
#include "act/select/init/kernel_graph.hpp"
#include "act/select/rules/rule_set.hpp"
#include "act/testing/files.hpp"

using namespace act;
using namespace act::select;

namespace {

// Bound on phase 1's work to the first graph, in rewrite iterations (measured: 2 or 3 for each
// kernel below). A count, not seconds: the same on a loaded machine and under sanitizers.
constexpr std::size_t kFirstGraphIterations = 6;

struct Phase1Run {
  std::optional<PiiGraph> first;
  std::vector<std::string> multiset;
  std::vector<Literal> constant_leaves;  // the literals of the first graph's Constant leaves
  double seconds = 0;
  std::size_t nodes = 0, iterations = 0;
  bool finished = false;
  std::string diagnosis;
};

Phase1Run run_phase1(const std::string& path, std::size_t node_limit = 20'000) {
  SelectionContext context;
  context.isa = isa::view<isa::Qkv>();
  TensorGraph graph{TensorAnalysis(&context)};
  const auto kernel = testing::load_kernel(path);
  const auto start = std::chrono::steady_clock::now();
  const InitialGraph init = add_kernel(graph, context, kernel);
  const RuleSet rules = rule_set(context);
  ExplorerOptions options;
  options.runner.node_limit = node_limit;
  Explorer explorer(graph, context, init.roots, rules.rules, options);
  Phase1Run run;
  run.first = explorer.next();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.nodes = graph.num_nodes();
  run.iterations = explorer.iterations();
  run.finished = explorer.finished();
  if (run.first) {
    run.multiset = run.first->instruction_multiset(context.isa);
    for (const PiiNode& n : run.first->nodes())
      if (n.kind == PiiNodeKind::Constant && n.index >= 0) run.constant_leaves.push_back(context.constants[n.index]);
    UNSCOPED_INFO(run.first->to_string(context.isa));
  } else {
    run.diagnosis = explorer.diagnosis();
  }
  UNSCOPED_INFO(path << ": " << (run.first ? "first graph" : "no graph") << " in " << run.seconds << " s, " << run.nodes
                     << " e-nodes, " << run.iterations << " iterations");
  return run;
}

std::string kernel_path(const std::string& name) { return std::string(ACT_SOURCE_DIR) + "/examples/kernels/qkv/" + name; }

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::size_t count_kind(const PiiGraph& g, PiiNodeKind kind) {
  return static_cast<std::size_t>(std::count_if(g.nodes().begin(), g.nodes().end(), [kind](const PiiNode& n) { return n.kind == kind; }));
}

}  // namespace

TEST_CASE("kernels: Q x K^T alone loads Q row-major and K column-major", "[select][kernels]") {
  const Phase1Run run = run_phase1(kernel_path("scores.hlo"));
  REQUIRE(run.first.has_value());
  CHECK(run.iterations <= kFirstGraphIterations);
  CHECK(run.multiset == sorted({"load_rm(n = 64)", "load_cm(n = 64)", "gemm()", "mov(n = 64)", "store_rm(n = 64)"}));
  CHECK(run.first->identity_count() == 0);
}

TEST_CASE("kernels: softmax of an HBM input reaches d2 through gemm with a constant identity", "[select][kernels]") {
  const Phase1Run run = run_phase1(kernel_path("softmax.hlo"));
  REQUIRE(run.first.has_value());
  CHECK(run.iterations <= kFirstGraphIterations);
  CHECK(run.multiset == sorted({"load_rm(n = 64)", "load_rm(n = 64)", "gemm()", "softmax(n = 64)", "mov(n = 64)",
                                "store_rm(n = 64)"}));
  // The second gemm operand is the identity matrix, loaded from the constant pool as bytes.
  REQUIRE(run.constant_leaves.size() == 1);
  const Literal& bytes = run.constant_leaves[0];
  CHECK(bytes.shape() == Shape(DType::u8, {8192}));
  const Literal identity = Literal::from_bytes(Shape(DType::bf16, {64, 64}), bytes.bytes());
  bool is_identity = true;
  for (std::int64_t i = 0; i < 64; ++i)
    for (std::int64_t j = 0; j < 64; ++j) is_identity = is_identity && identity.get_float(i * 64 + j) == (i == j ? 1.0 : 0.0);
  CHECK(is_identity);
}

TEST_CASE("kernels: attention with a 32-row Q pads Q with a zero block and slices results back", "[select][kernels]") {
  const Phase1Run run = run_phase1(kernel_path("attention_q32.hlo"));
  REQUIRE(run.first.has_value());
  CHECK(run.iterations <= kFirstGraphIterations);
  // Q (32 rows) and a zero block (32 rows) are loaded and joined by concat^H into gemm's 64-row
  // operand; softmax works on the top 32 rows (slice^H of d2); P (32 rows) is joined with a zero
  // block for the second gemm, whose top 32 rows are stored. The first graph is the greedy one
  // (Extractor::greedy), which gives each concat^H slot its own zero block: 3 loads of 32 rows.
  CHECK(run.multiset == sorted({"load_rm(n = 32)", "load_rm(n = 32)", "load_rm(n = 32)", "load_cm(n = 64)", "gemm()",
                                "softmax(n = 32)", "mov(n = 32)", "load_rm(n = 64)", "gemm()", "mov(n = 32)",
                                "store_rm(n = 32)"}));
  CHECK(count_kind(*run.first, PiiNodeKind::ConcatH) == 2);
  CHECK(count_kind(*run.first, PiiNodeKind::SliceH) == 2);
  REQUIRE(run.constant_leaves.size() == 1);
  const Literal& zeros = run.constant_leaves[0];
  CHECK(zeros.shape() == Shape(DType::u8, {32 * 64 * 2}));
  CHECK(std::all_of(zeros.bytes().begin(), zeros.bytes().end(), [](std::uint8_t b) { return b == 0; }));
}

TEST_CASE("kernels: attention with a transposed output ends with store_cm", "[select][kernels]") {
  const Phase1Run run = run_phase1(kernel_path("attention_transposed.hlo"));
  REQUIRE(run.first.has_value());
  CHECK(run.iterations <= kFirstGraphIterations);
  CHECK(run.multiset == sorted({"load_rm(n = 64)", "load_cm(n = 64)", "gemm()", "softmax(n = 64)", "mov(n = 64)",
                                "load_rm(n = 64)", "gemm()", "mov(n = 64)", "store_cm(n = 64)"}));
}

TEST_CASE("kernels: first graphs survive a small node limit", "[select][kernels]") {
  // The default runner node limit is 10'000; every kernel's first graph needs far fewer.
  for (const char* name : {"scores.hlo", "softmax.hlo", "attention_q32.hlo", "attention_transposed.hlo"}) {
    INFO(name);
    CHECK(run_phase1(kernel_path(name), 5'000).first.has_value());
  }
}

TEST_CASE("kernels: f32 sine ends quickly with no graph and says which value is out of reach", "[select][kernels]") {
  const Phase1Run run = run_phase1(kernel_path("sine_f32.hlo"));
  INFO(run.diagnosis);
  CHECK_FALSE(run.first.has_value());
  CHECK(run.finished);
  // A hang guard as a count (not seconds, which a loaded machine stretches past any bound): the
  // node limit ends exploration long before the explorer's 24 rounds (13 rounds, 18 iterations).
  CHECK(run.iterations <= 24);
  CHECK(run.diagnosis.find("root 0 (u8[16384]) cannot be produced in d0") != std::string::npos);
  // QKV cannot even view the f32 input: its loads read 128-byte rows of bf16.
  CHECK(run.diagnosis.find("no instruction computes: u8[64,64,4] reshape(u8[16384])") != std::string::npos);
}

TEST_CASE("constant byte view: a constant equals bitcast-convert(reshape(its bytes))", "[select][kernels]") {
  SelectionContext context;
  context.isa = isa::view<isa::Qkv>();
  TensorGraph graph{TensorAnalysis(&context)};
  Literal value(Shape(DType::bf16, {2, 3}));
  for (std::int64_t i = 0; i < 6; ++i) value.set_float(i, static_cast<double>(i) - 2.5);
  const Shape type = value.shape();
  const auto id = context.constants.intern(value);
  const egraph::Id c = graph.add(make_constant(context.attributes, id, type), {});
  auto rules = constant_rules(context);
  egraph::Runner<TensorLanguage, TensorAnalysis> runner;
  const auto report = runner.run(graph, rules);
  CHECK(report.stop_reason == egraph::StopReason::Saturated);
  // c's class now holds bitcast-convert(reshape(C)) with C : u8[12] holding c's bytes.
  bool found = false;
  for (egraph::Id n : graph.eclass(graph.find(c)).nodes) {
    const auto bitcast = graph.node(n);
    if (bitcast.op.kind != NodeKind::Operator || bitcast.op.opcode != hlo::Opcode::BitcastConvert) continue;
    CHECK(graph.data(bitcast.children[0]).type == Shape(DType::u8, {2, 3, 2}));
    for (egraph::Id m : graph.eclass(graph.find(bitcast.children[0])).nodes) {
      const auto reshape = graph.node(m);
      if (reshape.op.opcode != hlo::Opcode::Reshape) continue;
      for (egraph::Id k : graph.eclass(graph.find(reshape.children[0])).nodes) {
        const auto raw = graph.node(k);
        if (raw.op.kind != NodeKind::Constant) continue;
        const Literal& bytes = context.constants[context.attributes_of(raw.op).index];
        CHECK(bytes.shape() == Shape(DType::u8, {12}));
        CHECK(std::equal(bytes.bytes().begin(), bytes.bytes().end(), value.bytes().begin(), value.bytes().end()));
        found = true;
      }
    }
  }
  CHECK(found);
  // Scalars and byte vectors get no view.
  CHECK_FALSE(has_byte_view(Shape(DType::bf16, {})));
  CHECK_FALSE(has_byte_view(Shape(DType::u8, {16})));
  CHECK(has_byte_view(Shape(DType::u8, {4, 4})));
}
