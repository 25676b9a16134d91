// Phase 1 per independent output group (output_groups.hpp): module 1 puts each group's outputs
// in an e-graph of its own, an Explorer saturates and extracts each one under its own backoff
// schedule and node limit, and the pii graphs of the groups are combined into pii graphs of the
// whole kernel (merge_pii_graphs). A kernel with one group is explored exactly as before.
// With several groups, each also has a SelectionContext and rule set of its own, so it is
// explored exactly as a kernel of its outputs alone would be (interning order steers matching
// order, and with it what the backoff schedule bans); its graphs are translated into the
// caller's context, which phase 2 reads.
//
// A group whose enumeration ends without any pii graph (not on a timeout) because a byte view
// of a value it can compute is missing (Extractor::unmet_byte_view_of_producible_value) is
// rebuilt with the output byte split one level deeper (add_kernel's deeper_split) while its
// pieces can still be halved, at most kMaxDeeperSplits times (an output module 1 did not split
// at all, on a row-unit ISA, is split on the first retry whatever ended the first attempt: a
// first e-graph that saturates without a graph is no proof while the output was offered only
// whole; on Gemmini, 24 of 123 sound-soak kernels "proved" impossible that way have programs
// that write the output a row at a time): a deeper split costs e-nodes most kernels do not need
// (K1 and K2 no longer compile within 5 s at one level more), but an output only ever written a
// row at a time needs pieces of one row.
// A retry after an e-graph cut short by its node or iteration limit gets a quarter of the
// node limit: when smaller output pieces are what was missing, the rebuilt e-graph finds the
// program while small (an f32 outer product stored in [16,16] tiles: 15,228 e-nodes); when an
// operation no instruction computes is (a transpose of a computed f32 value on AMX), it grows
// as the first did, and full-size retries spent the rest of the budget. A first retry of an
// unsplit output made for its pieces, not because a store missed on its size, gets half: on
// Gemmini such retries found their programs by 41,000 e-nodes, and those that found none grew
// to 47,000-76,000 over 2 s and ran into the 3 s timeout. (A QKV output of 3,072 rows, too
// large for one store, needs its retries' full limit.)
//
// When those retries are over, up to two more attempts (retry_last) rebuild the e-graph at the
// first retry's split and half the node limit: one with every intermediate dot of several rows
// also offered as its row pieces (a value an ISA computes only a row at a time, Gemmini's
// p0 . p1^T, can then be assembled in HBM and read whole by a later instruction), then one
// where the axioms that narrow wrapping integer arithmetic act too (SelectionContext::last_retry).
// A group with an intermediate dot that contracts an operand's rows, on an ISA where no
// instruction transposes (transposed_intermediate_dots), needs those pieces for sure: its
// attempts offer them from the first on, and only when all of those find nothing does the
// usual sequence follow, from a first attempt without them (usual_attempts). When such a group
// also narrows a product that a concatenate joins to other rows (module 1's
// concatenated_narrowed_products; the attempts then have the narrowing axioms, see below), they
// start at the first retry's output split: the product is a row piece of its own and the output
// is written piece by piece, and the attempt with the output whole grew to its node limit first
// (Gemmini compile-time kernel 39 of seed 1: 2.6 s, now 0.3 s). Only then: with a product
// narrowed as it is, the output whole gave shorter programs (kernel 5: 70 instructions, 91
// from a split start).
// Likewise a group that transposes a float which only lane blends build starts with the last
// retry's rules, at the full node limit (blends_transposes_first), and so does a group that
// narrows an integer product only the narrowing axioms compute (narrowing_first). When the
// blends' attempt finds nothing and the group transposes a computed value, it is made once
// more with each element of that value also offered as 4 bytes of its stored rows (add_kernel's
// element bytes, SelectionContext::element_bytes): the blends then broadcast it from HBM, where
// otherwise only its operands' elements could be broadcast (through broadcast-of-<op>, which
// the last retries leave out) or none. Offered in the first attempt already, they found
// longer programs first for 6 of the AMX compile-time set's 95 programs (kernel 27: 529
// instructions instead of 496) and slowed others (kernel 85: 121 -> 616 ms). The order is
// reversed only where pushing the transpose inward meets row pieces narrower than every
// instruction computing their operator (module 1's transposed_in_narrow_pieces, e.g.
// transpose(concat(a, b)) of f32[8,16] halves, whose rows become columns of 8 lanes): there the
// attempt without element bytes grew to its node limit first (compile-time kernels 9, 68, 81
// and 84: 0.6-1.5 s of 0.8-2.1 s), and the same programs now come in 0.16-0.59 s.
//
// Combinations come level by level: level L adds each group's L-th graph (0-based), and
// the new combinations are those that hold at least one graph added since the last batch of
// combinations, last group fastest; the first combination is every group's first graph. Within a
// level, the graphs a group's round offers without enumerating (Explorer::next_greedy) are
// taken first and their combinations produced before any group enumerates for its L-th graph:
// one group's enumeration can run until the deadline without a new graph (a 36-node greedy
// graph, and every graph of at most 32 nodes searched for the next one), and the program may
// be waiting in another group's ready greedy graph (QKV sound-mode kernel 191 of seed 4242).
// The groups that do enumerate take turns: each pass gives every group still without its
// L-th graph a slice of extraction work (kFirstSlice units, doubled each pass; Explorer::next
// pauses and resumes the search), and the graphs a pass yields are combined before the next
// pass. One group's extraction blow-up then no longer keeps the others' next graphs out of the
// combinations until the work budget ends the search (QKV kernel 75 of the compile-time set:
// a 3-node group's third graph waited behind a 20-node group's third enumeration). Until phase
// 2 has allocated some combination (note_allocated), the groups that already have their graph
// of the level also look for their next one in the level's later passes, and those graphs are
// combined with what the others have: when the first combinations cannot be allocated, the
// graph that can may be a cheap group's next one, while the level waits on another group's
// long enumeration (AMX: concat(p0, p0) beside p1 + p1, whose p1 + p1 group found no second
// graph in 1.3 billion steps of extraction, while the copy's third graph, three instructions,
// was the one missing). Once a combination is allocated, levels are taken strictly in turn as
// before, so the cost model keeps seeing the small graphs first. Every combination of graphs
// the groups yield is eventually produced, once, so completeness carries over from the
// explorers.
// Conversely, a group whose enumeration ends without any graph (its retries included) ends the
// whole search at once: no combination can exist, and when that group's e-graph saturated this
// is the proof that the kernel has no program under the rules. Groups still without a graph
// rewrite one round per pass (Explorer::next), so the other groups get their turn at this:
// an output whose e-graph saturates in a few rounds no longer waits behind another output's
// e-graph growing to its node limit.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "act/hlo/module.hpp"
#include "act/select/ir/constant_folding.hpp"
#include "act/select/search/explorer.hpp"
#include "act/select/init/kernel_graph.hpp"
#include "act/select/init/output_groups.hpp"
#include "act/select/pii_graph.hpp"
#include "act/select/rules/rule_set.hpp"
#include "act/select/ir/tensor_graph.hpp"

