// E-graph engine benchmarks: insertion rate on a growing e-graph, rebuild cost after many
// unions, and equality saturation of an arithmetic term under AC + distributivity.
//   build/bench/egraph_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "act/core/random.hpp"
#include "act/egraph/egraph.hpp"
#include "act/egraph/pattern_parser.hpp"
#include "act/egraph/rewrite.hpp"
#include "act/egraph/runner.hpp"

namespace {

using namespace act::egraph;

struct Arith {
  enum class Kind : std::uint8_t { Num, Sym, Add, Sub, Mul };
  struct Op {
    Kind kind;
    std::int64_t value;
    friend bool operator==(const Op&, const Op&) = default;
  };
  static std::uint64_t hash(const Op& o) {
    return mix_hash(static_cast<std::uint64_t>(o.kind), static_cast<std::uint64_t>(o.value));
  }
  static std::uint32_t discriminant(const Op& o) { return static_cast<std::uint32_t>(o.kind); }
};
using Op = Arith::Op;
using Kind = Arith::Kind;
using Graph = EGraph<Arith>;

using Random = act::SplitMix64;  // deterministic pseudo-random numbers

struct Insertion {
  Op op;
  std::uint32_t lhs, rhs;  // indices into earlier insertions' results (binary ops)
};

// `leaves` symbols, then binary operators over random earlier terms (biased towards recent ones
// so that terms grow deep, with some repeats that hit the hashcons).
std::vector<Insertion> random_terms(std::size_t leaves, std::size_t total, std::uint64_t seed) {
  Random rng{seed};
  std::vector<Insertion> out;
  out.reserve(total);
  for (std::size_t i = 0; i < total; ++i) {
    if (i < leaves) {
      out.push_back({Op{Kind::Sym, static_cast<std::int64_t>(i)}, 0, 0});
      continue;
    }
    Kind k = static_cast<Kind>(2 + rng.below(3));
    auto pick = [&]() -> std::uint32_t {
      std::uint64_t window = rng.below(4) == 0 ? i : std::min<std::uint64_t>(i, 1024);
      return static_cast<std::uint32_t>(i - 1 - rng.below(window));
    };
    out.push_back({Op{k, 0}, pick(), pick()});
  }
  return out;
}

void build(Graph& g, const std::vector<Insertion>& terms, std::vector<Id>& ids) {
  ids.resize(terms.size());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Insertion& t = terms[i];
    if (t.op.kind == Kind::Sym) {
      ids[i] = g.add(t.op);
    } else {
      Id kids[2] = {ids[t.lhs], ids[t.rhs]};
      ids[i] = g.add(t.op, std::span<const Id>(kids, 2));
    }
  }
}

void BM_Insert(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const std::vector<Insertion> terms = random_terms(256, n, 42);
  std::vector<Id> ids;
  std::size_t nodes = 0;
  for (auto _ : state) {
    auto g = std::make_unique<Graph>();
    build(*g, terms, ids);
    nodes = g->num_nodes();
    benchmark::DoNotOptimize(ids.data());
    state.PauseTiming();  // freeing the e-graph is not insertion
    g.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_Insert)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// Two structurally identical 100k-node random DAGs over disjoint leaf sets; uniting the first
// `k` of their 64 leaf pairs makes every node whose leaves are all united congruent to its twin,
// so one rebuild repairs a cascade of congruences (all 100k at k = 64). Only rebuild is timed.
void BM_RebuildAfterUnions(benchmark::State& state) {
  const std::size_t k = static_cast<std::size_t>(state.range(0));
  const std::size_t leaves = 64;
  std::vector<Insertion> terms = random_terms(leaves, 100'000, 7);
  std::vector<Insertion> twin = terms;
  for (std::size_t i = 0; i < leaves; ++i) twin[i].op.value += 1000;
  std::vector<Id> ids, twin_ids;
  std::size_t congruences = 0, nodes_before = 0, nodes_after = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto g = std::make_unique<Graph>();
    build(*g, terms, ids);
    build(*g, twin, twin_ids);
    for (std::size_t i = 0; i < k; ++i) g->unite(ids[i], twin_ids[i]);
    nodes_before = g->num_nodes();
    state.ResumeTiming();
    congruences = g->rebuild();
    state.PauseTiming();
    nodes_after = g->num_nodes();
    g.reset();
    state.ResumeTiming();
  }
  state.counters["congruences"] = static_cast<double>(congruences);
  state.counters["nodes_before"] = static_cast<double>(nodes_before);
  state.counters["nodes_after"] = static_cast<double>(nodes_after);
}
BENCHMARK(BM_RebuildAfterUnions)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);

std::optional<Op> parse_op(std::string_view s, std::size_t arity) {
  if (arity == 2) {
    if (s == "+") return Op{Kind::Add, 0};
    if (s == "-") return Op{Kind::Sub, 0};
    if (s == "*") return Op{Kind::Mul, 0};
    return std::nullopt;
  }
  if (arity == 0 && !s.empty()) return Op{Kind::Sym, static_cast<std::int64_t>(s[0])};
  return std::nullopt;
}

// Commutativity, associativity and distributivity on one term until the node limit.
void BM_Saturate(benchmark::State& state) {
  const std::size_t node_limit = static_cast<std::size_t>(state.range(0));
  auto rule = [](const char* name, std::string_view lhs, std::string_view rhs) {
    return Rewrite<Arith>(name, parse_pattern<Arith>(lhs, parse_op), parse_pattern<Arith>(rhs, parse_op));
  };
  const std::vector<Rewrite<Arith>> rules{
      rule("comm-add", "(+ ?a ?b)", "(+ ?b ?a)"),
      rule("comm-mul", "(* ?a ?b)", "(* ?b ?a)"),
      rule("assoc-add", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)"),
      rule("assoc-mul", "(* ?a (* ?b ?c))", "(* (* ?a ?b) ?c)"),
      rule("distribute", "(* ?a (+ ?b ?c))", "(+ (* ?a ?b) (* ?a ?c))"),
      rule("factor", "(+ (* ?a ?b) (* ?a ?c))", "(* ?a (+ ?b ?c))"),
  };
  RunnerOptions options;
  options.node_limit = node_limit;
  options.iteration_limit = 1000;
  options.time_limit = std::chrono::duration<double>(120);
  std::size_t iterations = 0, nodes = 0, classes = 0;
  double search = 0, apply = 0, rebuild = 0;
  int stop = 0;
  for (auto _ : state) {
    Graph g;
    add_term(g, "(* (+ a (+ b (* c d))) (+ (* e (+ f g)) (* h (+ i (+ j k)))))", parse_op);
    RunReport report = Runner<Arith>(options).run(g, rules);
    iterations = report.iterations.size();
    nodes = g.num_nodes();
    classes = g.num_classes();
    stop = static_cast<int>(report.stop_reason);
    search = apply = rebuild = 0;
    for (const auto& it : report.iterations) {
      search += it.search_seconds;
      apply += it.apply_seconds;
      rebuild += it.rebuild_seconds;
    }
  }
  state.counters["iterations"] = static_cast<double>(iterations);
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["classes"] = static_cast<double>(classes);
  state.counters["stop"] = stop;  // 2 = node limit (StopReason order)
  state.counters["search_s"] = search;
  state.counters["apply_s"] = apply;
  state.counters["rebuild_s"] = rebuild;
}
BENCHMARK(BM_Saturate)->Arg(10'000)->Arg(50'000)->Unit(benchmark::kMillisecond);

}  // namespace
