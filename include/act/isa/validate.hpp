// Validation of ISA descriptions, at compile time and at run time, by one constexpr function.
//
//   ACT_VALIDATE_ISA(act::isa::Qkv);          // in the ISA header: a malformed description fails
//                                             // to compile, naming the instruction and the problem
//   act::isa::check(view);                    // run time: throws act::Error(ErrorKind::Isa,
//                                             //   "instruction 'load_rm': ...")
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
// - shapes, for sample alpha values (every alpha = v for v in 1, 2, 3, 4, 8, ..., 128, keeping
//   the samples that satisfy the constraints that mention alpha only): parameters have exactly
//   the input slice's shape and dtype, outputs the output slice's dtype and element count, and
//   every statement the type XLA's shape rules (hlo/shape_rules.hpp) give its operands
//   (statements of slice, pad and reduce-window, whose attributes the outline does not keep,
//   and of opcodes without a rule stand as written).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "act/core/dtype.hpp"
#include "act/core/error.hpp"
#include "act/core/view.hpp"
#include "act/hlo/opcode.hpp"
#include "act/hlo/semantics_outline.hpp"
#include "act/hlo/shape_rules.hpp"
#include "act/isa/c_mapping.hpp"
#include "act/isa/description.hpp"
#include "act/isa/expansion.hpp"
#include "act/sym/expr.hpp"

namespace act::isa {

// A message assembled in constant expressions (no allocation); long messages are truncated.
struct Message {
  static constexpr std::size_t kCapacity = 240;
  std::array<char, kCapacity> chars{};
  std::size_t size = 0;

  constexpr Message& operator<<(std::string_view s) {
    for (char c : s)
      if (size < kCapacity) chars[size++] = c;
    return *this;
  }
  constexpr Message& operator<<(std::int64_t v) {
    if (v < 0) {
      *this << "-";
      if (v == INT64_MIN) return *this << "9223372036854775808";
      v = -v;
    }
    char digits[20]{};
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v > 0);
    while (n > 0)
      if (size < kCapacity) chars[size++] = digits[--n];
      else --n;
    return *this;
  }
  constexpr Message& operator<<(int v) { return *this << static_cast<std::int64_t>(v); }
  constexpr Message& operator<<(std::size_t v) { return *this << static_cast<std::int64_t>(v); }
  constexpr std::string_view view() const { return std::string_view(chars.data(), size); }
  constexpr bool empty() const { return size == 0; }
};

// The first problem found in a description; ok() when there is none.
struct Diagnostic {
  std::string_view instruction;  // empty for ISA-level problems (buffers, state)
  Message message;
  constexpr bool ok() const { return message.empty(); }
};

namespace detail {

constexpr bool is_out_name(std::string_view name, std::size_t k) {
  // "Out<k>" with k in decimal.
  if (name.substr(0, 3) != "Out") return false;
  Message m;
  m << k;
  return name.substr(3) == m.view();
}

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

// Parses `text` and checks its identifiers; on failure appends the reason to `msg`.
constexpr bool check_expression(std::string_view text, std::string_view what, const Scope& scope, Allowed allowed,
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
      return false;
    }
    if (allowed == Allowed::Attributes && !alpha && !beta) {
      msg << what << " '" << text << "' mentions '" << id << "', which is not an attribute of this instruction";
      return false;
    }
    if (allowed == Allowed::AttributesAndState && !alpha && !beta && !state) {
      msg << what << " '" << text << "' mentions '" << id
          << "', which is neither an attribute of this instruction nor a state register";
      return false;
    }
  }
  return true;
}

// ---- shapes of one sample of alpha values

// A statement's (or a data slice's) dims once alpha is bound.
struct Shape {
  std::array<std::int64_t, hlo::kMaxOutlineRank + kMaxUnitDims> dims{};
  std::size_t rank = 0;
  constexpr View<std::int64_t> view() const { return {dims.data(), rank}; }
  constexpr std::int64_t elements() const {
    std::int64_t n = 0;
    return hlo::shape_rules::element_count(view(), n) ? n : -1;
  }
  friend constexpr bool operator==(const Shape& a, const Shape& b) {
    if (a.rank != b.rank) return false;
    for (std::size_t i = 0; i < a.rank; ++i)
      if (a.dims[i] != b.dims[i]) return false;
    return true;
  }
};

