// The requests of pii-graph extraction (§5.3) over one clean e-graph, precomputed once.
//
// A *request* is (e-class, buffer): "a pii graph that leaves this class's value in this buffer".
// Extraction starts with every root class requested in HBM. A request is met by
//   - a leaf, when the buffer is HBM and the class holds a kernel Input or is constant
//     (TensorData::is_constant); leaves are the only choice there (App. B module 3), except
//     for a root, which is never a leaf (phase 2 does not copy inputs to outputs);
//   - an instruction e-node of the class whose output buffer is the requested one (an
//     *alternative*): a Pii node (its instruction's Out0 buffer) or a slice^H / concat^H /
//     overlay^H (its own buffer). Its operands become requests in the buffers the instruction reads. Operator
//     e-nodes never qualify.
// One class may be requested in several buffers and then contributes several nodes.
// Precomputed here: the alternatives per request, the leaf per class, "can produce class c in
// buffer b" (a least fixed point, so dead requests are never tried; alternatives that can never
// be completed are dropped), and a DAG-size lower bound per request. The greedy extractor
// (greedy.hpp), the enumeration (extractor.hpp) and the diagnosis (diagnosis.hpp) read them.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/egraph/id.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/tensor_language.hpp"
#include "act/select/pii_graph.hpp"

namespace act::select {

// The keys a fixed-point iteration over requests must evaluate again: those with an operand
// whose value changed since they were last evaluated. The iterations here sweep the keys in
// order, pass after pass, until a pass changes nothing; a key none of whose operands changed
// would compute what it computed last time, so sweeping only the marked keys, in the same
// order, makes the same updates in the same order (the same fixed point, and the same choices
// where a sweep keeps the first alternative to reach a value). On the 385-node Gemmini kernel the
// full sweeps were a fifth of the compile.
class DirtyKeys {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  // Every key in [0, n) marked.
  explicit DirtyKeys(std::size_t n = 0) { reset(n); }
  // Every key in [0, n) marked again, in the storage already held.
  void reset(std::size_t n) {
    words_.assign((n + 63) / 64, ~std::uint64_t{0});
    marked_ = n;
    if (n % 64 != 0 && !words_.empty()) words_.back() = (std::uint64_t{1} << (n % 64)) - 1;
  }
  bool any() const { return marked_ != 0; }
  void mark(std::size_t k) {
    std::uint64_t& w = words_[k / 64];
    const std::uint64_t bit = std::uint64_t{1} << (k % 64);
    marked_ += (w & bit) ? 0 : 1;
    w |= bit;
  }
  void clear(std::size_t k) {
    std::uint64_t& w = words_[k / 64];
    const std::uint64_t bit = std::uint64_t{1} << (k % 64);
    marked_ -= (w & bit) ? 1 : 0;
    w &= ~bit;
  }
  // The first marked key >= from, or npos.
  std::size_t next(std::size_t from) const {
    std::size_t i = from / 64;
    if (i >= words_.size()) return npos;
    std::uint64_t w = words_[i] & (~std::uint64_t{0} << (from % 64));
    for (;;) {
      if (w != 0) return i * 64 + static_cast<std::size_t>(std::countr_zero(w));
      if (++i >= words_.size()) return npos;
      w = words_[i];
    }
  }

 private:
  std::vector<std::uint64_t> words_;
  std::size_t marked_ = 0;
};

class RequestGraph {
 public:
  static constexpr std::size_t kUnreachable = std::numeric_limits<std::size_t>::max();

  struct Request {
    std::uint32_t cls = 0;  // dense class index
    int buffer = 0;
  };
  // An instruction e-node usable for one request: its node and its operand requests (a run of
  // the request graph's one operand array).
  struct Alternative {
    egraph::Id node = egraph::kNoId;
    std::span<const Request> operands;
    bool concat = false;  // a concat^H or overlay^H: its operands are placed at fixed offsets
    std::uint32_t in_place = 0;  // bit k: the instruction reads operand k where it writes (isa::reads_in_place)
  };
  struct Leaf {
    PiiNodeKind kind = PiiNodeKind::Input;
    egraph::Id node = egraph::kNoId;  // the Input/Constant e-node, if any
    std::int64_t index = -1;
  };

