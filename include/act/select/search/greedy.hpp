// Greedy pii-graph extraction over a RequestGraph (request_graph.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "act/select/on_chip_reads.hpp"
#include "act/select/pii_graph.hpp"
#include "act/select/search/request_graph.hpp"

namespace act::select {

// Per-request arrays of one greedy extraction, kept by a caller that extracts again and again
// (the explorer: several greedy graphs per round, every round). Each is as long as the
// request graph (over 100k requests on AMX's lane-blend kernels): allocated afresh per
// extraction, their pages were faulted in each time: 40 % of kernel 72's page faults.
struct GreedyScratch {
  std::vector<double> any, owned;
  std::vector<const RequestGraph::Alternative*> any_choice, owned_choice;
  std::vector<std::size_t> memo[2];
  std::vector<std::uint8_t> must_own;
  DirtyKeys dirty;
};

namespace greedy_detail {

// One greedy extraction. `must_own`: per request, whether every reader takes its owned
// alternative (its own storage, not a slice^H view of a larger value); `request_of` gets each
// built node's request and `renumbered` its index in the returned graph (PiiGraph::kDropped).
inline std::optional<PiiGraph> attempt(const RequestGraph& requests, const std::vector<std::int64_t>& banned,
                                       bool claim_in_place, bool hbm_views, const std::vector<std::uint8_t>& must_own,
                                       std::vector<RequestGraph::Request>& request_of,
                                       std::vector<std::size_t>& renumbered, GreedyScratch& scratch) {
  using Request = RequestGraph::Request;
  using Alternative = RequestGraph::Alternative;
  const std::size_t n = requests.request_count();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double>& any = scratch.any;
  std::vector<double>& owned = scratch.owned;
  std::vector<const Alternative*>& any_choice = scratch.any_choice;
  std::vector<const Alternative*>& owned_choice = scratch.owned_choice;
  any.assign(n, kInf);
  owned.assign(n, kInf);
  any_choice.assign(n, nullptr);
  owned_choice.assign(n, nullptr);
  for (std::uint32_t c = 0; c < requests.class_count(); ++c)
    if (requests.leaf(c)) any[requests.key(Request{c, requests.hbm()})] = 0;
  auto claims_in_place = [](const Alternative& alt, std::size_t j) { return j < 32 && ((alt.in_place >> j) & 1u) != 0; };
  auto is_slice = [&](const Alternative& alt) { return requests.graph().node(alt.node).op.kind == NodeKind::SliceH; };
  // A concat^H operand taken as a view (the second attempt, greedy_pii_graph): in HBM, without an owned form.
  auto view_operand = [&](Request o) { return hbm_views && owned[requests.key(o)] == kInf && o.buffer == requests.hbm(); };
  auto is_banned = [&](const Alternative& alt) {
    if (banned.empty()) return false;
    const TensorOp& op = requests.graph().node(alt.node).op;
    return op.kind == NodeKind::Pii &&
           std::find(banned.begin(), banned.end(), requests.context().attributes_of(op).index) != banned.end();
  };
  // Sweeps in key order until nothing changes, each visiting only the requests an operand of
  // which changed since their last visit (DirtyKeys: the same updates as full sweeps).
  DirtyKeys& dirty = scratch.dirty;
  dirty.reset(n);
  while (dirty.any()) {
    for (std::size_t k = dirty.next(0); k != DirtyKeys::npos; k = dirty.next(k + 1)) {
      dirty.clear(k);
      const double any_before = any[k], owned_before = owned[k];
      for (const Alternative& alt : requests.alternatives(k)) {
        if (is_banned(alt)) continue;
        double c = 1, c_owned = 1;
        for (std::size_t j = 0; j < alt.operands.size(); ++j) {
          const std::size_t o = requests.key(alt.operands[j]);
          const bool own = must_own[o] || (alt.concat && !view_operand(alt.operands[j]));
          // An operand read twice by one instruction (t + t) is one node of the graph (make()
          // shares it), so it costs once: counted twice, t + t tied with ((x + m) + m) + m,
          // a longer program. Not for a concat^H (each slot is a copy of its own) nor for an
          // operand claimed in place (a second claim gets a fresh copy).
          bool repeated = false;
          if (!alt.concat && !(claim_in_place && claims_in_place(alt, j)))
            for (std::size_t i = 0; i < j && !repeated; ++i)
              repeated = requests.key(alt.operands[i]) == o && !(claim_in_place && claims_in_place(alt, i));
          if (repeated) continue;
          c += own ? owned[o] : any[o];
          c_owned += own || (claim_in_place && claims_in_place(alt, j)) ? owned[o] : any[o];
        }
        if (c < any[k] && any[k] != 0) {
          any[k] = c;
          any_choice[k] = &alt;
        }
        if (!is_slice(alt) && c_owned < owned[k]) {
          owned[k] = c_owned;
          owned_choice[k] = &alt;
        }
      }
      if (any[k] != any_before || owned[k] != owned_before)
        for (std::uint32_t u : requests.users(k)) dirty.mark(u);
    }
  }
  std::vector<PiiNode> out;
  std::vector<std::uint8_t> concat_used;    // per node of `out`: fills a concat^H slot
  std::vector<std::uint8_t> in_place_used;  // per node of `out`: read in place (claim_in_place)
  std::vector<std::size_t>(&memo)[2] = scratch.memo;
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
        const std::size_t ko = requests.key(o);
        const bool concat_owned = alt->concat && !view_operand(o);
        std::size_t node = make(o, concat_owned || must_own[ko] || (want_owned && in_place), false);
        if (alt->concat) {
          concat_used.resize(out.size(), 0);
          if (!failed && concat_used[node]) node = make(o, concat_owned, true);
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
    request_of.push_back(r);
    const std::size_t index = out.size() - 1;
    if (!fresh) m[k] = index;
    return index;
  };
  std::vector<std::size_t> roots;
  for (Request r : requests.roots()) {
    roots.push_back(make(r, true, false));
    if (failed) return std::nullopt;
  }
  return PiiGraph(std::move(out), roots, &renumbered);
}

// The requests to own so that no instruction of `graph` reads more of an on-chip buffer at once
// than the buffer holds (on_chip_reads.hpp): for each such instruction, its operands that are
// slice^H views of a larger value (phase 2 must keep the whole value live while the instruction
// reads a part of it). Empty when no instruction overfills a buffer or none of the overfull
// ones reads a view.
inline std::vector<std::size_t> views_to_own(const RequestGraph& requests, const PiiGraph& graph,
                                             const std::vector<RequestGraph::Request>& request_of,
                                             const std::vector<std::size_t>& renumbered) {
  const OnChipReads reads(graph, requests.context().isa);
  const std::size_t n = graph.nodes().size();
  // graph node -> its request (`renumbered` maps attempt()'s nodes to the graph's)
  std::vector<std::size_t> key(n, std::numeric_limits<std::size_t>::max());
  for (std::size_t i = 0; i < renumbered.size(); ++i)
    if (renumbered[i] < n) key[renumbered[i]] = requests.key(request_of[i]);
  std::vector<std::size_t> out;
  for (std::size_t q = 0; q < n; ++q) {
    if (graph.node(q).kind != PiiNodeKind::Pii) continue;
    for (std::size_t b = 0; b < requests.context().isa.buffers.size(); ++b) {
      if (!reads.overfills(q, b)) continue;
      for (std::size_t o : graph.node(q).operands) {
        if (static_cast<std::size_t>(graph.node(o).buffer) != b || graph.node(o).kind != PiiNodeKind::SliceH) continue;
        std::int64_t whole = 0;
        for (std::size_t s : reads.owners(o)) whole += reads.units(s);
        if (whole > reads.units(o) && key[o] != std::numeric_limits<std::size_t>::max()) out.push_back(key[o]);
      }
    }
  }
  return out;
}

}  // namespace greedy_detail

// A greedy pii graph (egg-style extraction): each request takes the alternative of least
// additive cost (nodes counted as if the graph were a tree) and becomes one shared node. Not in
// the enumeration's order: the explorer offers it before each round's enumeration as a fast
// first candidate (K1 on AMX needs 23 nodes; enumerating every smaller graph first costs
// seconds). Two costs per request: any node, or an *owned* one (a Pii, or a concat^H of owned
// nodes) -- concat^H places its operands side by side, so they must be storage of their own,
// not slice^H views or leaves, and a node fills at most one concat^H slot (a second slot gets
// a fresh copy). A root is owned. When that leaves some root unproduced, a second attempt takes
// a concat^H operand in HBM that has no owned form (no instruction writes it: a window of
// adjacent kernel inputs, an output piece that is a slice of a product loop_ws writes whole to
// HBM) as a view, whose place phase 2 then checks. Only then: a view is cheaper than an owned
// operand, so offered always it displaced graphs that allocate by ones that do not (AMX
// complete-soak kernels), and on chip views side by side seldom have a place at all (QKV's
// concat^H of one gemm result twice). nullopt when some root cannot be produced either way.
// `banned`: ISA instruction indices whose Pii alternatives are not taken (the explorer's
// alternatives to a greedy graph, explorer.hpp).
// `claim_in_place`: an instruction reading an operand in place (isa::reads_in_place) writes
// that operand's storage, so it owns storage only when the operand does (two in-place softmaxes
// of one slice^H placed side by side under a concat^H have no allocation), and it claims the
// operand as a concat^H slot does: a second in-place reader gets a fresh owned copy when one
// exists. Off: in-place operands are plain operands (phase 2 rematerialises input-less ones).
// Repaired for capacity: while an instruction of the graph reads more of a buffer at
// once than the buffer holds only because some operands are slice^H views of larger values
// (QKV's gemm reading 64 rows of a 128-row load beside 64 rows of B: 192 rows of d1's 128),
// those operands are extracted as values of their own and the graph is extracted again. Such a
// graph has no allocation whatever the schedule, and the enumeration would reach the repaired
// one only after every smaller graph (QKV's 2048-row dot: 180 nodes).
// `scratch`: storage to reuse from an earlier call (nullptr: this call's own).
inline std::optional<PiiGraph> greedy_pii_graph(const RequestGraph& requests, const std::vector<std::int64_t>& banned = {},
                                                bool claim_in_place = false, GreedyScratch* scratch = nullptr) {
  GreedyScratch own_scratch;
  if (!scratch) scratch = &own_scratch;
  for (const bool hbm_views : {false, true}) {
    std::vector<std::uint8_t>& must_own = scratch->must_own;
    must_own.assign(requests.request_count(), 0);
    std::optional<PiiGraph> graph;
    for (int repair = 0; repair < 8; ++repair) {
      std::vector<RequestGraph::Request> request_of;
      std::vector<std::size_t> renumbered;
      auto candidate =
          greedy_detail::attempt(requests, banned, claim_in_place, hbm_views, must_own, request_of, renumbered, *scratch);
      if (!candidate) break;  // owning them leaves some root unproduced: keep the last graph
      graph = std::move(candidate);
      bool added = false;
      for (std::size_t k : greedy_detail::views_to_own(requests, *graph, request_of, renumbered))
        if (!must_own[k]) must_own[k] = added = true;
      if (!added) break;
    }
    if (graph) return graph;
  }
  return std::nullopt;
}

}  // namespace act::select
