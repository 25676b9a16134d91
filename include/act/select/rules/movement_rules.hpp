// IR->ISA rules for movement instructions, matched through byte views (ir/views.hpp).
//
// An instruction whose Out0, for some alpha, only moves the bytes of one input (tileloadd and
// tilestored at any stride, load/store rows, register moves) is matched through views rather
// than syntactically: for a class C of Out0's type and a view of C over a base X, the input is
// the view Q of X that the instruction's own byte movement P (Out0 over the input) turns into
// C's view, Q(P(i)) = view_C(i) for every byte i. The input class is Q's canonical chain, so it
// is the class every other chain reading those bytes reaches. A dynamic-update-slice whose
// update covers its operand is followed into the update; the inputs it no longer reads (the old
// window of tilestored) become Undefined leaves. Alpha candidates: the values that make one of
// Out0's dims equal to C's (one alpha per dim expression), C's dims, and C's byte distances
// along each dim; with several alphas (at most kMaxMovementAlphas), every combination of them.
// Each is checked against Out0's dims, the alpha-only constraints and the types.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "act/egraph/pattern.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/semantics.hpp"
#include "act/select/ir/builder.hpp"
#include "act/select/ir/tensor_graph.hpp"
#include "act/select/ir/views.hpp"
#include "act/select/rules/isa/slice_bounds.hpp"
#include "act/sym/expr.hpp"

