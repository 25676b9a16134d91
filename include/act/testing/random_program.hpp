// Completeness by construction: a random valid program for an ISA, lifted to the HLO kernel it
// computes. Since the program exists, Backend<Isa> failing to find one is a completeness bug.
//
//   act::testing::LiftedProgram p = act::testing::random_program(act::isa::view<act::isa::Qkv>(), 7);
//   // p.program runs on the kernel image of p.kernel and computes p.kernel (sim::verify holds).
//
// Model (generic over the ISA): every buffer whose access dims are 1-D and whose unit is a 1-D
// row of the tile width (kernel_traits) is tracked row by row: which lifted HLO value, and which
// row of it, the row holds. HBM is tracked in rows of one kernel tile row (width x dtype bytes):
// the kernel inputs are tiles [rows, width] at the start of HBM, the output tile follows. An
// instruction is drawn with random alpha and beta (rejection sampling on the description's
// constraints and slice maps) so that every row it reads holds a value and every row it writes
// lies in its buffer (in HBM: inside the output region, row aligned). Its semantics are then
// inlined into the kernel with each input slice built from the values its rows hold. Byte views
// of HBM (bitcast-convert + reshape) are folded away when they meet their inverse, so the kernel
// reads as tensor code. Instructions touching other buffers are never drawn.
//
// Program shapes the completeness soak must cover, each drawn with its own probability:
//   spill        a value is stored to HBM scratch (right after the output region, where the
//                image's empty constant pool ends) and loaded back by a later instruction;
//   reload       an instruction reads input rows that an earlier instruction already read;
//   odd tiles    tile row counts and alpha values that are not powers of two (3 x 2^k).
// LiftedProgram::shapes records which of them the drawn program really has.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "act/core/error.hpp"
#include "act/hlo/builder.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"
#include "act/sim/kernel_image.hpp"
#include "act/sym/expr.hpp"
#include "act/testing/random_kernel.hpp"

namespace act::testing {

// What a lifted program does beyond loading, computing and storing its output once.
struct ProgramShapes {
  bool spills = false;         // stores to HBM scratch and loads the value back later
  bool reloads_input = false;  // reads some input rows a second time
  bool odd_tiles = false;      // a tile row count or an alpha that is not a power of two
  bool any() const { return spills || reloads_input || odd_tiles; }
  std::string names() const {  // "spill, reload, odd tiles"; empty for a plain program
    std::vector<std::string_view> n;
    if (spills) n.push_back("spill");
    if (reloads_input) n.push_back("reload");
    if (odd_tiles) n.push_back("odd tiles");
    return fmt::format("{}", fmt::join(n, ", "));
  }
};

struct LiftedProgram {
  sim::Program program;
  hlo::Module kernel;
  std::uint64_t seed = 0;
  ProgramShapes shapes;
};

struct RandomProgramOptions {
  int max_instructions = 6;  // drawn freely before the output is completed
  int max_inputs = 3;
  int attempts = 40;         // whole programs tried before giving up
  // Percent chance that a program aims for each shape (ProgramShapes); 0 turns a shape off.
  int spill_percent = 30;
  int reload_percent = 30;
  int odd_tiles_percent = 30;
};

// Removes entry instructions the root does not reach; with keep_parameters, parameters stay
// (they are part of the HBM image). Parameters left are renumbered in their old order.
inline void remove_dead_code(hlo::Module& m, bool keep_parameters) {
  hlo::Computation& c = m.entry_computation();
  std::vector<bool> live(c.instructions.size(), false);
  live[static_cast<std::size_t>(c.root)] = true;
  for (std::size_t i = c.instructions.size(); i-- > 0;) {
    if (keep_parameters && c.instructions[i].opcode == hlo::Opcode::Parameter) live[i] = true;
    if (!live[i]) continue;
    for (int o : c.instructions[i].operands) live[static_cast<std::size_t>(o)] = true;
  }
  std::vector<int> index(c.instructions.size(), -1);
  std::vector<hlo::Instruction> kept;
  for (std::size_t i = 0; i < c.instructions.size(); ++i) {
    if (!live[i]) continue;
    index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(c.instructions[i]));
    for (int& o : kept.back().operands) o = index[static_cast<std::size_t>(o)];
  }
  c.root = index[static_cast<std::size_t>(c.root)];
  c.instructions = std::move(kept);
  std::vector<std::pair<std::int64_t, int>> params;
  for (std::size_t i = 0; i < c.instructions.size(); ++i)
    if (c.instructions[i].opcode == hlo::Opcode::Parameter) params.push_back({c.instructions[i].parameter_number, static_cast<int>(i)});
  std::sort(params.begin(), params.end());
  c.parameters.clear();
  for (const auto& [number, i] : params) {
    c.instructions[static_cast<std::size_t>(i)].parameter_number = static_cast<std::int64_t>(c.parameters.size());
    c.parameters.push_back(i);
  }
  if (m.entry_parameter_layouts && m.entry_parameter_layouts->size() != c.parameters.size()) m.entry_parameter_layouts.reset();
}

