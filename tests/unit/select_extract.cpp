// Module 3: buffer-guided, lazy, smallest-first pii-graph extraction on hand-built e-graphs
// over QKV (d0 = HBM, d1 = scratchpad, d2 = intermediate buffer).
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "act/isa/qkv.hpp"
#include "act/select/search/explorer.hpp"
#include "act/select/search/extractor.hpp"
#include "act/select/pii_graph.hpp"

using namespace act;
using namespace act::select;
using egraph::Id;

namespace {

constexpr int kD0 = 0, kD1 = 1, kD2 = 2;

struct Fixture {
  SelectionContext context;
  TensorGraph graph{TensorAnalysis(&context)};

  Fixture() { context.isa = isa::view<isa::Qkv>(); }

  std::size_t instruction(std::string_view name) const {
    for (std::size_t i = 0; i < context.isa.instructions.size(); ++i)
      if (context.isa.instructions[i].name == name) return i;
    FAIL("no instruction " << name);
    return 0;
  }
  Id input(int parameter) { return graph.add(make_input(context.attributes, parameter, 8192)); }
  Id pii(std::string_view name, std::initializer_list<Id> operands) {
    std::vector<std::int64_t> alpha;
    if (name != "gemm") alpha = {64};
    return graph.add(make_pii(context.attributes, instruction(name), alpha), operands);
  }
  void unite(Id a, Id b) {
    graph.unite(a, b);
    graph.rebuild();
  }
  // The root of c0 = load_rm(q0) | load_rm(q1); b = load_rm(q2);
  // c(i+1) = mov(gemm(c(i), b)) | mov(gemm(b, c(i))); store_rm(c(n)):
  // 2^(n+1) graphs of the minimum size 2n+3.
  Id exponential_chain(int n) {
    const Id b = pii("load_rm", {input(2)});
    Id c = pii("load_rm", {input(0)});
    unite(c, pii("load_rm", {input(1)}));
    for (int i = 0; i < n; ++i) {
      const Id next = pii("mov", {pii("gemm", {c, b})});
      unite(next, pii("mov", {pii("gemm", {b, c})}));
      c = graph.find(next);
    }
    return pii("store_rm", {c});
  }
  std::vector<PiiGraph> all(Id root, std::size_t max_size, bool* exhaustive = nullptr) {
    Extractor x(graph, context, {root}, ExtractorOptions{max_size, {}});
    std::vector<PiiGraph> out;
    while (auto g = x.next()) out.push_back(std::move(*g));
    if (exhaustive) *exhaustive = x.exhaustive();
    return out;
  }
  std::vector<std::string> multiset(const PiiGraph& g) const { return g.instruction_multiset(context.isa); }
};

// Nodes built for a request that already had one: size minus distinct (class, buffer) pairs.
std::size_t duplicates(const PiiGraph& g) {
  std::map<std::pair<Id, int>, int> seen;
  std::size_t dups = 0;
  for (const PiiNode& n : g.nodes())
    if (!n.is_leaf() && seen[{n.eclass, n.buffer}]++ > 0) ++dups;
  return dups;
}

}  // namespace

TEST_CASE("extract: a chain yields exactly its instructions with buffers and types", "[select][extract]") {
  Fixture f;
  const Id q = f.input(0);
  const Id a = f.pii("load_rm", {q});
  const Id root = f.pii("store_rm", {a});
  bool exhaustive = false;
  auto graphs = f.all(root, 8, &exhaustive);
  REQUIRE(graphs.size() == 1);
  CHECK(exhaustive);
  const PiiGraph& g = graphs[0];
  REQUIRE(g.nodes().size() == 3);
  CHECK(g.size() == 2);
  CHECK(g.node(0).kind == PiiNodeKind::Input);
  CHECK(g.node(0).buffer == kD0);
  CHECK(g.node(0).index == 0);
  CHECK(g.node(1).kind == PiiNodeKind::Pii);
  CHECK(g.node(1).buffer == kD1);
  CHECK(g.node(1).type.dims == std::vector<std::int64_t>{64, 64});
  CHECK(g.node(1).type.dtype == DType::bf16);
  CHECK(g.node(1).eclass == f.graph.find(a));
  CHECK(g.node(1).operands == std::vector<std::size_t>{0});
  CHECK(g.node(2).buffer == kD0);
  CHECK(g.roots() == std::vector<std::size_t>{2});
  CHECK(f.multiset(g) == std::vector<std::string>{"load_rm(n = 64)", "store_rm(n = 64)"});
  CHECK(g.to_string(f.context.isa).find("%1 = load_rm(n = 64) %0 : bf16[64,64] @d1") != std::string::npos);
}

