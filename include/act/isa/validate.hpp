// Validation of ISA descriptions, at compile time and at run time, by one constexpr function.
//
// Every use of an ISA type validates it while the code compiles: act::isa::view<Isa>() (and so
// act::Backend<Isa>, the testing helpers, act::isa::IsaList and act::cli::main<Isa>) fails to
// compile for a malformed description, naming the instruction and the problems. Put
//   ACT_VALIDATE_ISA(my::Isa);                // after the definition
// in the ISA header to see the errors at the definition, even before anything uses it.
//   act::isa::check(view);                    // run time: throws act::Error(ErrorKind::Isa,
//                                             //   "ISA 'x', instruction 'load_rm' (x.hpp:40): ...")
//   constexpr auto d = act::isa::diagnose<Isa>();   // the Diagnostic itself
//
// What is checked:
// - buffers: unique names, exactly one HBM buffer (1-D, no unit dims), positive sizes;
// - state registers: unique names;
// - per instruction: a unique name; alpha, beta and state names distinct; every SliceMap names
//   an existing buffer and has one start and one length per access dim; slice, constraint,
//   update and cost expressions parse and mention only declared names (cost: alpha only);
//   updates name declared state;
// - semantics: a well-formed `ENTRY <instruction name> { ... }` block, parsed into an outline by
//   hlo/semantics_outline.hpp (statements `[ROOT] %name = dtype[dims]{layout}? opcode(operands),
//   attr=value, ... [;]`, known opcodes plus TAIDL's reduce_add, operands defined before use), whose
//   backtick dims mention alpha only, with XLA's operand count per opcode, exactly one
//   `parameter(k)` per input, one ROOT, and a value `Out<k>` for each extra output k >= 1;
// - shapes (isa/check_shapes.hpp), for sample alpha values (every alpha = v for v in 1, 2, 3,
//   4, 8, ..., 128, keeping the samples that satisfy the constraints that mention alpha only).
//
// Messages speak in terms of the header: the instruction (and where its initializer ends), the
// statement quoted with its line within the semantics, the names that are declared when a name
// is not. Every problem of an instruction is reported at once where one does not hide the next
// (each attribute, slice, constraint, update and the cost separately; the semantics' first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "act/core/dtype.hpp"
#include "act/core/error.hpp"
#include "act/core/view.hpp"
#include "act/hlo/opcode.hpp"
#include "act/hlo/semantics_outline.hpp"
#include "act/hlo/shape_rules.hpp"
#include "act/isa/c_mapping.hpp"
#include "act/isa/check_c_mapping.hpp"
#include "act/isa/check_shapes.hpp"
#include "act/isa/description.hpp"
#include "act/isa/diagnostic.hpp"
#include "act/isa/expansion.hpp"
#include "act/sym/expr.hpp"

namespace act::isa {

namespace detail {

// ---- names in scope for an instruction's expressions

struct Scope {
  const Instruction* instruction = nullptr;
  View<StateRegister> state;

