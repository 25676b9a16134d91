// Seeded random tiled kernels for an ISA, NNSmith-like (paper, Appendix D), for `act soak`.
//
//   act::testing::KernelTraits traits = act::testing::kernel_traits(act::isa::view<act::isa::Qkv>());
//   act::hlo::Module m = act::testing::random_kernel(traits, /*seed=*/7);
//
// What the target can handle is read from the ISA description, never from its name:
//   - tiles are rank-2 [rows, width]: width and dtype from each on-chip buffer of rows
//     (row_buffer: QKV bf16, 64 wide; Gemmini s8 and s32, 16 wide); rows from {width/2, width,
//     2*width} capped by the buffer's rows;
//   - an operator is drawn alone only when some instruction computes it alone (QKV: dot,
//     transpose, reshape), plus slice and concatenate, which every ISA has as identity
//     instructions; convert only when the buffers hold more than one dtype;
//   - instructions that work on on-chip tiles only (QKV: mov, gemm, softmax) are also drawn
//     whole, their semantics inlined with random alpha: fused operators (softmax's exponential,
//     reduce, broadcast, divide) reach kernels that way;
//   - several sinks are combined by a tree of adds when `add` is supported (Appendix D), and are
//     returned as a tuple otherwise.
// The generator is deterministic per (traits, seed, options): a splitmix64 stream drives it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/hlo/builder.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/opcode.hpp"
#include "act/hlo/parser.hpp"
#include "act/hlo/shape_rules.hpp"
#include "act/core/random.hpp"
#include "act/isa/description.hpp"
#include "act/sym/expr.hpp"

namespace act::testing {

using SplitMix = SplitMix64;

// The per-kernel seed of kernel `index` of a soak run seeded with `seed`.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t index) {
  SplitMix m{seed ^ (index * 0xd1342543de82ef95ull)};
  return m.next();
}