TEST_CASE("extract: an operand class with only a d2 producer cannot feed a d1 operand", "[select][extract]") {
  Fixture f;
  const Id q = f.input(0), k = f.input(1);
  const Id s = f.pii("gemm", {f.pii("load_rm", {q}), f.pii("load_rm", {k})});  // in d2
  const Id root = f.pii("store_rm", {s});                                       // reads d1
  bool exhaustive = false;
  CHECK(f.all(root, 16, &exhaustive).empty());
  CHECK(exhaustive);
  {
    Extractor x(f.graph, f.context, {root});
    CHECK(x.can_produce(s, kD2));
    CHECK_FALSE(x.can_produce(s, kD1));
    CHECK_FALSE(x.can_produce(root, kD0));
  }
  // s = mov(s): now s can reach d1 through mov (a cycle in the e-graph: s@d1 -> mov(s@d2)).
  f.unite(s, f.pii("mov", {s}));
  auto graphs = f.all(root, 16);
  REQUIRE(graphs.size() == 1);
  CHECK(f.multiset(graphs[0]) ==
        std::vector<std::string>{"gemm()", "load_rm(n = 64)", "load_rm(n = 64)", "mov(n = 64)", "store_rm(n = 64)"});
  // The class of s contributes two nodes: gemm in d2 and mov in d1.
  int in_s = 0;
  for (const PiiNode& n : graphs[0].nodes()) in_s += n.eclass == f.graph.find(s);
  CHECK(in_s == 2);
}

TEST_CASE("extract: leaves only in HBM; a constant needed on chip must be loaded", "[select][extract]") {
  Fixture f;
  const Id q = f.input(0);
  const Id c = f.graph.add(make_constant(f.context.attributes, 0, Shape(DType::u8, {8192})));
  CHECK(f.graph.data(c).is_constant);
  const Id root = f.pii("store_rm", {f.pii("gemm", {f.pii("load_rm", {q}), f.pii("load_rm", {c})})});
  // store_rm reads d1 but gemm writes d2: no graph; add the mov.
  CHECK(f.all(root, 16).empty());
  const Id root2 = f.pii("store_rm", {f.pii("mov", {f.pii("gemm", {f.pii("load_rm", {q}), f.pii("load_rm", {c})})})});
  auto graphs = f.all(root2, 16);
  REQUIRE(graphs.size() == 1);
  int constants = 0, inputs = 0;
  for (const PiiNode& n : graphs[0].nodes()) {
    constants += n.kind == PiiNodeKind::Constant;
    inputs += n.kind == PiiNodeKind::Input;
    if (n.is_leaf()) CHECK(n.buffer == kD0);
  }
  CHECK(constants == 1);
  CHECK(inputs == 1);
  CHECK(graphs[0].size() == 5);  // store, mov, gemm, two loads
}

TEST_CASE("extract: a class requested in two buffers contributes a node for each", "[select][extract]") {
  Fixture f;
  const Id q = f.input(0);
  const Id a = f.pii("load_rm", {q});
  const Id c = f.pii("gemm", {a, a});            // c@d2
  f.unite(c, f.pii("mov", {c}));                  // c@d1 = mov(c@d2)
  const Id w = f.pii("mov", {f.pii("softmax", {c})});  // softmax reads c@d2
  const Id t = f.pii("gemm", {c, w});             // gemm reads c@d1
  const Id root = f.pii("store_rm", {f.pii("mov", {t})});
  Extractor x(f.graph, f.context, {root}, ExtractorOptions{8, {}});
  auto g = x.next();
  REQUIRE(g);
  // store, mov(t), gemm(t), mov(c), gemm(c), load, mov(w), softmax
  CHECK(g->size() == 8);
  CHECK(duplicates(*g) == 0);
  std::vector<int> buffers_of_c;
  for (const PiiNode& n : g->nodes())
    if (n.eclass == f.graph.find(c)) buffers_of_c.push_back(n.buffer);
  std::sort(buffers_of_c.begin(), buffers_of_c.end());
  CHECK(buffers_of_c == std::vector<int>{kD1, kD2});
  // c@d2 is shared by softmax and by mov(c): gemm(c) appears once.
  const auto instructions = f.multiset(*g);
  CHECK(std::count(instructions.begin(), instructions.end(), "gemm()") == 2);
  // A lower bound, by hand: a=1, c@d2=2, c@d1=3, softmax=3, w=4, t=1+max(2,4)=5, mov=6, store=7
  // (sharing c@d2 between two consumers is what the bound cannot see).
  CHECK(x.min_size(root, kD0) == 7);
  CHECK(x.min_size(a, kD2) == Extractor::kUnreachable);
}