namespace act::select {

class GroupExplorer {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  static constexpr int kMaxDeeperSplits = 2;
  static constexpr std::size_t kCutRetryNodeShare = 4;    // a retry after a cut: node_limit / this
  static constexpr std::size_t kPieceRetryNodeShare = 2;  // a retry for an unsplit output's pieces: node_limit / this
  // Extraction work a group may spend on its graph of a level before the other groups get
  // theirs (doubled each pass; see the header comment).
  static constexpr std::uint64_t kFirstSlice = std::uint64_t{1} << 14;

  // A first attempt with the outputs whole, kept after a retry for their pieces so that, if the
  // retry finds nothing either, it can be diagnosed (unmet_roots) without being diagnosed
  // eagerly on every retry.
  struct WholeOutputAttempt {
    std::unique_ptr<SelectionContext> context;  // null: it ran in the caller's
    std::unique_ptr<TensorGraph> graph;
    RuleSet rules;                              // empty: it ran with the caller's
    std::unique_ptr<Explorer> explorer;
  };

  struct Group {
    explicit Group(SelectionContext* c) : context(c), graph(std::make_unique<TensorGraph>(TensorAnalysis(c))) {}
    std::unique_ptr<SelectionContext> own_context;  // several groups, or a retry: this group's
    SelectionContext* context;                      // own_context, or the caller's
    std::vector<std::size_t> outputs;               // kernel outputs this group computes
    std::unique_ptr<TensorGraph> graph;             // of the current attempt
    InitialGraph init;
    RuleSet own_rules;                              // built for own_context
    std::unique_ptr<Explorer> explorer;
    int deeper_split = 0;                           // add_kernel's, for the current attempt
    int split_retries = 0;                          // attempts rebuilt with the outputs split deeper
    bool after_cut = false;                         // the attempt before was cut short by a limit
    bool split_on_retry = false;                    // module 1 did not split the outputs at first
    bool retry_for_pieces = false;                  // ... and retried for its pieces, not a store's size
    bool intermediate_pieces = false;               // the attempt offers intermediate dots in row pieces
    bool narrowing = false;                         // ... and its rules narrow integer arithmetic
    bool pieces_first = false;                      // the attempts so far offer intermediate pieces from the first on
    bool blends_first = false;                      // ... or were last retries from the first on (lane blends)
    bool in_last_retries = false;                   // the current attempt was made by retry_last
    bool element_bytes = false;                     // module 1 offers transposed values' elements as bytes
    bool element_bytes_switched = false;            // the blends-first attempt was made again with them (or without)
    bool pieces_without_narrowing = false;          // the pieces-first attempts had the narrowing rules; now they have not
    bool usual_after_pieces = false;                // ... now the usual ones, without the last retries
    int last_retries = 0;                           // attempts made by retry_last
    std::unique_ptr<WholeOutputAttempt> whole_outputs;  // the first attempt, when retried for pieces
    std::vector<egraph::RunReport> earlier_reports; // rewriting runs of earlier attempts
    std::vector<PiiGraph> graphs;                   // yielded so far, in the caller's context
    bool done = false;                              // its explorer has nothing more
    bool yielded_any = false;                       // some attempt yielded a graph