  // `graph` must be clean (rebuilt) and outlive this. `fold_constant` gives the constant-pool id
  // of a constant class without a Constant e-node (unset: such leaves carry constant id -1).
  RequestGraph(const TensorGraph& graph, const SelectionContext& context, const std::vector<egraph::Id>& roots,
               std::function<std::int64_t(egraph::Id)> fold_constant = {})
      : graph_(graph), context_(context), fold_constant_(std::move(fold_constant)) {
    if (!graph.is_clean()) throw Error(ErrorKind::Internal, "extract: the e-graph must be rebuilt first");
    hbm_ = -1;
    for (std::size_t b = 0; b < context.isa.buffers.size(); ++b)
      if (context.isa.buffers[b].is_hbm && hbm_ < 0) hbm_ = static_cast<int>(b);
    if (hbm_ < 0) throw Error(ErrorKind::Isa, fmt::format("ISA {} has no HBM buffer", context.isa.name));
    buffers_ = context.isa.buffers.size();
    index_classes();
    for (egraph::Id r : roots) root_requests_.push_back(Request{dense(graph.find(r)), hbm_});
    index_users();
    compute_producible();
    compute_min_sizes();
  }
  // Keeps references into its own tables: not copyable.
  RequestGraph(const RequestGraph&) = delete;
  RequestGraph& operator=(const RequestGraph&) = delete;

  const TensorGraph& graph() const { return graph_; }
  const SelectionContext& context() const { return context_; }
  int hbm() const { return hbm_; }
  std::size_t buffers() const { return buffers_; }
  std::size_t class_count() const { return classes_.size(); }
  std::size_t request_count() const { return alternative_begin_.size() - 1; }
  egraph::Id eclass(std::uint32_t dense_class) const { return classes_[dense_class]; }
  const std::vector<Request>& roots() const { return root_requests_; }
  std::span<const Alternative> alternatives(std::size_t request_key) const {
    return {alternatives_.data() + alternative_begin_[request_key], alternatives_.data() + alternative_begin_[request_key + 1]};
  }
  const std::optional<Leaf>& leaf(std::uint32_t dense_class) const { return leaves_[dense_class]; }
  bool producible(std::size_t request_key) const { return producible_[request_key] != 0; }
  // A lower bound on the instruction nodes of a standalone graph for the request.
  std::size_t min_size(std::size_t request_key) const { return min_size_[request_key]; }
  // The requests with an alternative that has `request_key` among its operands (each once; it
  // may list a request whose alternatives with that operand were dropped as unproducible).
  std::span<const std::uint32_t> users(std::size_t request_key) const {
    return {users_.data() + user_begin_[request_key], users_.data() + user_begin_[request_key + 1]};
  }

  std::size_t key(Request r) const { return static_cast<std::size_t>(r.cls) * buffers_ + static_cast<std::size_t>(r.buffer); }

  std::uint32_t dense(egraph::Id canonical) const {
    if (canonical >= dense_.size() || dense_[canonical] == kNoDense)
      throw Error(ErrorKind::Internal, fmt::format("extract: class {} is not in the e-graph", canonical));
    return dense_[canonical];
  }

  bool is_leaf_request(Request r) const { return r.buffer == hbm_ && leaves_[r.cls].has_value(); }

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
  // The class can be produced in some buffer.
  bool producible_somewhere(std::uint32_t dense_class) const {
    for (std::size_t b = 0; b < buffers_; ++b)
      if (producible_[key(Request{dense_class, static_cast<int>(b)})]) return true;
    return false;
  }

  // The pii node meeting request `r` by `alternative`, or by the class's leaf when null; its
  // operands are the caller's to fill.
  PiiNode node(Request r, const Alternative* alternative) const {
    PiiNode p;
    const egraph::Id cls = classes_[r.cls];
    p.eclass = cls;
    p.buffer = r.buffer;
    p.type = graph_.data(cls).type;
    if (!alternative) {
      const Leaf& leaf = *leaves_[r.cls];
      p.kind = leaf.kind;
      p.index = leaf.index;
      return p;
    }
    const auto view = graph_.node(alternative->node);
    const NodeAttributes& a = context_.attributes_of(view.op);
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
      case NodeKind::OverlayH:
        p.kind = PiiNodeKind::OverlayH;
        p.offsets = a.dimensions;
        break;
      default:
        p.kind = PiiNodeKind::ConcatH;
        p.dimension = a.dimensions.empty() ? -1 : a.dimensions[0];
        break;
    }
    return p;
  }