constexpr Message& operator<<(Message& m, View<std::int64_t> dims) {
  m << "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) m << ",";
    m << dims[i];
  }
  return m << "]";
}
constexpr Message& operator<<(Message& m, const Shape& s) { return m << s.view(); }

// What one statement gives XLA's shape rules: views into ShapeChecker's shapes, which every
// sample refills, so they are built once per instruction.
struct RuleInputs {
  std::array<hlo::shape_rules::TensorType, hlo::kMaxOutlineOperands + 1> operands{};
  std::size_t count = 0;
  hlo::shape_rules::Attributes attributes;
  hlo::shape_rules::TensorType written;
  hlo::Opcode opcode = hlo::Opcode::Copy;
  bool checked = false;           // false: the statement stands as written
  bool depends_on_alpha = false;  // a dim of the statement or of an operand is an expression
};

// Checks each statement's type against XLA's shape rules (hlo/shape_rules.hpp), and the
// parameters and outputs against the instruction's data slices, for samples of alpha.
class ShapeChecker {
 public:
  constexpr ShapeChecker(const IsaView& isa, const Instruction& instr, const hlo::SemanticsOutline& sem, Message& msg)
      : isa_(isa), instr_(instr), sem_(sem), msg_(msg) {
    for (std::size_t i = 0; i < sem_.count; ++i) prepare(sem_.statements[i], inputs_[i]);
  }

  // Every alpha = sample. Statements whose types do not depend on alpha are checked with the
  // first sample only.
  constexpr bool run(std::int64_t sample, bool first_sample) {
    sample_ = sample;
    for (auto a : instr_.alpha) env_.set(a, sample);
    for (std::size_t i = 0; i < sem_.count; ++i)
      if (!eval_dims(sem_.statements[i], shapes_[i])) return false;
    for (std::size_t i = 0; i < sem_.count; ++i)
      if (inputs_[i].checked && (first_sample || inputs_[i].depends_on_alpha) &&
          !check_statement(sem_.statements[i], shapes_[i], inputs_[i]))
        return false;
    for (std::size_t k = 0; k < instr_.inputs.size(); ++k) {
      for (std::size_t i = 0; i < sem_.count; ++i) {
        const hlo::OutlineStatement& v = sem_.statements[i];
        if (v.opcode == hlo::Opcode::Parameter && v.parameter == static_cast<std::int64_t>(k) &&
            !check_slice(instr_.inputs[k], v, shapes_[i], true, k))
          return false;
      }
    }
    for (std::size_t k = 0; k < instr_.outputs.size(); ++k) {
      for (std::size_t i = 0; i < sem_.count; ++i) {
        const hlo::OutlineStatement& v = sem_.statements[i];
        const bool is_output = (k == 0 && v.root) || (k > 0 && is_out_name(v.name, k));
        if (is_output && !check_slice(instr_.outputs[k], v, shapes_[i], false, k)) return false;
      }
    }
    return true;
  }

 private:
  constexpr bool problem(const hlo::OutlineStatement& v) {
    msg_ << " (value '" << v.name << "', semantics line " << v.line << ", with every alpha = " << sample_ << ")";
    return false;
  }

  static constexpr bool symbolic(const hlo::OutlineStatement& s) {
    for (std::size_t d = 0; d < s.rank; ++d)
      if (!s.dims[d].expression.empty()) return true;
    return false;
  }

