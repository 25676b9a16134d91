// Attribute expressions: the small integer language of ISA descriptions (`n * 128`,
// `addr_out + n`, `n <= 128 && n >= 1`, `min(a, b)`).
//
// One parsed form, one evaluator. `parse` is constexpr (a fixed-capacity node array, no
// allocation) so ISA headers are checked at compile time; `evaluate_in(domain, expr, env)` is
// the single definition of the meaning, instantiated for
//   IntDomain            std::int64_t, overflow-checked (simulator, shape checks)
//   Z3Domain (sym/z3.hpp) z3::expr (the allocation CSP)
// Semantics: `/` and `%` are floor division and modulo and need a positive divisor; comparisons
// and `&& || !` yield 0/1 over integers; `&&` and `||` evaluate both sides (no short circuit,
// so the meaning is the same in every domain).
// Identifiers may carry TAIDL prefixes: `@c.n`, `@a.addr`, `@s.preload` name n, addr, preload.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <string_view>
#include <utility>

#include "act/core/error.hpp"

namespace act::sym {

enum class Op : std::uint8_t {
  Const, Var,                        // leaves
  Neg, Not,                          // unary
  Add, Sub, Mul, Div, Mod, Min, Max, // arithmetic
  Eq, Ne, Lt, Le, Gt, Ge,            // comparisons
  And, Or,                           // logic
};

struct Node {
  Op op = Op::Const;
  std::int64_t value = 0;  // Const
  std::string_view name;   // Var (without TAIDL prefix)
  int lhs = -1;            // operand of unary ops, left operand of binary ops
  int rhs = -1;
};

inline constexpr std::size_t kMaxNodes = 64;

// A parsed expression. Children always precede their parent in `nodes`; `root` is the last
// node. Names are views into the parsed text, so the text must outlive the Expr.
struct Expr {
  std::array<Node, kMaxNodes> nodes{};
  int count = 0;
  int root = -1;

  constexpr const Node& node(int i) const { return nodes[static_cast<std::size_t>(i)]; }
  constexpr const Node& top() const { return node(root); }
};

// Outcome of `try_parse`: the expression, or a static message and a 1-based column.
struct ParseResult {
  Expr expr;
  std::string_view error;  // empty on success
  int column = 0;
  constexpr bool ok() const { return error.empty(); }
};

namespace detail {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

// Recursive descent, lowest precedence first: || , && , comparisons, + -, * / %, unary, primary.
class Parser {
 public:
  constexpr explicit Parser(std::string_view text) : text_(text) {}

  constexpr ParseResult run() {
    skip_space();
    int root = parse_or();
    if (failed()) return fail_result();
    skip_space();
    if (pos_ < text_.size()) {
      set_error("unexpected text after the expression", pos_);
      return fail_result();
    }
    result_.expr.root = root;
    return result_;
  }

 private:
  constexpr bool failed() const { return !result_.error.empty(); }
  constexpr ParseResult fail_result() const {
    ParseResult r;
    r.error = result_.error;
    r.column = result_.column;
    return r;
  }
  constexpr void set_error(std::string_view message, std::size_t at) {
    if (failed()) return;
    result_.error = message;
    result_.column = static_cast<int>(at) + 1;
  }

  constexpr int add(Node n) {
    if (failed()) return -1;
    if (static_cast<std::size_t>(result_.expr.count) >= kMaxNodes) {
      set_error("expression too long (more than 64 nodes)", pos_);
      return -1;
    }
    result_.expr.nodes[static_cast<std::size_t>(result_.expr.count)] = n;
    return result_.expr.count++;
  }
  constexpr int binary(Op op, int lhs, int rhs) { return add(Node{op, 0, {}, lhs, rhs}); }

  constexpr void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  // Consumes `token` if the text continues with it (after spaces).
  constexpr bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  constexpr bool peek(std::string_view token) {
    skip_space();
    return text_.substr(pos_, token.size()) == token;
  }