namespace random_program_detail {

struct RowRef {
  int value = -1;  // instruction index in the kernel's entry builder; -1: undefined
  std::int64_t row = 0;
};

// A 1-D slice in rows of the tracked model.
struct Slice1 {
  int buffer;
  std::int64_t start, length;  // in rows (HBM: rows of one tile row's bytes)
};

class Lifter {
 public:
  Lifter(const isa::IsaView& isa, const KernelTraits& traits, std::uint64_t seed, const RandomProgramOptions& options)
      : isa_(isa), t_(traits), random_{seed}, options_(options), b_("main") {}

  std::optional<LiftedProgram> run(std::uint64_t seed) {
    type_ = t_.dtypes[0];
    row_bytes_ = t_.width * byte_width(type_);
    rows_.assign(isa_.buffers.size(), {});
    const int hbm = hbm_index();
    std::int64_t hbm_rows = 0;
    // Regions start where sim::kernel_image puts them: at multiples of the image alignment.
    const std::int64_t alignment = sim::ImageOptions{}.alignment;
    auto align_rows = [&] {
      while ((hbm_rows * row_bytes_) % alignment != 0) ++hbm_rows;
    };
    odd_ = random_.chance(options_.odd_tiles_percent);
    const bool spill = random_.chance(options_.spill_percent), reload = random_.chance(options_.reload_percent);
    std::vector<std::int64_t> row_counts = t_.rows;
    if (odd_)
      for (std::int64_t r : {3 * t_.width / 8, 3 * t_.width / 4, 3 * t_.width / 2})
        if (r >= 1 && r <= max_onchip_rows()) row_counts.push_back(r);
    const int inputs = static_cast<int>(random_.between(1, options_.max_inputs));
    for (int i = 0; i < inputs; ++i) {
      align_rows();
      const std::int64_t r = random_.pick(row_counts);
      shapes_.odd_tiles = shapes_.odd_tiles || !power_of_two(r);
      const int p = b_.parameter(Shape(type_, {r, t_.width}), fmt::format("in{}", i));
      for (std::int64_t k = 0; k < r; ++k) set_row(hbm, hbm_rows + k, {p, k});
      hbm_rows += r;
    }
    align_rows();
    output_begin_ = hbm_rows;
    output_end_ = hbm_rows + random_.pick(row_counts);
    shapes_.odd_tiles = shapes_.odd_tiles || !power_of_two(output_end_ - output_begin_);
    hbm_rows = output_end_;
    align_rows();
    scratch_begin_ = hbm_rows;
    scratch_end_ = scratch_begin_ + max_onchip_rows();
    for (std::size_t b = 0; b < isa_.buffers.size(); ++b)
      if (tracked(static_cast<int>(b)) && !isa_.buffers[b].is_hbm) rows_[b].resize(static_cast<std::size_t>(isa_.buffers[b].access_dims[0]));
    // Free draws, with the shapes' targeted draws at random places: a store to scratch, at least
    // one draw later the load back; a reload after the first draw.
    std::vector<Goal> goals(static_cast<std::size_t>(random_.between(1, options_.max_instructions)), Goal::Free);
    if (spill) {
      const auto store = static_cast<std::size_t>(random_.below(static_cast<std::int64_t>(goals.size())));
      goals.insert(goals.begin() + static_cast<std::ptrdiff_t>(store), Goal::StoreToScratch);
      const auto load = static_cast<std::size_t>(random_.between(static_cast<std::int64_t>(store) + 2, static_cast<std::int64_t>(goals.size())));
      goals.insert(goals.begin() + static_cast<std::ptrdiff_t>(std::min(load, goals.size())), Goal::LoadFromScratch);
    }
    if (reload) goals.insert(goals.begin() + static_cast<std::ptrdiff_t>(random_.between(1, static_cast<std::int64_t>(goals.size()))), Goal::ReloadInput);
    for (Goal g : goals) draw(g);
    for (int tries = 0; tries < 200 && !output_complete(); ++tries) draw(Goal::Finish);
    if (!output_complete()) return std::nullopt;

    const int root = gather(hbm, output_begin_, output_end_ - output_begin_);
    LiftedProgram out;
    out.seed = seed;
    out.program = std::move(program_);
    out.kernel = std::move(kernel_);
    out.kernel.name = fmt::format("lifted_{}", seed);
    out.shapes = shapes_;
    hlo::add_computation(out.kernel, std::move(b_).build(root), true);
    remove_dead_code(out.kernel, true);
    return out;
  }