// ---- inlining an instruction's semantics into a kernel under construction (shared with
// random_program.hpp). Byte views (bitcast-convert + reshape) fold away when they meet their
// inverse, so composed instructions read as tensor code.
namespace inline_detail {

inline std::optional<std::int64_t> evaluate_expression(std::string_view text, const sym::Bindings& env) {
  const auto parsed = sym::try_parse(text);
  if (!parsed.ok()) return std::nullopt;
  const auto r = sym::try_evaluate(parsed.expr, env);
  if (!r.ok()) return std::nullopt;
  return r.value;
}

inline int fold_reshape(hlo::ComputationBuilder& b, int x, std::vector<std::int64_t> dims) {
  if (b.shape(x).dims == dims) return x;
  const auto& in = b.instruction(x);
  if (in.opcode == hlo::Opcode::Reshape) return fold_reshape(b, in.operands[0], std::move(dims));
  return b.reshape(x, std::move(dims));
}

inline int fold_bitcast_convert(hlo::ComputationBuilder& b, int x, DType to) {
  const Shape& xs = b.shape(x);
  if (xs.dtype == to) return x;
  const auto& in = b.instruction(x);
  if (in.opcode == hlo::Opcode::BitcastConvert) {
    const int y = in.operands[0];
    const Shape& s = b.shape(y);
    if (s.dtype == to) {  // bitcast-convert(bitcast-convert(y)) back to y's type: y itself
      const auto back = hlo::shape_rules::bitcast_convert_to({xs.dtype, xs.dims}, to);
      if (back.ok() && std::ranges::equal(back.dimensions(), s.dims)) return y;
    }
  }
  return b.bitcast_convert(x, to);
}

// The semantics of `ins` under `env` (alpha at least), inlined with `inputs` as its parameters.
// Returns Out0, Out1, ... or nothing when an input's type does not fit. `end` receives one past
// the last instruction index the builder holds afterwards. Callee computations are added to
// `module` under fresh names.
inline std::optional<std::vector<int>> inline_semantics(int& end, hlo::ComputationBuilder& b, hlo::Module& module, const isa::Instruction& ins,
                                                        const sym::Bindings& env, const std::vector<int>& inputs) {
  auto dimension = [&](std::string_view expression, SourceLocation) -> std::int64_t {
    const auto v = evaluate_expression(expression, env);
    if (!v) throw Error(ErrorKind::Isa, fmt::format("semantics of '{}': cannot evaluate `{}`", ins.name, expression));
    return *v;
  };
  const hlo::Module sem = hlo::parse_semantics(ins.semantics, dimension);
  const hlo::Computation& entry = sem.entry_computation();
  for (std::size_t i = 0; i < entry.instructions.size(); ++i) {
    const hlo::Instruction& s = entry.instructions[i];
    if (s.opcode != hlo::Opcode::Parameter) continue;
    const std::size_t p = static_cast<std::size_t>(s.parameter_number);
    if (p >= inputs.size() || !b.shape(inputs[p]).same_type(s.shape)) return std::nullopt;
  }
  std::vector<int> callee(sem.computations.size(), -1);
  for (std::size_t c = 0; c < sem.computations.size(); ++c) {
    if (static_cast<int>(c) == sem.entry) continue;
    hlo::Computation copy = sem.computations[c];
    copy.name = fmt::format("{}_{}", copy.name, module.computations.size());
    copy.is_entry = false;
    for (auto& i : copy.instructions)
      for (int& k : i.called_computations) k = callee[static_cast<std::size_t>(k)];
    callee[c] = hlo::add_computation(module, std::move(copy));
  }
  std::vector<int> map(entry.instructions.size(), -1);
  for (std::size_t i = 0; i < entry.instructions.size(); ++i) {
    const hlo::Instruction& s = entry.instructions[i];
    if (s.opcode == hlo::Opcode::Parameter) {
      map[i] = inputs[static_cast<std::size_t>(s.parameter_number)];
      continue;
    }
    std::vector<int> operands;
    for (int o : s.operands) operands.push_back(map[static_cast<std::size_t>(o)]);
    if (s.opcode == hlo::Opcode::Reshape) map[i] = fold_reshape(b, operands[0], s.shape.dims);
    else if (s.opcode == hlo::Opcode::BitcastConvert) map[i] = fold_bitcast_convert(b, operands[0], s.shape.dtype);
    else if (s.opcode == hlo::Opcode::Copy) map[i] = operands[0];
    else {
      hlo::Instruction copy = s;
      copy.name.clear();
      copy.operands = std::move(operands);
      copy.dimension_expressions.clear();
      for (int& k : copy.called_computations) k = callee[static_cast<std::size_t>(k)];
      map[i] = b.add(std::move(copy));
    }
  }
  for (int v : map) end = std::max(end, v + 1);
  std::vector<int> results;
  const hlo::Instruction& root = entry.root_instruction();
  if (root.opcode == hlo::Opcode::Tuple)
    for (int o : root.operands) results.push_back(map[static_cast<std::size_t>(o)]);
  else
    results.push_back(map[static_cast<std::size_t>(entry.root)]);
  return results;
}

}  // namespace inline_detail

// The kernel shapes and operators an ISA can plausibly handle.
struct KernelTraits {
  std::vector<DType> dtypes;           // element types of tiles
  std::int64_t width = 0;              // tile row width (minor dimension)
  std::vector<std::int64_t> rows;      // allowed tile row counts
  std::set<hlo::Opcode> operators;     // operators the generator may draw
  // Instructions that only read and write on-chip tile buffers: drawn whole, as the fused
  // patterns (softmax, gemm) an ISA computes in one step.
  std::vector<const isa::Instruction*> patterns;
  bool empty() const { return dtypes.empty() || width <= 0 || rows.empty(); }
};

namespace random_kernel_detail {

// Operators whose spelling in a semantics block marks them supported (" dot(" ...), with the
// paper-shorthand spellings (reduce_add) that parse into them.
inline bool semantics_use(std::string_view text, std::string_view op) {
  const std::string a = fmt::format(" {}(", op), b = fmt::format(" {}_", op);
  return text.find(a) != std::string_view::npos || (op == "reduce" && text.find(b) != std::string_view::npos);
}

}  // namespace random_kernel_detail

