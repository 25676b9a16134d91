// S-expression text for patterns and ground terms, for tests and hand-written rules:
//   (+ (* ?a 2) ?b)         ?name is a variable; any other atom is an operator
//   (slice@s (add@f ?x ?y)) head@name captures the e-node the operator matched, as `name`
//   (@f (@s ?x) (@s ?y))    @name (right-hand sides) builds the operator captured as `name`
// Operators are made by the caller's parse_op(std::string_view head, std::size_t arity), which
// returns std::optional<Op> (an exact operator) or std::optional<OpMatcher<L>> (e.g. any
// operator of a kind, attributes ignored); nullopt: unknown operator. Terms take exact
// operators only, and neither captures nor reuses. Malformed text gives an act::Error of kind
// Parse with the line:column of the offending token. The primary API is PatternBuilder.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "act/core/error.hpp"
#include "act/egraph/egraph.hpp"
#include "act/egraph/pattern.hpp"

namespace act::egraph {

namespace detail {

struct SexprToken {
  enum class Kind { Open, Close, Atom, End };
  Kind kind;
  std::string_view text;
  SourceLocation where;
};

inline std::vector<SexprToken> tokenize_sexpr(std::string_view text) {
  std::vector<SexprToken> tokens;
  int line = 1, column = 1;
  std::size_t i = 0;
  auto advance = [&] {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
    ++i;
  };
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance();
      continue;
    }
    if (c == ';') {  // comment to end of line
      while (i < text.size() && text[i] != '\n') advance();
      continue;
    }
    SourceLocation where{line, column};
    if (c == '(' || c == ')') {
      tokens.push_back({c == '(' ? SexprToken::Kind::Open : SexprToken::Kind::Close, text.substr(i, 1), where});
      advance();
      continue;
    }
    std::size_t begin = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != '(' &&
           text[i] != ')' && text[i] != ';')
      advance();
    tokens.push_back({SexprToken::Kind::Atom, text.substr(begin, i - begin), where});
  }
  tokens.push_back({SexprToken::Kind::End, {}, SourceLocation{line, column}});
  return tokens;
}

template <Language L, class ParseOp>
class SexprPatternParser {
 public:
  SexprPatternParser(std::string_view text, ParseOp& parse_op, bool allow_variables)
      : tokens_(tokenize_sexpr(text)), parse_op_(parse_op), allow_variables_(allow_variables) {}

  Pattern<L> parse() {
    PatternRef root = expr(0);
    const SexprToken& t = tokens_[pos_];
    if (t.kind != SexprToken::Kind::End)
      throw Error(ErrorKind::Parse, fmt::format("unexpected '{}' after the pattern", t.text), t.where);
    return builder_.build(root);
  }

 private:
  static constexpr int kMaxDepth = 2000;

  PatternRef expr(int depth) {
    const SexprToken& t = tokens_[pos_];
    if (depth > kMaxDepth) throw Error(ErrorKind::Parse, "pattern nested too deeply", t.where);
    switch (t.kind) {
      case SexprToken::Kind::End: throw Error(ErrorKind::Parse, "unexpected end of pattern", t.where);
      case SexprToken::Kind::Close: throw Error(ErrorKind::Parse, "unexpected ')'", t.where);
      case SexprToken::Kind::Atom:
        ++pos_;
        if (t.text.front() == '?') {
          if (!allow_variables_) throw Error(ErrorKind::Parse, "a term cannot contain variables", t.where);
          if (t.text.size() == 1) throw Error(ErrorKind::Parse, "variable '?' needs a name", t.where);
          if (auto at = t.text.find('@'); at != std::string_view::npos)
            throw Error(ErrorKind::Parse, "a variable cannot be captured", column_of(t, at));
          return builder_.var(t.text);
        }
        return operator_node(t, {});
      case SexprToken::Kind::Open: break;
    }
    ++pos_;
    const SexprToken& head = tokens_[pos_];
    if (head.kind != SexprToken::Kind::Atom || head.text.front() == '?')
      throw Error(ErrorKind::Parse, "expected an operator after '('", head.where);
    ++pos_;
    std::vector<PatternRef> children;
    while (tokens_[pos_].kind != SexprToken::Kind::Close) {
      if (tokens_[pos_].kind == SexprToken::Kind::End)
        throw Error(ErrorKind::Parse, "missing ')'", tokens_[pos_].where);
      children.push_back(expr(depth + 1));
    }
    ++pos_;
    return operator_node(head, children);
  }

