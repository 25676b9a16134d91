// HLO text -> hlo::Module. Reads XLA's text format (as XLA prints it, plus the optional parts
// XLA's parser accepts) and the paper's shorthand (DESIGN.md) into the same XLA-normal Module,
// checking shapes as it goes (shape_check.hpp).
//
//   Module parse_module(std::string_view text);
//   Module parse_semantics(std::string_view text, const DimensionEvaluator& evaluate_dimension);
//
// Errors: act::Error with ErrorKind::Parse (syntax, unknown names) or ErrorKind::Shape (operands
// that do not fit the opcode), always with the line:column of the offending token/instruction.
//
// Not supported (a located Parse error): nested instruction operands `add(multiply(a, b), c)`,
// the stack-frame prelude, `execution_thread=` after a computation, async `op-start` sugar,
// several `// -----`-separated modules in one text (split them first).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/core/literal.hpp"
#include "act/core/shape.hpp"
#include "act/hlo/lexer.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/shape_check.hpp"

namespace act::hlo {

// Turns a backtick dimension expression of an ISA semantics block (`n * 128`) into a size.
using DimensionEvaluator = std::function<std::int64_t(std::string_view expression, SourceLocation where)>;

namespace parser_detail {

// Constants with more elements than this keep their text instead of a Literal.
inline constexpr std::int64_t kMaxLiteralElements = std::int64_t{1} << 22;
inline constexpr int kMaxShapeNesting = 64;

inline bool is_single_computation_attribute(std::string_view a) {
  return a == "to_apply" || a == "calls" || a == "condition" || a == "body" || a == "select" || a == "scatter" ||
         a == "true_computation" || a == "false_computation" || a == "comparator";
}
inline bool is_computation_list_attribute(std::string_view a) {
  return a == "branch_computations" || a == "called_computations";
}

std::optional<ComparisonDirection> parse_direction(std::string_view text);

// A NumPy-style index of the shorthand `slice(x), dimensions=[:,0]`.
struct ShorthandSliceIndex {
  std::optional<std::int64_t> start, limit, step;
  bool is_index = false;  // a single integer: keep [i, i+1)
};

class Parser {
 public:
  Parser(std::string_view text, bool semantics, const DimensionEvaluator* evaluate)
      : lex_(text), mark_(text), semantics_(semantics), evaluate_(evaluate) {}

  Module parse_module() {
    bool has_header = false;
    if (peek().kind == TokenKind::Identifier && peek().text == "HloModule") {
      take();
      has_header = true;
      xla_dialect_ = true;
      const Token name = take();
      if (name.kind != TokenKind::Identifier && name.kind != TokenKind::Name) fail_at(name, "expected a module name");
      module_.name = std::string(name.text);
      accept(TokenKind::Colon);  // `HloModule name:` (XLA lexes `name:` as one name token)
      while (peek().kind == TokenKind::Comma) {
        take();
        const std::string attribute = attribute_name();
        if (attribute == "entry_computation_layout") {
          parse_entry_computation_layout();
        } else {
          module_.raw_attributes.push_back({attribute, std::string(raw_value().text)});
        }
      }
      skip_stack_frame_tables();
    }
    while (peek().kind != TokenKind::End) parse_computation();
    if (module_.computations.empty()) fail_at(peek(), "expected a computation");
    if (module_.entry < 0) {
      module_.entry = static_cast<int>(module_.computations.size()) - 1;
      module_.computations.back().is_entry = true;
    }
    if (!has_header) module_.name = "module_" + module_.entry_computation().name;
    check_entry_layout();
    return std::move(module_);
  }

  Module parse_semantics() {
    const Token entry = peek();
    if (entry.kind != TokenKind::Identifier || entry.text != "ENTRY") fail_at(entry, "expected 'ENTRY'");
    parse_computation();
    if (peek().kind != TokenKind::End) fail_at(peek(), "expected the end of the semantics block");
    module_.name = module_.entry_computation().name;
    return std::move(module_);
  }

 private:
  // ---- token stream -------------------------------------------------------------------------

  const Token& peek() {
    if (!has_peek_) {
      mark_ = lex_;
      peek_ = lex_.next();
      has_peek_ = true;
      if (peek_.kind == TokenKind::Error) fail_at(peek_, std::string(peek_.text));
    }
    return peek_;
  }
  Token take() {
    peek();
    has_peek_ = false;
    return peek_;
  }
  // The token after the next one.
  Token peek_second() {
    peek();
    Lexer probe = lex_;
    return probe.next();
  }
  // Give the peeked token back, so that the lexer can be asked for a context-dependent token.
  void unpeek() {
    if (has_peek_) {
      lex_ = mark_;
      has_peek_ = false;
    }
  }

  [[noreturn]] static void fail_at(const Token& t, const std::string& message, ErrorKind kind = ErrorKind::Parse) {
    throw Error(kind, message, {t.line, t.column});
  }
  static std::string describe(const Token& t) {
    if (t.kind == TokenKind::End) return "end of input";
    if (t.kind == TokenKind::Name) return fmt::format("'%{}'", t.text);
    return fmt::format("'{}'", t.text);
  }
  Token expect(TokenKind kind, std::string_view what) {
    const Token t = take();
    if (t.kind == kind) return t;
    if (t.kind == TokenKind::End) fail_at(t, fmt::format("unexpected end of input, expected {}", what));
    fail_at(t, fmt::format("expected {}, got {}", what, describe(t)));
  }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    take();
    return true;
  }

  std::int64_t integer(const Token& t) {
    if (t.kind != TokenKind::Integer) {
      if (t.kind == TokenKind::End) fail_at(t, "unexpected end of input, expected an integer");
      fail_at(t, fmt::format("expected an integer, got {}", describe(t)));
    }
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || ptr != t.text.data() + t.text.size()) fail_at(t, fmt::format("integer {} is out of range", t.text));
    return v;
  }
  std::int64_t take_integer() { return integer(take()); }

