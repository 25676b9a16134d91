// Module 3 (§5.3, Fig. 9): enumerative, buffer-guided, lazy extraction of pii graphs.
//
// A *request* is (e-class, buffer): "a pii graph that leaves this class's value in this buffer".
// Extraction starts with every root class requested in HBM. A request is met by
//   - a leaf, when the buffer is HBM and the class holds a kernel Input or is constant
//     (TensorData::is_constant); leaves are the only choice there (App. B module 3), except
//     for a root, which is never a leaf (phase 2 does not copy inputs to outputs);
//   - an instruction e-node of the class whose output buffer is the requested one: a Pii node
//     (its instruction's Out0 buffer) or a slice^H / concat^H (its own buffer). Its operands
//     become requests in the buffers the instruction reads. Operator e-nodes never qualify.
// One class may be requested in several buffers and then contributes several nodes.
//
// Order (documented contract): graphs come out by increasing key (size, duplicates):
//   size        instruction nodes: pii AND identity nodes, leaves aside. Identity nodes count
//               so that slice^H/concat^H cycles cannot produce infinitely many graphs of one size.
//   duplicates  nodes built for a request that already had a node in the graph (the same value
//               computed or loaded twice). A graph whose requests each resolve to one shared
//               sub-graph has 0; its unshared variants have more nodes, so they come later.
// Within one key the order is the deterministic depth-first order of the search.
//
// How: iterative deepening over (size, duplicates) levels, each a depth-first search with an
// explicit stack (the generator's state: memory is O(N_max x branching), never a product of
// sets). A partial graph is pruned when its nodes plus a lower bound on the nodes it still has
// to build exceed the level's size. The bound stays admissible under sharing: every distinct
// pending request without any node needs >= 1 new node, and a request's own sub-graph needs
// 1 + max(#distinct node-less operand requests, bound of each operand), where requests that
// already hold a node cost 0 (memoised per search state). Precomputed once per e-graph state: the
// admissible e-nodes per request, "can produce class c in buffer b" (a least fixed point, so
// dead requests are never tried), and a DAG-size lower bound per request (first level to try).
// Sharing only ever points at a finished node, never at an ancestor, so graphs are acyclic
// even when the e-graph has cycles; the node budget N_max bounds everything. A node fills at
// most one concat^H operand slot: concat^H places its operands side by side, so a shared one
// (concat^H(x, x), also through a chain of binary concat^H) could never be allocated.
// Graphs are deduplicated by canonical form (an optional PiiGraphSet shared across extractors
// lets the explorer skip graphs yielded in earlier rounds).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/egraph/id.hpp"
#include "act/select/pii_graph.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/tensor_language.hpp"

namespace act::select {

// The canonical forms of pii graphs seen so far.
class PiiGraphSet {
 public:
  // True when `g` was not in the set (and is now).
  bool insert(const PiiGraph& g) { return keys_.insert(g.canonical_key()).second; }
  bool contains(const PiiGraph& g) const { return keys_.count(g.canonical_key()) != 0; }
  std::size_t size() const { return keys_.size(); }

 private:
  std::set<std::vector<std::int64_t>> keys_;
};

struct ExtractorOptions {
  std::size_t max_size = 64;  // N_max: instruction nodes (pii + identity) per graph
  // Gives the constant-pool id of a constant class without a Constant e-node (e.g. by
  // evaluating one of its expressions). Unset: such leaves carry constant id -1.
  std::function<std::int64_t(egraph::Id)> fold_constant;
  // The search stops once this passes (checked every few thousand steps, so one enumeration
  // level cannot outlive it): next() returns nullopt, exhaustive() is false, timed_out() true.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

class Extractor {
 public:
  static constexpr std::size_t kUnreachable = std::numeric_limits<std::size_t>::max();

  // `graph` must be clean (rebuilt) and outlive the extractor; so must `seen` if given.
  Extractor(const TensorGraph& graph, const SelectionContext& context, std::vector<egraph::Id> roots,
            ExtractorOptions options = {}, PiiGraphSet* seen = nullptr)
      : graph_(graph), context_(context), options_(std::move(options)), seen_(seen ? seen : &own_seen_) {
    if (!graph.is_clean()) throw Error(ErrorKind::Internal, "extract: the e-graph must be rebuilt first");
    hbm_ = -1;
    for (std::size_t b = 0; b < context.isa.buffers.size(); ++b)
      if (context.isa.buffers[b].is_hbm && hbm_ < 0) hbm_ = static_cast<int>(b);
    if (hbm_ < 0) throw Error(ErrorKind::Isa, fmt::format("ISA {} has no HBM buffer", context.isa.name));
    buffers_ = context.isa.buffers.size();
    index_classes();
    for (egraph::Id r : roots) root_requests_.push_back(Request{dense(graph.find(r)), hbm_});
    compute_producible();
    compute_min_sizes();
    start_search();
  }
  // The search keeps pointers into its own tables.
  Extractor(const Extractor&) = delete;
  Extractor& operator=(const Extractor&) = delete;

