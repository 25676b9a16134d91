// An ISA semantics block parsed in constant expressions, into an outline: the statements of
// `ENTRY <name> { ... }`, each with its name, type (dims are integers or `backtick`
// expressions, which the caller evaluates), opcode, operands and integer-list attributes.
// Nothing else of HLO is kept: constant values, slice ranges, padding, comparison directions
// and called computations are skipped. Compile-time ISA validation (isa/validate.hpp) reads the
// outline; hlo::parse_semantics (parser.hpp) is the run-time parser that builds a Module.
//
//   SemanticsOutline outline;
//   OutlineError e = outline_semantics(text, outline);   // e.ok(), or what/quoted/line/column
//
// The grammar is parse_semantics's, tokenised by the same Lexer: `%` optional on names, `;`
// optional after a statement, a layout after the type is skipped, TAIDL's opcode spellings and
// `reduce_add(x), dimensions={d}` (reduce(x, 0) with add) are accepted, and the paper's
// shorthand is normalised as the parser does: `dot(a, b)` without dimension attributes
// contracts a's last dim with b's first, `transpose(x), dimensions=[..]` is 1-based and
// `broadcast(x), dimensions=[..]` (TAIDL's broadcast_dim) maps every dim to itself.
// Capacities are fixed (no allocation): see the kMaxOutline* constants.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "act/core/dtype.hpp"
#include "act/core/view.hpp"
#include "act/hlo/lexer.hpp"
#include "act/hlo/opcode.hpp"

namespace act::hlo {

inline constexpr std::size_t kMaxOutlineStatements = 40;
inline constexpr std::size_t kMaxOutlineRank = 8;
inline constexpr std::size_t kMaxOutlineOperands = 8;
inline constexpr std::size_t kMaxOutlineAttributes = 4;  // integer-list attributes per statement
inline constexpr std::size_t kMaxOutlineListLength = 8;

struct OutlineDim {
  std::int64_t size = 0;        // when `expression` is empty
  std::string_view expression;  // a backtick expression (or a bare name), for the caller to evaluate
  int line = 0, column = 0;
};

// `dimensions={1,0}`, `lhs_contracting_dims={1}`, `iota_dimension=0` (one entry), ...
struct IntListAttribute {
  std::string_view name;
  std::array<std::int64_t, kMaxOutlineListLength> items{};
  std::size_t count = 0;
  bool bracketed = false;  // written [..]: the paper's shorthand
  constexpr View<std::int64_t> values() const { return {items.data(), count}; }
};

struct OutlineStatement {
  std::string_view name;  // without '%'
  bool root = false;
  int line = 0, column = 0;  // of the statement's first token
  DType dtype = DType::u8;
  std::array<OutlineDim, kMaxOutlineRank> dims{};
  std::size_t rank = 0;
  Opcode opcode = Opcode::Copy;
  bool reduce_add = false;       // TAIDL's reduce_add sugar (opcode is Reduce, one operand)
  std::string_view opcode_text;  // as written
  int opcode_line = 0, opcode_column = 0;
  std::array<int, kMaxOutlineOperands> operands{};  // indices of earlier statements
  std::size_t operand_count = 0;
  std::int64_t parameter = -1;  // parameter(k)
  std::array<IntListAttribute, kMaxOutlineAttributes> attributes{};
  std::size_t attribute_count = 0;

  // The values of attribute `n`, empty when absent.
  constexpr View<std::int64_t> attribute(std::string_view n) const {
    for (std::size_t i = 0; i < attribute_count; ++i)
      if (attributes[i].name == n) return attributes[i].values();
    return {};
  }
  constexpr bool has_attribute(std::string_view n) const {
    for (std::size_t i = 0; i < attribute_count; ++i)
      if (attributes[i].name == n) return true;
    return false;
  }
};

struct SemanticsOutline {
  std::string_view name;  // the ENTRY block's name, without '%'
  std::array<OutlineStatement, kMaxOutlineStatements> statements{};
  std::size_t count = 0;

