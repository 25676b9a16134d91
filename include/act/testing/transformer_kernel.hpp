// Transformer-block-like tiled kernels of a requested size, for the compile-time study
// (bench/compile_time's large kernels, issue 13): the shapes a real model's tiled kernel has,
// where random operator graphs (random_kernel.hpp) have none.
//
//   act::hlo::Module m = act::testing::transformer_kernel({.target_nodes = 390}, /*seed=*/1);
//
// Every tensor is one square tile [tile, tile] of `dtype` (Gemmini's s8[16,16] by default). A
// kernel is a chain of blocks on the running activation x:
//   attention, per head:  q, k, v = x.Wq, x.Wk, x.Wv;  scores = q . layout(k);
//                         p = clamp(scores - broadcast(row sums of scores));  o = (p . v) . Wo
//   heads summed (the concatenate-and-project of multi-head attention, as a sum of projections),
//   residual:             r = x + attention
//   MLP:                  y = r + relu(r . W1) . W2
// `layout` is a reverse (a layout change every ISA with identity slices can express; QK^T's
// transpose is not available on every accelerator) and the row normalisation stands in for
// softmax without an exponential, which integer accelerators lack. Weights are parameters; the
// seed picks the reversed dims and the clamp bounds. The block count is the one that brings the
// node count nearest to target_nodes (a block is 38 nodes at 2 heads): 150, 270 and 390 give
// 157, 271 and 385.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/random.hpp"
#include "act/hlo/builder.hpp"
#include "act/hlo/module.hpp"

namespace act::testing {

struct TransformerKernelOptions {
  DType dtype = DType::s8;
  std::int64_t tile = 16;
  int heads = 2;
  int target_nodes = 150;  // entry instructions (parameters and constants included)
};

namespace transformer_kernel_detail {

// Entry instructions one block adds: per head 4 weights and 11 operations, the head sum, the
// residual add, and the MLP (2 weights, 2 dots, relu, add).
constexpr int block_nodes(int heads) { return heads * 15 + (heads - 1) + 1 + 6; }
constexpr int fixed_nodes = 5;  // x, the constants 0 / low / high, the broadcast zero tile

}  // namespace transformer_kernel_detail

inline hlo::Module transformer_kernel(const TransformerKernelOptions& o, std::uint64_t seed) {
  using hlo::Opcode;
  namespace detail = transformer_kernel_detail;
  if (o.heads < 1 || o.tile < 1 || o.target_nodes < detail::fixed_nodes + detail::block_nodes(o.heads))
    throw Error(ErrorKind::Unsupported,
                fmt::format("transformer_kernel: {} nodes hold no block of {} heads (at least {})", o.target_nodes, o.heads,
                            detail::fixed_nodes + detail::block_nodes(o.heads)));
  SplitMix64 random{seed};
  hlo::Module m;
  m.name = fmt::format("transformer_{}", seed);
  const int sum = hlo::add_computation(m, hlo::scalar_binary_computation("reduce_add", Opcode::Add, o.dtype));
  hlo::ComputationBuilder b("main");
  const Shape tile(o.dtype, {o.tile, o.tile});
  int weights = 0;
  auto weight = [&] { return b.parameter(tile, fmt::format("w{}", weights++)); };
  int x = b.parameter(tile, "x");
  const int zero = b.constant(hlo::scalar_literal(o.dtype, 0));
  const int low = b.constant(hlo::scalar_literal(o.dtype, -static_cast<double>(random.between(2, 16))));
  const int high = b.constant(hlo::scalar_literal(o.dtype, static_cast<double>(random.between(2, 16))));
  const int zero_tile = b.broadcast(zero, {o.tile, o.tile}, {});
  const std::vector<std::vector<std::int64_t>> layouts{{0}, {1}, {0, 1}};
  const int per_block = detail::block_nodes(o.heads);
  const int blocks = (o.target_nodes - detail::fixed_nodes + per_block / 2) / per_block;
  for (int block = 0; block < blocks; ++block) {
    int attention = -1;
    for (int head = 0; head < o.heads; ++head) {
      const int wq = weight(), wk = weight(), wv = weight(), wo = weight();
      const int q = b.matmul(x, wq, o.dtype), k = b.matmul(x, wk, o.dtype), v = b.matmul(x, wv, o.dtype);
      const int scores = b.matmul(q, b.reverse(k, random.pick(layouts)), o.dtype);
      const int row_sums = b.reduce({scores}, {zero}, {1}, sum);
      const int centred = b.binary(Opcode::Subtract, scores, b.broadcast(row_sums, {o.tile, o.tile}, {0}));
      const int p = b.clamp(low, centred, high);
      const int projected = b.matmul(b.matmul(p, v, o.dtype), wo, o.dtype);
      attention = attention < 0 ? projected : b.binary(Opcode::Add, attention, projected);
    }
    const int r = b.binary(Opcode::Add, x, attention);
    const int w1 = weight(), w2 = weight();
    const int hidden = b.binary(Opcode::Maximum, b.matmul(r, w1, o.dtype), zero_tile);
    x = b.binary(Opcode::Add, r, b.matmul(hidden, w2, o.dtype));
  }
  hlo::add_computation(m, std::move(b).build(x), true);
  return m;
}

}  // namespace act::testing
