// Accelerator assembly: a program is a list of concrete instructions (an ISA instruction with
// every attribute given a value) plus a constant pool written into HBM before it runs.
//
// Text format (docs/assembly-format.md):
//   # comment                                   whole-line or trailing comments
//   load_rm(n = 64, addr_in = 0, addr_out = 0)  one instruction per line
//   .constant addr = 32768, bytes = 803f0000    constant-pool bytes (hex, two digits a byte)
// The printer writes attributes in declared order (alpha then beta); the parser accepts any
// order but requires each declared attribute exactly once. Values are decimal or 0x-hex.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/description.hpp"

namespace act::sim {

struct ConcreteInstruction {
  std::string name;                      // an instruction of the ISA
  std::vector<std::int64_t> attributes;  // alpha then beta, in declared order
  SourceLocation location;               // where it was parsed from (unknown if built in code)

  friend bool operator==(const ConcreteInstruction& a, const ConcreteInstruction& b) {
    return a.name == b.name && a.attributes == b.attributes;  // the location is not part of the value
  }
};

// A run of bytes the program needs in HBM before it starts (e.g. an identity matrix).
struct ConstantBlock {
  std::int64_t address = 0;
  std::vector<std::uint8_t> bytes;
  friend bool operator==(const ConstantBlock&, const ConstantBlock&) = default;
};

struct Program {
  std::vector<ConcreteInstruction> instructions;
  std::vector<ConstantBlock> constants;  // sorted by address, adjacent blocks merged
  friend bool operator==(const Program&, const Program&) = default;
};

// Declared attribute names of an instruction: alpha then beta.
inline std::vector<std::string_view> attribute_names(const isa::Instruction& instruction) {
  std::vector<std::string_view> names(instruction.alpha.begin(), instruction.alpha.end());
  names.insert(names.end(), instruction.beta.begin(), instruction.beta.end());
  return names;
}

// Sorts constant blocks by address and merges touching ones; overlapping blocks are an error.
inline void normalize_constants(std::vector<ConstantBlock>& blocks) {
  std::stable_sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
  std::vector<ConstantBlock> merged;
  for (auto& block : blocks) {
    if (block.bytes.empty()) continue;
    if (!merged.empty()) {
      auto& last = merged.back();
      const std::int64_t end = last.address + static_cast<std::int64_t>(last.bytes.size());
      if (block.address < end)
        throw Error(ErrorKind::Parse, fmt::format("constant blocks at {} and {} overlap", last.address, block.address));
      if (block.address == end) {
        last.bytes.insert(last.bytes.end(), block.bytes.begin(), block.bytes.end());
        continue;
      }
    }
    merged.push_back(std::move(block));
  }
  blocks = std::move(merged);
}

namespace assembly_detail {

// A cursor over one line that reports errors at 1-based line:column.
class LineCursor {
 public:
  LineCursor(std::string_view line, int line_number) : line_(line), line_number_(line_number) {}

  void skip_space() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t' || line_[pos_] == '\r')) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= line_.size() || line_[pos_] == '#';
  }
  SourceLocation location() const { return {line_number_, static_cast<int>(pos_) + 1}; }
  [[noreturn]] void fail(std::string message) const { throw Error(ErrorKind::Parse, std::move(message), location()); }
  [[noreturn]] void fail_at(std::size_t pos, std::string message) const {
    throw Error(ErrorKind::Parse, std::move(message), {line_number_, static_cast<int>(pos) + 1});
  }