  constexpr void prepare(const hlo::OutlineStatement& v, RuleInputs& in) {
    using hlo::Opcode;
    const auto index = static_cast<std::size_t>(&v - sem_.statements.data());
    // Slice ranges, padding and windows are not in the outline: such statements stand as written.
    in.checked = v.opcode != Opcode::Parameter && v.opcode != Opcode::Constant && v.opcode != Opcode::Slice &&
                 v.opcode != Opcode::Pad && v.opcode != Opcode::ReduceWindow;
    if (!in.checked) return;
    in.depends_on_alpha = symbolic(v);
    for (std::size_t i = 0; i < v.operand_count; ++i) {
      const auto o = static_cast<std::size_t>(v.operands[i]);
      in.operands[in.count++] = {sem_.statements[o].dtype, {shapes_[o].dims.data(), sem_.statements[o].rank}};
      in.depends_on_alpha = in.depends_on_alpha || symbolic(sem_.statements[o]);
    }
    if (v.reduce_add) in.operands[in.count++] = {v.operand_count ? in.operands[0].dtype : v.dtype, {}};  // init 0
    if (v.attribute_count > 0) {  // (most statements have none: skip the lookups)
      in.attributes.dimensions = v.attribute("dimensions");
      if (v.opcode == Opcode::Dot)
        in.attributes.dot = {v.attribute("lhs_batch_dims"), v.attribute("lhs_contracting_dims"),
                             v.attribute("rhs_batch_dims"), v.attribute("rhs_contracting_dims")};
      in.attributes.dynamic_slice_sizes = v.attribute("dynamic_slice_sizes");
      if (const auto iota = v.attribute("iota_dimension"); iota.size() == 1) in.attributes.iota_dimension = iota[0];
    }
    in.written = {v.dtype, {shapes_[index].dims.data(), v.rank}};
    // XLA's bitcast depends on layouts; in semantics it reinterprets like a reshape.
    in.opcode = v.opcode == Opcode::Bitcast ? Opcode::Reshape : v.opcode;
  }

  constexpr bool eval_dims(const hlo::OutlineStatement& v, Shape& s) {
    s.rank = v.rank;
    for (std::size_t d = 0; d < v.rank; ++d) {
      if (v.dims[d].expression.empty()) {
        s.dims[d] = v.dims[d].size;
        continue;
      }
      sym::EvalResult r = sym::try_evaluate(sym::try_parse(v.dims[d].expression).expr, env_);
      if (!r.ok()) {
        msg_ << "dimension `" << v.dims[d].expression << "` cannot be evaluated: " << r.error;
        return problem(v);
      }
      if (r.value < 0) {
        msg_ << "dimension `" << v.dims[d].expression << "` is negative (" << r.value << ")";
        return problem(v);
      }
      s.dims[d] = r.value;
    }
    return true;
  }

  // The name of operand i of v, or "the result".
  constexpr std::string_view who(const hlo::OutlineStatement& v, int i) const {
    if (i == hlo::shape_rules::kResult) return "the result";
    return sem_.statements[static_cast<std::size_t>(v.operands[static_cast<std::size_t>(i)])].name;
  }

  constexpr bool check_statement(const hlo::OutlineStatement& v, const Shape& s, const RuleInputs& in) {
    namespace rules = hlo::shape_rules;
    const View<rules::TensorType> operands(in.operands.data(), in.count);
    const rules::ResultType r = rules::infer(in.opcode, operands, in.attributes, &in.written);
    if (r.problem() == rules::Problem::NotModelled) return true;  // accepted as written
    if (!r.ok()) {
      explain(v, s, r.finding, operands);
      return problem(v);
    }
    if (!rules::same_dims(r.dimensions(), s.view())) {
      msg_ << v.opcode_text << " result shape: expected " << r.dimensions() << ", the statement says " << s;
      return problem(v);
    }
    if (r.dtype != v.dtype) {
      for (std::size_t i = 0; i < v.operand_count; ++i)
        if (operands[i].dtype == r.dtype) {
          msg_ << "operand '" << who(v, static_cast<int>(i)) << "' is " << name(r.dtype) << " but the result is "
               << name(v.dtype);
          return problem(v);
        }
      msg_ << v.opcode_text << " result element type: expected " << name(r.dtype) << ", the statement says "
           << name(v.dtype);
      return problem(v);
    }
    return true;
  }