  constexpr int parse_or() {
    int lhs = parse_and();
    while (!failed() && accept("||")) lhs = binary(Op::Or, lhs, parse_and());
    return lhs;
  }
  constexpr int parse_and() {
    int lhs = parse_comparison();
    while (!failed() && accept("&&")) lhs = binary(Op::And, lhs, parse_comparison());
    return lhs;
  }
  constexpr int parse_comparison() {
    int lhs = parse_additive();
    while (!failed()) {
      Op op;
      if (accept("==")) op = Op::Eq;
      else if (accept("!=")) op = Op::Ne;
      else if (accept("<=")) op = Op::Le;
      else if (accept(">=")) op = Op::Ge;
      else if (accept("<")) op = Op::Lt;
      else if (accept(">")) op = Op::Gt;
      else break;
      lhs = binary(op, lhs, parse_additive());
    }
    return lhs;
  }
  constexpr int parse_additive() {
    int lhs = parse_multiplicative();
    while (!failed()) {
      if (accept("+")) lhs = binary(Op::Add, lhs, parse_multiplicative());
      else if (accept("-")) lhs = binary(Op::Sub, lhs, parse_multiplicative());
      else break;
    }
    return lhs;
  }
  constexpr int parse_multiplicative() {
    int lhs = parse_unary();
    while (!failed()) {
      if (accept("*")) lhs = binary(Op::Mul, lhs, parse_unary());
      else if (accept("//")) lhs = binary(Op::Div, lhs, parse_unary());  // Python floor division
      else if (accept("/")) lhs = binary(Op::Div, lhs, parse_unary());
      else if (accept("%")) lhs = binary(Op::Mod, lhs, parse_unary());
      else break;
    }
    return lhs;
  }
  constexpr int parse_unary() {
    if (peek("!=")) return parse_primary();  // reported as "unexpected character"
    if (++depth_ > kMaxDepth) {  // bounds the recursion on hostile input like "((((((..."
      set_error("expression nested too deeply", pos_);
      return -1;
    }
    int result;
    if (accept("-")) result = add(Node{Op::Neg, 0, {}, parse_unary(), -1});
    else if (accept("!")) result = add(Node{Op::Not, 0, {}, parse_unary(), -1});
    else result = parse_primary();
    --depth_;
    return result;
  }
  constexpr int parse_primary() {
    skip_space();
    if (failed()) return -1;
    if (pos_ >= text_.size()) {
      set_error("expected an expression, found the end of the text", pos_);
      return -1;
    }
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      int inner = parse_or();
      if (!failed() && !accept(")")) set_error("expected ')'", pos_);
      return inner;
    }
    if (is_digit(c)) {
      const std::size_t start = pos_;
      std::int64_t value = 0;
      while (pos_ < text_.size() && is_digit(text_[pos_])) {
        const std::int64_t digit = text_[pos_] - '0';
        if (value > (INT64_MAX - digit) / 10) {
          set_error("integer literal out of range", start);
          return -1;
        }
        value = value * 10 + digit;
        ++pos_;
      }
      if (pos_ < text_.size() && is_ident_char(text_[pos_])) {
        set_error("malformed integer literal", start);
        return -1;
      }
      return add(Node{Op::Const, value, {}, -1, -1});
    }
    if (c == '@') {  // TAIDL attribute prefixes @c. @a. @s.
      const std::size_t start = pos_;
      if (pos_ + 2 < text_.size() && (text_[pos_ + 1] == 'c' || text_[pos_ + 1] == 'a' || text_[pos_ + 1] == 's') &&
          text_[pos_ + 2] == '.' && pos_ + 3 < text_.size() && is_ident_start(text_[pos_ + 3])) {
        pos_ += 3;
        return identifier();
      }
      set_error("expected @c., @a. or @s. followed by a name", start);
      return -1;
    }
    if (is_ident_start(c)) {
      const std::size_t start = pos_;
      int var = identifier();
      if (!peek("(")) return var;
      const std::string_view name = text_.substr(start, pos_ - start);
      // A call: only min and max exist. The Var node just added is dropped (it was the last).
      if (name != "min" && name != "max") {
        set_error("unknown function (only min and max exist)", start);
        return -1;
      }
      --result_.expr.count;
      accept("(");
      int a = parse_or();
      if (!failed() && !accept(",")) set_error("expected ',' between the two arguments", pos_);
      int b = parse_or();
      if (!failed() && !accept(")")) set_error("expected ')' after the second argument", pos_);
      return binary(name == "min" ? Op::Min : Op::Max, a, b);
    }
    set_error(c == ')' ? "expected an expression before ')'" : "unexpected character", pos_);
    return -1;
  }
  constexpr int identifier() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    return add(Node{Op::Var, 0, text_.substr(start, pos_ - start), -1, -1});
  }