    // Every rewriting run of every attempt, in order.
    std::vector<egraph::RunReport> reports() const {
      std::vector<egraph::RunReport> all = earlier_reports;
      if (explorer) all.insert(all.end(), explorer->reports().begin(), explorer->reports().end());
      return all;
    }
  };

  // Module 1 for every group (throws Error(Unsupported) as add_kernel does). `context` (with
  // its isa set) must outlive the explorer.
  GroupExplorer(SelectionContext& context, const hlo::Module& kernel) : context_(context), kernel_(kernel) {
    const auto outputs = independent_output_groups(kernel);
    multi_group_ = outputs.size() > 1;
    for (const auto& group_outputs : outputs) {
      std::unique_ptr<SelectionContext> own;
      if (outputs.size() > 1) {
        own = fresh_context(context);
      }
      auto g = std::make_unique<Group>(own ? own.get() : &context);
      g->own_context = std::move(own);
      g->outputs = group_outputs;
      build_graph(*g);
      // Module 1 counts the transposed intermediate dots; with some, the group starts over with
      // their pieces (see the header comment). Module 1 takes well under a millisecond.
      if (g->init.transposed_intermediate_dots > 0 && !rule_set_detail::some_instruction_transposes(context.isa)) {
        g->intermediate_pieces = g->pieces_first = true;
        // A product only the narrowing axioms compute needs them as surely as the pieces: the
        // pieces-first attempts then have both, as their narrowing retry had.
        if (narrowing_first(*g, context)) {
          if (!g->own_context) {
            g->own_context = fresh_context(context);
            g->context = g->own_context.get();
          }
          g->narrowing = true;
          g->context->last_retry = true;
        }
        g->context->intermediate_row_pieces = true;
        build_graph(*g);
        // A narrowed product that a concatenate joins to other rows is computed as a piece of
        // its own, and the output written piece by piece: those attempts start at the first
        // retry's split (see the header comment).
        if (g->narrowing && g->init.concatenated_narrowed_products > 0 && g->init.smallest_output_piece == 0) {
          g->deeper_split = 1;
          g->split_on_retry = true;
          g->context->row_piece_retry = true;
          build_graph(*g);
        }
      }
      if (!g->pieces_first && (blends_transposes_first(*g, context) || narrowing_first(*g, context))) {
        if (!g->own_context) {  // the first attempt's rules differ from the caller's
          g->own_context = fresh_context(context);
          g->context = g->own_context.get();
        }
        g->narrowing = g->blends_first = true;
        g->intermediate_pieces = g->init.intermediate_dot_rows > 0;
        g->context->last_retry = true;
        g->context->intermediate_row_pieces = g->intermediate_pieces;
        g->element_bytes = g->init.transposed_in_narrow_pieces > 0;
        g->context->element_bytes = g->element_bytes;
        build_graph(*g);
      }
      groups_.push_back(std::move(g));
    }
    output_count_ = groups_.front()->init.image.outputs.size();
  }
  GroupExplorer(const GroupExplorer&) = delete;
  GroupExplorer& operator=(const GroupExplorer&) = delete;