  std::string attribute_name() {
    const Token t = take();
    if (t.kind == TokenKind::AttributeName) return std::string(t.text);
    if (t.kind == TokenKind::Identifier && peek().kind == TokenKind::Equal) {
      take();
      return std::string(t.text);
    }
    if (t.kind == TokenKind::End) fail_at(t, "unexpected end of input, expected an attribute");
    fail_at(t, fmt::format("expected an attribute name, got {}", describe(t)));
  }

  Token raw_value() {
    unpeek();
    const Token v = lex_.next_raw_value();
    if (v.kind == TokenKind::Error) fail_at(v, std::string(v.text));
    return v;
  }

  // ---- shapes ------------------------------------------------------------------------------

  bool at_shape_start() {
    const Token& t = peek();
    if (t.kind == TokenKind::LeftParen) return true;
    return t.kind == TokenKind::Identifier && parse_dtype(t.text) && peek_second().kind == TokenKind::LeftBracket;
  }

  Shape parse_shape(std::vector<std::string>* expressions = nullptr, int depth = 0) {
    const Token first = take();
    if (depth > kMaxShapeNesting) fail_at(first, "tuple shapes nested too deeply");
    if (first.kind == TokenKind::LeftParen) {
      std::vector<Shape> elements;
      if (!accept(TokenKind::RightParen)) {
        do elements.push_back(parse_shape(nullptr, depth + 1));
        while (accept(TokenKind::Comma));
        expect(TokenKind::RightParen, "')'");
      }
      return Shape::tuple(std::move(elements));
    }
    if (first.kind != TokenKind::Identifier) fail_at(first, fmt::format("expected a shape, got {}", describe(first)));
    const auto dtype = parse_dtype(first.text);
    if (!dtype) fail_at(first, fmt::format("unknown element type '{}'", first.text));
    Shape shape(*dtype, {});
    expect(TokenKind::LeftBracket, "'['");
    std::vector<DimKind> kinds;
    std::vector<std::string> exprs;
    bool any_expression = false;
    if (!accept(TokenKind::RightBracket)) {
      do {
        const Token d = take();
        DimKind kind = DimKind::Static;
        std::int64_t size = -1;
        std::string expression;
        if (d.kind == TokenKind::Integer) {
          size = integer(d);
          if (size < 0) fail_at(d, fmt::format("negative dimension {}", size));
        } else if (d.kind == TokenKind::LessEqual) {
          kind = DimKind::Bounded;
          size = take_integer();
        } else if (d.kind == TokenKind::Question) {
          kind = DimKind::Unbounded;
        } else if (semantics_ && (d.kind == TokenKind::Backtick || d.kind == TokenKind::Identifier)) {
          expression = std::string(d.text);
          any_expression = true;
          if (evaluate_ && *evaluate_) {
            size = (*evaluate_)(d.text, {d.line, d.column});
            if (size < 0) fail_at(d, fmt::format("dimension `{}` evaluates to {}", d.text, size), ErrorKind::Shape);
          }
        } else {
          fail_at(d, fmt::format("expected a dimension size, got {}", describe(d)));
        }
        shape.dims.push_back(size);
        kinds.push_back(kind);
        exprs.push_back(std::move(expression));
      } while (accept(TokenKind::Comma));
      expect(TokenKind::RightBracket, "']'");
    }
    if (!bounded_byte_size(shape))
      fail_at(first, fmt::format("{} is larger than act's limit of 2^40 bytes for one array", to_string(shape)), ErrorKind::Shape);
    for (auto k : kinds)
      if (k != DimKind::Static) {
        shape.dim_kinds = kinds;
        break;
      }
    if (expressions && any_expression) *expressions = std::move(exprs);
    if (at_layout_start()) parse_layout(shape);
    return shape;
  }

  // `{` opens a layout only when followed by an integer, ':' or the shorthand's `T(`.
  bool at_layout_start() {
    if (peek().kind != TokenKind::LeftBrace) return false;
    Lexer probe = lex_;
    const Token second = probe.next();
    if (second.kind == TokenKind::Integer || second.kind == TokenKind::Colon) return true;
    return second.kind == TokenKind::Identifier && second.text == "T" && probe.next().kind == TokenKind::LeftParen;
  }

  void parse_layout(Shape& shape) {
    const Token open = take();
    Layout layout;
    if (peek().kind == TokenKind::Integer) {
      do layout.minor_to_major.push_back(take_integer());
      while (accept(TokenKind::Comma));
    }
    bool has_properties = false;
    if (accept(TokenKind::Colon)) {
      has_properties = peek().kind != TokenKind::RightBrace;
    } else if (peek().kind == TokenKind::Identifier && peek().text == "T") {
      has_properties = true;  // the paper's `{T(16,4)}`: default minor-to-major plus tiling
      if (layout.minor_to_major.empty())
        for (std::int64_t d = shape.rank() - 1; d >= 0; --d) layout.minor_to_major.push_back(d);
    }
    if (has_properties) parse_layout_properties(layout, raw_value());
    expect(TokenKind::RightBrace, "'}'");
    if (!layout.minor_to_major.empty()) {
      if (static_cast<std::int64_t>(layout.minor_to_major.size()) != shape.rank())
        fail_at(open, fmt::format("layout has {} minor-to-major entries for a shape of rank {}",
                                  layout.minor_to_major.size(), shape.rank()));
      std::vector<bool> seen(layout.minor_to_major.size(), false);
      for (const auto d : layout.minor_to_major) {
        if (d < 0 || d >= shape.rank() || seen[static_cast<std::size_t>(d)])
          fail_at(open, "layout minor-to-major is not a permutation of the dimensions");
        seen[static_cast<std::size_t>(d)] = true;
      }
    }
    shape.has_layout = true;
    shape.layout = std::move(layout);
  }

