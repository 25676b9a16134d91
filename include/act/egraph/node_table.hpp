// The hashcons: an open-addressing set of node ids, keyed by the *contents* of the node each id
// names (the e-graph supplies hash and equality). Storing only 8 bytes per slot keeps inserts
// allocation-free between growths; the stored hash makes growth independent of node contents.
// Linear probing with backward-shift deletion, so erasing leaves no tombstones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "act/egraph/id.hpp"

namespace act::egraph {

class NodeTable {
 public:
  std::size_t size() const { return size_; }

  void reserve(std::size_t n) {
    std::size_t want = 16;
    while (want * 3 < n * 4) want *= 2;  // keep load <= 3/4
    if (want > slots_.size()) resize(want);
  }

  // The id whose node has hash `hash` and satisfies `same(id)`, or kNoId.
  template <class Same>
  Id find(std::uint32_t hash, Same&& same) const {
    if (slots_.empty()) return kNoId;
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == kNoId) return kNoId;
      if (s.hash == hash && same(s.id)) return s.id;
    }
  }

  // Looks `hash`/`same` up; when absent, inserts `id` in the same probe and returns kNoId.
  template <class Same>
  Id find_or_insert(std::uint32_t hash, Id id, Same&& same) {
    if ((size_ + 1) * 4 > slots_.size() * 3) resize(slots_.empty() ? 16 : slots_.size() * 2);
    std::size_t i = hash & mask_;
    for (;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == kNoId) break;
      if (s.hash == hash && same(s.id)) return s.id;
    }
    slots_[i] = Slot{hash, id};
    ++size_;
    return kNoId;
  }

  // Adds `id` (the caller has checked that no equal node is present).
  void insert(std::uint32_t hash, Id id) {
    if ((size_ + 1) * 4 > slots_.size() * 3) resize(slots_.empty() ? 16 : slots_.size() * 2);
    std::size_t i = hash & mask_;
    while (slots_[i].id != kNoId) i = (i + 1) & mask_;
    slots_[i] = Slot{hash, id};
    ++size_;
  }

  // Removes the slot holding exactly `id`, which was inserted with `hash`. False if absent.
  bool erase(std::uint32_t hash, Id id) {
    if (slots_.empty()) return false;
    std::size_t i = hash & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].id == kNoId) return false;
      if (slots_[i].id == id) break;
    }
    // Shift later members of the probe run back so lookups never stop early at the hole.
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask_; slots_[j].id != kNoId; j = (j + 1) & mask_) {
      std::size_t home = slots_[j].hash & mask_;
      // j may move into the hole iff its home is not cyclically in (hole, j].
      bool home_after_hole = ((j - home) & mask_) < ((j - hole) & mask_);
      if (!home_after_hole) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

 private:
  struct Slot {
    std::uint32_t hash = 0;
    Id id = kNoId;
  };

  void resize(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (const Slot& s : old) {
      if (s.id == kNoId) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].id != kNoId) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace act::egraph