  // Creates the explorers (modules 2-3). `rules` were built by rule_set(context) and must
  // outlive this object; with several groups each builds the same rule set for its own
  // context (rule indices agree). A group whose options leave extractor.fold_constant unset
  // folds constants in its own e-graph.
  void start(const RuleSet& rules, const ExplorerOptions& options) {
    rules_ = &rules;
    options_ = options;
    for (auto& g : groups_) {
      if (g->own_context) g->own_rules = rule_set(*g->context);
      start_explorer(*g);
    }
  }

  // The next pii graph of the whole kernel not yielded before, or nullopt when the enumeration
  // is over or `until` passed (timed_out(); for good, as Explorer::next).
  std::optional<PiiGraph> next(TimePoint until = TimePoint::max()) {
    if (groups_.size() == 1) {
      Group& g = *groups_.front();
      std::optional<PiiGraph> graph = fetch(g, until);
      if (!graph) timed_out_ = g.explorer->timed_out();
      if (graph && g.context != &context_) return translate_pii_graph(*graph, g.context->constants, context_.constants);
      return graph;
    }
    while (!finished_) {
      if (advance()) return merged();
      if (!add_graphs(until)) return std::nullopt;
    }
    return std::nullopt;
  }

  bool timed_out() const { return timed_out_; }
  // Told by the caller when phase 2 allocated a graph this explorer yielded: from then on the
  // groups no longer look ahead for their next graphs (see the header comment).
  void note_allocated() { allocated_ = true; }
  // The group whose enumeration ended without any graph, and with it the search (several
  // groups only): what it proved, or the limit it stopped on, is the kernel's answer.
  std::optional<std::size_t> empty_group() const { return empty_group_; }
  std::size_t size() const { return groups_.size(); }
  const Group& group(std::size_t i) const { return *groups_.at(i); }
  const sim::KernelImage& image() const { return groups_.front()->init.image; }

  // Every group's unmet root requests (Explorer::unmet_roots), one group after another; only
  // the empty group's when one ended the search (the others' searches were left unfinished).
  // A group retried for its outputs' pieces is diagnosed on its first e-graph, with the outputs
  // whole: that names the kernel's own operations (the retry's e-graph is mostly pieces).
  std::string unmet_roots(std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max()) const {
    std::string out;
    for (std::size_t k = 0; k < groups_.size(); ++k) {
      const auto& g = groups_[k];
      if (!g->explorer || (empty_group_ && *empty_group_ != k)) continue;
      const std::string unmet = g->whole_outputs ? "with the outputs whole, " + g->whole_outputs->explorer->unmet_roots(until)
                                                 : g->explorer->unmet_roots(until);
      if (unmet.empty()) continue;
      if (!out.empty()) out += "\n";
      out += groups_.size() == 1 ? unmet : fmt::format("outputs {}: {}", fmt::join(g->outputs, ","), unmet);
    }
    return out;
  }