  // `D(...)T(8,128)(2,1)L(..)E(4)S(1)...`: tiles are typed, everything else is kept verbatim.
  void parse_layout_properties(Layout& layout, const Token& props) {
    const std::string_view text = props.text;
    std::size_t i = 0;
    std::string dim_level_types;
    auto group_end = [&](std::size_t open) {  // index one past the ')' matching text[open]
      int depth = 0;
      for (std::size_t j = open; j < text.size(); ++j) {
        if (text[j] == '(') ++depth;
        else if (text[j] == ')' && --depth == 0) return j + 1;
      }
      fail_at(props, "unbalanced parentheses in layout");
    };
    if (text.substr(0, 2) == "D(") {
      i = group_end(1);
      dim_level_types = std::string(text.substr(0, i));
    }
    if (text.substr(i, 2) == "T(") {
      ++i;
      while (i < text.size() && text[i] == '(') {
        const std::size_t end = group_end(i);
        Tile tile;
        std::string_view inner = text.substr(i + 1, end - i - 2);
        while (!inner.empty()) {
          const std::size_t comma = inner.find(',');
          std::string_view item = inner.substr(0, comma);
          while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
          while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
          std::int64_t v = 0;
          if (item == "*") {
            v = Tile::kCombineDimension;
          } else {
            const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
            if (ec != std::errc() || ptr != item.data() + item.size() || v <= 0)
              fail_at(props, fmt::format("bad tile dimension '{}'", item));
          }
          tile.dims.push_back(v);
          if (comma == std::string_view::npos) break;
          inner.remove_prefix(comma + 1);
        }
        layout.tiles.push_back(std::move(tile));
        i = end;
      }
    }
    layout.other_properties = dim_level_types + std::string(text.substr(i));
  }

  void parse_entry_computation_layout() {
    expect(TokenKind::LeftBrace, "'{'");
    expect(TokenKind::LeftParen, "'('");
    std::vector<Shape> parameters;
    if (!accept(TokenKind::RightParen)) {
      do parameters.push_back(parse_shape());
      while (accept(TokenKind::Comma));
      expect(TokenKind::RightParen, "')'");
    }
    entry_layout_location_ = peek();
    expect(TokenKind::Arrow, "'->'");
    module_.entry_result_layout = parse_shape();
    module_.entry_parameter_layouts = std::move(parameters);
    expect(TokenKind::RightBrace, "'}'");
  }

