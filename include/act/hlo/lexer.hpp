// Tokens of XLA's HLO text (and of the paper's shorthand and ISA semantics blocks).
//
// A plain constexpr scanner over a std::string_view: no allocation, no exceptions, so it also
// runs in constant expressions (compile-time validation of ISA semantics). Errors come back as
// TokenKind::Error tokens whose text is the message.
//
// Context-dependent tokens are lexed lazily, on request of the parser, as XLA's lexer does:
// `next()` never produces DxD (`3x3`) or padding (`0_0x1_1`) tokens; `next_word()` reads such a
// run, and `next_raw_value()` reads a whole attribute value verbatim (balanced brackets, strings).
#pragma once

#include <cstddef>
#include <string_view>

namespace act::hlo {

enum class TokenKind : unsigned char {
  End,
  Error,          // text is the message
  Identifier,     // [a-zA-Z_@$][a-zA-Z0-9_.@$-]*  (keywords such as ENTRY, ROOT, true are identifiers)
  Name,           // %identifier; text without the '%'
  AttributeName,  // identifier immediately followed by '='; text without the '=', which is consumed
  Integer,        // -?[0-9]+
  Float,          // decimals with '.' or exponent, and inf, -inf, nan, -nan
  String,         // "..." or '...'; text includes the quotes
  Backtick,       // `expression`; text without the backticks
  Word,           // from next_word() only
  RawValue,       // from next_raw_value() only
  Equal, Comma, Colon, Semicolon, Star, Hash, Plus, Tilde, Question, Arrow, LessEqual,
  LeftBracket, RightBracket, LeftBrace, RightBrace, LeftParen, RightParen, Ellipsis,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;
  int line = 1;
  int column = 1;
  std::size_t offset = 0;  // byte offset of the token's first character in the input
};

class Lexer {
 public:
  constexpr explicit Lexer(std::string_view text) : text_(text) {}

  constexpr Token next() {
    if (const auto error = skip_trivia(); !error.empty()) return error_token(error);
    const std::size_t start = pos_;
    const int line = line_, column = column_;
    auto make = [&](TokenKind kind, std::size_t begin, std::size_t end) {
      return Token{kind, text_.substr(begin, end - begin), line, column, start};
    };
    if (pos_ >= text_.size()) return make(TokenKind::End, pos_, pos_);
    const char c = text_[pos_];

    if (is_identifier_start(c)) {
      const std::size_t end = identifier_end(pos_);
      advance_on_line(end);
      if (end - start == 3 && (starts_with_at(start, "inf") || starts_with_at(start, "nan")))
        return make(TokenKind::Float, start, end);
      if (pos_ < text_.size() && text_[pos_] == '=' && !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '=')) {
        advance_on_line(pos_ + 1);
        return make(TokenKind::AttributeName, start, end);
      }
      return make(TokenKind::Identifier, start, end);
    }
    if (c == '%') {
      if (pos_ + 1 >= text_.size() || !is_identifier_start(text_[pos_ + 1]))
        return error_here("expected a name after '%'");
      const std::size_t end = identifier_end(pos_ + 1);
      advance_on_line(end);
      return make(TokenKind::Name, start + 1, end);
    }
    if (is_digit(c) || c == '-' || c == '.') {
      if (c == '.' && starts_with("...")) {
        advance_to(pos_ + 3);
        return make(TokenKind::Ellipsis, start, pos_);
      }
      if (c == '-' && starts_with("->")) {
        advance_to(pos_ + 2);
        return make(TokenKind::Arrow, start, pos_);
      }
      if (c == '-' && (starts_with("-inf") || starts_with("-nan")) &&
          !(pos_ + 4 < text_.size() && is_identifier_char(text_[pos_ + 4]))) {
        advance_to(pos_ + 4);
        return make(TokenKind::Float, start, pos_);
      }
      return lex_number();
    }
    if (c == '"' || c == '\'') {
      std::size_t i = pos_ + 1;
      while (i < text_.size() && text_[i] != c) {
        if (text_[i] == '\\') ++i;
        ++i;
      }
      if (i >= text_.size()) return error_here("unterminated string");
      advance_to(i + 1);
      return make(TokenKind::String, start, pos_);
    }
    if (c == '`') {
      std::size_t i = pos_ + 1;
      while (i < text_.size() && text_[i] != '`') ++i;
      if (i >= text_.size()) return error_here("unterminated backtick expression");
      advance_to(i + 1);
      return make(TokenKind::Backtick, start + 1, i);
    }
    if (c == '<' && starts_with("<=")) {
      advance_to(pos_ + 2);
      return make(TokenKind::LessEqual, start, pos_);
    }
    TokenKind kind = TokenKind::Error;
    switch (c) {
      case '=': kind = TokenKind::Equal; break;
      case ',': kind = TokenKind::Comma; break;
      case ':': kind = TokenKind::Colon; break;
      case ';': kind = TokenKind::Semicolon; break;
      case '*': kind = TokenKind::Star; break;
      case '#': kind = TokenKind::Hash; break;
      case '+': kind = TokenKind::Plus; break;
      case '~': kind = TokenKind::Tilde; break;
      case '?': kind = TokenKind::Question; break;
      case '[': kind = TokenKind::LeftBracket; break;
      case ']': kind = TokenKind::RightBracket; break;
      case '{': kind = TokenKind::LeftBrace; break;
      case '}': kind = TokenKind::RightBrace; break;
      case '(': kind = TokenKind::LeftParen; break;
      case ')': kind = TokenKind::RightParen; break;
      default: return error_here("unexpected character");
    }
    advance_on_line(pos_ + 1);
    return make(kind, start, pos_);
  }