  // A rule's finding in words.
  constexpr void explain(const hlo::OutlineStatement& v, const Shape& s, const hlo::shape_rules::Finding& f,
                         View<hlo::shape_rules::TensorType> operands) {
    using P = hlo::shape_rules::Problem;
    using hlo::shape_rules::kResult;
    const std::string_view op = v.opcode_text;
    auto type = [&](int i) {
      return i == kResult ? hlo::shape_rules::TensorType{v.dtype, {}} : operands[static_cast<std::size_t>(i)];
    };
    switch (f.problem) {
      case P::ElementTypesDiffer:
        msg_ << "operand '" << who(v, f.operand) << "' is " << name(type(f.operand).dtype) << " but "
             << (f.other == kResult ? "the result" : "operand '") << (f.other == kResult ? "" : who(v, f.other))
             << (f.other == kResult ? "" : "'") << " is " << name(f.other == kResult ? v.dtype : type(f.other).dtype);
        return;
      case P::DimensionsDiffer:
      case P::RanksDiffer:
        msg_ << op << ": operand '" << who(v, f.operand) << "' is " << type(f.operand).dims << " but ";
        if (f.other == kResult) msg_ << "the result is " << s;
        else msg_ << "operand '" << who(v, f.other) << "' is " << type(f.other).dims;
        return;
      case P::NotPred: msg_ << op << ": predicate '" << who(v, f.operand) << "' is not pred"; return;
      case P::NotScalar: msg_ << op << ": operand '" << who(v, f.operand) << "' must be a scalar"; return;
      case P::ListLength:
        msg_ << op << " has " << f.value << " entries in its dimension list, expected " << f.bound;
        return;
      case P::DimensionOutOfRange: msg_ << op << " dimension " << f.value << " is out of range for rank " << f.bound; return;
      case P::DimensionRepeated: msg_ << op << " dimension " << f.value << " appears twice"; return;
      case P::ElementCountsDiffer:
        msg_ << "reshape changes the element count from " << f.value << " to " << f.bound;
        return;
      case P::IncompatibleBitWidths:
      case P::UnsizedElementType:
        msg_ << "cannot reinterpret " << name(operands[0].dtype) << " as " << name(v.dtype);
        return;
      case P::RatioDimensionMissing:
      case P::RatioDimensionWrong:
      case P::DimensionsDifferBesidesRatio:
        msg_ << op << " from " << name(operands[0].dtype) << operands[0].dims << " to " << name(v.dtype)
             << s << ": the narrow side needs the wide side's dims plus a minor-most dim of the width ratio";
        return;
      case P::BroadcastSizeMismatch:
        msg_ << "broadcast operand dimension " << f.index << " (size " << f.value << ") does not match result dimension "
             << v.attribute("dimensions")[f.index] << " (size " << f.bound << ")";
        return;
      case P::ContractingCountsDiffer:
      case P::BatchCountsDiffer:
        msg_ << "dot needs as many lhs as rhs contracting (and batch) dimensions";
        return;
      case P::ContractingSizesDiffer:
        msg_ << "dot contracts dimensions of different sizes (" << f.value << " and " << f.bound << ")";
        return;
      case P::BatchSizesDiffer:
        msg_ << "dot batch dimensions have different sizes (" << f.value << " and " << f.bound << ")";
        return;
      case P::SliceSizeTooLarge:
      case P::UpdateTooLarge:
        msg_ << op << ": size " << f.value << " of dimension " << f.index << " exceeds the operand's " << f.bound;
        return;
      case P::StartIndexVectorType:
      case P::StartIndexCount:
      case P::BadStartIndex:
        msg_ << op << " needs one integer scalar start index per operand dimension";
        return;
      case P::IotaOfScalar: msg_ << "iota of a scalar"; return;
      case P::RankTooLarge: msg_ << op << " would give " << f.value << " dimensions"; return;
      case P::SizeOverflow: msg_ << op << ": a size does not fit in 64 bits"; return;
      default: msg_ << op << ": operands and attributes do not fit XLA's shape rule"; return;
    }
  }