  void check_entry_layout() {
    if (!module_.entry_parameter_layouts) return;
    const Computation& entry = module_.entry_computation();
    const auto& params = *module_.entry_parameter_layouts;
    if (params.size() != entry.parameters.size())
      fail_at(entry_layout_location_, fmt::format("entry_computation_layout has {} parameters, the entry computation {}",
                                                  params.size(), entry.parameters.size()), ErrorKind::Shape);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Shape& actual = entry.instructions[static_cast<std::size_t>(entry.parameters[i])].shape;
      if (!shape_detail::compatible(params[i], actual))
        fail_at(entry_layout_location_, fmt::format("entry_computation_layout parameter {} is {} but parameter({}) is {}",
                                                    i, to_string(params[i]), i, to_string(actual)), ErrorKind::Shape);
    }
    if (!shape_detail::compatible(*module_.entry_result_layout, entry.root_instruction().shape))
      fail_at(entry_layout_location_, fmt::format("entry_computation_layout result is {} but the entry returns {}",
                                                  to_string(*module_.entry_result_layout),
                                                  to_string(entry.root_instruction().shape)), ErrorKind::Shape);
  }

  // The stack-frame tables newer JAX dumps put between the header and the first computation:
  // `FileNames 1 "a.py" ... FunctionNames 1 "f" ... FileLocations 1 {file_name_id=1 ...} ...
  // StackFrames 1 {file_location_id=1 parent_frame_id=0} ...`. They only feed `metadata=`,
  // which act drops, so each `id value` entry is read and ignored. A computation may have one
  // of these names: a table starts only where the name is followed by an id or another table.
  static bool is_stack_frame_table(std::string_view word) {
    return word == "FileNames" || word == "FunctionNames" || word == "FileLocations" || word == "StackFrames";
  }
  void skip_stack_frame_tables() {
    while (peek().kind == TokenKind::Identifier && is_stack_frame_table(peek().text)) {
      const Token after = peek_second();
      if (after.kind != TokenKind::Integer && !(after.kind == TokenKind::Identifier && is_stack_frame_table(after.text))) return;
      take();
      while (peek().kind == TokenKind::Integer) {
        take();
        const Token value = peek();
        if (value.kind == TokenKind::String) take();
        else if (value.kind == TokenKind::LeftBrace) raw_value();
        else fail_at(value, fmt::format("expected a string or '{{...}}' in a stack-frame table, got {}", describe(value)));
      }
    }
  }

  // ---- computations ------------------------------------------------------------------------

  struct Builder {
    Computation computation;
    std::unordered_map<std::string, int> names;
    bool has_root = false;

    int add(Instruction inst) {
      computation.instructions.push_back(std::move(inst));
      const int index = static_cast<int>(computation.instructions.size()) - 1;
      names.emplace(computation.instructions.back().name, index);
      return index;
    }
  };

  void parse_computation() {
    bool is_entry = false;
    Token name = take();
    if (name.kind == TokenKind::Identifier && name.text == "ENTRY") {
      is_entry = true;
      name = take();
    }
    if (name.kind != TokenKind::Identifier && name.kind != TokenKind::Name) {
      if (name.kind == TokenKind::End) fail_at(name, "unexpected end of input, expected a computation name");
      fail_at(name, fmt::format("expected a computation name, got {}", describe(name)));
    }
    if (module_.find(name.text) >= 0) fail_at(name, fmt::format("duplicate computation '{}'", name.text));
    std::optional<Shape> signature_result;
    Token signature_at = peek();
    if (peek().kind == TokenKind::LeftParen) {
      take();
      if (!accept(TokenKind::RightParen)) {
        do {
          const Token p = take();
          if (p.kind != TokenKind::Identifier && p.kind != TokenKind::Name) fail_at(p, "expected a parameter name");
          expect(TokenKind::Colon, "':'");
          parse_shape();
        } while (accept(TokenKind::Comma));
        expect(TokenKind::RightParen, "')'");
      }
      expect(TokenKind::Arrow, "'->'");
      signature_at = peek();
      signature_result = parse_shape();
    }
    expect(TokenKind::LeftBrace, "'{'");
    Builder builder;
    builder.computation.name = std::string(name.text);
    parse_body(builder);
    if (signature_result && !shape_detail::compatible(*signature_result, builder.computation.root_instruction().shape))
      fail_at(signature_at, fmt::format("computation '{}' declares result {} but its root is {}", name.text,
                                        to_string(*signature_result),
                                        to_string(builder.computation.root_instruction().shape)), ErrorKind::Shape);
    builder.computation.is_entry = is_entry;
    if (is_entry) {
      if (module_.entry >= 0) fail_at(name, "a second ENTRY computation");
      module_.entry = static_cast<int>(module_.computations.size());
    }
    module_.computations.push_back(std::move(builder.computation));
  }

  // Instructions up to and including the closing '}'; then the root and parameters are fixed.
  void parse_body(Builder& builder) {
    const Token open = peek();
    while (true) {
      const Token& t = peek();
      if (t.kind == TokenKind::RightBrace) break;
      if (t.kind == TokenKind::End) fail_at(t, "unexpected end of input, expected '}'");
      if (t.kind == TokenKind::Semicolon) {
        take();
        continue;
      }
      parse_instruction(builder);
    }
    take();
    Computation& c = builder.computation;
    if (c.instructions.empty()) fail_at(open, fmt::format("computation '{}' has no instructions", c.name));
    if (c.root < 0) c.root = static_cast<int>(c.instructions.size()) - 1;
    for (std::size_t i = 0; i < c.parameters.size(); ++i)
      if (c.parameters[i] < 0) {
        const auto& loc = c.instructions.back().location;
        throw Error(ErrorKind::Parse, fmt::format("computation '{}' has no parameter({})", c.name, i), loc);
      }
  }

  int lookup_computation(const Token& t) {
    if (t.kind != TokenKind::Identifier && t.kind != TokenKind::Name)
      fail_at(t, fmt::format("expected a computation name, got {}", describe(t)));
    const int index = module_.find(t.text);
    if (index < 0) fail_at(t, fmt::format("unknown computation '{}'", t.text));
    return index;
  }

  std::string unique_computation_name(std::string base) {
    std::string name = base;
    for (int i = 1; module_.find(name) >= 0; ++i) name = fmt::format("{}.{}", base, i);
    return name;
  }

  // `to_apply={ a = ... }`: an inline computation, added to the module before its caller.
  int parse_inline_computation(const std::string& name) {
    expect(TokenKind::LeftBrace, "'{'");
    Builder builder;
    builder.computation.name = unique_computation_name(name);
    parse_body(builder);
    module_.computations.push_back(std::move(builder.computation));
    return static_cast<int>(module_.computations.size()) - 1;
  }

  // ---- instructions ------------------------------------------------------------------------

  struct Pending {
    std::optional<std::vector<std::int64_t>> bracket_dimensions;  // transpose/broadcast `[..]`
    std::optional<std::vector<ShorthandSliceIndex>> slice_indices;
    Token bracket_at;
    bool has_dot_dimensions = false;
    std::vector<std::string> seen;
  };

  void parse_instruction(Builder& b) {
    Token t = take();
    bool is_root = false;
    if (t.kind == TokenKind::Identifier && t.text == "ROOT") {
      is_root = true;
      t = take();
    }
    Instruction inst;
    if (t.kind == TokenKind::Name || t.kind == TokenKind::Identifier) {
      expect(TokenKind::Equal, "'='");
    } else if (t.kind != TokenKind::AttributeName) {
      if (t.kind == TokenKind::End) fail_at(t, "unexpected end of input, expected '}'");
      fail_at(t, fmt::format("expected an instruction name, got {}", describe(t)));
    }
    inst.name = std::string(t.text);
    inst.location = {t.line, t.column};
    if (b.names.count(inst.name)) fail_at(t, fmt::format("duplicate instruction name '{}'", inst.name));

    std::optional<Shape> declared;
    if (at_shape_start()) declared = parse_shape(semantics_ ? &inst.dimension_expressions : nullptr);

    const Token op = take();
    if (op.kind != TokenKind::Identifier) {
      if (op.kind == TokenKind::End) fail_at(op, "unexpected end of input, expected an opcode");
      fail_at(op, fmt::format("expected an opcode, got {}", describe(op)));
    }
    const bool reduce_add = semantics_ && op.text == "reduce_add";
    const auto opcode = reduce_add ? std::optional<Opcode>(Opcode::Reduce) : parse_opcode(op.text);
    if (!opcode) {
      if (const auto wrapped = async_wrapped_opcode(op.text))
        fail_at(op, fmt::format("'{}' is XLA's asynchronous form of '{}' (async-start/-update/-done); act does not support "
                                "asynchronous instructions", op.text, *wrapped),
                ErrorKind::Unsupported);
      fail_at(op, fmt::format("unknown opcode '{}'", op.text));
    }
    inst.opcode = *opcode;

    expect(TokenKind::LeftParen, "'('");
    if (inst.opcode == Opcode::Parameter) {
      const Token n = take();
      inst.parameter_number = integer(n);
      if (inst.parameter_number < 0 || inst.parameter_number > 1'000'000)
        fail_at(n, fmt::format("bad parameter number {}", inst.parameter_number));
      expect(TokenKind::RightParen, "')'");
    } else if (inst.opcode == Opcode::Constant) {
      if (!declared) fail_at(op, "constant: the result shape is required");
      parse_constant(inst, *declared);
    } else {
      parse_operands(b, inst);
    }

    Pending pending;
    while (accept(TokenKind::Comma)) parse_attribute(inst, pending);
    if (semantics_) accept(TokenKind::Semicolon);

    if (reduce_add) desugar_reduce_add(b, inst, op);
    std::vector<const Shape*> operand_shapes;
    for (const int o : inst.operands) operand_shapes.push_back(&b.computation.instructions[static_cast<std::size_t>(o)].shape);
    apply_shorthand(inst, pending, operand_shapes, declared);
    inst.shape = check_instruction(inst, operand_shapes, declared, module_);
    if (inst.opcode == Opcode::Pad) convert_to_result_type(b, inst);

    Computation& c = b.computation;
    if (inst.opcode == Opcode::Parameter) {
      const auto n = static_cast<std::size_t>(inst.parameter_number);
      if (n < c.parameters.size() && c.parameters[n] >= 0)
        fail_at(t, fmt::format("duplicate parameter({})", n));
      if (c.parameters.size() <= n) c.parameters.resize(n + 1, -1);
      c.parameters[n] = static_cast<int>(c.instructions.size());
    }
    const int index = b.add(std::move(inst));
    if (is_root) {
      if (b.has_root) fail_at(t, "a second ROOT in one computation");
      b.has_root = true;
      c.root = index;
    }
  }

  // A mixed-precision pad (bf16 data, f32 value: shape_check accepts it as XLA does) becomes a
  // pad of converts to its result type, so the interpreter and instruction selection see one
  // element type. XLA's evaluator pads with the value converted to the result type the same way.
  void convert_to_result_type(Builder& b, Instruction& inst) {
    for (std::size_t k = 0; k < inst.operands.size(); ++k) {
      const Instruction& operand = b.computation.instructions[static_cast<std::size_t>(inst.operands[k])];
      if (operand.shape.is_tuple || operand.shape.dtype == inst.shape.dtype) continue;
      Instruction convert;
      convert.name = fmt::format("{}.convert{}", inst.name, k);
      for (int i = 1; b.names.count(convert.name); ++i) convert.name = fmt::format("{}.convert{}.{}", inst.name, k, i);
      convert.opcode = Opcode::Convert;
      convert.operands = {inst.operands[k]};
      convert.shape = Shape(inst.shape.dtype, operand.shape.dims);
      convert.shape.dim_kinds = operand.shape.dim_kinds;
      convert.location = inst.location;
      inst.operands[k] = b.add(std::move(convert));
    }
  }

  // `call-start`, `custom-call-done`, `fusion-update`...: XLA prints an async-start wrapping
  // <op> as `<op>-start` (and its partners `-update`, `-done`). The wrapped opcode, or nothing.
  static std::optional<std::string_view> async_wrapped_opcode(std::string_view text) {
    for (const std::string_view suffix : {"-start", "-update", "-done"}) {
      if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) continue;
      const std::string_view base = text.substr(0, text.size() - suffix.size());
      if (parse_opcode(base)) return base;
    }
    return std::nullopt;
  }

  void parse_operands(Builder& b, Instruction& inst) {
    if (accept(TokenKind::RightParen)) return;
    do {
      std::optional<Shape> written;
      if (at_shape_start()) written = parse_shape();
      const Token t = take();
      if (t.kind != TokenKind::Name && t.kind != TokenKind::Identifier) {
        if (t.kind == TokenKind::End) fail_at(t, "unexpected end of input, expected ')'");
        fail_at(t, fmt::format("expected an operand, got {}", describe(t)));
      }
      if (t.kind == TokenKind::Identifier && peek().kind == TokenKind::LeftParen)
        fail_at(t, "nested instructions as operands are not supported");
      const auto found = b.names.find(std::string(t.text));
      if (found == b.names.end()) fail_at(t, fmt::format("undefined operand '{}'", t.text));
      int operand = found->second;
      while (accept(TokenKind::Hash)) {
        const Token index = take();
        operand = compact_get_tuple_element(b, operand, integer(index), index);
      }
      const Shape& actual = b.computation.instructions[static_cast<std::size_t>(operand)].shape;
      if (written && !shape_detail::compatible(*written, actual))
        fail_at(t, fmt::format("operand '{}' is {}, not {}", t.text, to_string(actual), to_string(*written)),
                ErrorKind::Shape);
      inst.operands.push_back(operand);
    } while (accept(TokenKind::Comma));
    expect(TokenKind::RightParen, "')'");
  }

  // `%t#1`: a get-tuple-element made on the fly (reused when it exists).
  int compact_get_tuple_element(Builder& b, int tuple, std::int64_t index, const Token& at) {
    const Instruction& source = b.computation.instructions[static_cast<std::size_t>(tuple)];
    if (!source.shape.is_tuple || index < 0 || index >= static_cast<std::int64_t>(source.shape.tuple_shapes.size()))
      fail_at(at, fmt::format("'{}#{}': not an element of {}", source.name, index, to_string(source.shape)),
              ErrorKind::Shape);
    const std::string base = fmt::format("{}.{}", source.name, index);
    for (std::size_t i = 0; i < b.computation.instructions.size(); ++i) {
      const Instruction& g = b.computation.instructions[i];
      if (g.opcode == Opcode::GetTupleElement && g.operands == std::vector<int>{tuple} && g.tuple_index == index)
        return static_cast<int>(i);
    }
    std::string name = base;
    for (int i = 1; b.names.count(name); ++i) name = fmt::format("{}.{}", base, i);
    Instruction g;
    g.name = name;
    g.opcode = Opcode::GetTupleElement;
    g.operands = {tuple};
    g.tuple_index = index;
    g.location = {at.line, at.column};
    g.shape = source.shape.tuple_shapes[static_cast<std::size_t>(index)];
    return b.add(std::move(g));
  }

  std::vector<std::int64_t> parse_int_list() {
    expect(TokenKind::LeftBrace, "'{'");
    std::vector<std::int64_t> values;
    if (accept(TokenKind::RightBrace)) return values;
    do values.push_back(take_integer());
    while (accept(TokenKind::Comma));
    expect(TokenKind::RightBrace, "'}'");
    return values;
  }

  void parse_attribute(Instruction& inst, Pending& pending) {
    const Token at = peek();
    const std::string attribute = attribute_name();
    for (const auto& s : pending.seen)
      if (s == attribute) fail_at(at, fmt::format("duplicate attribute '{}'", attribute));
    pending.seen.push_back(attribute);
    const Opcode op = inst.opcode;

    if (attribute == "metadata") {
      raw_value();  // dropped
    } else if (attribute == "dimensions" && peek().kind == TokenKind::LeftBracket) {
      pending.bracket_at = peek();
      if (op == Opcode::Slice) {
        pending.slice_indices = parse_shorthand_slice();
      } else if (op == Opcode::Transpose || op == Opcode::Broadcast) {
        take();
        std::vector<std::int64_t> dims;
        if (!accept(TokenKind::RightBracket)) {
          do dims.push_back(take_integer());
          while (accept(TokenKind::Comma));
          expect(TokenKind::RightBracket, "']'");
        }
        pending.bracket_dimensions = std::move(dims);
      } else {
        fail_at(at, "dimensions=[...] is shorthand for transpose, broadcast and slice only");
      }
    } else if (attribute == "dimensions") {
      inst.dimensions = parse_int_list();
    } else if (attribute == "slice" && op == Opcode::Slice) {
      expect(TokenKind::LeftBrace, "'{'");
      if (!accept(TokenKind::RightBrace)) {
        do {
          expect(TokenKind::LeftBracket, "'['");
          SliceRange r;
          r.start = take_integer();
          expect(TokenKind::Colon, "':'");
          r.limit = take_integer();
          if (accept(TokenKind::Colon)) r.stride = take_integer();
          expect(TokenKind::RightBracket, "']'");
          inst.slice.push_back(r);
        } while (accept(TokenKind::Comma));
        expect(TokenKind::RightBrace, "'}'");
      }
    } else if (attribute == "dynamic_slice_sizes" && op == Opcode::DynamicSlice) {
      inst.dynamic_slice_sizes = parse_int_list();
    } else if (attribute == "padding" && op == Opcode::Pad) {
      unpeek();
      const Token w = lex_.next_word();
      if (w.kind == TokenKind::Error) fail_at(w, std::string(w.text));
      inst.padding = parse_padding(w);
    } else if (op == Opcode::Dot && (attribute == "lhs_batch_dims" || attribute == "lhs_contracting_dims" ||
                                     attribute == "rhs_batch_dims" || attribute == "rhs_contracting_dims")) {
      pending.has_dot_dimensions = true;
      auto dims = parse_int_list();
      if (attribute == "lhs_batch_dims") inst.dot.lhs_batch = std::move(dims);
      else if (attribute == "lhs_contracting_dims") inst.dot.lhs_contracting = std::move(dims);
      else if (attribute == "rhs_batch_dims") inst.dot.rhs_batch = std::move(dims);
      else inst.dot.rhs_contracting = std::move(dims);
    } else if (attribute == "index" && op == Opcode::GetTupleElement) {
      inst.tuple_index = take_integer();
    } else if (attribute == "iota_dimension" && op == Opcode::Iota) {
      inst.iota_dimension = take_integer();
    } else if (attribute == "direction" && op == Opcode::Compare) {
      const Token d = take();
      inst.comparison_direction = parse_direction(d.text);
      if (d.kind != TokenKind::Identifier || !inst.comparison_direction)
        fail_at(d, fmt::format("unknown comparison direction {}", describe(d)));
    } else if (attribute == "type" && op == Opcode::Compare) {
      const Token d = take();
      if (d.kind != TokenKind::Identifier) fail_at(d, fmt::format("expected a comparison type, got {}", describe(d)));
      inst.comparison_type = std::string(d.text);
    } else if (is_single_computation_attribute(attribute)) {
      const int index = peek().kind == TokenKind::LeftBrace
                            ? parse_inline_computation(fmt::format("{}.{}", inst.name, attribute))
                            : lookup_computation(take());
      inst.called_computations.push_back(index);
      inst.called_computation_attributes.push_back(attribute);
    } else if (is_computation_list_attribute(attribute) && peek().kind == TokenKind::LeftBrace &&
               peek_second().kind != TokenKind::RightBrace) {
      take();
      do {
        inst.called_computations.push_back(lookup_computation(take()));
        inst.called_computation_attributes.push_back(attribute);
      } while (accept(TokenKind::Comma));
      expect(TokenKind::RightBrace, "'}'");
    } else {
      inst.raw_attributes.push_back({attribute, std::string(raw_value().text)});
    }
  }

  // `[:, 0, 2:5, 1:9:2]`
  std::vector<ShorthandSliceIndex> parse_shorthand_slice() {
    expect(TokenKind::LeftBracket, "'['");
    std::vector<ShorthandSliceIndex> indices;
    if (accept(TokenKind::RightBracket)) return indices;
    do {
      ShorthandSliceIndex s;
      if (peek().kind == TokenKind::Integer) s.start = take_integer();
      if (accept(TokenKind::Colon)) {
        if (peek().kind == TokenKind::Integer) s.limit = take_integer();
        if (accept(TokenKind::Colon)) s.step = take_integer();
      } else if (s.start) {
        s.is_index = true;
      } else {
        fail_at(peek(), fmt::format("expected an index or ':', got {}", describe(peek())));
      }
      indices.push_back(s);
    } while (accept(TokenKind::Comma));
    expect(TokenKind::RightBracket, "']'");
    return indices;
  }

  std::vector<PadDimension> parse_padding(const Token& w) {
    std::vector<PadDimension> dims;
    std::string_view rest = w.text;
    while (true) {
      const std::size_t x = rest.find('x');
      const std::string_view group = rest.substr(0, x);
      std::int64_t values[3] = {0, 0, 0};
      int n = 0;
      std::size_t i = 0;
      while (i <= group.size()) {
        const std::size_t end = std::min(group.find('_', i), group.size());
        const std::string_view item = group.substr(i, end - i);
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), values[n < 3 ? n : 2]);
        if (n >= 3 || item.empty() || ec != std::errc() || ptr != item.data() + item.size())
          fail_at(w, fmt::format("bad padding '{}': expected low_high or low_high_interior per dimension", w.text));
        ++n;
        i = end + 1;
      }
      if (n < 2) fail_at(w, fmt::format("bad padding '{}': expected low_high or low_high_interior per dimension", w.text));
      dims.push_back({values[0], values[1], values[2]});
      if (x == std::string_view::npos) break;
      rest.remove_prefix(x + 1);
    }
    return dims;
  }

  // ---- the paper's shorthand, rewritten to XLA's meaning -----------------------------------

  void apply_shorthand(Instruction& inst, const Pending& p, const std::vector<const Shape*>& operands,
                       const std::optional<Shape>& declared) {
    auto operand_rank = [&]() -> std::int64_t {
      if (operands.size() != 1 || operands[0]->is_tuple)
        fail_at(p.bracket_at, fmt::format("{} expects one array operand", opcode_name(inst.opcode)), ErrorKind::Shape);
      return operands[0]->rank();
    };
    if (p.bracket_dimensions && inst.opcode == Opcode::Transpose) {
      // 1-based permutation
      const auto rank = operand_rank();
      for (const auto d : *p.bracket_dimensions) {
        if (d < 1 || d > rank)
          fail_at(p.bracket_at, fmt::format("transpose: dimension {} is out of range 1..{}", d, rank), ErrorKind::Shape);
        inst.dimensions.push_back(d - 1);
      }
    } else if (p.bracket_dimensions && inst.opcode == Opcode::Broadcast) {
      // TAIDL broadcast_dim: the listed (1-based) size-1 dims of a same-rank operand are expanded.
      const auto rank = operand_rank();
      if (declared && declared->rank() != rank)
        fail_at(p.bracket_at, fmt::format("broadcast: dimensions=[...] needs an operand of the result's rank {}, got {}",
                                          declared->rank(), rank), ErrorKind::Shape);
      for (const auto d : *p.bracket_dimensions) {
        if (d < 1 || d > rank)
          fail_at(p.bracket_at, fmt::format("broadcast: dimension {} is out of range 1..{}", d, rank), ErrorKind::Shape);
        const auto size = shape_detail::known_dim(*operands[0], static_cast<std::size_t>(d - 1));
        if (size != 1 && size >= 0)
          fail_at(p.bracket_at, fmt::format("broadcast: operand dimension {} has size {}, expected 1", d, size),
                  ErrorKind::Shape);
      }
      for (std::int64_t d = 0; d < rank; ++d) inst.dimensions.push_back(d);
    } else if (p.slice_indices) {
      const auto rank = operand_rank();
      if (static_cast<std::int64_t>(p.slice_indices->size()) != rank)
        fail_at(p.bracket_at, fmt::format("slice: {} indices for an operand of rank {}", p.slice_indices->size(), rank),
                ErrorKind::Shape);
      for (std::size_t d = 0; d < p.slice_indices->size(); ++d) {
        const auto& s = (*p.slice_indices)[d];
        const auto size = operands[0]->dims[d];
        auto resolve = [&](std::int64_t v) { return v < 0 && size >= 0 ? v + size : v; };
        SliceRange r;
        if (s.is_index) {
          r.start = resolve(*s.start);
          if (r.start == std::numeric_limits<std::int64_t>::max())  // start + 1 would overflow
            fail_at(p.bracket_at, fmt::format("slice: index {} is out of range for dimension {}", r.start, d),
                    ErrorKind::Shape);
          r.limit = r.start + 1;
        } else {
          r.start = s.start ? resolve(*s.start) : 0;
          r.limit = s.limit ? resolve(*s.limit) : size;
          r.stride = s.step.value_or(1);
        }
        inst.slice.push_back(r);
      }
    }
    if (inst.opcode == Opcode::Dot && !p.has_dot_dimensions && !xla_dialect_ && operands.size() == 2 &&
        !operands[0]->is_tuple && !operands[1]->is_tuple) {
      // The shorthand's `dot(a, b)`: a's last dimension with b's first. In XLA's text (a module
      // with a `HloModule` header) no dimension attributes mean none: an outer product.
      if (operands[0]->rank() > 0) inst.dot.lhs_contracting = {operands[0]->rank() - 1};
      if (operands[1]->rank() > 0) inst.dot.rhs_contracting = {0};
    }
  }

  // `reduce_add(x), dimensions={d}`: reduce(x, 0) with to_apply=add_<dtype>.
  void desugar_reduce_add(Builder& b, Instruction& inst, const Token& at) {
    if (inst.operands.size() != 1) fail_at(at, "reduce_add expects one operand", ErrorKind::Shape);
    const Shape& input = b.computation.instructions[static_cast<std::size_t>(inst.operands[0])].shape;
    if (input.is_tuple) fail_at(at, "reduce_add expects an array operand", ErrorKind::Shape);
    const DType t = input.dtype;
    const std::string adder = fmt::format("add_{}", name(t));
    int index = module_.find(adder);
    if (index < 0) {
      Builder add;
      add.computation.name = adder;
      Instruction x, y, sum;
      x.name = "x";
      x.shape = Shape(t, {});
      x.parameter_number = 0;
      y = x;
      y.name = "y";
      y.parameter_number = 1;
      sum.name = "sum";
      sum.opcode = Opcode::Add;
      sum.shape = Shape(t, {});
      sum.operands = {0, 1};
      add.add(std::move(x));
      add.add(std::move(y));
      add.add(std::move(sum));
      add.computation.parameters = {0, 1};
      add.computation.root = 2;
      module_.computations.push_back(std::move(add.computation));
      index = static_cast<int>(module_.computations.size()) - 1;
    }
    Instruction zero;
    zero.name = inst.name + ".init";
    for (int i = 1; b.names.count(zero.name); ++i) zero.name = fmt::format("{}.init.{}", inst.name, i);
    zero.opcode = Opcode::Constant;
    zero.shape = Shape(t, {});
    zero.location = inst.location;
    if (is_computable(t)) zero.literal = Literal(zero.shape);
    else zero.literal_text = "0";
    inst.operands.push_back(b.add(std::move(zero)));
    inst.called_computations = {index};
    inst.called_computation_attributes = {"to_apply"};
  }

  // ---- constants ---------------------------------------------------------------------------

  void parse_constant(Instruction& inst, const Shape& shape) {
    bool typed = !shape.is_tuple && is_computable(shape.dtype) && shape.is_static();
    std::int64_t count = 1;
    for (std::size_t i = 0; typed && i < shape.dims.size(); ++i) {
      if (shape.dims[i] < 0 || (shape.dims[i] > 0 && count > kMaxLiteralElements / shape.dims[i])) typed = false;
      else count *= shape.dims[i];
    }
    if (!typed || count > kMaxLiteralElements) {
      if (peek().kind == TokenKind::RightParen) fail_at(peek(), "constant: expected a literal");
      inst.literal_text = std::string(raw_value().text);
      expect(TokenKind::RightParen, "')'");
      return;
    }
    Shape literal_shape(shape.dtype, shape.dims);
    Literal literal(literal_shape);
    if (peek().kind == TokenKind::LeftBrace) {
      if (shape.rank() == 0) fail_at(peek(), "constant: a scalar literal cannot be braced");
      std::int64_t next = 0;
      parse_literal_level(literal, 0, next);
    } else {
      // A scalar; for a non-scalar shape this is the shorthand "fill with c".
      const Token v = take();
      if (v.kind == TokenKind::RightParen) fail_at(v, "constant: expected a literal");
      for (std::int64_t i = 0; i < count; ++i) set_element(literal, i, v);
      if (count == 0) set_element_check(shape.dtype, v);
    }
    expect(TokenKind::RightParen, "')'");
    inst.literal = std::move(literal);
  }

  void parse_literal_level(Literal& literal, std::size_t level, std::int64_t& next) {
    const Token open = expect(TokenKind::LeftBrace, "'{'");
    if (level == 0 && accept(TokenKind::Ellipsis)) {
      literal.elided = true;
      expect(TokenKind::RightBrace, "'}'");
      return;
    }
    const std::int64_t expected = literal.shape().dims[level];
    std::int64_t n = 0;
    if (!accept(TokenKind::RightBrace)) {
      do {
        if (n == expected)
          fail_at(peek(), fmt::format("constant: more than {} elements at nesting level {}", expected, level));
        if (level + 1 < literal.shape().dims.size()) {
          parse_literal_level(literal, level + 1, next);
        } else {
          set_element(literal, next++, take());
        }
        ++n;
      } while (accept(TokenKind::Comma));
      expect(TokenKind::RightBrace, "'}'");
    }
    if (n != expected)
      fail_at(open, fmt::format("constant: expects {} elements at nesting level {}, got {}", expected, level, n));
  }

  void set_element_check(DType t, const Token& v) {
    Literal probe(Shape(t, {}));
    set_element(probe, 0, v);
  }

  void set_element(Literal& literal, std::int64_t i, const Token& v) {
    const DType t = literal.dtype();
    if (t == DType::pred) {
      if (v.kind == TokenKind::Identifier && (v.text == "true" || v.text == "false"))
        return literal.set_bits(i, v.text == "true" ? 1 : 0);
      if (v.kind == TokenKind::Integer && (v.text == "0" || v.text == "1")) return literal.set_bits(i, v.text == "1");
      fail_at(v, fmt::format("constant: expected true or false, got {}", describe(v)));
    }
    if (is_float(t)) {
      if (v.kind != TokenKind::Integer && v.kind != TokenKind::Float)
        fail_at(v, fmt::format("constant: expected a number, got {}", describe(v)));
      std::string_view text = v.text;
      const bool negative = !text.empty() && text.front() == '-';
      if (negative) text.remove_prefix(1);
      double value = 0;
      if (text == "inf") {
        value = std::numeric_limits<double>::infinity();
      } else if (text == "nan") {
        value = std::numeric_limits<double>::quiet_NaN();
      } else {
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ptr != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
          fail_at(v, fmt::format("constant: bad number '{}'", v.text));
      }
      return literal.set_float(i, negative ? -value : value);
    }
    if (v.kind != TokenKind::Integer) fail_at(v, fmt::format("constant: expected an integer for {}, got {}", name(t), describe(v)));
    const int bits = bit_width(t);
    if (!is_signed_integer(t) && v.text.front() != '-') {
      std::uint64_t u = 0;
      const auto [ptr, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), u);
      if (ec != std::errc() || (bits < 64 && u >= (std::uint64_t{1} << bits)))
        fail_at(v, fmt::format("constant: {} is out of range for {}", v.text, name(t)));
      return literal.set_bits(i, u);
    }
    const std::int64_t s = integer(v);
    const std::int64_t lo = bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (bits - 1));
    const std::int64_t hi = bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (bits - 1)) - 1;
    if (!is_signed_integer(t) || s < lo || s > hi)
      fail_at(v, fmt::format("constant: {} is out of range for {}", v.text, name(t)));
    literal.set_int(i, s);
  }

  Lexer lex_;
  Lexer mark_;
  Token peek_;
  bool has_peek_ = false;
  bool semantics_ = false;
  // XLA's text (the module starts with `HloModule`) rather than the paper's shorthand: decides
  // what a dot without dimension attributes means (docs/design-decisions.md).
  bool xla_dialect_ = false;
  const DimensionEvaluator* evaluate_ = nullptr;
  Module module_;
  Token entry_layout_location_;
};