  // The next pii graph, or nullopt when every graph within max_size has been yielded.
  std::optional<PiiGraph> next() {
    while (!finished_) {
      if (auto g = step_level()) return g;
      if (finished_) break;  // stopped by the deadline inside the level
      advance_level();
    }
    return std::nullopt;
  }

  // After next() returned nullopt: true if no pii graph larger than max_size exists either
  // (the enumeration was complete, not cut by the budget).
  bool exhaustive() const { return finished_ && exhaustive_; }
  // After next() returned nullopt: true if the search stopped because options.deadline passed.
  bool timed_out() const { return timed_out_; }

  // Whether `cls` can be produced into `buffer` at all (with any number of nodes).
  bool can_produce(egraph::Id cls, int buffer) const {
    const std::uint32_t c = dense(graph_.find(cls));
    return buffer >= 0 && static_cast<std::size_t>(buffer) < buffers_ && producible_[key(Request{c, buffer})];
  }
  // A lower bound on the instruction nodes of any graph producing `cls` into `buffer`
  // (kUnreachable when it cannot be produced).
  std::size_t min_size(egraph::Id cls, int buffer) const {
    if (!can_produce(cls, buffer)) return kUnreachable;
    return min_size_[key(Request{dense(graph_.find(cls)), buffer})];
  }
  int hbm() const { return hbm_; }
  // Moves the deadline (the explorer passes a caller's earlier, soft one).
  void set_deadline(std::chrono::steady_clock::time_point deadline) { options_.deadline = deadline; }