 private:
  const isa::IsaView& isa_;
  const KernelTraits& t_;
  SplitMix random_;
  RandomProgramOptions options_;
  hlo::ComputationBuilder b_;
  hlo::Module kernel_;  // callee computations collect here; the entry is added last
  sim::Program program_;
  DType type_ = DType::bf16;
  std::int64_t row_bytes_ = 0;
  std::int64_t output_begin_ = 0, output_end_ = 0;    // HBM rows
  std::int64_t scratch_begin_ = 0, scratch_end_ = 0;  // HBM rows a spill may use
  std::vector<std::vector<RowRef>> rows_;             // per buffer
  std::set<std::int64_t> input_rows_read_;            // HBM rows of inputs some instruction read
  bool odd_ = false;                                  // odd tile counts and alphas may be drawn
  ProgramShapes shapes_;

  // What a draw must achieve. Finish: write output rows that hold nothing yet.
  enum class Goal { Free, Finish, StoreToScratch, LoadFromScratch, ReloadInput };

  static bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
  bool in_output(const Slice1& s) const { return s.start >= output_begin_ && s.start + s.length <= output_end_; }
  bool in_scratch(const Slice1& s) const { return s.start >= scratch_begin_ && s.start + s.length <= scratch_end_; }
  bool reads_input(const Slice1& s) const { return s.start + s.length <= output_begin_; }
  std::int64_t max_onchip_rows() const {
    std::int64_t m = 1;
    for (std::size_t b = 0; b < isa_.buffers.size(); ++b)
      if (!isa_.buffers[b].is_hbm && tracked(static_cast<int>(b))) m = std::max(m, isa_.buffers[b].access_dims[0]);
    return m;
  }

  int hbm_index() const {
    for (std::size_t b = 0; b < isa_.buffers.size(); ++b)
      if (isa_.buffers[b].is_hbm) return static_cast<int>(b);
    throw Error(ErrorKind::Isa, fmt::format("ISA {} has no HBM buffer", isa_.name));
  }
  bool tracked(int b) const {
    const auto& buf = isa_.buffers[static_cast<std::size_t>(b)];
    if (buf.is_hbm) return true;
    return buf.access_dims.size() == 1 && buf.unit_dims.size() == 1 && buf.unit_dims[0] == t_.width && buf.dtype == type_;
  }
  void set_row(int b, std::int64_t r, RowRef ref) {
    auto& v = rows_[static_cast<std::size_t>(b)];
    if (v.size() <= static_cast<std::size_t>(r)) v.resize(static_cast<std::size_t>(r) + 1);
    v[static_cast<std::size_t>(r)] = ref;
  }
  RowRef row(int b, std::int64_t r) const {
    const auto& v = rows_[static_cast<std::size_t>(b)];
    return r >= 0 && static_cast<std::size_t>(r) < v.size() ? v[static_cast<std::size_t>(r)] : RowRef{};
  }
  bool output_complete() const {
    for (std::int64_t r = output_begin_; r < output_end_; ++r)
      if (row(hbm_index(), r).value < 0) return false;
    return true;
  }