  constexpr int find(std::string_view statement_name) const {
    for (std::size_t i = 0; i < count; ++i)
      if (statements[i].name == statement_name) return static_cast<int>(i);
    return -1;
  }
};

// The first syntax problem: `what` (static text), the source text it quotes (may be empty) and
// where. ok() when there is none.
struct OutlineError {
  std::string_view what;
  std::string_view quoted;
  int line = 0, column = 0;
  constexpr bool ok() const { return what.empty(); }
};

namespace outline_detail {

// The attributes the outline keeps: those XLA gives integer lists (or one integer).
constexpr bool is_int_list_attribute(std::string_view n) {
  return n == "dimensions" || n == "lhs_batch_dims" || n == "lhs_contracting_dims" || n == "rhs_batch_dims" ||
         n == "rhs_contracting_dims" || n == "dynamic_slice_sizes" || n == "iota_dimension" || n == "index";
}

constexpr bool to_int(std::string_view s, std::int64_t& out) {
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty()) return false;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9' || v > (INT64_MAX - (c - '0')) / 10) return false;
    v = v * 10 + (c - '0');
  }
  out = negative ? -v : v;
  return true;
}

constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

class Parser {
 public:
  constexpr Parser(std::string_view text, SemanticsOutline& out) : lex_(text), before_peeked_(text), out_(out) {}

  constexpr const OutlineError& error() const { return error_; }

  constexpr bool parse() {
    Token t = take();
    if (t.kind != TokenKind::Identifier || t.text != "ENTRY")
      return fail(t, "semantics must start with 'ENTRY <instruction name> {'");
    t = take();
    if (t.kind != TokenKind::Identifier && t.kind != TokenKind::Name)
      return fail(t, "expected the block name after ENTRY");
    out_.name = t.text;
    if (take().kind != TokenKind::LeftBrace) return fail(t, "expected '{' after the ENTRY name");
    while (true) {
      const Token p = peek();
      if (p.kind == TokenKind::RightBrace) break;
      if (p.kind == TokenKind::End) return fail(p, "missing '}' at the end of the semantics");
      if (!statement()) return false;
    }
    take();
    const Token end = take();
    if (end.kind != TokenKind::End) return fail(end, "unexpected text after the closing '}'");
    return true;
  }

 private:
  // One token of lookahead, lexed once; unpeek() gives it back so that the lexer can read a raw
  // attribute value instead.
  constexpr const Token& peek() {
    if (!has_peeked_) {
      before_peeked_ = lex_;
      peeked_ = lex_.next();
      has_peeked_ = true;
    }
    return peeked_;
  }
  constexpr Token take() {
    peek();
    has_peeked_ = false;
    return peeked_;
  }
  constexpr void unpeek() {
    if (has_peeked_) lex_ = before_peeked_;
    has_peeked_ = false;
  }

  // Records the problem and returns false. A lexer error token reports itself; any other token
  // gets `what`.
  constexpr bool fail(const Token& at, std::string_view what, std::string_view quoted = {}) {
    if (at.kind == TokenKind::Error) error_ = {at.text, {}, at.line, at.column};
    else error_ = {what, quoted, at.line, at.column};
    return false;
  }

  constexpr bool statement() {
    Token t = take();
    OutlineStatement s;
    s.line = t.line;
    s.column = t.column;
    if (t.kind == TokenKind::Identifier && t.text == "ROOT") {
      s.root = true;
      t = take();
    }
    if (t.kind != TokenKind::Name && t.kind != TokenKind::Identifier && t.kind != TokenKind::AttributeName)
      return fail(t, "expected a statement '%name = dtype[dims] opcode(operands)'");
    s.name = t.text;
    if (out_.find(s.name) >= 0) return fail(t, "value defined twice:", s.name);
    if (t.kind != TokenKind::AttributeName && take().kind != TokenKind::Equal)  // `x=` lexes as one token
      return fail(t, "expected '=' after the value name", s.name);

    const Token type = take();
    const auto dtype = type.kind == TokenKind::Identifier ? parse_dtype(type.text) : std::nullopt;
    if (!dtype) return fail(type, "unknown element type", type.text);
    s.dtype = *dtype;
    if (take().kind != TokenKind::LeftBracket) return fail(type, "expected '[' after the element type");
    if (!dims(s)) return false;
    if (peek().kind == TokenKind::LeftBrace)  // a layout such as {1,0}
      if (!skip_balanced(0, "unbalanced brackets")) return false;

    const Token op = take();
    if (op.kind != TokenKind::Identifier) return fail(op, "expected an opcode");
    s.opcode_text = op.text;
    s.opcode_line = op.line;
    s.opcode_column = op.column;
    if (op.text == "reduce_add") {
      s.reduce_add = true;
      s.opcode = Opcode::Reduce;
    } else if (const auto code = parse_opcode(op.text)) {
      s.opcode = *code;
    } else {
      return fail(op, "unknown opcode", op.text);
    }
    if (take().kind != TokenKind::LeftParen) return fail(op, "expected '(' after the opcode", op.text);
    if (s.opcode == Opcode::Parameter) {
      const Token k = take();
      if (k.kind != TokenKind::Integer || !to_int(k.text, s.parameter) || s.parameter < 0)
        return fail(k, "parameter takes a non-negative integer");
      if (take().kind != TokenKind::RightParen) return fail(k, "expected ')' after the parameter number");
    } else if (s.opcode == Opcode::Constant) {
      if (!skip_balanced(1, "missing ')'")) return false;
    } else if (!operands(s)) {
      return false;
    }
    while (peek().kind == TokenKind::Comma) {
      take();
      if (!attribute(s)) return false;
    }
    if (peek().kind == TokenKind::Semicolon) take();
    if (!normalise_shorthand(s, op)) return false;
    if (out_.count == kMaxOutlineStatements) return fail(t, "too many statements in the semantics (at most 40)");
    out_.statements[out_.count++] = s;
    return true;
  }