TEST_CASE("extract: shared graphs first, the unshared (load twice) variant later", "[select][extract]") {
  Fixture f;
  const Id q = f.input(0);
  const Id a = f.pii("load_rm", {q});
  const Id root = f.pii("store_rm", {f.pii("mov", {f.pii("gemm", {a, a})})});
  bool exhaustive = false;
  auto graphs = f.all(root, 5, &exhaustive);
  REQUIRE(graphs.size() == 2);
  CHECK(exhaustive);  // nothing bigger exists
  CHECK(graphs[0].size() == 4);
  CHECK(duplicates(graphs[0]) == 0);
  CHECK(graphs[1].size() == 5);
  CHECK(duplicates(graphs[1]) == 1);
  // The gemm's operands: one node in the first graph, two equal loads in the second.
  auto gemm_operands = [&](const PiiGraph& g) {
    for (const PiiNode& n : g.nodes())
      if (n.kind == PiiNodeKind::Pii && n.operands.size() == 2) return n.operands;
    return std::vector<std::size_t>{};
  };
  const auto first = gemm_operands(graphs[0]), second = gemm_operands(graphs[1]);
  REQUIRE(first.size() == 2);
  REQUIRE(second.size() == 2);
  CHECK(first[0] == first[1]);
  CHECK(second[0] != second[1]);
  CHECK(f.multiset(graphs[1]).size() == 5);
  // With a budget of 4 only the shared graph exists, and the enumeration says it was cut.
  auto cut = f.all(root, 4, &exhaustive);
  CHECK(cut.size() == 1);
  CHECK_FALSE(exhaustive);
}

TEST_CASE("extract: smallest first, deduplicated, and bounded on cycles", "[select][extract]") {
  Fixture f;
  const Id q = f.input(0);
  // c@d1 is load_rm(q) or mov(softmax(gemm(c, c))): a cycle with infinitely many graphs.
  const Id c = f.pii("load_rm", {q});
  f.unite(c, f.pii("mov", {f.pii("softmax", {f.pii("gemm", {c, c})})}));
  const Id root = f.pii("store_rm", {c});
  bool exhaustive = true;
  auto graphs = f.all(root, 9, &exhaustive);
  CHECK_FALSE(exhaustive);
  REQUIRE(graphs.size() >= 3);
  CHECK(graphs[0].size() == 2);  // store(load)
  // store(mov(softmax(gemm(load, load shared)))): c@d1 already has the (unfinished) mov node,
  // so the load is a second node for that request.
  CHECK(graphs[1].size() == 5);
  CHECK(duplicates(graphs[1]) == 1);
  CHECK(graphs[2].size() == 6);
  std::vector<std::vector<std::int64_t>> keys;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    CHECK(graphs[i].size() <= 9);
    if (i > 0) {
      const auto prev = std::make_pair(graphs[i - 1].size(), duplicates(graphs[i - 1]));
      const auto cur = std::make_pair(graphs[i].size(), duplicates(graphs[i]));
      CHECK(prev <= cur);
    }
    keys.push_back(graphs[i].canonical_key());
  }
  std::sort(keys.begin(), keys.end());
  CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  // Count the graphs of size 5 and 6 by hand: size 5 is gemm(load, load) shared (1 graph);
  // size 6 is the unshared loads (1 graph).
  CHECK(std::count_if(graphs.begin(), graphs.end(), [](const PiiGraph& g) { return g.size() == 5; }) == 1);
  CHECK(std::count_if(graphs.begin(), graphs.end(), [](const PiiGraph& g) { return g.size() == 6; }) == 1);
}

TEST_CASE("extract: lazy on an e-graph with exponentially many graphs", "[select][extract]") {
  Fixture f;
  constexpr int n = 40;  // 2^41 graphs of size 83
  const Id root = f.exponential_chain(n);
  Extractor x(f.graph, f.context, {root}, ExtractorOptions{4 * n, {}});
  CHECK(x.min_size(root, kD0) == 2 * n + 3);
  std::vector<std::vector<std::int64_t>> keys;
  for (int i = 0; i < 10; ++i) {
    auto g = x.next();
    REQUIRE(g);
    CHECK(g->size() == 2 * n + 3);
    CHECK(duplicates(*g) == 0);
    keys.push_back(g->canonical_key());
  }
  std::sort(keys.begin(), keys.end());
  CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  // Depth-first: the 10 graphs cost a few search states each, not 2^n.
  CHECK(x.states_visited() < 100 * (2 * n + 3));
}

