// Module 1's overlays: a row-major output wider than any one store writes, offered as the stores
// that write part of their window would assemble it.
//
// A *partial store* (mvout_acc_stride; tilestored at a stride wider than 64 bytes) writes an
// r-row block into a window of r rows at the output's row pitch and keeps the window's other
// bytes. The ISA says so itself: Out0 is in HBM, one input is the same HBM window (same start
// and length), and the semantics is a dynamic-update-slice of that window at constant start
// indices. Its geometry is read from the semantics instantiated at the alpha whose window is r
// rows of the output (`partial_stores`): the window's dims [r, ..., n, ...], the block's
// [r, ..., u, ...] (they differ in one dim d), the bytes of one block row (wb = u x the dims after
// d).
// For an untiled row-major output whose rows are Cb bytes with Cb a multiple of wb (and more),
// each band of r rows becomes
//   band == overlay^H(P_0, ..., P_{m-1}) at byte offsets j x wb,   m = Cb / wb
//   P_j  = reshape(embed(block_j)) : u8[r x Cb]   (block_j placed at 0 in a don't-care window)
//   block_j = slice of the band's bytes viewed as the window's dims, cut along d at j x u
// and the output's bytes are the concatenation of its bands. The store's embedding searcher
// matches P_j (isa_rules.hpp); P_j's window runs j x wb bytes past the band, bytes it never
// writes (phase 2 clips its footprint to the overlay, alloc/values.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "act/isa/semantics.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/rules/isa/searcher_plan.hpp"

namespace act::select::init_detail {

// One partial store's geometry for a band of `rows` rows of `row_bytes` bytes.
struct PartialStore {
  std::int64_t rows = 0;                 // r
  std::int64_t block_row_bytes = 0;      // wb
  std::vector<std::int64_t> window;      // the window's dims (u8), r x row_bytes bytes in all
  std::size_t dim = 0;                   // d: where block and window differ
  std::int64_t block_extent = 0;         // u: the block's extent along d
};

namespace overlay_detail {

inline std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d * d <= n && out.size() < 512; ++d)
    if (n % d == 0) {
      out.push_back(d);
      if (d * d != n) out.push_back(n / d);
    }
  return out;
}

// The instruction writes an HBM window it also reads (same start and length): a store that may
// keep part of its window.
inline bool writes_in_place(const isa::IsaView& isa, const isa::Instruction& inst) {
  if (inst.outputs.size() != 1 || inst.alpha.size() != 1) return false;
  const isa::SliceMap& out = inst.outputs[0];
  const int b = isa.buffer_index(out.buffer);
  if (b < 0 || !isa.buffers[static_cast<std::size_t>(b)].is_hbm || out.start.size() != 1) return false;
  for (const isa::SliceMap& in : inst.inputs)
    if (in.buffer == out.buffer && in.start.size() == 1 && in.start[0] == out.start[0] && in.length[0] == out.length[0])
      return true;
  return false;
}

// The geometry of `inst` at the alpha whose window is `band` bytes, when its semantics is a
// dynamic-update-slice of u8 rows at start 0 that leaves part of the window.
inline std::optional<PartialStore> geometry(const isa::Instruction& inst, std::int64_t band, std::int64_t rows) {
  const sym::ParseResult length = sym::try_parse(inst.outputs[0].length[0]);
  if (!length.ok()) return std::nullopt;
  for (std::int64_t alpha : divisors(band)) {
    const auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
      return name == inst.alpha[0] ? std::optional(alpha) : std::nullopt;
    };
    const sym::EvalResult value = sym::try_evaluate(length.expr, env);
    const std::int64_t alphas[1] = {alpha};
    if (!value.ok() || value.value != band || !isa::alpha_constraints_hold(inst, alphas)) continue;
    hlo::Module semantics;
    try {
      semantics = isa::instantiate_semantics(inst, alphas);
    } catch (const Error&) {
      continue;
    }
    const auto& ins = semantics.entry_computation().instructions;
    for (const hlo::Instruction& dus : ins) {
      if (dus.opcode != hlo::Opcode::DynamicUpdateSlice || dus.operands.size() < 2) continue;
      const auto start = isa_rule_detail::constant_start_indices(ins, dus);
      const Shape& window = dus.shape;
      const Shape& block = ins[static_cast<std::size_t>(dus.operands[1])].shape;
      if (!start || window.dtype != DType::u8 || window.dims.size() != block.dims.size() || window.element_count() != band)
        continue;
      std::optional<std::size_t> differs;
      bool ok = true;
      for (std::size_t d = 0; d < window.dims.size() && ok; ++d) {
        ok = (*start)[d] == 0;
        if (window.dims[d] != block.dims[d]) {
          ok = ok && !differs;
          differs = d;
        }
      }
      if (!ok || !differs || *differs == 0) continue;
      std::int64_t r = 1, inner = 1;
      for (std::size_t d = 0; d < *differs; ++d) r *= window.dims[d];
      for (std::size_t d = *differs + 1; d < window.dims.size(); ++d) inner *= window.dims[d];
      if (r != rows) continue;
      return PartialStore{rows, block.dims[*differs] * inner, window.dims, *differs, block.dims[*differs]};
    }
  }
  return std::nullopt;
}