  static constexpr int kMaxDepth = 64;
  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  ParseResult result_{};
};

}  // namespace detail

// Never throws; usable in constant expressions.
constexpr ParseResult try_parse(std::string_view text) { return detail::Parser(text).run(); }

// Throws act::Error(ErrorKind::Parse, ..., {1, column}) on malformed text. In a constant
// expression a malformed text makes the evaluation non-constant (a compile error).
constexpr Expr parse(std::string_view text) {
  ParseResult r = try_parse(text);
  if (!r.ok())
    throw Error(ErrorKind::Parse, fmt::format("in expression '{}': {}", text, r.error), SourceLocation{1, r.column});
  return r.expr;
}

// An expression parsed once and kept with its text, for hot paths that would otherwise parse it
// per use. An Expr's names are views into its text, so the pair lives on the heap where nothing
// moves it: share it, never copy it.
struct ParsedText {
  explicit ParsedText(std::string source) : text(std::move(source)), expr(parse(text)) {}
  ParsedText(const ParsedText&) = delete;
  ParsedText& operator=(const ParsedText&) = delete;
  const std::string text;
  const Expr expr;
};

inline std::shared_ptr<const ParsedText> parse_shared(std::string text) {
  return std::make_shared<const ParsedText>(std::move(text));
}

// ---- free identifiers, renaming, binding

inline constexpr std::size_t kMaxIdentifiers = 16;

struct Identifiers {
  std::array<std::string_view, kMaxIdentifiers> names{};
  std::size_t count = 0;
  constexpr std::size_t size() const { return count; }
  constexpr const std::string_view* begin() const { return names.data(); }
  constexpr const std::string_view* end() const { return names.data() + count; }
  constexpr bool contains(std::string_view n) const {
    for (std::size_t i = 0; i < count; ++i)
      if (names[i] == n) return true;
    return false;
  }
};

// Distinct identifiers in order of first appearance (at most kMaxIdentifiers; more are
// dropped, which no realistic attribute expression reaches).
constexpr Identifiers free_identifiers(const Expr& e) {
  Identifiers ids;
  for (int i = 0; i < e.count; ++i) {
    const Node& n = e.node(i);
    if (n.op == Op::Var && !ids.contains(n.name) && ids.count < kMaxIdentifiers) ids.names[ids.count++] = n.name;
  }
  return ids;
}

constexpr bool mentions(const Expr& e, std::string_view name) { return free_identifiers(e).contains(name); }

// Every occurrence of `from` renamed to `to` (`to` must outlive the result).
constexpr Expr rename(Expr e, std::string_view from, std::string_view to) {
  for (int i = 0; i < e.count; ++i)
    if (e.nodes[static_cast<std::size_t>(i)].op == Op::Var && e.nodes[static_cast<std::size_t>(i)].name == from)
      e.nodes[static_cast<std::size_t>(i)].name = to;
  return e;
}

