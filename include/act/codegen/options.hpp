// Options of act::Backend<Isa>::compile (the code generator of §7).
//
// Termination (§7, Fig. 12a): candidates are enumerated until
//   - the enumeration is exhausted (every pii graph tried), or
//   - the termination heuristic fires: elapsed > patience x (time at which the best candidate
//     was found), patience = n = 2 by default, or the extraction has done patience x the work
//     that found the best (at least 2^20 steps more; backend.hpp), or
//   - `max_candidates` programs have been produced, or
//   - the overall `timeout` is reached (default 5 s).
// With `deterministic`, the heuristic counts candidates instead of seconds: it stops once
// candidates seen > patience x (index of the best candidate), so the output never depends on
// how fast the machine is. The timeout stays as a safety net only; if it fires in deterministic
// mode the statistics say so (stop reason "timeout") and the result may differ between runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

#include "act/alloc/allocate.hpp"
#include "act/isa/description.hpp"
#include "act/select/search/explorer.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::codegen {

// A cost model: lower is better. Any callable of this signature may replace the default
// (cost_model.hpp: the sum of the ISA header's per-instruction `cost` expressions).
using CostModel = std::function<double(const sim::Program&, const isa::IsaView&)>;

struct Options {
  std::chrono::duration<double> timeout{5.0};  // overall budget of one compile
  double patience = 2.0;                       // n of the termination heuristic
  std::size_t max_candidates = 0;              // programs produced at most; 0: no bound
  bool deterministic = false;                  // see the header comment
  CostModel cost_model;                        // empty: the ISA's declared costs
  select::ExplorerOptions explorer = default_explorer_options();  // phase 1 (modules 2-3)
  alloc::AllocateOptions allocate;             // phase 2 (modules 4-6); Z3 is deterministic by default
  sim::ImageOptions image;                     // the kernel's HBM image (region alignment, 64 bytes)

  static select::ExplorerOptions default_explorer_options() {
    select::ExplorerOptions o;
    o.runner.node_limit = 100'000;
    return o;
  }
};

}  // namespace act::codegen
