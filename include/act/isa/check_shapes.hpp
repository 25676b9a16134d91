// The shape checks of ISA validation (isa/validate.hpp): for sample alpha values, every
// statement of an instruction's semantics must have the type XLA's shape rules
// (hlo/shape_rules.hpp) give its operands, each parameter exactly its input slice's shape and
// dtype, and each output value its output slice's dtype and element count.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "act/core/dtype.hpp"
#include "act/core/view.hpp"
#include "act/hlo/opcode.hpp"
#include "act/hlo/semantics_outline.hpp"
#include "act/hlo/shape_rules.hpp"
#include "act/isa/description.hpp"
#include "act/isa/diagnostic.hpp"
#include "act/sym/expr.hpp"

namespace act::isa::detail {

constexpr bool is_out_name(std::string_view name, std::size_t k) {
  // "Out<k>" with k in decimal.
  if (name.substr(0, 3) != "Out") return false;
  std::size_t value = 0;
  const std::string_view digits = name.substr(3);
  if (digits.empty() || digits.size() > 9) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  return value == k && (digits.size() == 1 || digits[0] != '0');
}

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

// Checks the data slices against the parameters and outputs, and each statement's type against
// XLA's shape rules, for samples of alpha. Reports the first problem of a sample, quoting the
// statement: a parameter whose shape disagrees with its slice is blamed before any statement
// that uses it.
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
    for (std::size_t k = 0; k < instr_.inputs.size(); ++k)
      for (std::size_t i = 0; i < sem_.count; ++i) {
        const hlo::OutlineStatement& v = sem_.statements[i];
        if (v.opcode == hlo::Opcode::Parameter && v.parameter == static_cast<std::int64_t>(k) &&
            !check_slice(instr_.inputs[k], v, shapes_[i], true, k))
          return false;
      }
    for (std::size_t i = 0; i < sem_.count; ++i)
      if (inputs_[i].checked && (first_sample || inputs_[i].depends_on_alpha) &&
          !check_statement(sem_.statements[i], shapes_[i], inputs_[i]))
        return false;
    for (std::size_t k = 0; k < instr_.outputs.size(); ++k)
      for (std::size_t i = 0; i < sem_.count; ++i) {
        const hlo::OutlineStatement& v = sem_.statements[i];
        const bool is_output = (k == 0 && v.root) || (k > 0 && is_out_name(v.name, k));
        if (is_output && !check_slice(instr_.outputs[k], v, shapes_[i], false, k)) return false;
      }
    return true;
  }

 private:
  // Starts a problem about statement v: "semantics line L '<statement>': ".
  constexpr Message& at(const hlo::OutlineStatement& v) { return text::semantics_line(msg_, instr_.semantics, v.line); }

  // Ends it with the sample the problem shows at; returns false.
  constexpr bool problem() {
    if (!instr_.alpha.empty()) msg_ << " (with every alpha = " << sample_ << ")";
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
        at(v) << "dimension `" << v.dims[d].expression << "` cannot be evaluated: " << r.error;
        return problem();
      }
      if (r.value < 0) {
        at(v) << "dimension `" << v.dims[d].expression << "` is negative (" << r.value << ")";
        return problem();
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
      at(v);
      explain(v, s, r.finding, operands);
      return problem();
    }
    if (!rules::same_dims(r.dimensions(), s.view())) {
      at(v) << v.opcode_text << " gives " << r.dimensions() << " from its operands, but the statement says " << s;
      return problem();
    }
    if (r.dtype != v.dtype) {
      for (std::size_t i = 0; i < v.operand_count; ++i)
        if (operands[i].dtype == r.dtype) {
          at(v) << "operand '" << who(v, static_cast<int>(i)) << "' is " << name(r.dtype) << " but the result is "
                << name(v.dtype);
          return problem();
        }
      at(v) << v.opcode_text << " gives " << name(r.dtype) << " from its operands, but the statement says " << name(v.dtype);
      return problem();
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

  // "s8[n,16]": the type a slice holds, its lengths as written plus the buffer's unit dims.
  static constexpr Message& slice_type(Message& m, const SliceMap& slice, const Buffer& buffer) {
    m << name(buffer.dtype) << "[";
    bool first = true;
    for (std::string_view length : slice.length) {
      m << (first ? "" : ",") << length;
      first = false;
    }
    for (std::int64_t u : buffer.unit_dims) {
      m << (first ? "" : ",") << u;
      first = false;
    }
    return m << "]";
  }

  // "s8[16,n]": a statement's type as written.
  static constexpr Message& written_type(Message& m, const hlo::OutlineStatement& v) {
    m << name(v.dtype) << "[";
    for (std::size_t d = 0; d < v.rank; ++d) {
      if (d) m << ",";
      if (v.dims[d].expression.empty()) m << v.dims[d].size;
      else m << v.dims[d].expression;
    }
    return m << "]";
  }

  constexpr bool check_slice(const SliceMap& slice, const hlo::OutlineStatement& v, const Shape& s, bool is_input, std::size_t k) {
    // Indices rather than pointers: g++'s -fsanitize=undefined makes null checks of pointers to
    // static data non-constant, which would break ACT_VALIDATE_ISA in sanitizer builds.
    const int index = isa_.buffer_index(slice.buffer);
    if (index < 0) return true;  // reported by the slice checks
    const Buffer& buffer = isa_.buffers[static_cast<std::size_t>(index)];
    Shape expected;
    for (std::string_view length : slice.length) {
      sym::EvalResult r = sym::try_evaluate(sym::try_parse(length).expr, env_);
      if (!r.ok()) return true;  // reported by the slice checks
      expected.dims[expected.rank++] = r.value;
    }
    for (std::int64_t u : buffer.unit_dims) expected.dims[expected.rank++] = u;
    const std::string_view value = is_input ? "parameter(" : "the value";
    if (v.dtype != buffer.dtype) {
      at(v) << value;
      if (is_input) msg_ << k << ")";
      msg_ << " is " << name(v.dtype) << ", but " << (is_input ? "input " : "output ") << (is_input ? k + 1 : k)
           << (is_input ? " reads " : " writes ") << name(buffer.dtype) << (is_input ? " from" : " to") << " buffer '"
           << buffer.name << "'";
      return false;
    }
    if (is_input && !(expected == s)) {
      written_type(at(v) << "parameter(" << k << ") is ", v) << ", but input " << k + 1 << " reads ";
      slice_type(msg_, slice, buffer) << " from buffer '" << buffer.name << "'";
      if (!instr_.alpha.empty()) msg_ << " (with every alpha = " << sample_ << ": " << s << " against " << expected << ")";
      else msg_ << " (" << s << " against " << expected << ")";
      return false;
    }
    if (!is_input && expected.elements() != s.elements()) {
      written_type(at(v) << "the value is ", v) << ", " << s.elements() << " elements, but output " << k << " writes ";
      slice_type(msg_, slice, buffer) << " to buffer '" << buffer.name << "', " << expected.elements() << " elements";
      return problem();
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

}  // namespace act::isa::detail