// Every occurrence of `name` replaced by the constant `value`.
constexpr Expr bind(Expr e, std::string_view name, std::int64_t value) {
  for (int i = 0; i < e.count; ++i) {
    Node& n = e.nodes[static_cast<std::size_t>(i)];
    if (n.op == Op::Var && n.name == name) n = Node{Op::Const, value, {}, -1, -1};
  }
  return e;
}

// ---- evaluation: the one definition, over any Domain
//
// A Domain provides `using Value`, `constant(int64)`, `variable(name, env)`, `unary(op, v)` and
// `binary(op, a, b)`. The env is whatever the domain's `variable` understands.

template <class Domain, class Env>
constexpr typename Domain::Value evaluate_node(Domain& domain, const Expr& e, int index, const Env& env) {
  const Node& n = e.node(index);
  switch (n.op) {
    case Op::Const: return domain.constant(n.value);
    case Op::Var: return domain.variable(n.name, env);
    case Op::Neg:
    case Op::Not: return domain.unary(n.op, evaluate_node(domain, e, n.lhs, env));
    default: {
      auto a = evaluate_node(domain, e, n.lhs, env);
      auto b = evaluate_node(domain, e, n.rhs, env);
      return domain.binary(n.op, std::move(a), std::move(b));
    }
  }
}

template <class Domain, class Env>
constexpr typename Domain::Value evaluate_in(Domain& domain, const Expr& e, const Env& env) {
  if (e.root < 0 || e.root >= e.count) throw Error(ErrorKind::Internal, "evaluating an empty expression");
  return evaluate_node(domain, e, e.root, env);
}

// Integer bindings for IntDomain: name -> value pairs, constexpr-friendly.
struct Bindings {
  static constexpr std::size_t kCapacity = 32;
  std::array<std::pair<std::string_view, std::int64_t>, kCapacity> entries{};
  std::size_t count = 0;

  constexpr Bindings() = default;
  constexpr Bindings(std::initializer_list<std::pair<std::string_view, std::int64_t>> init) {
    for (const auto& p : init) set(p.first, p.second);
  }
  // Adds or overwrites; returns false when full.
  constexpr bool set(std::string_view name, std::int64_t value) {
    for (std::size_t i = 0; i < count; ++i)
      if (entries[i].first == name) {
        entries[i].second = value;
        return true;
      }
    if (count == kCapacity) return false;
    entries[count++] = {name, value};
    return true;
  }
  constexpr std::optional<std::int64_t> get(std::string_view name) const {
    for (std::size_t i = 0; i < count; ++i)
      if (entries[i].first == name) return entries[i].second;
    return std::nullopt;
  }
};

// int64 arithmetic with every failure (overflow, non-positive divisor, unbound name) recorded
// in `error` instead of undefined behaviour; the first error wins and later values are 0.
// The env is a Bindings or any callable `std::optional<std::int64_t>(std::string_view)`.
struct IntDomain {
  using Value = std::int64_t;
  std::string_view error;
  std::string_view error_name;  // the unbound identifier, for "unbound identifier" errors