  // A greedy pii graph (egg-style extraction): each request takes the alternative of least
  // additive cost (nodes counted as if the graph were a tree) and becomes one shared node. Not in
  // the enumeration's order: the explorer offers it before each round's enumeration as a fast
  // first candidate (K1 on AMX needs 23 nodes; enumerating every smaller graph first costs
  // seconds). Two costs per request: any node, or an *owned* one (a Pii, or a concat^H of owned
  // nodes) -- concat^H places its operands side by side, so they must be storage of their own,
  // not slice^H views or leaves, and a node fills at most one concat^H slot (a second slot gets
  // a fresh copy). A root is owned. nullopt when some root cannot be produced.
  std::optional<PiiGraph> greedy() const {
    const std::size_t n = alternatives_.size();
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<double> any(n, kInf), owned(n, kInf);
    std::vector<const Alternative*> any_choice(n, nullptr), owned_choice(n, nullptr);
    for (std::uint32_t c = 0; c < classes_.size(); ++c)
      if (leaves_[c]) any[key(Request{c, hbm_})] = 0;
    auto is_slice = [&](const Alternative& alt) { return graph_.node(alt.node).op.kind == NodeKind::SliceH; };
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t k = 0; k < n; ++k) {
        for (const Alternative& alt : alternatives_[k]) {
          double c = 1;
          for (Request r : alt.operands) c += alt.concat ? owned[key(r)] : any[key(r)];
          if (c < any[k] && any[k] != 0) {
            any[k] = c;
            any_choice[k] = &alt;
            changed = true;
          }
          if (!is_slice(alt) && c < owned[k]) {
            owned[k] = c;
            owned_choice[k] = &alt;
            changed = true;
          }
        }
      }
    }
    std::vector<PiiNode> out;
    std::vector<std::uint8_t> concat_used;  // per node of `out`: fills a concat^H slot
    std::vector<std::size_t> memo[2];
    memo[0].assign(n, std::numeric_limits<std::size_t>::max());
    memo[1].assign(n, std::numeric_limits<std::size_t>::max());
    bool failed = false;
    std::function<std::size_t(Request, bool, bool)> make = [&](Request r, bool want_owned, bool fresh) -> std::size_t {
      const std::size_t k = key(r);
      auto& m = memo[want_owned ? 1 : 0];
      if (!fresh && m[k] != std::numeric_limits<std::size_t>::max()) return m[k];
      const Alternative* alt = want_owned ? owned_choice[k] : any_choice[k];
      const bool leaf = !want_owned && any[k] == 0;
      if ((!alt && !leaf) || failed || out.size() > 100'000) {
        failed = true;
        return 0;
      }
      PiiNode p;
      const egraph::Id cls = classes_[r.cls];
      p.eclass = cls;
      p.buffer = r.buffer;
      p.type = graph_.data(cls).type;
      if (leaf) {
        const Leaf& l = *leaves_[r.cls];
        p.kind = l.kind;
        p.index = l.index;
        if (l.node != egraph::kNoId) p.op = graph_.node(l.node).op;
        else p.op = TensorOp{NodeKind::Constant, hlo::Opcode::Constant, 0};
      } else {
        const auto view = graph_.node(alt->node);
        const NodeAttributes& a = context_.attributes_of(view.op);
        p.op = view.op;
        p.index = a.index;
        switch (view.op.kind) {
          case NodeKind::Pii:
            p.kind = PiiNodeKind::Pii;
            p.alpha = a.alpha;
            break;
          case NodeKind::SliceH:
            p.kind = PiiNodeKind::SliceH;
            p.slice = a.slice;
            break;
          default:
            p.kind = PiiNodeKind::ConcatH;
            p.dimension = a.dimensions.empty() ? -1 : a.dimensions[0];
            break;
        }
        for (Request o : alt->operands) {
          std::size_t node = make(o, alt->concat, false);
          if (alt->concat) {
            concat_used.resize(out.size(), 0);
            if (!failed && concat_used[node]) node = make(o, true, true);
            concat_used.resize(out.size(), 0);
            if (!failed) concat_used[node] = 1;
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
    for (Request r : root_requests_) {
      roots.push_back(make(r, true, false));
      if (failed) return std::nullopt;
    }
    return PiiGraph(std::move(out), roots);
  }

  std::size_t states_visited() const { return states_; }

  // Why there is no pii graph (empty when every root can reach HBM): for each root that cannot
  // be produced in HBM, the first classes on the way up from the kernel's inputs that no
  // instruction produces in any buffer, i.e. classes with an operator e-node whose operands can
  // all be produced somewhere while the operation itself cannot (breadth-first from the root,
  // at most `max_blockers` per root, computations before data movement). E.g. "root 0 (u8[16384]) cannot be produced in d0; no
  // instruction computes: u8[64,64,4] reshape(u8[16384]) [class 1]".
  static bool is_data_movement(hlo::Opcode op) {
    switch (op) {
      case hlo::Opcode::Reshape:
      case hlo::Opcode::Transpose:
      case hlo::Opcode::Slice:
      case hlo::Opcode::BitcastConvert:
      case hlo::Opcode::Concatenate:
      case hlo::Opcode::Broadcast: return true;
      default: return false;
    }
  }

  std::string explain_unmet_roots(std::size_t max_blockers = 4) const {
    std::string out;
    const auto somewhere = [&](std::uint32_t c) {
      for (std::size_t b = 0; b < buffers_; ++b)
        if (producible_[key(Request{c, static_cast<int>(b)})]) return true;
      return false;
    };
    for (std::size_t r = 0; r < root_requests_.size(); ++r) {
      const Request root = root_requests_[r];
      if (producible_[key(root)]) continue;
      if (!out.empty()) out += '\n';
      out += fmt::format("root {} ({}) cannot be produced in {}", r, to_string(graph_.data(classes_[root.cls]).type),
                         context_.isa.buffers[static_cast<std::size_t>(hbm_)].name);
      std::vector<std::uint8_t> visited(classes_.size(), 0);
      std::vector<std::uint32_t> queue{root.cls};
      visited[root.cls] = 1;
      // Computations are listed before data movement: a reshape of an input that no instruction
      // performs is usually a consequence, the operation ISA lacks is the cause.
      std::vector<std::string> computations, movements;
      for (std::size_t q = 0; q < queue.size() && q < 4096 && computations.size() < max_blockers; ++q) {
        const std::uint32_t c = queue[q];
        if (somewhere(c)) continue;  // producible, just not in the buffer its user needs
        std::string computation, movement;
        for (egraph::Id n : graph_.eclass(classes_[c]).nodes) {
          const auto view = graph_.node(n);
          if (view.op.kind != NodeKind::Operator) continue;
          bool operands_ready = true;
          std::vector<std::string> operand_types;
          for (egraph::Id child : view.children) {
            const std::uint32_t d = dense(graph_.find(child));
            operand_types.push_back(to_string(graph_.data(classes_[d]).type));
            if (!somewhere(d)) {
              operands_ready = false;
              if (!visited[d]) {
                visited[d] = 1;
                queue.push_back(d);
              }
            }
          }
          if (!operands_ready) continue;
          std::string& text = is_data_movement(view.op.opcode) ? movement : computation;
          if (text.empty())
            text = fmt::format("{} {}({}) [class {}]", to_string(graph_.data(classes_[c]).type), hlo::opcode_name(view.op.opcode),
                               fmt::join(operand_types, ", "), classes_[c]);
        }
        if (!computation.empty()) computations.push_back(std::move(computation));
        else if (!movement.empty()) movements.push_back(std::move(movement));
      }
      std::vector<std::string> blockers = std::move(computations);
      for (std::size_t k = 0; blockers.size() < max_blockers && k < movements.size(); ++k) blockers.push_back(movements[k]);
      if (!blockers.empty()) out += fmt::format("; no instruction computes: {}", fmt::join(blockers, "; "));
    }
    return out;
  }

  // Some root cannot be produced although a computed value behind it can: the search from the
  // unmet roots (as explain_unmet_roots) meets a byte view, bitcast-convert to u8, of a
  // producible value of another type. Splitting the output into smaller byte pieces may let
  // a store write it (GroupExplorer retries with a deeper split only then).
  bool unmet_byte_view_of_producible_value() const {
    const auto somewhere = [&](std::uint32_t c) {
      for (std::size_t b = 0; b < buffers_; ++b)
        if (producible_[key(Request{c, static_cast<int>(b)})]) return true;
      return false;
    };
    std::vector<std::uint8_t> visited(classes_.size(), 0);
    std::vector<std::uint32_t> queue;
    for (const Request root : root_requests_)
      if (!producible_[key(root)] && !visited[root.cls]) {
        visited[root.cls] = 1;
        queue.push_back(root.cls);
      }
    for (std::size_t q = 0; q < queue.size() && q < 4096; ++q) {
      const std::uint32_t c = queue[q];
      if (somewhere(c)) continue;
      for (egraph::Id n : graph_.eclass(classes_[c]).nodes) {
        const auto view = graph_.node(n);
        if (view.op.kind != NodeKind::Operator) continue;
        for (egraph::Id child : view.children) {
          const std::uint32_t d = dense(graph_.find(child));
          if (view.op.opcode == hlo::Opcode::BitcastConvert && graph_.data(classes_[c]).type.dtype == DType::u8 &&
              graph_.data(classes_[d]).type.dtype != DType::u8 && somewhere(d))
            return true;
          if (!somewhere(d) && !visited[d]) {
            visited[d] = 1;
            queue.push_back(d);
          }
        }
      }
    }
    return false;
  }

 private:
  struct Request {
    std::uint32_t cls = 0;  // dense class index
    int buffer = 0;
  };
  // An instruction e-node usable for one request: its node and its operand requests.
  struct Alternative {
    egraph::Id node = egraph::kNoId;
    std::vector<Request> operands;
    bool concat = false;  // a concat^H: its operands are placed side by side
  };
  struct Leaf {
    PiiNodeKind kind = PiiNodeKind::Input;
    egraph::Id node = egraph::kNoId;  // the Input/Constant e-node, if any
    std::int64_t index = -1;
  };

  // ---- precomputation ----------------------------------------------------------------------

  std::size_t key(Request r) const { return static_cast<std::size_t>(r.cls) * buffers_ + static_cast<std::size_t>(r.buffer); }

  std::uint32_t dense(egraph::Id canonical) const {
    if (canonical >= dense_.size() || dense_[canonical] == kNoDense)
      throw Error(ErrorKind::Internal, fmt::format("extract: class {} is not in the e-graph", canonical));
    return dense_[canonical];
  }

  void index_classes() {
    const auto ids = graph_.classes();
    classes_.assign(ids.begin(), ids.end());
    dense_.assign(graph_.num_ids(), kNoDense);
    for (std::size_t i = 0; i < classes_.size(); ++i) dense_[classes_[i]] = static_cast<std::uint32_t>(i);
    alternatives_.assign(classes_.size() * buffers_, {});
    leaves_.assign(classes_.size(), std::nullopt);
    const isa::IsaView& isa = context_.isa;
    for (std::size_t i = 0; i < classes_.size(); ++i) {
      const auto& cls = graph_.eclass(classes_[i]);
      std::optional<Leaf> input, constant, undefined;
      for (egraph::Id n : cls.nodes) {
        const auto view = graph_.node(n);
        const NodeAttributes& a = context_.attributes_of(view.op);
        Alternative alt{n, {}};
        int out = -1;
        switch (view.op.kind) {
          case NodeKind::Operator: continue;
          case NodeKind::Input:
            if (!input) input = Leaf{PiiNodeKind::Input, n, a.index};
            continue;
          case NodeKind::Constant:
            if (!constant) constant = Leaf{PiiNodeKind::Constant, n, a.index};
            continue;
          case NodeKind::Undefined:  // a don't-care instruction input (isa_rules.hpp): a leaf in HBM
            if (!undefined) undefined = Leaf{PiiNodeKind::Undefined, n, -1};
            continue;
          case NodeKind::Pii: {
            if (a.index < 0 || static_cast<std::size_t>(a.index) >= isa.instructions.size()) continue;
            const isa::Instruction& inst = isa.instructions[static_cast<std::size_t>(a.index)];
            if (inst.outputs.empty() || inst.inputs.size() != view.children.size()) continue;
            out = isa.buffer_index(inst.outputs[0].buffer);
            bool ok = out >= 0;
            for (std::size_t k = 0; k < view.children.size() && ok; ++k) {
              const int in = isa.buffer_index(inst.inputs[k].buffer);
              ok = in >= 0;
              alt.operands.push_back(Request{dense(graph_.find(view.children[k])), in});
            }
            if (!ok) continue;
            break;
          }
          case NodeKind::SliceH:
          case NodeKind::ConcatH:
            if (a.index < 0 || static_cast<std::size_t>(a.index) >= buffers_) continue;
            out = static_cast<int>(a.index);
            alt.concat = view.op.kind == NodeKind::ConcatH;
            for (egraph::Id child : view.children) alt.operands.push_back(Request{dense(graph_.find(child)), out});
            break;
        }
        alternatives_[key(Request{static_cast<std::uint32_t>(i), out})].push_back(std::move(alt));
      }
      if (input) {
        leaves_[i] = input;
      } else if (cls.data.is_constant) {
        Leaf leaf = constant ? *constant : Leaf{PiiNodeKind::Constant, egraph::kNoId, -1};
        if (!constant && options_.fold_constant) leaf.index = options_.fold_constant(classes_[i]);
        leaves_[i] = leaf;
      } else if (undefined) {
        leaves_[i] = undefined;
      }
    }
  }

  bool is_leaf_request(Request r) const { return r.buffer == hbm_ && leaves_[r.cls].has_value(); }

  // Least fixed point of "can produce": leaves in HBM, then any alternative whose operand
  // requests can all be produced. Alternatives that can never be completed are dropped.
  void compute_producible() {
    producible_.assign(classes_.size() * buffers_, 0);
    for (std::uint32_t c = 0; c < classes_.size(); ++c)
      if (leaves_[c]) producible_[key(Request{c, hbm_})] = 1;
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t k = 0; k < alternatives_.size(); ++k) {
        if (producible_[k]) continue;
        for (const Alternative& alt : alternatives_[k]) {
          if (std::all_of(alt.operands.begin(), alt.operands.end(), [&](Request r) { return producible_[key(r)] != 0; })) {
            producible_[k] = 1;
            changed = true;
            break;
          }
        }
      }
    }
    for (auto& alts : alternatives_)
      std::erase_if(alts, [&](const Alternative& alt) {
        return !std::all_of(alt.operands.begin(), alt.operands.end(), [&](Request r) { return producible_[key(r)] != 0; });
      });
  }

  // A lower bound on a standalone graph for each request (no nodes to share yet): a node plus
  // its operands' graphs, which hold at least one node per distinct non-leaf operand request
  // and at least as many as the largest operand's bound. Greatest fixed point from "unreachable".
  void compute_min_sizes() {
    min_size_.assign(classes_.size() * buffers_, kUnreachable);
    for (std::uint32_t c = 0; c < classes_.size(); ++c)
      if (leaves_[c]) min_size_[key(Request{c, hbm_})] = 0;
    std::vector<std::size_t> distinct;
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t k = 0; k < alternatives_.size(); ++k) {
        if (min_size_[k] == 0) continue;  // leaves stay leaves
        for (const Alternative& alt : alternatives_[k]) {
          std::size_t largest = 0;
          distinct.clear();
          bool reachable = true;
          for (Request r : alt.operands) {
            const std::size_t m = min_size_[key(r)];
            if (m == kUnreachable) {
              reachable = false;
              break;
            }
            largest = std::max(largest, m);
            if (!is_leaf_request(r)) distinct.push_back(key(r));
          }
          if (!reachable) continue;
          std::sort(distinct.begin(), distinct.end());
          const std::size_t count = static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
          const std::size_t bound = 1 + std::max(largest, count);
          if (bound < min_size_[k]) {
            min_size_[k] = bound;
            changed = true;
          }
        }
      }
    }
  }

