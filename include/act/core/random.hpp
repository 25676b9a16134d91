// SplitMix64: a tiny deterministic generator whose sequence is the same on every standard
// library, so random inputs, kernels and benchmarks are reproducible from a seed.
#pragma once

#include <cstdint>
#include <vector>

namespace act {

struct SplitMix64 {
  std::uint64_t state = 0;

  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n <= 1 gives 0.
  std::int64_t below(std::int64_t n) { return n <= 1 ? 0 : static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
  std::int64_t between(std::int64_t lo, std::int64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(int percent) { return below(100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<std::size_t>(below(static_cast<std::int64_t>(v.size())))]; }
  // Uniform in [-1, 1) with 52 random bits.
  double uniform_minus_one_to_one() { return static_cast<double>(next() >> 11) * 0x1p-52 - 1.0; }
};

}  // namespace act