// An on-chip buffer seen as rows of one width: access dims [rows] with unit [width] (QKV's d1,
// AMX's zmm), or element-addressed access dims [rows, width] with no unit dims (Gemmini's spad,
// acc; a slice of it is a tile only when it spans the whole width). Nothing for other buffers.
struct RowBuffer {
  std::int64_t rows = 0, width = 0;
};
inline std::optional<RowBuffer> row_buffer(const isa::Buffer& b) {
  if (b.is_hbm) return std::nullopt;
  if (b.access_dims.size() == 1 && b.unit_dims.size() == 1) return RowBuffer{b.access_dims[0], b.unit_dims[0]};
  if (b.access_dims.size() == 2 && b.unit_dims.empty()) return RowBuffer{b.access_dims[0], b.access_dims[1]};
  return std::nullopt;
}

inline KernelTraits kernel_traits(const isa::IsaView& isa) {
  using hlo::Opcode;
  KernelTraits t;
  std::int64_t max_rows = 0;
  for (const auto& b : isa.buffers) {
    const auto rb = row_buffer(b);
    if (!rb) continue;
    if (t.width == 0) t.width = rb->width;
    if (rb->width != t.width) continue;
    if (std::find(t.dtypes.begin(), t.dtypes.end(), b.dtype) == t.dtypes.end()) t.dtypes.push_back(b.dtype);
    max_rows = std::max(max_rows, rb->rows);
  }
  if (t.width > 0) {
    for (std::int64_t r : {t.width / 2, t.width, 2 * t.width})
      if (r >= 1 && r <= max_rows) t.rows.push_back(r);
  }
  const std::pair<Opcode, std::string_view> candidates[] = {
      {Opcode::Dot, "dot"},           {Opcode::Add, "add"},         {Opcode::Subtract, "subtract"},
      {Opcode::Negate, "negate"},     {Opcode::Minimum, "minimum"}, {Opcode::Maximum, "maximum"},
      {Opcode::Reverse, "reverse"},   {Opcode::Broadcast, "broadcast"}, {Opcode::Reduce, "reduce"},
      {Opcode::Clamp, "clamp"},       {Opcode::Transpose, "transpose"}, {Opcode::Reshape, "reshape"},
      {Opcode::Exponential, "exponential"},   {Opcode::Divide, "divide"},
  };
  // An operator is drawn alone when some instruction computes it alone (gemm: dot; load_cm:
  // transpose); operators found only inside a fused instruction (softmax's exponential, reduce,
  // broadcast, divide) reach kernels through `patterns` instead, as that instruction whole.
  for (const auto& i : isa.instructions) {
    std::vector<Opcode> used;
    for (const auto& [op, spelling] : candidates)
      if (random_kernel_detail::semantics_use(i.semantics, spelling)) used.push_back(op);
    const auto layout = [](Opcode op) { return op == Opcode::Transpose || op == Opcode::Reshape; };
    const auto computing = std::count_if(used.begin(), used.end(), [&](Opcode op) { return !layout(op); });
    for (Opcode op : used)
      if (layout(op) || computing == 1) t.operators.insert(op);
  }
  t.operators.insert(Opcode::Slice);
  t.operators.insert(Opcode::Concatenate);
  for (const auto& i : isa.instructions) {
    bool on_chip = !i.inputs.empty() && i.updates.empty();
    for (const auto& m : i.inputs) {
      const auto* b = isa.find_buffer(m.buffer);
      on_chip = on_chip && b && !b->is_hbm;
    }
    for (const auto& m : i.outputs) {
      const auto* b = isa.find_buffer(m.buffer);
      on_chip = on_chip && b && !b->is_hbm;
    }
    if (on_chip) t.patterns.push_back(&i);
  }
  if (t.dtypes.size() > 1) t.operators.insert(Opcode::Convert);
  return t;
}

struct RandomKernelOptions {
  int min_nodes = 7;   // entry instructions, parameters and constants included
  int max_nodes = 89;
  int max_parameters = 4;
  int pattern_percent = 40;  // steps that draw a whole instruction pattern (when the ISA has any)
};

namespace random_kernel_detail {

class Generator {
 public:
  Generator(const KernelTraits& traits, std::uint64_t seed, const RandomKernelOptions& options)
      : t_(traits), random_{seed}, options_(options), b_("main") {}