  // ---- the search ----------------------------------------------------------------------------

  // A node of the graph under construction.
  struct WorkNode {
    Request request;
    const Alternative* alternative = nullptr;  // null for leaves
    std::vector<int> operands;                 // node indices; -1 while pending
    int creator = -1;                          // the node whose operand created it; -1: a root
    std::size_t pending = 0;                   // operands not yet finished
    std::size_t concat_uses = 0;               // concat^H operand slots it fills (at most 1)
    bool finished = false;
  };
  // An operand position waiting for a node: operand `operand` of node `parent` (-1: root).
  struct Slot {
    int parent = -1;
    std::size_t operand = 0;
    Request request;
  };
  struct Option {
    enum Kind : std::uint8_t { Share, Fresh, LeafNode } kind = Share;
    int node = -1;                             // Share: the finished node to reuse
    const Alternative* alternative = nullptr;  // Fresh
  };
  struct Frame {
    Slot slot;
    std::vector<Option> options;
    std::size_t next = 0;
    bool applied = false;
    // Undo information for the applied option.
    bool created = false;
    bool duplicate = false;
    bool counted = false;
    std::size_t pushed = 0;
    int concat_use = -1;  // the node whose concat_uses the option incremented
    std::vector<int> decremented;
    std::vector<int> finished;
  };