// Binary concatenates, balanced (split_bytes nests halves the same way, so the classes meet).
inline egraph::Id concat_balanced(TensorBuilder& b, const std::vector<egraph::Id>& parts, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return parts[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return b.concat({concat_balanced(b, parts, lo, mid), concat_balanced(b, parts, mid, hi)}, 0);
}

}  // namespace overlay_detail

// At most this many embedded blocks per output: each is an e-class and a store to match.
inline constexpr std::int64_t kMaxOverlayBlocks = 256;

// Offers `root` (the bytes of an untiled row-major output of logical type `shape`) as bands of
// overlays of partial stores, for the first partial store of the ISA that fits. Returns the
// number of blocks embedded (0: none fits).
inline std::int64_t add_output_overlays(TensorBuilder& b, egraph::Id root, const Shape& shape) {
  const isa::IsaView& isa = b.ctx.isa;
  if (shape.is_tuple || shape.dims.size() < 2) return 0;
  const std::int64_t row_bytes = shape.dims.back() * byte_width(shape.dtype);
  const std::int64_t rows = shape.element_count() / std::max<std::int64_t>(shape.dims.back(), 1);
  if (row_bytes <= 0 || rows <= 0) return 0;
  int hbm = -1;
  for (std::size_t i = 0; i < isa.buffers.size() && hbm < 0; ++i)
    if (isa.buffers[i].is_hbm) hbm = static_cast<int>(i);
  for (const isa::Instruction& inst : isa.instructions) {
    if (!overlay_detail::writes_in_place(isa, inst)) continue;
    for (std::int64_t r : overlay_detail::divisors(rows)) {
      const auto store = overlay_detail::geometry(inst, r * row_bytes, r);
      if (!store || row_bytes % store->block_row_bytes != 0 || row_bytes == store->block_row_bytes) continue;
      const std::int64_t per_band = row_bytes / store->block_row_bytes, bands = rows / r;
      if (per_band * bands > kMaxOverlayBlocks) continue;
      const std::int64_t band_bytes = r * row_bytes;
      std::vector<egraph::Id> band_ids;
      for (std::int64_t k = 0; k < bands; ++k) {
        const egraph::Id band = bands == 1 ? root : b.slice_dim(root, 0, k * band_bytes, (k + 1) * band_bytes);
        const egraph::Id window = b.reshape(band, store->window);
        std::vector<egraph::Id> parts;
        std::vector<std::int64_t> offsets;
        for (std::int64_t j = 0; j < per_band; ++j) {
          const egraph::Id block = b.slice_dim(window, store->dim, j * store->block_extent, (j + 1) * store->block_extent);
          const egraph::Id embedded =
              b.add(make_embed(b.ctx.attributes, store->window, std::vector<std::int64_t>(store->window.size(), 0)), {block});
          parts.push_back(b.reshape(embedded, {band_bytes}));
          offsets.push_back(j * store->block_row_bytes);
        }
        b.g.unite(band, b.add(make_overlay_h(b.ctx.attributes, hbm, band_bytes, offsets), parts));
        band_ids.push_back(band);
      }
      if (bands > 1) b.g.unite(root, overlay_detail::concat_balanced(b, band_ids, 0, band_ids.size()));
      return per_band * bands;
    }
  }
  return 0;
}

}  // namespace act::select::init_detail