  hlo::Module run(std::uint64_t seed) {
    using hlo::Opcode;
    if (t_.empty()) throw Error(ErrorKind::Unsupported, "random_kernel: the ISA has no on-chip buffer of rows to draw tiles from");
    hlo::Module& m = module_;
    m.name = fmt::format("random_{}", seed);
    const DType reducer_type = t_.dtypes[0];
    if (t_.operators.count(Opcode::Reduce)) add_index_ = hlo::add_computation(m, hlo::scalar_binary_computation("sum", Opcode::Add, reducer_type));
    const int target = static_cast<int>(random_.between(options_.min_nodes, options_.max_nodes));
    std::vector<Opcode> ops(t_.operators.begin(), t_.operators.end());
    fresh_parameter(Shape(t_.dtypes[0], {t_.width, t_.width}));
    // Leave room for the output combination (at most one add per sink, plus a tuple).
    int guard = 0;
    // Room is left for the last step (at most 4 nodes) and the output adds and tuple.
    // A step is taken only if, at its largest, it and the output combination (an add per sink
    // and a tuple) still fit under max_nodes.
    while ((count() < target - 4 - static_cast<int>(sinks().size()) || count() < options_.min_nodes) && ++guard < 10 * options_.max_nodes) {
      const bool use_pattern = !t_.patterns.empty() && random_.chance(options_.pattern_percent);
      const isa::Instruction* p = use_pattern ? random_.pick(t_.patterns) : nullptr;
      const Opcode op = random_.pick(ops);
      const int largest = p ? pattern_size(*p) : step_size(op) + 1;  // + a fresh parameter for x
      const int outputs = t_.operators.count(Opcode::Add) ? static_cast<int>(sinks().size()) + 2 : 1;
      if (count() + largest + outputs > options_.max_nodes) continue;
      if (p) pattern(*p);
      else step(op);
    }
    combine_outputs();
    hlo::add_computation(m, std::move(b_).build(root_), true);
    return m;
  }

 private:
  const KernelTraits& t_;
  SplitMix random_;
  RandomKernelOptions options_;
  hlo::ComputationBuilder b_;
  hlo::Module module_;
  int add_index_ = -1;
  int parameters_ = 0;
  int root_ = -1;
  std::vector<int> values_;      // array values usable as operands
  std::vector<int> use_count_;   // by instruction index

  int count() const { return static_cast<int>(use_count_.size()); }
  const Shape& shape(int v) const { return b_.shape(v); }
  int note(int v, bool usable = true) {
    use_count_.resize(static_cast<std::size_t>(v) + 1, 0);
    for (int o : b_.instruction(v).operands) ++use_count_[static_cast<std::size_t>(o)];
    if (usable) values_.push_back(v);
    return v;
  }
  std::vector<int> sinks() const {
    std::vector<int> out;
    for (int v : values_)
      if (use_count_[static_cast<std::size_t>(v)] == 0) out.push_back(v);
    return out;
  }
  int fresh_parameter(const Shape& s) {
    ++parameters_;
    return note(b_.parameter(s, fmt::format("p{}", parameters_ - 1)));
  }
  // A value of shape `s`: preferably an unused one, else any, else a new parameter.
  int operand(const Shape& s) {
    std::vector<int> unused, any;
    for (int v : values_)
      if (shape(v) == s) (use_count_[static_cast<std::size_t>(v)] == 0 ? unused : any).push_back(v);
    if (!unused.empty() && random_.chance(80)) return random_.pick(unused);
    if (!any.empty() && (parameters_ >= options_.max_parameters || random_.chance(70))) return random_.pick(any);
    if (!unused.empty()) return random_.pick(unused);
    if (parameters_ < options_.max_parameters || any.empty()) return fresh_parameter(s);
    return random_.pick(any);
  }
  // Any existing value, recent and unused ones preferred.
  int any_value() {
    const auto s = sinks();
    if (!s.empty() && random_.chance(75)) return random_.pick(s);
    return random_.pick(values_);
  }
  DType dtype_of(int v) const { return shape(v).dtype; }
  std::int64_t rows(int v) const { return shape(v).dims[0]; }
  bool is_tile(int v) const { return shape(v).rank() == 2 && shape(v).dims[1] == t_.width; }
  int tile_value() {
    for (int attempt = 0; attempt < 8; ++attempt) {
      const int v = any_value();
      if (is_tile(v)) return v;
    }
    return operand(Shape(t_.dtypes[0], {random_.pick(t_.rows), t_.width}));
  }

