// hlo::evaluate — the reference interpreter. It is the oracle that compiled code is judged by,
// so it favours plain, checkable semantics over speed (but keeps dot and elementwise ops typed).
//
// Numerics (XLA's CPU backend, see DESIGN.md):
//  - Integers wrap (two's complement). x / 0 = -1 (all ones), x % 0 = x, INT_MIN / -1 = INT_MIN,
//    INT_MIN % -1 = 0; remainder takes the dividend's sign. Shift amounts are read as unsigned;
//    amounts >= the bit width give 0 (shift-left, shift-right-logical) or the sign fill
//    (shift-right-arithmetic). Integer power with a negative exponent is 0 (except bases ±1).
//    pred behaves as a 1-bit unsigned integer (add = xor, not = logical not).
//  - bf16/f16 elementwise ops compute in f32 and round to nearest even once; f32 ops compute in
//    float (never double); f64 in double. maximum/minimum propagate NaN (lhs wins ties).
//    Transcendentals use the C++ standard library in that precision.
//  - compare: FLOAT (default for floats) is false on NaN except NE; TOTALORDER orders
//    -NaN < -Inf < -finite < -0 < +0 < +finite < +Inf < +NaN; SIGNED/UNSIGNED reinterpret integers.
//  - dot accumulates from 0 in the order of the contracting index (lexicographic over the
//    contracting dims in lhs_contracting_dims order): in f32 for bf16/f16/f32 operands (each
//    product rounded to f32), in f64 if an operand or the result is f64; then rounds once to the
//    result type. Integer operands accumulate in s32 with wrap (s64 if the result is 64-bit), and
//    the sum is converted to the result type.
//  - reduce applies to_apply as f(accumulator, element), starting from init, over the reduced
//    elements in row-major index order, in the reduction's element type (a bf16 reduce rounds
//    after every step).
//  - convert: float -> int truncates toward zero and saturates (NaN -> 0); -> pred is x != 0;
//    int -> float and float narrowing round to nearest even (single rounding, also for f64/s64
//    sources to bf16/f16); int -> int wraps.
//  - bitcast-convert reinterprets the little-endian row-major bytes (widths may differ: f32[10]
//    <-> u8[10,4]). reshape/copy keep the row-major data; bitcast also honours minor_to_major
//    layouts (a layout change is a transpose of the physical order); tiled layouts: Unsupported.
//  - dynamic-slice/dynamic-update-slice clamp each start index into [0, dim - size].
//
// Errors (act::Error): wrong argument count/shape -> Shape naming the parameter; malformed
// instructions (XLA's shape rules, hlo/shape_rules.hpp, checked before each instruction runs) -> Shape; an opcode or element type the interpreter lacks, dynamic shapes or an
// elided constant `{...}` -> Unsupported. Each carries the instruction's source location.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/hlo/evaluate_arrays.hpp"
#include "act/hlo/evaluate_numerics.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/shape_check.hpp"  // describe_finding
#include "act/hlo/shape_rules.hpp"

namespace act::hlo {

namespace eval_detail {

enum class Domain { Integer, Float32, Float64 };

inline Domain domain_of(DType t) {
  if (t == DType::f64) return Domain::Float64;
  if (is_float(t)) return Domain::Float32;
  return Domain::Integer;
}

inline bool is_permutation(std::span<const std::int64_t> perm, std::int64_t rank) {
  if (static_cast<std::int64_t>(perm.size()) != rank) return false;
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  for (auto p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<std::size_t>(p)]) return false;
    seen[static_cast<std::size_t>(p)] = true;
  }
  return true;
}

class Evaluator {
 public:
  explicit Evaluator(const Module& module) : module_(module) {}

  Literal run(const Computation& computation, std::span<const Literal> arguments) {
    // Called computations nest (reduce, call); a computation that calls itself must not overflow the stack.
    struct DepthGuard {
      int& depth;
      explicit DepthGuard(int& d) : depth(d) {
        if (++depth > kMaxCallDepth) {
          --depth;
          throw Error(ErrorKind::Shape, "evaluate: computations call each other more than 64 levels deep");
        }
      }
      ~DepthGuard() { --depth; }
    } guard(depth_);
    check_arguments(computation, arguments);
    const std::vector<int>& order = evaluation_order(computation);
    const std::size_t n = computation.instructions.size();
    std::vector<Literal> owned(n);
    std::vector<const Literal*> value(n, nullptr);
    std::vector<int> remaining_uses(n, 0);
    for (int i : order)
      for (int op : computation.instructions[static_cast<std::size_t>(i)].operands) ++remaining_uses[static_cast<std::size_t>(op)];

    std::vector<const Literal*> operands;
    for (int i : order) {
      const Instruction& instr = computation.instructions[static_cast<std::size_t>(i)];
      check_result_shape(instr, instr.shape);
      operands.clear();
      for (int op : instr.operands) operands.push_back(value[static_cast<std::size_t>(op)]);
      if (instr.opcode == Opcode::Parameter) {
        value[static_cast<std::size_t>(i)] = &arguments[static_cast<std::size_t>(instr.parameter_number)];
      } else if (instr.opcode == Opcode::Constant) {
        value[static_cast<std::size_t>(i)] = &constant(instr);
      } else {
        owned[static_cast<std::size_t>(i)] = evaluate_instruction(computation, instr, operands);
        value[static_cast<std::size_t>(i)] = &owned[static_cast<std::size_t>(i)];
      }
      // Free operands nobody needs any more (keeps big kernels' memory flat).
      for (int op : instr.operands)
        if (--remaining_uses[static_cast<std::size_t>(op)] == 0 && op != computation.root)
          owned[static_cast<std::size_t>(op)] = Literal();
    }
    const auto root = static_cast<std::size_t>(computation.root);
    if (value[root] == &owned[root]) return std::move(owned[root]);
    return *value[root];  // a parameter or constant
  }

 private:
  static constexpr int kMaxCallDepth = 64;
  static constexpr std::int64_t kMaxWhileIterations = 10'000'000;
  const Module& module_;
  std::unordered_map<const Computation*, std::vector<int>> orders_;
  int depth_ = 0;

