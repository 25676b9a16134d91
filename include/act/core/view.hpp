// A read-only view of contiguous values for the constexpr interfaces that every ISA header
// pulls in (hlo/shape_rules.hpp, hlo/semantics_outline.hpp, isa/validate.hpp).
//
// It does what std::span<const T> does for them, without std::span's constrained constructor
// overloads: with std::span in those interfaces, compiling tests/unit/sym_isa.cpp took 0.3 s
// (20 %) longer. Built from a pointer and a size, or from any container with data() and size()
// (std::vector, std::array, std::span, View).
#pragma once

#include <cstddef>

namespace act {

template <class T>
class View {
 public:
  constexpr View() = default;
  constexpr View(const T* data, std::size_t size) : data_(data), size_(size) {}
  template <class Container>
    requires requires(const Container& c) {
      c.data();
      c.size();
    }
  constexpr View(const Container& c) : data_(c.data()), size_(c.size()) {}

  constexpr const T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr View first(std::size_t n) const { return {data_, n}; }
  constexpr View subspan(std::size_t offset) const { return {data_ + offset, size_ - offset}; }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace act