  // ---- smart constructors: fold the byte views of HBM back into the tensors they came from
  int reshape(int x, std::vector<std::int64_t> dims) { return inline_detail::fold_reshape(b_, x, std::move(dims)); }
  int bitcast_convert(int x, DType to) { return inline_detail::fold_bitcast_convert(b_, x, to); }
  int slice_rows(int x, std::int64_t start, std::int64_t count) {
    const Shape& s = b_.shape(x);
    if (start == 0 && count == s.dims[0]) return x;
    std::vector<hlo::SliceRange> r{{start, start + count, 1}};
    for (std::size_t d = 1; d < s.dims.size(); ++d) r.push_back({0, s.dims[d], 1});
    return b_.slice(x, std::move(r));
  }

  // The typed value [count, width] the rows [start, start + count) of buffer b hold.
  int gather(int b, std::int64_t start, std::int64_t count) {
    std::vector<int> parts;
    std::int64_t r = start;
    while (r < start + count) {
      const RowRef first = row(b, r);
      std::int64_t n = 1;
      while (r + n < start + count && row(b, r + n).value == first.value && row(b, r + n).row == first.row + n) ++n;
      parts.push_back(slice_rows(first.value, first.row, n));
      r += n;
    }
    return parts.size() == 1 ? parts[0] : b_.concatenate(parts, 0);
  }

  std::optional<std::int64_t> eval(std::string_view text, const sym::Bindings& env) const {
    return inline_detail::evaluate_expression(text, env);
  }
  // The slice in rows of the tracked model, or nothing when it is not row aligned / 1-D.
  std::optional<Slice1> slice_of(const isa::SliceMap& map, const sym::Bindings& env) const {
    const int b = isa_.buffer_index(map.buffer);
    if (b < 0 || !tracked(b) || map.start.size() != 1 || map.length.size() != 1) return std::nullopt;
    auto s = eval(map.start[0], env), l = eval(map.length[0], env);
    if (!s || !l || *l < 1 || *s < 0) return std::nullopt;
    if (isa_.buffers[static_cast<std::size_t>(b)].is_hbm) {
      if (*s % row_bytes_ || *l % row_bytes_) return std::nullopt;
      return Slice1{b, *s / row_bytes_, *l / row_bytes_};
    }
    if (*s + *l > isa_.buffers[static_cast<std::size_t>(b)].access_dims[0]) return std::nullopt;
    return Slice1{b, *s, *l};
  }