  void step(hlo::Opcode op) {
    using hlo::Opcode;
    const int x = tile_value();
    const Shape& s = shape(x);
    const DType type = s.dtype;
    const std::int64_t r = s.dims[0], w = t_.width;
    switch (op) {
      case Opcode::Dot: {
        if (random_.chance(50)) {
          const int y = operand(Shape(type, {w, w}));  // x[r,w] . y[w,w]
          note(b_.matmul(x, y, type));
        } else {
          const int y = operand(Shape(type, {w, w}));  // x[r,w] . y^T: contract both minor dims
          hlo::DotDimensions d;
          d.lhs_contracting = {1};
          d.rhs_contracting = {1};
          note(b_.dot(x, y, std::move(d), type));
        }
        break;
      }
      case Opcode::Add: case Opcode::Subtract: case Opcode::Minimum: case Opcode::Maximum: case Opcode::Divide:
        note(b_.binary(op, x, operand(s)));
        break;
      case Opcode::Negate: case Opcode::Exponential:
        note(b_.unary(op, x));
        break;
      case Opcode::Reverse:
        note(b_.reverse(x, random_.pick(std::vector<std::vector<std::int64_t>>{{0}, {1}, {0, 1}})));
        break;
      case Opcode::Clamp: {
        const int lo = note(b_.constant(hlo::scalar_literal(type, -0.5)), false);
        const int hi = note(b_.constant(hlo::scalar_literal(type, 0.5)), false);
        note(b_.clamp(lo, x, hi));
        break;
      }
      case Opcode::Reduce: case Opcode::Broadcast: {
        if (add_index_ < 0 || type != t_.dtypes[0]) break;
        const int zero = note(b_.constant(hlo::scalar_literal(type, 0)), false);
        const int sum = note(b_.reduce({x}, {zero}, {1}, add_index_), false);
        note(b_.broadcast(sum, {r, w}, {0}));
        break;
      }
      case Opcode::Transpose:
        if (r == w) note(b_.transpose(x, {1, 0}));
        break;
      case Opcode::Reshape:
        if (r % 2 == 0) {
          const int y = note(b_.reshape(x, {r / 2, 2 * w}), false);
          note(b_.reshape(y, {r, w}));
        }
        break;
      case Opcode::Slice: {
        std::vector<std::int64_t> smaller;
        for (std::int64_t k : t_.rows)
          if (k < r) smaller.push_back(k);
        if (smaller.empty()) break;
        const std::int64_t k = random_.pick(smaller);
        const std::int64_t start = random_.chance(50) ? 0 : r - k;
        note(b_.slice(x, {{start, start + k, 1}, {0, w, 1}}));
        break;
      }
      case Opcode::Concatenate: {
        std::vector<std::int64_t> fits;
        for (std::int64_t k : t_.rows)
          if (std::find(t_.rows.begin(), t_.rows.end(), r + k) != t_.rows.end()) fits.push_back(k);
        if (fits.empty()) break;
        const int y = operand(Shape(type, {random_.pick(fits), w}));
        note(random_.chance(50) ? b_.concatenate({x, y}, 0) : b_.concatenate({y, x}, 0));
        break;
      }
      case Opcode::Convert: {
        std::vector<DType> others;
        for (DType d : t_.dtypes)
          if (d != type) others.push_back(d);
        if (!others.empty()) note(b_.convert(x, random_.pick(others)));
        break;
      }
      default: break;
    }
  }