  // A run of [A-Za-z0-9_?.+~-] characters (padding `0_0x1_2_1`, windows `3x3`, dim labels).
  constexpr Token next_word() {
    if (const auto error = skip_trivia(); !error.empty()) return error_token(error);
    const Token head{TokenKind::Word, {}, line_, column_, pos_};
    std::size_t i = pos_;
    while (i < text_.size() && (is_identifier_char(text_[i]) || text_[i] == '?' || text_[i] == '+' ||
                                text_[i] == '~'))
      ++i;
    if (i == pos_) return error_here("expected a value");
    Token t = head;
    t.text = text_.substr(pos_, i - pos_);
    advance_to(i);
    return t;
  }

  // An attribute value verbatim: words and balanced (), [], {} groups (strings and comments
  // inside are respected) up to a top-level ',' ';' newline, comment, or unmatched closer.
  // Trailing blanks are not part of the value.
  constexpr Token next_raw_value() {
    if (const auto error = skip_blanks(); !error.empty()) return error_token(error);
    const int line = line_, column = column_;
    const std::size_t start = pos_;
    char stack[256];  // only entries below `depth` are read (no initialisation: cheap in constexpr)
    int depth = 0;
    std::size_t i = pos_;
    std::size_t last_significant = pos_;
    while (i < text_.size()) {
      const char c = text_[i];
      if (depth == 0) {
        if (c == ',' || c == ';' || c == '\n' || c == '\r') break;
        if (c == '/' && i + 1 < text_.size() && (text_[i + 1] == '/' || text_[i + 1] == '*')) break;
        if (c == ')' || c == ']' || c == '}') break;
      }
      if (c == '"' || c == '\'') {
        std::size_t j = i + 1;
        while (j < text_.size() && text_[j] != c) {
          if (text_[j] == '\\') ++j;
          ++j;
        }
        if (j >= text_.size()) return error_at(i, "unterminated string");
        i = j + 1;
        last_significant = i;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        if (depth == 256) return error_at(i, "brackets nested too deeply");
        stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
      } else if (c == ')' || c == ']' || c == '}') {
        if (stack[depth - 1] != c) return error_at(i, "mismatched bracket");
        --depth;
      }
      ++i;
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') last_significant = i;
    }
    if (depth > 0) {
      advance_to(i);
      return error_token(expected_closer(stack[depth - 1]));
    }
    if (last_significant == start) return error_here("expected an attribute value");
    advance_to(last_significant);
    return Token{TokenKind::RawValue, text_.substr(start, last_significant - start), line, column, start};
  }