  constexpr bool check_slice(const SliceMap& slice, const hlo::OutlineStatement& v, const Shape& s, bool is_input, std::size_t k) {
    // Indices rather than pointers: g++'s -fsanitize=undefined makes null checks of pointers to
    // static data non-constant, which would break ACT_VALIDATE_ISA in sanitizer builds.
    const int index = isa_.buffer_index(slice.buffer);
    if (index < 0) return true;  // reported by the slice checks
    const Buffer* buffer = &isa_.buffers[static_cast<std::size_t>(index)];
    Shape expected;
    for (std::string_view length : slice.length) {
      sym::EvalResult r = sym::try_evaluate(sym::try_parse(length).expr, env_);
      if (!r.ok()) return true;
      expected.dims[expected.rank++] = r.value;
    }
    for (std::int64_t u : buffer->unit_dims) expected.dims[expected.rank++] = u;
    if (v.dtype != buffer->dtype) {
      msg_ << (is_input ? "input " : "output ") << (is_input ? k + 1 : k) << " is " << name(buffer->dtype)
           << " (buffer '" << buffer->name << "') but the value is " << name(v.dtype);
      return problem(v);
    }
    if (is_input && !(expected == s)) {
      msg_ << "input " << k + 1 << " reads " << expected << " from buffer '" << buffer->name
           << "' but parameter(" << k << ") is " << s;
      return problem(v);
    }
    if (!is_input && expected.elements() != s.elements()) {
      msg_ << "output " << k << " writes " << expected << " to buffer '" << buffer->name << "' but the value is " << s;
      return problem(v);
    }
    return true;
  }

  const IsaView& isa_;
  const Instruction& instr_;
  const hlo::SemanticsOutline& sem_;
  Message& msg_;
  std::int64_t sample_ = 0;
  sym::Bindings env_{};
  std::array<Shape, hlo::kMaxOutlineStatements> shapes_{};
  std::array<RuleInputs, hlo::kMaxOutlineStatements> inputs_{};
};

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

// " (semantics line L, column C)"
constexpr Message& at(Message& msg, int line, int column) {
  return msg << " (semantics line " << line << ", column " << column << ")";
}

// The statements' own well-formedness: dims over alpha only, XLA's operand counts.
constexpr bool check_statements(const hlo::SemanticsOutline& sem, const Scope& scope, Message& msg) {
  for (std::size_t i = 0; i < sem.count; ++i) {
    const hlo::OutlineStatement& v = sem.statements[i];
    for (std::size_t d = 0; d < v.rank; ++d) {
      const hlo::OutlineDim& dim = v.dims[d];
      if (!dim.expression.empty() && !check_expression(dim.expression, "dimension", scope, Allowed::AlphaOnly, msg)) {
        at(msg, dim.line, dim.column);
        return false;
      }
    }
    if (v.opcode == hlo::Opcode::Parameter || v.opcode == hlo::Opcode::Constant) continue;
    const hlo::shape_rules::Finding f =
        v.reduce_add ? hlo::shape_rules::Finding{v.operand_count == 1 ? hlo::shape_rules::Problem::None
                                                                      : hlo::shape_rules::Problem::OperandCount,
                                                 0, 0, 0, static_cast<std::int64_t>(v.operand_count), 1}
                     : hlo::shape_rules::check_operand_count(v.opcode, v.operand_count);
    if (f.problem != hlo::shape_rules::Problem::None) {
      const bool variadic = !v.reduce_add && hlo::opcode_arity(v.opcode) < 0;
      msg << "'" << v.opcode_text << "' takes " << (variadic ? "at least " : "") << f.bound << " operand(s) but has "
          << f.value;
      at(msg, v.opcode_line, v.opcode_column);
      return false;
    }
  }
  return true;
}