  constexpr bool dims(OutlineStatement& s) {
    if (peek().kind == TokenKind::RightBracket) {
      take();
      return true;
    }
    while (true) {
      const Token d = take();
      if (s.rank == kMaxOutlineRank) return fail(d, "too many dimensions (at most 8)");
      OutlineDim dim;
      dim.line = d.line;
      dim.column = d.column;
      if (d.kind == TokenKind::Integer) {
        if (!to_int(d.text, dim.size) || dim.size < 0) return fail(d, "bad dimension", d.text);
      } else if (d.kind == TokenKind::Backtick || d.kind == TokenKind::Identifier) {
        dim.expression = d.text;
      } else {
        return fail(d, "expected a dimension (an integer or a `backtick expression`)");
      }
      s.dims[s.rank++] = dim;
      const Token sep = take();
      if (sep.kind == TokenKind::RightBracket) return true;
      if (sep.kind != TokenKind::Comma) return fail(sep, "expected ',' or ']' in the dimensions");
    }
  }

  constexpr bool operands(OutlineStatement& s) {
    if (peek().kind == TokenKind::RightParen) {
      take();
      return true;
    }
    while (true) {
      const Token o = take();
      if (o.kind != TokenKind::Name && o.kind != TokenKind::Identifier) return fail(o, "expected an operand name");
      const int index = out_.find(o.text);
      if (index < 0) return fail(o, "operand is not defined by an earlier statement:", o.text);
      if (s.operand_count == kMaxOutlineOperands) return fail(o, "too many operands (at most 8)");
      s.operands[s.operand_count++] = index;
      const Token sep = take();
      if (sep.kind == TokenKind::RightParen) return true;
      if (sep.kind != TokenKind::Comma) return fail(sep, "expected ',' or ')' after an operand");
    }
  }

  // `name=value`: integer lists are kept for the names is_int_list_attribute lists; every other
  // value is read verbatim and dropped.
  constexpr bool attribute(OutlineStatement& s) {
    const Token name = take();
    if (name.kind == TokenKind::Identifier) {
      if (take().kind != TokenKind::Equal) return fail(name, "expected '=' after the attribute", name.text);
    } else if (name.kind != TokenKind::AttributeName) {
      return fail(name, "expected an attribute name after ','");
    }
    unpeek();
    const Token value = lex_.next_raw_value();
    if (value.kind == TokenKind::Error) return fail(value, "");
    if (!is_int_list_attribute(name.text)) return true;
    // A slice's `dimensions=[:, 0, :]` is the paper's range shorthand, not an integer list; the
    // outline keeps no slice ranges (parse_semantics reads them).
    if (s.opcode == Opcode::Slice && name.text == "dimensions") return true;
    if (s.has_attribute(name.text)) return fail(name, "duplicate attribute", name.text);
    if (s.attribute_count == kMaxOutlineAttributes) return fail(name, "too many integer-list attributes (at most 4)");
    IntListAttribute& list = s.attributes[s.attribute_count++];
    list.name = name.text;
    std::string_view text = value.text;
    if (text.front() == '{' || text.front() == '[') {
      list.bracketed = text.front() == '[';
      if (text.back() != (list.bracketed ? ']' : '}')) return fail(value, "expected a list of integers");
      text = trim(text.substr(1, text.size() - 2));
      if (text.empty()) return true;
    }
    while (true) {  // comma-separated integers
      const std::size_t comma = text.find(',');
      const std::string_view item = trim(text.substr(0, comma));
      if (list.count == kMaxOutlineListLength) return fail(value, "too many entries in an integer list (at most 8)");
      if (!to_int(item, list.items[list.count++])) return fail(value, "expected a list of integers");
      if (comma == std::string_view::npos) return true;
      text.remove_prefix(comma + 1);
    }
  }

