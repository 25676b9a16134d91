// Solving an IR->ISA match for alpha (App. B module 2): every matched class must have the
// dtype and rank its semantics node declares; a literal dim must be equal, a dim written as a
// single alpha name binds that alpha, other dim expressions are evaluated once alpha is known
// and must be equal. Then every constraint over alpha alone must hold, every data slice must
// fit its buffer (slice_bounds.hpp), and the constraints mentioning beta must be satisfiable
// for some beta within the buffer ranges (Z3, cached per alpha in the rule's info).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <z3++.h>

#include "act/core/shape.hpp"
#include "act/isa/description.hpp"
#include "act/select/rules/isa/rule_info.hpp"
#include "act/sym/expr.hpp"
#include "act/sym/z3.hpp"

namespace act::select::isa_rule_detail {

using egraph::Id;

// Some beta within the buffer ranges satisfies the beta constraints (alpha bound): Z3, cached.
inline bool beta_satisfiable(const IsaRuleInfo& info, const SelectionContext& context, const isa::Instruction& inst,
                             const std::vector<std::int64_t>& alpha) {
  if (info.beta_constraints.empty()) return true;
  if (auto it = info.beta_satisfiable.find(alpha); it != info.beta_satisfiable.end()) return it->second;
  std::int64_t largest = 0;
  for (const isa::Buffer& b : context.isa.buffers)
    for (auto d : b.access_dims) largest = std::max(largest, d);
  z3::context ctx;
  z3::solver solver(ctx);
  std::vector<z3::expr> side;
  const auto env = [&](std::string_view id) -> z3::expr {
    for (std::size_t a = 0; a < inst.alpha.size(); ++a)
      if (inst.alpha[a] == id) return ctx.int_val(static_cast<int64_t>(alpha[a]));
    return ctx.int_const(std::string(id).c_str());
  };
  for (std::string_view b : inst.beta) {
    const z3::expr v = ctx.int_const(std::string(b).c_str());
    solver.add(v >= 0 && v <= ctx.int_val(static_cast<int64_t>(largest)));
  }
  for (const std::string& c : info.beta_constraints) {
    const z3::expr e = sym::to_z3(sym::parse(c), ctx, env, &side);
    solver.add(e.is_bool() ? e : e != ctx.int_val(0));
  }
  for (const auto& s : side) solver.add(s);
  const bool ok = solver.check() != z3::unsat;
  info.beta_satisfiable.emplace(alpha, ok);
  return ok;
}

// Why a match is not a valid use of the instruction, for "no program" diagnosis
// (search/diagnosis.hpp): the first precondition that failed, and how many held before it.
struct AlphaMiss {
  std::string reason;
  std::size_t held = 0;         // preconditions that held: type checks, dims, constraints, beta
  bool on_constraint = false;   // the miss is an alpha constraint (a size the instruction cannot take)
};

// The alpha values this match implies, if it is a valid use of the instruction. With `why`,
// also says which precondition failed (the search passes none: its path stays as cheap).
inline std::optional<std::vector<std::int64_t>> solve_alpha(const IsaRuleInfo& info, const SelectionContext& context,
                                                            const isa::Instruction& inst, const TensorGraph& g, Id cls,
                                                            const egraph::Subst& s, std::size_t variant = 0,
                                                            AlphaMiss* why = nullptr) {
  (void)cls;
  // Failures are only put into words when asked for: the search calls this for every match.
  const auto miss = [why](const auto& explain) -> std::optional<std::vector<std::int64_t>> {
    if (why) why->reason = explain();
    return std::nullopt;
  };
  const auto held = [why] {
    if (why) ++why->held;
  };
  const std::vector<TypeCheck>& checks = variant < info.variants.size() ? info.variants[variant].checks : info.checks;
  std::vector<std::optional<std::int64_t>> alpha(inst.alpha.size());
  const auto written = [&](const TypeCheck& c) {
    std::vector<std::string> dims;
    for (const SymbolicDim& d : c.dims) dims.push_back(d.literal >= 0 ? std::to_string(d.literal) : d.text);
    return fmt::format("{}[{}]", name(c.dtype), fmt::join(dims, ","));
  };
  for (const TypeCheck& c : checks) {
    const Shape& type = g.data(c.is_capture ? g.find(s[c.slot]) : s[c.slot]).type;
    if (type.is_tuple || type.dtype != c.dtype || type.dims.size() != c.dims.size())
      return miss([&] { return fmt::format("'{}' is {}, the semantics need {}", c.node, to_string(type), written(c)); });
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
      const SymbolicDim& sd = c.dims[d];
      if (sd.literal >= 0) {
        if (type.dims[d] != sd.literal)
          return miss([&] {
            return fmt::format("'{}' is {}, the semantics need {} (dim {} must be {})", c.node, to_string(type), written(c), d,
                               sd.literal);
          });
      } else if (sd.alpha >= 0) {
        auto& slot = alpha[static_cast<std::size_t>(sd.alpha)];
        if (slot && *slot != type.dims[d])
          return miss([&] {
            const std::string_view a = inst.alpha[static_cast<std::size_t>(sd.alpha)];
            return fmt::format("'{}' is {}, so {} = {}, but an earlier value gives {} = {}", c.node, to_string(type), a,
                               type.dims[d], a, *slot);
          });
        slot = type.dims[d];
      }
    }
    held();
  }
  sym::Bindings bindings;
  std::vector<std::int64_t> values;
  for (std::size_t a = 0; a < alpha.size(); ++a) {
    if (!alpha[a]) return miss([&] { return fmt::format("no matched shape determines {}", inst.alpha[a]); });
    bindings.set(inst.alpha[a], *alpha[a]);
    values.push_back(*alpha[a]);
  }
  for (const TypeCheck& c : checks) {
    const Shape& type = g.data(c.is_capture ? g.find(s[c.slot]) : s[c.slot]).type;
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
      const SymbolicDim& sd = c.dims[d];
      if (sd.literal >= 0 || sd.alpha >= 0) continue;
      const auto r = sym::try_evaluate(sd.parsed->expr, bindings);
      if (!r.ok() || r.value != type.dims[d])
        return miss([&] {
          return fmt::format("'{}' is {}, the semantics need {} (dim {}: {} = {})", c.node, to_string(type), written(c), d,
                             sd.text, r.ok() ? std::to_string(r.value) : std::string(r.error));
        });
      held();
    }
  }
  // The rest depends on alpha alone, and a search meets the same few alpha tuples thousands of
  // times: its verdict is remembered per tuple (a diagnosis, asking why, always reads it afresh).
  if (!why)
    if (const auto known = info.alpha_valid.find(values); known != info.alpha_valid.end())
      return known->second ? std::optional(std::move(values)) : std::nullopt;
  const auto remember = [&](bool valid) {
    if (!why) info.alpha_valid.emplace(values, valid);
  };
  const auto alpha_text = [&] {
    std::vector<std::string> parts;
    for (std::size_t a = 0; a < values.size(); ++a) parts.push_back(fmt::format("{} = {}", inst.alpha[a], values[a]));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  for (std::size_t k = 0; k < info.alpha_constraints.size(); ++k) {
    const std::string& constraint = info.alpha_constraints[k];
    const auto r = sym::try_evaluate(info.parsed_alpha_constraints[k]->expr, bindings);
    if (!r.ok() || r.value == 0) {
      if (why) why->on_constraint = true;
      remember(false);
      return miss([&] { return fmt::format("constraint '{}' does not hold for {}", constraint, alpha_text()); });
    }
    held();
  }
  for (std::size_t k = 0; k < info.slice_bounds.size(); ++k) {
    const auto r = sym::try_evaluate(info.parsed_slice_bounds[k]->expr, bindings);
    if (!r.ok() || r.value == 0) {
      if (why) why->on_constraint = true;
      remember(false);
      return miss([&] {
        return fmt::format("a data slice exceeds its buffer: '{}' does not hold for {}", info.slice_bounds[k], alpha_text());
      });
    }
    // Not counted as held: the bounds are the buffers' and hold for every match that fits, so
    // counting them would rank such matches above others only by their number of slices.
  }
  if (!beta_satisfiable(info, context, inst, values)) {
    remember(false);
    return miss([&] {
      return fmt::format("no addressing attributes within the buffers satisfy '{}' for {}",
                         fmt::join(info.beta_constraints, "', '"), alpha_text());
    });
  }
  held();
  remember(true);
  return values;
}

}  // namespace act::select::isa_rule_detail
