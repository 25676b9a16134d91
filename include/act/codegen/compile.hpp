// act::Backend<Isa> and what a compile returns. The search itself (phase 1, phase 2, the
// candidate enumeration of §7) is codegen/backend.hpp, which this header includes unless the
// program compiles act once (core/linkage.hpp: ACT_SEPARATE_IMPLEMENTATION).
//
//   act::Backend<my::Isa> backend;                 // my::Isa is validated while this compiles
//   act::CompileResult r = backend.compile(kernel);  // the cheapest program found
//   act::codegen::compile_kernel(kernel, view, options)   // the same over a run-time IsaView
//
// Both inline `call` and `fusion` first (hlo/inline.hpp) and refuse at once a kernel no program
// can exist for (codegen/preflight.hpp: larger than the ISA's HBM, or a zero-element output).
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "act/alloc/csp.hpp"
#include "act/alloc/schedule.hpp"
#include "act/codegen/options.hpp"
#include "act/codegen/statistics.hpp"
#include "act/core/error.hpp"
#include "act/core/linkage.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"
#include "act/select/pii_graph.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"

namespace act::codegen {

// The chosen program and how it was found.
struct CompileResult {
  sim::Program program;
  double cost = 0;
  Statistics statistics;
  select::PiiGraph graph;        // the chosen pii graph
  alloc::Schedule schedule;
  alloc::Assignment assignment;
  sim::KernelImage image;        // where the kernel's inputs, outputs and constants live in HBM
  std::string dot;               // Graphviz of the chosen pii graph, allocated

  // How often `instruction` occurs in the program.
  std::size_t count(std::string_view instruction) const {
    return static_cast<std::size_t>(std::count_if(program.instructions.begin(), program.instructions.end(),
                                                  [&](const sim::ConcreteInstruction& ci) { return ci.name == instruction; }));
  }
};

// compile() without the exception: `result` is empty when no program was found, and `message`
// then says what was tried.
struct CompileOutcome {
  std::optional<CompileResult> result;
  std::string message;
  Statistics statistics;
  bool refused = false;  // no program can exist (codegen::preflight): nothing was searched
  explicit operator bool() const { return result.has_value(); }
};

// Fig. 12a for any ISA given at run time (see the header comment). Throws act::Error for a
// malformed ISA (isa::check) or a kernel act cannot lay out; no program is an empty outcome.
ACT_API CompileOutcome compile_kernel(const hlo::Module& kernel, const isa::IsaView& isa, const Options& options = {});

class CandidateStream;  // codegen/backend.hpp

// The backend for the accelerator described by `Isa` (a struct as in isa/qkv.hpp). Stateless:
// everything a compile builds lives in its CandidateStream.
template <class Isa>
class Backend {
  static_assert(isa::Validation<Isa>::ok, "invalid ISA description (see the notes above)");

 public:
  static constexpr isa::IsaView isa() { return isa::view<Isa>(); }

  // Every program for the kernel, lazily (range-for or next()). Throws Error(Unsupported) when
  // the kernel is outside the tensor language. Defined in codegen/backend.hpp (include it when
  // the program compiles act once).
  CandidateStream enumerate(const hlo::Module& kernel, const Options& options = {}) const;

  // The cheapest program found (by options.cost_model); Error(NoProgram) saying what was tried
  // when there is none within the budget.
  CompileResult compile(const hlo::Module& kernel, const Options& options = {}) const {
    CompileOutcome outcome = try_compile(kernel, options);
    if (!outcome) throw Error(ErrorKind::NoProgram, outcome.message);
    return std::move(*outcome.result);
  }

  CompileOutcome try_compile(const hlo::Module& kernel, const Options& options = {}) const {
    return compile_kernel(kernel, isa(), options);
  }
};

}  // namespace act::codegen

namespace act {
using codegen::Backend;
using codegen::CompileResult;
}  // namespace act

#if ACT_DEFINES_IMPLEMENTATION
#include "act/codegen/backend.hpp"
#endif