TEST_CASE("extract: the pruning bound never loses a graph: every one of 2^(n+1) smallest graphs comes out",
          "[select][extract]") {
  // The bound walk stops early (branch and bound over alternatives and operands); whatever it
  // prunes must be a partial graph no completion of which fits the level.
  for (int n : {1, 3, 6}) {
    Fixture f;
    const Id root = f.exponential_chain(n);
    const std::size_t smallest = static_cast<std::size_t>(2 * n + 3);
    const auto graphs = f.all(root, smallest);
    CHECK(graphs.size() == (std::size_t{1} << (n + 1)));
    std::vector<std::vector<std::int64_t>> keys;
    for (const PiiGraph& g : graphs) {
      CHECK(g.size() == smallest);
      keys.push_back(g.canonical_key());
    }
    std::sort(keys.begin(), keys.end());
    CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  }
}

TEST_CASE("pii graph: canonical order makes equal programs equal", "[select][extract]") {
  auto leaf = [] {
    PiiNode n;
    n.kind = PiiNodeKind::Input;
    n.index = 0;
    return n;
  };
  auto op = [](std::int64_t instruction, std::vector<std::size_t> operands) {
    PiiNode n;
    n.kind = PiiNodeKind::Pii;
    n.index = instruction;
    n.buffer = 1;
    n.operands = std::move(operands);
    return n;
  };
  // The same DAG listed in two orders, plus an unreachable node in the second.
  PiiGraph g1({leaf(), op(7, {0}), op(8, {1, 1})}, {2});
  PiiGraph g2({op(8, {2, 2}), op(9, {}), op(7, {3}), leaf()}, {0});
  CHECK(g1 == g2);
  CHECK(g2.nodes().size() == 3);
  PiiGraph unshared({leaf(), op(7, {0}), op(7, {0}), op(8, {1, 2})}, {3});
  CHECK_FALSE(g1 == unshared);
  CHECK_THROWS_AS(PiiGraph({op(7, {1}), op(7, {0})}, {0}), Error);
  CHECK_THROWS_AS(PiiGraph({op(7, {5})}, {0}), Error);
}

TEST_CASE("explore: rounds with budget 2^k, no graph twice, stops when saturated and exhausted", "[select][extract]") {
  Fixture f;
  const Id q = f.input(0);
  const Id a = f.pii("load_rm", {q});
  const Id root = f.pii("store_rm", {f.pii("mov", {f.pii("gemm", {a, a})})});
  std::vector<TensorRewrite> rules;  // nothing to explore: saturated at once
  Explorer e(f.graph, f.context, {root}, rules);
  std::vector<PiiGraph> graphs;
  while (auto g = e.next()) graphs.push_back(std::move(*g));
  // Budget 2 (k=1): none; 4 (k=2): the shared graph; 8 (k=3): the unshared one, then exhaustive.
  REQUIRE(graphs.size() == 2);
  CHECK(graphs[0].size() == 4);
  CHECK(graphs[1].size() == 5);
  CHECK(e.saturated());
  CHECK(e.finished());
  CHECK(e.round() == 3);
  CHECK(e.budget() == 8);
  CHECK_FALSE(e.next());
}

TEST_CASE("extract: a deadline stops an endless level, not exhaustive, timed out", "[select][extract]") {
  Fixture f;
  // The e-graph of the lazy test: 2^41 graphs of one size, so only the deadline can end it.
  constexpr int n = 40;
  const Id root = f.exponential_chain(n);
  ExtractorOptions options{4 * n, {}};
  options.deadline = std::chrono::steady_clock::now();  // already passed
  Extractor x(f.graph, f.context, {root}, options);
  std::size_t yielded = 0;
  while (x.next() && yielded < 1'000'000) ++yielded;
  CHECK(yielded < 1'000'000);  // the clock is read every few thousand steps, not never
  CHECK(x.timed_out());
  CHECK_FALSE(x.exhaustive());
  CHECK_FALSE(x.next());  // stays stopped
  // Without a deadline the same extractor keeps going.
  Extractor y(f.graph, f.context, {root}, ExtractorOptions{4 * n, {}});
  for (int i = 0; i < 3; ++i) CHECK(y.next());
  CHECK_FALSE(y.timed_out());
}