  bool next_is(char c) {
    skip_space();
    return pos_ < line_.size() && line_[pos_] == c;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < line_.size() && line_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c)) fail(fmt::format("expected '{}' {}, found {}", c, what, describe_next()));
  }

  std::string_view identifier(std::string_view what) {
    skip_space();
    const std::size_t start = pos_;
    if (pos_ < line_.size() && (std::isalpha(static_cast<unsigned char>(line_[pos_])) || line_[pos_] == '_')) {
      ++pos_;
      while (pos_ < line_.size() && (std::isalnum(static_cast<unsigned char>(line_[pos_])) || line_[pos_] == '_')) ++pos_;
    }
    if (start == pos_) fail(fmt::format("expected {}, found {}", what, describe_next()));
    return line_.substr(start, pos_ - start);
  }

  // A decimal or 0x-hex integer, optionally negative, that fits in int64.
  std::int64_t number(std::string_view what) {
    skip_space();
    const std::size_t start = pos_;
    std::size_t p = pos_;
    bool negative = false;
    if (p < line_.size() && line_[p] == '-') {
      negative = true;
      ++p;
    }
    int base = 10;
    if (p + 1 < line_.size() && line_[p] == '0' && (line_[p + 1] == 'x' || line_[p + 1] == 'X')) {
      base = 16;
      p += 2;
    }
    std::size_t end = p;
    while (end < line_.size() && std::isalnum(static_cast<unsigned char>(line_[end]))) ++end;
    const std::string_view digits = line_.substr(p, end - p);
    std::uint64_t magnitude = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size())
      fail_at(start, fmt::format("bad number '{}' for {}", line_.substr(start, std::max(end, start + 1) - start), what));
    const std::uint64_t limit = negative ? (std::uint64_t{1} << 63) : (std::uint64_t{1} << 63) - 1;
    if (magnitude > limit) fail_at(start, fmt::format("number '{}' for {} does not fit in 64 bits", line_.substr(start, end - start), what));
    pos_ = end;
    return negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  }

  // Hex digit pairs, one byte each.
  std::vector<std::uint8_t> hex_bytes() {
    skip_space();
    const std::size_t start = pos_;
    if (pos_ + 1 < line_.size() && line_[pos_] == '0' && (line_[pos_ + 1] == 'x' || line_[pos_ + 1] == 'X')) pos_ += 2;
    std::vector<std::uint8_t> bytes;
    const std::size_t digits_start = pos_;
    while (pos_ < line_.size() && std::isxdigit(static_cast<unsigned char>(line_[pos_]))) ++pos_;
    if (pos_ < line_.size() && std::isalnum(static_cast<unsigned char>(line_[pos_])))
      fail(fmt::format("bad hex digit '{}' in constant bytes", line_[pos_]));
    const std::size_t n = pos_ - digits_start;
    if (n == 0) fail_at(start, "expected hex bytes");
    if (n % 2 != 0) fail_at(start, "constant bytes need an even number of hex digits (two per byte)");
    auto nibble = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10); };
    for (std::size_t i = digits_start; i < pos_; i += 2)
      bytes.push_back(static_cast<std::uint8_t>(nibble(line_[i]) * 16 + nibble(line_[i + 1])));
    return bytes;
  }

  std::string describe_next() {
    skip_space();
    if (pos_ >= line_.size()) return "end of line";
    return fmt::format("'{}'", line_[pos_]);
  }
  std::size_t position() {
    skip_space();
    return pos_;
  }

 private:
  std::string_view line_;
  int line_number_;
  std::size_t pos_ = 0;
};

