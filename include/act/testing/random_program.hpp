// Completeness by construction: a random valid program for an ISA, lifted to the HLO kernel it
// computes. Since the program exists, Backend<Isa> failing to find one is a completeness bug.
//
//   act::testing::LiftedProgram p = act::testing::random_program(act::isa::view<act::isa::Qkv>(), 7);
//   // p.program runs on the kernel image of p.kernel and computes p.kernel (sim::verify holds).
//
// Model (generic over the ISA): every on-chip buffer of rows of the tile width (row_buffer:
// access [rows] with unit [width], or access [rows, width] with no unit, whose slices count only
// when they span the whole width) is tracked row by row: which lifted HLO value, and which row
// of it, the row holds. A buffer holds values of its own dtype. HBM is tracked in lines of
// width x (smallest tile dtype's bytes); a row of a wider dtype spans several lines, each
// recorded as one part of it (Gemmini: an s8 row is one 16-byte line, an s32 row four). The
// kernel inputs are tiles [rows, width] at the start of HBM, the output tile follows. An
// instruction is drawn with random alpha and beta (rejection sampling on the description's
// constraints and slice maps) so that every row it reads holds a value and every row it writes
// lies in its buffer (in HBM: inside the output region, row aligned). Its semantics are then
// inlined into the kernel with each input slice built from the values its rows hold. Byte views
// of HBM (bitcast-convert + reshape) are folded away when they meet their inverse, so the kernel
// reads as tensor code; a draw that would leave one (bytes of one dtype read as another) is
// rejected. Instructions touching other buffers are never drawn.
//
// Program shapes the completeness soak must cover, each drawn with its own probability:
//   spill        a value is stored to HBM scratch (right after the output region, where the
//                image's empty constant pool ends) and loaded back by a later instruction;
//   reload       an instruction reads input rows that an earlier instruction already read;
//   odd tiles    tile row counts and alpha values that are not powers of two (3 x 2^k);
//   compute      an instruction that reads and writes on-chip buffers only (QKV's gemm,
//                Gemmini's matmuls), drawn where the data it needs is on chip.
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
  bool computes_on_chip = false;  // an instruction that reads and writes on-chip buffers only
  bool any() const { return spills || reloads_input || odd_tiles || computes_on_chip; }
  std::string names() const {  // "spill, reload, odd tiles, compute"; empty for a plain program
    std::vector<std::string_view> n;
    if (spills) n.push_back("spill");
    if (reloads_input) n.push_back("reload");
    if (odd_tiles) n.push_back("odd tiles");
    if (computes_on_chip) n.push_back("compute");
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
  int compute_percent = 50;
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
  std::int64_t part = 0;  // HBM: which line of the row (rows of wider dtypes span several)
};

// A 1-D slice in rows of the tracked model.
struct Slice1 {
  int buffer;
  std::int64_t start, length;  // in rows (HBM: in lines)
};

// On-chip rows a lifted program uses at most per buffer (a prefix of a larger buffer): bounds
// HBM scratch and the candidate lists; every ISA tested so far has fewer (QKV 128, AMX 32) but
// Gemmini's spad has 16,384.
inline constexpr std::int64_t kMaxRowsPerWidth = 16;

class Lifter {
 public:
  Lifter(const isa::IsaView& isa, const KernelTraits& traits, std::uint64_t seed, const RandomProgramOptions& options)
      : isa_(isa), t_(traits), random_{seed}, options_(options), b_("main") {}