 private:
  // Module 1 for the group's outputs at its deeper_split, into a new e-graph.
  void build_graph(Group& g) {
    g.graph = std::make_unique<TensorGraph>(TensorAnalysis(g.context));
    g.init = add_kernel(*g.graph, *g.context, kernel_,
                        multi_group_ ? std::span<const std::size_t>(g.outputs) : std::span<const std::size_t>(),
                        g.deeper_split, g.intermediate_pieces);
    g.graph->rebuild();
  }

  void start_explorer(Group& g) {
    ExplorerOptions o = options_;
    // Pieces-first attempts with the narrowing rules stand in for the narrowing retry, which had
    // half the limit at the first retry's split even after a cut-short e-graph (with a quarter,
    // Gemmini sound-soak seed 4242 kernel 102 found no program).
    const bool narrowing_pieces = g.pieces_first && g.narrowing;
    if (g.in_last_retries || (g.after_cut && narrowing_pieces))
      o.runner.node_limit /= kPieceRetryNodeShare;
    else if (g.after_cut)
      o.runner.node_limit /= kCutRetryNodeShare;
    else if (g.retry_for_pieces)
      o.runner.node_limit /= kPieceRetryNodeShare;
    if (!o.extractor.fold_constant) {
      auto folder = std::make_shared<ConstantFolder>(*g.graph, *g.context);
      o.extractor.fold_constant = [folder](egraph::Id cls) { return (*folder)(cls); };
    }
    const RuleSet& group_rules = g.own_context ? g.own_rules : *rules_;
    g.explorer = std::make_unique<Explorer>(*g.graph, *g.context, g.init.roots, group_rules.rules, std::move(o));
  }

  // The group's next graph (nullopt with the explorer paused() when `slice` units of extraction
  // work were spent first). An enumeration that ends without any graph, and not on a timeout,
  // starts over with the output split one level deeper (see the header comment).
  std::optional<PiiGraph> fetch(Group& g, TimePoint until, std::uint64_t slice = 0) {
    for (;;) {
      std::optional<PiiGraph> graph = g.explorer->next(until, slice);
      if (graph) g.yielded_any = true;
      if (graph || g.explorer->paused() || g.yielded_any || g.explorer->timed_out()) return graph;
      if (g.blends_first && !g.element_bytes_switched && g.init.computed_transposed > 0) {
        g.element_bytes_switched = true;
        g.element_bytes = !g.element_bytes;
        g.earlier_reports.insert(g.earlier_reports.end(), g.explorer->reports().begin(), g.explorer->reports().end());
        restart(g);
        continue;
      }
      if (g.deeper_split >= kMaxDeeperSplits) {
        if (!retry_last(g)) return graph;
        continue;
      }
      // The retry of an e-graph cut short by its node or iteration limit gets a share of the
      // node limit (see the header comment).
      g.after_cut = !g.explorer->saturated();
      // An output not split at all (row-unit ISAs) is always split on a first retry: an
      // e-graph holding the output only whole proves nothing about programs that write it in
      // pieces (p0 . p1^T on Gemmini: 16 matmul8 of one column, each row stored alone). The
      // retry also offers an output joined by a concatenate piece by piece (two loop_ws writing
      // a 32-row output's halves). Deeper splits follow while pieces can be halved (store_rm
      // writes at most 128 of QKV's 64-wide rows, and holding 128 rows leaves no room for
      // gemm's operands).
      if (g.init.smallest_output_piece == 0) {
        g.split_on_retry = true;
        g.retry_for_pieces = !g.explorer->unmet_root_exceeds_a_store();
      } else if (g.init.smallest_output_piece < 32 || (!g.split_on_retry && !g.explorer->unmet_byte_view_of_producible_value())) {
        if (!retry_last(g)) return graph;
        continue;
      }
      g.earlier_reports.insert(g.earlier_reports.end(), g.explorer->reports().begin(), g.explorer->reports().end());
      if (g.retry_for_pieces && !g.whole_outputs)
        g.whole_outputs.reset(new WholeOutputAttempt{std::move(g.own_context), std::move(g.graph), std::move(g.own_rules),
                                                     std::move(g.explorer)});
      ++g.deeper_split;
      ++g.split_retries;
      restart(g);
    }
  }