  // Appendix D: sinks of one shape summed by a balanced tree of adds; a tuple of the sums if
  // several shapes remain (or of the sinks themselves without `add`).
  void combine_outputs() {
    std::vector<int> s = sinks();
    std::erase_if(s, [&](int v) { return b_.instruction(v).opcode == hlo::Opcode::Parameter && s.size() > 1; });
    if (s.empty()) s.push_back(values_.back());
    std::vector<int> outputs;
    if (t_.operators.count(hlo::Opcode::Add)) {
      std::map<std::vector<std::int64_t>, std::vector<int>> by_shape;
      for (int v : s) by_shape[shape(v).dims].push_back(v);
      for (auto& [dims, group] : by_shape) {
        while (group.size() > 1) {
          std::vector<int> next;
          for (std::size_t i = 0; i + 1 < group.size(); i += 2) next.push_back(note(b_.binary(hlo::Opcode::Add, group[i], group[i + 1])));
          if (group.size() % 2) next.push_back(group.back());
          group = std::move(next);
        }
        outputs.push_back(group[0]);
      }
    } else {
      outputs = s;
    }
    if (outputs.size() > 3) outputs.resize(3);  // the rest stays as dead code, as in XLA dumps
    root_ = outputs.size() == 1 ? outputs[0] : note(b_.tuple(outputs), false);
  }
  // Nodes step(op) adds at most (fresh parameters included).
  static int step_size(hlo::Opcode op) {
    using hlo::Opcode;
    switch (op) {
      case Opcode::Clamp: case Opcode::Reduce: case Opcode::Broadcast: return 3;
      case Opcode::Dot: case Opcode::Add: case Opcode::Subtract: case Opcode::Minimum: case Opcode::Maximum:
      case Opcode::Divide: case Opcode::Reshape: case Opcode::Concatenate: return 2;
      default: return 1;
    }
  }
  // Nodes a pattern adds at most: its semantics' instructions plus fresh parameters.
  static int pattern_size(const isa::Instruction& ins) {
    int n = 0;
    for (std::size_t i = 0; i + 2 < ins.semantics.size(); ++i)
      if (ins.semantics.substr(i, 3) == " = ") ++n;
    return n + static_cast<int>(ins.inputs.size());
  }
  // One ISA instruction's semantics on tile operands, alpha drawn until its constraints hold.
  void pattern(const isa::Instruction& ins) {
    const std::vector<std::int64_t> alphas{1, 2, 4, 8, 16, 32, 64, 128, t_.width / 2, t_.width, 2 * t_.width};
    for (int attempt = 0; attempt < 16; ++attempt) {
      sym::Bindings env;
      for (auto a : ins.alpha) env.set(a, random_.pick(alphas));
      bool ok = true;
      for (auto c : ins.constraints) {
        const auto v = inline_detail::evaluate_expression(c, env);
        ok = ok && v && *v != 0;
      }
      if (!ok) continue;
      std::vector<Shape> shapes;
      try {
        const hlo::Module sem = hlo::parse_semantics(ins.semantics, [&](std::string_view e, SourceLocation) -> std::int64_t {
          const auto v = inline_detail::evaluate_expression(e, env);
          if (!v) throw Error(ErrorKind::Isa, "unbound");
          return *v;
        });
        const auto& entry = sem.entry_computation();
        for (int p : entry.parameters) shapes.push_back(entry.instructions.at(static_cast<std::size_t>(p)).shape);
      } catch (const Error&) {
        continue;
      }
      std::vector<int> inputs;
      for (const Shape& s : shapes) {
        if (s.rank() != 2 || s.dims[1] != t_.width) return;  // not a tile: outside this generator
        inputs.push_back(operand(Shape(s.dtype, s.dims)));
      }
      const std::size_t before = use_count_.size();
      int end = static_cast<int>(before);
      const auto results = inline_detail::inline_semantics(end, b_, module_, ins, env, inputs);
      if (!results) return;
      // Record the new instructions; results that are tiles become values.
      for (int v = static_cast<int>(before); v < end; ++v) note(v, false);
      for (int r : *results)
        if (is_tile(r) && std::find(values_.begin(), values_.end(), r) == values_.end()) values_.push_back(r);
      return;
    }
  }
};

}  // namespace random_kernel_detail

// A random kernel for the traits; throws Error(Unsupported) when the traits are empty.
inline hlo::Module random_kernel(const KernelTraits& traits, std::uint64_t seed, const RandomKernelOptions& options = {}) {
  return random_kernel_detail::Generator(traits, seed, options).run(seed);
}

// Entry instructions (the node count of Appendix D).
inline int node_count(const hlo::Module& m) { return static_cast<int>(m.entry_computation().instructions.size()); }

}  // namespace act::testing