inline ConstantBlock parse_constant(LineCursor& cursor) {
  // `.constant addr = N, bytes = HEX`
  const std::size_t directive_pos = cursor.position();
  cursor.expect('.', "");
  const auto directive = cursor.identifier("a directive name");
  if (directive != "constant") cursor.fail_at(directive_pos, fmt::format("unknown directive '.{}'", directive));
  ConstantBlock block;
  bool have_addr = false, have_bytes = false;
  do {
    const std::size_t key_pos = cursor.position();
    const auto key = cursor.identifier("'addr' or 'bytes'");
    cursor.expect('=', fmt::format("after '{}'", key));
    if (key == "addr") {
      if (have_addr) cursor.fail_at(key_pos, "duplicate 'addr' in .constant");
      have_addr = true;
      const std::size_t value_pos = cursor.position();
      block.address = cursor.number("addr");
      if (block.address < 0) cursor.fail_at(value_pos, "constant address must not be negative");
    } else if (key == "bytes") {
      if (have_bytes) cursor.fail_at(key_pos, "duplicate 'bytes' in .constant");
      have_bytes = true;
      block.bytes = cursor.hex_bytes();
    } else {
      cursor.fail_at(key_pos, fmt::format("unknown .constant field '{}' (expected addr or bytes)", key));
    }
  } while (cursor.accept(','));
  if (!have_addr || !have_bytes)
    cursor.fail(fmt::format(".constant needs both addr and bytes; '{}' is missing", have_addr ? "bytes" : "addr"));
  if (!cursor.at_end()) cursor.fail(fmt::format("unexpected {} after .constant", cursor.describe_next()));
  // Keeps address + size (computed when blocks are merged) inside int64.
  if (static_cast<std::uint64_t>(block.bytes.size()) > static_cast<std::uint64_t>(INT64_MAX - block.address))
    cursor.fail_at(directive_pos, fmt::format("constant block at {} runs past the end of the address space", block.address));
  return block;
}

// Parsed blocks must not overlap; checked here, where each block's line is still known, so the
// error points at the later of two overlapping lines (normalize_constants has no locations).
inline void check_constants_disjoint(const std::vector<ConstantBlock>& blocks, const std::vector<SourceLocation>& where) {
  std::vector<std::size_t> order(blocks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return blocks[a].address < blocks[b].address; });
  std::size_t furthest = blocks.size();  // the block reaching furthest so far
  std::int64_t furthest_end = 0;
  for (std::size_t i : order) {
    if (blocks[i].bytes.empty()) continue;
    if (furthest != blocks.size() && blocks[i].address < furthest_end) {
      const bool i_later = where[i].line > where[furthest].line;
      const std::size_t later = i_later ? i : furthest, earlier = i_later ? furthest : i;
      throw Error(ErrorKind::Parse,
                  fmt::format("constant block at {} overlaps the block at {} (line {})", blocks[later].address,
                              blocks[earlier].address, where[earlier].line),
                  where[later]);
    }
    const std::int64_t end = blocks[i].address + static_cast<std::int64_t>(blocks[i].bytes.size());
    if (furthest == blocks.size() || end > furthest_end) {
      furthest = i;
      furthest_end = end;
    }
  }
}

inline ConcreteInstruction parse_instruction(LineCursor& cursor, const isa::IsaView& isa) {
  ConcreteInstruction result;
  result.location = cursor.location();
  const std::size_t name_pos = cursor.position();
  result.location.column = static_cast<int>(name_pos) + 1;
  const auto name = cursor.identifier("an instruction name");
  const isa::Instruction* instruction = isa.find_instruction(name);
  if (!instruction) cursor.fail_at(name_pos, fmt::format("unknown instruction '{}' in ISA {}", name, isa.name));
  result.name = std::string(name);
  const auto names = attribute_names(*instruction);
  std::vector<bool> given(names.size(), false);
  result.attributes.assign(names.size(), 0);
  cursor.expect('(', fmt::format("after '{}'", name));
  if (!cursor.accept(')')) {
    do {
      const std::size_t attr_pos = cursor.position();
      const auto attr = cursor.identifier("an attribute name");
      const auto it = std::find(names.begin(), names.end(), attr);
      if (it == names.end()) cursor.fail_at(attr_pos, fmt::format("'{}' has no attribute '{}'", name, attr));
      const auto k = static_cast<std::size_t>(it - names.begin());
      if (given[k]) cursor.fail_at(attr_pos, fmt::format("attribute '{}' of '{}' given twice", attr, name));
      cursor.expect('=', fmt::format("after attribute '{}'", attr));
      result.attributes[k] = cursor.number(fmt::format("attribute '{}'", attr));
      given[k] = true;
    } while (cursor.accept(','));
    cursor.expect(')', fmt::format("to close '{}(' (or ',' before the next attribute)", name));
  }
  for (std::size_t k = 0; k < names.size(); ++k)
    if (!given[k]) cursor.fail_at(name_pos, fmt::format("'{}' is missing attribute '{}'", name, names[k]));
  if (!cursor.at_end()) cursor.fail(fmt::format("unexpected {} after the instruction", cursor.describe_next()));
  return result;
}

}  // namespace assembly_detail