  // A context of its own for a group or an attempt: the caller's ISA and HBM image, nothing else.
  static std::unique_ptr<SelectionContext> fresh_context(const SelectionContext& context) {
    auto own = std::make_unique<SelectionContext>();
    own->isa = context.isa;
    own->image = context.image;
    return own;
  }

  // Whether the group starts with the last retry's rules: it transposes a float (rank 2, one
  // that no other transpose undoes: InitialGraph::float_transposes_kept) on an ISA that builds
  // such transposes only from lane blends (axioms/transpose_by_lanes.hpp). The usual attempts
  // cannot compute such a transpose; they ended on their node limits first (a second or more
  // on the compile-time set) and the last retry got what time was left. Starting with it, at
  // the full node limit, and following with the usual sequence when it finds nothing
  // (usual_attempts): AMX sound soak 183 compiled instead of 179, in 21 s instead of 37; the
  // compile_time set's 31 programs with lane blends in 51-663 ms (base: 20 in 66 ms-2.5 s). K4,
  // whose 48-row product needs no blend, has no transpose to start with.
  static bool blends_transposes_first(const Group& g, const SelectionContext& context) {
    return g.init.float_transposes_kept > 0 && !context.isa.instructions.empty() &&
           !axiom_detail::types_transposed_by_lanes(context.isa).empty();
  }

  // Whether the group starts with the last retry's rules for its integer narrowing: it narrows
  // a product that only narrowing-convert-of-dot lets an instruction compute (module 1's
  // narrowed_products). The usual attempts cannot compute it and spent the time first: Gemmini
  // sound-soak kernel 46 of seed 4242 found its 10 instructions after 3.3-5.5 s, past the
  // soak's 3 s. As with the lane blends, the usual sequence follows when this finds nothing.
  static bool narrowing_first(const Group& g, const SelectionContext& context) {
    return g.init.narrowed_products > 0 && !context.isa.instructions.empty();
  }

  // A new attempt of the group at its current deeper_split, intermediate_pieces and narrowing.
  void restart(Group& g) {
    g.explorer.reset();
    // A fresh context too, so the new attempt interns (and matches) as a first one would.
    g.own_rules = RuleSet();
    g.own_context = fresh_context(context_);
    g.own_context->row_piece_retry = g.split_on_retry;
    g.own_context->last_retry = g.narrowing;
    g.own_context->intermediate_row_pieces = g.intermediate_pieces;
    g.own_context->element_bytes = g.element_bytes;
    g.context = g.own_context.get();
    g.own_rules = rule_set(*g.context);
    build_graph(g);
    start_explorer(g);
  }