  static SourceLocation column_of(const SexprToken& t, std::size_t offset) {
    return SourceLocation{t.where.line, t.where.column + static_cast<int>(offset)};
  }

  // `op`, `op@capture` or `@capture` (reuse) over the children already parsed.
  PatternRef operator_node(const SexprToken& t, std::span<const PatternRef> children) {
    const std::size_t at = t.text.find('@');
    if (at == std::string_view::npos) return plain_operator(t, t.text, children);
    if (!allow_variables_) throw Error(ErrorKind::Parse, "a term cannot capture or reuse operators", column_of(t, at));
    const std::string_view name = t.text.substr(at + 1);
    if (name.empty() || name.front() == '?' || name.find('@') != std::string_view::npos)
      throw Error(ErrorKind::Parse, fmt::format("bad capture name '{}'", name), column_of(t, at + 1));
    const bool reuse = at == 0;
    for (const auto& [seen, seen_reused] : names_)
      if (seen == name && (!reuse || !seen_reused))
        throw Error(ErrorKind::Parse, fmt::format("capture '{}' is named twice", name), column_of(t, at + 1));
    names_.emplace_back(name, reuse);
    if (reuse) return builder_.reuse(name, children);
    return builder_.op(matcher(t, t.text.substr(0, at), children.size()), children, name);
  }

  PatternRef plain_operator(const SexprToken& t, std::string_view head, std::span<const PatternRef> children) {
    OpMatcher<L> m = matcher(t, head, children.size());
    if (m.exact) return builder_.op(*m.exact, children);  // equal sub-terms share one node
    if (!allow_variables_)
      throw Error(ErrorKind::Parse, fmt::format("operator '{}' matches a kind; a term needs an exact operator", head),
                  t.where);
    return builder_.op(std::move(m), children);
  }

  OpMatcher<L> matcher(const SexprToken& t, std::string_view head, std::size_t arity) {
    auto parsed = parse_op_(head, arity);
    if (!parsed)
      throw Error(ErrorKind::Parse, fmt::format("unknown operator '{}' with {} operands", head, arity), t.where);
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*parsed)>, OpMatcher<L>>) return std::move(*parsed);
    else return OpMatcher<L>::equal_to(std::move(*parsed));
  }

  std::vector<SexprToken> tokens_;
  std::size_t pos_ = 0;
  ParseOp& parse_op_;
  bool allow_variables_;
  std::vector<std::pair<std::string_view, bool>> names_;  // captures and reuses so far (true: reuse)
  PatternBuilder<L> builder_;
};

}  // namespace detail

template <Language L, class ParseOp>
Pattern<L> parse_pattern(std::string_view text, ParseOp&& parse_op) {
  return detail::SexprPatternParser<L, std::remove_reference_t<ParseOp>>(text, parse_op, true).parse();
}

// Adds a ground term (no variables) to the e-graph; returns its class.
template <Language L, class A, class ParseOp>
Id add_term(EGraph<L, A>& g, std::string_view text, ParseOp&& parse_op) {
  Pattern<L> p = detail::SexprPatternParser<L, std::remove_reference_t<ParseOp>>(text, parse_op, false).parse();
  std::vector<Id> scratch;
  return p.instantiate(g, [](Var) { return kNoId; }, scratch);
}

}  // namespace act::egraph