  // The paper's shorthand, in XLA's meaning (as parse_semantics reads it).
  constexpr bool normalise_shorthand(OutlineStatement& s, const Token& op) {
    for (std::size_t i = 0; i < s.attribute_count; ++i) {
      IntListAttribute& a = s.attributes[i];
      if (!a.bracketed) continue;
      if (a.name != "dimensions" || (s.opcode != Opcode::Transpose && s.opcode != Opcode::Broadcast))
        return fail(op, "[...] lists are shorthand for transpose and broadcast dimensions only");
      if (s.operand_count != 1) return true;  // reported by the operand count check
      const std::size_t rank = out_.statements[static_cast<std::size_t>(s.operands[0])].rank;
      for (std::size_t k = 0; k < a.count; ++k)
        if (a.items[k] < 1 || a.items[k] > static_cast<std::int64_t>(rank))
          return fail(op, "a shorthand dimension is out of range 1..rank");
      if (s.opcode == Opcode::Transpose) {  // 1-based permutation
        for (std::size_t k = 0; k < a.count; ++k) --a.items[k];
      } else {  // TAIDL broadcast_dim: the listed size-1 dims expand, every dim maps to itself
        a.count = rank;
        for (std::size_t k = 0; k < rank; ++k) a.items[k] = static_cast<std::int64_t>(k);
      }
      a.bracketed = false;
    }
    const bool dot_dims_written = s.has_attribute("lhs_batch_dims") || s.has_attribute("lhs_contracting_dims") ||
                                  s.has_attribute("rhs_batch_dims") || s.has_attribute("rhs_contracting_dims");
    if (s.opcode == Opcode::Dot && !dot_dims_written && s.operand_count == 2) {  // a's last with b's first
      const std::size_t lhs_rank = out_.statements[static_cast<std::size_t>(s.operands[0])].rank;
      const std::size_t rhs_rank = out_.statements[static_cast<std::size_t>(s.operands[1])].rank;
      if (lhs_rank > 0) add_list(s, "lhs_contracting_dims", static_cast<std::int64_t>(lhs_rank) - 1);
      if (rhs_rank > 0) add_list(s, "rhs_contracting_dims", 0);
    }
    return true;
  }

  static constexpr void add_list(OutlineStatement& s, std::string_view name, std::int64_t value) {
    if (s.attribute_count == kMaxOutlineAttributes) return;  // a dot with 4 other lists: its rule reports it
    IntListAttribute& a = s.attributes[s.attribute_count++];
    a.name = name;
    a.items[0] = value;
    a.count = 1;
  }

  // Skips tokens until the open brackets are closed: a layout {...} (none open yet, its '{'
  // comes next) or a constant's literal (its '(' already taken).
  constexpr bool skip_balanced(int open, std::string_view unclosed) {
    do {
      const Token t = take();
      if (t.kind == TokenKind::End || t.kind == TokenKind::Error) return fail(t, unclosed);
      if (t.kind == TokenKind::LeftBrace || t.kind == TokenKind::LeftBracket || t.kind == TokenKind::LeftParen) ++open;
      if (t.kind == TokenKind::RightBrace || t.kind == TokenKind::RightBracket || t.kind == TokenKind::RightParen) --open;
    } while (open > 0);
    return true;
  }

  OutlineError error_;
  Lexer lex_;
  Lexer before_peeked_{""};
  Token peeked_;
  bool has_peeked_ = false;
  SemanticsOutline& out_;
};

}  // namespace outline_detail

// Parses `text` into `out` (cleared first); the first syntax problem, or ok().
constexpr OutlineError outline_semantics(std::string_view text, SemanticsOutline& out) {
  out.count = 0;
  out.name = {};
  outline_detail::Parser parser(text, out);
  parser.parse();
  return parser.error();
}

}  // namespace act::hlo