  // The last retries, once the deeper output splits are over, at the first retry's output
  // split and half the node limit (with a deeper split or a quarter of the limit, 13 of the
  // Gemmini sound soak's kernels hit the limit before their programs). First, every
  // intermediate dot of several rows is also offered as its row pieces (add_kernel's
  // intermediate_pieces), so a value an ISA computes only a row at a time can be assembled in
  // HBM and loaded whole (Gemmini: p0 . (p0 . p0^T)). Then, for a kernel that narrows an
  // integer or transposes a float, the axioms that narrow wrapping integer arithmetic and the
  // one that builds a float transpose from lane blends act too (SelectionContext::last_retry:
  // the low byte of an s32 product is an s8 product; AMX's f32 transposes). Neither
  // on the earlier attempts, nor both in one: each costs e-nodes, and soak kernels that an
  // attempt without them compiles no longer found their programs within its node limit.
  // False when nothing is left to try.
  bool retry_last(Group& g) {
    if (g.usual_after_pieces) return false;  // the pieces-first attempts made them
    const bool pieces_next = !g.intermediate_pieces && !g.narrowing && g.init.intermediate_dot_rows > 0;
    const bool narrowing_next =
        !g.narrowing && !g.pieces_without_narrowing && (g.init.narrowing_converts > 0 || g.init.float_transposes > 0);
    if (!pieces_next && !narrowing_next) {
      // Pieces-first attempts that had the narrowing rules from the start are made once more
      // without them, as they were made before: the rules grow the e-graph, so a program that
      // needs only the pieces may lie past the node limit with them.
      if (g.pieces_first && g.narrowing && !g.pieces_without_narrowing) {
        g.earlier_reports.insert(g.earlier_reports.end(), g.explorer->reports().begin(), g.explorer->reports().end());
        g.pieces_without_narrowing = true;
        g.narrowing = false;
        g.deeper_split = 0;
        g.after_cut = g.split_on_retry = g.retry_for_pieces = false;
        restart(g);
        return true;
      }
      return (g.pieces_first || g.blends_first) && usual_attempts(g);
    }
    g.earlier_reports.insert(g.earlier_reports.end(), g.explorer->reports().begin(), g.explorer->reports().end());
    if (pieces_next) {
      g.intermediate_pieces = true;
    } else {
      g.narrowing = true;
      g.intermediate_pieces = g.init.intermediate_dot_rows > 0;
    }
    ++g.last_retries;
    g.in_last_retries = true;
    g.deeper_split = std::min(g.deeper_split, 1);
    restart(g);
    return true;
  }

  // After the attempts that offered intermediate pieces from the first on (see the
  // constructor): the usual sequence, from a first attempt without them. The pieces cost
  // e-nodes, and some kernels find their programs only without them (Gemmini sound-soak kernel
  // 79 of seed 4242).
  bool usual_attempts(Group& g) {
    g.earlier_reports.insert(g.earlier_reports.end(), g.explorer->reports().begin(), g.explorer->reports().end());
    g.pieces_first = g.blends_first = g.intermediate_pieces = g.narrowing = g.in_last_retries = g.element_bytes = false;
    g.after_cut = g.split_on_retry = g.retry_for_pieces = false;
    g.deeper_split = 0;
    g.usual_after_pieces = true;
    restart(g);
    return true;
  }

  std::vector<std::size_t> graph_counts() const {
    std::vector<std::size_t> counts;
    for (const auto& g : groups_) counts.push_back(g->graphs.size());
    return counts;
  }

  void add(Group& g, PiiGraph graph) {
    g.graphs.push_back(g.context == &context_ ? std::move(graph) : translate_pii_graph(graph, g.context->constants, context_.constants));
  }