inline std::optional<ComparisonDirection> parse_direction(std::string_view text) {
  if (text == "EQ") return ComparisonDirection::EQ;
  if (text == "NE") return ComparisonDirection::NE;
  if (text == "GE") return ComparisonDirection::GE;
  if (text == "GT") return ComparisonDirection::GT;
  if (text == "LE") return ComparisonDirection::LE;
  if (text == "LT") return ComparisonDirection::LT;
  return std::nullopt;
}

}  // namespace parser_detail

// Parses one HLO module (XLA text or the paper's shorthand).
inline Module parse_module(std::string_view text) {
  return parser_detail::Parser(text, false, nullptr).parse_module();
}

// Parses an ISA instruction's semantics: one `ENTRY name { ... }` block in HLO syntax where
// statements may end with ';', TAIDL opcode spellings are accepted, a dimension may be a
// backtick expression (or a bare attribute name) that `evaluate_dimension` turns into a size
// (the text is kept in Instruction::dimension_expressions; with an empty evaluator such dims are
// -1, "symbolic"), and `reduce_add(x), dimensions={d}` means reduce(x, 0) with an add.
// Returns a Module whose entry computation is the block; the add computations that reduce_add
// needs (`add_<dtype>`) come before it.
inline Module parse_semantics(std::string_view text, const DimensionEvaluator& evaluate_dimension) {
  return parser_detail::Parser(text, true, &evaluate_dimension).parse_semantics();
}

}  // namespace act::hlo