  std::optional<LiftedProgram> run(std::uint64_t seed) {
    line_bytes_ = 0;
    for (DType d : t_.dtypes)
      if (line_bytes_ == 0 || t_.width * byte_width(d) < line_bytes_) line_bytes_ = t_.width * byte_width(d);
    rows_.assign(isa_.buffers.size(), {});
    const int hbm = hbm_index();
    std::int64_t hbm_rows = 0;  // in lines
    // Regions start where sim::kernel_image puts them: at multiples of the image alignment.
    const std::int64_t alignment = sim::ImageOptions{}.alignment;
    auto align_rows = [&] {
      while ((hbm_rows * line_bytes_) % alignment != 0) ++hbm_rows;
    };
    odd_ = random_.chance(options_.odd_tiles_percent);
    const bool spill = random_.chance(options_.spill_percent), reload = random_.chance(options_.reload_percent);
    const bool compute = random_.chance(options_.compute_percent);
    std::vector<std::int64_t> row_counts = t_.rows;
    if (odd_)
      for (std::int64_t r : {3 * t_.width / 8, 3 * t_.width / 4, 3 * t_.width / 2})
        if (r >= 1 && r <= max_onchip_rows()) row_counts.push_back(r);
    const int inputs = static_cast<int>(random_.between(1, options_.max_inputs));
    for (int i = 0; i < inputs; ++i) {
      align_rows();
      const std::int64_t r = random_.pick(row_counts);
      const DType type = pick_dtype();
      shapes_.odd_tiles = shapes_.odd_tiles || !power_of_two(r);
      const int p = b_.parameter(Shape(type, {r, t_.width}), fmt::format("in{}", i));
      set_rows(hbm, hbm_rows, p, r);
      hbm_rows += r * lines_per_row(type);
    }
    align_rows();
    output_type_ = pick_dtype();
    const std::int64_t output_rows = random_.pick(row_counts);
    output_begin_ = hbm_rows;
    output_end_ = hbm_rows + output_rows * lines_per_row(output_type_);
    shapes_.odd_tiles = shapes_.odd_tiles || !power_of_two(output_rows);
    hbm_rows = output_end_;
    align_rows();
    scratch_begin_ = hbm_rows;
    std::int64_t widest = 1;
    for (DType d : t_.dtypes) widest = std::max(widest, lines_per_row(d));
    scratch_end_ = scratch_begin_ + max_onchip_rows() * widest;
    for (std::size_t b = 0; b < isa_.buffers.size(); ++b)
      if (tracked(static_cast<int>(b)) && !isa_.buffers[b].is_hbm) rows_[b].resize(static_cast<std::size_t>(usable_rows(static_cast<int>(b))));
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
    if (compute) goals.insert(goals.begin() + static_cast<std::ptrdiff_t>(random_.between(1, static_cast<std::int64_t>(goals.size()))), Goal::Compute);
    for (Goal g : goals) draw(g);
    for (int tries = 0; tries < 200 && !output_complete(); ++tries) draw(Goal::Finish);
    if (!output_complete()) return std::nullopt;

    const std::optional<int> root = gather(hbm, output_begin_, output_end_ - output_begin_);
    if (!root) return std::nullopt;
    LiftedProgram out;
    out.seed = seed;
    out.program = std::move(program_);
    out.kernel = std::move(kernel_);
    out.kernel.name = fmt::format("lifted_{}", seed);
    out.shapes = shapes_;
    hlo::add_computation(out.kernel, std::move(b_).build(*root), true);
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
  std::int64_t line_bytes_ = 0;                       // HBM is tracked in lines of this many bytes
  DType output_type_ = DType::bf16;
  std::int64_t output_begin_ = 0, output_end_ = 0;    // HBM lines
  std::int64_t scratch_begin_ = 0, scratch_end_ = 0;  // HBM lines a spill may use
  std::vector<std::vector<RowRef>> rows_;             // per buffer
  std::set<std::int64_t> input_rows_read_;            // HBM lines of inputs some instruction read
  bool odd_ = false;                                  // odd tile counts and alphas may be drawn
  ProgramShapes shapes_;

  // What a draw must achieve. Finish: write output rows that hold nothing yet; Compute: read
  // and write on-chip buffers only.
  enum class Goal { Free, Finish, StoreToScratch, LoadFromScratch, ReloadInput, Compute };

  static bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
  bool in_output(const Slice1& s) const { return s.start >= output_begin_ && s.start + s.length <= output_end_; }
  bool in_scratch(const Slice1& s) const { return s.start >= scratch_begin_ && s.start + s.length <= scratch_end_; }
  bool reads_input(const Slice1& s) const { return s.start + s.length <= output_begin_; }
  std::int64_t lines_per_row(DType d) const { return t_.width * byte_width(d) / line_bytes_; }
  // A tile's dtype: drawn only when the buffers hold more than one (the stream of a one-dtype
  // ISA is unchanged by it).
  DType pick_dtype() { return t_.dtypes.size() == 1 ? t_.dtypes[0] : random_.pick(t_.dtypes); }
  std::int64_t usable_rows(int b) const {
    return std::min(row_buffer(isa_.buffers[static_cast<std::size_t>(b)])->rows, kMaxRowsPerWidth * t_.width);
  }
  std::int64_t max_onchip_rows() const {
    std::int64_t m = 1;
    for (std::size_t b = 0; b < isa_.buffers.size(); ++b)
      if (!isa_.buffers[b].is_hbm && tracked(static_cast<int>(b))) m = std::max(m, usable_rows(static_cast<int>(b)));
    return m;
  }
  // A 2-D buffer's slice is a tile only when it spans the whole width.
  bool element_addressed(int b) const { return isa_.buffers[static_cast<std::size_t>(b)].access_dims.size() == 2; }

  int hbm_index() const {
    for (std::size_t b = 0; b < isa_.buffers.size(); ++b)
      if (isa_.buffers[b].is_hbm) return static_cast<int>(b);
    throw Error(ErrorKind::Isa, fmt::format("ISA {} has no HBM buffer", isa_.name));
  }
  bool tracked(int b) const {
    const auto& buf = isa_.buffers[static_cast<std::size_t>(b)];
    if (buf.is_hbm) return true;
    const auto rb = row_buffer(buf);
    return rb && rb->width == t_.width && std::find(t_.dtypes.begin(), t_.dtypes.end(), buf.dtype) != t_.dtypes.end();
  }
  void set_row(int b, std::int64_t r, RowRef ref) {
    auto& v = rows_[static_cast<std::size_t>(b)];
    if (v.size() <= static_cast<std::size_t>(r)) v.resize(static_cast<std::size_t>(r) + 1);
    v[static_cast<std::size_t>(r)] = ref;
  }
  // Rows [0, count) of `value` from row (HBM: line) `at` on: in HBM each row spans
  // lines_per_row lines.
  void set_rows(int b, std::int64_t at, int value, std::int64_t count) {
    const std::int64_t parts = isa_.buffers[static_cast<std::size_t>(b)].is_hbm ? lines_per_row(b_.shape(value).dtype) : 1;
    for (std::int64_t k = 0; k < count; ++k)
      for (std::int64_t q = 0; q < parts; ++q) set_row(b, at + k * parts + q, {value, k, q});
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

  // The typed value [rows, width] the rows (HBM: lines) [start, start + count) of buffer b
  // hold; nothing when they do not hold whole rows of values of one dtype.
  std::optional<int> gather(int b, std::int64_t start, std::int64_t count) {
    const bool hbm = isa_.buffers[static_cast<std::size_t>(b)].is_hbm;
    std::vector<int> pieces;
    std::optional<DType> type;
    std::int64_t r = start;
    while (r < start + count) {
      const RowRef first = row(b, r);
      if (first.value < 0 || first.part != 0) return std::nullopt;
      const DType d = b_.shape(first.value).dtype;
      const std::int64_t parts = hbm ? lines_per_row(d) : 1;
      auto holds = [&](std::int64_t n) {  // whether row first.row + n follows
        if (r + (n + 1) * parts > start + count) return false;
        for (std::int64_t q = 0; q < parts; ++q) {
          const RowRef x = row(b, r + n * parts + q);
          if (x.value != first.value || x.row != first.row + n || x.part != q) return false;
        }
        return true;
      };
      std::int64_t n = 0;
      while (holds(n)) ++n;
      if (n == 0 || (type && *type != d)) return std::nullopt;
      type = d;
      pieces.push_back(slice_rows(first.value, first.row, n));
      r += n * parts;
    }
    if (pieces.empty()) return std::nullopt;
    return pieces.size() == 1 ? pieces[0] : b_.concatenate(pieces, 0);
  }

  std::optional<std::int64_t> eval(std::string_view text, const sym::Bindings& env) const {
    return inline_detail::evaluate_expression(text, env);
  }
  // The slice in rows of the tracked model, or nothing when it is not line aligned (HBM), not
  // whole rows (a 2-D buffer's slice narrower than its width), or outside the rows used.
  std::optional<Slice1> slice_of(const isa::SliceMap& map, const sym::Bindings& env) const {
    const int b = isa_.buffer_index(map.buffer);
    if (b < 0 || !tracked(b)) return std::nullopt;
    const std::size_t rank = element_addressed(b) ? 2 : 1;
    if (map.start.size() != rank || map.length.size() != rank) return std::nullopt;
    if (rank == 2) {
      const auto column = eval(map.start[1], env), columns = eval(map.length[1], env);
      if (!column || !columns || *column != 0 || *columns != t_.width) return std::nullopt;
    }
    auto s = eval(map.start[0], env), l = eval(map.length[0], env);
    if (!s || !l || *l < 1 || *s < 0) return std::nullopt;
    if (isa_.buffers[static_cast<std::size_t>(b)].is_hbm) {
      if (*s % line_bytes_ || *l % line_bytes_) return std::nullopt;
      return Slice1{b, *s / line_bytes_, *l / line_bytes_};
    }
    if (*s + *l > usable_rows(b)) return std::nullopt;
    return Slice1{b, *s, *l};
  }

  std::vector<std::int64_t> alpha_candidates() {
    std::vector<std::int64_t> c{1, 2, 4, 8, 16, 32, 64, 128, t_.width / 2, t_.width, 2 * t_.width};
    if (odd_) c.insert(c.end(), {3, 6, 12, 24, 48, 96});
    for (const auto& buf : isa_.buffers)
      if (!buf.is_hbm)
        for (auto d : buf.access_dims) c.push_back(std::min(d, kMaxRowsPerWidth * t_.width));
    return c;
  }
  // Values for a beta attribute: rows that hold data when it addresses an input slice, rows of
  // the buffer when it addresses an output slice (in HBM: of the output region, and of scratch
  // for a free draw). A targeted goal narrows HBM rows to the ones it needs.
  // On chip, only the starts of slices whose rows all hold values are offered (when there are
  // any): a start drawn among all held rows would rarely begin a whole tile (QKV's gemm reads 64
  // rows, Gemmini's matmuls 16 rows of B). Alpha is drawn first, so the length is known.
  std::vector<std::int64_t> beta_candidates(const isa::Instruction& ins, std::string_view name, Goal goal, const sym::Bindings& env) {
    const int hbm = hbm_index();
    auto starts_at = [&](const isa::SliceMap& m) { return !m.start.empty() && m.start[0] == name; };
    for (const auto& m : ins.inputs) {
      if (!starts_at(m)) continue;
      const int b = isa_.buffer_index(m.buffer);
      std::vector<std::int64_t> c;
      if (b < 0) return {0};
      const auto& v = rows_[static_cast<std::size_t>(b)];
      if (b != hbm && tracked(b))
        if (const auto length = eval(m.length[0], env); length && *length >= 1) {
          for (std::int64_t r = 0; r + *length <= static_cast<std::int64_t>(v.size()); ++r) {
            bool held = true;
            for (std::int64_t k = 0; held && k < *length; ++k) held = v[static_cast<std::size_t>(r + k)].value >= 0;
            if (held) c.push_back(r);
          }
          if (!c.empty()) return c;
        }
      for (std::size_t r = 0; r < v.size(); ++r) {
        if (v[r].value < 0 || v[r].part != 0) continue;
        const auto row_index = static_cast<std::int64_t>(r);
        if (b == hbm && goal == Goal::LoadFromScratch && row_index < scratch_begin_) continue;
        if (b == hbm && goal == Goal::ReloadInput && !input_rows_read_.count(row_index)) continue;
        c.push_back(b == hbm ? row_index * line_bytes_ : row_index);
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
          for (std::int64_t r = output_begin_; r < output_end_; r += lines_per_row(output_type_))
            if (goal != Goal::Finish || row(hbm, r).value < 0) c.push_back(r * line_bytes_);
        if (goal == Goal::StoreToScratch || goal == Goal::Free)
          for (std::int64_t r = scratch_begin_; r < scratch_end_; ++r) c.push_back(r * line_bytes_);
      } else if (b >= 0 && !isa_.buffers[static_cast<std::size_t>(b)].access_dims.empty()) {
        const std::int64_t rows = tracked(b) ? usable_rows(b) : isa_.buffers[static_cast<std::size_t>(b)].access_dims[0];
        for (std::int64_t r = 0; r < rows; ++r) c.push_back(r);
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
      full_width(ins, values, env);
      for (auto name : ins.beta) {
        values.push_back(random_.pick(beta_candidates(ins, name, goal, env)));
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
      const bool on_chip = !in.empty() && std::none_of(in.begin(), in.end(), [&](const Slice1& s) { return s.buffer == hbm; }) &&
                           std::none_of(out.begin(), out.end(), [&](const Slice1& s) { return s.buffer == hbm; });
      if ((goal == Goal::Compute && !on_chip) || (goal == Goal::Finish && !fills_output) || (goal == Goal::StoreToScratch && !stores_scratch) ||
          (goal == Goal::LoadFromScratch && !loads_scratch) || (goal == Goal::ReloadInput && !reloads))
        continue;
      if (!execute(ins, env, in, out)) continue;
      shapes_.spills = shapes_.spills || loads_scratch;  // scratch rows hold values only once stored
      shapes_.reloads_input = shapes_.reloads_input || reloads;
      shapes_.computes_on_chip = shapes_.computes_on_chip || on_chip;
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

  // An alpha that is the column count of a 2-D buffer's slice takes the whole width: only such
  // slices are tiles of the model (Gemmini: cols, DIM_J, DIM_K = 16).
  void full_width(const isa::Instruction& ins, std::vector<std::int64_t>& values, sym::Bindings& env) const {
    auto widen = [&](const isa::SliceMap& m) {
      const int b = isa_.buffer_index(m.buffer);
      if (b < 0 || !tracked(b) || !element_addressed(b) || m.length.size() != 2) return;
      for (std::size_t a = 0; a < ins.alpha.size(); ++a)
        if (ins.alpha[a] == m.length[1]) {
          values[a] = t_.width;
          env.set(ins.alpha[a], t_.width);
        }
    };
    for (const auto& m : ins.inputs) widen(m);
    for (const auto& m : ins.outputs) widen(m);
  }

  // Whether a new instruction (index >= first) reachable from `roots` is a byte view the
  // folding left (a bitcast-convert to or from u8). Where tiles have more than one dtype that
  // reads one dtype's bytes as another's, which kernels do not do; with one dtype an unfolded
  // view only re-shapes the same values (AMX: f32[16] stored, read back as f32[1,16]).
  bool reinterprets_bytes(int first, const std::vector<int>& roots) const {
    if (t_.dtypes.size() == 1) return false;
    std::vector<int> stack(roots.begin(), roots.end());
    std::set<int> seen;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      if (v < first || !seen.insert(v).second) continue;
      const hlo::Instruction& in = b_.instruction(v);
      if (in.opcode == hlo::Opcode::BitcastConvert && (in.shape.dtype == DType::u8 || b_.shape(in.operands[0]).dtype == DType::u8)) return true;
      stack.insert(stack.end(), in.operands.begin(), in.operands.end());
    }
    return false;
  }

  // Inlines the semantics; false (nothing recorded) when shapes do not fit the row model.
  bool execute(const isa::Instruction& ins, const sym::Bindings& env, const std::vector<Slice1>& in, const std::vector<Slice1>& out) {
    const int hbm = hbm_index();
    const int first = b_.size();
    std::vector<int> inputs;
    for (const Slice1& s : in) {
      const std::optional<int> gathered = gather(s.buffer, s.start, s.length);
      if (!gathered) return false;
      int v = *gathered;
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
    std::vector<int> written;
    for (std::size_t o = 0; o < out.size(); ++o) {
      const std::optional<int> v = out[o].buffer == hbm ? typed_bytes(results[o], out[o]) : results[o];
      if (!v) return false;
      const auto& buffer = isa_.buffers[static_cast<std::size_t>(out[o].buffer)];
      const std::int64_t rows = out[o].buffer == hbm ? out[o].length / lines_per_row(b_.shape(*v).dtype) : out[o].length;
      const Shape want(out[o].buffer == hbm ? b_.shape(*v).dtype : buffer.dtype, {rows, t_.width});
      if (!b_.shape(*v).same_type(want)) return false;
      writes.push_back({out[o], *v});
      written.push_back(*v);
    }
    if (reinterprets_bytes(first, written)) return false;
    for (const auto& [s, v] : writes) set_rows(s.buffer, s.start, v, b_.shape(v).dims[0]);
    return true;
  }

  // The bytes an instruction stores to HBM as rows of a tile dtype: the output's own in the
  // output region, else the first whose byte view folds away (scratch).
  std::optional<int> typed_bytes(int bytes, const Slice1& s) {
    const std::int64_t length = s.length * line_bytes_;
    if (b_.shape(bytes).dtype != DType::u8 || b_.shape(bytes).element_count() != length) return std::nullopt;
    std::optional<int> typed;
    for (DType d : t_.dtypes) {
      if (in_output(s) && d != output_type_) continue;
      const int w = byte_width(d);
      if (length % (t_.width * w) != 0) continue;
      const std::int64_t rows = length / (t_.width * w);
      int v = reshape(bytes, w > 1 ? std::vector<std::int64_t>{rows, t_.width, w} : std::vector<std::int64_t>{rows, t_.width});
      v = bitcast_convert(v, d);
      if (!typed) typed = v;
      if (b_.instruction(v).opcode != hlo::Opcode::BitcastConvert) return v;
    }
    return typed;
  }
};

}  // namespace random_program_detail

// A random valid program and its lifted kernel; throws Error(Unsupported) when no program
// writing the whole output region was found within options.attempts.
inline LiftedProgram random_program(const isa::IsaView& isa, std::uint64_t seed, const RandomProgramOptions& options = {}) {
  const KernelTraits traits = kernel_traits(isa);
  if (traits.empty()) throw Error(ErrorKind::Unsupported, fmt::format("random_program: ISA {} has no on-chip buffer of rows", isa.name));
  for (int attempt = 0; attempt < options.attempts; ++attempt) {
    random_program_detail::Lifter lifter(isa, traits, derive_seed(seed, static_cast<std::uint64_t>(attempt)), options);
    if (auto p = lifter.run(seed)) return std::move(*p);
  }
  throw Error(ErrorKind::Unsupported,
              fmt::format("random_program: no program for ISA {} wrote a whole output tile in {} attempts (seed {})", isa.name,
                          options.attempts, seed));
}

}  // namespace act::testing