  // Adds the current level's ready greedy graphs, or else the level's enumerated ones, and
  // queues the combinations they make (see the header comment); false (finished) when no
  // combination is left.
  bool add_graphs(TimePoint until) {
    if (timed_out_) return finish();
    for (;;) {
      const std::vector<std::size_t> before = graph_counts();
      if (!enumerating_) {
        enumerating_ = true;
        for (auto& g : groups_)
          if (!g->done && g->graphs.size() <= level_ && g->explorer->greedy_ready())
            if (std::optional<PiiGraph> graph = g->explorer->next_greedy()) add(*g, std::move(*graph));
        if (graph_counts() != before) return queue_combinations(before);
      }
      bool paused = false;
      // In a level's later passes (another group's search has paused), a group that has its
      // graph of the level looks for its next one, once every group has a graph to combine
      // it with (see the header comment).
      const bool look_ahead = slice_ > kFirstSlice && !allocated_ &&
                              std::none_of(groups_.begin(), groups_.end(), [](const auto& g) { return g->graphs.empty(); });
      for (auto& g : groups_) {
        if (g->done) continue;
        if (g->graphs.size() > level_ && !look_ahead) continue;
        if (std::optional<PiiGraph> graph = fetch(*g, until, slice_)) {
          add(*g, std::move(*graph));
          continue;
        }
        if (g->explorer->paused()) {
          paused = true;
          continue;
        }
        g->done = true;
        // The graphs the other groups gave this level are still combined (below); then the
        // search ends.
        if (g->explorer->timed_out()) {
          timed_out_ = true;
          break;
        }
        // A group whose enumeration is over without a single graph leaves no combination to
        // find: the search ends now, whatever the other groups might still yield.
        if (g->graphs.empty()) {
          empty_group_ = static_cast<std::size_t>(&g - groups_.data());
          return finish();
        }
      }
      if (paused && !timed_out_) {
        // Some group's search for its graph of this level goes on, with twice the work next
        // pass; the graphs the others gave are combined first.
        slice_ *= 2;
        const bool every_group_has_one =
            std::none_of(groups_.begin(), groups_.end(), [](const auto& g) { return g->graphs.empty(); });
        if (graph_counts() != before && every_group_has_one) return queue_combinations(before);
        continue;
      }
      enumerating_ = false;
      slice_ = kFirstSlice;
      const bool any_new = std::any_of(groups_.begin(), groups_.end(), [&](const auto& g) { return g->graphs.size() > level_; });
      ++level_;
      for (const auto& g : groups_)
        if (g->graphs.empty()) return finish();  // a group with no graph at all: no combination
      if (graph_counts() != before) return queue_combinations(before);
      if (!any_new || timed_out_) return finish();
    }
  }

  // Queues the combinations of the graphs yielded so far that hold one yielded after `before`.
  bool queue_combinations(std::vector<std::size_t> before) {
    before_ = std::move(before);
    after_ = graph_counts();
    choice_.assign(groups_.size(), 0);
    fresh_ = true;
    return true;
  }

  bool finish() {
    finished_ = true;
    return false;
  }

  // Steps the choice through the queued combinations, last group fastest.
  bool advance() {
    if (choice_.empty()) return false;
    for (;;) {
      if (fresh_) {
        fresh_ = false;
      } else {
        std::size_t k = groups_.size();
        while (k-- > 0) {
          if (choice_[k] + 1 < after_[k]) {
            ++choice_[k];
            break;
          }
          choice_[k] = 0;
        }
        if (k == static_cast<std::size_t>(-1)) {
          choice_.clear();
          return false;
        }
      }
      for (std::size_t k = 0; k < groups_.size(); ++k)
        if (choice_[k] >= before_[k]) return true;
    }
  }

  PiiGraph merged() const {
    std::vector<const PiiGraph*> parts;
    std::vector<std::vector<std::size_t>> outputs;
    for (std::size_t k = 0; k < groups_.size(); ++k) {
      parts.push_back(&groups_[k]->graphs[choice_[k]]);
      outputs.push_back(groups_[k]->outputs);
    }
    return merge_pii_graphs(parts, outputs, output_count_);
  }

  SelectionContext& context_;
  hlo::Module kernel_;  // a copy: module 1 runs again on a deeper split
  const RuleSet* rules_ = nullptr;
  ExplorerOptions options_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::size_t output_count_ = 0;
  bool multi_group_ = false;
  std::size_t level_ = 0;
  bool enumerating_ = false;         // the level's ready greedy graphs are taken
  std::uint64_t slice_ = kFirstSlice;  // extraction work per group and pass in this level
  bool fresh_ = false;
  std::vector<std::size_t> before_;  // graphs per group before the queued combinations' batch
  std::vector<std::size_t> after_;   // and after it
  std::vector<std::size_t> choice_;  // graph index per group; empty: no combination queued
  bool finished_ = false;
  bool timed_out_ = false;
  bool allocated_ = false;  // phase 2 allocated one of the combinations (note_allocated)
  std::optional<std::size_t> empty_group_;
};

}  // namespace act::select