  void start_search() {
    if (root_requests_.empty()) throw Error(ErrorKind::Internal, "extract: no roots");
    for (Request r : root_requests_)
      if (!producible_[key(r)]) {  // some root cannot reach HBM: no pii graph at all
        finished_ = true;
        exhaustive_ = true;
        return;
      }
    std::size_t first = 0;
    std::vector<std::size_t> distinct;
    for (Request r : root_requests_) {
      first = std::max(first, min_size_[key(r)]);
      if (!is_leaf_request(r)) distinct.push_back(key(r));
    }
    std::sort(distinct.begin(), distinct.end());
    first = std::max(first, static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin()));
    if (first > options_.max_size) {
      finished_ = true;
      exhaustive_ = false;
      return;
    }
    target_size_ = first;
    target_duplicates_ = 0;
    nodes_of_request_.assign(classes_.size() * buffers_, {});
    reset_level();
  }

  void reset_level() {
    nodes_.clear();
    frames_.clear();
    pending_.clear();
    root_nodes_.assign(root_requests_.size(), -1);
    size_ = 0;
    duplicates_ = 0;
    for (auto& v : nodes_of_request_) v.clear();
    for (std::size_t i = root_requests_.size(); i-- > 0;) pending_.push_back(Slot{-1, i, root_requests_[i]});
    descend_ = true;
    size_pruned_ = false;
    duplicates_pruned_ = false;
  }

  void advance_level() {
    if (duplicates_pruned_ && target_duplicates_ < target_size_) {
      ++target_duplicates_;  // the same size, with one more duplicated request
      reset_level();
      return;
    }
    if (!size_pruned_) {  // nothing bigger exists at all
      finished_ = true;
      exhaustive_ = true;
      return;
    }
    if (target_size_ >= options_.max_size) {
      finished_ = true;
      exhaustive_ = false;
      return;
    }
    ++target_size_;
    target_duplicates_ = 0;
    reset_level();
  }

  // Runs the depth-first search of the current level until it yields a new graph (returned) or
  // the level is exhausted (nullopt).
  std::optional<PiiGraph> step_level() {
    for (;;) {
      if (out_of_time()) {
        finished_ = true;
        exhaustive_ = false;
        timed_out_ = true;
        return std::nullopt;
      }
      if (descend_) {
        descend_ = false;
        ++states_;
        if (pending_.empty()) {
          if (size_ == target_size_ && duplicates_ == target_duplicates_) {
            PiiGraph g = build();
            if (seen_->insert(g)) return g;
          }
          continue;
        }
        Frame frame;
        frame.slot = pending_.back();
        pending_.pop_back();
        fill_options(frame);
        frames_.push_back(std::move(frame));
      }
      if (frames_.empty()) return std::nullopt;
      Frame& f = frames_.back();
      if (f.applied) undo(f);
      if (f.next >= f.options.size()) {
        pending_.push_back(f.slot);
        frames_.pop_back();
        continue;
      }
      apply(f, f.options[f.next++]);
      if (duplicates_ > target_duplicates_) {
        duplicates_pruned_ = true;
        continue;
      }
      if (size_ + new_nodes_bound() > target_size_) {
        size_pruned_ = true;
        continue;
      }
      descend_ = true;
    }
  }

  void fill_options(Frame& f) {
    const Request r = f.slot.request;
    // A root is never a leaf: phase 2 does not copy an input (or constant) to the output, so a
    // root whose class holds one (e.g. transpose(transpose(p0))) is produced by instructions.
    if (is_leaf_request(r) && f.slot.parent >= 0) {
      f.options.push_back(Option{Option::LeafNode, -1, nullptr});
      return;
    }
    // Sharing first: every finished node already built for this request. A concat^H places its
    // operands side by side, so a node already placed by one concat^H operand slot cannot fill
    // another (concat^H(x, x) has no allocation); a fresh node for the same request can.
    const bool concat_slot = is_concat_slot(f.slot);
    for (int n : nodes_of_request_[key(r)]) {
      const WorkNode& w = nodes_[static_cast<std::size_t>(n)];
      if (w.finished && w.alternative && !(concat_slot && w.concat_uses > 0)) f.options.push_back(Option{Option::Share, n, nullptr});
    }
    for (const Alternative& alt : alternatives_[key(r)]) f.options.push_back(Option{Option::Fresh, -1, &alt});
  }

  // Distinct non-leaf requests among the pending slots that have no node at all yet.
  std::size_t unmet_requests() {
    scratch_.clear();
    for (const Slot& s : pending_)
      if (!is_leaf_request(s.request) && nodes_of_request_[key(s.request)].empty()) scratch_.push_back(key(s.request));
    std::sort(scratch_.begin(), scratch_.end());
    return static_cast<std::size_t>(std::unique(scratch_.begin(), scratch_.end()) - scratch_.begin());
  }

  // A lower bound on the nodes the partial graph still has to build: the distinct unmet
  // requests, and for each of them the new nodes its own sub-graph needs given that any request
  // already holding a node costs nothing (under-estimates on cycles and past the depth/visit
  // caps keep it admissible).
  std::size_t new_nodes_bound() {
    std::size_t best = unmet_requests();
    if (best == 0) return 0;
    const std::size_t remaining = target_size_ - size_;
    if (best > remaining) return best;
    if (bound_stamp_.size() != nodes_of_request_.size()) {
      bound_stamp_.assign(nodes_of_request_.size(), 0);
      bound_memo_.assign(nodes_of_request_.size(), 0);
    }
    ++bound_epoch_;
    bound_visits_ = 0;
    const std::vector<std::size_t> unmet(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(best));
    for (std::size_t k : unmet) {
      best = std::max(best, sub_graph_bound(k, 0, remaining));
      if (best > remaining) break;
    }
    return best;
  }

  std::size_t sub_graph_bound(std::size_t k, std::size_t depth, std::size_t remaining) {
    if (!nodes_of_request_[k].empty()) return 0;
    if (bound_stamp_[k] == bound_epoch_) return bound_memo_[k];  // 0 while in progress (a cycle)
    bound_stamp_[k] = bound_epoch_;
    bound_memo_[k] = 0;
    if (depth > std::min<std::size_t>(remaining, kBoundDepth) || ++bound_visits_ > kBoundVisits || out_of_time())
      return bound_memo_[k] = 1;  // admissible; after the deadline the search stops at its next step anyway
    std::size_t value = kUnreachable;
    std::vector<std::size_t> children;
    for (const Alternative& alt : alternatives_[k]) {
      children.clear();
      std::size_t largest = 0;
      for (Request r : alt.operands) {
        if (is_leaf_request(r)) continue;
        const std::size_t child = key(r);
        if (nodes_of_request_[child].empty()) children.push_back(child);
        largest = std::max(largest, sub_graph_bound(child, depth + 1, remaining));
      }
      std::sort(children.begin(), children.end());
      const std::size_t count = static_cast<std::size_t>(std::unique(children.begin(), children.end()) - children.begin());
      value = std::min(value, 1 + std::max(largest, count));
      if (value == 1) break;
    }
    if (value == kUnreachable) value = 1;  // unreachable requests are filtered; stay admissible anyway
    return bound_memo_[k] = value;
  }

  // One unit of search work (a DFS step or a bound visit); reads the clock every
  // kDeadlineStride units so the check stays cheap. Sticky once the deadline has passed.
  bool out_of_time() {
    if (expired_) return true;
    if (options_.deadline == std::chrono::steady_clock::time_point::max() || ++ticks_ % kDeadlineStride != 0) return false;
    expired_ = std::chrono::steady_clock::now() >= options_.deadline;
    return expired_;
  }

  bool is_concat_slot(const Slot& slot) const {
    return slot.parent >= 0 && nodes_[static_cast<std::size_t>(slot.parent)].alternative->concat;
  }

  void link(const Slot& slot, int node) {
    if (slot.parent < 0)
      root_nodes_[slot.operand] = node;
    else
      nodes_[static_cast<std::size_t>(slot.parent)].operands[slot.operand] = node;
  }

  // `node` is finished: its creator (if the slot filled is its creator's) has one operand less to wait for.
  void operand_done(Frame& f, int parent) {
    while (parent >= 0) {
      WorkNode& p = nodes_[static_cast<std::size_t>(parent)];
      --p.pending;
      f.decremented.push_back(parent);
      if (p.pending != 0) return;
      p.finished = true;
      f.finished.push_back(parent);
      parent = p.creator;
    }
  }

  void apply(Frame& f, const Option& o) {
    f.applied = true;
    f.created = f.duplicate = f.counted = false;
    f.pushed = 0;
    f.concat_use = -1;
    f.decremented.clear();
    f.finished.clear();
    const Request r = f.slot.request;
    auto& same = nodes_of_request_[key(r)];
    int target = o.node;
    if (o.kind == Option::LeafNode) {
      // One leaf per request; a root may already hold an instruction node for it.
      const auto leaf = std::find_if(same.begin(), same.end(), [&](int n) { return !nodes_[static_cast<std::size_t>(n)].alternative; });
      if (leaf != same.end()) {
        target = *leaf;
      } else {
        WorkNode node;
        node.request = r;
        node.finished = true;
        nodes_.push_back(std::move(node));
        same.push_back(static_cast<int>(nodes_.size() - 1));
        f.created = true;
        target = same.back();
      }
    } else if (o.kind == Option::Fresh) {
      WorkNode node;
      node.request = r;
      node.alternative = o.alternative;
      node.operands.assign(o.alternative->operands.size(), -1);
      node.creator = f.slot.parent;
      node.pending = o.alternative->operands.size();
      node.finished = node.pending == 0;
      nodes_.push_back(std::move(node));
      target = static_cast<int>(nodes_.size() - 1);
      f.duplicate = !same.empty();
      duplicates_ += f.duplicate ? 1 : 0;
      same.push_back(target);
      f.created = f.counted = true;
      ++size_;
      for (std::size_t k = o.alternative->operands.size(); k-- > 0;)
        pending_.push_back(Slot{target, k, o.alternative->operands[k]});
      f.pushed = o.alternative->operands.size();
    }
    link(f.slot, target);
    if (o.kind != Option::LeafNode && is_concat_slot(f.slot)) {
      ++nodes_[static_cast<std::size_t>(target)].concat_uses;
      f.concat_use = target;
    }
    if (nodes_[static_cast<std::size_t>(target)].finished) {
      if (o.kind == Option::Fresh) f.finished.push_back(target);
      operand_done(f, f.slot.parent);
    }
  }

  void undo(Frame& f) {
    f.applied = false;
    for (int n : f.finished) nodes_[static_cast<std::size_t>(n)].finished = false;
    for (int n : f.decremented) ++nodes_[static_cast<std::size_t>(n)].pending;
    if (f.concat_use >= 0) --nodes_[static_cast<std::size_t>(f.concat_use)].concat_uses;
    // A fresh node with no operands was marked finished above; leaves are always finished.
    link(f.slot, -1);
    pending_.resize(pending_.size() - f.pushed);
    if (f.created) {
      nodes_of_request_[key(f.slot.request)].pop_back();
      nodes_.pop_back();
    }
    if (f.counted) --size_;
    if (f.duplicate) --duplicates_;
  }

  PiiGraph build() const {
    std::vector<PiiNode> out;
    out.reserve(nodes_.size());
    for (const WorkNode& w : nodes_) {
      PiiNode p;
      const egraph::Id cls = classes_[w.request.cls];
      p.eclass = cls;
      p.buffer = w.request.buffer;
      p.type = graph_.data(cls).type;
      if (!w.alternative) {
        const Leaf& leaf = *leaves_[w.request.cls];
        p.kind = leaf.kind;
        p.index = leaf.index;
        if (leaf.node != egraph::kNoId) p.op = graph_.node(leaf.node).op;
        else p.op = TensorOp{NodeKind::Constant, hlo::Opcode::Constant, 0};
      } else {
        const auto view = graph_.node(w.alternative->node);
        const NodeAttributes& a = context_.attributes_of(view.op);
        p.op = view.op;
        p.index = a.index;
        switch (view.op.kind) {
          case NodeKind::Pii:
            p.kind = PiiNodeKind::Pii;
            p.alpha = a.alpha;
            break;
          case NodeKind::SliceH:
            p.kind = PiiNodeKind::SliceH;
            p.slice = a.slice;
            break;
          default:
            p.kind = PiiNodeKind::ConcatH;
            p.dimension = a.dimensions.empty() ? -1 : a.dimensions[0];
            break;
        }
      }
      for (int o : w.operands) p.operands.push_back(static_cast<std::size_t>(o));
      out.push_back(std::move(p));
    }
    std::vector<std::size_t> roots;
    for (int r : root_nodes_) roots.push_back(static_cast<std::size_t>(r));
    return PiiGraph(std::move(out), roots);
  }

  static constexpr std::uint32_t kNoDense = std::numeric_limits<std::uint32_t>::max();

  const TensorGraph& graph_;
  const SelectionContext& context_;
  ExtractorOptions options_;
  PiiGraphSet own_seen_;
  PiiGraphSet* seen_;
  int hbm_ = 0;
  std::size_t buffers_ = 0;

  std::vector<egraph::Id> classes_;             // dense index -> canonical class id
  std::vector<std::uint32_t> dense_;            // canonical class id -> dense index
  std::vector<std::vector<Alternative>> alternatives_;  // per request key
  std::vector<std::optional<Leaf>> leaves_;     // per dense class
  std::vector<std::uint8_t> producible_;        // per request key
  std::vector<std::size_t> min_size_;           // per request key
  std::vector<Request> root_requests_;

  // Search state.
  std::vector<WorkNode> nodes_;
  std::vector<std::vector<int>> nodes_of_request_;  // per request key, creation order
  std::vector<Slot> pending_;
  std::vector<Frame> frames_;
  std::vector<int> root_nodes_;
  std::vector<std::size_t> scratch_;
  static constexpr std::size_t kBoundDepth = 512;
  static constexpr std::size_t kBoundVisits = 1 << 14;
  static constexpr std::size_t kDeadlineStride = 1024;
  std::size_t ticks_ = 0;
  bool expired_ = false;
  bool timed_out_ = false;
  std::vector<std::uint32_t> bound_stamp_;
  std::vector<std::size_t> bound_memo_;
  std::uint32_t bound_epoch_ = 0;
  std::size_t bound_visits_ = 0;
  std::size_t size_ = 0;
  std::size_t duplicates_ = 0;
  std::size_t target_size_ = 0;
  std::size_t target_duplicates_ = 0;
  std::size_t states_ = 0;
  bool descend_ = false;
  bool size_pruned_ = false;
  bool duplicates_pruned_ = false;
  bool finished_ = false;
  bool exhaustive_ = false;
};

}  // namespace act::select