namespace act::select {

namespace view_rule_detail {

struct MovementSemantics {
  std::optional<int> input;              // parameter number the bytes come from
  Shape input_type, output_type;
  ByteView movement;                     // Out0 over the input's bytes
  std::vector<std::int64_t> movement_offsets;  // movement.offsets(), materialised once
  bool in_order = false;  // Out0 is the input's bytes in order (a load or store of whole rows)
  std::vector<Shape> parameter_types;    // every input's type for this alpha
};

// Whether Out0 is the input's bytes in order (MovementSemantics::in_order), from the offsets.
inline bool reads_in_order(const MovementSemantics& s) {
  const std::int64_t w = byte_width(s.output_type.dtype);
  if (s.output_type.element_count() * w != s.input_type.element_count() * byte_width(s.input_type.dtype)) return false;
  for (std::size_t i = 0; i < s.movement_offsets.size(); ++i)
    if (s.movement_offsets[i] != static_cast<std::int64_t>(i) * w) return false;
  return true;
}

inline std::optional<MovementSemantics> movement_semantics(SelectionContext& ctx, const isa::Instruction& instruction,
                                                           const std::vector<std::int64_t>& alpha) {
  auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
    for (std::size_t k = 0; k < instruction.alpha.size(); ++k)
      if (instruction.alpha[k] == name) return alpha[k];
    return std::nullopt;
  };
  auto dimension = [&](std::string_view expression, SourceLocation where) -> std::int64_t {
    const auto parsed = sym::try_parse(expression);
    if (!parsed.ok()) throw Error(ErrorKind::Isa, "bad dimension", where);
    const auto r = sym::try_evaluate(parsed.expr, env);
    if (!r.ok() || r.value < 0) throw Error(ErrorKind::Isa, "bad dimension", where);
    return r.value;
  };
  hlo::Module m;
  try {
    m = hlo::parse_semantics(instruction.semantics, dimension);
  } catch (const Error&) {
    return std::nullopt;
  }
  const hlo::Computation& c = m.entry_computation();
  std::vector<Shape> parameter_types(instruction.inputs.size());
  for (const hlo::Instruction& inst : c.instructions)
    if (inst.opcode == hlo::Opcode::Parameter && inst.parameter_number >= 0 &&
        static_cast<std::size_t>(inst.parameter_number) < parameter_types.size())
      parameter_types[static_cast<std::size_t>(inst.parameter_number)] = Shape(inst.shape.dtype, inst.shape.dims);
  std::vector<const hlo::Instruction*> chain;  // from ROOT down
  int at = c.root;
  while (at >= 0) {
    const hlo::Instruction& inst = c.instructions[static_cast<std::size_t>(at)];
    if (inst.shape.is_tuple || inst.shape.element_count() > kMaxViewElements) return std::nullopt;
    if (inst.opcode == hlo::Opcode::Parameter) {
      MovementSemantics s;
      s.input = static_cast<int>(inst.parameter_number);
      s.input_type = Shape(inst.shape.dtype, inst.shape.dims);
      s.output_type = Shape(c.root_instruction().shape.dtype, c.root_instruction().shape.dims);
      s.movement = identity_view(s.input_type);
      s.parameter_types = parameter_types;
      for (std::size_t k = chain.size(); k-- > 0;) {
        const hlo::Instruction& op = *chain[k];
        if (op.opcode == hlo::Opcode::DynamicUpdateSlice) continue;  // covered: the update itself
        NodeAttributes a;
        switch (op.opcode) {
          case hlo::Opcode::Reshape: a.shape = op.shape.dims; break;
          case hlo::Opcode::Transpose: a.dimensions = op.dimensions; break;
          case hlo::Opcode::Slice: a.slice = op.slice; break;
          case hlo::Opcode::BitcastConvert: a.dtype = op.shape.dtype; break;
          default: return std::nullopt;
        }
        auto next = apply_movement(ctx, make_operator(ctx.attributes, op.opcode, a), Shape(op.shape.dtype, op.shape.dims),
                                   s.movement);
        if (!next) return std::nullopt;
        s.movement = std::move(*next);
      }
      s.movement_offsets = s.movement.offsets();
      s.in_order = reads_in_order(s);
      return s;
    }
    chain.push_back(&inst);
    switch (inst.opcode) {
      case hlo::Opcode::Reshape:
      case hlo::Opcode::Transpose:
      case hlo::Opcode::Slice:
      case hlo::Opcode::BitcastConvert: at = inst.operands.at(0); break;
      case hlo::Opcode::DynamicUpdateSlice: {
        const auto& operand = c.instructions[static_cast<std::size_t>(inst.operands.at(0))].shape;
        const auto& update = c.instructions[static_cast<std::size_t>(inst.operands.at(1))].shape;
        if (operand.dims != update.dims) return std::nullopt;
        at = inst.operands.at(1);
        break;
      }
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

// Q with Q(P(i)) = C(i) byte for byte (computed on explicit offsets; canonical_chain finds Q's
// strided form when it has one). Input bytes P never reads (tileloadd at a stride above 64
// skips the rest of each row; gemmini_hw's mvin_spad reads a whole 16 x stride window) do not
// change Out0: they are filled so that the input is one contiguous byte range of the base, when
// the bytes P reads lie on one. Where that range runs past the end of the base (a window that
// starts mid-row in the last block row), Q keeps only the part inside, as a shorter u8 vector:
// the instruction reads the rest of its window from whatever follows in HBM and never uses it
// (phase 2 lets an HBM operand be a prefix of the window an instruction reads, alloc/csp.hpp).
// `c` and `p` are the two views' offsets (materialised once by the caller: a rule tries many
// alphas against one view of C).
inline std::optional<ByteView> divide(const ByteView& c_view, const std::vector<std::int64_t>& c, const ByteView& p_view,
                                      const std::vector<std::int64_t>& p, const Shape& input_type, std::int64_t base_bytes) {
  const std::int64_t wv = byte_width(c_view.type.dtype), wi = byte_width(input_type.dtype);
  if (wv <= 0 || wi <= 0 || c_view.type.element_count() != p_view.type.element_count() || byte_width(p_view.type.dtype) != wv ||
      c.size() != p.size())
    return std::nullopt;
  ByteView q{input_type, std::vector<std::int64_t>(static_cast<std::size_t>(input_type.element_count()), -1), std::nullopt};
  for (std::size_t i = 0; i < c.size(); ++i) {
    for (std::int64_t t = 0; t < wv; ++t) {
      const std::int64_t in_byte = p[i] + t, x = c[i] + t;
      const auto j = static_cast<std::size_t>(in_byte / wi);
      if (j >= q.offset.size()) return std::nullopt;
      const std::int64_t start = x - in_byte % wi;
      if (q.offset[j] == -1) q.offset[j] = start;
      else if (q.offset[j] != start) return std::nullopt;
    }
  }
  if (std::find(q.offset.begin(), q.offset.end(), -1) == q.offset.end()) return q;
  // Unread input elements: complete Q as the contiguous range o + j * wi, if the read ones are on it.
  std::optional<std::int64_t> origin;
  for (std::size_t j = 0; j < q.offset.size(); ++j) {
    if (q.offset[j] == -1) continue;
    const std::int64_t o = q.offset[j] - static_cast<std::int64_t>(j) * wi;
    if (origin && *origin != o) return std::nullopt;
    origin = o;
  }
  if (!origin || *origin < 0 || *origin >= base_bytes) return std::nullopt;
  for (std::size_t j = 0; j < q.offset.size(); ++j) q.offset[j] = *origin + static_cast<std::int64_t>(j) * wi;
  const std::int64_t inside = (base_bytes - *origin) / wi;  // input elements that lie in the base
  if (inside >= input_type.element_count()) return q;
  // Past the end: keep the prefix inside the base, as a vector, when every read element is in it.
  if (input_type.dims.size() != 1 || (base_bytes - *origin) % wi != 0) return std::nullopt;
  for (std::size_t i = 0; i < p.size(); ++i)
    if ((p[i] + wv - 1) / wi >= inside) return std::nullopt;
  q.offset.resize(static_cast<std::size_t>(inside));
  q.type = Shape(input_type.dtype, {inside});
  return q;
}

// The shortcut of divide() for the common case, in strided form: when Out0 is the input's bytes
// in order and C's view is strided, Q is C's view read in units of the input's element (C's
// modes, plus a minor mode of the units inside one of C's elements). Nothing to materialise:
// a 768 x 64 bf16 class costs O(rank), not 49,152 offsets.
inline std::optional<ByteView> in_order_input(const ByteView& c_view, const MovementSemantics& ms) {
  if (!ms.in_order || !c_view.affine) return std::nullopt;
  const std::int64_t wv = byte_width(c_view.type.dtype), wi = byte_width(ms.input_type.dtype);
  if (wv <= 0 || wi <= 0 || byte_width(ms.output_type.dtype) != wv) return std::nullopt;
  AffineView a = *c_view.affine;
  if (wv > wi && wv % wi == 0) {
    a.modes.push_back(Mode{wv / wi, wi});
  } else if (wi > wv && wi % wv == 0) {
    // An input element is k = wi / wv consecutive elements of C: C's minor mode must step one
    // element at a time over a multiple of k (a store of bf16 rows as bytes).
    const std::int64_t k = wi / wv;
    if (a.modes.empty() || a.modes.back().stride != wv || a.modes.back().size % k != 0) return std::nullopt;
    if (a.modes.back().size == k) a.modes.pop_back();
    else a.modes.back() = Mode{a.modes.back().size / k, wi};
  } else if (wv != wi) {
    return std::nullopt;
  }
  affine_detail::ModeGroups groups;
  if (!affine_detail::groups(a, ms.input_type.dims, groups)) return std::nullopt;  // the modes must refine the input's dims
  return ByteView{ms.input_type, {}, std::move(a)};
}

// divide() in strided form for a movement P that permutes whole units (load_cm's transpose):
// C and P are strided over the same output elements; refined to common modes of g-byte units
// (g = the narrower of the output and input widths), each mode has a stride in C's base and one
// in the input. P is a bijection onto the input when its strides, sorted, are the mixed radix of
// the sizes (each one the product of the sizes inside it, in g units); Q then takes the modes in
// the input's order with C's strides. Nullopt whenever that does not hold (divide() decides).
inline std::optional<ByteView> strided_divide(const ByteView& c_view, const MovementSemantics& ms) {
  const ByteView& p_view = ms.movement;
  if (!c_view.affine || !p_view.affine || p_view.affine->offset != 0) return std::nullopt;
  const std::int64_t wv = byte_width(c_view.type.dtype), wi = byte_width(ms.input_type.dtype);
  if (wv <= 0 || wi <= 0 || byte_width(p_view.type.dtype) != wv || c_view.type.element_count() != p_view.type.element_count() ||
      c_view.type.element_count() * wv != ms.input_type.element_count() * wi)
    return std::nullopt;
  const std::int64_t g = std::min(wv, wi);
  if (std::max(wv, wi) % g != 0) return std::nullopt;
  // Both views as modes of g-byte units, innermost first.
  auto units = [&](const AffineView& a) {
    Modes m(a.modes.rbegin(), a.modes.rend());
    if (wv > g) m.insert(m.begin(), Mode{wv / g, g});
    return m;
  };
  const Modes cm = units(*c_view.affine), pm = units(*p_view.affine);
  // Common refinement, innermost first: (size, C stride, P stride).
  struct Joint {
    std::int64_t size, c, p;
  };
  std::vector<Joint> joint;
  std::size_t i = 0, j = 0;
  Mode a = cm.empty() ? Mode{} : cm[0], b = pm.empty() ? Mode{} : pm[0];
  while (i < cm.size() && j < pm.size()) {
    if (a.size == b.size) {
      joint.push_back({a.size, a.stride, b.stride});
      if (++i < cm.size()) a = cm[i];
      if (++j < pm.size()) b = pm[j];
    } else if (a.size % b.size == 0) {
      joint.push_back({b.size, a.stride, b.stride});
      a = Mode{a.size / b.size, a.stride * b.size};
      if (++j < pm.size()) b = pm[j];
    } else if (b.size % a.size == 0) {
      joint.push_back({a.size, a.stride, b.stride});
      b = Mode{b.size / a.size, b.stride * a.size};
      if (++i < cm.size()) a = cm[i];
    } else {
      return std::nullopt;
    }
  }
  if (i != cm.size() || j != pm.size()) return std::nullopt;
  // P's strides must tile the input exactly: sorted, each is the product of the sizes inside.
  std::sort(joint.begin(), joint.end(), [](const Joint& x, const Joint& y) { return x.p < y.p; });
  std::int64_t expected = g;
  for (const Joint& m : joint) {
    if (m.p != expected) return std::nullopt;
    expected *= m.size;
  }
  // Q over the input's elements: fold the k = wi / g units of one element (innermost, C stride g).
  Modes q_inner_first;
  for (const Joint& m : joint) q_inner_first.push_back(Mode{m.size, m.c});
  if (wi > g) {
    const std::int64_t k = wi / g;
    if (q_inner_first.empty() || q_inner_first[0].stride != g || q_inner_first[0].size % k != 0) return std::nullopt;
    if (q_inner_first[0].size == k) q_inner_first.erase(q_inner_first.begin());
    else q_inner_first[0] = Mode{q_inner_first[0].size / k, wi};
  }
  AffineView q{c_view.affine->offset, Modes(q_inner_first.rbegin(), q_inner_first.rend())};
  affine_detail::ModeGroups groups;
  if (!affine_detail::groups(q, ms.input_type.dims, groups)) return std::nullopt;  // the modes must refine the input's dims
  return ByteView{ms.input_type, {}, std::move(q)};
}

// Movement instructions with more alphas than this are not matched through views (every alpha
// ranges over the same few candidate values, so combinations grow as values^alphas).
inline constexpr std::size_t kMaxMovementAlphas = 3;

struct MovementInstruction {
  std::size_t index = 0;
  DType out_dtype = DType::u8;
  std::size_t out_rank = 0;
  // Out0's dim expressions (literals too), parsed once. A parsed Expr points into its text, so
  // each text lives on the heap where moving this struct does not move it.
  std::vector<std::shared_ptr<const std::string>> out_dim_texts;
  std::vector<sym::Expr> out_dims;
  std::vector<sym::Expr> alpha_constraints;
  // The slice bounds' texts (isa/slice_bounds.hpp), kept alive for their expressions, which
  // alpha_constraints holds with the description's own.
  std::vector<std::shared_ptr<const sym::ParsedText>> slice_bounds;
  // Per Out0 dim: the alpha values (1 .. target) that make it equal a target extent, cached.
  std::vector<std::map<std::int64_t, std::vector<std::int64_t>>> solutions;
};

// An alpha for which an instruction's Out0 has a class's type, with the movement it then makes.
struct FittingAlpha {
  std::vector<std::int64_t> alpha;
  const MovementSemantics* semantics = nullptr;  // owned by MovementCaches::semantics
};

// What the rule computes once per kernel rather than once per class: the semantics per
// (instruction, alpha), and the fitting alphas per (instruction, class dims, view distances),
// which depend on nothing else (a kernel asks for the same few keys thousands of times).
struct MovementCaches {
  using SemanticsKey = std::pair<std::size_t, std::vector<std::int64_t>>;
  using AlphaKey = std::tuple<std::size_t, std::vector<std::int64_t>, std::vector<std::int64_t>>;
  std::map<SemanticsKey, std::optional<MovementSemantics>> semantics;  // node-based: pointers stay valid
  std::map<AlphaKey, std::vector<FittingAlpha>> alphas;
};

// The alphas of `mi` for a class of type `type` whose view steps distances[d] bytes along each
// dim d of extent > 1 (see the header comment): every alpha takes each candidate value, and a
// combination is kept when Out0's dims come out as the class's, the alpha-only constraints hold
// (gemmini_hw's mvin_spad has two: tiles and stride) and the semantics have the class's type.
inline const std::vector<FittingAlpha>& fitting_alphas(SelectionContext& ctx, MovementInstruction& mi, const Shape& type,
                                                       const std::vector<std::int64_t>& distances, MovementCaches& caches) {
  auto [slot, fresh] = caches.alphas.try_emplace(MovementCaches::AlphaKey{mi.index, type.dims, distances});
  std::vector<FittingAlpha>& out = slot->second;
  if (!fresh) return out;
  const isa::Instruction& inst = ctx.isa.instructions[mi.index];
  std::set<std::int64_t> values(type.dims.begin(), type.dims.end());
  for (std::size_t d = 0; d < type.dims.size(); ++d)
    if (type.dims[d] > 1) values.insert(distances[d]);
  for (std::size_t d = 0; d < mi.out_dims.size(); ++d) {
    auto [it, unsolved] = mi.solutions[d].try_emplace(type.dims[d]);
    if (unsolved)
      for (std::int64_t v = 1; v <= type.dims[d]; ++v) {
        const auto r = sym::try_evaluate(mi.out_dims[d], [&](std::string_view) -> std::optional<std::int64_t> { return v; });
        if (r.ok() && r.value == type.dims[d]) it->second.push_back(v);
      }
    values.insert(it->second.begin(), it->second.end());
  }
  std::erase_if(values, [](std::int64_t v) { return v <= 0; });
  if (inst.alpha.size() > kMaxMovementAlphas || (values.empty() && !inst.alpha.empty())) return out;
  std::vector<std::vector<std::int64_t>> candidates{{}};
  for (std::size_t a = 0; a < inst.alpha.size(); ++a) {
    std::vector<std::vector<std::int64_t>> longer;
    for (const auto& prefix : candidates)
      for (std::int64_t v : values) {
        longer.push_back(prefix);
        longer.back().push_back(v);
      }
    candidates = std::move(longer);
  }
  for (auto& alpha : candidates) {
    const auto env = [&](std::string_view name) -> std::optional<std::int64_t> {
      for (std::size_t k = 0; k < inst.alpha.size(); ++k)
        if (inst.alpha[k] == name) return alpha[k];
      return std::nullopt;
    };
    bool ok = true;
    for (std::size_t d = 0; d < mi.out_dims.size() && ok; ++d) {
      const auto r = sym::try_evaluate(mi.out_dims[d], env);
      ok = r.ok() && r.value == type.dims[d];
    }
    for (const auto& k : mi.alpha_constraints) {
      if (!ok) break;
      const auto r = sym::try_evaluate(k, env);
      ok = r.ok() && r.value != 0;
    }
    if (!ok) continue;
    auto it = caches.semantics.find(MovementCaches::SemanticsKey{mi.index, alpha});
    if (it == caches.semantics.end())
      it = caches.semantics.emplace(MovementCaches::SemanticsKey{mi.index, alpha}, movement_semantics(ctx, inst, alpha)).first;
    const auto& ms = it->second;
    if (!ms || !ms->output_type.same_type(type)) continue;
    out.push_back(FittingAlpha{std::move(alpha), &*ms});
  }
  return out;
}

}  // namespace view_rule_detail

inline std::optional<TensorRewrite> movement_instruction_rule(SelectionContext& context) {
  using egraph::Id;
  using Matcher = egraph::OpMatcher<TensorLanguage>;
  using namespace view_rule_detail;
  SelectionContext* ctx = &context;
  auto instructions = std::make_shared<std::vector<MovementInstruction>>();
  for (std::size_t i = 0; i < context.isa.instructions.size(); ++i) {
    const isa::Instruction& inst = context.isa.instructions[i];
    if (inst.outputs.size() != 1) continue;
    std::shared_ptr<const hlo::Module> symbolic;
    try {
      symbolic = isa::symbolic_semantics(inst);
    } catch (const Error&) {
      continue;
    }
    const hlo::Computation& c = symbolic->entry_computation();
    // Pure movement from ROOT to one parameter (shapes may be symbolic here).
    int at = c.root;
    bool movement = false;
    while (at >= 0) {
      const hlo::Instruction& x = c.instructions[static_cast<std::size_t>(at)];
      if (x.opcode == hlo::Opcode::Parameter) {
        movement = true;
        break;
      }
      if (x.opcode == hlo::Opcode::DynamicUpdateSlice) at = x.operands.at(1);
      else if (x.opcode == hlo::Opcode::Reshape || x.opcode == hlo::Opcode::Transpose || x.opcode == hlo::Opcode::Slice ||
               x.opcode == hlo::Opcode::BitcastConvert) at = x.operands.at(0);
      else break;
    }
    if (!movement) continue;
    MovementInstruction mi;
    mi.index = i;
    const hlo::Instruction& root = c.root_instruction();
    mi.out_dtype = root.shape.dtype;
    mi.out_rank = root.shape.dims.size();
    bool parsed = true;
    for (std::size_t d = 0; d < root.shape.dims.size(); ++d) {
      const auto& exprs = root.dimension_expressions;
      mi.out_dim_texts.push_back(std::make_shared<const std::string>(
          d < exprs.size() && !exprs[d].empty() ? std::string(exprs[d]) : std::to_string(root.shape.dims[d])));
      const auto e = sym::try_parse(*mi.out_dim_texts.back());
      parsed = parsed && e.ok();
      mi.out_dims.push_back(e.expr);
    }
    for (std::string_view k : inst.constraints) {
      bool beta = false;
      for (std::string_view b : inst.beta) beta = beta || k.find(b) != std::string_view::npos;
      if (beta) continue;
      const auto e = sym::try_parse(k);
      parsed = parsed && e.ok();
      mi.alpha_constraints.push_back(e.expr);
    }
    if (!parsed) continue;
    for (std::string& bound : isa_rule_detail::slice_bounds(context.isa, inst)) {
      mi.slice_bounds.push_back(sym::parse_shared(std::move(bound)));
      mi.alpha_constraints.push_back(mi.slice_bounds.back()->expr);
    }
    mi.solutions.resize(mi.out_dims.size());
    instructions->push_back(std::move(mi));
  }
  if (instructions->empty()) return std::nullopt;
  auto done = std::make_shared<std::set<Id>>();
  auto caches = std::make_shared<MovementCaches>();

  auto wanted = [instructions](const Shape& t) {
    for (const auto& mi : *instructions)
      if (t.dtype == mi.out_dtype && t.dims.size() == mi.out_rank) return true;
    return false;
  };
  auto searcher = [](hlo::Opcode code) {
    TensorPatternBuilder p;
    const auto x = p.var("?x");
    return p.build(p.op(Matcher::of_kind(static_cast<std::uint32_t>(code),
                                         [](const TensorOp& op) { return op.kind == NodeKind::Operator; }),
                        {x}));
  };
  auto condition = [done, wanted](const TensorGraph& g, Id cls, const egraph::Subst&) {
    return !done->contains(cls) && wanted(g.data(cls).type);
  };
  auto apply = [ctx, done, instructions, caches](TensorGraph& g, Id cls, const egraph::Subst&) {
    std::vector<Id> out;
    cls = g.find(cls);
    if (!done->insert(cls).second) return out;
    const Shape type = g.data(cls).type;
    if (type.element_count() == 0) return out;  // no bytes to move (and no view offsets to read)
    const auto views = class_views(g, *ctx, cls, 8, 3);
    std::vector<std::optional<std::vector<std::int64_t>>> view_offsets(views.size());  // materialised on first use
    // Each view's byte distance along each dim: with the dims, all that the alphas hang on.
    const auto strides = view_detail::row_major_strides(type.dims);
    std::vector<std::vector<std::int64_t>> distances(views.size(), std::vector<std::int64_t>(type.dims.size(), 0));
    for (std::size_t vi = 0; vi < views.size(); ++vi)
      for (std::size_t d = 0; d < type.dims.size(); ++d)
        if (type.dims[d] > 1) distances[vi][d] = views[vi].view.element_offset(strides[d]) - views[vi].view.element_offset(0);
    for (auto& mi : *instructions) {
      if (type.dtype != mi.out_dtype || type.dims.size() != mi.out_rank) continue;
      const isa::Instruction& inst = ctx->isa.instructions[mi.index];
      for (std::size_t vi = 0; vi < views.size(); ++vi) {
        const ClassView& cv = views[vi];
        if (cv.base == cls) continue;
        for (const FittingAlpha& fit : fitting_alphas(*ctx, mi, type, distances[vi], *caches)) {
          const MovementSemantics& ms = *fit.semantics;
          const Shape& base_type = g.data(cv.base).type;
          std::optional<ByteView> q;
          if (auto direct = in_order_input(cv.view, ms)) {
            q = std::move(direct);
          } else if (auto strided = strided_divide(cv.view, ms)) {
            q = std::move(strided);
          } else {
            if (!view_offsets[vi]) view_offsets[vi] = cv.view.offsets();
            q = divide(cv.view, *view_offsets[vi], ms.movement, ms.movement_offsets, ms.input_type,
                       base_type.element_count() * byte_width(base_type.dtype));
          }
          if (!q) continue;
          const auto input = canonical_view(g, *ctx, cv.base, *q);
          if (!input) continue;
          TensorBuilder b(g, *ctx);
          std::vector<Id> children;
          for (std::size_t k = 0; k < inst.inputs.size(); ++k) {
            if (static_cast<int>(k) == *ms.input) {
              children.push_back(*input);
              continue;
            }
            // An input the movement does not read: its declared type for this alpha.
            children.push_back(b.undefined(ms.parameter_types.at(k)));
          }
          if (children.size() != inst.inputs.size()) continue;
          out.push_back(b.pii(mi.index, fit.alpha, children));
        }
      }
    }
    return out;
  };
  const hlo::Opcode codes[] = {hlo::Opcode::Reshape, hlo::Opcode::Transpose, hlo::Opcode::Slice,
                               hlo::Opcode::BitcastConvert};
  TensorRewrite rule("view:movement-instructions", searcher(codes[0]), apply);
  rule.when(condition);
  for (std::size_t i = 1; i < 4; ++i) {
    rule.or_search(searcher(codes[i]), apply);
    rule.when(condition);
  }
  return rule;
}

}  // namespace act::select