  // ---- errors --------------------------------------------------------------------------------
  [[noreturn]] static void fail(ErrorKind kind, const Instruction& instr, const std::string& message) {
    throw Error(kind, fmt::format("evaluate: %{}: {}", instr.name, message), instr.location);
  }
  static void expect(bool condition, const Instruction& instr, const char* what) {
    if (!condition) fail(ErrorKind::Shape, instr, what);
  }
  template <class... Args>
  static void expect(bool condition, const Instruction& instr, fmt::format_string<Args...> f, Args&&... args) {
    if (!condition) fail(ErrorKind::Shape, instr, fmt::format(f, std::forward<Args>(args)...));
  }
  [[noreturn]] static void unsupported_opcode(const Instruction& instr) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("evaluate: opcode '{}' is not supported (%{})", opcode_name(instr.opcode), instr.name),
                instr.location);
  }

  static void check_result_shape(const Instruction& instr, const Shape& s) {
    if (s.is_tuple) {
      for (const auto& e : s.tuple_shapes) check_result_shape(instr, e);
      return;
    }
    if (!is_computable(s.dtype))
      throw Error(ErrorKind::Unsupported,
                  fmt::format("evaluate: element type {} is not supported (%{})", name(s.dtype), instr.name),
                  instr.location);
    if (!s.is_static())
      throw Error(ErrorKind::Unsupported,
                  fmt::format("evaluate: dynamic shape {} is not supported (%{})", to_string(s), instr.name), instr.location);
    for (auto d : s.dims) expect(d >= 0, instr, "negative dimension in {}", to_string(s));
  }

  // ---- setup ---------------------------------------------------------------------------------
  static void check_arguments(const Computation& c, std::span<const Literal> arguments) {
    std::vector<const Instruction*> params;
    for (const auto& instr : c.instructions)
      if (instr.opcode == Opcode::Parameter) {
        if (instr.parameter_number < 0 || instr.parameter_number >= static_cast<std::int64_t>(c.instructions.size()))
          fail(ErrorKind::Shape, instr, fmt::format("bad parameter number {}", instr.parameter_number));
        const auto k = static_cast<std::size_t>(instr.parameter_number);
        if (params.size() <= k) params.resize(k + 1, nullptr);
        params[k] = &instr;
      }
    if (arguments.size() != params.size())
      throw Error(ErrorKind::Shape, fmt::format("evaluate: computation '{}' takes {} parameter(s), got {} argument(s)",
                                                c.name, params.size(), arguments.size()));
    for (std::size_t k = 0; k < params.size(); ++k) {
      if (params[k] == nullptr)
        throw Error(ErrorKind::Shape, fmt::format("evaluate: computation '{}' has no parameter({})", c.name, k));
      if (!arguments[k].shape().same_type(params[k]->shape))
        throw Error(ErrorKind::Shape,
                    fmt::format("evaluate: parameter {} (%{}) expects {}, got {}", k, params[k]->name,
                                to_string(params[k]->shape), to_string(arguments[k].shape())),
                    params[k]->location);
    }
  }

  // Post-order from the root (operands before users); only what the root needs is evaluated.
  const std::vector<int>& evaluation_order(const Computation& c) {
    if (auto it = orders_.find(&c); it != orders_.end()) return it->second;
    const int n = static_cast<int>(c.instructions.size());
    if (c.root < 0 || c.root >= n) throw Error(ErrorKind::Shape, fmt::format("evaluate: computation '{}' has no root", c.name));
    std::vector<int> order;
    std::vector<char> state(static_cast<std::size_t>(n), 0);  // 0 new, 1 on stack, 2 done
    std::vector<std::pair<int, std::size_t>> stack{{c.root, 0}};
    state[static_cast<std::size_t>(c.root)] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const Instruction& instr = c.instructions[static_cast<std::size_t>(node)];
      if (next < instr.operands.size()) {
        const int op = instr.operands[next++];
        if (op < 0 || op >= n) fail(ErrorKind::Shape, instr, fmt::format("operand index {} out of range", op));
        if (state[static_cast<std::size_t>(op)] == 1) fail(ErrorKind::Shape, instr, "operands form a cycle");
        if (state[static_cast<std::size_t>(op)] == 0) {
          state[static_cast<std::size_t>(op)] = 1;
          stack.emplace_back(op, 0);
        }
      } else {
        state[static_cast<std::size_t>(node)] = 2;
        order.push_back(node);
        stack.pop_back();
      }
    }
    return orders_.emplace(&c, std::move(order)).first->second;
  }

  const Computation& called(const Instruction& instr, std::size_t k = 0) {
    expect(instr.called_computations.size() > k, instr, "missing called computation");
    const int idx = instr.called_computations[k];
    expect(idx >= 0 && idx < static_cast<int>(module_.computations.size()), instr, "called computation {} out of range", idx);
    return module_.computations[static_cast<std::size_t>(idx)];
  }

  static const Literal& constant(const Instruction& instr) {
    if (!instr.literal.has_value() && !instr.literal_text.empty())
      throw Error(ErrorKind::Unsupported, fmt::format("evaluate: constant %{} has a value the interpreter cannot hold", instr.name),
                  instr.location);
    expect(instr.literal.has_value(), instr, "constant without a value");
    if (instr.literal->elided)
      throw Error(ErrorKind::Unsupported, fmt::format("evaluate: constant %{} is elided ({{...}})", instr.name), instr.location);
    expect(instr.literal->shape().same_type(instr.shape), instr, "constant value {} does not match its shape {}",
           to_string(instr.literal->shape()), to_string(instr.shape));
    return *instr.literal;
  }

  // ---- dispatch ------------------------------------------------------------------------------
  Literal evaluate_instruction(const Computation& computation, const Instruction& instr, std::span<const Literal* const> ops) {
    const Opcode op = instr.opcode;
    check_shapes(instr, ops);
    switch (op) {
      case Opcode::Iota: return iota(instr, ops);
      case Opcode::Compare: return compare(instr, ops);
      case Opcode::Select: return select(instr, ops);
      case Opcode::Clamp: return clamp(instr, ops);
      case Opcode::Convert: return convert(instr, ops);
      case Opcode::BitcastConvert: return bitcast_convert(instr, ops);
      case Opcode::Reshape:
      case Opcode::Copy: return reshape(instr, ops);
      case Opcode::Bitcast: {
        // Literals carry no layout: the operand's layout is the one its instruction declares.
        expect(instr.operands.size() == 1, instr, "expects 1 operand(s), got {}", instr.operands.size());
        return bitcast(instr, computation.instructions[static_cast<std::size_t>(instr.operands[0])].shape, ops);
      }
      case Opcode::Transpose: return transpose(instr, ops);
      case Opcode::Broadcast: return broadcast(instr, ops);
      case Opcode::Slice: return slice(instr, ops);
      case Opcode::DynamicSlice: return dynamic_slice(instr, ops);
      case Opcode::DynamicUpdateSlice: return dynamic_update_slice(instr, ops);
      case Opcode::Concatenate: return concatenate(instr, ops);
      case Opcode::Pad: return pad(instr, ops);
      case Opcode::Reverse: return reverse(instr, ops);
      case Opcode::Reduce: return reduce(instr, ops);
      case Opcode::Dot: return dot(instr, ops);
      case Opcode::Tuple: return tuple(instr, ops);
      case Opcode::GetTupleElement: return get_tuple_element(instr, ops);
      case Opcode::Call:
      case Opcode::Fusion: return call(instr, ops);
      case Opcode::While: return while_loop(instr, ops);
      case Opcode::Conditional: return conditional(instr, ops);
      case Opcode::IsFinite: return is_finite(instr, ops);
      case Opcode::OptBarrier:
        expect(ops.size() == 1 && ops[0]->shape().same_type(instr.shape), instr, "opt-barrier must return its operand");
        return *ops[0];
      default: break;
    }
    if (float_unary_supported(op) || int_unary_supported(op)) return unary(instr, ops);
    if (float_binary_supported(op) || int_binary_supported(op)) return binary(instr, ops);
    unsupported_opcode(instr);
  }

  // XLA's shape rules over the operands as they are: the declared shape must be the one they
  // give (modules built without the parser arrive unchecked). The evaluation code below relies
  // on it: operand counts, arrays, attribute ranges and the result shape are checked here only.
  static void check_shapes(const Instruction& instr, std::span<const Literal* const> ops) {
    const Opcode op = instr.opcode;
    if (!shape_rules::has_rule(op) || op == Opcode::ReduceWindow) return;  // reduce-window: unsupported
    const shape_rules::Attributes a = rule_attributes(instr);
    if (const auto f = shape_rules::check_operand_count(op, ops.size()); f.problem != shape_rules::Problem::None)
      fail(ErrorKind::Shape, instr, describe_finding(f, op, {}, a, nullptr));
    std::vector<const Shape*> shapes;
    std::vector<shape_rules::TensorType> types;
    for (const Literal* l : ops) {
      expect(!l->is_tuple(), instr, "tuple operand where an array is expected");
      shapes.push_back(&l->shape());
      types.push_back({l->dtype(), l->shape().dims});
    }
    const bool tuple_result = op == Opcode::Reduce && ops.size() > 2;  // variadic reduce
    if (!tuple_result) expect(!instr.shape.is_tuple, instr, "result must be an array");
    const Shape* written = tuple_result ? nullptr : &instr.shape;
    const shape_rules::TensorType written_type{instr.shape.dtype, instr.shape.dims};
    const auto r = shape_rules::infer(op, types, a, written ? &written_type : nullptr);
    if (!r.ok()) fail(ErrorKind::Shape, instr, describe_finding(r.finding, op, shapes, a, written));
    Shape expected = shape_detail::to_shape(r);
    if (tuple_result) {
      std::vector<Shape> results;
      for (std::size_t k = ops.size() / 2; k < ops.size(); ++k) results.emplace_back(ops[k]->dtype(), expected.dims);
      expected = Shape::tuple(std::move(results));
    }
    expect(instr.shape.same_type(expected), instr, "result shape {} should be {}", to_string(instr.shape), to_string(expected));
  }

  // ---- elementwise ---------------------------------------------------------------------------
  Literal unary(const Instruction& instr, std::span<const Literal* const> ops) {
    const Literal& x = *ops[0];
    Literal out(instr.shape);
    switch (domain_of(x.dtype())) {
      case Domain::Float32: {
        if (!float_unary_supported(instr.opcode)) break;
        std::vector<float> v = decode_f32(x);
        for (float& e : v) e = float_unary(instr.opcode, e);
        encode_f32(out, v);
        return out;
      }
      case Domain::Float64: {
        if (!float_unary_supported(instr.opcode)) break;
        std::vector<double> v = decode_f64(x);
        for (double& e : v) e = float_unary(instr.opcode, e);
        encode_f64(out, v);
        return out;
      }
      case Domain::Integer: {
        if (!int_unary_supported(instr.opcode)) break;
        const IntType t = int_type(x.dtype());
        std::vector<std::int64_t> v = decode_int(x);
        for (auto& e : v) e = int_unary(instr.opcode, e, t);
        encode_int(out, v);
        return out;
      }
    }
    fail(ErrorKind::Shape, instr, fmt::format("{} is not defined on {}", opcode_name(instr.opcode), name(x.dtype())));
  }

  Literal binary(const Instruction& instr, std::span<const Literal* const> ops) {
    const Literal& a = *ops[0];
    const Literal& b = *ops[1];
    Literal out(instr.shape);
    const Opcode op = instr.opcode;
    switch (domain_of(a.dtype())) {
      case Domain::Float32: {
        if (!float_binary_supported(op)) break;
        std::vector<float> x = decode_f32(a);
        const std::vector<float> y = decode_f32(b);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = float_binary(op, x[i], y[i]);
        encode_f32(out, x);
        return out;
      }
      case Domain::Float64: {
        if (!float_binary_supported(op)) break;
        std::vector<double> x = decode_f64(a);
        const std::vector<double> y = decode_f64(b);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = float_binary(op, x[i], y[i]);
        encode_f64(out, x);
        return out;
      }
      case Domain::Integer: {
        if (!int_binary_supported(op)) break;
        const IntType t = int_type(a.dtype());
        std::vector<std::int64_t> x = decode_int(a);
        const std::vector<std::int64_t> y = decode_int(b);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = int_binary(op, x[i], y[i], t);
        encode_int(out, x);
        return out;
      }
    }
    fail(ErrorKind::Shape, instr, fmt::format("{} is not defined on {}", opcode_name(op), name(a.dtype())));
  }

  Literal compare(const Instruction& instr, std::span<const Literal* const> ops) {
    const Literal& a = *ops[0];
    const Literal& b = *ops[1];
    expect(instr.comparison_direction.has_value(), instr, "compare without direction");
    const ComparisonDirection dir = *instr.comparison_direction;
    const std::string& type = instr.comparison_type;
    const bool floating = is_float(a.dtype());
    if (!(type.empty() || type == "FLOAT" || type == "TOTALORDER" || type == "SIGNED" || type == "UNSIGNED"))
      throw Error(ErrorKind::Unsupported, fmt::format("evaluate: comparison type '{}' is not supported (%{})", type, instr.name),
                  instr.location);
    expect(floating ? (type != "SIGNED" && type != "UNSIGNED") : type != "FLOAT", instr,
           "comparison type {} does not fit {}", type, name(a.dtype()));
    Literal out(instr.shape);
    std::uint8_t* r = out.bytes().data();
    const std::int64_t n = a.element_count();
    if (floating) {
      const std::vector<double> x = decode_f64(a), y = decode_f64(b);  // exact for every float type
      const bool total = type == "TOTALORDER";
      const bool narrow = a.dtype() != DType::f64;
      for (std::int64_t i = 0; i < n; ++i) {
        bool v;
        if (!total) v = compare_ordered(dir, x[i], y[i]);
        else if (narrow) v = compare_ordered(dir, total_order_key(static_cast<float>(x[i])), total_order_key(static_cast<float>(y[i])));
        else v = compare_ordered(dir, total_order_key(x[i]), total_order_key(y[i]));
        r[i] = v ? 1 : 0;
      }
    } else {
      IntType t = int_type(a.dtype());
      if (type == "SIGNED") t.is_signed = true;
      if (type == "UNSIGNED") t.is_signed = false;
      std::vector<std::int64_t> x = decode_int(a), y = decode_int(b);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t u = canonical(static_cast<std::uint64_t>(x[i]), t), w = canonical(static_cast<std::uint64_t>(y[i]), t);
        if (t.is_signed) r[i] = compare_ordered(dir, u, w);
        else r[i] = compare_ordered(dir, static_cast<std::uint64_t>(u), static_cast<std::uint64_t>(w));
      }
    }
    return out;
  }

  Literal select(const Instruction& instr, std::span<const Literal* const> ops) {
    const Literal &p = *ops[0], &t = *ops[1], &f = *ops[2];
    Literal out(instr.shape);
    const auto w = static_cast<std::size_t>(byte_width(t.dtype()));
    const bool scalar = p.shape().rank() == 0;
    const std::int64_t n = t.element_count();
    for (std::int64_t i = 0; i < n; ++i) {
      const bool take = p.bytes()[static_cast<std::size_t>(scalar ? 0 : i)] != 0;
      std::memcpy(out.bytes().data() + i * w, (take ? t : f).bytes().data() + i * w, w);
    }
    return out;
  }

  Literal clamp(const Instruction& instr, std::span<const Literal* const> ops) {
    const Literal &lo = *ops[0], &x = *ops[1], &hi = *ops[2];
    Literal out(instr.shape);
    const std::size_t slo = lo.shape().rank() == 0 ? 0 : 1, shi = hi.shape().rank() == 0 ? 0 : 1;
    auto apply_all = [&](auto l, auto v, auto h, auto&& apply) {
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = apply(v[i], l[i * slo], h[i * shi]);
      return v;
    };
    switch (domain_of(x.dtype())) {
      case Domain::Float32:
        encode_f32(out, apply_all(decode_f32(lo), decode_f32(x), decode_f32(hi), [](float v, float l, float h) {
                     return float_binary(Opcode::Minimum, float_binary(Opcode::Maximum, v, l), h);
                   }));
        break;
      case Domain::Float64:
        encode_f64(out, apply_all(decode_f64(lo), decode_f64(x), decode_f64(hi), [](double v, double l, double h) {
                     return float_binary(Opcode::Minimum, float_binary(Opcode::Maximum, v, l), h);
                   }));
        break;
      case Domain::Integer: {
        const IntType t = int_type(x.dtype());
        encode_int(out, apply_all(decode_int(lo), decode_int(x), decode_int(hi), [t](std::int64_t v, std::int64_t l, std::int64_t h) {
                     return int_binary(Opcode::Minimum, int_binary(Opcode::Maximum, v, l, t), h, t);
                   }));
        break;
      }
    }
    return out;
  }

  static Literal iota(const Instruction& instr, std::span<const Literal* const>) {
    const Shape& s = instr.shape;
    Literal out(s);
    const auto dim = static_cast<std::size_t>(instr.iota_dimension);
    const std::int64_t stride = row_major_strides(s.dims)[dim];
    for (std::int64_t i = 0; i < out.element_count(); ++i) {
      const std::int64_t v = (i / stride) % s.dims[dim];
      if (is_float(s.dtype)) out.set_float(i, static_cast<double>(v));
      else out.set_int(i, v);
    }
    return out;
  }

  // ---- conversions ---------------------------------------------------------------------------
  static Literal convert_literal(const Literal& x, const Shape& to) {
    Literal out(to);
    const DType t = to.dtype;
    const std::int64_t n = x.element_count();
    if (is_float(x.dtype())) {
      const std::vector<double> v = decode_f64(x);  // exact
      for (std::int64_t i = 0; i < n; ++i) {
        const double d = v[static_cast<std::size_t>(i)];
        switch (t) {
          case DType::f64: out.set_bits(i, std::bit_cast<std::uint64_t>(d)); break;
          case DType::f32: out.set_bits(i, std::bit_cast<std::uint32_t>(static_cast<float>(d))); break;
          case DType::bf16: out.set_bits(i, f32_to_bf16_bits(double_to_float_round_odd(d))); break;
          case DType::f16: out.set_bits(i, f32_to_f16_bits(double_to_float_round_odd(d))); break;
          default: out.set_bits(i, static_cast<std::uint64_t>(float_to_integer(d, t)));
        }
      }
    } else {
      const std::vector<std::int64_t> v = decode_int(x);
      const bool unsigned64 = x.dtype() == DType::u64;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t s = v[static_cast<std::size_t>(i)];
        const auto u = static_cast<std::uint64_t>(s);
        const bool negative = !unsigned64 && s < 0;
        switch (t) {
          case DType::f64:
            out.set_bits(i, std::bit_cast<std::uint64_t>(unsigned64 ? static_cast<double>(u) : static_cast<double>(s)));
            break;
          case DType::f32:
            out.set_bits(i, std::bit_cast<std::uint32_t>(unsigned64 ? static_cast<float>(u) : static_cast<float>(s)));
            break;
          case DType::bf16:
          case DType::f16: {
            const float f = integer_to_float_round_odd(negative, negative ? std::uint64_t{0} - u : u);
            out.set_bits(i, t == DType::bf16 ? f32_to_bf16_bits(f) : f32_to_f16_bits(f));
            break;
          }
          case DType::pred: out.set_bits(i, s != 0 ? 1 : 0); break;
          default: out.set_bits(i, u);  // set_bits keeps the low bytes: wraps
        }
      }
    }
    return out;
  }

  Literal convert(const Instruction& instr, std::span<const Literal* const> ops) {
    return convert_literal(*ops[0], instr.shape);
  }

  static Literal bitcast_convert(const Instruction& instr, std::span<const Literal* const> ops) {
    return Literal::from_bytes(instr.shape, ops[0]->bytes());
  }

  // ---- data movement -------------------------------------------------------------------------
  static Literal reshape(const Instruction& instr, std::span<const Literal* const> ops) {
    return Literal::from_bytes(instr.shape, ops[0]->bytes());
  }

  static Literal transpose_literal(const Literal& x, std::span<const std::int64_t> perm, const Shape& result) {
    Literal out(result);
    const std::vector<std::int64_t> in_strides = row_major_strides(x.shape().dims);
    StridedView src{0, {}};
    for (auto p : perm) src.strides.push_back(in_strides[static_cast<std::size_t>(p)]);
    copy_strided(out.bytes(), row_major_view(result.dims), x.bytes(), src, result.dims, byte_width(x.dtype()));
    return out;
  }

  Literal transpose(const Instruction& instr, std::span<const Literal* const> ops) {
    return transpose_literal(*ops[0], instr.dimensions, instr.shape);
  }

  // Bitcast = reinterpretation of the physical bytes. Without layouts (or with equal row-major
  // ones) that is a reshape; with minor_to_major permutations it moves data.
  Literal bitcast(const Instruction& instr, const Shape& operand_shape, std::span<const Literal* const> ops) {
    expect(ops.size() == 1 && !ops[0]->is_tuple() && !instr.shape.is_tuple, instr, "bitcast takes one array to an array");
    const Literal& x = *ops[0];
    expect(operand_shape.same_type(x.shape()), instr, "operand is {}, declared {}", to_string(x.shape()), to_string(operand_shape));
    const Shape& in = operand_shape;
    const Shape& out = instr.shape;
    for (const Shape* s : {&in, &out})
      if (s->has_layout && !s->layout.tiles.empty())
        throw Error(ErrorKind::Unsupported, fmt::format("evaluate: bitcast with a tiled layout is not supported (%{})", instr.name),
                    instr.location);
    expect(byte_width(in.dtype) == byte_width(out.dtype) && in.element_count() == out.element_count(), instr,
           "bitcast from {} to {} changes the data size", to_string(in), to_string(out));
    // Major-to-minor logical dimension order of each side.
    auto physical_order = [&](const Shape& s) {
      std::vector<std::int64_t> m2m = s.minor_to_major();
      expect(is_permutation(m2m, s.rank()), instr, "bad layout on {}", to_string(s));
      std::reverse(m2m.begin(), m2m.end());
      return m2m;
    };
    const std::vector<std::int64_t> in_order = physical_order(in), out_order = physical_order(out);
    std::vector<std::int64_t> in_phys_dims, out_phys_dims;
    for (auto d : in_order) in_phys_dims.push_back(in.dims[static_cast<std::size_t>(d)]);
    for (auto d : out_order) out_phys_dims.push_back(out.dims[static_cast<std::size_t>(d)]);
    const Literal physical = transpose_literal(x, in_order, Shape(in.dtype, in_phys_dims));  // uses x's dims only
    const Literal out_physical = Literal::from_bytes(Shape(out.dtype, out_phys_dims), physical.bytes());
    std::vector<std::int64_t> inverse(out_order.size());
    for (std::size_t i = 0; i < out_order.size(); ++i) inverse[static_cast<std::size_t>(out_order[i])] = static_cast<std::int64_t>(i);
    return transpose_literal(out_physical, inverse, out);
  }

  Literal broadcast(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& in = ops[0]->shape();
    const Shape& out = instr.shape;
    const std::vector<std::int64_t> in_strides = row_major_strides(in.dims);
    StridedView src{0, std::vector<std::int64_t>(out.dims.size(), 0)};
    for (std::size_t k = 0; k < instr.dimensions.size(); ++k) {
      const auto d = static_cast<std::size_t>(instr.dimensions[k]);
      src.strides[d] = in.dims[k] == out.dims[d] ? in_strides[k] : 0;
    }
    Literal result(out);
    copy_strided(result.bytes(), row_major_view(out.dims), ops[0]->bytes(), src, out.dims, byte_width(in.dtype));
    return result;
  }

  Literal slice(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& in = ops[0]->shape();
    const std::vector<std::int64_t>& dims = instr.shape.dims;
    const std::vector<std::int64_t> in_strides = row_major_strides(in.dims);
    StridedView src;
    for (std::size_t d = 0; d < instr.slice.size(); ++d) {
      const SliceRange& r = instr.slice[d];
      src.offset += r.start * in_strides[d];
      src.strides.push_back(r.stride * in_strides[d]);
    }
    Literal out(instr.shape);
    copy_strided(out.bytes(), row_major_view(dims), ops[0]->bytes(), src, dims, byte_width(in.dtype));
    return out;
  }

  // Start indices: `rank` scalar operands from `first`, or one rank-1 vector (the legacy form).
  static std::vector<std::int64_t> start_indices(std::span<const Literal* const> ops, std::size_t first,
                                          std::int64_t rank) {
    std::vector<std::int64_t> starts;
    auto read = [&](const Literal& l, std::int64_t i) {
      const std::int64_t v = l.get_int(i);
      // A u64 index above INT64_MAX reads as negative: clamp it high, not low.
      return (l.dtype() == DType::u64 && v < 0) ? std::numeric_limits<std::int64_t>::max() : v;
    };
    if (ops.size() == first + 1 && rank != 1 && ops[first]->shape().rank() == 1) {  // the legacy index vector
      for (std::int64_t i = 0; i < rank; ++i) starts.push_back(read(*ops[first], i));
    } else {
      for (std::size_t k = first; k < ops.size(); ++k) starts.push_back(read(*ops[k], 0));
    }
    return starts;
  }

  Literal dynamic_slice(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& in = ops[0]->shape();
    std::vector<std::int64_t> starts = start_indices(ops, 1, in.rank());
    const std::vector<std::int64_t>& sizes = instr.dynamic_slice_sizes;
    const std::vector<std::int64_t> in_strides = row_major_strides(in.dims);
    StridedView src{0, in_strides};
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      src.offset += std::clamp<std::int64_t>(starts[d], 0, in.dims[d] - sizes[d]) * in_strides[d];
    }
    Literal out(instr.shape);
    copy_strided(out.bytes(), row_major_view(sizes), ops[0]->bytes(), src, sizes, byte_width(in.dtype));
    return out;
  }

  Literal dynamic_update_slice(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& in = ops[0]->shape();
    const Shape& upd = ops[1]->shape();
    std::vector<std::int64_t> starts = start_indices(ops, 2, in.rank());
    Literal out = Literal::from_bytes(instr.shape, ops[0]->bytes());
    const std::vector<std::int64_t> strides = row_major_strides(in.dims);
    StridedView dst{0, strides};
    for (std::size_t d = 0; d < in.dims.size(); ++d) {
      dst.offset += std::clamp<std::int64_t>(starts[d], 0, in.dims[d] - upd.dims[d]) * strides[d];
    }
    copy_strided(out.bytes(), dst, ops[1]->bytes(), row_major_view(upd.dims), upd.dims, byte_width(in.dtype));
    return out;
  }

  Literal concatenate(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& first = ops[0]->shape();
    const auto dim = static_cast<std::size_t>(instr.dimensions[0]);
    const std::vector<std::int64_t>& dims = instr.shape.dims;
    Literal out(instr.shape);
    StridedView dst = row_major_view(dims);
    for (const Literal* l : ops) {
      copy_strided(out.bytes(), dst, l->bytes(), row_major_view(l->shape().dims), l->shape().dims, byte_width(first.dtype));
      dst.offset += l->shape().dims[dim] * dst.strides[dim];
    }
    return out;
  }

  Literal pad(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& in = ops[0]->shape();
    const Literal& value = *ops[1];
    const std::vector<std::int64_t>& dims = instr.shape.dims;
    Literal out(instr.shape);
    const auto w = static_cast<std::size_t>(byte_width(in.dtype));
    for (std::int64_t i = 0; i < out.element_count(); ++i) std::memcpy(out.bytes().data() + i * static_cast<std::int64_t>(w), value.bytes().data(), w);
    // Operand element i of a dimension lands at low + i*(interior+1); keep those inside [0, size).
    const std::vector<std::int64_t> in_strides = row_major_strides(in.dims), out_strides = row_major_strides(dims);
    StridedView src, dst;
    std::vector<std::int64_t> extents;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const PadDimension& p = instr.padding[d];
      const std::int64_t step = p.interior + 1;
      std::int64_t first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
      std::int64_t last = in.dims[d] - 1;
      if (p.low + last * step > dims[d] - 1) last = p.low > dims[d] - 1 ? -1 : (dims[d] - 1 - p.low) / step;
      extents.push_back(std::max<std::int64_t>(last - first + 1, 0));
      src.offset += first * in_strides[d];
      src.strides.push_back(in_strides[d]);
      dst.offset += (p.low + first * step) * out_strides[d];
      dst.strides.push_back(step * out_strides[d]);
    }
    copy_strided(out.bytes(), dst, ops[0]->bytes(), src, extents, static_cast<int>(w));
    return out;
  }

  Literal reverse(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& in = ops[0]->shape();
    StridedView src = row_major_view(in.dims);
    for (auto d : instr.dimensions) {
      const auto k = static_cast<std::size_t>(d);
      src.offset += (in.dims[k] - 1) * src.strides[k];
      src.strides[k] = -src.strides[k];
    }
    Literal out(instr.shape);
    copy_strided(out.bytes(), row_major_view(in.dims), ops[0]->bytes(), src, in.dims, byte_width(in.dtype));
    return out;
  }

  // ---- reduce --------------------------------------------------------------------------------
  // to_apply of the form op(p0, p1) (or op(p1, p0)) on scalars of the element type: the fast path.
  struct SimpleReducer {
    Opcode op;
    bool swapped;
  };
  static std::optional<SimpleReducer> simple_reducer(const Computation& c, DType t) {
    if (c.root < 0 || c.root >= static_cast<int>(c.instructions.size())) return std::nullopt;
    const Instruction& root = c.root_instruction();
    if (root.operands.size() != 2 || root.shape.is_tuple || root.shape.rank() != 0 || root.shape.dtype != t) return std::nullopt;
    const bool supported = domain_of(t) == Domain::Integer ? int_binary_supported(root.opcode) : float_binary_supported(root.opcode);
    if (!supported) return std::nullopt;
    std::int64_t numbers[2];
    for (int k = 0; k < 2; ++k) {
      const int i = root.operands[static_cast<std::size_t>(k)];
      if (i < 0 || i >= static_cast<int>(c.instructions.size())) return std::nullopt;
      const Instruction& p = c.instructions[static_cast<std::size_t>(i)];
      if (p.opcode != Opcode::Parameter || p.shape.is_tuple || p.shape.rank() != 0 || p.shape.dtype != t) return std::nullopt;
      numbers[k] = p.parameter_number;
    }
    if (numbers[0] == 0 && numbers[1] == 1) return SimpleReducer{root.opcode, false};
    if (numbers[0] == 1 && numbers[1] == 0) return SimpleReducer{root.opcode, true};
    return std::nullopt;
  }

  template <class T, class Step>
  static void reduce_typed(std::vector<T>& acc, const std::vector<T>& x, std::span<const std::int64_t> kept_offsets,
                           std::span<const std::int64_t> reduced_offsets, Step step) {
    for (std::size_t o = 0; o < kept_offsets.size(); ++o) {
      T a = acc[o];
      const T* base = x.data() + kept_offsets[o];
      for (std::int64_t r : reduced_offsets) a = step(a, base[r]);
      acc[o] = a;
    }
  }

  // Offsets (row-major, in elements) of every index over `dims_subset` of a shape, in row-major order.
  static std::vector<std::int64_t> offsets_over(const Shape& s, std::span<const std::int64_t> dims_subset) {
    const std::vector<std::int64_t> strides = row_major_strides(s.dims);
    std::vector<std::int64_t> offsets{0};
    for (auto d : dims_subset) {
      std::vector<std::int64_t> next;
      next.reserve(offsets.size() * static_cast<std::size_t>(s.dims[static_cast<std::size_t>(d)]));
      for (auto o : offsets)
        for (std::int64_t i = 0; i < s.dims[static_cast<std::size_t>(d)]; ++i) next.push_back(o + i * strides[static_cast<std::size_t>(d)]);
      offsets = std::move(next);
    }
    return offsets;
  }

  Literal reduce(const Instruction& instr, std::span<const Literal* const> ops) {
    const std::size_t n = ops.size() / 2;
    const Shape& in = ops[0]->shape();
    for (std::size_t k = 0; k < n; ++k)  // the interpreter reduces in the input's element type
      expect(ops[n + k]->dtype() == ops[k]->dtype(), instr, "init value {} must be a {} scalar", k, name(ops[k]->dtype()));
    std::vector<std::int64_t> reduced = instr.dimensions;
    std::sort(reduced.begin(), reduced.end());
    std::vector<std::int64_t> kept, out_dims;
    for (std::int64_t d = 0; d < in.rank(); ++d)
      if (!std::binary_search(reduced.begin(), reduced.end(), d)) {
        kept.push_back(d);
        out_dims.push_back(in.dims[static_cast<std::size_t>(d)]);
      }
    std::vector<Shape> out_shapes;
    for (std::size_t k = 0; k < n; ++k) out_shapes.emplace_back(ops[k]->dtype(), out_dims);
    const Computation& to_apply = called(instr);
    const std::vector<std::int64_t> kept_offsets = offsets_over(in, kept);
    const std::vector<std::int64_t> reduced_offsets = offsets_over(in, reduced);

    if (n == 1) {
      const DType t = in.dtype;
      if (auto simple = simple_reducer(to_apply, t)) {
        const Opcode op = simple->op;
        const bool swapped = simple->swapped;
        Literal out(instr.shape);
        switch (domain_of(t)) {
          case Domain::Float32: {
            std::vector<float> acc(kept_offsets.size(), decode_f32(*ops[1])[0]);
            reduce_typed(acc, decode_f32(*ops[0]), kept_offsets, reduced_offsets, [op, swapped, t](float a, float x) {
              return round_to(t, swapped ? float_binary(op, x, a) : float_binary(op, a, x));
            });
            encode_f32(out, acc);
            break;
          }
          case Domain::Float64: {
            std::vector<double> acc(kept_offsets.size(), decode_f64(*ops[1])[0]);
            reduce_typed(acc, decode_f64(*ops[0]), kept_offsets, reduced_offsets,
                         [op, swapped](double a, double x) { return swapped ? float_binary(op, x, a) : float_binary(op, a, x); });
            encode_f64(out, acc);
            break;
          }
          case Domain::Integer: {
            const IntType it = int_type(t);
            std::vector<std::int64_t> acc(kept_offsets.size(), decode_int(*ops[1])[0]);
            reduce_typed(acc, decode_int(*ops[0]), kept_offsets, reduced_offsets, [op, swapped, it](std::int64_t a, std::int64_t x) {
              return swapped ? int_binary(op, x, a, it) : int_binary(op, a, x, it);
            });
            encode_int(out, acc);
            break;
          }
        }
        return out;
      }
    }

    // General path: run to_apply on scalar literals, (accumulators..., elements...) -> result.
    std::vector<Literal> args;
    for (std::size_t k = 0; k < n; ++k) args.emplace_back(Shape(ops[k]->dtype(), {}));
    for (std::size_t k = 0; k < n; ++k) args.emplace_back(Shape(ops[k]->dtype(), {}));
    std::vector<Literal> results;
    for (std::size_t k = 0; k < n; ++k) results.emplace_back(out_shapes[k]);
    for (std::size_t o = 0; o < kept_offsets.size(); ++o) {
      for (std::size_t k = 0; k < n; ++k) std::ranges::copy(ops[n + k]->bytes(), args[k].bytes().begin());
      for (std::int64_t r : reduced_offsets) {
        for (std::size_t k = 0; k < n; ++k) {
          const auto w = static_cast<std::size_t>(byte_width(ops[k]->dtype()));
          std::memcpy(args[n + k].bytes().data(), ops[k]->bytes().data() + (kept_offsets[o] + r) * static_cast<std::int64_t>(w), w);
        }
        Literal step = run(to_apply, args);
        if (n == 1) {
          expect(step.shape().same_type(args[0].shape()), instr, "to_apply returns {}, expected {}", to_string(step.shape()),
                 to_string(args[0].shape()));
          args[0] = std::move(step);
        } else {
          expect(step.is_tuple() && step.elements().size() == n, instr, "to_apply must return a {}-tuple", n);
          for (std::size_t k = 0; k < n; ++k) {
            expect(step.elements()[k].shape().same_type(args[k].shape()), instr, "to_apply result {} has the wrong type", k);
            args[k] = std::move(step.elements()[k]);
          }
        }
      }
      for (std::size_t k = 0; k < n; ++k) {
        const auto w = static_cast<std::size_t>(byte_width(ops[k]->dtype()));
        std::memcpy(results[k].bytes().data() + o * w, args[k].bytes().data(), w);
      }
    }
    if (n == 1) return Literal::from_bytes(instr.shape, results[0].bytes());
    return Literal::tuple(std::move(results));
  }

  // ---- dot -----------------------------------------------------------------------------------
  Literal dot(const Instruction& instr, std::span<const Literal* const> ops) {
    const Shape& ls = ops[0]->shape();
    const Shape& rs = ops[1]->shape();
    const DotDimensions& dd = instr.dot;
    std::vector<std::int64_t> lhs_used = dd.lhs_batch, rhs_used = dd.rhs_batch;
    lhs_used.insert(lhs_used.end(), dd.lhs_contracting.begin(), dd.lhs_contracting.end());
    rhs_used.insert(rhs_used.end(), dd.rhs_contracting.begin(), dd.rhs_contracting.end());
    auto free_dims = [](const Shape& s, const std::vector<std::int64_t>& used) {
      std::vector<std::int64_t> f;
      for (std::int64_t d = 0; d < s.rank(); ++d)
        if (std::find(used.begin(), used.end(), d) == used.end()) f.push_back(d);
      return f;
    };
    const std::vector<std::int64_t> lhs_free = free_dims(ls, lhs_used), rhs_free = free_dims(rs, rhs_used);
    std::int64_t B = 1, M = 1, N = 1, K = 1;
    for (auto d : dd.lhs_batch) B *= ls.dims[static_cast<std::size_t>(d)];
    for (auto d : lhs_free) M *= ls.dims[static_cast<std::size_t>(d)];
    for (auto d : rhs_free) N *= rs.dims[static_cast<std::size_t>(d)];
    for (auto d : dd.lhs_contracting) K *= ls.dims[static_cast<std::size_t>(d)];
    const std::vector<std::int64_t>& out_dims = instr.shape.dims;  // batch, lhs free, rhs free (checked)

    // Bring lhs to [batch, free, contracting] = [B, M, K] and rhs to [batch, contracting, free] = [B, K, N].
    auto arrange = [](const Literal& x, std::vector<std::int64_t> perm) {
      std::vector<std::int64_t> dims;
      for (auto p : perm) dims.push_back(x.shape().dims[static_cast<std::size_t>(p)]);
      return transpose_literal(x, perm, Shape(x.dtype(), dims));
    };
    std::vector<std::int64_t> lperm = dd.lhs_batch, rperm = dd.rhs_batch;
    lperm.insert(lperm.end(), lhs_free.begin(), lhs_free.end());
    lperm.insert(lperm.end(), dd.lhs_contracting.begin(), dd.lhs_contracting.end());
    rperm.insert(rperm.end(), dd.rhs_contracting.begin(), dd.rhs_contracting.end());
    rperm.insert(rperm.end(), rhs_free.begin(), rhs_free.end());
    const Literal lhs = arrange(*ops[0], lperm), rhs = arrange(*ops[1], rperm);

    const DType result = instr.shape.dtype;
    Literal out(instr.shape);
    const bool integer_operands = !is_float(ls.dtype) && !is_float(rs.dtype);
    if (integer_operands) {
      const std::vector<std::int64_t> a = decode_int(lhs), b = decode_int(rhs);
      std::vector<std::uint64_t> acc(static_cast<std::size_t>(B * M * N), 0);
      for (std::int64_t bi = 0; bi < B; ++bi)
        for (std::int64_t i = 0; i < M; ++i) {
          std::uint64_t* c = acc.data() + (bi * M + i) * N;
          for (std::int64_t k = 0; k < K; ++k) {
            const auto x = static_cast<std::uint64_t>(a[static_cast<std::size_t>((bi * M + i) * K + k)]);
            const std::int64_t* brow = b.data() + (bi * K + k) * N;
            for (std::int64_t j = 0; j < N; ++j) c[j] += x * static_cast<std::uint64_t>(brow[j]);
          }
        }
      const IntType acc_type{(result == DType::s64 || result == DType::u64) ? 64 : 32, true};
      Literal sums(Shape(acc_type.bits == 64 ? DType::s64 : DType::s32, out_dims));
      for (std::size_t i = 0; i < acc.size(); ++i) sums.set_bits(static_cast<std::int64_t>(i), static_cast<std::uint64_t>(canonical(acc[i], acc_type)));
      return convert_literal(sums, instr.shape);
    }
    if (result == DType::f64 || ls.dtype == DType::f64 || rs.dtype == DType::f64) {
      const std::vector<double> a = decode_f64(lhs), b = decode_f64(rhs);
      std::vector<double> acc(static_cast<std::size_t>(B * M * N), 0.0);
      matmul(a, b, acc, B, M, N, K, [](double x, double y) { return x * y; });
      Literal sums(Shape(DType::f64, out_dims));
      encode_f64(sums, acc);
      return result == DType::f64 ? sums : convert_literal(sums, instr.shape);
    }
    const std::vector<float> a = decode_f32(lhs), b = decode_f32(rhs);
    std::vector<float> acc(static_cast<std::size_t>(B * M * N), 0.0f);
    // The product is computed exactly in double and rounded once to f32, so a compiler that
    // contracts multiply-add into FMA cannot change the result.
    matmul(a, b, acc, B, M, N, K, [](float x, float y) { return static_cast<float>(static_cast<double>(x) * y); });
    if (is_float(result) && result != DType::f64) {
      encode_f32(out, acc);
      return out;
    }
    Literal sums(Shape(DType::f32, out_dims));
    encode_f32(sums, acc);
    return convert_literal(sums, instr.shape);
  }

  // c[b,i,j] += product(a[b,i,k], b[b,k,j]) for k = 0..K-1 in order (vectorises over j).
  template <class T, class Product>
  static void matmul(const std::vector<T>& a, const std::vector<T>& b, std::vector<T>& c, std::int64_t B, std::int64_t M,
                     std::int64_t N, std::int64_t K, Product product) {
    for (std::int64_t bi = 0; bi < B; ++bi)
      for (std::int64_t i = 0; i < M; ++i) {
        T* crow = c.data() + (bi * M + i) * N;
        for (std::int64_t k = 0; k < K; ++k) {
          const T x = a[static_cast<std::size_t>((bi * M + i) * K + k)];
          const T* brow = b.data() + (bi * K + k) * N;
          for (std::int64_t j = 0; j < N; ++j) crow[j] += product(x, brow[j]);
        }
      }
  }

  // ---- tuples and calls ----------------------------------------------------------------------
  Literal tuple(const Instruction& instr, std::span<const Literal* const> ops) {
    std::vector<Literal> elements;
    for (const Literal* l : ops) elements.push_back(*l);
    Literal out = Literal::tuple(std::move(elements));
    expect(out.shape().same_type(instr.shape), instr, "result shape {} should be {}", to_string(instr.shape), to_string(out.shape()));
    return out;
  }

  Literal get_tuple_element(const Instruction& instr, std::span<const Literal* const> ops) {
    expect(ops.size() == 1 && ops[0]->is_tuple(), instr, "get-tuple-element needs one tuple operand");
    const auto& elements = ops[0]->elements();
    expect(instr.tuple_index >= 0 && instr.tuple_index < static_cast<std::int64_t>(elements.size()), instr,
           "index={} out of range for a {}-tuple", instr.tuple_index, elements.size());
    const Literal& e = elements[static_cast<std::size_t>(instr.tuple_index)];
    expect(e.shape().same_type(instr.shape), instr, "result shape {} should be {}", to_string(instr.shape), to_string(e.shape()));
    return e;
  }

  // The called computation named by attribute `attribute` (e.g. "body").
  const Computation& called_by_name(const Instruction& instr, std::string_view attribute) {
    for (std::size_t k = 0; k < instr.called_computation_attributes.size(); ++k)
      if (instr.called_computation_attributes[k] == attribute) return called(instr, k);
    fail(ErrorKind::Shape, instr, fmt::format("missing {}=", attribute));
  }

  Literal while_loop(const Instruction& instr, std::span<const Literal* const> ops) {
    expect(ops.size() == 1 && ops[0]->shape().same_type(instr.shape), instr, "while takes and returns one state of its shape");
    const Computation& condition = called_by_name(instr, "condition");
    const Computation& body = called_by_name(instr, "body");
    std::vector<Literal> state{*ops[0]};
    for (std::int64_t iteration = 0;; ++iteration) {
      const Literal go = run(condition, state);
      expect(!go.is_tuple() && go.dtype() == DType::pred && go.element_count() == 1, instr, "while condition must return pred[]");
      if (go.get_bits(0) == 0) break;
      if (iteration >= kMaxWhileIterations)
        throw Error(ErrorKind::Unsupported, fmt::format("evaluate: while %{} ran more than {} iterations", instr.name, kMaxWhileIterations),
                    instr.location);
      Literal next = run(body, state);
      expect(next.shape().same_type(instr.shape), instr, "while body returns {}, expected {}", to_string(next.shape()), to_string(instr.shape));
      state[0] = std::move(next);
    }
    return std::move(state[0]);
  }

  // pred form: (pred, true_operand, false_operand); index form: (s32 index, one operand per
  // branch), an out-of-range index runs the last branch.
  Literal conditional(const Instruction& instr, std::span<const Literal* const> ops) {
    expect(!ops.empty() && !ops[0]->is_tuple() && ops[0]->element_count() == 1, instr, "conditional needs a scalar selector");
    const std::size_t branches = instr.called_computations.size();
    expect(branches >= 1 && ops.size() == branches + 1, instr, "conditional needs one operand per branch");
    std::size_t pick;
    if (ops[0]->dtype() == DType::pred) {
      expect(branches == 2, instr, "a pred conditional needs two branches");
      pick = ops[0]->get_bits(0) != 0 ? 0 : 1;
      for (std::size_t k = 0; k < instr.called_computation_attributes.size(); ++k)
        if (instr.called_computation_attributes[k] == (ops[0]->get_bits(0) != 0 ? "true_computation" : "false_computation")) pick = k;
    } else {
      expect(is_integer(ops[0]->dtype()), instr, "conditional index must be an integer");
      const std::int64_t index = ops[0]->get_int(0);
      pick = (index < 0 || index >= static_cast<std::int64_t>(branches)) ? branches - 1 : static_cast<std::size_t>(index);
    }
    std::vector<Literal> args{*ops[pick + 1]};
    Literal out = run(called(instr, pick), args);
    expect(out.shape().same_type(instr.shape), instr, "result shape {} should be {}", to_string(instr.shape), to_string(out.shape()));
    return out;
  }

  Literal is_finite(const Instruction& instr, std::span<const Literal* const> ops) {
    expect(is_float(ops[0]->dtype()), instr, "is-finite needs a floating-point operand");
    Literal out(instr.shape);
    const std::vector<double> v = decode_f64(*ops[0]);
    for (std::size_t i = 0; i < v.size(); ++i) out.bytes()[i] = std::isfinite(v[i]) ? 1 : 0;
    return out;
  }

  Literal call(const Instruction& instr, std::span<const Literal* const> ops) {
    std::vector<Literal> args;
    for (const Literal* l : ops) args.push_back(*l);
    Literal out = run(called(instr), args);
    expect(out.shape().same_type(instr.shape), instr, "result shape {} should be {}", to_string(instr.shape), to_string(out.shape()));
    return out;
  }
};

}  // namespace eval_detail

// Runs `computation` (any computation of `module`) on the arguments, one per parameter number.
inline Literal evaluate(const Module& module, const Computation& computation, std::span<const Literal> arguments) {
  eval_detail::Evaluator evaluator(module);
  return evaluator.run(computation, arguments);
}

// Runs the module's entry computation.
inline Literal evaluate(const Module& module, std::span<const Literal> arguments) {
  if (module.entry < 0 || module.entry >= static_cast<int>(module.computations.size()))
    throw Error(ErrorKind::Shape, fmt::format("evaluate: module '{}' has no entry computation", module.name));
  return evaluate(module, module.entry_computation(), arguments);
}

}  // namespace act::hlo