  std::vector<std::int64_t> alpha_candidates() {
    std::vector<std::int64_t> c{1, 2, 4, 8, 16, 32, 64, 128, t_.width / 2, t_.width, 2 * t_.width};
    if (odd_) c.insert(c.end(), {3, 6, 12, 24, 48, 96});
    for (const auto& buf : isa_.buffers)
      if (!buf.is_hbm)
        for (auto d : buf.access_dims) c.push_back(d);
    return c;
  }
  // Values for a beta attribute: rows that hold data when it addresses an input slice, rows of
  // the buffer when it addresses an output slice (in HBM: of the output region, and of scratch
  // for a free draw). A targeted goal narrows HBM rows to the ones it needs.
  std::vector<std::int64_t> beta_candidates(const isa::Instruction& ins, std::string_view name, Goal goal) {
    const int hbm = hbm_index();
    auto starts_at = [&](const isa::SliceMap& m) { return m.start.size() == 1 && m.start[0] == name; };
    for (const auto& m : ins.inputs) {
      if (!starts_at(m)) continue;
      const int b = isa_.buffer_index(m.buffer);
      std::vector<std::int64_t> c;
      if (b < 0) return {0};
      const auto& v = rows_[static_cast<std::size_t>(b)];
      for (std::size_t r = 0; r < v.size(); ++r) {
        if (v[r].value < 0) continue;
        const auto row_index = static_cast<std::int64_t>(r);
        if (b == hbm && goal == Goal::LoadFromScratch && row_index < scratch_begin_) continue;
        if (b == hbm && goal == Goal::ReloadInput && !input_rows_read_.count(row_index)) continue;
        c.push_back(b == hbm ? row_index * row_bytes_ : row_index);
      }
      if (c.empty()) c.push_back(0);
      return c;
    }
    for (const auto& m : ins.outputs) {
      if (!starts_at(m)) continue;
      const int b = isa_.buffer_index(m.buffer);
      std::vector<std::int64_t> c;
      if (b == hbm) {
        if (goal != Goal::StoreToScratch)
          for (std::int64_t r = output_begin_; r < output_end_; ++r)
            if (goal != Goal::Finish || row(hbm, r).value < 0) c.push_back(r * row_bytes_);
        if (goal == Goal::StoreToScratch || goal == Goal::Free)
          for (std::int64_t r = scratch_begin_; r < scratch_end_; ++r) c.push_back(r * row_bytes_);
      } else if (b >= 0 && !isa_.buffers[static_cast<std::size_t>(b)].access_dims.empty()) {
        for (std::int64_t r = 0; r < isa_.buffers[static_cast<std::size_t>(b)].access_dims[0]; ++r) c.push_back(r);
      }
      if (c.empty()) c.push_back(0);
      return c;
    }
    return {0, 1, 2};
  }

  // One random valid instruction, executed symbolically, that achieves `goal` (nothing is
  // drawn when none is found).
  void draw(Goal goal) {
    const int hbm = hbm_index();
    const int attempts = goal == Goal::Free || goal == Goal::Finish ? 64 : 256;
    for (int attempt = 0; attempt < attempts; ++attempt) {
      const auto& ins = isa_.instructions[static_cast<std::size_t>(random_.below(static_cast<std::int64_t>(isa_.instructions.size())))];
      if (!ins.updates.empty()) continue;  // state registers are outside this model
      sym::Bindings env;
      std::vector<std::int64_t> values;
      const auto alphas = alpha_candidates();
      for (auto a : ins.alpha) {
        values.push_back(random_.pick(alphas));
        env.set(a, values.back());
      }
      for (auto name : ins.beta) {
        values.push_back(random_.pick(beta_candidates(ins, name, goal)));
        env.set(name, values.back());
      }
      bool ok = true;
      for (auto c : ins.constraints) {
        const auto v = eval(c, env);
        ok = ok && v && *v != 0;
      }
      if (!ok) continue;
      std::vector<Slice1> in, out;
      bool loads_scratch = false, reloads = false;
      for (const auto& m : ins.inputs) {
        const auto s = slice_of(m, env);
        if (!s) { ok = false; break; }
        for (std::int64_t r = s->start; r < s->start + s->length; ++r) ok = ok && row(s->buffer, r).value >= 0;
        if (s->buffer == hbm) {
          loads_scratch = loads_scratch || in_scratch(*s);
          for (std::int64_t r = s->start; reads_input(*s) && r < s->start + s->length; ++r) reloads = reloads || input_rows_read_.count(r);
        }
        in.push_back(*s);
      }
      bool fills_output = false, stores_scratch = false;
      for (const auto& m : ins.outputs) {
        if (!ok) break;
        const auto s = slice_of(m, env);
        if (!s) { ok = false; break; }
        if (s->buffer == hbm) {
          ok = in_output(*s) || in_scratch(*s);
          stores_scratch = stores_scratch || in_scratch(*s);
          for (std::int64_t r = s->start; ok && in_output(*s) && r < s->start + s->length; ++r) fills_output = fills_output || row(hbm, r).value < 0;
        }
        out.push_back(*s);
      }
      if (!ok) continue;
      if ((goal == Goal::Finish && !fills_output) || (goal == Goal::StoreToScratch && !stores_scratch) ||
          (goal == Goal::LoadFromScratch && !loads_scratch) || (goal == Goal::ReloadInput && !reloads))
        continue;
      if (!execute(ins, env, in, out)) continue;
      shapes_.spills = shapes_.spills || loads_scratch;  // scratch rows hold values only once stored
      shapes_.reloads_input = shapes_.reloads_input || reloads;
      for (const Slice1& s : in)
        for (std::int64_t r = s.start; s.buffer == hbm && reads_input(s) && r < s.start + s.length; ++r) input_rows_read_.insert(r);
      for (std::size_t a = 0; a < ins.alpha.size(); ++a)  // values: alpha first, then beta
        shapes_.odd_tiles = shapes_.odd_tiles || (values[a] > 1 && !power_of_two(values[a]));
      sim::ConcreteInstruction ci;
      ci.name = std::string(ins.name);
      ci.attributes = std::move(values);
      program_.instructions.push_back(std::move(ci));
      return;
    }
  }