TEST_CASE("extract: a shared work limit stops extractors like a deadline, and counts every step", "[select][extract]") {
  Fixture f;
  // The endless e-graph again: 2^41 graphs of one size.
  constexpr int n = 40;
  const Id root = f.exponential_chain(n);
  SearchWork work;
  ExtractorOptions options{4 * n, {}};
  options.work = &work;
  Extractor x(f.graph, f.context, {root}, options);
  REQUIRE(x.next());
  const std::uint64_t first = work.spent;
  CHECK(first > 0);
  work.limit = first + 5'000;
  std::size_t yielded = 1;
  while (x.next() && yielded < 1'000'000) ++yielded;
  CHECK(yielded < 1'000'000);
  CHECK(work.spent == first + 5'000);  // the step that reached the limit was the last
  CHECK(work.exhausted());
  CHECK(x.timed_out());
  CHECK_FALSE(x.exhaustive());
  // A second extractor sharing the spent counter stops at once; one without it goes on.
  Extractor y(f.graph, f.context, {root}, options);
  CHECK_FALSE(y.next());
  CHECK(work.spent == first + 5'000);
  Extractor z(f.graph, f.context, {root}, ExtractorOptions{4 * n, {}});
  CHECK(z.next());
}

TEST_CASE("extract: a finished search is exhaustive and not timed out, even with a deadline", "[select][extract]") {
  Fixture f;
  const Id root = f.pii("store_rm", {f.pii("load_rm", {f.input(0)})});
  ExtractorOptions options{8, {}};
  options.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  Extractor x(f.graph, f.context, {root}, options);
  CHECK(x.next());
  CHECK_FALSE(x.next());
  CHECK(x.exhaustive());
  CHECK_FALSE(x.timed_out());
}

TEST_CASE("explore: past its deadline the explorer stops as timed out, not finished-exhaustive", "[select][extract]") {
  Fixture f;
  const Id root = f.pii("store_rm", {f.pii("load_rm", {f.input(0)})});
  std::vector<TensorRewrite> rules;
  ExplorerOptions options;
  options.deadline = std::chrono::steady_clock::now();
  Explorer e(f.graph, f.context, {root}, rules, options);
  CHECK_FALSE(e.next());
  CHECK(e.finished());
  CHECK(e.timed_out());
  CHECK(e.yielded() == 0);
  // The same kernel without a deadline yields its one graph.
  Explorer g(f.graph, f.context, {root}, rules);
  CHECK(g.next());
  CHECK_FALSE(g.next());
  CHECK_FALSE(g.timed_out());
}

TEST_CASE("extract: a node fills at most one concat^H operand slot", "[select][extract]") {
  Fixture f;
  // out = concat^H_d0(s, s), s = store_rm(load_rm(q)): two copies of one tile side by side in
  // HBM. Sharing s (3 nodes) has no allocation; the graphs need two store nodes.
  const Id s = f.pii("store_rm", {f.pii("load_rm", {f.input(0)})});
  const Id root = f.graph.add(make_concat_h(f.context.attributes, kD0, 0), {s, s});
  f.graph.rebuild();
  bool exhaustive = false;
  const auto graphs = f.all(root, 8, &exhaustive);
  CHECK(exhaustive);
  // Two stores sharing one load (4 nodes, 1 duplicate), then two loads as well (5 nodes).
  REQUIRE(graphs.size() == 2);
  CHECK(graphs[0].size() == 4);
  CHECK(duplicates(graphs[0]) == 1);
  CHECK(graphs[1].size() == 5);
  for (const PiiGraph& g : graphs) {
    const PiiNode& concat = g.node(g.roots()[0]);
    REQUIRE(concat.kind == PiiNodeKind::ConcatH);
    REQUIRE(concat.operands.size() == 2);
    CHECK(concat.operands[0] != concat.operands[1]);
  }
}

TEST_CASE("extract: a root is never a leaf; an input returned as output is copied", "[select][extract]") {
  Fixture f;
  // The root class holds the input itself (as after transpose(transpose(p0)) = p0) and the copy
  // store_rm(load_rm(p0)). Phase 2 does not alias outputs to inputs, so only the copy is yielded.
  const Id q = f.input(0);
  const Id copy = f.pii("store_rm", {f.pii("load_rm", {q})});
  f.unite(q, copy);
  bool exhaustive = false;
  const auto graphs = f.all(q, 8, &exhaustive);
  CHECK(exhaustive);
  REQUIRE(graphs.size() == 1);
  const PiiGraph& g = graphs[0];
  CHECK(f.multiset(g) == std::vector<std::string>{"load_rm(n = 64)", "store_rm(n = 64)"});
  CHECK_FALSE(g.node(g.roots()[0]).is_leaf());
  // The load reads the input leaf, not the root's own node.
  REQUIRE(g.nodes().size() == 3);
  CHECK(std::count_if(g.nodes().begin(), g.nodes().end(), [](const PiiNode& n) { return n.kind == PiiNodeKind::Input; }) == 1);
}

TEST_CASE("extract: the greedy graph gives an instruction whose operands overfill a buffer its own copy of a view",
          "[select][extract]") {
  Fixture f;
  // top = A's first 64 rows, two ways: a slice^H of a 128-row load of A (2 nodes), or a 64-row
  // load of two slice^H of A's bytes (3 nodes). gemm(top, B) through the view keeps all 128
  // rows live beside B's 64: 192 rows of d1, which holds 128, whatever the schedule.
  const Id a = f.graph.add(make_input(f.context.attributes, 0, 16384));
  const Id wide = f.graph.add(make_pii(f.context.attributes, f.instruction("load_rm"), {128}), {a});
  const Id top = f.graph.add(make_slice_h(f.context.attributes, kD1, {{0, 64, 1}, {0, 64, 1}}), {wide});
  const Id first_rows = f.graph.add(make_slice_h(f.context.attributes, kD0, {{0, 12288, 1}}), {a});
  const Id top_bytes = f.graph.add(make_slice_h(f.context.attributes, kD0, {{0, 8192, 1}}), {first_rows});
  f.unite(top, f.pii("load_rm", {top_bytes}));
  const Id b = f.pii("load_rm", {f.input(1)});
  const Id root = f.pii("store_rm", {f.pii("mov", {f.pii("gemm", {top, b})})});
  f.graph.rebuild();
  REQUIRE(f.graph.data(f.graph.find(wide)).type == Shape(DType::bf16, {128, 64}));
  Extractor x(f.graph, f.context, {root});
  const auto g = x.greedy();
  REQUIRE(g.has_value());
  // The cheaper view is repaired into the 64-row load: 64 + 64 rows of d1 at the gemm.
  CHECK(f.multiset(*g) == std::vector<std::string>{"gemm()", "load_rm(n = 64)", "load_rm(n = 64)", "mov(n = 64)",
                                                     "store_rm(n = 64)"});
  // A view that fits stays a view: gemm(top, top) reads 128 rows of the one load.
  const Id square = f.pii("store_rm", {f.pii("mov", {f.pii("gemm", {top, top})})});
  f.graph.rebuild();
  Extractor y(f.graph, f.context, {square});
  const auto h = y.greedy();
  REQUIRE(h.has_value());
  CHECK(f.multiset(*h) == std::vector<std::string>{"gemm()", "load_rm(n = 128)", "mov(n = 64)", "store_rm(n = 64)"});
}

TEST_CASE("greedy: an operand read twice by one instruction is priced once, as the graph builds it once",
          "[select][extract]") {
  Fixture f;
  // c = mov(gemm(t, t)) with t = mov(gemm(load q0, load q2)): 7 instructions with the store,
  //   c = mov(gemm(u, b)) with u = mov(gemm(load q1, load q4)), b = load q3: 8.
  // Counted as a tree, t twice, the first costs 1 + 2 x 4 against the second's 1 + 4 + 1.
  const Id t = f.pii("mov", {f.pii("gemm", {f.pii("load_rm", {f.input(0)}), f.pii("load_rm", {f.input(2)})})});
  const Id u = f.pii("mov", {f.pii("gemm", {f.pii("load_rm", {f.input(1)}), f.pii("load_rm", {f.input(4)})})});
  const Id c = f.pii("mov", {f.pii("gemm", {t, t})});
  f.unite(c, f.pii("mov", {f.pii("gemm", {u, f.pii("load_rm", {f.input(3)})})}));
  const Id root = f.pii("store_rm", {c});
  f.graph.rebuild();
  Extractor x(f.graph, f.context, {root});
  const auto g = x.greedy();
  REQUIRE(g.has_value());
  CHECK(f.multiset(*g) == std::vector<std::string>{"gemm()", "gemm()", "load_rm(n = 64)", "load_rm(n = 64)", "mov(n = 64)",
                                                     "mov(n = 64)", "store_rm(n = 64)"});
}

TEST_CASE("extract: a paused search resumes where it stopped and yields the same graphs in the same order",
          "[select][extract]") {
  Fixture f;
  const Id root = f.exponential_chain(5);  // 2^6 graphs of the minimum size, then larger ones
  Extractor whole(f.graph, f.context, {root}, ExtractorOptions{16, {}});
  std::vector<std::vector<std::int64_t>> expected;
  while (auto g = whole.next()) expected.push_back(g->canonical_key());
  REQUIRE(expected.size() > 64);
  Extractor sliced(f.graph, f.context, {root}, ExtractorOptions{16, {}});
  std::vector<std::vector<std::int64_t>> got;
  std::size_t pauses = 0;
  for (;;) {
    sliced.pause_after(7);
    if (auto g = sliced.next()) {
      got.push_back(g->canonical_key());
      continue;
    }
    if (!sliced.paused()) break;
    ++pauses;
    REQUIRE(pauses < 1'000'000);
  }
  CHECK(pauses > expected.size());  // it did pause between graphs, not only at the end
  CHECK(got == expected);
  CHECK(sliced.exhaustive() == whole.exhaustive());
}

TEST_CASE("extract: the node-less operand counts the bound walk reads stay in step through every step and undo",
          "[select][extract]") {
  // The counts change as nodes are made and undone; pausing every few units of work checks them
  // in the middle of the search, with partial graphs of every shape, not only at yields.
  Fixture f;
  const Id root = f.exponential_chain(5);
  Extractor x(f.graph, f.context, {root}, ExtractorOptions{16, {}});
  REQUIRE(x.nodeless_counts_in_step());
  std::size_t graphs = 0, pauses = 0;
  for (;;) {
    x.pause_after(3);
    const auto g = x.next();
    REQUIRE(x.nodeless_counts_in_step());
    if (g) {
      ++graphs;
      continue;
    }
    if (!x.paused()) break;
    ++pauses;
    REQUIRE(pauses < 1'000'000);
  }
  CHECK(graphs > 64);
  CHECK(pauses > graphs);
}

TEST_CASE("greedy: storage kept from a larger request graph gives the graphs fresh storage gives", "[select][extract]") {
  Fixture large, small;
  const Id large_root = large.exponential_chain(6);
  const Id small_root = small.exponential_chain(1);
  large.graph.rebuild();
  small.graph.rebuild();
  const RequestGraph large_requests(large.graph, large.context, {large_root});
  const RequestGraph small_requests(small.graph, small.context, {small_root});
  REQUIRE(large_requests.request_count() > small_requests.request_count());
  GreedyScratch scratch;
  const auto large_reused = greedy_pii_graph(large_requests, {}, false, &scratch);
  const auto small_reused = greedy_pii_graph(small_requests, {}, false, &scratch);  // shorter arrays, stale tails
  const auto large_again = greedy_pii_graph(large_requests, {}, false, &scratch);
  const auto small_fresh = greedy_pii_graph(small_requests);
  const auto large_fresh = greedy_pii_graph(large_requests);
  REQUIRE(large_fresh.has_value());
  REQUIRE(small_fresh.has_value());
  CHECK(large_fresh->nodes().size() == 17);  // 2n + 3 instructions for n = 6, and two inputs
  CHECK(small_fresh->nodes().size() == 7);
  CHECK(large_reused == large_fresh);
  CHECK(small_reused == small_fresh);
  CHECK(large_again == large_fresh);
  // A ban that leaves no graph, then none: the ban's stale choices must not leak.
  const std::int64_t gemm = static_cast<std::int64_t>(small.instruction("gemm"));
  CHECK_FALSE(greedy_pii_graph(small_requests, {gemm}, false, &scratch).has_value());
  CHECK(greedy_pii_graph(small_requests, {}, false, &scratch) == small_fresh);
}

TEST_CASE("dirty keys: reset marks exactly the keys below the new count, in the storage it holds", "[select][extract]") {
  DirtyKeys keys(200);
  keys.clear(5);
  keys.reset(70);
  std::vector<std::size_t> order;
  for (std::size_t k = keys.next(0); k != DirtyKeys::npos; k = keys.next(k + 1)) order.push_back(k);
  REQUIRE(order.size() == 70);
  CHECK(order.back() == 69);
  for (std::size_t k : order) keys.clear(k);
  CHECK_FALSE(keys.any());
  keys.reset(0);
  CHECK_FALSE(keys.any());
}

TEST_CASE("dirty keys: every key marked at first, next() finds marked keys in order, marks and clears counted once",
          "[select][extract]") {
  DirtyKeys keys(130);  // not a multiple of 64: the last word holds only keys < 130
  std::vector<std::size_t> order;
  for (std::size_t k = keys.next(0); k != DirtyKeys::npos; k = keys.next(k + 1)) order.push_back(k);
  REQUIRE(order.size() == 130);
  CHECK(order.front() == 0);
  CHECK(order.back() == 129);
  CHECK(std::is_sorted(order.begin(), order.end()));
  for (std::size_t k : order) keys.clear(k);
  CHECK_FALSE(keys.any());
  CHECK(keys.next(0) == DirtyKeys::npos);
  keys.mark(129);
  keys.mark(3);
  keys.mark(3);
  CHECK(keys.next(0) == 3);
  CHECK(keys.next(4) == 129);
  CHECK(keys.next(130) == DirtyKeys::npos);
  keys.clear(3);
  keys.clear(3);
  CHECK(keys.any());
  keys.clear(129);
  CHECK_FALSE(keys.any());
  CHECK_FALSE(DirtyKeys(0).any());
}

TEST_CASE("request graph: users() lists each reader once, and the marked-key sweeps reach the full sweeps' fixed points",
          "[select][extract]") {
  Fixture f;
  const Id root = f.exponential_chain(5);
  // A cycle through HBM: the chain's first value is also a load of its own store.
  const Id c0 = f.graph.find(f.pii("load_rm", {f.input(0)}));
  f.unite(c0, f.pii("load_rm", {f.pii("store_rm", {c0})}));
  // A request nothing can produce: a gemm reading a value only d2 holds, in d1.
  const Id stranded = f.pii("gemm", {f.pii("gemm", {c0, c0}), c0});
  f.unite(f.graph.find(root), f.pii("store_rm", {f.pii("mov", {stranded})}));
  const RequestGraph requests(f.graph, f.context, {root});
  const std::size_t n = requests.request_count();
  // users(): exactly the requests with an alternative reading the operand, each once.
  std::vector<std::vector<std::uint32_t>> expected(n);
  for (std::size_t k = 0; k < n; ++k)
    for (const auto& alt : requests.alternatives(k))
      for (const auto& r : alt.operands) expected[requests.key(r)].push_back(static_cast<std::uint32_t>(k));
  for (std::size_t o = 0; o < n; ++o) {
    auto& e = expected[o];
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
    std::vector<std::uint32_t> got(requests.users(o).begin(), requests.users(o).end());
    CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
    std::sort(got.begin(), got.end());
    // The pruned alternatives may have read o: users() is a superset of what remains.
    CHECK(std::includes(got.begin(), got.end(), e.begin(), e.end()));
  }
  // Full sweeps until nothing changes, as the fixed points are defined.
  std::vector<std::size_t> min_size(n, RequestGraph::kUnreachable);
  for (std::uint32_t c = 0; c < requests.class_count(); ++c)
    if (requests.leaf(c)) min_size[requests.key({c, requests.hbm()})] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (min_size[k] == 0) continue;
      for (const auto& alt : requests.alternatives(k)) {
        std::size_t largest = 0;
        std::vector<std::size_t> distinct;
        bool reachable = true;
        for (const auto& r : alt.operands) {
          reachable = reachable && min_size[requests.key(r)] != RequestGraph::kUnreachable;
          if (!reachable) break;
          largest = std::max(largest, min_size[requests.key(r)]);
          if (!requests.is_leaf_request(r)) distinct.push_back(requests.key(r));
        }
        if (!reachable) continue;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        const std::size_t bound = 1 + std::max(largest, distinct.size());
        if (bound < min_size[k]) {
          min_size[k] = bound;
          changed = true;
        }
      }
    }
  }
  std::size_t producible = 0;
  for (std::size_t k = 0; k < n; ++k) {
    CHECK(requests.producible(k) == (min_size[k] != RequestGraph::kUnreachable));
    if (requests.producible(k)) CHECK(requests.min_size(k) == min_size[k]);
    producible += requests.producible(k) ? 1 : 0;
  }
  CHECK(producible > 10);
  CHECK(producible < n);  // the stranded gemm in d1, among others
  CHECK(requests.min_size(requests.key(requests.roots()[0])) == 2 * 5 + 3);
}