constexpr bool check_semantics(const IsaView& isa, const Instruction& instr, const Scope& scope, Message& msg) {
  if (instr.semantics.empty()) {
    if (instr.outputs.empty()) return true;  // e.g. a configuration instruction that only updates state
    msg << "has outputs but no semantics";
    return false;
  }
  hlo::SemanticsOutline sem;
  if (const hlo::OutlineError e = hlo::outline_semantics(instr.semantics, sem); !e.ok()) {
    msg << e.what;
    if (!e.quoted.empty()) msg << " '" << e.quoted << "'";
    at(msg, e.line, e.column);
    return false;
  }
  if (sem.name != instr.name) {
    msg << "semantics block is named '" << sem.name << "' but the instruction is '" << instr.name << "'";
    return false;
  }
  if (!check_statements(sem, scope, msg)) return false;

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
      msg << "parameter(" << sem.statements[i].parameter << ") but the instruction has " << instr.inputs.size() << " input(s)";
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

constexpr bool check_slices(const IsaView& isa, const List<SliceMap, kMaxSlices>& slices, std::string_view kind,
                            const Scope& scope, Message& msg) {
  for (std::size_t k = 0; k < slices.size(); ++k) {
    const SliceMap& s = slices[k];
    const std::size_t number = kind == "input" ? k + 1 : k;  // In1.. and Out0..
    const int index = isa.buffer_index(s.buffer);  // not find_buffer: see ShapeChecker::check_slice
    if (index < 0) {
      msg << kind << " " << number << " names an unknown buffer '" << s.buffer << "'";
      return false;
    }
    const Buffer* buffer = &isa.buffers[static_cast<std::size_t>(index)];
    if (s.start.size() != buffer->access_dims.size() || s.length.size() != buffer->access_dims.size()) {
      msg << kind << " " << number << " on buffer '" << s.buffer << "' needs " << buffer->access_dims.size()
          << " start and length expression(s) (one per access dim), has " << s.start.size() << " and " << s.length.size();
      return false;
    }
    Message what;
    what << kind << " " << number << " start expression";
    for (auto e : s.start)
      if (!check_expression(e, what.view(), scope, Allowed::AttributesAndState, msg)) return false;
    Message what_len;
    what_len << kind << " " << number << " length expression";
    for (auto e : s.length)
      if (!check_expression(e, what_len.view(), scope, Allowed::AttributesAndState, msg)) return false;
  }
  return true;
}

constexpr bool check_instruction(const IsaView& isa, const Instruction& instr, Message& msg) {
  const Scope scope{&instr, isa.state};
  for (std::size_t i = 0; i < instr.alpha.size(); ++i) {
    if (!sym::try_parse(instr.alpha[i]).ok() || sym::try_parse(instr.alpha[i]).expr.top().op != sym::Op::Var) {
      msg << "alpha attribute '" << instr.alpha[i] << "' is not a valid name";
      return false;
    }
    for (std::size_t j = 0; j < i; ++j)
      if (instr.alpha[j] == instr.alpha[i]) {
        msg << "alpha attribute '" << instr.alpha[i] << "' is declared twice";
        return false;
      }
    if (scope.is_state(instr.alpha[i])) {
      msg << "alpha attribute '" << instr.alpha[i] << "' has the name of a state register";
      return false;
    }
  }
  for (std::size_t i = 0; i < instr.beta.size(); ++i) {
    if (!sym::try_parse(instr.beta[i]).ok() || sym::try_parse(instr.beta[i]).expr.top().op != sym::Op::Var) {
      msg << "beta attribute '" << instr.beta[i] << "' is not a valid name";
      return false;
    }
    for (std::size_t j = 0; j < i; ++j)
      if (instr.beta[j] == instr.beta[i]) {
        msg << "beta attribute '" << instr.beta[i] << "' is declared twice";
        return false;
      }
    if (scope.is_alpha(instr.beta[i])) {
      msg << "'" << instr.beta[i] << "' is declared both as alpha and as beta";
      return false;
    }
    if (scope.is_state(instr.beta[i])) {
      msg << "beta attribute '" << instr.beta[i] << "' has the name of a state register";
      return false;
    }
  }
  if (instr.outputs.empty() && instr.updates.empty()) {
    msg << "writes nothing: no outputs and no state updates";
    return false;
  }
  if (!check_slices(isa, instr.inputs, "input", scope, msg)) return false;
  if (!check_slices(isa, instr.outputs, "output", scope, msg)) return false;
  for (auto c : instr.constraints)
    if (!check_expression(c, "constraint", scope, Allowed::AttributesAndState, msg)) return false;
  for (const auto& u : instr.updates) {
    if (!scope.is_state(u.state)) {
      msg << "updates '" << u.state << "', which is not a declared state register";
      return false;
    }
    if (!check_expression(u.value, "state update value", scope, Allowed::AttributesAndState, msg)) return false;
  }
  if (!check_expression(instr.cost, "cost expression", scope, Allowed::AlphaOnly, msg)) return false;
  return check_semantics(isa, instr, scope, msg);
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

// ---- the C mapping (isa/c_mapping.hpp), when the ISA has one

constexpr bool is_attribute(const Instruction& instr, std::string_view name) {
  for (auto a : instr.alpha)
    if (a == name) return true;
  for (auto b : instr.beta)
    if (b == name) return true;
  return false;
}

// `$&name` needs an HBM slice of the instruction whose start is exactly `name`.
constexpr bool is_hbm_start(const IsaView& isa, const Instruction& instr, std::string_view name) {
  auto in = [&](const List<SliceMap, kMaxSlices>& slices) {
    for (const auto& s : slices) {
      const int b = isa.buffer_index(s.buffer);  // indices, not pointers: see ShapeChecker::check_slice
      if (b >= 0 && isa.buffers[b].is_hbm && s.start.size() == 1 && s.start[0] == name) return true;
    }
    return false;
  };
  return in(instr.inputs) || in(instr.outputs);
}

constexpr bool check_c_instruction(const IsaView& isa, const Instruction& instr, const CInstruction& c, Message& msg) {
  if (c.code.empty()) {
    msg << "C mapping: empty template";
    return false;
  }
  for (CPlaceholder p = next_c_placeholder(c.code, 0); p.begin < c.code.size(); p = next_c_placeholder(c.code, p.end)) {
    if (!is_attribute(instr, p.name)) {
      msg << "C mapping: the template uses $" << (p.pointer ? "&" : "") << p.name << ", which is no attribute of the instruction";
      return false;
    }
    if (p.pointer && !is_hbm_start(isa, instr, p.name)) {
      msg << "C mapping: $&" << p.name << " needs an HBM slice that starts at '" << p.name << "'";
      return false;
    }
  }
  if (c.features.empty()) {
    msg << "C mapping: the template names no CPU feature";
    return false;
  }
  for (auto f : c.features)
    if (!isa.c_mapping->has_feature(f)) {
      msg << "C mapping: unknown CPU feature '" << f << "'";
      return false;
    }
  return true;
}

// $BUF.units, $BUF.rows, $BUF.row_bytes of a non-HBM buffer with unit dims; nothing else.
constexpr bool check_c_feature_template(const IsaView& isa, std::string_view text, Message& msg) {
  for (CPlaceholder p = next_c_placeholder(text, 0); p.begin < text.size(); p = next_c_placeholder(text, p.end)) {
    const std::size_t dot = p.name.find('.');
    const std::string_view buffer = dot == std::string_view::npos ? std::string_view() : p.name.substr(0, dot);
    const std::string_view property = dot == std::string_view::npos ? std::string_view() : p.name.substr(dot + 1);
    const int b = isa.buffer_index(buffer);
    if (p.pointer || b < 0 || isa.buffers[b].is_hbm || isa.buffers[b].unit_dims.empty() ||
        (property != "units" && property != "rows" && property != "row_bytes")) {
      msg << "C mapping: a feature template uses $" << (p.pointer ? "&" : "") << p.name
          << " (allowed: $BUFFER.units, $BUFFER.rows, $BUFFER.row_bytes of a register buffer)";
      return false;
    }
  }
  return true;
}

constexpr bool check_c_mapping(const IsaView& isa, Message& msg) {
  const CMapping& m = *isa.c_mapping;
  for (std::size_t i = 0; i < m.features.size(); ++i) {
    if (m.features[i].name.empty() || m.features[i].usable.empty()) {
      msg << "C mapping: a CPU feature needs a name and a `usable` check";
      return false;
    }
    for (std::size_t j = 0; j < i; ++j)
      if (m.features[j].name == m.features[i].name) {
        msg << "C mapping: CPU feature '" << m.features[i].name << "' declared twice";
        return false;
      }
    if (!check_c_feature_template(isa, m.features[i].configure, msg)) return false;
  }
  for (const auto& r : m.registers) {
    const int b = isa.buffer_index(r.buffer);
    if (b < 0 || isa.buffers[b].is_hbm) {
      msg << "C mapping: register file '" << r.buffer << "' is not a non-HBM buffer of the ISA";
      return false;
    }
    for (std::string_view text : {r.declare, r.zero})
      for (CPlaceholder p = next_c_placeholder(text, 0); p.begin < text.size(); p = next_c_placeholder(text, p.end))
        if (p.pointer || p.name != "unit") {
          msg << "C mapping: register file '" << r.buffer << "' uses $" << p.name << " (only $unit)";
          return false;
        }
  }
  for (const auto& b : isa.buffers)
    if (!b.is_hbm && !m.has_registers(b.name)) {
      msg << "C mapping: buffer '" << b.name << "' has no register file";
      return false;
    }
  for (auto f : m.emulated_features)
    if (!m.has_feature(f)) {
      msg << "C mapping: unknown emulated CPU feature '" << f << "'";
      return false;
    }
  for (const auto& c : m.instructions)
    if (!isa.has_instruction(c.name)) {
      msg << "C mapping: '" << c.name << "' is no instruction of the ISA";
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

}  // namespace detail

namespace detail {
// `has_c_mapping` is passed in rather than read as `isa.c_mapping != nullptr`, for the reason
// given at ShapeChecker::check_slice.
constexpr Diagnostic diagnose(const IsaView& isa, bool has_c_mapping) {
  Diagnostic d;
  if (!detail::check_buffers_and_state(isa, d.message)) return d;
  for (std::size_t i = 0; i < isa.instructions.size(); ++i) {
    const Instruction& instr = isa.instructions[i];
    d.instruction = instr.name;
    if (instr.name.empty()) {
      d.message << "an instruction has no name";
      return d;
    }
    for (std::size_t j = 0; j < i; ++j)
      if (isa.instructions[j].name == instr.name) {
        d.message << "instruction name declared twice";
        return d;
      }
    if (!detail::check_instruction(isa, instr, d.message)) return d;
    if (has_c_mapping) {
      const std::size_t c = isa.c_mapping->index_of(instr.name);
      if (c == CMapping::npos) {
        d.message << "C mapping: no C template for this instruction";
        return d;
      }
      if (!detail::check_c_instruction(isa, instr, isa.c_mapping->instructions[c], d.message)) return d;
    }
  }
  d.instruction = {};
  if (has_c_mapping && !detail::check_c_mapping(isa, d.message)) return d;
  for (const Expansion& e : isa.expansions) {
    d.instruction = e.instruction;
    if (!detail::check_expansion(isa, e, d.message)) return d;
  }
  d.instruction = {};
  return d;
}
}  // namespace detail

// The first problem of a description, or an ok() Diagnostic. Never throws.
constexpr Diagnostic diagnose(const IsaView& isa) { return detail::diagnose(isa, isa.c_mapping != nullptr); }

template <class Isa>
consteval Diagnostic diagnose() {
  return detail::diagnose(view<Isa>(), HasCMapping<Isa>);
}

// Throws act::Error(ErrorKind::Isa, "instruction 'load_rm': ...") for an invalid description.
inline void check(const IsaView& isa) {
  const Diagnostic d = diagnose(isa);
  if (d.ok()) return;
  if (!d.instruction.empty())
    throw Error(ErrorKind::Isa, fmt::format("ISA '{}', instruction '{}': {}", isa.name, d.instruction, d.message.view()));
  throw Error(ErrorKind::Isa, fmt::format("ISA '{}': {}", isa.name, d.message.view()));
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

}  // namespace detail

// Instantiated by ACT_VALIDATE_ISA with the first problem found; when Ok is false the compiler
// reports this instantiation, and with it the instruction's name and the problem.
template <detail::FixedString Instruction, detail::FixedString Problem, bool Ok>
struct instruction_check {
  static_assert(Ok, "invalid ISA description: the instruction and the problem are the template arguments of "
                    "act::isa::instruction_check above");
  static constexpr bool ok = Ok;
};

template <class Isa>
struct Validation {
  static constexpr Diagnostic diagnostic = diagnose<Isa>();
  static constexpr std::string_view where = diagnostic.instruction.empty() ? std::string_view("(buffers)") : diagnostic.instruction;
  static constexpr bool ok =
      instruction_check<detail::FixedString<where.size()>(where),
                        detail::FixedString<diagnostic.message.size>(diagnostic.message.view()), diagnostic.ok()>::ok;
};

}  // namespace act::isa

// Put after an ISA definition: `ACT_VALIDATE_ISA(act::isa::Qkv);`
#define ACT_VALIDATE_ISA(...) \
  static_assert(::act::isa::Validation<__VA_ARGS__>::ok, "invalid ISA description (see the notes above)")
