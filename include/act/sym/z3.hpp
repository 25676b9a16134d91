// Attribute expressions as Z3 terms (the allocation CSP): the same `evaluate_in` as the
// simulator's int64 path, over a domain whose values are z3::expr.
//
// Integers become Z3 Int terms, comparisons and `&& || !` Bool terms; a Bool used in
// arithmetic becomes ite(b, 1, 0) and an Int used as a condition becomes `x != 0`, matching the
// 0/1 convention of IntDomain. `/` and `%` map to Z3's div and mod, which agree with floor
// division for a positive divisor; every divisor is recorded in `side_conditions` as
// `divisor > 0` for the caller to assert (IntDomain rejects a non-positive divisor).
#pragma once

#include <string_view>
#include <vector>

#include <z3++.h>

#include "act/sym/expr.hpp"

namespace act::sym {

struct Z3Domain {
  using Value = z3::expr;
  z3::context& ctx;
  std::vector<z3::expr> side_conditions{};

  explicit Z3Domain(z3::context& c) : ctx(c) {}

  z3::expr as_int(const z3::expr& e) const { return e.is_bool() ? z3::ite(e, ctx.int_val(1), ctx.int_val(0)) : e; }
  z3::expr as_bool(const z3::expr& e) const { return e.is_bool() ? e : e != ctx.int_val(0); }

  z3::expr constant(std::int64_t v) const { return ctx.int_val(static_cast<int64_t>(v)); }

  // env: a callable z3::expr(std::string_view) (e.g. returning ctx.int_const(name) or a term
  // already built for that attribute).
  template <class Env>
  z3::expr variable(std::string_view name, const Env& env) const {
    return as_int(env(name));
  }
  z3::expr unary(Op op, const z3::expr& a) const { return op == Op::Not ? !as_bool(a) : -as_int(a); }
  z3::expr binary(Op op, const z3::expr& a0, const z3::expr& b0) {
    if (op == Op::And) return as_bool(a0) && as_bool(b0);
    if (op == Op::Or) return as_bool(a0) || as_bool(b0);
    const z3::expr a = as_int(a0), b = as_int(b0);
    switch (op) {
      case Op::Add: return a + b;
      case Op::Sub: return a - b;
      case Op::Mul: return a * b;
      case Op::Div: side_conditions.push_back(b > 0); return z3::expr(ctx, Z3_mk_div(ctx, a, b));
      case Op::Mod: side_conditions.push_back(b > 0); return z3::mod(a, b);
      case Op::Min: return z3::ite(a <= b, a, b);
      case Op::Max: return z3::ite(a <= b, b, a);
      case Op::Eq: return a == b;
      case Op::Ne: return a != b;
      case Op::Lt: return a < b;
      case Op::Le: return a <= b;
      case Op::Gt: return a > b;
      case Op::Ge: return a >= b;
      default: throw Error(ErrorKind::Internal, "Z3Domain: not a binary operator");
    }
  }
};

// The expression as a Z3 term; identifiers are resolved by `env(name)`. Division side
// conditions (divisor > 0) are appended to `side_conditions` when given.
template <class Env>
z3::expr to_z3(const Expr& e, z3::context& ctx, const Env& env, std::vector<z3::expr>* side_conditions = nullptr) {
  Z3Domain d(ctx);
  z3::expr result = evaluate_in(d, e, env);
  if (side_conditions)
    for (auto& c : d.side_conditions) side_conditions->push_back(c);
  return result;
}

// Convenience: identifiers become Z3 integer constants of the same name.
inline z3::expr to_z3(const Expr& e, z3::context& ctx) {
  return to_z3(e, ctx, [&ctx](std::string_view name) { return ctx.int_const(std::string(name).c_str()); });
}

}  // namespace act::sym