  constexpr std::size_t offset() const { return pos_; }
  constexpr int line() const { return line_; }
  constexpr int column() const { return column_; }
  constexpr std::string_view text() const { return text_; }

 private:
  static constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static constexpr bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
  static constexpr bool is_identifier_start(char c) { return is_letter(c) || c == '_' || c == '@' || c == '$'; }
  static constexpr bool is_identifier_char(char c) {
    return is_identifier_start(c) || is_digit(c) || c == '.' || c == '-';
  }
  static constexpr std::string_view expected_closer(char closer) {
    return closer == ')' ? "unexpected end of input, expected ')'"
           : closer == ']' ? "unexpected end of input, expected ']'"
                           : "unexpected end of input, expected '}'";
  }

  // Character by character: cheaper than substr + compare when evaluated at compile time.
  constexpr bool starts_with_at(std::size_t at, std::string_view s) const {
    if (at > text_.size() || text_.size() - at < s.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (text_[at + i] != s[i]) return false;
    return true;
  }
  constexpr bool starts_with(std::string_view s) const { return starts_with_at(pos_, s); }

  constexpr std::size_t identifier_end(std::size_t i) const {
    while (i < text_.size() && is_identifier_char(text_[i])) {
      // `x->y`: an arrow is never part of a name.
      if (text_[i] == '-' && i + 1 < text_.size() && text_[i + 1] == '>') break;
      ++i;
    }
    return i;
  }

  // Within one line (no '\n' before `end`): only the column moves.
  constexpr void advance_on_line(std::size_t end) {
    column_ += static_cast<int>(end - pos_);
    pos_ = end;
  }

  constexpr void advance_to(std::size_t end) {
    for (; pos_ < end && pos_ < text_.size(); ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
    }
  }

  // Skips whitespace and comments; returns an error message for an unterminated block comment.
  constexpr std::string_view skip_trivia() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        advance_on_line(pos_ + 1);
      } else if (c == '\n') {
        advance_to(pos_ + 1);
      } else if (c != '/') {
        break;
      } else if (starts_with("//")) {
        std::size_t i = pos_;
        while (i < text_.size() && text_[i] != '\n') ++i;
        advance_on_line(i);
      } else if (starts_with("/*")) {
        const std::size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) return "unterminated comment";
        advance_to(close + 2);
      } else {
        break;
      }
    }
    return {};
  }

  // Spaces and tabs only: a raw value must start on the attribute's line.
  constexpr std::string_view skip_blanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) advance_on_line(pos_ + 1);
    return {};
  }

  constexpr Token lex_number() {
    const std::size_t start = pos_;
    const int line = line_, column = column_;
    std::size_t i = pos_;
    if (text_[i] == '-') ++i;
    const std::size_t digits_start = i;
    while (i < text_.size() && is_digit(text_[i])) ++i;
    bool is_float = false;
    std::size_t integer_digits = i - digits_start;
    std::size_t fraction_digits = 0;
    if (i < text_.size() && text_[i] == '.' && !(i + 1 < text_.size() && text_[i + 1] == '.')) {
      ++i;
      const std::size_t f = i;
      while (i < text_.size() && is_digit(text_[i])) ++i;
      fraction_digits = i - f;
      is_float = true;
    }
    if (integer_digits == 0 && fraction_digits == 0) return error_here("expected a number");
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      std::size_t j = i + 1;
      if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
      if (j < text_.size() && is_digit(text_[j])) {
        while (j < text_.size() && is_digit(text_[j])) ++j;
        i = j;
        is_float = true;
      }
    }
    advance_on_line(i);
    return Token{is_float ? TokenKind::Float : TokenKind::Integer, text_.substr(start, i - start), line, column,
                 start};
  }

  constexpr Token error_token(std::string_view message) const {
    return Token{TokenKind::Error, message, line_, column_, pos_};
  }
  constexpr Token error_here(std::string_view message) const { return error_token(message); }
  // An error at byte `at`, which lies on or after the current position.
  constexpr Token error_at(std::size_t at, std::string_view message) {
    advance_to(at);
    return error_token(message);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace act::hlo
