// An append-only sequence stored in fixed-size chunks: growing never moves an element.
//
// The e-graph keeps one class record per id. A record (node and parent lists, the analysis data:
// a tensor type with several heap-backed members) is over 200 bytes, and a std::vector of them
// moved every record each time it doubled: move constructors and the new array's first-touch
// page faults were about 5 % of an AMX compile. Here a full chunk stays where it is and the next
// element starts a new one. Indexing is a shift and a mask.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace act::egraph {

template <class T, std::size_t ChunkBits = 9>
class ChunkedVector {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << ChunkBits;

  ChunkedVector() = default;
  // A copy's chunks get a chunk's full capacity too, so growing the copy never moves its
  // elements either (a copied std::vector has only the room its elements take).
  ChunkedVector(const ChunkedVector& other) : size_(other.size_) {
    chunks_.reserve(other.chunks_.capacity());
    for (const std::vector<T>& chunk : other.chunks_) {
      chunks_.emplace_back();
      chunks_.back().reserve(kChunk);
      chunks_.back().insert(chunks_.back().end(), chunk.begin(), chunk.end());
    }
  }
  ChunkedVector(ChunkedVector&&) noexcept = default;
  ChunkedVector& operator=(const ChunkedVector& other) {
    if (this != &other) *this = ChunkedVector(other);
    return *this;
  }
  ChunkedVector& operator=(ChunkedVector&&) noexcept = default;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Room for the chunk table only: chunks are allocated as elements arrive.
  void reserve(std::size_t n) { chunks_.reserve((n + kChunk - 1) / kChunk); }

  T& operator[](std::size_t i) { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ % kChunk == 0) {
      chunks_.emplace_back();
      chunks_.back().reserve(kChunk);  // filled to kChunk without reallocating
    }
    T& added = chunks_.back().emplace_back(std::forward<Args>(args)...);
    ++size_;
    return added;
  }

 private:
  std::vector<std::vector<T>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace act::egraph
