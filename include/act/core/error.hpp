// act::Error — the one exception type every user-facing failure is reported with.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace act {

// A position in a text input, 1-based. line == 0 means "not from text".
struct SourceLocation {
  int line = 0;
  int column = 0;
  constexpr bool known() const { return line > 0; }
  friend constexpr bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

enum class ErrorKind {
  Parse,         // malformed text (HLO, assembly, attribute expression)
  Shape,         // shapes or dtypes that do not fit an operator
  Unsupported,   // well-formed but not handled (e.g. the interpreter lacks an opcode)
  Isa,           // an ISA description or a concrete instruction is invalid
  Execution,     // the simulator hit an invalid state (bad address, violated constraint)
  Verification,  // simulated result differs from the reference interpreter
  NoProgram,     // no assembly found within the budget
  Io,            // files
  Internal,      // a bug in act
};

constexpr std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Parse: return "parse error";
    case ErrorKind::Shape: return "shape error";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Isa: return "invalid ISA";
    case ErrorKind::Execution: return "execution error";
    case ErrorKind::Verification: return "verification failed";
    case ErrorKind::NoProgram: return "no program";
    case ErrorKind::Io: return "i/o error";
    case ErrorKind::Internal: return "internal error";
  }
  return "error";
}

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, SourceLocation location = {})
      : std::runtime_error(format(kind, message, location)),
        kind_(kind),
        message_(std::move(message)),
        location_(location) {}

  ErrorKind kind() const { return kind_; }
  // The message without location or kind prefix.
  const std::string& message() const { return message_; }
  SourceLocation location() const { return location_; }

 private:
  static std::string format(ErrorKind kind, const std::string& message, SourceLocation loc) {
    if (loc.known()) return fmt::format("{}:{}: {}: {}", loc.line, loc.column, to_string(kind), message);
    return fmt::format("{}: {}", to_string(kind), message);
  }

  ErrorKind kind_;
  std::string message_;
  SourceLocation location_;
};

}  // namespace act