// Parses program text for `isa`. Errors are act::Error(Parse) at the offending line:column.
inline Program parse_program(std::string_view text, const isa::IsaView& isa) {
  Program program;
  std::vector<SourceLocation> constant_locations;  // one per parsed block, for overlap errors
  int line_number = 0;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    ++line_number;
    assembly_detail::LineCursor cursor(text.substr(begin, end - begin), line_number);
    if (!cursor.at_end()) {
      if (cursor.next_is('.')) {
        constant_locations.push_back(cursor.location());
        program.constants.push_back(assembly_detail::parse_constant(cursor));
      } else {
        program.instructions.push_back(assembly_detail::parse_instruction(cursor, isa));
      }
    }
    if (end == text.size()) break;
    begin = end + 1;
  }
  assembly_detail::check_constants_disjoint(program.constants, constant_locations);
  normalize_constants(program.constants);
  return program;
}

struct PrintOptions {
  bool hex = false;                  // attribute values as 0x.. (constant bytes are always hex)
  std::vector<std::string> header;   // comment lines printed first, each "# " + comment_text(line)
  std::size_t constant_bytes_per_line = 64;
};

inline std::string format_value(std::int64_t value, bool hex) {
  if (!hex) return fmt::format("{}", value);
  if (value < 0) return fmt::format("-0x{:x}", 0 - static_cast<std::uint64_t>(value));
  return fmt::format("0x{:x}", value);
}

// Text safe inside a one-line comment of any output format: bytes outside printable ASCII
// (a newline in a file name would end the comment and start a live line) and backslashes are
// written as \xNN and \\.
inline std::string comment_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') out += "\\\\";
    else if (byte < 0x20 || byte >= 0x7f) out += fmt::format("\\x{:02x}", byte);
    else out += c;
  }
  return out;
}

// Prints a program; every instruction must belong to `isa` and give all its attributes.
inline std::string print_program(const Program& program, const isa::IsaView& isa, const PrintOptions& options = {}) {
  std::string out;
  for (const auto& line : options.header) out += line.empty() ? "#\n" : fmt::format("# {}\n", comment_text(line));
  for (const auto& ci : program.instructions) {
    const isa::Instruction* instruction = isa.find_instruction(ci.name);
    if (!instruction) throw Error(ErrorKind::Isa, fmt::format("unknown instruction '{}' in ISA {}", ci.name, isa.name));
    const auto names = attribute_names(*instruction);
    if (names.size() != ci.attributes.size())
      throw Error(ErrorKind::Isa, fmt::format("'{}' takes {} attributes, the program gives {}", ci.name, names.size(), ci.attributes.size()));
    out += ci.name;
    out += '(';
    for (std::size_t k = 0; k < names.size(); ++k)
      out += fmt::format("{}{} = {}", k ? ", " : "", names[k], format_value(ci.attributes[k], options.hex));
    out += ")\n";
  }
  const std::size_t per_line = std::max<std::size_t>(options.constant_bytes_per_line, 1);
  for (const auto& block : program.constants) {
    for (std::size_t off = 0; off < block.bytes.size(); off += per_line) {
      out += fmt::format(".constant addr = {}, bytes = ", format_value(block.address + static_cast<std::int64_t>(off), options.hex));
      for (std::size_t i = off; i < std::min(block.bytes.size(), off + per_line); ++i) out += fmt::format("{:02x}", block.bytes[i]);
      out += '\n';
    }
  }
  return out;
}

}  // namespace act::sim