  constexpr bool is_alpha(std::string_view n) const {
    for (auto a : instruction->alpha)
      if (a == n) return true;
    return false;
  }
  constexpr bool is_beta(std::string_view n) const {
    for (auto b : instruction->beta)
      if (b == n) return true;
    return false;
  }
  constexpr bool is_state(std::string_view n) const {
    for (const auto& s : state)
      if (s.name == n) return true;
    return false;
  }
};

enum class Allowed { AlphaOnly, Attributes, AttributesAndState };

// What an expression is, for messages: "input 1 length expression", "constraint".
struct Label {
  std::string_view kind;
  std::size_t number = 0;  // printed after kind when kind is "input" or "output"
  std::string_view part;
};

constexpr Message& operator<<(Message& m, const Label& l) {
  m << l.kind;
  if (l.kind == "input" || l.kind == "output") m << " " << l.number;
  if (!l.part.empty()) m << " " << l.part;
  return m;
}

// " (did you mean 'x'? alpha: n; beta: addr)" -- the names an expression could have meant.
constexpr void known_names(Message& m, std::string_view id, const Scope& scope, Allowed allowed) {
  text::Closest closest(id);
  for (auto a : scope.instruction->alpha) closest.consider(a);
  if (allowed != Allowed::AlphaOnly)
    for (auto b : scope.instruction->beta) closest.consider(b);
  if (allowed == Allowed::AttributesAndState)
    for (const auto& s : scope.state) closest.consider(s.name);
  closest.suggest(m << " (");
  text::list(m << "alpha: ", scope.instruction->alpha);
  if (allowed != Allowed::AlphaOnly) text::list(m << "; beta: ", scope.instruction->beta);
  if (allowed == Allowed::AttributesAndState && !scope.state.empty()) {
    m << "; state:";
    for (const auto& s : scope.state) m << " " << s.name;
  }
  m << ")";
}

// Parses `text` and checks its identifiers; on failure appends the reason to `msg`.
constexpr bool check_expression(std::string_view text, const Label& what, const Scope& scope, Allowed allowed,
                                Message& msg) {
  if (text.empty()) {
    msg << what << " is empty";
    return false;
  }
  sym::ParseResult r = sym::try_parse(text);
  if (!r.ok()) {
    msg << what << " '" << text << "' does not parse: " << r.error << " at column " << r.column;
    return false;
  }
  for (std::string_view id : sym::free_identifiers(r.expr)) {
    const bool alpha = scope.is_alpha(id), beta = scope.is_beta(id), state = scope.is_state(id);
    if (allowed == Allowed::AlphaOnly && !alpha) {
      msg << what << " '" << text << "' mentions '" << id << "', which is "
          << (beta ? "an addressing attribute (beta); only computational attributes (alpha) may appear here"
                   : (state ? "a state register; only computational attributes (alpha) may appear here"
                            : "not a computational attribute (alpha) of this instruction"));
      if (!beta && !state) known_names(msg, id, scope, allowed);
      return false;
    }
    if (allowed == Allowed::Attributes && !alpha && !beta) {
      msg << what << " '" << text << "' mentions '" << id << "', which is not an attribute of this instruction";
      known_names(msg, id, scope, allowed);
      return false;
    }
    if (allowed == Allowed::AttributesAndState && !alpha && !beta && !state) {
      msg << what << " '" << text << "' mentions '" << id
          << "', which is neither an attribute of this instruction nor a state register";
      known_names(msg, id, scope, allowed);
      return false;
    }
  }
  return true;
}

// True when every constraint that mentions alpha only holds for the sample.
constexpr bool sample_satisfies_constraints(const Instruction& instr, const Scope& scope, std::int64_t sample) {
  sym::Bindings env;
  for (auto a : instr.alpha) env.set(a, sample);
  for (std::string_view c : instr.constraints) {
    sym::ParseResult p = sym::try_parse(c);
    if (!p.ok()) continue;  // reported by check_instruction
    bool alpha_only = true;
    for (auto id : sym::free_identifiers(p.expr)) alpha_only = alpha_only && scope.is_alpha(id);
    if (!alpha_only) continue;
    sym::EvalResult r = sym::try_evaluate(p.expr, env);
    if (!r.ok() || r.value == 0) return false;
  }
  return true;
}

// A syntax problem of the semantics block, with the statement quoted and the names the parser
// knew at that point.
constexpr void describe_outline_error(Message& msg, const Instruction& instr, const hlo::SemanticsOutline& sem,
                                      const hlo::OutlineError& e) {
  text::semantics_line(msg, instr.semantics, e.line) << e.what;
  if (!e.quoted.empty()) msg << " '" << e.quoted << "'";
  msg << " at column " << e.column;
  if (e.what == std::string_view("unknown opcode")) {
    text::Closest closest(e.quoted);
    for (const auto& o : hlo::kOpcodes) closest.consider(o.name);
    for (std::string_view taidl : {"reduce_add", "bitcast_convert", "exp"}) closest.consider(taidl);
    Message suggestion;
    closest.suggest(suggestion);
    if (!suggestion.empty()) msg << " (" << suggestion.view().substr(0, suggestion.size - 1) << ")";
  } else if (e.what.substr(0, 22) == "operand is not defined") {
    text::Closest closest(e.quoted);
    for (std::size_t i = 0; i < sem.count; ++i) closest.consider(sem.statements[i].name);
    closest.suggest(msg << " (") << "defined before it:";
    if (sem.count == 0) msg << " nothing";
    for (std::size_t i = 0; i < sem.count; ++i) msg << (i ? ", " : " ") << sem.statements[i].name;
    msg << ")";
  }
}

// The statements' own well-formedness: dims over alpha only, XLA's operand counts.
constexpr bool check_statements(const Instruction& instr, const hlo::SemanticsOutline& sem, const Scope& scope, Message& msg) {
  for (std::size_t i = 0; i < sem.count; ++i) {
    const hlo::OutlineStatement& v = sem.statements[i];
    for (std::size_t d = 0; d < v.rank; ++d) {
      const hlo::OutlineDim& dim = v.dims[d];
      if (dim.expression.empty()) continue;
      const std::size_t mark = msg.size;
      text::semantics_line(msg, instr.semantics, dim.line);
      if (!check_expression(dim.expression, {"dimension"}, scope, Allowed::AlphaOnly, msg)) {
        msg << " (column " << dim.column << ")";
        return false;
      }
      msg.truncate(mark);
    }
    if (v.opcode == hlo::Opcode::Parameter || v.opcode == hlo::Opcode::Constant) continue;
    const hlo::shape_rules::Finding f =
        v.reduce_add ? hlo::shape_rules::Finding{v.operand_count == 1 ? hlo::shape_rules::Problem::None
                                                                      : hlo::shape_rules::Problem::OperandCount,
                                                 0, 0, 0, static_cast<std::int64_t>(v.operand_count), 1}
                     : hlo::shape_rules::check_operand_count(v.opcode, v.operand_count);
    if (f.problem != hlo::shape_rules::Problem::None) {
      const bool variadic = !v.reduce_add && hlo::opcode_arity(v.opcode) < 0;
      text::semantics_line(msg, instr.semantics, v.line) << "'" << v.opcode_text << "' takes " << (variadic ? "at least " : "")
                                                         << f.bound << " operand(s) but has " << f.value;
      return false;
    }
  }
  return true;
}

// The semantics block: its first problem (a later one is often a consequence).
constexpr bool check_semantics(const IsaView& isa, const Instruction& instr, const Scope& scope, Message& msg) {
  if (instr.semantics.empty()) {
    if (instr.outputs.empty()) return true;  // e.g. a configuration instruction that only updates state
    msg << "has outputs but no semantics";
    return false;
  }
  hlo::SemanticsOutline sem;
  if (const hlo::OutlineError e = hlo::outline_semantics(instr.semantics, sem); !e.ok()) {
    describe_outline_error(msg, instr, sem, e);
    return false;
  }
  if (sem.name != instr.name) {
    msg << "semantics block is named '" << sem.name << "' but the instruction is '" << instr.name << "'";
    return false;
  }
  if (!check_statements(instr, sem, scope, msg)) return false;

  std::size_t roots = 0;
  for (std::size_t i = 0; i < sem.count; ++i) roots += sem.statements[i].root ? 1 : 0;
  if (roots != 1) {
    msg << "semantics need exactly one ROOT statement, found " << roots;
    return false;
  }
  for (std::size_t k = 0; k < instr.inputs.size(); ++k) {
    std::size_t found = 0;
    for (std::size_t i = 0; i < sem.count; ++i)
      found += (sem.statements[i].opcode == hlo::Opcode::Parameter && sem.statements[i].parameter == static_cast<std::int64_t>(k)) ? 1 : 0;
    if (found != 1) {
      msg << "input " << k + 1 << " needs exactly one parameter(" << k << ") statement, found " << found;
      return false;
    }
  }
  for (std::size_t i = 0; i < sem.count; ++i)
    if (sem.statements[i].opcode == hlo::Opcode::Parameter && sem.statements[i].parameter >= static_cast<std::int64_t>(instr.inputs.size())) {
      text::semantics_line(msg, instr.semantics, sem.statements[i].line)
          << "parameter(" << sem.statements[i].parameter << ") but the instruction has " << instr.inputs.size() << " input(s)";
      return false;
    }
  for (std::size_t k = 1; k < instr.outputs.size(); ++k) {
    bool found = false;
    for (std::size_t i = 0; i < sem.count; ++i) found = found || is_out_name(sem.statements[i].name, k);
    if (!found) {
      msg << "output " << k << " needs a semantics value named Out" << k;
      return false;
    }
  }

  constexpr std::int64_t kSamples[] = {1, 2, 3, 4, 8, 16, 32, 64, 128};
  ShapeChecker checker(isa, instr, sem, msg);
  bool first = true;
  for (std::int64_t sample : kSamples) {
    if (!sample_satisfies_constraints(instr, scope, sample)) continue;
    if (!checker.run(sample, first)) return false;
    first = false;
    if (instr.alpha.empty()) break;  // one sample is enough when no shape depends on it
  }
  return true;
}

// One data slice: its buffer, then each start and length expression.
constexpr void check_slice(const IsaView& isa, const SliceMap& s, std::string_view kind, std::size_t number, const Scope& scope,
                           Problems& problems) {
  const int index = isa.buffer_index(s.buffer);  // not find_buffer: see ShapeChecker::check_slice
  if (index < 0) {
    problems.check([&](Message& msg) {
      msg << kind << " " << number << " names an unknown buffer '" << s.buffer << "' (";
      text::Closest closest(s.buffer);
      for (const Buffer& b : isa.buffers) closest.consider(b.name);
      closest.suggest(msg);
      msg << "buffers:";
      for (std::size_t b = 0; b < isa.buffers.size(); ++b) msg << (b ? ", " : " ") << isa.buffers[b].name;
      msg << ")";
      return false;
    });
    return;
  }
  const Buffer& buffer = isa.buffers[static_cast<std::size_t>(index)];
  if (s.start.size() != buffer.access_dims.size() || s.length.size() != buffer.access_dims.size()) {
    problems.check([&](Message& msg) {
      msg << kind << " " << number << " on buffer '" << s.buffer << "' needs " << buffer.access_dims.size()
          << " start and length expression(s) (one per access dim), has " << s.start.size() << " and " << s.length.size();
      return false;
    });
    return;
  }
  for (auto e : s.start)
    problems.check([&](Message& msg) { return check_expression(e, {kind, number, "start expression"}, scope, Allowed::AttributesAndState, msg); });
  for (auto e : s.length)
    problems.check([&](Message& msg) { return check_expression(e, {kind, number, "length expression"}, scope, Allowed::AttributesAndState, msg); });
}

// A declared attribute name: valid, declared once, distinct from state (and, for beta, alpha).
constexpr bool check_attribute_name(const Names& names, std::size_t i, std::string_view kind, const Scope& scope, bool is_beta,
                                    Message& msg) {
  const std::string_view n = names[i];
  if (!sym::try_parse(n).ok() || sym::try_parse(n).expr.top().op != sym::Op::Var) {
    msg << kind << " attribute '" << n << "' is not a valid name";
    return false;
  }
  for (std::size_t j = 0; j < i; ++j)
    if (names[j] == n) {
      msg << kind << " attribute '" << n << "' is declared twice";
      return false;
    }
  if (is_beta && scope.is_alpha(n)) {
    msg << "'" << n << "' is declared both as alpha and as beta";
    return false;
  }
  if (scope.is_state(n)) {
    msg << kind << " attribute '" << n << "' has the name of a state register";
    return false;
  }
  return true;
}

// Every problem of one instruction, "; " between them.
constexpr void check_instruction(const IsaView& isa, const Instruction& instr, bool has_c_mapping, Problems& problems) {
  const Scope scope{&instr, isa.state};
  for (std::size_t i = 0; i < instr.alpha.size(); ++i)
    problems.check([&](Message& msg) { return check_attribute_name(instr.alpha, i, "alpha", scope, false, msg); });
  for (std::size_t i = 0; i < instr.beta.size(); ++i)
    problems.check([&](Message& msg) { return check_attribute_name(instr.beta, i, "beta", scope, true, msg); });
  if (instr.outputs.empty() && instr.updates.empty())
    problems.check([](Message& msg) {
      msg << "writes nothing: no outputs and no state updates";
      return false;
    });
  for (std::size_t k = 0; k < instr.inputs.size(); ++k) check_slice(isa, instr.inputs[k], "input", k + 1, scope, problems);
  for (std::size_t k = 0; k < instr.outputs.size(); ++k) check_slice(isa, instr.outputs[k], "output", k, scope, problems);
  for (auto c : instr.constraints)
    problems.check([&](Message& msg) { return check_expression(c, {"constraint"}, scope, Allowed::AttributesAndState, msg); });
  for (const auto& u : instr.updates)
    problems.check([&](Message& msg) {
      if (!scope.is_state(u.state)) {
        msg << "updates '" << u.state << "', which is not a declared state register (state:";
        for (const auto& s : isa.state) msg << " " << s.name;
        if (isa.state.empty()) msg << " none";
        msg << ")";
        return false;
      }
      return check_expression(u.value, {"state update value"}, scope, Allowed::AttributesAndState, msg);
    });
  problems.check([&](Message& msg) { return check_expression(instr.cost, {"cost expression"}, scope, Allowed::AlphaOnly, msg); });
  // The shapes are only worth checking once the slices and names they use are sound.
  if (problems.count() == 0) problems.check([&](Message& msg) { return check_semantics(isa, instr, scope, msg); });
  if (has_c_mapping) {
    problems.check([&](Message& msg) {
      const std::size_t c = isa.c_mapping->index_of(instr.name);
      if (c == CMapping::npos) {
        msg << "C mapping: no C template for this instruction";
        return false;
      }
      return check_c_instruction(isa, instr, isa.c_mapping->instructions[c], msg);
    });
  }
}

constexpr bool check_buffers_and_state(const IsaView& isa, Message& msg) {
  std::size_t hbm_count = 0;
  for (std::size_t i = 0; i < isa.buffers.size(); ++i) {
    const Buffer& b = isa.buffers[i];
    if (b.name.empty()) {
      msg << "a buffer has no name";
      return false;
    }
    for (std::size_t j = 0; j < i; ++j)
      if (isa.buffers[j].name == b.name) {
        msg << "buffer '" << b.name << "' is declared twice";
        return false;
      }
    if (b.access_dims.empty()) {
      msg << "buffer '" << b.name << "' has no access dims";
      return false;
    }
    for (auto d : b.access_dims)
      if (d <= 0) {
        msg << "buffer '" << b.name << "' has a non-positive access dim";
        return false;
      }
    for (auto d : b.unit_dims)
      if (d <= 0) {
        msg << "buffer '" << b.name << "' has a non-positive unit dim";
        return false;
      }
    if (b.is_hbm) {
      ++hbm_count;
      if (b.access_dims.size() != 1 || !b.unit_dims.empty() || b.dtype != DType::u8) {
        msg << "HBM buffer '" << b.name << "' must be u8 with one access dim and no unit dims";
        return false;
      }
    }
  }
  if (hbm_count != 1) {
    msg << "needs exactly one HBM buffer, has " << hbm_count;
    return false;
  }
  for (std::size_t i = 0; i < isa.state.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (isa.state[i].name == isa.state[j].name) {
        msg << "state register '" << isa.state[i].name << "' is declared twice";
        return false;
      }
  if (isa.instructions.empty()) {
    msg << "has no instructions";
    return false;
  }
  return true;
}

// An assembler macro (isa/expansion.hpp): it names an instruction of the ISA; each step names a
// hardware instruction (not a macro), gives each of its attributes exactly once, and its values
// mention only the macro's attributes.
constexpr bool check_expansion(const IsaView& isa, const Expansion& e, Message& msg) {
  const int macro_index = isa.instruction_index(e.instruction);  // indices, not pointers: see check_slice
  if (macro_index < 0) {
    msg << "expansion of '" << e.instruction << "': no such instruction";
    return false;
  }
  if (e.steps.empty()) {
    msg << "expansion of '" << e.instruction << "' has no steps";
    return false;
  }
  const Instruction& macro = isa.instructions[static_cast<std::size_t>(macro_index)];
  for (std::string_view text : e.steps) {
    const ExpansionStep step = parse_expansion_step(text);
    if (!step.error.empty()) {
      msg << "expansion of '" << e.instruction << "', step '" << text << "': " << step.error;
      return false;
    }
    const int target_index = isa.instruction_index(step.instruction);
    if (target_index < 0 || isa.has_expansion(step.instruction)) {
      msg << "expansion of '" << e.instruction << "': step '" << step.instruction
          << (target_index >= 0 ? "' is itself a macro" : "' is no instruction of the ISA");
      return false;
    }
    const Instruction& target = isa.instructions[static_cast<std::size_t>(target_index)];
    const std::size_t attributes = target.alpha.size() + target.beta.size();
    for (std::size_t k = 0; k < step.count; ++k) {
      if (!is_attribute(target, step.names[k])) {
        msg << "expansion of '" << e.instruction << "': '" << step.names[k] << "' is no attribute of '" << step.instruction << "'";
        return false;
      }
      for (std::size_t j = 0; j < k; ++j)
        if (step.names[j] == step.names[k]) {
          msg << "expansion of '" << e.instruction << "': '" << step.names[k] << "' given twice";
          return false;
        }
      const sym::ParseResult value = sym::try_parse(step.values[k]);
      for (std::size_t n = 0; n < static_cast<std::size_t>(value.expr.count); ++n) {
        const sym::Node& node = value.expr.nodes[n];
        if (node.op == sym::Op::Var && !is_attribute(macro, node.name)) {
          msg << "expansion of '" << e.instruction << "': value '" << step.values[k] << "' mentions '" << node.name
              << "', which is no attribute of the macro";
          return false;
        }
      }
    }
    if (step.count != attributes) {
      msg << "expansion of '" << e.instruction << "': step '" << step.instruction << "' needs all " << attributes
          << " attributes";
      return false;
    }
  }
  return true;
}

// `has_c_mapping` is passed in rather than read as `isa.c_mapping != nullptr`: g++ with the
// sanitizers does not fold that comparison in a constant expression (see check_c_mapping.hpp).
constexpr Diagnostic diagnose(const IsaView& isa, bool has_c_mapping) {
  Diagnostic d;
  if (!detail::check_buffers_and_state(isa, d.message)) {
    d.problems = 1;
    return d;
  }
  for (std::size_t i = 0; i < isa.instructions.size(); ++i) {
    const Instruction& instr = isa.instructions[i];
    d.instruction = instr.name;
    d.file = text::file_name(instr.where.file_name());
    d.line = instr.where.line();
    Problems problems(d.message);
    if (instr.name.empty())
      problems.check([](Message& msg) {
        msg << "an instruction has no name";
        return false;
      });
    for (std::size_t j = 0; j < i; ++j)
      if (isa.instructions[j].name == instr.name) {
        problems.check([](Message& msg) {
          msg << "instruction name declared twice";
          return false;
        });
        break;
      }
    detail::check_instruction(isa, instr, has_c_mapping, problems);
    d.problems = problems.count();
    if (d.problems == 0) continue;
    if (d.problems > 1) {
      Message all;
      all << d.problems << " problems: " << d.message.view();
      d.message = all;
    }
    return d;
  }
  d = Diagnostic{};
  if (has_c_mapping && !detail::check_c_mapping(isa, d.message)) {
    d.problems = 1;
    return d;
  }
  for (const Expansion& e : isa.expansions)
    if (!detail::check_expansion(isa, e, d.message)) {
      d.instruction = e.instruction;
      d.problems = 1;
      return d;
    }
  return d;
}

}  // namespace detail

// The problems of a description, or an ok() Diagnostic. Never throws.
constexpr Diagnostic diagnose(const IsaView& isa) { return detail::diagnose(isa, isa.c_mapping != nullptr); }

template <class Isa>
consteval Diagnostic diagnose() {
  return detail::diagnose(unchecked_view<Isa>(), HasCMapping<Isa>);
}

// Throws act::Error(ErrorKind::Isa, "ISA 'x', instruction 'load_rm' (x.hpp:40): ...") for an
// invalid description.
inline void check(const IsaView& isa) {
  const Diagnostic d = diagnose(isa);
  if (d.ok()) return;
  if (d.instruction.empty()) throw Error(ErrorKind::Isa, fmt::format("ISA '{}': {}", isa.name, d.message.view()));
  const std::string where = d.line > 0 ? fmt::format(" ({}:{})", d.file, d.line) : std::string();
  throw Error(ErrorKind::Isa, fmt::format("ISA '{}', instruction '{}'{}: {}", isa.name, d.instruction, where, d.message.view()));
}

// ---- compile-time reporting

namespace detail {

// A string as a class-type template argument, so that g++ prints it in diagnostics.
template <std::size_t N>
struct FixedString {
  char text[N + 1]{};
  constexpr FixedString(std::string_view s) {
    for (std::size_t i = 0; i < N && i < s.size(); ++i) text[i] = s[i];
  }
};

// "matmul (tpu_mini.hpp:93)", or "ISA tpu_mini" for ISA-level problems.
constexpr Message where(std::string_view isa, const Diagnostic& d) {
  Message m;
  if (d.instruction.empty()) {
    m << "ISA " << isa;
    return m;
  }
  m << d.instruction;
  if (d.line > 0) m << " (" << d.file << ":" << d.line << ")";
  return m;
}

}  // namespace detail

// Instantiated by validation with the problems found; when Ok is false the compiler reports this
// instantiation, and with it the instruction's name and the problems.
template <detail::FixedString Instruction, detail::FixedString Problem, bool Ok>
struct instruction_check {
  static_assert(Ok, "invalid ISA description: the instruction and the problems are the template arguments of "
                    "act::isa::instruction_check above");
  static constexpr bool ok = Ok;
};

template <class Isa>
struct Validation {
  static constexpr Diagnostic diagnostic = diagnose<Isa>();
  static constexpr Message where = detail::where(Isa::name, diagnostic);
  static constexpr bool ok =
      instruction_check<detail::FixedString<where.size>(where.view()),
                        detail::FixedString<diagnostic.message.size>(diagnostic.message.view()), diagnostic.ok()>::ok;
};

// The description, validated while the code that asks for it compiles: a malformed ISA does not
// build, whichever way it is used (the compiler names the instruction and the problems).
template <class Isa>
constexpr IsaView view() {
  static_assert(Validation<Isa>::ok, "invalid ISA description (see the notes above)");
  return unchecked_view<Isa>();
}

}  // namespace act::isa

// Put after an ISA definition: `ACT_VALIDATE_ISA(act::isa::Qkv);`
#define ACT_VALIDATE_ISA(...) \
  static_assert(::act::isa::Validation<__VA_ARGS__>::ok, "invalid ISA description (see the notes above)")