  constexpr Value fail(std::string_view message) {
    if (error.empty()) error = message;
    return 0;
  }
  constexpr Value constant(std::int64_t v) const { return v; }
  template <class Env>
  constexpr Value variable(std::string_view name, const Env& env) {
    std::optional<std::int64_t> v;
    if constexpr (std::is_same_v<Env, Bindings>) v = env.get(name);
    else v = env(name);
    if (v) return *v;
    if (error.empty()) error_name = name;
    return fail("unbound identifier");
  }
  constexpr Value unary(Op op, Value a) {
    if (op == Op::Not) return a == 0 ? 1 : 0;
    if (a == INT64_MIN) return fail("integer overflow");
    return -a;
  }
  constexpr Value binary(Op op, Value a, Value b) {
    Value r = 0;
    switch (op) {
      case Op::Add: return __builtin_add_overflow(a, b, &r) ? fail("integer overflow") : r;
      case Op::Sub: return __builtin_sub_overflow(a, b, &r) ? fail("integer overflow") : r;
      case Op::Mul: return __builtin_mul_overflow(a, b, &r) ? fail("integer overflow") : r;
      case Op::Div:
      case Op::Mod: {
        if (b <= 0) return fail("division or modulo by a non-positive number");
        Value q = a / b, m = a % b;  // b > 0: no overflow possible
        if (m < 0) {                 // round toward negative infinity
          q -= 1;
          m += b;
        }
        return op == Op::Div ? q : m;
      }
      case Op::Min: return a < b ? a : b;
      case Op::Max: return a < b ? b : a;
      case Op::Eq: return a == b;
      case Op::Ne: return a != b;
      case Op::Lt: return a < b;
      case Op::Le: return a <= b;
      case Op::Gt: return a > b;
      case Op::Ge: return a >= b;
      case Op::And: return (a != 0 && b != 0) ? 1 : 0;
      case Op::Or: return (a != 0 || b != 0) ? 1 : 0;
      default: return fail("internal: not a binary operator");
    }
  }
};

struct EvalResult {
  std::int64_t value = 0;
  std::string_view error;       // empty on success
  std::string_view error_name;  // for unbound identifiers
  constexpr bool ok() const { return error.empty(); }
};

// Never throws; usable in constant expressions.
template <class Env>
constexpr EvalResult try_evaluate(const Expr& e, const Env& env) {
  if (e.root < 0 || e.root >= e.count) return EvalResult{0, "empty expression", {}};
  IntDomain d;
  std::int64_t v = evaluate_in(d, e, env);
  return EvalResult{v, d.error, d.error_name};
}

// Throws act::Error(ErrorKind::Execution) on overflow, a non-positive divisor or an unbound name.
template <class Env>
constexpr std::int64_t evaluate(const Expr& e, const Env& env) {
  EvalResult r = try_evaluate(e, env);
  if (!r.ok()) {
    if (!r.error_name.empty()) throw Error(ErrorKind::Execution, fmt::format("unbound identifier '{}'", r.error_name));
    throw Error(ErrorKind::Execution, std::string(r.error));
  }
  return r.value;
}
constexpr std::int64_t evaluate(const Expr& e, std::initializer_list<std::pair<std::string_view, std::int64_t>> env) {
  return evaluate(e, Bindings(env));
}

// Fully parenthesised text, for messages and debugging.
inline std::string to_string(const Expr& e, int index) {
  const Node& n = e.node(index);
  auto sym = [](Op op) -> std::string_view {
    switch (op) {
      case Op::Add: return "+";
      case Op::Sub: return "-";
      case Op::Mul: return "*";
      case Op::Div: return "/";
      case Op::Mod: return "%";
      case Op::Eq: return "==";
      case Op::Ne: return "!=";
      case Op::Lt: return "<";
      case Op::Le: return "<=";
      case Op::Gt: return ">";
      case Op::Ge: return ">=";
      case Op::And: return "&&";
      case Op::Or: return "||";
      default: return "?";
    }
  };
  switch (n.op) {
    case Op::Const: return std::to_string(n.value);
    case Op::Var: return std::string(n.name);
    case Op::Neg: return "(-" + to_string(e, n.lhs) + ")";
    case Op::Not: return "(!" + to_string(e, n.lhs) + ")";
    case Op::Min: return "min(" + to_string(e, n.lhs) + ", " + to_string(e, n.rhs) + ")";
    case Op::Max: return "max(" + to_string(e, n.lhs) + ", " + to_string(e, n.rhs) + ")";
    default: return "(" + to_string(e, n.lhs) + " " + std::string(sym(n.op)) + " " + to_string(e, n.rhs) + ")";
  }
}
inline std::string to_string(const Expr& e) { return e.root < 0 ? std::string() : to_string(e, e.root); }

}  // namespace act::sym