 private:
  // Fills the alternatives, request after request (CSR: alternative_begin_), their operands
  // in one array, and the leaves. One flat array rather than a vector per request and per
  // alternative: the explorer builds a request graph every round, over 100k requests on
  // AMX's lane-blend kernels, and those small allocations were about a sixth of kernel 72's
  // page faults.
  void index_classes() {
    const auto ids = graph_.classes();
    classes_.assign(ids.begin(), ids.end());
    dense_.assign(graph_.num_ids(), kNoDense);
    for (std::size_t i = 0; i < classes_.size(); ++i) dense_[classes_[i]] = static_cast<std::uint32_t>(i);
    alternatives_.clear();
    operands_.clear();
    alternative_begin_.assign(classes_.size() * buffers_ + 1, 0);
    leaves_.assign(classes_.size(), std::nullopt);
    // A class's alternatives, by output buffer, before they join the flat array in key order;
    // operand runs are kept as offsets until operands_ stops growing.
    struct Pending {
      Alternative alt;
      std::size_t first_operand, operand_count;
    };
    std::vector<std::vector<Pending>> by_buffer(buffers_);
    std::vector<std::pair<std::size_t, std::size_t>> operand_runs;  // per alternative: first, count
    const isa::IsaView& isa = context_.isa;
    for (std::size_t i = 0; i < classes_.size(); ++i) {
      std::optional<Leaf> input, constant, undefined;
      for (auto& bucket : by_buffer) bucket.clear();
      for (egraph::Id n : graph_.class_nodes(classes_[i])) {
        const auto view = graph_.node(n);
        const NodeAttributes& a = context_.attributes_of(view.op);
        Alternative alt{n, {}};
        const std::size_t first_operand = operands_.size();
        int out = -1;
        switch (view.op.kind) {
          case NodeKind::Operator:
          case NodeKind::Embed: continue;
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
              operands_.push_back(Request{dense(graph_.find(view.children[k])), in});
              if (isa::reads_in_place(inst, k) && k < 32) alt.in_place |= std::uint32_t{1} << k;
            }
            if (!ok) {
              operands_.resize(first_operand);
              continue;
            }
            break;
          }
          case NodeKind::SliceH:
          case NodeKind::ConcatH:
          case NodeKind::OverlayH:
            if (a.index < 0 || static_cast<std::size_t>(a.index) >= buffers_) continue;
            out = static_cast<int>(a.index);
            alt.concat = view.op.kind != NodeKind::SliceH;
            for (egraph::Id child : view.children) operands_.push_back(Request{dense(graph_.find(child)), out});
            break;
        }
        by_buffer[static_cast<std::size_t>(out)].push_back(Pending{alt, first_operand, operands_.size() - first_operand});
      }
      for (std::size_t b = 0; b < buffers_; ++b) {
        for (const Pending& p : by_buffer[b]) {
          alternatives_.push_back(p.alt);
          operand_runs.emplace_back(p.first_operand, p.operand_count);
        }
        alternative_begin_[i * buffers_ + b + 1] = static_cast<std::uint32_t>(alternatives_.size());
      }
      if (input) {
        leaves_[i] = input;
      } else if (graph_.data(classes_[i]).is_constant) {
        Leaf leaf = constant ? *constant : Leaf{PiiNodeKind::Constant, egraph::kNoId, -1};
        if (!constant && fold_constant_) leaf.index = fold_constant_(classes_[i]);
        leaves_[i] = leaf;
      } else if (undefined) {
        leaves_[i] = undefined;
      }
    }
    for (std::size_t a = 0; a < alternatives_.size(); ++a)
      alternatives_[a].operands = std::span<const Request>(operands_.data() + operand_runs[a].first, operand_runs[a].second);
  }

  // users_: per operand request, the requests whose alternatives read it (CSR, each once).
  void index_users() {
    const std::size_t n = request_count();
    std::vector<std::uint32_t> last(n, std::numeric_limits<std::uint32_t>::max());  // last user counted, per operand
    user_begin_.assign(n + 1, 0);
    for (std::size_t k = 0; k < n; ++k)
      for (const Alternative& alt : alternatives(k))
        for (Request r : alt.operands)
          if (const std::size_t o = key(r); last[o] != k) {
            last[o] = static_cast<std::uint32_t>(k);
            ++user_begin_[o + 1];
          }
    for (std::size_t o = 0; o < n; ++o) user_begin_[o + 1] += user_begin_[o];
    users_.assign(user_begin_[n], 0);
    std::vector<std::uint32_t> fill(user_begin_.begin(), user_begin_.end() - 1);
    std::fill(last.begin(), last.end(), std::numeric_limits<std::uint32_t>::max());
    for (std::size_t k = 0; k < n; ++k)
      for (const Alternative& alt : alternatives(k))
        for (Request r : alt.operands)
          if (const std::size_t o = key(r); last[o] != k) {
            last[o] = static_cast<std::uint32_t>(k);
            users_[fill[o]++] = static_cast<std::uint32_t>(k);
          }
  }

  // Least fixed point of "can produce": leaves in HBM, then any alternative whose operand
  // requests can all be produced. Alternatives that can never be completed are dropped.
  void compute_producible() {
    producible_.assign(classes_.size() * buffers_, 0);
    for (std::uint32_t c = 0; c < classes_.size(); ++c)
      if (leaves_[c]) producible_[key(Request{c, hbm_})] = 1;
    DirtyKeys dirty(request_count());
    while (dirty.any()) {
      for (std::size_t k = dirty.next(0); k != DirtyKeys::npos; k = dirty.next(k + 1)) {
        dirty.clear(k);
        if (producible_[k]) continue;
        for (const Alternative& alt : alternatives(k)) {
          if (std::all_of(alt.operands.begin(), alt.operands.end(), [&](Request r) { return producible_[key(r)] != 0; })) {
            producible_[k] = 1;
            for (std::uint32_t u : users(k)) dirty.mark(u);
            break;
          }
        }
      }
    }
    // Compact in place, request after request (the operand array stays as it is).
    std::size_t kept = 0;
    for (std::size_t k = 0; k < request_count(); ++k) {
      const std::uint32_t begin = alternative_begin_[k], end = alternative_begin_[k + 1];
      alternative_begin_[k] = static_cast<std::uint32_t>(kept);
      for (std::uint32_t a = begin; a < end; ++a) {
        const Alternative& alt = alternatives_[a];
        if (std::all_of(alt.operands.begin(), alt.operands.end(), [&](Request r) { return producible_[key(r)] != 0; }))
          alternatives_[kept++] = alt;
      }
    }
    alternative_begin_.back() = static_cast<std::uint32_t>(kept);
    alternatives_.resize(kept);
  }

  // A lower bound on a standalone graph for each request (no nodes to share yet): a node plus
  // its operands' graphs, which hold at least one node per distinct non-leaf operand request
  // and at least as many as the largest operand's bound. Greatest fixed point from "unreachable".
  void compute_min_sizes() {
    min_size_.assign(classes_.size() * buffers_, kUnreachable);
    for (std::uint32_t c = 0; c < classes_.size(); ++c)
      if (leaves_[c]) min_size_[key(Request{c, hbm_})] = 0;
    std::vector<std::size_t> distinct;
    DirtyKeys dirty(request_count());
    while (dirty.any()) {
      for (std::size_t k = dirty.next(0); k != DirtyKeys::npos; k = dirty.next(k + 1)) {
        dirty.clear(k);
        if (min_size_[k] == 0) continue;  // leaves stay leaves
        for (const Alternative& alt : alternatives(k)) {
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
            for (std::uint32_t u : users(k)) dirty.mark(u);
          }
        }
      }
    }
  }

  static constexpr std::uint32_t kNoDense = std::numeric_limits<std::uint32_t>::max();

  const TensorGraph& graph_;
  const SelectionContext& context_;
  std::function<std::int64_t(egraph::Id)> fold_constant_;
  int hbm_ = 0;
  std::size_t buffers_ = 0;
  std::vector<egraph::Id> classes_;                     // dense index -> canonical class id
  std::vector<std::uint32_t> dense_;                    // canonical class id -> dense index
  std::vector<Alternative> alternatives_;               // request after request
  std::vector<std::uint32_t> alternative_begin_;        // per request key (+1): its run in alternatives_
  std::vector<Request> operands_;                       // the alternatives' operands
  std::vector<std::optional<Leaf>> leaves_;             // per dense class
  std::vector<std::uint8_t> producible_;                // per request key
  std::vector<std::size_t> min_size_;                   // per request key
  std::vector<std::uint32_t> user_begin_;               // per request key (+1): its run in users_
  std::vector<std::uint32_t> users_;                    // see users()
  std::vector<Request> root_requests_;
};

}  // namespace act::select
