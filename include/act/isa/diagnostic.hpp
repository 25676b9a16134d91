// What ISA validation (isa/validate.hpp) reports, built in constant expressions: a Message (no
// allocation), the Diagnostic of a description, and the text helpers its messages use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "act/core/view.hpp"

namespace act::isa {

// A message assembled in constant expressions. Long enough for every problem of an instruction
// with its quoted statements; should it ever overflow, it ends in "..." rather than silently.
struct Message {
  static constexpr std::size_t kCapacity = 4096;
  std::array<char, kCapacity> chars{};
  std::size_t size = 0;

  constexpr Message& operator<<(std::string_view s) {
    for (char c : s) put(c);
    return *this;
  }
  constexpr Message& operator<<(std::int64_t v) {
    if (v < 0) {
      *this << "-";
      if (v == INT64_MIN) return *this << "9223372036854775808";
      v = -v;
    }
    char digits[20]{};
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v > 0);
    while (n > 0) put(digits[--n]);
    return *this;
  }
  constexpr Message& operator<<(int v) { return *this << static_cast<std::int64_t>(v); }
  constexpr Message& operator<<(unsigned v) { return *this << static_cast<std::int64_t>(v); }
  constexpr Message& operator<<(std::size_t v) { return *this << static_cast<std::int64_t>(v); }
  constexpr std::string_view view() const { return std::string_view(chars.data(), size); }
  constexpr bool empty() const { return size == 0; }
  // Forgets everything after the first `n` characters.
  constexpr void truncate(std::size_t n) { size = n < size ? n : size; }

 private:
  constexpr void put(char c) {
    if (size < kCapacity) {
      chars[size++] = c;
    } else {
      for (std::size_t i = kCapacity - 3; i < kCapacity; ++i) chars[i] = '.';
    }
  }
};

constexpr Message& operator<<(Message& m, View<std::int64_t> dims) {
  m << "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) m << ",";
    m << dims[i];
  }
  return m << "]";
}

// The problems of a description: those of the first instruction that has any (all of them where
// one does not hide the next), or the first ISA-level problem. ok() when there is none.
struct Diagnostic {
  std::string_view instruction;  // empty for ISA-level problems (buffers, state, C mapping)
  std::string_view file;         // where the instruction's initializer ends (file name only)
  unsigned line = 0;             //   0 when unknown
  std::size_t problems = 0;
  Message message;  // the problems, "; " between them, after "N problems: " when N > 1
  constexpr bool ok() const { return message.empty(); }
};

// Counts problems into one Message: each check writes only when it fails, so a check that
// passes leaves nothing behind, not even the separator.
class Problems {
 public:
  explicit constexpr Problems(Message& message) : message_(message) {}

  // Runs check(message); keeps what it wrote as one more problem when it returns false.
  template <class Check>
  constexpr bool check(Check&& check) {
    const std::size_t mark = message_.size;
    if (count_ > 0) message_ << "; ";
    if (check(message_)) {
      message_.truncate(mark);
      return true;
    }
    ++count_;
    return false;
  }
  constexpr std::size_t count() const { return count_; }

 private:
  Message& message_;
  std::size_t count_ = 0;
};

namespace text {

// Line `line` (1-based) of `text`, without surrounding blanks; empty when there is no such line.
constexpr std::string_view line_of(std::string_view text, int line) {
  for (int l = 1; l < line; ++l) {
    const std::size_t end = text.find('\n');
    if (end == std::string_view::npos) return {};
    text.remove_prefix(end + 1);
  }
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// "dir/tpu.hpp" -> "tpu.hpp"
constexpr std::string_view file_name(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Levenshtein distance, capped: anything above `cap` is reported as cap + 1.
constexpr std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap) {
  const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > cap || b.size() >= 64) return cap + 1;
  std::array<std::size_t, 64> row{};
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      std::size_t best = above + 1 < row[j - 1] + 1 ? above + 1 : row[j - 1] + 1;
      row[j] = substitute < best ? substitute : best;
      diagonal = above;
    }
  }
  return row[b.size()] > cap ? cap + 1 : row[b.size()];
}

// The name closest to a misspelt one among candidates offered one by one: at most two edits
// away, fewer than half its length, and no other candidate as close (else nothing is suggested).
class Closest {
 public:
  explicit constexpr Closest(std::string_view name) : name_(name) {}
  constexpr void consider(std::string_view candidate) {
    if (candidate == best_) return;
    const std::size_t d = edit_distance(name_, candidate, 2);
    if (d > 2 || 2 * d >= candidate.size()) return;
    if (d < distance_) {
      best_ = candidate;
      distance_ = d;
      tie_ = false;
    } else if (d == distance_) {
      tie_ = true;
    }
  }
  // "did you mean 'x'? " or nothing.
  constexpr Message& suggest(Message& m) const {
    if (!best_.empty() && !tie_) m << "did you mean '" << best_ << "'? ";
    return m;
  }

 private:
  std::string_view name_;
  std::string_view best_;
  std::size_t distance_ = 3;
  bool tie_ = false;
};

// "a, b, c" (or "none").
template <class Names>
constexpr Message& list(Message& m, const Names& names) {
  bool first = true;
  for (std::string_view n : names) {
    m << (first ? "" : ", ") << n;
    first = false;
  }
  if (first) m << "none";
  return m;
}

// "semantics line 3 '%a = u8[`n`, 8, 8] reshape(%In1)': " -- the statement a problem is about,
// quoted from the instruction's semantics (lines count from the semantics' first line).
constexpr Message& semantics_line(Message& m, std::string_view semantics, int line) {
  m << "semantics line " << line;
  const std::string_view quoted = line_of(semantics, line);
  if (!quoted.empty()) m << " '" << quoted << "'";
  return m << ": ";
}

}  // namespace text
}  // namespace act::isa
