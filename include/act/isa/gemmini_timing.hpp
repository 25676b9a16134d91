// Gemmini's per-instruction cycle model: the numbers behind the `cost` expressions of
// gemmini.hpp, gemmini_hw.hpp and gemmini_plus.hpp. Cost expressions are sym/ text over alpha
// (no function calls), so the descriptions write these formulas out; tests/unit/isa_gemmini.cpp
// checks every declared cost against the functions below, so the two cannot drift apart.
//
// Numbers and sources (docs/design-decisions.md (Gemmini) discusses them and the calibration):
// - kDim = 16: the 16x16 systolic array of gemmini_params_16.h (DIM 16).
// - kDmaBytesPerCycle = 16: Gemmini's DMA moves one beat of its 128-bit TileLink port per cycle
//   (GemminiConfigs.scala defaultConfig: dma_buswidth = 128, dma_maxbytes = 64).
// - kDmaLatency = 16 cycles per mvin/mvout: the fixed part of a transfer (RoCC issue, TLB, the
//   request reaching memory) that a back-to-back sequence of transfers does not hide. An
//   estimate, not a measurement: the model is additive and has no overlap between queues.
// - A preload puts DIM rows (D in OS, B in WS) into the array and a compute streams the rows of
//   A through it, one row per cycle: a 16x16x16 tile costs 16 + 16 cycles.
// - loop_ws (Gemmini+): its FSM double-buffers DMA against the array, so it costs the larger of
//   the two plus one DMA latency and the array's fill (2 x 16).
#pragma once

#include <algorithm>
#include <cstdint>

namespace act::isa::gemmini_timing {

inline constexpr std::int64_t kDim = 16;
inline constexpr std::int64_t kDmaBytesPerCycle = 16;
inline constexpr std::int64_t kDmaLatency = 16;

// One DMA transfer of `bytes` (mvin or mvout, any buffer).
constexpr std::int64_t dma_cycles(std::int64_t bytes) {
  return kDmaLatency + (bytes + kDmaBytesPerCycle - 1) / kDmaBytesPerCycle;
}

// Streaming `rows` rows of A through the array after the DIM-row preload.
constexpr std::int64_t array_cycles(std::int64_t rows) { return kDim + rows; }

// loop_ws over an m x k by k x n product (elements; multiples of kDim): A, B in, C out as s32.
constexpr std::int64_t loop_ws_cycles(std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::int64_t dma = (m * k + k * n + 4 * m * n) / kDmaBytesPerCycle;
  const std::int64_t array = m * n * k / (kDim * kDim);
  return kDmaLatency + 2 * kDim + std::max(dma, array);
}

}  // namespace act::isa::gemmini_timing
