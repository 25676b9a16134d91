// Gemmini's cost model on the loop-fission candidates of a tiled GEMM (paper App. E), and the
// rank correlation used to calibrate it against the RTL measurements there.
//
// A candidate (io, i, jo, j, ko) of an M x N x K s8 GEMM (M = io i 16, N = jo j 64, K = ko 64)
// is the loop nest App. E describes:
//   for io, jo:                       load the A block (i 16 x K) and the B block (K x j 64)
//     for i, j:                       one 16 x 64 tile of C in the accumulator
//       for ko:                       16 matmuls of 16 x 16 x 16 (4 k-steps x 4 column tiles)
//       store the 16 x 64 C tile (s8)
// Every transfer is one mvin/mvout of a 16 x 64 s8 block (1024 bytes, Gemmini's largest DMA
// request for DIM 16: 4 x DIM columns). The model prices this instruction stream with the same
// per-instruction cycles as the descriptions (isa/gemmini_timing.hpp): the sum of the
// instructions' cycles, no overlap. Scratchpad rows the candidate occupies: i K + 4 j K (the A and
// B blocks), the column App. E lists.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "act/core/error.hpp"
#include "act/isa/gemmini_timing.hpp"

namespace act::codegen {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};

struct FissionCandidate {
  std::int64_t io = 1, i = 1, jo = 1, j = 1, ko = 1;
};

// The instruction stream of one candidate, counted.
struct FissionCounts {
  std::int64_t mvins = 0;     // 16 x 64 s8 blocks loaded (A and B)
  std::int64_t matmuls = 0;   // 16 x 16 x 16 preload + compute pairs
  std::int64_t mvouts = 0;    // 16 x 64 s8 blocks stored (C)
  std::int64_t spad_rows = 0; // rows of 16 bytes the A and B blocks occupy
};

inline constexpr std::int64_t kFissionTileRows = 16, kFissionTileCols = 64;

// Throws Error(InvalidArgument) when the candidate does not tile the shape.
inline FissionCounts fission_counts(const GemmShape& s, const FissionCandidate& c) {
  if (c.io * c.i * kFissionTileRows != s.m || c.jo * c.j * kFissionTileCols != s.n || c.ko * kFissionTileCols != s.k)
    throw Error(ErrorKind::Unsupported, "fission candidate does not tile the GEMM");
  FissionCounts f;
  const std::int64_t blocks = c.io * c.jo;
  f.mvins = blocks * (c.i * c.ko + c.ko * 4 * c.j);  // A: i row tiles x ko; B: 64 rows x j tiles per ko
  f.matmuls = blocks * c.i * c.j * c.ko * 16;
  f.mvouts = blocks * c.i * c.j;
  f.spad_rows = c.i * s.k + 4 * c.j * s.k;
  return f;
}

// Model cycles: every instruction's cycles (gemmini_timing), summed.
inline std::int64_t fission_cycles(const GemmShape& s, const FissionCandidate& c) {
  namespace t = isa::gemmini_timing;
  const FissionCounts f = fission_counts(s, c);
  const std::int64_t block = kFissionTileRows * kFissionTileCols;
  return f.mvins * t::dma_cycles(block) + f.matmuls * t::array_cycles(t::kDim) + f.mvouts * t::dma_cycles(block);
}

// Ranks with ties averaged (1-based).
inline std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
    i = j + 1;
  }
  return rank;
}

// Spearman's rank correlation (Pearson's on average ranks); NaN when either side is constant.
inline double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) throw Error(ErrorKind::Unsupported, "spearman: need two equal-length series");
  const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double num = 0, da = 0, db = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  if (da == 0 || db == 0) return std::nan("");
  return num / std::sqrt(da * db);
}

}  // namespace act::codegen
