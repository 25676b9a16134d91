// Phase 1 end to end on the paper's running example: attention.hlo on QKV. Module 1 builds the
// e-graph, module 2 saturates it with the ISA's rule set, module 3 enumerates pii graphs; the
// first one must be the paper's program (Fig. 10a) as an instruction multiset.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
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

// "load_rm(n = 64, addr_in = 0, addr_out = 0)" -> "load_rm(n = 64)": the instruction with its
// alpha, in the form PiiGraph::instruction_multiset prints, read from the expected program.
std::vector<std::string> expected_multiset(const std::string& path, const isa::IsaView& isa) {
  std::vector<std::string> out;
  std::ifstream in(path);
  std::string line;
  const std::regex instruction(R"(^\s*([a-z_0-9]+)\((.*)\)\s*$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, instruction)) continue;
    const auto* ins = isa.find_instruction(m[1].str());
    REQUIRE(ins != nullptr);
    std::vector<std::string> alpha;
    for (std::string_view a : ins->alpha) {
      const std::regex value(std::string(a) + R"(\s*=\s*(-?[0-9]+))");
      std::smatch v;
      const std::string attributes = m[2].str();
      REQUIRE(std::regex_search(attributes, v, value));
      alpha.push_back(std::string(a) + " = " + v[1].str());
    }
    std::string text = m[1].str() + "(";
    for (std::size_t i = 0; i < alpha.size(); ++i) text += (i ? ", " : "") + alpha[i];
    out.push_back(text + ")");
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("phase 1 on attention.hlo: the first pii graph is the paper's program") {
  const std::string shared = ACT_SHARED_DIR;
  SelectionContext context;
  context.isa = isa::view<isa::Qkv>();
  TensorGraph graph{TensorAnalysis(&context)};
  const auto kernel = testing::load_kernel(shared + "/kernels/qkv/attention.hlo");
  const InitialGraph init = add_kernel(graph, context, kernel);
  const RuleSet rules = rule_set(context);

  ExplorerOptions options;
  options.runner.node_limit = 20'000;
  Explorer explorer(graph, context, init.roots, rules.rules, options);
  const auto first = explorer.next();
  REQUIRE(first.has_value());
  INFO(first->to_string(context.isa));

  auto multiset = first->instruction_multiset(context.isa);
  std::sort(multiset.begin(), multiset.end());
  const auto expected = expected_multiset(shared + "/kernels/qkv/attention.expected.asm", context.isa);
  REQUIRE(expected.size() == 9);
  CHECK(multiset == expected);
}
