// Greedy pii-graph extraction over a RequestGraph (request_graph.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "act/select/pii_graph.hpp"
#include "act/select/search/request_graph.hpp"

namespace act::select {

// A greedy pii graph (egg-style extraction): each request takes the alternative of least
// additive cost (nodes counted as if the graph were a tree) and becomes one shared node. Not in
// the enumeration's order: the explorer offers it before each round's enumeration as a fast
// first candidate (K1 on AMX needs 23 nodes; enumerating every smaller graph first costs
// seconds). Two costs per request: any node, or an *owned* one (a Pii, or a concat^H of owned
// nodes) -- concat^H places its operands side by side, so they must be storage of their own,
// not slice^H views or leaves, and a node fills at most one concat^H slot (a second slot gets
// a fresh copy). A root is owned. nullopt when some root cannot be produced.
// `banned`: ISA instruction indices whose Pii alternatives are not taken (the explorer's
// alternatives to a greedy graph, explorer.hpp).
// `claim_in_place`: an instruction reading an operand in place (isa::reads_in_place) writes
// that operand's storage, so it owns storage only when the operand does (two in-place softmaxes
// of one slice^H placed side by side under a concat^H have no allocation), and it claims the
// operand as a concat^H slot does: a second in-place reader gets a fresh owned copy when one
// exists. Off: in-place operands are plain operands (phase 2 rematerialises input-less ones).
inline std::optional<PiiGraph> greedy_pii_graph(const RequestGraph& requests, const std::vector<std::int64_t>& banned = {},
                                                bool claim_in_place = false) {
  using Request = RequestGraph::Request;
  using Alternative = RequestGraph::Alternative;
  const std::size_t n = requests.request_count();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> any(n, kInf), owned(n, kInf);
  std::vector<const Alternative*> any_choice(n, nullptr), owned_choice(n, nullptr);
  for (std::uint32_t c = 0; c < requests.class_count(); ++c)
    if (requests.leaf(c)) any[requests.key(Request{c, requests.hbm()})] = 0;
  auto claims_in_place = [](const Alternative& alt, std::size_t j) { return j < 32 && ((alt.in_place >> j) & 1u) != 0; };
  auto is_slice = [&](const Alternative& alt) { return requests.graph().node(alt.node).op.kind == NodeKind::SliceH; };
  auto is_banned = [&](const Alternative& alt) {
    if (banned.empty()) return false;
    const TensorOp& op = requests.graph().node(alt.node).op;
    return op.kind == NodeKind::Pii &&
           std::find(banned.begin(), banned.end(), requests.context().attributes_of(op).index) != banned.end();
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      for (const Alternative& alt : requests.alternatives(k)) {
        if (is_banned(alt)) continue;
        double c = 1, c_owned = 1;
        for (std::size_t j = 0; j < alt.operands.size(); ++j) {
          const std::size_t o = requests.key(alt.operands[j]);
          c += alt.concat ? owned[o] : any[o];
          c_owned += alt.concat || (claim_in_place && claims_in_place(alt, j)) ? owned[o] : any[o];
        }
        if (c < any[k] && any[k] != 0) {
          any[k] = c;
          any_choice[k] = &alt;
          changed = true;
        }
        if (!is_slice(alt) && c_owned < owned[k]) {
          owned[k] = c_owned;
          owned_choice[k] = &alt;
          changed = true;
        }
      }
    }
  }
  std::vector<PiiNode> out;
  std::vector<std::uint8_t> concat_used;    // per node of `out`: fills a concat^H slot
  std::vector<std::uint8_t> in_place_used;  // per node of `out`: read in place (claim_in_place)
  std::vector<std::size_t> memo[2];
  memo[0].assign(n, std::numeric_limits<std::size_t>::max());
  memo[1].assign(n, std::numeric_limits<std::size_t>::max());
  bool failed = false;
  std::function<std::size_t(Request, bool, bool)> make = [&](Request r, bool want_owned, bool fresh) -> std::size_t {
    const std::size_t k = requests.key(r);
    auto& m = memo[want_owned ? 1 : 0];
    if (!fresh && m[k] != std::numeric_limits<std::size_t>::max()) return m[k];
    const Alternative* alt = want_owned ? owned_choice[k] : any_choice[k];
    const bool leaf = !want_owned && any[k] == 0;
    if ((!alt && !leaf) || failed || out.size() > 100'000) {
      failed = true;
      return 0;
    }
    PiiNode p = requests.node(r, leaf ? nullptr : alt);
    if (!leaf) {
      for (std::size_t j = 0; j < alt->operands.size(); ++j) {
        const Request o = alt->operands[j];
        const bool in_place = claim_in_place && claims_in_place(*alt, j);
        std::size_t node = make(o, alt->concat || (want_owned && in_place), false);
        if (alt->concat) {
          concat_used.resize(out.size(), 0);
          if (!failed && concat_used[node]) node = make(o, true, true);
          concat_used.resize(out.size(), 0);
          if (!failed) concat_used[node] = 1;
        } else if (in_place) {
          in_place_used.resize(out.size(), 0);
          if (!failed && in_place_used[node] && owned[requests.key(o)] < kInf) node = make(o, true, true);
          in_place_used.resize(out.size(), 0);
          if (!failed) in_place_used[node] = 1;
        }
        p.operands.push_back(node);
      }
    }
    if (failed) return 0;
    out.push_back(std::move(p));
    const std::size_t index = out.size() - 1;
    if (!fresh) m[k] = index;
    return index;
  };
  std::vector<std::size_t> roots;
  for (Request r : requests.roots()) {
    roots.push_back(make(r, true, false));
    if (failed) return std::nullopt;
  }
  return PiiGraph(std::move(out), roots);
}

}  // namespace act::select