  // Inlines the semantics; false (nothing recorded) when shapes do not fit the row model.
  bool execute(const isa::Instruction& ins, const sym::Bindings& env, const std::vector<Slice1>& in, const std::vector<Slice1>& out) {
    const int hbm = hbm_index();
    std::vector<int> inputs;
    for (const Slice1& s : in) {
      int v = gather(s.buffer, s.start, s.length);
      if (s.buffer == hbm) {  // HBM slices are bytes
        v = bitcast_convert(v, DType::u8);
        v = reshape(v, {b_.shape(v).element_count()});
      }
      inputs.push_back(v);
    }
    int end = 0;
    const auto outcome = inline_detail::inline_semantics(end, b_, kernel_, ins, env, inputs);
    if (!outcome) return false;
    const std::vector<int>& results = *outcome;
    if (results.size() != out.size()) return false;
    std::vector<std::pair<Slice1, int>> writes;
    for (std::size_t o = 0; o < out.size(); ++o) {
      int v = results[o];
      if (out[o].buffer == hbm) {
        const int w = byte_width(type_);
        if (b_.shape(v).dtype != DType::u8 || b_.shape(v).element_count() != out[o].length * row_bytes_) return false;
        v = reshape(v, w > 1 ? std::vector<std::int64_t>{out[o].length, t_.width, w} : std::vector<std::int64_t>{out[o].length, t_.width});
        v = bitcast_convert(v, type_);
      }
      const Shape want(type_, {out[o].length, t_.width});
      if (!b_.shape(v).same_type(want)) return false;
      writes.push_back({out[o], v});
    }
    for (const auto& [s, v] : writes)
      for (std::int64_t k = 0; k < s.length; ++k) set_row(s.buffer, s.start + k, {v, k});
    return true;
  }
};

}  // namespace random_program_detail

// A random valid program and its lifted kernel; throws Error(Unsupported) when no program
// writing the whole output region was found within options.attempts.
inline LiftedProgram random_program(const isa::IsaView& isa, std::uint64_t seed, const RandomProgramOptions& options = {}) {
  const KernelTraits traits = kernel_traits(isa);
  if (traits.empty()) throw Error(ErrorKind::Unsupported, fmt::format("random_program: ISA {} has no buffer of 1-D rows", isa.name));
  for (int attempt = 0; attempt < options.attempts; ++attempt) {
    random_program_detail::Lifter lifter(isa, traits, derive_seed(seed, static_cast<std::uint64_t>(attempt)), options);
    if (auto p = lifter.run(seed)) return std::move(*p);
  }
  throw Error(ErrorKind::Unsupported,
              fmt::format("random_program: no program for ISA {} wrote a whole output tile in {} attempts (seed {})", isa.name,
                          options.attempts, seed));
}

}  // namespace act::testing
